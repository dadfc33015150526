//! One typed call per command (CALL-01) on both drivers' handles, against the bundled agent:
//! `call` takes a `wire::request` type and gives its typed answer, or a `Command` and gives
//! its `data`; an answer of another shape would be `CallError::Unexpected`.

use std::time::Duration;

use musewire_core::wire::{request, Command, ResponseData, SessionState, SessionStatsData};

const WAIT: Duration = Duration::from_secs(20);

fn bundled_agent() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_musewire"));
    command.arg("agent");
    command
}

#[test]
fn call_01_the_blocking_handles_call_is_typed_by_its_command() {
    let agent = musewire_mio::AgentProcess::spawn(bundled_agent(), Default::default()).unwrap();
    let state: SessionState = agent.call(request::GetState::default(), WAIT).unwrap();
    assert!(state.session_id.as_deref().is_some_and(|id| !id.is_empty()));
    let stats: SessionStatsData = agent
        .call(request::GetSessionStats::default(), WAIT)
        .unwrap();
    assert_eq!(stats.session_id, state.session_id);
    let data: ResponseData = agent
        .call(Command::GetState(Default::default()), WAIT)
        .unwrap();
    assert!(matches!(data, ResponseData::State(_)), "{data:?}");
    // Set the todos, read back as typed.
    let todos = agent
        .call(request::SetTodos::default(), WAIT)
        .expect("set_todos");
    assert!(todos.todo_phases.is_empty(), "{todos:?}");
    agent.shutdown(WAIT).unwrap();
}

#[test]
fn call_01_the_async_handles_call_is_typed_by_its_command() {
    smol::block_on(async {
        let command = smol::process::Command::from(bundled_agent());
        let agent = musewire_smol::AgentProcess::spawn(command, Default::default()).unwrap();
        let state: SessionState = agent.call(request::GetState::default()).await.unwrap();
        let stats: SessionStatsData = agent
            .call(request::GetSessionStats::default())
            .await
            .unwrap();
        assert_eq!(stats.session_id, state.session_id);
        let data = agent
            .call(Command::GetSessionStats(Default::default()))
            .await
            .unwrap();
        assert!(matches!(data, ResponseData::SessionStats(_)), "{data:?}");
        agent.shutdown(WAIT).await.unwrap();
    });
}
