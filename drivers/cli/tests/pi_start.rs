//! FRAME-03 against the live pi (no ready frame): `musewire prompt` and `musewire acp` start
//! pi as fast as pi starts itself. Each run is compared with pi driven by hand in the same
//! test (its input written at once, as a host that knows pi would), and may take at most
//! [`SLACK`] more; before the start-up probe both waited the ready timeout, set here to its
//! default of 30 s by flag (it is the scenario's budget), three times the slack, so a loaded
//! 2-core machine slowing one run more than the other does not fail the test.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use musewire_live::model_server::ModelServer;
use musewire_live::peers::{self, Pi};

/// How much longer than pi on its own a musewire start may take.
const SLACK: Duration = Duration::from_secs(10);

/// The pi command's program and arguments, for `musewire … -- AGENT…`.
fn argv(command: &Command) -> Vec<std::ffi::OsString> {
    std::iter::once(command.get_program().to_owned())
        .chain(command.get_args().map(ToOwned::to_owned))
        .collect()
}

/// `musewire ARGS… -- PI…` with pi's environment and working directory.
fn musewire_with(pi: &Command, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_musewire"));
    command.args(args).arg("--").args(argv(pi));
    command.env_clear();
    for (key, value) in pi.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    command.current_dir(pi.get_current_dir().expect("pi runs in its work dir"));
    command
}

/// Starts `command` with piped stdio, writes `lines` at once, and reads its stdout until a
/// line satisfies `done`: that line and the time it took, from the spawn.
fn time_until(
    mut command: Command,
    lines: &[Value],
    done: impl Fn(&Value) -> bool,
) -> (Duration, Value) {
    let start = Instant::now();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut took = None;
    for line in stdout.lines() {
        let Ok(line) = line else { break };
        match serde_json::from_str::<Value>(&line) {
            Ok(value) if done(&value) => {
                took = Some((start.elapsed(), value));
                break;
            }
            _ => {}
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    took.expect("the awaited line came")
}

/// pi on its own: a prompt written at once, until its turn ends.
fn pi_turn(pi: Pi, dir_name: &str, server: &ModelServer) -> Duration {
    let dir = peers::scratch(dir_name);
    time_until(
        peers::pi_version(pi, &dir, &server.base_url()),
        &[json!({"id": "p", "type": "prompt", "message": "hello"})],
        |v| v["type"] == "agent_end",
    )
    .0
}

fn prompt_starts_pi_at_once(version: Pi) {
    let server = ModelServer::start().unwrap();
    let alone = pi_turn(version, "pi-start-alone-1", &server).max(pi_turn(
        version,
        "pi-start-alone-2",
        &server,
    ));
    let dir = peers::scratch("pi-start-prompt");
    let pi = peers::pi_version(version, &dir, &server.base_url());
    let mut command = musewire_with(
        &pi,
        &[
            "prompt",
            "hello",
            "--timeout",
            "120",
            "--ready-timeout",
            "30",
        ],
    );
    let start = Instant::now();
    let out = command
        .stdin(Stdio::null())
        .output()
        .expect("musewire prompt");
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("You said: hello"), "{stdout}");
    assert!(
        took <= alone + SLACK,
        "musewire prompt took {took:?}; pi on its own {alone:?}"
    );
}

fn acp_session_new_with_pi_at_once(version: Pi) {
    let server = ModelServer::start().unwrap();
    // pi on its own, to its first answer.
    let alone_dir = peers::scratch("pi-start-acp-alone");
    let (alone, _) = time_until(
        peers::pi_version(version, &alone_dir, &server.base_url()),
        &[json!({"id": "s", "type": "get_state"})],
        |v| v["type"] == "response",
    );
    // With a session folder the bridge names the session after pi's file, so session/new
    // waits for pi's get_state: the start-up is on its path.
    let dir = peers::scratch("pi-start-acp");
    let sessions = dir.join("sessions");
    let pi = peers::pi_version(version, &dir, &server.base_url());
    let cwd = pi.get_current_dir().unwrap().to_owned();
    let bridge = musewire_with(
        &pi,
        &[
            "acp",
            "--ready-timeout",
            "30",
            "--session-dir",
            sessions.to_str().unwrap(),
        ],
    );
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}});
    let new = json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": cwd, "mcpServers": []}});
    let (took, answer) = time_until(bridge, &[init, new], |v| v["id"] == 2);
    assert!(answer["result"]["sessionId"].is_string(), "{answer}");
    assert!(
        took <= alone + SLACK,
        "session/new took {took:?}; pi's first answer on its own {alone:?}"
    );
}

#[test]
fn frame_03_musewire_prompt_starts_each_pinned_pi_without_waiting_for_a_ready_frame() {
    if !peers::installed_or_skip() {
        return;
    }
    for pi in Pi::ALL {
        prompt_starts_pi_at_once(pi);
    }
}

#[test]
fn frame_03_musewire_acp_answers_session_new_with_each_pinned_pi_as_fast_as_pi_starts() {
    if !peers::installed_or_skip() {
        return;
    }
    for pi in Pi::ALL {
        acp_session_new_with_pi_at_once(pi);
    }
}
