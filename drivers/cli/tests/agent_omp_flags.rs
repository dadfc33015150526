//! `musewire agent` as a drop-in for omp (AGENT-03): omp 18.2.3's flags in omp's forms, what
//! applies honoured (`--no-session`, `--max-time`, `--thinking`, `--cwd`), `--version`, and
//! the flags that need a saved session or another mode refused.

mod process;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use process::AgentProcess;
use serde_json::{json, Value};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_musewire"))
        .arg("agent")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `get_state`'s data from an agent started with `args`.
fn state(args: &[&str]) -> Value {
    let mut agent = AgentProcess::spawn(args);
    agent.send(&json!({"id": "s", "type": "get_state"}));
    let response = agent.wait_frame(|f| f["id"] == "s");
    agent.close_stdin();
    assert!(agent.wait_exit(Duration::from_secs(5)).success());
    response["data"].clone()
}

#[test]
fn agent_03_version_prints_a_version_line_and_exits_0() {
    for flag in ["--version", "-v"] {
        let out = run(&[flag]);
        assert!(out.status.success());
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            format!("musewire agent {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
}

#[test]
fn agent_03_the_flags_contraagent_passes_are_accepted() {
    // contraagent 0.9.2's omp RPC backend, as it launches omp.
    let state = state(&[
        "--no-session",
        "--thinking",
        "medium",
        "--approval-mode",
        "yolo",
        "--config",
        "/nonexistent/config.yml",
        "--max-time",
        "600",
        "--model",
        "m1",
    ]);
    assert_eq!(state["thinkingLevel"], "medium", "--thinking is reported");
    assert_eq!(state["model"]["id"], "m1");
}

#[test]
fn agent_03_omp_flags_in_omp_forms_are_accepted() {
    // The session folder is made and written now (AGENT-05): a private scratch one.
    let sessions = std::env::temp_dir().join(format!(
        "musewire-agent-omp-flags-{}/sessions",
        std::process::id()
    ));
    let state = state(&[
        "--tools=read,bash",
        "--system-prompt=--not-a-flag",
        "--append-system-prompt",
        "--also-not-a-flag",
        "-e",
        "/x/ext.ts",
        "--extension",
        "/y/ext.ts",
        "--plugin-dir",
        "/p",
        "--hook",
        "/h.ts",
        "--no-tools",
        "--no-lsp",
        "--no-pty",
        "--no-title",
        "--no-rules",
        "--no-skills",
        "--no-extensions",
        "--yolo",
        "--auto-approve",
        "--continue",
        "--add-dir",
        "/a",
        "--add-dir=/b",
        "--config",
        "a.yml",
        "--config=b.yml",
        "--service-tier",
        "flex",
        "--provider",
        "p1",
        "--thinking=bogus",
        "--session-dir",
        sessions.to_str().unwrap(),
    ]);
    assert_eq!(state["model"]["provider"], "p1");
    assert_eq!(
        state["thinkingLevel"], "off",
        "an unknown level is ignored, as omp does"
    );
    assert_eq!(state["sessionDir"], sessions.to_str().unwrap());
    assert_eq!(
        state["sessionFile"],
        sessions.join("session-1.jsonl").to_str().unwrap()
    );
    let _ = std::fs::remove_dir_all(sessions.parent().unwrap());
}

#[test]
fn agent_03_no_session_keeps_the_session_out_of_any_directory() {
    let sessions =
        std::env::temp_dir().join(format!("musewire-agent-no-session-{}", std::process::id()));
    let state = state(&["--session-dir", sessions.to_str().unwrap(), "--no-session"]);
    assert_eq!(state.get("sessionDir"), None);
    assert_eq!(state.get("sessionFile"), None);
    assert!(!sessions.exists(), "--no-session writes nothing");
    assert_eq!(state["sessionId"], "session-1");
}

#[test]
fn agent_03_cwd_is_where_the_tools_run() {
    let dir = std::env::temp_dir().join(format!("musewire-agent-cwd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut agent = AgentProcess::spawn(&["--cwd", dir.to_str().unwrap()]);
    agent.send(&json!({"id": "b", "type": "bash", "command": "pwd"}));
    let response = agent.wait_frame(|f| f["id"] == "b");
    assert_eq!(
        response["data"]["output"].as_str().unwrap().trim(),
        dir.canonicalize().unwrap().to_str().unwrap()
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn agent_03_max_time_aborts_the_run_and_ends_later_prompts_at_once() {
    let mut agent = AgentProcess::spawn(&["--max-time", "0.5s"]);
    agent.send(&json!({"id": "t", "type": "set_host_tools", "tools": [
        {"name": "lookup", "description": "look up", "parameters": {"type": "object"}}
    ]}));
    agent.send(&json!({"id": "p", "type": "prompt", "message": "call lookup {}"}));
    let call = agent.wait_frame(|f| f["type"] == "host_tool_call");
    // Nobody answers: the deadline withdraws the call and ends the run.
    let cancel = agent.wait_frame(|f| f["type"] == "host_tool_cancel");
    assert_eq!(cancel["targetId"], call["id"]);
    let end = agent.wait_frame(|f| f["type"] == "agent_end");
    let result = &end["messages"][2];
    assert_eq!(result["role"], "toolResult");
    assert_eq!(result["isError"], true);
    // After the deadline a prompt is recorded and its run ends, the model not called.
    agent.send(&json!({"id": "q", "type": "prompt", "message": "hello"}));
    agent.wait_frame(|f| f["id"] == "q");
    let mut frames = Vec::new();
    let end = agent.wait_frame(|f| {
        frames.push(f["type"].as_str().unwrap_or_default().to_owned());
        f["type"] == "agent_end"
    });
    assert_eq!(
        frames,
        ["agent_start", "message_start", "message_end", "agent_end"]
    );
    assert_eq!(
        end["messages"],
        json!([{"role": "user", "content": "hello", "timestamp": 1234}])
    );
    agent.close_stdin();
    assert!(agent.wait_exit(Duration::from_secs(5)).success());
}

#[test]
fn agent_03_flags_needing_a_saved_session_or_another_mode_are_refused() {
    for args in [
        &["--resume", "abc"][..],
        &["--resume"],
        &["-r"],
        &["--session", "abc"],
        &["--fork", "abc"],
        &["--from-claude"],
        &["--from-codex"],
        &["-p"],
        &["--export", "x.html"],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("is not supported"),
            "{args:?}"
        );
    }
    for bad in ["0", "-5", "soon", "5d"] {
        let out = run(&["--max-time", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("Invalid --max-time value"));
    }
}
