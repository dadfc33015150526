//! One typed call per command (CALL-01) on both drivers' handles, against the bundled agent:
//! `call` takes a command's type (`musewire_wire::GetState`, one per command) and gives its typed answer, or a `Command` and gives
//! its `data`; an answer of another shape would be `CallError::Unexpected`. And the host kit's
//! handle traits (`BlockingHandle`, `AsyncHandle`), which both handles implement: one caller
//! written over them drives either driver.

use std::time::Duration;

use musewire_core::client::{Call, ClientEvent};
use musewire_host::{AsyncHandle, BlockingHandle};
use musewire_wire::FromAnswer;
use musewire_wire::{
    Command, GetSessionStats, GetState, ResponseData, SessionState, SessionStatsData, SetTodos,
};

const WAIT: Duration = Duration::from_secs(20);

fn bundled_agent() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_musewire"));
    command.arg("agent");
    command
}

#[test]
fn call_01_the_blocking_handles_call_is_typed_by_its_command() {
    let agent = musewire_mio::AgentProcess::spawn(bundled_agent(), Default::default()).unwrap();
    let state: SessionState = agent.call(GetState::default(), WAIT).unwrap();
    assert!(state.session_id.as_deref().is_some_and(|id| !id.is_empty()));
    let stats: SessionStatsData = agent.call(GetSessionStats::default(), WAIT).unwrap();
    assert_eq!(stats.session_id, state.session_id);
    let data: ResponseData = agent
        .call(Command::GetState(Default::default()), WAIT)
        .unwrap();
    assert!(matches!(data, ResponseData::State(_)), "{data:?}");
    // Set the todos, read back as typed.
    let todos = agent.call(SetTodos::default(), WAIT).expect("set_todos");
    assert!(todos.todo_phases.is_empty(), "{todos:?}");
    agent.shutdown(WAIT).unwrap();
}

#[test]
fn call_01_the_async_handles_call_is_typed_by_its_command() {
    smol::block_on(async {
        let command = bundled_agent();
        let agent = musewire_smol::AgentProcess::spawn(command, Default::default()).unwrap();
        let state: SessionState = agent.call(GetState::default()).await.unwrap();
        let stats: SessionStatsData = agent.call(GetSessionStats::default()).await.unwrap();
        assert_eq!(stats.session_id, state.session_id);
        let data = agent
            .call(Command::GetSessionStats(Default::default()))
            .await
            .unwrap();
        assert!(matches!(data, ResponseData::SessionStats(_)), "{data:?}");
        agent.shutdown(WAIT).await.unwrap();
    });
}

/// What a driver-agnostic caller does over the blocking handle trait: a typed command, a
/// request whose answer comes as an event, and the events up to that answer.
fn state_and_stats_over(agent: &dyn BlockingHandle) -> (SessionState, SessionStatsData) {
    let state = agent.call(GetState::default(), WAIT).unwrap();
    let sent = agent
        .send_call(Call::Send(Command::GetSessionStats(Default::default())))
        .unwrap();
    let stats = loop {
        match agent
            .next_event(WAIT)
            .expect("the answer arrives as an event")
        {
            ClientEvent::Response {
                request,
                outcome: Ok(ResponseData::SessionStats(stats)),
                ..
            } if request == sent => break *stats,
            _ => {}
        }
    };
    (state, stats)
}

/// The same over the async handle trait.
async fn state_and_stats_over_async(agent: &impl AsyncHandle) -> (SessionState, SessionStatsData) {
    let state = agent.call(GetState::default()).await.unwrap();
    let answered = agent
        .answered(Call::Send(Command::GetSessionStats(Default::default())))
        .await
        .unwrap();
    let stats = SessionStatsData::from_answer(answered).unwrap();
    (state, stats)
}

#[test]
fn call_01_one_caller_drives_either_driver_through_the_host_kits_handle_traits() {
    let mio = musewire_mio::AgentProcess::spawn(bundled_agent(), Default::default()).unwrap();
    let (state, stats) = state_and_stats_over(&mio);
    assert_eq!(BlockingHandle::id(&mio), mio.id());
    assert_eq!(stats.session_id, state.session_id);
    assert!(state.session_id.is_some());
    mio.shutdown(WAIT).unwrap();
    smol::block_on(async {
        let command = bundled_agent();
        let agent = musewire_smol::AgentProcess::spawn(command, Default::default()).unwrap();
        let (state, stats) = state_and_stats_over_async(&agent).await;
        assert_eq!(stats.session_id, state.session_id);
        assert!(state.session_id.is_some());
        // A request whose answer is an event, through the async trait.
        let sent =
            AsyncHandle::send_call(&agent, Call::Send(Command::GetState(Default::default())))
                .await
                .unwrap();
        loop {
            match AsyncHandle::next_event(&agent)
                .await
                .expect("the answer arrives")
            {
                ClientEvent::Response { request, .. } if request == sent => break,
                _ => {}
            }
        }
        agent.shutdown(WAIT).await.unwrap();
    });
}
