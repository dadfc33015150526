//! `musewire tap`: a transparent proxy that records a transcript which replays with no
//! mismatch, and reports rule violations on stderr with their rule IDs.

use std::process::{Command, Stdio};
use std::time::Duration;

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_live::model_server::ModelServer;
use musewire_live::peers;
use musewire_mio::AgentProcess;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);

/// `musewire tap -o TRANSCRIPT -- <omp>` as a command a host can spawn.
fn tap(name: &str, server: &ModelServer) -> (Command, std::path::PathBuf, std::path::PathBuf) {
    let dir = peers::scratch(name);
    let omp = peers::omp(&dir, &server.base_url());
    let transcript = dir.join("tap.jsonl");
    let stderr = dir.join("tap.stderr");
    let mut command = Command::new(env!("CARGO_BIN_EXE_musewire"));
    command
        .arg("tap")
        .arg("-o")
        .arg(&transcript)
        .arg("--")
        .arg(omp.get_program())
        .args(omp.get_args());
    command.env_clear();
    for (key, value) in omp.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    command.current_dir(omp.get_current_dir().unwrap());
    command.stderr(Stdio::from(std::fs::File::create(&stderr).unwrap()));
    (command, transcript, stderr)
}

#[test]
fn tap_forwards_a_whole_session_and_its_recording_replays() {
    if !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().unwrap();
    let (command, transcript, stderr) = tap("tap-session", &server);
    let agent = AgentProcess::spawn(command, ClientConfig::default()).unwrap();
    let ready = agent.next_event(WAIT);
    assert!(
        matches!(
            ready,
            Some(ClientEvent::Frame { .. }) | Some(ClientEvent::Ready { .. })
        ),
        "{ready:?}"
    );
    let mut protocol = None;
    while protocol.is_none() {
        if let Some(ClientEvent::Ready { protocol: p }) = agent.next_event(WAIT) {
            protocol = Some(p);
        }
    }
    assert_eq!(
        protocol,
        Some(musewire_core::frame::ProtocolVersion::V2),
        "negotiated through the tap"
    );
    agent.call(cmd(json!({"type": "get_state"})), WAIT).unwrap();
    // The turn first: omp repeats its todo list in the frames that follow it, so 1.1 MB of
    // todos set before the turn would make it tens of MB of chunks to forward and replay.
    agent
        .call(
            cmd(json!({"type": "prompt", "message": "[[text Through the tap.]]"})),
            WAIT,
        )
        .unwrap();
    while !matches!(
        agent.next_event(WAIT),
        Some(ClientEvent::TurnFinished) | None
    ) {}
    let todos = to_json(&agent
        .call(cmd(json!({"type": "set_todos", "phases": [{"name": "p", "tasks": [{"content": "t".repeat(1_100_000), "status": "pending"}]}]})), WAIT)
        .unwrap());
    assert_eq!(
        todos["todoPhases"][0]["tasks"][0]["content"]
            .as_str()
            .map(str::len),
        Some(1_100_000),
        "chunks pass unchanged"
    );
    agent.shutdown(Duration::from_secs(10)).unwrap();

    let report = std::fs::read_to_string(&stderr).unwrap();
    assert!(
        !report.contains("musewire tap:"),
        "no violations in a clean session: {report}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_musewire"))
        .arg("replay")
        .arg(&transcript)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn tap_reports_violations_with_their_rule_ids() {
    // The tap's own check of the host's lines: any agent behind it does, so the bundled one
    // (`musewire tap` with no agent named), which has no start-up to wait for.
    let dir = peers::scratch("tap-violations");
    let stderr = dir.join("tap.stderr");
    let mut command = Command::new(env!("CARGO_BIN_EXE_musewire"));
    command
        .arg("tap")
        .arg("-o")
        .arg(dir.join("tap.jsonl"))
        .current_dir(dir.join("work"))
        .stderr(Stdio::from(std::fs::File::create(&stderr).unwrap()));
    // A host that writes a line that is not JSON, then closes its side.
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"this is not json\n").unwrap();
    drop(stdin);
    let deadline = std::time::Instant::now() + WAIT;
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the tap did not end when the host closed its side"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let report = std::fs::read_to_string(&stderr).unwrap();
    assert!(
        report.contains("musewire tap: host: FRAME-14 a line that is not JSON"),
        "{report}"
    );
}

/// A command written as JSON, typed as the drivers take it.
fn cmd(command: Value) -> musewire_wire::Command {
    musewire_wire::Command::from_value_with_id(command)
        .expect("a command")
        .1
}

/// A typed answer as JSON, for the assertions.
fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("serialises")
}
