//! ACP-20: the editor's stdout is a bounded queue. Past `EDITOR_HIGH_WATER` bytes waiting to
//! be written, the agents' stdout is not read; the editor is still read and answered (a
//! `session/cancel` reaches the agent) until `EDITOR_READ_LIMIT`; reading goes on as the
//! editor's bytes are written; the silence budgets (ACP-13, ACP-21) do not run meanwhile.

use crate::support as acp_support;

use std::time::Duration;

use crate::pinned::{AGENT_STDIN_HIGH_WATER, EDITOR_HIGH_WATER, EDITOR_READ_LIMIT};
use acp_support::{agent_key, assistant, update, Harness};
use musewire_core::acp::Input;
use serde_json::json;

/// One assistant message of one text delta of this many bytes (a message's text is bounded,
/// ACP-05, so a flood is of many messages).
fn message(bytes: usize) -> [serde_json::Value; 3] {
    [
        json!({"type": "message_start", "message": assistant("", "stop")}),
        update(json!({"type": "text_delta", "contentIndex": 0, "delta": "x".repeat(bytes)})),
        json!({"type": "message_end", "message": assistant("", "stop")}),
    ]
}

/// A session streaming a prompt's answer while the editor reads nothing, until the bridge
/// holds the agent: the session id.
fn flooded(h: &mut Harness) -> String {
    let session = h.session();
    h.prompt(&session, "go");
    let id = agent_key(&session);
    let mut sent = 0;
    while h.bridge.reads_agent(id) {
        h.agent_lines(&session, &message(16 * 1024));
        sent += 16 * 1024;
        assert!(sent < 4 * EDITOR_HIGH_WATER, "the agent is never held");
    }
    session
}

#[test]
fn acp_20_the_agents_are_held_past_the_high_water_and_read_again_once_written() {
    let mut h = Harness::new();
    let session = flooded(&mut h);
    let id = agent_key(&session);
    let waiting = h.bridge.editor_waiting();
    assert!(waiting >= EDITOR_HIGH_WATER, "{waiting}");
    assert!(h.bridge.reads_editor(), "the editor is still read");
    // The editor's bytes are written a little: still held while over the mark.
    h.bridge
        .handle(h.now, Input::EditorWritten(waiting - EDITOR_HIGH_WATER));
    assert!(!h.bridge.reads_agent(id));
    h.bridge.handle(h.now, Input::EditorWritten(1));
    assert!(h.bridge.reads_agent(id), "read again below the mark");
    assert_eq!(h.bridge.editor_waiting(), EDITOR_HIGH_WATER - 1);
}

#[test]
fn acp_20_a_cancel_reaches_the_agent_while_the_editor_lags() {
    let mut h = Harness::new();
    let session = flooded(&mut h);
    h.agent.clear();
    h.send(json!({"jsonrpc": "2.0", "method": "session/cancel",
        "params": {"sessionId": session}}));
    assert!(
        h.agent.iter().any(|m| m["type"] == "abort"),
        "abort sent: {:?}",
        h.agent
    );
    // A request is answered too (into the queue).
    let before = h.editor.len();
    h.request(7, "nope", json!({}));
    assert_eq!(h.editor.len(), before + 1);
    assert!(h.answer(7).unwrap()["error"].is_object());
}

#[test]
fn acp_20_the_editor_is_not_read_past_the_read_limit() {
    let mut h = Harness::new();
    h.session();
    while h.bridge.reads_editor() {
        // Each bad line is answered with a parse error the editor does not read.
        h.editor_bytes(&b"not json\n".repeat(4096));
    }
    assert!(h.bridge.editor_waiting() >= EDITOR_READ_LIMIT);
    h.bridge
        .handle(h.now, Input::EditorWritten(h.bridge.editor_waiting()));
    assert!(h.bridge.reads_editor() && h.bridge.editor_waiting() == 0);
}

#[test]
fn acp_20_the_prompt_budget_does_not_run_while_the_agent_is_held() {
    let mut h = Harness::new();
    let session = flooded(&mut h);
    let id = agent_key(&session);
    h.agent.clear();
    h.timeout(Duration::from_secs(3600));
    assert!(
        h.agent.iter().all(|m| m["type"] != "get_state"),
        "no probe while held"
    );
    assert!(h.closed.is_empty(), "not stopped while held");
    assert!(h.answer(10).is_none());
    // Read again: the budget starts over from then.
    h.bridge
        .handle(h.now, Input::EditorWritten(h.bridge.editor_waiting()));
    assert!(h.bridge.reads_agent(id));
    let budget = crate::pinned::DEFAULT_SILENCE_BUDGET;
    assert_eq!(h.bridge.poll_timeout(), Some(h.now + budget / 2));
}

/// ACP-20, an agent's stdin: while more than `AGENT_STDIN_HIGH_WATER` bytes given the driver
/// for one agent wait to be written (it does not read its stdin), the editor is not read;
/// it is read again once the agent has taken enough, and at once when the agent exits.
#[test]
fn acp_20_an_agent_that_does_not_read_its_stdin_stops_the_editors_reads() {
    let mut h = Harness::new();
    let session = h.session();
    let id = agent_key(&session);
    // What the opening wrote is taken; nothing waits.
    let opened = h.bridge.agent_stdin_waiting(id);
    h.bridge.handle(h.now, Input::AgentWritten(id, opened));
    assert_eq!(h.bridge.agent_stdin_waiting(id), 0);
    let text = "x".repeat(AGENT_STDIN_HIGH_WATER);
    h.request(
        10,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    );
    let waiting = h.bridge.agent_stdin_waiting(id);
    assert!(waiting > AGENT_STDIN_HIGH_WATER, "{waiting}");
    assert!(
        !h.bridge.reads_editor(),
        "held while the agent's stdin is full"
    );
    assert!(h.bridge.reads_agent(id), "the agent itself is still read");
    h.bridge.handle(
        h.now,
        Input::AgentWritten(id, waiting - AGENT_STDIN_HIGH_WATER),
    );
    assert!(!h.bridge.reads_editor(), "at the mark: still held");
    h.bridge.handle(h.now, Input::AgentWritten(id, 1));
    assert!(h.bridge.reads_editor(), "read again below the mark");

    // An agent that exits with its stdin full lets the editor be read again.
    h.request(
        11,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "y".repeat(2 * AGENT_STDIN_HIGH_WATER)}]}),
    );
    assert!(!h.bridge.reads_editor());
    h.agent_exit(&session);
    assert!(
        h.bridge.reads_editor(),
        "what the agent did not take is dropped"
    );
    assert_eq!(h.bridge.agent_stdin_waiting(id), 0);
}
