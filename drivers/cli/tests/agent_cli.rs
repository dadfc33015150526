//! `musewire agent` as a process, driven by the mio driver: the ready frame with the
//! reference limits and v2 negotiation (FRAME-03..05), a streamed turn, a `bash` output over
//! 1 MiB sent chunked (FRAME-11) and read back whole by the paged history read (PAGE-07),
//! and the flags hosts pass.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_core::frame::ProtocolVersion;
use musewire_mio::AgentProcess;
use musewire_wire::{AgentFrame, ContentBlock, SessionEvent, ToolResult};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(30);

fn spawn() -> AgentProcess {
    let mut command = Command::new(env!("CARGO_BIN_EXE_musewire"));
    command
        .args([
            "agent",
            "--mode",
            "rpc",
            "--model",
            "m1",
            "--provider",
            "p1",
        ])
        .env("MUSEWIRE_AGENT_CLOCK_MS", "1234");
    let agent =
        AgentProcess::spawn(command, ClientConfig::default()).expect("musewire agent starts");
    let ready = next(&agent, |e| matches!(e, ClientEvent::Ready { .. }));
    assert_eq!(
        ready,
        ClientEvent::Ready {
            protocol: ProtocolVersion::V2
        },
        "the reference limits are advertised, so v2 is negotiated"
    );
    agent
}

fn next(agent: &AgentProcess, mut wanted: impl FnMut(&ClientEvent) -> bool) -> ClientEvent {
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = agent
            .next_event(left)
            .expect("an event before the deadline");
        if wanted(&event) {
            return event;
        }
    }
}

#[test]
fn frame_03_04_05_a_turn_streams_over_stdio() {
    let agent = spawn();
    agent
        .send(cmd(json!({"type": "prompt", "message": "one two three"})))
        .unwrap();
    let mut frames = Vec::new();
    next(&agent, |e| match e {
        ClientEvent::Frame { frame } => {
            frames.push(frame.to_value());
            false
        }
        ClientEvent::TurnFinished => true,
        _ => false,
    });
    let deltas: Vec<&str> = frames
        .iter()
        .filter(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .map(|f| f["assistantMessageEvent"]["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, ["one ", "two ", "three"]);
    let end = frames.last().unwrap();
    assert_eq!(end["type"], "agent_end");
    assert_eq!(end["messages"][0]["timestamp"], 1234, "the fixed clock");
    assert_eq!(end["messages"][1]["model"], "m1");
    let state = to_json(&agent.call(cmd(json!({"type": "get_state"})), WAIT).unwrap());
    assert_eq!(state["model"]["provider"], "p1");
    assert_eq!(state["messageCount"], 2);
    let status = agent.shutdown(Duration::from_secs(5)).unwrap();
    assert!(status.success(), "stdin closed: the agent exits 0");
}

#[test]
fn frame_11_page_07_bash_over_1_mib_is_chunked_and_read_back_whole() {
    let agent = spawn();
    let command = "head -c 1300000 /dev/zero | tr '\\0' z";
    let data = to_json(
        &agent
            .call(cmd(json!({"type": "bash", "command": command})), WAIT)
            .unwrap(),
    );
    assert_eq!(data["output"].as_str().unwrap().len(), 1_300_000);
    for i in 0..40 {
        agent
            .send(cmd(
                json!({"type": "prompt", "message": format!("turn {i}")}),
            ))
            .unwrap();
        next(&agent, |e| *e == ClientEvent::TurnFinished);
    }
    let paged: Vec<Value> = agent.messages(WAIT).unwrap().iter().map(to_json).collect();
    let legacy = to_json(
        &agent
            .call(cmd(json!({"type": "get_messages"})), WAIT)
            .unwrap(),
    );
    assert_eq!(paged.len(), 81);
    assert!(
        Value::Array(paged.clone()) == legacy["messages"],
        "the pages join to get_messages"
    );
    assert_eq!(paged[0]["role"], "bashExecution");
    assert_eq!(paged[0]["output"].as_str().unwrap().len(), 1_300_000);
    agent.shutdown(Duration::from_secs(5)).unwrap();
}

/// AGENT-06: the model's `bash` call shows its output while it runs: a command that prints,
/// sleeps and prints has its first line in a `tool_execution_update` (omp's shape: the
/// output so far as the text, `details` beside it) well before the call ends.
#[test]
fn agent_06_bash_streams_its_output_while_it_runs() {
    let agent = spawn();
    agent
        .send(cmd(
            json!({"type": "prompt", "message": "bash echo one; sleep 1; echo two"}),
        ))
        .unwrap();
    let mut updates: Vec<(Instant, ToolResult)> = Vec::new();
    let mut ended = None;
    next(&agent, |e| match e {
        ClientEvent::Frame {
            frame: AgentFrame::Event(SessionEvent::ToolExecutionUpdate(update)),
        } => {
            assert_eq!(update.tool_name, "bash");
            let partial = update.partial_result.clone().expect("a partial result");
            let result: ToolResult = serde_json::from_value(partial).expect("a tool result");
            updates.push((Instant::now(), result));
            false
        }
        ClientEvent::Frame {
            frame: AgentFrame::Event(SessionEvent::ToolExecutionEnd(end)),
        } => {
            ended = Some((Instant::now(), end.result.clone()));
            false
        }
        ClientEvent::TurnFinished => true,
        _ => false,
    });
    let (ended_at, result) = ended.expect("the call ended");
    let (first_at, first) = updates.first().expect("an update while it ran");
    assert_eq!(text_of(first), "one\n", "the first line, alone");
    assert_eq!(
        first.details,
        Some(json!({})),
        "the whole output so far: nothing cut"
    );
    assert!(
        ended_at.duration_since(*first_at) >= Duration::from_millis(500),
        "shown before the command ends"
    );
    assert!(
        updates.len() <= 3,
        "coalesced, not one per byte: {updates:?}"
    );
    assert_eq!(to_json(&result)["content"][0]["text"], "one\ntwo\n");
    agent.shutdown(Duration::from_secs(5)).unwrap();
}

#[test]
fn the_flags_hosts_pass_are_accepted_and_others_refused() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_musewire"))
            .arg("agent")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let ok = run(&[
        "--mode",
        "rpc",
        "--session-dir",
        "/tmp/x",
        "--model",
        "a",
        "--provider",
        "b",
    ]);
    assert!(ok.status.success());
    let stdout = String::from_utf8(ok.stdout).unwrap();
    assert!(stdout.starts_with(r#"{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1,2],"maxFrameBytes":1048576,"maxReassembledFrameBytes":67108864}"#));
    let bad = run(&["--mode", "rpc", "--verbose"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unexpected argument '--verbose'"));
    let bad = run(&["--mode", "json"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("possible values: rpc"));
}

/// A command written as JSON, typed as the drivers take it.
/// The text of a result of one text block.
fn text_of(result: &ToolResult) -> &str {
    match result.content.as_slice() {
        [ContentBlock::Text(text)] => &text.text,
        other => panic!("one text block, not {other:?}"),
    }
}

fn cmd(command: Value) -> musewire_wire::Command {
    musewire_wire::Command::from_value_with_id(command)
        .expect("a command")
        .1
}

/// A typed answer as JSON, for the assertions.
fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("serialises")
}
