//! A recorder for sessions with the real agent: runs `omp --mode rpc` (installed by
//! `conformance/peers/install.sh`), drives it with a [`Client`], and writes what happened as a
//! transcript: the agent's stdout and stderr byte for byte as input steps, the application's
//! calls as call steps, then `eof` and `exit`; the `expect` fields are then filled by
//! replaying ([`crate::replay::bless`]), which gives the same actions as the live run
//! because the client is deterministic.
//!
//! Stdout read between two calls is stored as one step (the client's actions do not depend
//! on how bytes are split into reads), cut after each read the client answered by writing to
//! the agent (the ready frame, a history page); steps over 16 KiB go to a sidecar file
//! `<transcript stem>/step-NNN.bin` next to the transcript.
//!
//! Scenarios (`musewire-conformance capture-omp SCENARIO [OUT]`):
//! - `handshake`: the ready frame, `negotiate_protocol` and its response, the notices omp sends
//!   at start, an unknown command (`frobnicate`) and its id-less failure, a clean exit.
//! - `history`: after v2, 21 `bash` commands whose outputs (truncated by omp to about 50 KB
//!   each) make a history over 1 MiB, then `get_messages` (its response arrives chunked), then
//!   a whole-history read (`get_messages_page` with limit 256, two pages), a clean exit.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use musewire_core::client::{Action, Client, ClientEvent, ExitStatus, Input, RequestId};
use serde_json::{json, Map, Value};

use crate::transcript::{ConfigSpec, Header, Role};

/// Stdout steps larger than this go to a sidecar file.
const INLINE_MAX: usize = 16 * 1024;

/// The bun binary and omp's entry point, under `conformance/peers/node_modules`.
pub fn omp_command() -> Result<(PathBuf, PathBuf), String> {
    let modules = crate::workspace_root().join("conformance/peers/node_modules");
    let bun = modules.join(".bin/bun");
    let cli = modules.join("@oh-my-pi/pi-coding-agent/dist/cli.js");
    if !bun.exists() || !cli.exists() {
        return Err(format!(
            "omp is not installed under {}: run `bash conformance/peers/install.sh`",
            modules.display()
        ));
    }
    Ok((bun, cli))
}

enum Chunk {
    Stdout(Vec<u8>),
    StdoutEof,
    Stderr(Vec<u8>),
}

enum Recorded {
    Stdout(u64, Vec<u8>),
    Stderr(u64, Vec<u8>),
    Other(Map<String, Value>),
}

/// A live session with omp, being recorded.
pub struct Recorder {
    client: Client,
    base: Instant,
    child: Child,
    stdin: Option<ChildStdin>,
    reads: Receiver<(Instant, Chunk)>,
    steps: Vec<Recorded>,
    pending_stdout: Option<(u64, Vec<u8>)>,
    events: Vec<ClientEvent>,
    stdout_ended: bool,
    home: PathBuf,
}

fn pump(mut from: impl Read + Send + 'static, tx: Sender<(Instant, Chunk)>, stdout: bool) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => {
                    if stdout {
                        let _ = tx.send((Instant::now(), Chunk::StdoutEof));
                    }
                    return;
                }
                Ok(n) => {
                    let bytes = buf[..n].to_vec();
                    let read = if stdout {
                        Chunk::Stdout(bytes)
                    } else {
                        Chunk::Stderr(bytes)
                    };
                    if tx.send((Instant::now(), read)).is_err() {
                        return;
                    }
                }
            }
        }
    });
}

impl Recorder {
    /// Starts omp in a fresh home and work directory, with a default-configured client.
    pub fn start() -> Result<Self, String> {
        let (bun, cli) = omp_command()?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let home =
            std::env::temp_dir().join(format!("musewire-capture-{}-{nanos}", std::process::id()));
        let agent_dir = home.join("home/.omp/agent");
        let work = home.join("work");
        for dir in [&agent_dir, &work] {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let mut child = Command::new(bun)
            .arg(cli)
            .args(["--mode", "rpc", "--no-title"])
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", home.join("home"))
            .env("PI_CODING_AGENT_DIR", &agent_dir)
            .env("OPENAI_API_KEY", "sk-dummy")
            .env("NO_COLOR", "1")
            .current_dir(&work)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting omp: {e}"))?;
        let base = Instant::now();
        let (tx, reads) = channel();
        pump(child.stdout.take().expect("piped"), tx.clone(), true);
        pump(child.stderr.take().expect("piped"), tx, false);
        Ok(Recorder {
            client: Client::new(Default::default(), base),
            base,
            stdin: child.stdin.take(),
            child,
            reads,
            steps: Vec::new(),
            pending_stdout: None,
            events: Vec::new(),
            stdout_ended: false,
            home,
        })
    }

    fn ms(&self, t: Instant) -> u64 {
        t.duration_since(self.base).as_millis() as u64
    }

    fn flush_stdout(&mut self) {
        if let Some((at, bytes)) = self.pending_stdout.take() {
            self.steps.push(Recorded::Stdout(at, bytes));
        }
    }

    /// Performs the client's actions; true when it wrote to the agent.
    fn drive(&mut self) -> Result<bool, String> {
        let mut wrote = false;
        while let Some(action) = self.client.poll_action() {
            match action {
                Action::Write { bytes } => {
                    wrote = true;
                    if let Some(stdin) = self.stdin.as_mut() {
                        stdin
                            .write_all(&bytes)
                            .and_then(|()| stdin.flush())
                            .map_err(|e| format!("writing to omp: {e}"))?;
                    }
                }
                Action::StopAgent => {
                    let _ = self.child.kill();
                }
                Action::SpillWrite { .. } => {
                    return Err("a capture configures no spill policy, yet a spill came".into())
                }
                Action::Event(event) => self.events.push(event),
            }
        }
        Ok(wrote)
    }

    /// Makes a call (a transcript call step: `{"call": NAME, …}`), records it, and returns the
    /// request id it gave, if any.
    pub fn call(&mut self, step: Value) -> Result<Option<RequestId>, String> {
        self.flush_stdout();
        let now = Instant::now();
        let mut raw = step
            .as_object()
            .cloned()
            .ok_or("a call step is an object")?;
        let (_, steps) = crate::transcript::parse(
            &format!("{{\"role\":\"client\"}}\n{}", Value::Object(raw.clone())),
            Path::new("."),
        )?;
        // The call alone: the recorder drains (and writes) below.
        let returns = match &steps[0].input {
            crate::transcript::Input::Call(call) => {
                self.client.handle(now, Input::Call(call.clone())).to_json()
            }
            _ => return Err("not a call".into()),
        };
        let mut ordered = Map::new();
        ordered.insert("at".into(), self.ms(now).into());
        ordered.append(&mut raw);
        self.steps.push(Recorded::Other(ordered));
        self.drive()?;
        Ok(returns
            .as_ref()
            .and_then(|r| r.get("ok"))
            .and_then(Value::as_u64)
            .map(RequestId))
    }

    /// Reads the agent until an event matches `done` (checking events from now on), or until
    /// `quiet` passes without input when `done` is `None`.
    pub fn wait(
        &mut self,
        done: Option<&dyn Fn(&ClientEvent) -> bool>,
        deadline: Duration,
    ) -> Result<(), String> {
        let quiet = Duration::from_millis(700);
        let give_up = Instant::now() + deadline;
        let mut seen = self.events.len();
        loop {
            if let Some(done) = done {
                if self.events[seen..].iter().any(done) {
                    return Ok(());
                }
                seen = self.events.len();
            }
            if self.stdout_ended {
                return match done {
                    None => Ok(()),
                    Some(_) => Err("omp's stdout ended while waiting".into()),
                };
            }
            let now = Instant::now();
            if now >= give_up {
                return match done {
                    None => Ok(()),
                    Some(_) => Err("timed out waiting for omp".into()),
                };
            }
            let wait = if done.is_some() {
                give_up - now
            } else {
                quiet.min(give_up - now)
            };
            match self.reads.recv_timeout(wait) {
                Ok((t, read)) => self.take(t, read)?,
                Err(RecvTimeoutError::Timeout) if done.is_none() => return Ok(()),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => self.stdout_ended = true,
            }
        }
    }

    fn take(&mut self, t: Instant, read: Chunk) -> Result<(), String> {
        let at = self.ms(t);
        match read {
            Chunk::Stdout(bytes) => {
                self.client.handle(t, Input::stdout(&bytes));
                let pending = self.pending_stdout.get_or_insert((at, Vec::new()));
                pending.0 = at;
                pending.1.extend_from_slice(&bytes);
                // What the client wrote in answer starts a new step, so the transcript reads
                // as the exchange it was.
                if self.drive()? {
                    self.flush_stdout();
                }
                return Ok(());
            }
            Chunk::Stderr(bytes) => {
                self.flush_stdout();
                self.client.handle(t, Input::stderr(&bytes));
                self.steps.push(Recorded::Stderr(at, bytes));
            }
            Chunk::StdoutEof => {
                self.flush_stdout();
                self.stdout_ended = true;
                self.client.handle(t, Input::StdoutEnd);
                let mut step = Map::new();
                step.insert("at".into(), at.into());
                step.insert("eof".into(), true.into());
                self.steps.push(Recorded::Other(step));
            }
        }
        self.drive().map(drop)
    }

    /// Closes omp's stdin, reads to the end, waits for the exit and records it.
    pub fn finish(mut self, header: Header, out: &Path) -> Result<(), String> {
        self.stdin = None;
        if let Err(e) = self.wait(None, Duration::from_secs(20)) {
            let _ = self.child.kill();
            return Err(e);
        }
        while !self.stdout_ended {
            match self.reads.recv_timeout(Duration::from_secs(20)) {
                Ok((t, read)) => self.take(t, read)?,
                Err(_) => {
                    let _ = self.child.kill();
                    return Err("omp did not end its stdout".into());
                }
            }
        }
        let status = self
            .child
            .wait()
            .map_err(|e| format!("waiting for omp: {e}"))?;
        // Stderr written after stdout ended.
        while let Ok((t, read)) = self.reads.recv_timeout(Duration::from_millis(200)) {
            self.take(t, read)?;
        }
        let now = Instant::now();
        let exit = match status.code() {
            Some(code) => ExitStatus::Code(code),
            None => {
                use std::os::unix::process::ExitStatusExt as _;
                status
                    .signal()
                    .map_or(ExitStatus::Unknown, ExitStatus::Signal)
            }
        };
        self.client.handle(now, Input::exit(exit));
        let mut step = Map::new();
        step.insert("at".into(), self.ms(now).into());
        step.insert(
            "exit".into(),
            serde_json::to_value(exit).expect("an exit status serialises"),
        );
        self.steps.push(Recorded::Other(step));
        let _ = std::fs::remove_dir_all(&self.home);
        write_transcript(&header, &self.steps, out)
    }
}

fn write_transcript(header: &Header, steps: &[Recorded], out: &Path) -> Result<(), String> {
    let stem = out
        .file_stem()
        .ok_or("the output needs a file name")?
        .to_string_lossy()
        .into_owned();
    let dir = out.parent().unwrap_or(Path::new("."));
    let sidecars = dir.join(&stem);
    if sidecars.exists() {
        std::fs::remove_dir_all(&sidecars).map_err(|e| format!("{}: {e}", sidecars.display()))?;
    }
    let mut text = serde_json::to_string(header).expect("a header serialises");
    text.push('\n');
    for (index, step) in steps.iter().enumerate() {
        let line = match step {
            Recorded::Stdout(at, bytes) if bytes.len() > INLINE_MAX => {
                std::fs::create_dir_all(&sidecars)
                    .map_err(|e| format!("{}: {e}", sidecars.display()))?;
                let name = format!("step-{:03}.bin", index + 1);
                std::fs::write(sidecars.join(&name), bytes).map_err(|e| format!("{name}: {e}"))?;
                json!({"at": at, "stdout_file": format!("{stem}/{name}")})
            }
            Recorded::Stdout(at, bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => json!({"at": at, "stdout": text}),
                Err(_) => json!({"at": at, "stdout_b64": STANDARD.encode(bytes)}),
            },
            Recorded::Stderr(at, bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => json!({"at": at, "stderr": text}),
                Err(_) => json!({"at": at, "stderr_b64": STANDARD.encode(bytes)}),
            },
            Recorded::Other(map) => Value::Object(map.clone()),
        };
        text.push_str(&line.to_string());
        text.push('\n');
    }
    std::fs::write(out, &text).map_err(|e| format!("{}: {e}", out.display()))?;
    let transcript = crate::transcript::load(out)?;
    let blessed = crate::replay::bless(&transcript)?;
    std::fs::write(out, blessed).map_err(|e| format!("{}: {e}", out.display()))?;
    // The live run and the replay must agree.
    crate::replay::replay(&crate::transcript::load(out)?)
}

fn is_response_to(id: RequestId) -> impl Fn(&ClientEvent) -> bool {
    move |e| {
        matches!(e, ClientEvent::Response { request, .. } | ClientEvent::History { request, .. }
            if *request == id)
    }
}

/// Records scenario `name` (see the module docs) into the transcript file `out`.
pub fn capture_omp(name: &str, out: &Path) -> Result<(), String> {
    let timeout = Duration::from_secs(60);
    let mut rec = Recorder::start()?;
    let ready = |e: &ClientEvent| matches!(e, ClientEvent::Ready { .. });
    let result = (|| {
        rec.wait(Some(&ready), timeout)?;
        // The notices omp sends once started.
        rec.wait(None, Duration::from_secs(5))?;
        let header = match name {
            "handshake" => {
                let id = rec.call(json!({"call": "send", "command": {"type": "frobnicate"}}))?;
                rec.wait(Some(&is_response_to(id.ok_or("refused")?)), timeout)?;
                rec.wait(None, Duration::from_secs(2))?;
                Header {
                    role: Role::Client,
                    config: ConfigSpec::default(),
                    rules: ["FRAME-03", "FRAME-04", "FRAME-05", "CALL-01", "CALL-02", "CALL-06"]
                        .map(String::from)
                        .into(),
                    description: "Captured from omp 18.2.3 (`capture-omp handshake`): its ready frame offering v2, the negotiation and its v1-encoded response, the notices it sends at start (passed on), an unknown command answered by an id-less failure matched to its request, stdin closed and a clean exit.".into(),
                }
            }
            "history" => {
                for _ in 0..21 {
                    let command = json!({"call": "send", "command": {"type": "bash", "command": "yes 0123456789012345678901234567890123456789012345678901234567890123456789 | head -n 20000"}});
                    let id = rec.call(command)?;
                    rec.wait(Some(&is_response_to(id.ok_or("refused")?)), timeout)?;
                }
                let id = rec.call(json!({"call": "send", "command": {"type": "get_messages"}}))?;
                rec.wait(Some(&is_response_to(id.ok_or("refused")?)), timeout)?;
                let id = rec.call(json!({"call": "read_history"}))?;
                rec.wait(Some(&is_response_to(id.ok_or("refused")?)), timeout)?;
                rec.wait(None, Duration::from_secs(1))?;
                Header {
                    role: Role::Client,
                    config: ConfigSpec::default(),
                    rules: ["FRAME-04", "FRAME-05", "CALL-01", "CALL-05", "PAGE-07"]
                        .map(String::from)
                        .into(),
                    description: "Captured from omp 18.2.3 (`capture-omp history`): after v2, 21 bash commands (outputs truncated by omp to ~50 KB) build a history over 1 MiB; get_messages is answered with a chunked response, reassembled; the whole-history read drains get_messages_page with limit 256 over two pages; clean exit.".into(),
                }
            }
            other => return Err(format!("unknown scenario {other:?} (handshake, history)")),
        };
        Ok(header)
    })();
    match result {
        Ok(header) => rec.finish(header, out),
        Err(e) => {
            let _ = rec.child.kill();
            let _ = std::fs::remove_dir_all(&rec.home);
            Err(e)
        }
    }
}
