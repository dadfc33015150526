//! The blocking driver's recorder: a live session with the real agent written as a
//! conformance transcript while it runs replays through the core with the same actions.

use musewire_live::support::typed_command;
use std::time::Duration;

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_live::model_server::ModelServer;
use musewire_live::peers;
use musewire_mio::AgentProcess;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(90);

#[test]
fn a_recorded_omp_session_replays_through_the_core() {
    if !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().unwrap();
    let dir = peers::scratch("mio-record");
    let path = dir.join("session.jsonl");
    let agent = AgentProcess::spawn_recorded(
        peers::omp(&dir, &server.base_url()),
        ClientConfig::default(),
        &path,
    )
    .expect("spawn omp");
    let deadline = std::time::Instant::now() + WAIT;
    while !matches!(
        agent.next_event(Duration::from_millis(100)),
        Some(ClientEvent::Ready { .. })
    ) {
        assert!(std::time::Instant::now() < deadline, "no ready frame");
    }
    agent
        .call(typed_command(json!({"type": "get_state"})), WAIT)
        .expect("get_state");
    let _ = agent.call(typed_command(json!({"type": "frobnicate"})), WAIT);
    let content = "y".repeat(1_200_000);
    agent
        .call(typed_command(json!({"type": "set_todos", "phases": [{"name": "p", "tasks": [{"content": content, "status": "pending"}]}]})), WAIT)
        .expect("set_todos (chunked)");
    agent
        .call(
            typed_command(json!({"type": "prompt", "message": "[[text Recorded turn.]]"})),
            WAIT,
        )
        .expect("prompt");
    while !matches!(
        agent.next_event(Duration::from_millis(100)),
        Some(ClientEvent::TurnFinished)
    ) {
        assert!(std::time::Instant::now() < deadline, "the turn did not end");
    }
    agent.shutdown(Duration::from_secs(5)).expect("shutdown");

    let transcript = musewire_conformance::transcript::load(&path).expect("the recording parses");
    assert!(
        transcript.steps.len() > 5,
        "{} steps",
        transcript.steps.len()
    );
    musewire_conformance::replay::replay(&transcript)
        .expect("the recording replays with the same actions");
}
