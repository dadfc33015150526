//! `musewire agent` as a process, driven over raw pipes the way a crashing host leaves it:
//! stdin closed with host requests pending (HOST-07, HOST-08, AGENT-01), a dialog's own
//! timeout (HOST-06).

mod process;

use std::time::Duration;

use process::AgentProcess;
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
