//! ACP-12 (ours): nothing outlives the bridge. Stopping an agent closes its stdin, then kills
//! its process group after the grace (or at once when it exits); the bridge is finished once
//! every agent has exited, or when the shutdown's budget is over.

use crate::support as acp_support;

use std::time::Duration;

use crate::pinned::{SHUTDOWN_BUDGET, STOP_GRACE};
use acp_support::Harness;
use musewire_core::acp::Input;

/// A harness with two open sessions.
fn two_sessions() -> (Harness, String, String) {
    let mut h = Harness::new();
    let a = h.session();
    let b = h.open(3);
    (h, a, b)
}

#[test]
fn acp_12_editor_end_closes_every_stdin_then_kills_every_group_after_the_grace() {
    let (mut h, a, b) = two_sessions();
    h.prompt(&a, "bash sleep 30");
    h.bridge.handle(h.now, Input::EditorEnd);
    h.drain();
    assert_eq!(h.closed, [a.clone(), b.clone()]);
    assert!(h.stopped.is_empty(), "no kill before the grace");
    assert_eq!(h.bridge.poll_timeout(), Some(h.now + STOP_GRACE));
    // The prompt that was running is answered, not left waiting.
    assert!(h.answer(10).unwrap()["error"].is_object());
    h.timeout(STOP_GRACE - Duration::from_millis(1));
    assert!(
        h.stopped.is_empty(),
        "a timer before the grace's end kills nothing"
    );
    h.timeout(Duration::from_millis(1));
    assert_eq!(h.stopped, [a.clone(), b.clone()]);
    assert_eq!(h.closed.len(), 2, "stdin is closed once");
    assert!(!h.bridge.is_finished(), "the agents have not exited yet");
    h.agent_exit(&a);
    assert!(!h.bridge.is_finished());
    h.agent_exit(&b);
    assert!(h.bridge.is_finished());
    assert_eq!(h.stopped.len(), 2, "each group is killed once");
}

#[test]
fn acp_12_an_agent_that_ends_within_the_grace_has_its_group_killed_at_once() {
    let (mut h, a, b) = two_sessions();
    h.bridge.handle(h.now, Input::EditorEnd);
    h.drain();
    h.agent_exit(&a);
    assert_eq!(
        h.stopped,
        [a.as_str()],
        "what is left of its group goes with it"
    );
    h.timeout(STOP_GRACE);
    assert_eq!(h.stopped, [a.clone(), b.clone()], "no second kill of {a}");
    h.agent_exit(&b);
    assert!(h.bridge.is_finished());
    assert_eq!(h.bridge.poll_timeout(), None);
}

#[test]
fn acp_12_an_agent_that_exits_by_itself_has_its_group_killed() {
    let mut h = Harness::new();
    let s = h.session();
    h.agent_exit(&s);
    assert_eq!(h.stopped, [s.as_str()]);
    assert!(h.closed.is_empty());
    h.bridge.handle(h.now, Input::EditorEnd);
    h.drain();
    assert!(
        h.closed.is_empty(),
        "an agent that has gone is not stopped again"
    );
    assert_eq!(h.stopped, [s]);
    assert!(h.bridge.is_finished());
}

#[test]
fn acp_12_the_bridge_is_finished_within_the_budget_whatever_is_left() {
    let mut h = Harness::new();
    let s = h.session();
    h.bridge.handle(h.now, Input::EditorEnd);
    h.drain();
    h.timeout(STOP_GRACE);
    assert_eq!(h.stopped, [s]);
    // The agent's exit never comes.
    assert_eq!(
        h.bridge.poll_timeout(),
        Some(h.now - STOP_GRACE + SHUTDOWN_BUDGET)
    );
    h.timeout(SHUTDOWN_BUDGET - STOP_GRACE - Duration::from_millis(1));
    assert!(!h.bridge.is_finished());
    h.timeout(Duration::from_millis(1));
    assert!(h.bridge.is_finished());
    assert_eq!(h.bridge.poll_timeout(), None, "no timer once finished");
}

#[test]
fn acp_12_a_signal_drops_the_unfinished_line_and_nothing_more_is_read() {
    let mut h = Harness::new();
    let s = h.session();
    h.editor_bytes(br#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#);
    h.bridge.handle(h.now, Input::Shutdown);
    h.drain();
    assert_eq!(h.closed, [s.as_str()]);
    assert_eq!(h.spawned.len(), 1, "the unfinished line opened no session");
    h.editor_bytes(b"\n{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n");
    assert!(
        h.editor.is_empty(),
        "nothing is read once the bridge ends: {:?}",
        h.editor
    );
    h.bridge.handle(h.now, Input::EditorEnd);
    h.drain();
    assert_eq!(
        h.closed,
        [s.as_str()],
        "the editor's end after a signal changes nothing"
    );
    h.agent_exit(&s);
    assert!(h.bridge.is_finished());
}

#[test]
fn acp_12_the_editors_last_unfinished_line_is_served_and_its_agent_stopped() {
    let mut h = Harness::new();
    let s = h.session();
    h.editor_bytes(br#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#);
    h.bridge.handle(h.now, Input::EditorEnd);
    h.drain();
    assert_eq!(h.spawned.len(), 2);
    let late = h.spawned[1].0.clone();
    assert_eq!(h.closed, [s, late], "the session it opened is stopped too");
}
