//! Bad editor input, more of it (ACP-07): duplicate request ids, responses to requests never
//! made, a prompt of 10,000 content blocks, JSON nested 10,000 deep (from the editor and from
//! an agent), invalid UTF-8 and lone surrogates in text. Each gets a typed JSON-RPC error or
//! a defined behaviour, nothing panics, and the other session goes on.

use crate::support as acp_support;

use acp_support::{agent_end, Harness};
use serde_json::{json, Value};

/// A harness with two open sessions.
fn two_sessions() -> (Harness, String, String) {
    let mut h = Harness::new();
    let a = h.session();
    let b = h.open(3);
    h.agent_lines(
        &b,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    h.editor.clear();
    (h, a, b)
}

/// Ends the running turn of `session` and returns the answers to the editor's request 10.
fn end_turn(h: &mut Harness, session: &str) {
    h.agent_lines(session, &[agent_end("stop")]);
    h.answer_stats(session, None);
}

/// The messages to the editor with this id.
fn answers(h: &Harness, id: Value) -> Vec<Value> {
    h.editor.iter().filter(|m| m["id"] == id).cloned().collect()
}

/// `session` still serves a prompt from start to end.
fn goes_on(h: &mut Harness, session: &str) {
    h.editor.clear();
    h.prompt(session, "still here");
    end_turn(h, session);
    let answer = h.answer(10).expect("the prompt is answered");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
}

#[test]
fn acp_07_duplicate_request_ids_are_each_answered_in_their_own_session() {
    let (mut h, a, b) = two_sessions();
    // Both prompts carry id 10 (the harness's prompt id), one per session.
    h.prompt(&a, "one");
    h.prompt(&b, "two");
    end_turn(&mut h, &a);
    end_turn(&mut h, &b);
    let both = answers(&h, json!(10));
    assert_eq!(both.len(), 2, "{both:?}");
    assert!(both.iter().all(|m| m["result"]["stopReason"] == "end_turn"));
    // The same id twice in one session: the second prompt is refused, the first goes on.
    h.editor.clear();
    h.prompt(&a, "three");
    h.request(
        10,
        "session/prompt",
        json!({"sessionId": a, "prompt": [{"type": "text", "text": "four"}]}),
    );
    assert_eq!(answers(&h, json!(10))[0]["error"]["code"], -32600);
    end_turn(&mut h, &a);
    let last = answers(&h, json!(10));
    assert_eq!(last.len(), 2);
    assert_eq!(last[1]["result"]["stopReason"], "end_turn");
    // A repeated initialize is answered again, alike.
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    let inits = answers(&h, json!(1));
    assert_eq!(inits.len(), 2);
    assert_eq!(inits[0], inits[1]);
    goes_on(&mut h, &b);
}

#[test]
fn acp_07_responses_to_requests_never_made_are_ignored() {
    let (mut h, a, b) = two_sessions();
    h.prompt(&a, "busy");
    h.editor.clear();
    for response in [
        json!({"jsonrpc": "2.0", "id": 77, "result": {}}),
        json!({"jsonrpc": "2.0", "id": "x", "error": {"code": -1, "message": "no"}}),
        json!({"jsonrpc": "2.0", "id": null, "result": null}),
        json!({"jsonrpc": "2.0", "id": 10, "result": {"outcome": {"outcome": "cancelled"}}}),
    ] {
        h.send(response);
    }
    assert!(h.editor.is_empty(), "nothing is answered: {:?}", h.editor);
    end_turn(&mut h, &a);
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "end_turn");
    goes_on(&mut h, &b);
}

#[test]
fn acp_07_a_prompt_of_10000_content_blocks_is_one_prompt() {
    let (mut h, a, b) = two_sessions();
    let blocks: Vec<Value> = (0..10_000)
        .map(|i| json!({"type": "text", "text": format!("b{i}")}))
        .collect();
    h.request(
        10,
        "session/prompt",
        json!({"sessionId": a, "prompt": blocks}),
    );
    let sent = h.agent.last().unwrap().clone();
    assert_eq!(sent["type"], "prompt");
    let message = sent["message"].as_str().unwrap();
    assert_eq!(message.lines().count(), 10_000);
    assert!(message.starts_with("b0\nb1\n") && message.ends_with("\nb9999"));
    // 10,000 blocks of a kind that does not exist: invalid params, nothing sent.
    let odd: Vec<Value> = (0..10_000).map(|_| json!({"type": "hologram"})).collect();
    let before = h.agent.len();
    h.request(11, "session/prompt", json!({"sessionId": b, "prompt": odd}));
    assert_eq!(h.answer(11).unwrap()["error"]["code"], -32602);
    assert_eq!(h.agent.len(), before);
    goes_on(&mut h, &b);
}

#[test]
fn acp_07_json_nested_10000_deep_is_a_parse_error_from_the_editor() {
    let (mut h, _a, b) = two_sessions();
    let arrays = format!("{}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let objects = format!("{}1{}\n", "{\"a\":".repeat(10_000), "}".repeat(10_000));
    let in_params = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"{b}\",\"prompt\":[],\"_meta\":{}{}}}}}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    for line in [arrays, objects, in_params] {
        h.editor.clear();
        h.editor_bytes(line.as_bytes());
        assert_eq!(h.editor.len(), 1, "one answer");
        assert_eq!(h.editor[0]["error"]["code"], -32700, "{:?}", h.editor[0]);
        assert_eq!(h.editor[0]["id"], Value::Null);
    }
    goes_on(&mut h, &b);
}

#[test]
fn acp_07_json_nested_10000_deep_from_an_agent_does_not_end_its_session() {
    let (mut h, a, b) = two_sessions();
    h.prompt(&a, "deep");
    let deep = format!(
        "{{\"type\":\"message_update\",\"x\":{}{}}}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    h.bridge.handle(
        h.now,
        musewire_core::acp::Input::AgentStdout(acp_support::agent_key(&a), deep.as_bytes()),
    );
    h.drain();
    end_turn(&mut h, &a);
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "end_turn");
    goes_on(&mut h, &a);
    goes_on(&mut h, &b);
}

#[test]
fn acp_07_invalid_utf8_in_text_is_read_as_the_sdk_reads_it() {
    let (mut h, a, b) = two_sessions();
    // As TextDecoder does (the official SDK's reader): each invalid byte is U+FFFD.
    let mut line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"{a}\",\"prompt\":[{{\"type\":\"text\",\"text\":\"a"
    )
    .into_bytes();
    line.extend_from_slice(b"\xff\xc3(b");
    line.extend_from_slice(b"\"}]}}\n");
    h.editor_bytes(&line);
    let sent = h.agent.last().unwrap().clone();
    assert_eq!(sent["type"], "prompt", "{:?}", h.editor);
    assert_eq!(sent["message"], "a\u{FFFD}\u{FFFD}(b");
    end_turn(&mut h, &a);
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "end_turn");
    // Invalid UTF-8 outside any string is still no JSON: a parse error.
    h.editor.clear();
    h.editor_bytes(b"{\"jsonrpc\":\"2.0\",\xff\"id\":3}\n");
    assert_eq!(h.editor[0]["error"]["code"], -32700);
    goes_on(&mut h, &b);
}

#[test]
fn acp_07_a_lone_surrogate_in_text_reaches_the_agent_as_json_parse_reads_it() {
    let (mut h, a, b) = two_sessions();
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"{a}\",\"prompt\":[{{\"type\":\"text\",\"text\":\"cut \\ud83d\"}}]}}}}\n"
    );
    let mut raw = Vec::new();
    h.bridge
        .handle(h.now, musewire_core::acp::Input::Editor(line.as_bytes()));
    while let Some(action) = h.bridge.poll_action() {
        if let musewire_core::acp::Action::Agent { bytes, .. } = &action {
            raw.extend_from_slice(bytes);
        }
        h.editor.extend(match &action {
            musewire_core::acp::Action::Editor { bytes } => {
                vec![serde_json::from_slice::<Value>(bytes).unwrap()]
            }
            _ => vec![],
        });
    }
    assert!(h.editor.is_empty(), "no error: {:?}", h.editor);
    let raw = String::from_utf8(raw).unwrap();
    assert!(
        raw.contains(r#""message":"cut \ud83d""#),
        "the escape goes on as written: {raw}"
    );
    goes_on(&mut h, &b);
}
