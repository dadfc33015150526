//! The ACP bridge's transport and methods (ACP-07, ours).

use crate::support as acp_support;

use acp_support::{agent_end, update, Harness};
use serde_json::json;

#[test]
fn acp_07_bad_line_gets_parse_error_and_the_next_line_is_served() {
    let mut h = Harness::new();
    h.editor_bytes(b"{not json\n");
    assert_eq!(h.editor[0]["error"]["code"], -32700);
    assert_eq!(h.editor[0]["id"], serde_json::Value::Null);
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    assert_eq!(h.answer(1).unwrap()["result"]["protocolVersion"], 1);
}

#[test]
fn acp_07_lines_split_across_reads_are_one_message() {
    let mut h = Harness::new();
    h.editor_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"init");
    assert!(h.editor.is_empty());
    h.editor_bytes(b"ialize\",\"params\":{\"protocolVersion\":1}}\n");
    assert_eq!(h.answer(7).unwrap()["result"]["protocolVersion"], 1);
}

#[test]
fn initialize_keeps_client_capabilities_and_meta() {
    let mut h = Harness::new();
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true}, "_meta": {"muse/usage": 1}}, "_meta": {"x": 2}}),
    );
    let caps = h.bridge.client_capabilities().unwrap();
    assert!(caps.fs.read_text_file);
    assert_eq!(caps.meta.as_ref().unwrap()["muse/usage"], 1);
    assert_eq!(h.bridge.client_meta().unwrap()["x"], 2);
    let answer = h.answer(1).unwrap();
    assert_eq!(answer["jsonrpc"], "2.0");
    assert_eq!(answer["result"]["agentInfo"]["name"], "musewire");
}

#[test]
fn unknown_method_is_32601_and_unknown_notification_ignored() {
    let mut h = Harness::new();
    h.request(3, "session/frobnicate", json!({}));
    assert_eq!(h.answer(3).unwrap()["error"]["code"], -32601);
    h.send(json!({"jsonrpc": "2.0", "method": "session/whatever", "params": {}}));
    assert_eq!(h.editor.len(), 1);
}

#[test]
fn session_new_spawns_in_cwd_and_rejects_relative_cwd() {
    let mut h = Harness::new();
    h.request(
        1,
        "session/new",
        json!({"cwd": "relative/dir", "mcpServers": []}),
    );
    assert_eq!(h.answer(1).unwrap()["error"]["code"], -32602);
    h.request(
        2,
        "session/new",
        json!({"cwd": "/work/x", "mcpServers": []}),
    );
    let key = h.spawned[0].0.clone();
    h.answer_opening(&key);
    let id = h.answer(2).unwrap()["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(h.spawned, vec![(id, std::path::PathBuf::from("/work/x"))]);
}

#[test]
fn prompt_streams_text_then_answers_end_turn() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "hello there");
    h.agent_lines(
        &s,
        &[
            update(json!({"type": "text_delta", "contentIndex": 0, "delta": "hello "})),
            update(json!({"type": "text_delta", "contentIndex": 0, "delta": "there"})),
        ],
    );
    assert!(h.answer(10).is_none(), "no answer before the turn ends");
    h.agent_lines(&s, &[agent_end("stop")]);
    h.answer_stats(&s, None);
    let updates = h.updates();
    assert_eq!(updates[0]["sessionUpdate"], "agent_message_chunk");
    assert_eq!(
        updates[0]["content"],
        json!({"type": "text", "text": "hello "})
    );
    assert_eq!(updates[1]["content"]["text"], "there");
    assert_eq!(h.editor[0]["params"]["sessionId"], s.as_str());
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "end_turn");
}

#[test]
fn prompt_stop_reasons_length_is_max_tokens_aborted_is_cancelled() {
    for (agent, acp) in [
        ("length", "max_tokens"),
        ("aborted", "cancelled"),
        ("error", "end_turn"),
    ] {
        let mut h = Harness::new();
        let s = h.session();
        h.prompt(&s, "x");
        h.agent_lines(&s, &[agent_end(agent)]);
        h.answer_stats(&s, None);
        assert_eq!(
            h.answer(10).unwrap()["result"]["stopReason"],
            acp,
            "{agent}"
        );
    }
}

#[test]
fn cancel_sends_abort_and_the_prompt_ends_cancelled() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "bash sleep 5");
    h.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": s}}));
    assert_eq!(h.agent.last().unwrap()["type"], "abort");
    assert!(h.answer(10).is_none());
    // The agent's last message may still say stop: the editor asked to cancel.
    h.agent_lines(&s, &[agent_end("stop")]);
    h.answer_stats(&s, None);
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "cancelled");
}

#[test]
fn prompt_failure_and_agent_exit_answer_with_errors() {
    let mut h = Harness::new();
    let s = h.session();
    h.request(
        10,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "x"}]}),
    );
    let id = h.agent.last().unwrap()["id"].as_str().unwrap().to_owned();
    h.agent_lines(&s, &[json!({"id": id, "type": "response", "command": "prompt", "success": false, "error": "busy"})]);
    assert_eq!(h.answer(10).unwrap()["error"]["code"], -32603);

    h.request(
        11,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "y"}]}),
    );
    h.agent_exit(&s);
    assert_eq!(h.answer(11).unwrap()["error"]["code"], -32603);
    h.request(
        12,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "z"}]}),
    );
    assert!(h.answer(12).unwrap()["error"].is_object());
}

#[test]
fn acp_27_a_prompt_for_an_unknown_session_is_refused_and_a_second_is_queued() {
    let mut h = Harness::new();
    let s = h.session();
    h.request(
        5,
        "session/prompt",
        json!({"sessionId": "nope", "prompt": []}),
    );
    assert!(h.answer(5).unwrap()["error"].is_object());
    h.prompt(&s, "a");
    h.request(
        6,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "b"}]}),
    );
    assert!(h.answer(6).is_none(), "queued behind the running prompt");
    let sent = h.agent.last().unwrap();
    assert_eq!(sent["type"], "prompt");
    assert_eq!(sent["streamingBehavior"], "followUp");
}
