//! ACP-33 (ours): a session whose agent has exited between turns gets a new agent on its
//! file at the next prompt, as a resume does; the prompt runs there after a notice; at most
//! `MAX_RESTARTS` within `RESTART_WINDOW`.

use crate::support as acp_support;

use crate::pinned::{MAX_RESTARTS, RESTART_WINDOW};
use acp_support::{agent_end, Harness};
use musewire_core::acp::{Bridge, BridgeConfig, RESTARTED_NOTICE};
use serde_json::json;

/// A bridge with a session folder and session `s-1` resumed in agent `musewire-1`.
fn resumed() -> Harness {
    let mut h = Harness::new();
    h.bridge = Bridge::new(BridgeConfig {
        session_dir: Some("/state/sessions".into()),
        ..BridgeConfig::default()
    });
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.request(
        2,
        "session/resume",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    let key = h.spawned[0].0.clone();
    h.answer_opening_after_switch(&key);
    assert!(h.answer(2).unwrap()["result"].is_object());
    h
}

fn prompt(h: &mut Harness, id: u64, text: &str) {
    h.request(
        id,
        "session/prompt",
        json!({"sessionId": "s-1", "prompt": [{"type": "text", "text": text}]}),
    );
}

/// Runs the turn of the prompt the agent `key` was just sent to its end: `end_turn`.
fn run_turn(h: &mut Harness, key: &str, id: u64) {
    let sent = h.agent.last().unwrap().clone();
    assert_eq!(sent["type"], "prompt", "{sent}");
    h.agent_lines(
        key,
        &[
            json!({"id": sent["id"], "type": "response", "command": "prompt", "success": true}),
            json!({"type": "agent_start"}),
            agent_end("stop"),
        ],
    );
    h.answer_stats(key, None);
    assert_eq!(h.answer(id).unwrap()["result"]["stopReason"], "end_turn");
}

#[test]
fn acp_33_the_next_prompt_after_an_agent_died_starts_a_new_one_on_the_file() {
    let mut h = resumed();
    prompt(&mut h, 10, "first");
    run_turn(&mut h, "musewire-1", 10);
    // The agent dies between turns.
    h.agent_exit("musewire-1");
    h.editor.clear();
    prompt(&mut h, 11, "second");
    // A new agent, in the session's cwd, switched to the same file, no replay.
    assert_eq!(h.spawned.len(), 2);
    let (key, cwd) = h.spawned[1].clone();
    assert_eq!(key, "musewire-2");
    assert_eq!(cwd, std::path::PathBuf::from("/work"));
    assert!(h.answer(11).is_none(), "the prompt waits for the new agent");
    h.answer_opening_after_switch(&key);
    let switch = h.asked("switch_session").unwrap();
    assert_eq!(switch["sessionPath"], "/state/sessions/s-1.jsonl");
    assert!(h.asked("get_messages_page").is_none() && h.asked("get_messages").is_none());
    // The notice, then the prompt goes to the new agent; no resume answer to the prompt.
    let notice = h
        .editor
        .iter()
        .find(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .expect("a notice");
    assert_eq!(notice["params"]["sessionId"], "s-1");
    assert!(notice["params"]["update"]["content"]["text"]
        .as_str()
        .unwrap()
        .contains(RESTARTED_NOTICE));
    assert_eq!(h.agent.last().unwrap()["message"], "second");
    assert_eq!(h.agent_to.last().unwrap().to_string(), key);
    run_turn(&mut h, &key, 11);
}

#[test]
fn acp_33_at_most_max_restarts_within_the_window_then_a_clear_error() {
    let mut h = resumed();
    let mut id = 10;
    for n in 1..=MAX_RESTARTS {
        h.agent_exit(&format!("musewire-{n}"));
        prompt(&mut h, id, "again");
        let key = format!("musewire-{}", n + 1);
        assert_eq!(h.spawned.last().unwrap().0, key);
        h.answer_opening_after_switch(&key);
        run_turn(&mut h, &key, id);
        id += 1;
    }
    h.agent_exit(&format!("musewire-{}", MAX_RESTARTS + 1));
    prompt(&mut h, id, "once more");
    let error = h.answer(id).expect("answered at once");
    assert_eq!(error["error"]["code"], -32603, "{error}");
    assert!(error["error"]["data"].as_str().unwrap().contains("exited"));
    assert_eq!(h.spawned.len(), MAX_RESTARTS + 1, "no new agent");
    // After the window a restart is allowed again.
    h.now += RESTART_WINDOW;
    prompt(&mut h, id + 1, "later");
    assert_eq!(h.spawned.len(), MAX_RESTARTS + 2);
}

#[test]
fn acp_33_a_death_mid_turn_ends_that_turn_with_the_error_and_the_next_prompt_restarts() {
    let mut h = resumed();
    prompt(&mut h, 10, "first");
    let sent = h.agent.last().unwrap().clone();
    h.agent_lines(
        "musewire-1",
        &[
            json!({"id": sent["id"], "type": "response", "command": "prompt", "success": true}),
            json!({"type": "agent_start"}),
        ],
    );
    h.agent_exit("musewire-1");
    assert!(
        h.answer(10).unwrap()["error"].is_object(),
        "the running turn fails"
    );
    assert_eq!(h.spawned.len(), 1, "no restart inside the turn");
    prompt(&mut h, 11, "second");
    assert_eq!(h.spawned.len(), 2);
}

#[test]
fn acp_33_a_session_without_a_folder_does_not_come_back() {
    let mut h = Harness::new();
    let s = h.session();
    h.agent_exit(&h.spawned[0].0.clone());
    h.request(
        11,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "x"}]}),
    );
    assert!(h.answer(11).unwrap()["error"].is_object());
    assert_eq!(h.spawned.len(), 1);
}

/// The agent `musewire-1` dies between turns and the prompt `id` starts `musewire-2`.
fn died_and_prompted(id: u64) -> Harness {
    let mut h = resumed();
    h.agent_exit("musewire-1");
    prompt(&mut h, id, "second");
    assert_eq!(h.spawned.len(), 2);
    h
}

#[test]
fn acp_33_a_cancel_while_the_agent_comes_back_answers_the_prompt_cancelled() {
    let mut h = died_and_prompted(11);
    h.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s-1"}}));
    h.answer_opening_after_switch("musewire-2");
    assert_eq!(h.answer(11).unwrap()["result"]["stopReason"], "cancelled");
    assert!(
        h.agent
            .iter()
            .all(|m| m["type"] != "prompt" || m["message"] != "second"),
        "the cancelled prompt never reached the agent"
    );
    // The session goes on.
    prompt(&mut h, 12, "third");
    run_turn(&mut h, "musewire-2", 12);
}

#[test]
fn acp_33_a_prompt_while_the_agent_comes_back_is_refused_as_while_opening() {
    let mut h = died_and_prompted(11);
    prompt(&mut h, 12, "another");
    assert_eq!(h.answer(12).unwrap()["error"]["code"], -32600);
    h.answer_opening_after_switch("musewire-2");
    assert_eq!(h.agent.last().unwrap()["message"], "second");
    run_turn(&mut h, "musewire-2", 11);
}

#[test]
fn acp_33_a_close_while_the_agent_comes_back_ends_it_for_good() {
    let mut h = died_and_prompted(11);
    h.request(20, "session/close", json!({"sessionId": "s-1"}));
    assert!(
        h.answer(11).unwrap()["error"].is_object(),
        "the prompt fails"
    );
    assert!(h.answer(20).unwrap()["result"].is_object());
    h.agent_exit("musewire-2");
    prompt(&mut h, 21, "after close");
    assert_eq!(h.answer(21).unwrap()["error"]["code"], -32002);
    assert_eq!(h.spawned.len(), 2, "nothing started again");
}

#[test]
fn acp_33_an_agent_being_stopped_is_not_started_again_until_it_exits() {
    let mut h = resumed();
    // Its output ends (it is closing) but it has not exited: no second agent on the file.
    h.bridge.handle(
        h.now,
        musewire_core::acp::Input::AgentStdoutEnd(acp_support::agent_key("musewire-1")),
    );
    h.drain();
    prompt(&mut h, 11, "second");
    assert_eq!(h.spawned.len(), 1);
    // Its exit fails what waited on it; the next prompt brings a new agent.
    h.agent_exit("musewire-1");
    assert!(h.answer(11).unwrap()["error"].is_object());
    prompt(&mut h, 12, "third");
    assert_eq!(h.spawned.len(), 2);
}
