//! ACP-21: the prompt budget is on silence, not on a turn's length. While the editor waits on
//! a session's agent, an agent silent for half the budget is asked `get_state`; any byte
//! from it starts the silence over; one silent for the whole budget (60 s by default) fails
//! what the editor waits for with an error that says so, and is stopped.

use crate::support as acp_support;

use std::time::Duration;

use crate::pinned::DEFAULT_SILENCE_BUDGET;
use acp_support::{agent_end, update, Harness};
use musewire_core::acp::{Bridge, BridgeConfig, SilenceBudget};
use serde_json::json;

const HALF: Duration = Duration::from_secs(30);

fn probes(h: &Harness) -> usize {
    h.agent.iter().filter(|m| m["type"] == "get_state").count()
}

#[test]
fn acp_21_a_prompt_to_an_agent_that_stops_answering_fails_at_the_budget() {
    assert_eq!(DEFAULT_SILENCE_BUDGET, 2 * HALF);
    let mut h = Harness::new();
    let session = h.session();
    h.prompt(&session, "go");
    h.agent.clear();
    assert_eq!(h.bridge.poll_timeout(), Some(h.now + HALF));
    h.timeout(HALF - Duration::from_millis(1));
    assert_eq!(probes(&h), 0);
    h.timeout(Duration::from_millis(1));
    assert_eq!(probes(&h), 1, "probed at half the budget: {:?}", h.agent);
    h.timeout(HALF - Duration::from_millis(1));
    assert!(h.answer(10).is_none() && h.closed.is_empty());
    h.timeout(Duration::from_millis(1));
    let answer = h.answer(10).expect("the prompt is answered at the budget");
    let text = answer["error"]["data"].as_str().unwrap();
    assert!(text.contains("stopped answering"), "{text}");
    assert!(text.contains("60s"), "{text}");
    assert_eq!(h.closed, vec![session.clone()], "the agent is stopped");
    h.request(
        11,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "again"}]}),
    );
    assert!(h.answer(11).unwrap()["error"].is_object());
}

#[test]
fn acp_21_an_agent_that_answers_the_probe_runs_as_long_as_it_likes() {
    let mut h = Harness::new();
    let session = h.session();
    h.prompt(&session, "bash sleep 600");
    for _ in 0..20 {
        h.timeout(HALF);
        let probe = h
            .agent
            .iter()
            .rev()
            .find(|m| m["type"] == "get_state")
            .expect("probed")
            .clone();
        h.agent_lines(
            &session,
            &[
                json!({"id": probe["id"], "type": "response", "command": "get_state",
                "success": true, "data": {}}),
            ],
        );
    }
    assert!(
        h.answer(10).is_none() && h.closed.is_empty(),
        "ten minutes, alive"
    );
    h.agent_lines(&session, &[agent_end("stop")]);
    h.answer_stats(&session, None);
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "end_turn");
}

#[test]
fn acp_21_streamed_events_keep_the_turn_alive_without_probes() {
    let mut h = Harness::new();
    let session = h.session();
    h.prompt(&session, "go");
    h.agent.clear();
    for _ in 0..20 {
        h.timeout(HALF - Duration::from_secs(1));
        h.agent_lines(
            &session,
            &[update(
                json!({"type": "text_delta", "contentIndex": 0, "delta": "x"}),
            )],
        );
    }
    assert_eq!(probes(&h), 0);
    assert!(h.answer(10).is_none() && h.closed.is_empty());
}

#[test]
fn acp_21_an_idle_session_has_no_budget_running() {
    let mut h = Harness::new();
    let session = h.session();
    h.agent.clear();
    h.timeout(Duration::from_secs(3600));
    assert_eq!(probes(&h), 0);
    assert!(h.closed.is_empty());
    // The budget counts from the prompt, not from the agent's last word.
    h.prompt(&session, "go");
    h.agent.clear();
    h.timeout(HALF);
    assert_eq!(probes(&h), 1);
}

#[test]
fn acp_21_the_budget_is_configurable() {
    let mut h = Harness::new();
    h.bridge = Bridge::new(BridgeConfig {
        silence_budget: SilenceBudget(Duration::from_secs(4)),
        ..BridgeConfig::default()
    });
    let session = h.session();
    h.prompt(&session, "go");
    h.timeout(Duration::from_secs(4));
    let text = h.answer(10).unwrap()["error"]["data"].clone();
    assert!(text.as_str().unwrap().contains("for 4s"), "{text}");
}
