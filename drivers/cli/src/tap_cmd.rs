//! `musewire tap -o TRANSCRIPT [-- AGENT…]`: a transparent proxy between a host and an agent
//! that records the session as a conformance transcript and reports every rule violation it
//! sees, on both sides, on stderr.
//!
//! The host talks to `musewire tap` on stdin/stdout as if it were the agent; every byte is
//! forwarded unchanged both ways. A [`Client`] in observer mode reads the agent's output as the
//! host does (following the negotiation it sees) and the host's lines are recorded as raw
//! lines, so the transcript replays through the core with no mismatch.

use std::io::{self, BufRead, Read, Write};
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use musewire_core::client::{
    Call, Client, ClientConfig, ClientEvent, Driven, Input, Recorder, Work,
};

use serde_json::Value;

use crate::agent_command::agent_command;

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
}

impl Shared {
    /// Records an input with what the observer made of it, reporting violations on stderr.
    fn after(&mut self, now: Instant, input: Input<'_>) {
        let (_, recorded, work) = self.driven.handle(now, input, || None);
        if let Err(e) = self.transcript.write_all(&recorded) {
            eprintln!("musewire tap: writing the transcript: {e}");
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

/// Checks one line the host sent: the agent answers a line that is not JSON with a parse
/// failure (FRAME-14), and a command must be an object with a string `type`.
fn check_host_line(line: &[u8]) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    match serde_json::from_str::<Value>(text) {
        Err(e) => eprintln!("musewire tap: host: FRAME-14 a line that is not JSON ({e})"),
        Ok(Value::Object(frame)) if frame.get("type").is_some_and(Value::is_string) => {}
        Ok(_) => eprintln!(
            "musewire tap: host: CALL-06 a frame must be a JSON object with a string \"type\""
        ),
    }
}

fn tap(args: TapArgs) -> Result<ExitCode, String> {
    let mut command = agent_command(&args.agent)?;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start the agent: {e}"))?;
    let mut agent_in = child.stdin.take().ok_or("the agent has no stdin")?;
    let mut agent_out = child.stdout.take().ok_or("the agent has no stdout")?;
    let start = Instant::now();
    let config = ClientConfig {
        observe: true,
        ..ClientConfig::default()
    };
    let recorder = Recorder::new(start, &config, &[], "recorded by musewire tap");
    let transcript = std::fs::File::create(&args.output)
        .map_err(|e| format!("{}: {e}", args.output.display()))?;
    let shared = Arc::new(Mutex::new(Shared {
        driven: Driven::new(Client::new(config, start), Some(recorder)),
        transcript,
    }));
    {
        let mut s = shared.lock().map_err(|_| "poisoned")?;
        s.after(start, Input::Timeout);
    }

    // Host → agent: line by line, forwarded as read, recorded as raw lines.
    let to_agent = {
        let shared = shared.clone();
        std::thread::spawn(move || {
            let mut stdin = io::stdin().lock();
            let mut line = Vec::new();
            loop {
                line.clear();
                match stdin.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if agent_in
                    .write_all(&line)
                    .and_then(|_| agent_in.flush())
                    .is_err()
                {
                    break;
                }
                let body = line.strip_suffix(b"\n").unwrap_or(&line);
                let body = body.strip_suffix(b"\r").unwrap_or(body);
                check_host_line(body);
                if let Ok(mut s) = shared.lock() {
                    let now = Instant::now();
                    s.after(now, Input::Call(Call::RawLine(body.to_vec())));
                }
            }
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
        let exit = status.into();
        s.after(now, Input::exit(exit));
    }
    // The host may keep its stdin open; the tap ends with the agent.
    drop(to_agent);
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}
