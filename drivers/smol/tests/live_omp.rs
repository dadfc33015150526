//! Live: the smol driver against the real reference agent (`omp --mode rpc`, oh-my-pi 18.2.3
//! under bun 1.4.5, installed by `conformance/peers/install.sh`). No LLM is called: these are
//! commands the agent answers itself. Every wait has a deadline: a quiet agent fails the test.
//! A missing agent fails under CI and is skipped with a notice elsewhere.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_core::frame::ProtocolVersion;
use musewire_smol::{Agent, CallError};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../conformance/peers/node_modules")
}

/// `omp --mode rpc` with an isolated HOME and agent dir and a dummy key, or `None` (with a
/// notice) when the agent is not installed outside CI.
fn omp(dir: &std::path::Path) -> Option<smol::process::Command> {
    let bun = peers().join(".bin/bun");
    let cli = peers().join("@oh-my-pi/pi-coding-agent/dist/cli.js");
    if !bun.exists() || !cli.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "the reference agent is not installed: run conformance/peers/install.sh"
        );
        eprintln!("skipping: the reference agent is not installed (conformance/peers/install.sh)");
        return None;
    }
    let home = dir.join("home");
    let work = dir.join("work");
    std::fs::create_dir_all(home.join(".omp/agent")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let mut command = smol::process::Command::new(bun);
    command
        .arg(cli)
        .args(["--mode", "rpc", "--no-title"])
        .current_dir(&work)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("PI_CODING_AGENT_DIR", home.join(".omp/agent"))
        .env("OPENAI_API_KEY", "sk-dummy")
        .env("NO_COLOR", "1");
    Some(command)
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("musewire-smol-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `f` with a deadline: a quiet agent fails the test instead of hanging it.
fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    smol::block_on(smol::future::or(f, async {
        smol::Timer::after(WAIT).await;
        panic!("the agent went quiet: no {what} within {WAIT:?}")
    }))
}

async fn wait_for(agent: &Agent, mut want: impl FnMut(&ClientEvent) -> bool) -> ClientEvent {
    loop {
        let event = agent.next_event().await.expect("the session ended");
        if want(&event) {
            return event;
        }
    }
}

/// FRAME-03/04/05, CALL-01/02, PAGE-07 against the real agent.
#[test]
fn live_omp_negotiates_v2_answers_calls_and_pages_a_chunked_history() {
    let dir = tempdir("omp");
    let Some(command) = omp(&dir) else { return };
    let agent = Agent::spawn(command, ClientConfig::default()).expect("spawn omp");
    within("the first session", async move {
        let ready = wait_for(&agent, |e| matches!(e, ClientEvent::Ready { .. })).await;
        assert_eq!(
            ready,
            ClientEvent::Ready {
                protocol: ProtocolVersion::V2
            }
        );

        let state = agent
            .call(json!({"type": "get_state"}))
            .await
            .expect("get_state");
        assert!(state["sessionId"].is_string(), "{state}");

        // CALL-02: omp answers an unknown command without an id; it is matched all the same.
        let unknown = agent.call(json!({"type": "frobnicate"})).await;
        assert!(
            matches!(&unknown, Err(CallError::Failed(f)) if f.error == "Unknown command: frobnicate"),
            "{unknown:?}"
        );

        // A todo list of 1.5 MB comes back in set_todos' response: over 1 MiB, so chunked (v2).
        let content = "x".repeat(1_500_000);
        let todos = agent
        .call(json!({"type": "set_todos", "phases": [{"name": "big", "tasks": [{"content": content, "status": "pending"}]}]}))
        .await
        .expect("set_todos");
        assert_eq!(
            todos["todoPhases"][0]["tasks"][0]["content"]
                .as_str()
                .map(str::len),
            Some(1_500_000)
        );

        // PAGE-07: the paged drain equals get_messages (a bash execution is one message).
        let bash = agent
            .call(json!({"type": "bash", "command": "echo hello"}))
            .await
            .expect("bash");
        assert_eq!(bash["exitCode"], 0, "{bash}");
        let messages = agent.messages().await.expect("history");
        let legacy = agent
            .call(json!({"type": "get_messages"}))
            .await
            .expect("get_messages");
        assert_eq!(legacy["messages"].as_array(), Some(&messages));
        assert!(
            messages.iter().any(|m| m["output"] == "hello\n"),
            "{messages:?}"
        );

        agent
            .shutdown(Duration::from_secs(5))
            .await
            .expect("shutdown");
    });
    let _ = std::fs::remove_dir_all(dir);
}

/// CALL-07: the agent killed mid-session; pending calls fail with the exit status, no hang.
#[test]
fn live_omp_killed_fails_pending_requests() {
    let dir = tempdir("kill");
    let Some(command) = omp(&dir) else { return };
    let agent = Agent::spawn(command, ClientConfig::default()).expect("spawn omp");
    within("the killed session", async {
        wait_for(&agent, |e| matches!(e, ClientEvent::Ready { .. })).await;
        // A long bash command is pending when the agent is killed from outside.
        let pending = agent
            .send(json!({"type": "bash", "command": "sleep 30"}))
            .await
            .expect("send");
        smol::Timer::after(Duration::from_millis(300)).await;
        Command::new("kill")
            .args(["-9", &agent.id().to_string()])
            .status()
            .expect("kill");
        let failed = wait_for(
            &agent,
            |e| matches!(e, ClientEvent::Response { request, .. } if *request == pending),
        )
        .await;
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
        let closed = wait_for(&agent, |e| matches!(e, ClientEvent::Closed { .. })).await;
        assert!(matches!(closed, ClientEvent::Closed { .. }));
    });
    let _ = std::fs::remove_dir_all(dir);
}
