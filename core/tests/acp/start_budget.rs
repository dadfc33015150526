//! ACP-13: an agent that says nothing at all within the start-up budget (the session's
//! client's `ready_timeout`, 30 s by default) fails what the editor waits for, with an error
//! that says so and the agent's stderr tail, and is stopped; one that said anything is not.

use crate::support as acp_support;

use std::time::Duration;

use acp_support::{agent_key, Harness};
use musewire_core::acp::{Bridge, BridgeConfig, Input};
use serde_json::json;

const BUDGET: Duration = Duration::from_secs(30);

#[test]
fn acp_13_session_new_to_an_agent_that_never_spoke_fails_at_the_budget() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    // ACP-24: session/new waits for the agent's state and models, so a silent agent holds
    // it, and the start-up budget ends that wait.
    h.request(2, "session/new", json!({"cwd": "/tmp", "mcpServers": []}));
    let key = h.spawned[0].0.clone();
    h.bridge.handle(
        h.now,
        Input::AgentStderr(agent_key(&key), b"node: cannot find module\n"),
    );
    assert!(h.answer(2).is_none(), "waits while the budget runs");
    assert_eq!(h.bridge.poll_timeout(), Some(h.now + BUDGET));
    h.timeout(BUDGET - Duration::from_millis(1));
    assert!(h.answer(2).is_none());
    h.timeout(Duration::from_millis(1));
    let answer = h.answer(2).expect("answered at the budget");
    let text = answer["error"]["data"].as_str().unwrap();
    assert!(text.contains("said nothing within 30s"), "{text}");
    assert!(text.contains("cannot find module"), "{text}");
    assert_eq!(h.closed, std::slice::from_ref(&key), "the agent is stopped");
    // The session never opened: a prompt to it is a clear error, not a hang.
    h.request(
        4,
        "session/prompt",
        json!({"sessionId": key, "prompt": [{"type": "text", "text": "again"}]}),
    );
    assert!(h.answer(4).unwrap().get("error").is_some());
}

#[test]
fn acp_13_session_new_with_a_session_folder_fails_when_the_agent_stays_silent() {
    let mut h = Harness::new();
    h.bridge = Bridge::new(BridgeConfig {
        session_dir: Some("/state/sessions".into()),
        ..BridgeConfig::default()
    });
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.request(2, "session/new", json!({"cwd": "/tmp", "mcpServers": []}));
    assert!(h.answer(2).is_none());
    h.timeout(BUDGET);
    let answer = h.answer(2).expect("session/new answered");
    assert!(
        answer["error"]["data"]
            .as_str()
            .unwrap()
            .contains("said nothing"),
        "{answer}"
    );
    assert_eq!(h.closed.len(), 1);
}

#[test]
fn acp_13_an_agent_that_spoke_is_not_failed_by_the_budget() {
    let mut h = Harness::new();
    let session = h.session(); // its ready frame was read
    h.timeout(BUDGET * 2);
    assert!(h.closed.is_empty(), "{:?}", h.editor);
    h.prompt(&session, "hi");
    assert!(h.answer(10).is_none(), "the turn runs");
}
