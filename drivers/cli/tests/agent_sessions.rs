//! `musewire agent --session-dir DIR` restarted as a process (AGENT-05, ours): the session file
//! `get_state` names, a second one from `new_session`, ids unique across restarts,
//! `switch_session` back restoring `get_messages` exactly, the modes `stat` sees, and a folder
//! that is a symlink refused before anything starts. The App-level cases (refusals, torn lines,
//! planted symlinks) are in `agent/tests/agent_sessions.rs`.

mod process;

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use process::AgentProcess;
use serde_json::{json, Value};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "musewire-agent-sessions-cli-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Sends a command and returns its response frame.
fn call(agent: &mut AgentProcess, id: &str, command: Value) -> Value {
    let mut command = command;
    command["id"] = json!(id);
    agent.send(&command);
    agent.wait_frame(|f| f["id"] == id && f["type"] == "response")
}

fn data(agent: &mut AgentProcess, id: &str, command: Value) -> Value {
    let response = call(agent, id, command);
    assert_eq!(response["success"], true, "{response}");
    response["data"].clone()
}

fn stop(mut agent: AgentProcess) {
    agent.close_stdin();
    assert!(agent.wait_exit(Duration::from_secs(10)).success());
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn agent_05_a_session_survives_a_restart_of_the_agent_process() {
    let dir = scratch("restart").join("sessions");
    let args = ["--session-dir", dir.to_str().unwrap()];

    let mut agent = AgentProcess::spawn(&args);
    let state = data(&mut agent, "s1", json!({"type": "get_state"}));
    let first = dir.join("session-1.jsonl");
    assert_eq!(state["sessionId"], "session-1");
    assert_eq!(state["sessionFile"], first.to_str().unwrap());
    agent.send(&json!({"id": "p1", "type": "prompt", "message": "hello there"}));
    agent.wait_frame(|f| f["type"] == "agent_end");
    agent.send(&json!({"id": "p2", "type": "prompt", "message": "bash echo kept"}));
    agent.wait_frame(|f| f["type"] == "agent_end");
    let history = data(&mut agent, "m1", json!({"type": "get_messages"}))["messages"].clone();
    assert_eq!(history.as_array().unwrap().len(), 6);
    let answer = data(&mut agent, "n", json!({"type": "new_session"}));
    assert_eq!(answer, json!({"cancelled": false}));
    let state = data(&mut agent, "s2", json!({"type": "get_state"}));
    let second = dir.join("session-2.jsonl");
    assert_eq!(state["sessionFile"], second.to_str().unwrap());
    assert!(second.is_file());
    stop(agent);

    // As stat sees them: the folder 0700, the files 0600.
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&first), 0o600);
    assert_eq!(mode(&second), 0o600);

    // Restarted: a new id, never one whose file exists; then back to the first session.
    let mut agent = AgentProcess::spawn(&args);
    let state = data(&mut agent, "s3", json!({"type": "get_state"}));
    assert_eq!(state["sessionId"], "session-3");
    let answer = data(
        &mut agent,
        "w",
        json!({"type": "switch_session", "sessionPath": first.to_str().unwrap()}),
    );
    assert_eq!(answer, json!({"cancelled": false}));
    let restored = data(&mut agent, "m2", json!({"type": "get_messages"}))["messages"].clone();
    assert_eq!(restored, history);
    let state = data(&mut agent, "s4", json!({"type": "get_state"}));
    assert_eq!(state["sessionId"], "session-1");
    assert_eq!(state["sessionFile"], first.to_str().unwrap());
    // Outside the folder: refused with an error response; the session stays.
    let refused = call(
        &mut agent,
        "x",
        json!({"type": "switch_session", "sessionPath": "/etc/passwd"}),
    );
    assert_eq!(refused["success"], false);
    assert!(refused["error"]
        .as_str()
        .unwrap()
        .contains("is not in the session folder"));
    let state = data(&mut agent, "s5", json!({"type": "get_state"}));
    assert_eq!(state["sessionId"], "session-1");
    stop(agent);
}

#[test]
fn agent_05_a_relative_session_folder_is_named_by_its_canonical_path() {
    let root = scratch("relative");
    std::fs::create_dir_all(root.join("work")).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_musewire"));
    command.current_dir(root.join("work")).args([
        "agent",
        "--mode",
        "rpc",
        "--session-dir",
        "../sessions",
    ]);
    let mut agent = AgentProcess::start(command);
    let file = root.join("sessions").join("session-1.jsonl");
    let state = data(&mut agent, "s", json!({"type": "get_state"}));
    assert_eq!(state["sessionFile"], file.to_str().unwrap());
    // The file as get_state spells it is taken back.
    let answer = data(
        &mut agent,
        "w",
        json!({"type": "switch_session", "sessionPath": state["sessionFile"]}),
    );
    assert_eq!(answer, json!({"cancelled": false}));
    stop(agent);
}

#[test]
fn agent_05_a_session_folder_that_is_a_symlink_is_refused_at_start() {
    let root = scratch("symlink");
    let real = root.join("real");
    std::fs::create_dir_all(&real).unwrap();
    let link = root.join("link");
    symlink(&real, &link).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_musewire"))
        .args([
            "agent",
            "--mode",
            "rpc",
            "--session-dir",
            link.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is a symlink or not a directory"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing starts");
    assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0);
}
