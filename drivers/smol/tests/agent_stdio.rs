//! The smol driver's agent-side stdio loop: a program built on `core::agent::Agent` answers a
//! host over a socket pair standing for its stdio, and the `smol_agent` example over its real
//! stdio.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use musewire_core::agent::{
    on_event, Agent, AgentCall, AgentCallResult, AgentConfig, AgentEvent, Input,
};
use musewire_core::client::ClientEvent;
use musewire_smol::agent_stdio::{AgentStdio, Ended};
use musewire_smol::AgentProcess;
use musewire_wire::{AgentFrame, Command};
use serde_json::{json, Value};
use smol::future;
use smol::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use smol::net::unix::UnixStream;

/// How long a test waits for a line, the loop's end or a process: generous, as the tests run
/// on busy machines (a passing test never waits this long).
const WAIT: Duration = Duration::from_secs(60);

/// Runs an agent that answers every command (a prompt with a one-line turn) on the loop, in a
/// thread of its own; returns the host's end, the commands the agent saw, and the loop.
fn agent_on_the_loop() -> (
    UnixStream,
    Arc<AtomicUsize>,
    std::thread::JoinHandle<std::io::Result<Ended>>,
) {
    let (host, agent_end) = UnixStream::pair().expect("socket pair");
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    let thread = std::thread::spawn(move || {
        let mut program = on_event(
            Agent::new(AgentConfig::default()),
            move |agent, now, event| {
                if let AgentEvent::Command {
                    request, command, ..
                } = event
                {
                    counted.fetch_add(1, SeqCst);
                    let answer = AgentCall::Respond(request, Ok(None));
                    let answered = agent.handle(now, Input::Call(answer));
                    assert_eq!(
                        answered,
                        Some(AgentCallResult::Done(Ok(()))),
                        "open request"
                    );
                    if let Command::Prompt(prompt) = command {
                        // A frame outside the wire model, written as it is.
                        let frame = json!({"type": "agent_end", "said": prompt.message});
                        let frame = AgentFrame::Unknown(frame);
                        let emitted = agent.handle(now, Input::Call(AgentCall::Emit(frame)));
                        assert_eq!(emitted, Some(AgentCallResult::Done(Ok(()))), "a frame");
                    }
                }
            },
        );
        let stdio = AgentStdio::new(agent_end.clone(), agent_end);
        smol::block_on(stdio.run(&mut program))
    });
    (host, seen, thread)
}

async fn read_line(reader: &mut BufReader<UnixStream>) -> Value {
    let mut line = String::new();
    let read = future::or(async { reader.read_line(&mut line).await.ok() }, async {
        smol::Timer::after(WAIT).await;
        None
    });
    assert!(read.await.is_some_and(|n| n > 0), "a line in time");
    serde_json::from_str(&line).expect("a JSON line")
}

fn join(thread: std::thread::JoinHandle<std::io::Result<Ended>>) -> Ended {
    let deadline = Instant::now() + WAIT;
    while !thread.is_finished() {
        assert!(Instant::now() < deadline, "the loop ends in time");
        std::thread::sleep(Duration::from_millis(5));
    }
    thread.join().expect("no panic").expect("no I/O error")
}

#[test]
fn frame_03_an_agent_on_the_smol_loop_writes_ready_then_answers_commands() {
    let (host, seen, thread) = agent_on_the_loop();
    smol::block_on(async {
        let mut writer = host.clone();
        let mut reader = BufReader::new(host);
        let ready = read_line(&mut reader).await;
        assert_eq!(ready["type"], "ready", "FRAME-03: the ready frame first");
        writer
            .write_all(b"{\"id\":\"1\",\"type\":\"prompt\",\"message\":\"hi\"}\n{\"id\":\"2\",\"type\":\"get_state\"}\n")
            .await
            .unwrap();
        let lines = [
            read_line(&mut reader).await,
            read_line(&mut reader).await,
            read_line(&mut reader).await,
        ];
        assert_eq!(
            lines,
            [
                json!({"id": "1", "type": "response", "command": "prompt", "success": true}),
                json!({"type": "agent_end", "said": "hi"}),
                json!({"id": "2", "type": "response", "command": "get_state", "success": true}),
            ]
        );
        writer.shutdown(std::net::Shutdown::Write).unwrap();
    });
    assert_eq!(join(thread), Ended::Done);
    assert_eq!(seen.load(SeqCst), 2);
}

#[test]
fn agent_01_stdin_eof_ends_the_smol_loop_once_everything_is_written() {
    let (host, _, thread) = agent_on_the_loop();
    let out = smol::block_on(async {
        let mut writer = host.clone();
        writer
            .write_all(b"{\"id\":\"a\",\"type\":\"get_state\"}\n")
            .await
            .unwrap();
        writer.shutdown(std::net::Shutdown::Write).unwrap();
        let mut out = String::new();
        let mut reader = host;
        reader.read_to_string(&mut out).await.unwrap();
        out
    });
    assert_eq!(join(thread), Ended::Done);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[1]["id"], "a");
}

#[test]
fn the_smol_loop_stops_reading_stdin_while_the_host_does_not_read_stdout() {
    let (host, seen, thread) = agent_on_the_loop();
    let command = b"{\"id\":\"x\",\"type\":\"get_state\"}\n";
    let chunk: Vec<u8> = command.repeat(64 * 1024 / command.len());
    const ATTEMPT: usize = 64 << 20;
    let written = smol::block_on(async {
        let mut writer = host.clone();
        let mut written = 0;
        while written < ATTEMPT {
            let n = future::or(
                async { writer.write(&chunk[written % chunk.len()..]).await.ok() },
                async {
                    smol::Timer::after(Duration::from_millis(500)).await;
                    None
                },
            )
            .await;
            match n {
                Some(n) => written += n,
                None => break,
            }
        }
        written
    });
    // The host stalled long before its 64 MiB went out: the loop stopped reading.
    assert!(written < 8 << 20, "the host wrote {written} bytes");
    // What it had taken it answers (as slowly as a busy machine lets it), then it settles:
    // nothing more read while stdout is full.
    let started = Instant::now();
    let (mut stalled, mut since) = (seen.load(SeqCst), Instant::now());
    while since.elapsed() < Duration::from_millis(500) {
        assert!(started.elapsed() < WAIT, "the loop never stopped reading");
        std::thread::sleep(Duration::from_millis(10));
        let now = seen.load(SeqCst);
        if now != stalled {
            (stalled, since) = (now, Instant::now());
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        seen.load(SeqCst),
        stalled,
        "nothing more read while stdout is full"
    );
    assert!(stalled * command.len() <= written);
    // Once the host reads again, every command is answered and the loop ends.
    let out = smol::block_on(async {
        let writer = host.clone();
        writer.shutdown(std::net::Shutdown::Write).unwrap();
        let mut reader = host;
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        out
    });
    assert_eq!(join(thread), Ended::Done);
    let responses = out
        .split(|b| *b == b'\n')
        .filter(|l| l.starts_with(b"{\"id\""))
        .count();
    assert_eq!(responses, written / command.len());
    assert_eq!(seen.load(SeqCst), written / command.len());
}

/// The `smol_agent` example (built with the tests) on this process's real stdio, driven by the
/// smol host driver: a prompt's turn comes back as assistant text.
#[test]
fn the_smol_agent_example_answers_a_prompt_over_its_stdio() {
    let exe = std::env::current_exe().unwrap();
    let example = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("examples").join("smol_agent"))
        .expect("the target directory");
    assert!(
        example.exists(),
        "{} is built with the tests",
        example.display()
    );
    smol::block_on(async {
        let agent =
            AgentProcess::spawn(smol::process::Command::new(&example), Default::default()).unwrap();
        agent.prompt("hello there").await.expect("acknowledged");
        let mut said = String::new();
        let turn = async {
            while let Some(event) = agent.next_event().await {
                if event == ClientEvent::TurnFinished {
                    return true;
                }
                said.push_str(event.text_delta().unwrap_or_default());
            }
            false
        };
        let timeout = async {
            smol::Timer::after(WAIT).await;
            false
        };
        assert!(future::or(turn, timeout).await, "the turn finished");
        assert_eq!(said, "hello there");
        let status = agent.shutdown(WAIT).await.unwrap();
        assert!(status.success(), "stdin's end ends it: {status:?}");
    });
}
