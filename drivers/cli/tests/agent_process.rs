//! `musewire agent` as a process, driven over raw pipes the way a crashing host leaves it:
//! stdin closed with host requests pending (HOST-07, HOST-08, AGENT-01), a dialog's own
//! timeout (HOST-06), signals and a closed stdin with shell commands running (AGENT-02), the
//! approval asked before `bash` under `--approval-mode always-ask` (AGENT-07).

mod process;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use process::{assert_group_gone, live_in_group, AgentProcess};
use serde_json::json;

/// How long an agent may take to end once its stdin is closed.
const END: Duration = Duration::from_secs(5);

/// Registers `lookup` and the `db` scheme, prompts, and waits for the frame the host is asked
/// to answer.
fn pending(prompt: &str, request_type: &str) -> AgentProcess {
    let mut agent = AgentProcess::spawn(&[]);
    agent.send(&json!({"id": "t", "type": "set_host_tools", "tools": [
        {"name": "lookup", "description": "look up", "parameters": {"type": "object"}}
    ]}));
    agent.send(&json!({"id": "s", "type": "set_host_uri_schemes", "schemes": [{"scheme": "db"}]}));
    agent.send(&json!({"id": "p", "type": "prompt", "message": prompt}));
    agent.wait_frame(|f| f["type"] == request_type);
    agent
}

/// Closes stdin and asserts the agent ends at once, exit 0, after saying `reply`.
fn closing_stdin_ends_it(mut agent: AgentProcess, reply: &str) {
    agent.close_stdin();
    let status = agent.wait_exit(END);
    assert!(status.success(), "exit 0 once stdin is closed: {status:?}");
    let frames = agent.frames();
    let said = frames
        .iter()
        .filter(|f| f["type"] == "message_end" && f["message"]["role"] == "assistant")
        .filter_map(|f| f["message"]["content"][0]["text"].as_str())
        .collect::<Vec<_>>();
    assert_eq!(said, [reply], "the pending request was rejected (HOST-07)");
    assert_eq!(frames.last().unwrap()["type"], "agent_end");
}

#[test]
fn host_07_agent_01_a_pending_host_tool_call_is_rejected_and_the_agent_ends() {
    let agent = pending("call lookup {}", "host_tool_call");
    closing_stdin_ends_it(
        agent,
        "lookup failed: RPC client disconnected before host tool execution completed",
    );
}

#[test]
fn host_07_agent_01_a_pending_host_uri_read_is_rejected_and_the_agent_ends() {
    let agent = pending("read db://x", "host_uri_request");
    closing_stdin_ends_it(
        agent,
        "read failed: RPC client disconnected before host URI request completed",
    );
}

#[test]
fn host_07_agent_01_a_pending_dialog_is_rejected_and_the_agent_ends() {
    let agent = pending("ask Q", "extension_ui_request");
    closing_stdin_ends_it(agent, "ask returned: disconnected");
}

#[test]
fn host_06_the_ask_dialog_times_out_while_stdin_stays_open() {
    let mut agent = pending(
        r#"call ask {"question": "Q", "timeout": 300}"#,
        "extension_ui_request",
    );
    let end = agent.wait_frame(|f| f["type"] == "agent_end");
    assert_eq!(
        end["messages"][3]["content"][0]["text"],
        "ask returned: timed out"
    );
    agent.close_stdin();
    assert!(agent.wait_exit(END).success());
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "musewire-agent-process-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A shell command that writes its process group (the shell's pid, AGENT-02) to `file`, then
/// waits on a child and a grandchild that would run for a quarter of an hour.
fn long_shell(file: &Path) -> String {
    format!(
        "echo $$ > {}.tmp && mv {0}.tmp {0}; sh -c 'sleep 900' & sleep 901; wait",
        file.display()
    )
}

/// The process group a [`long_shell`] wrote, once its children run.
fn group_of(file: &Path) -> u32 {
    let deadline = Instant::now() + process::WAIT;
    loop {
        if let Ok(text) = std::fs::read_to_string(file) {
            let pgid: u32 = text.trim().parse().unwrap();
            if live_in_group(pgid).len() >= 3 {
                return pgid;
            }
        }
        assert!(Instant::now() < deadline, "the shell did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn a_signal_ends_the_agent_and_its_shells(signal: i32, name: &str) {
    let dir = scratch(name);
    let file = dir.join("pgid");
    let mut agent = AgentProcess::spawn(&[]);
    agent.send(
        &json!({"id": "p", "type": "prompt", "message": format!("bash {}", long_shell(&file))}),
    );
    let pgid = group_of(&file);
    let status = Command::new("kill")
        .args([format!("-{name}"), agent.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = agent.wait_exit(END);
    assert_eq!(
        status.signal(),
        Some(signal),
        "it dies of the signal: {status:?}"
    );
    assert_group_gone(pgid);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn agent_02_sigterm_ends_the_agent_and_its_shells() {
    a_signal_ends_the_agent_and_its_shells(15, "TERM");
}

#[test]
fn agent_02_sigint_ends_the_agent_and_its_shells() {
    a_signal_ends_the_agent_and_its_shells(2, "INT");
}

#[test]
fn agent_02_sighup_ends_the_agent_and_its_shells() {
    a_signal_ends_the_agent_and_its_shells(1, "HUP");
}

#[test]
fn agent_01_02_closing_stdin_kills_the_running_shells() {
    let dir = scratch("eof");
    let (tool, command) = (dir.join("tool"), dir.join("command"));
    let mut agent = AgentProcess::spawn(&[]);
    agent.send(&json!({"id": "b", "type": "bash", "command": long_shell(&command)}));
    agent.send(
        &json!({"id": "p", "type": "prompt", "message": format!("bash {}", long_shell(&tool))}),
    );
    let groups = [group_of(&tool), group_of(&command)];
    agent.close_stdin();
    assert!(agent.wait_exit(END).success());
    for pgid in groups {
        assert_group_gone(pgid);
    }
    let response = agent
        .frames()
        .iter()
        .find(|f| f["id"] == "b")
        .expect("the bash command is answered");
    assert_eq!(response["data"]["cancelled"], true, "{response}");
    let _ = std::fs::remove_dir_all(dir);
}

/// AGENT-07: `musewire agent --approval-mode always-ask` asks omp's approval `select` before
/// its `bash` tool starts; `Deny` runs nothing and the result says so, `Approve` runs it.
#[test]
fn agent_07_always_ask_asks_before_bash_and_deny_runs_nothing() {
    let dir = scratch("approval");
    let marker = dir.join("ran");
    let mut agent = AgentProcess::spawn(&["--approval-mode", "always-ask"]);
    let command = format!("touch {}", marker.display());
    agent.send(&json!({"id": "p1", "type": "prompt", "message": format!("bash {command}")}));
    let asked = agent.wait_frame(|f| f["type"] == "extension_ui_request");
    assert_eq!(asked["method"], "select");
    assert_eq!(
        asked["title"],
        format!("Allow tool: bash\nCommand: {command}")
    );
    assert_eq!(asked["options"], json!(["Approve", "Deny"]));
    assert!(
        !agent
            .frames()
            .iter()
            .any(|f| f["type"] == "tool_execution_start"),
        "asked before the tool starts"
    );
    agent.send(&json!({"type": "extension_ui_response", "id": asked["id"], "value": "Deny"}));
    let end = agent.wait_frame(|f| f["type"] == "tool_execution_end");
    assert_eq!(end["isError"], true);
    assert_eq!(
        end["result"]["content"][0]["text"],
        "Tool call denied by user: bash"
    );
    agent.wait_frame(|f| f["type"] == "agent_end");
    assert!(!marker.exists(), "a denied command does not run");
    agent.send(&json!({"id": "p2", "type": "prompt", "message": format!("bash {command}")}));
    let asked = agent.wait_frame(|f| f["type"] == "extension_ui_request");
    agent.send(&json!({"type": "extension_ui_response", "id": asked["id"], "value": "Approve"}));
    let end = agent.wait_frame(|f| f["type"] == "tool_execution_end");
    assert_eq!(end["isError"], false, "{end}");
    assert!(marker.exists(), "an approved command runs");
    let _ = std::fs::remove_dir_all(&dir);
}
