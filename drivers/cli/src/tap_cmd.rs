//! `musewire tap -o TRANSCRIPT [-- AGENT…]`: a transparent proxy between a host and an agent
//! that records the session as a conformance transcript and reports every rule violation it
//! sees, on both sides, on stderr.
//!
//! The host talks to `musewire tap` on stdin/stdout as if it were the agent; every byte is
//! forwarded unchanged both ways. A [`Client`] in observer mode reads the agent's output as the
//! host does (following the negotiation it sees) and the host's lines are recorded as raw
//! lines, so the transcript replays through the core with no mismatch.

use std::io::{self, Read, Write};
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use musewire_core::client::{Call, Client, ClientConfig, ClientEvent, Input, Recorder};
use musewire_core::frame::{Line, LineDecoder};
use musewire_host::{Driven, NoFiles, Work};
use serde_json::Value;

use crate::agent_command::agent_command;
use crate::session;

/// Arguments of `musewire tap`.
#[derive(clap::Args)]
pub struct TapArgs {
    /// Where to write the transcript.
    #[arg(short = 'o', long = "output", value_name = "TRANSCRIPT")]
    output: std::path::PathBuf,
    /// The agent command (default: the bundled `musewire agent`). Hosts that append
    /// `--mode rpc` to their agent command pass it through here.
    #[arg(last = true, value_name = "AGENT")]
    agent: Vec<String>,
}

/// Runs `musewire tap`.
pub fn run(args: TapArgs) -> ExitCode {
    match tap(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("musewire tap: {e}");
            ExitCode::FAILURE
        }
    }
}

struct Shared {
    driven: Driven<()>,
    transcript: std::fs::File,
    /// Writing the transcript failed: said once, the tap goes on forwarding and exits 1.
    failed: bool,
}

impl Shared {
    /// Records an input with what the observer made of it, reporting violations on stderr.
    fn after(&mut self, now: Instant, input: Input<'_>) {
        let (_, recorded, work) = self.driven.handle(now, input, || None);
        if !self.failed {
            if let Err(e) = self.transcript.write_all(&recorded) {
                self.failed = true;
                eprintln!("musewire tap: writing the transcript: {e}");
            }
        }
        for item in work {
            match item {
                Work::Event(ClientEvent::ProtocolWarning {
                    rule,
                    message,
                    prefix,
                    ..
                }) => {
                    let line = prefix.map(|p| format!(" ({p})")).unwrap_or_default();
                    eprintln!("musewire tap: agent: {rule} {message}{line}");
                }
                Work::Event(ClientEvent::Closed {
                    error: musewire_core::client::SessionError::Protocol { rule, message },
                }) => {
                    eprintln!("musewire tap: agent: {rule} {message} (fatal for a host)");
                }
                _ => {}
            }
        }
    }
}

/// The longest host line the tap holds, LF included: what the agent takes on stdin (FRAME-14's
/// cap). A longer line is forwarded as it comes, reported as over the limit (FRAME-02) and
/// not recorded, so the host direction is bounded like the agent direction.
const HOST_LINE_LIMIT: usize = musewire_core::agent::DEFAULT_MAX_INPUT_LINE_BYTES;

/// A command's `type`, read without building the rest of the line.
#[derive(serde::Deserialize)]
struct Kind {
    #[serde(rename = "type", default)]
    kind: Option<Value>,
}

/// Checks one line the host sent: the agent answers a line that is not JSON with a parse
/// failure (FRAME-14), and a command must be an object with a string `type`. The line is
/// checked without holding a parse tree of it.
fn check_host_line(line: &[u8]) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        eprintln!("musewire tap: host: FRAME-14 a line that is not JSON ({e})");
        return;
    }
    let command = text
        .starts_with('{')
        .then(|| serde_json::from_str::<Kind>(text));
    if !matches!(
        command,
        Some(Ok(Kind {
            kind: Some(Value::String(_))
        }))
    ) {
        eprintln!(
            "musewire tap: host: CALL-06 a frame must be a JSON object with a string \"type\""
        );
    }
}

/// Reports, checks and records one line of the host's.
fn host_line(shared: &Mutex<Shared>, line: Line<'_>) {
    let body = match line {
        Line::Text(body) => body,
        Line::TooLong => {
            eprintln!(
                "musewire tap: host: FRAME-02 a line over the limit of {HOST_LINE_LIMIT} bytes \
                 (the agent drops it; not recorded)"
            );
            return;
        }
    };
    check_host_line(body);
    if let Ok(mut s) = shared.lock() {
        let now = Instant::now();
        s.after(now, Input::Call(Call::RawLine(body.to_vec())));
    }
}

fn tap(args: TapArgs) -> Result<ExitCode, String> {
    let mut command = agent_command(&args.agent)?;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    // Whatever way the tap ends, the agent and what it started end with it (its own
    // process group, `session::prepare`).
    session::prepare(&mut command)?;
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start the agent: {e}"))?;
    session::started(child.id());
    let mut agent_in = child.stdin.take().ok_or("the agent has no stdin")?;
    let mut agent_out = child.stdout.take().ok_or("the agent has no stdout")?;
    let start = Instant::now();
    let config = ClientConfig {
        observe: true,
        ..ClientConfig::default()
    };
    let recorder = Recorder::new(start, &config, &[], "recorded by musewire tap");
    let transcript = crate::output::create_private(&args.output)
        .map_err(|e| format!("{}: {e}", args.output.display()))?;
    let shared = Arc::new(Mutex::new(Shared {
        driven: Driven::new(Client::new(config, start), Some(recorder), NoFiles),
        transcript,
        failed: false,
    }));
    {
        let mut s = shared.lock().map_err(|_| "poisoned")?;
        s.after(start, Input::Timeout);
    }

    // Host → agent: bytes forwarded as read; each line, up to HOST_LINE_LIMIT, checked and
    // recorded as a raw line.
    let to_agent = {
        let shared = shared.clone();
        std::thread::spawn(move || {
            let mut stdin = io::stdin().lock();
            let mut lines = LineDecoder::new(HOST_LINE_LIMIT);
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                if agent_in.write_all(&buf[..n]).is_err() {
                    break;
                }
                lines.push(&buf[..n], &mut |line| host_line(&shared, line));
            }
            lines.finish(&mut |line| host_line(&shared, line));
            // The host closed its side: so does the agent's stdin (dropped here).
        })
    };

    // Agent → host: bytes as they come.
    let mut stdout = io::stdout().lock();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match agent_out.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("reading the agent: {e}")),
        };
        if stdout
            .write_all(&buf[..n])
            .and_then(|_| stdout.flush())
            .is_err()
        {
            break;
        }
        if let Ok(mut s) = shared.lock() {
            let now = Instant::now();
            s.after(now, Input::stdout(&buf[..n]));
        }
    }
    let now = Instant::now();
    if let Ok(mut s) = shared.lock() {
        s.after(now, Input::StdoutEnd);
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for the agent: {e}"))?;
    if let Ok(mut s) = shared.lock() {
        let now = Instant::now();
        let exit = musewire_host::exit_status(status);
        s.after(now, Input::exit(exit));
    }
    // The host may keep its stdin open; the tap ends with the agent, and so does anything the
    // agent left running in its group.
    session::end_started();
    drop(to_agent);
    let failed = shared.lock().map_or(true, |s| s.failed);
    Ok(match status.code() {
        Some(0) if !failed => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}
