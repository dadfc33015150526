//! Live: the mio driver against the real reference agent (`omp --mode rpc`, oh-my-pi 18.2.3
//! under bun 1.4.5, installed by `conformance/peers/install.sh`), started by `musewire_live::peers`. No LLM
//! is called: these are commands the agent answers itself. Every wait has a deadline: a quiet agent fails the test.
//! A missing agent fails under CI and is skipped with a notice elsewhere.

use musewire_live::support::typed_command;
use std::process::Command;
use std::time::Duration;

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_core::frame::ProtocolVersion;
use musewire_live::model_server::ModelServer;
use musewire_live::peers;
use musewire_mio::{AgentProcess, CallError};
use musewire_wire::{AgentMessage, ResponseData};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);

fn wait_for(
    agent: &AgentProcess,
    what: &str,
    mut want: impl FnMut(&ClientEvent) -> bool,
) -> ClientEvent {
    let deadline = std::time::Instant::now() + WAIT;
    while std::time::Instant::now() < deadline {
        if let Some(event) = agent.next_event(Duration::from_millis(200)) {
            if want(&event) {
                return event;
            }
        }
    }
    panic!("the agent went quiet: no {what} within {WAIT:?}");
}

/// FRAME-03/04/05, CALL-01/02, PAGE-07 against the real agent.
#[test]
fn live_omp_negotiates_v2_answers_calls_and_pages_a_chunked_history() {
    if !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().unwrap();
    let command = peers::omp(&peers::scratch("mio-omp"), &server.base_url());
    let agent = AgentProcess::spawn(command, ClientConfig::default()).expect("spawn omp");
    let ready = wait_for(&agent, "ready", |e| matches!(e, ClientEvent::Ready { .. }));
    assert_eq!(
        ready,
        ClientEvent::Ready {
            protocol: ProtocolVersion::V2
        }
    );

    let state = agent.get_state(WAIT).expect("get_state");
    assert!(state.session_id.is_some(), "{state:?}");

    // CALL-02: omp answers an unknown command without an id; it is matched all the same.
    let unknown = agent.call(typed_command(json!({"type": "frobnicate"})), WAIT);
    assert!(
        matches!(&unknown, Err(CallError::Failed(f)) if f.error == "Unknown command: frobnicate"),
        "{unknown:?}"
    );

    // A todo list of 1.5 MB comes back in set_todos' response: over 1 MiB, so chunked (v2).
    let content = "x".repeat(1_500_000);
    let todos = agent
        .set_todos(
            vec![json!({"name": "big", "tasks": [{"content": content, "status": "pending"}]})],
            WAIT,
        )
        .expect("set_todos");
    assert_eq!(
        todos.todo_phases[0]["tasks"][0]["content"]
            .as_str()
            .map(str::len),
        Some(1_500_000)
    );

    // PAGE-07: the paged drain equals get_messages (a bash execution is one message).
    let bash = agent.bash("echo hello", WAIT).expect("bash");
    assert_eq!(bash.exit_code, Some(0), "{bash:?}");
    let messages = agent.messages(WAIT).expect("history");
    let legacy = agent
        .call(typed_command(json!({"type": "get_messages"})), WAIT)
        .expect("get_messages");
    let ResponseData::Messages(legacy) = legacy else {
        panic!("not messages: {legacy:?}")
    };
    assert_eq!(legacy.messages, messages);
    assert!(
        messages
            .iter()
            .any(|m| matches!(m, AgentMessage::BashExecution(b) if b.output == "hello\n")),
        "{messages:?}"
    );

    let status = agent.shutdown(Duration::from_secs(5)).expect("shutdown");
    let _ = status;
}

/// CALL-07: the agent killed mid-session; pending calls fail with the exit status, no hang.
#[test]
fn live_omp_killed_fails_pending_requests() {
    if !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().unwrap();
    let command = peers::omp(&peers::scratch("mio-kill"), &server.base_url());
    let agent = AgentProcess::spawn(command, ClientConfig::default()).expect("spawn omp");
    wait_for(&agent, "ready", |e| matches!(e, ClientEvent::Ready { .. }));
    // A long bash command is pending when the agent is killed from outside.
    let pending = agent
        .send(typed_command(
            json!({"type": "bash", "command": "sleep 30"}),
        ))
        .expect("send");
    std::thread::sleep(Duration::from_millis(300));
    Command::new("kill")
        .args(["-9", &agent.id().to_string()])
        .status()
        .expect("kill");
    let failed = wait_for(
        &agent,
        "the failed bash",
        |e| matches!(e, ClientEvent::Response { request, .. } if *request == pending),
    );
    let ClientEvent::Response {
        outcome: Err(failure),
        ..
    } = failed
    else {
        panic!("{failed:?}")
    };
    assert!(
        failure
            .error
            .starts_with("Agent process exited with signal 9"),
        "{}",
        failure.error
    );
    let closed = wait_for(&agent, "closed", |e| {
        matches!(e, ClientEvent::Closed { .. })
    });
    assert!(matches!(closed, ClientEvent::Closed { .. }));
}
