//! `musewire agent` holds bounded memory whatever it is given (AGENT-04): a file read keeps at
//! most `MAX_OUTPUT_BYTES` of the file (`/dev/zero` included), a shell command's output the
//! same (`yes` included), and a huge prompt is echoed up to `MAX_REPLY_BYTES`; each says how
//! much it cut. The bound is asserted on the results, not on timings.

mod process;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use musewire_agent::{MAX_OUTPUT_BYTES, MAX_REPLY_BYTES};
use process::AgentProcess;
use serde_json::{json, Value};

/// An agent that has negotiated v2, as hosts do (large frames go out chunked).
fn agent() -> AgentProcess {
    let mut agent = AgentProcess::spawn(&[]);
    agent.send(&json!({"id": "n", "type": "negotiate_protocol", "protocolVersion": 2}));
    agent.wait_frame(|f| f["id"] == "n");
    agent
}

/// The tool result of the run the prompt starts: `(text, details)`.
fn tool_result(agent: &mut AgentProcess, prompt: &str) -> (String, Value) {
    agent.send(&json!({"id": "p", "type": "prompt", "message": prompt}));
    let end = agent.wait_frame(|f| f["type"] == "tool_execution_end");
    let result = &end["result"];
    (
        result["content"][0]["text"].as_str().unwrap().to_owned(),
        result["details"].clone(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "musewire-agent-memory-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The note a cut output ends with, `cut` bytes left out.
fn note(cut: usize) -> String {
    format!(
        "\n\n[output truncated: {cut} more bytes not kept, past the {MAX_OUTPUT_BYTES}-byte cap]"
    )
}

#[test]
fn agent_04_reading_dev_zero_keeps_the_cap_and_says_the_rest_was_not_read() {
    let mut agent = agent();
    let (text, details) = tool_result(&mut agent, "read /dev/zero");
    let note = format!("\n\n[output truncated: not read past the {MAX_OUTPUT_BYTES}-byte cap]");
    assert!(text.ends_with(&note), "{:?}", &text[text.len() - 100..]);
    assert_eq!(text.len(), MAX_OUTPUT_BYTES + note.len());
    assert_eq!(details["truncated"], true);
    assert_eq!(
        details.get("cutBytes"),
        None,
        "unknown: /dev/zero has no end"
    );
}

#[test]
fn agent_04_reading_a_file_over_the_cap_says_how_much_was_cut() {
    let dir = scratch("read");
    let file = dir.join("big.txt");
    std::fs::write(&file, "r".repeat(MAX_OUTPUT_BYTES + 1000)).unwrap();
    let mut agent = agent();
    let (text, details) = tool_result(&mut agent, &format!("read {}", file.display()));
    assert!(text.ends_with(&note(1000)));
    assert_eq!(text.len(), MAX_OUTPUT_BYTES + note(1000).len());
    assert_eq!(details["truncated"], true);
    assert_eq!(details["cutBytes"], 1000);
    // At the cap exactly, nothing is cut.
    std::fs::write(&file, "r".repeat(MAX_OUTPUT_BYTES)).unwrap();
    let mut agent = self::agent();
    let (text, details) = tool_result(&mut agent, &format!("read {}", file.display()));
    assert_eq!(text.len(), MAX_OUTPUT_BYTES);
    assert_eq!(details.get("truncated"), None);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn agent_04_a_bash_tool_output_over_the_cap_says_how_much_was_cut() {
    let mut agent = agent();
    let (text, details) = tool_result(&mut agent, "bash yes | head -c 6000000");
    let cut = 6_000_000 - MAX_OUTPUT_BYTES;
    assert!(text.starts_with("y\ny\n"));
    assert!(text.ends_with(&note(cut)));
    assert_eq!(text.len(), MAX_OUTPUT_BYTES + note(cut).len());
    assert_eq!(details["truncated"], true);
    assert_eq!(details["cutBytes"], cut);
    assert_eq!(details["exitCode"], 0);
}

#[test]
fn agent_04_a_command_writing_without_end_is_capped_until_it_is_killed() {
    let dir = scratch("yes");
    let marker = dir.join("past-the-cap");
    let mut agent = agent();
    // 5 MB written, then the marker, then `yes` for ever: the agent keeps reading (so the
    // command is never blocked) and keeps only the cap.
    let command = format!("yes | head -c 5000000; touch {}; yes", marker.display());
    agent.send(&json!({"id": "b", "type": "bash", "command": command}));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the command did not write 5 MB");
        std::thread::sleep(Duration::from_millis(20));
    }
    agent.send(&json!({"id": "k", "type": "abort_bash"}));
    let response = agent.wait_frame(|f| f["id"] == "b");
    let output = response["data"]["output"].as_str().unwrap();
    assert_eq!(response["data"]["truncated"], true);
    assert_eq!(response["data"]["cancelled"], true);
    let (head, note) = output.split_at(MAX_OUTPUT_BYTES);
    assert!(head.starts_with("y\ny\n"));
    let end = format!(" more bytes not kept, past the {MAX_OUTPUT_BYTES}-byte cap]");
    assert!(
        note.starts_with("\n\n[output truncated: ") && note.ends_with(&end),
        "{note}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn agent_04_a_huge_prompt_is_echoed_up_to_the_reply_cap() {
    let mut agent = agent();
    let prompt = "many words ".repeat(300_000);
    agent.send(&json!({"id": "p", "type": "prompt", "message": prompt}));
    let user = agent.wait_frame(|f| f["type"] == "message_end");
    assert!(
        user["message"]["content"] == prompt.as_str(),
        "the prompt is kept whole"
    );
    let said = agent.wait_frame(|f| f["type"] == "message_end");
    let said = said["message"]["content"][0]["text"].as_str().unwrap();
    let more = prompt.len() - MAX_REPLY_BYTES;
    assert!(
        said == format!("{}… ({more} more bytes)", &prompt[..MAX_REPLY_BYTES]),
        "the reply is capped: {} bytes, ending {:?}",
        said.len(),
        &said[said.len().saturating_sub(40)..]
    );
}
