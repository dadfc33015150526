//! The async driver's recorder: a live session with the real agent written as a conformance
//! transcript while it runs replays through the core with the same actions.

use musewire_live::support::typed_command;
use std::time::Duration;

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_live::model_server::ModelServer;
use musewire_live::peers;
use musewire_smol::AgentProcess;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(90);

#[test]
fn a_recorded_omp_session_replays_through_the_core() {
    if !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().unwrap();
    let dir = peers::scratch("smol-record");
    let path = dir.join("session.jsonl");
    let command = peers::omp(&dir, &server.base_url());
    let agent =
        AgentProcess::spawn_recorded(command, ClientConfig::default(), &path).expect("spawn omp");
    smol::block_on(smol::future::or(
        async {
            while !matches!(agent.next_event().await, Some(ClientEvent::Ready { .. })) {}
            agent.get_state().await.expect("get_state");
            let content = "z".repeat(1_200_000);
            agent
                .call(typed_command(json!({"type": "set_todos", "phases": [{"name": "p", "tasks": [{"content": content, "status": "pending"}]}]})))
                .await
                .expect("set_todos (chunked)");
            agent
                .prompt("[[think Recording.]] Recorded turn.")
                .await
                .expect("prompt");
            while !matches!(agent.next_event().await, Some(ClientEvent::TurnFinished)) {}
            agent
                .shutdown(Duration::from_secs(5))
                .await
                .expect("shutdown");
        },
        async {
            smol::Timer::after(WAIT).await;
            panic!("the agent went quiet");
        },
    ));
    let transcript = musewire_conformance::transcript::load(&path).expect("the recording parses");
    assert!(
        transcript.steps.len() > 5,
        "{} steps",
        transcript.steps.len()
    );
    musewire_conformance::replay::replay(&transcript)
        .expect("the recording replays with the same actions");
}
