//! A `Client` and the reference agent's `App` back to back in memory (as core/tests/
//! agent/pair.rs does with a bare `Agent`): the host's bytes go to the app's stdin, the app's
//! lines to the client's stdout; shell commands run for real and are waited for.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use musewire_agent::disk::Disk;
use musewire_agent::{App, Options};
use musewire_core::agent::AgentProgram;
use musewire_core::client::{
    Action, Call, CallResult, Client, ClientConfig, ClientError, ClientEvent, HistorySource, Input,
    RequestId,
};
use musewire_core::frame::ProtocolVersion;
use serde::Serialize;
use serde_json::Value;

/// The fixed clock of every pair.
pub const CLOCK_MS: u64 = 1_700_000_000_000;
/// How long a test waits for a shell command (generous: the tests run on busy machines).
const JOB_WAIT: Duration = Duration::from_secs(60);

pub struct Pair {
    pub client: Client,
    pub app: App,
    pub now: Instant,
    pub events: Vec<ClientEvent>,
    /// Physical lines the app wrote, and how many were rpc_chunk lines.
    pub lines: usize,
    pub chunk_lines: usize,
    /// Performs the app's file work (the I/O seam), as the stdio loop does.
    pub disk: Disk,
    /// When set, the app's file work is left to the test ([`App::poll_io`]).
    pub manual_io: bool,
}

impl Pair {
    /// A pair that has negotiated v2.
    pub fn new() -> Self {
        Self::with_options(Options::default())
    }

    /// A pair whose app has these options (and the fixed clock), its file work performed on
    /// the disk (sessions in `options.session_dir`).
    pub fn with_options(options: Options) -> Self {
        let now = Instant::now();
        let options = Options {
            fixed_clock_ms: Some(CLOCK_MS),
            ..options
        };
        let folder = options.session_dir.clone().filter(|_| !options.no_session);
        let mut pair = Pair {
            client: Client::new(ClientConfig::default(), now),
            app: App::new(options, now, Arc::new(|| {})),
            now,
            events: Vec::new(),
            lines: 0,
            chunk_lines: 0,
            disk: Disk::new(folder.as_deref()).expect("the session folder opens"),
            manual_io: false,
        };
        pair.drive();
        assert_eq!(pair.client.protocol(), ProtocolVersion::V2);
        pair.events.clear();
        pair
    }

    /// Steps both sides until neither has anything to do (shell commands may still run).
    pub fn drive(&mut self) {
        for _ in 0..1_000_000 {
            let mut progressed = false;
            while let Some(action) = self.client.poll_action() {
                progressed = true;
                match action {
                    Action::Write { bytes } => self.app.handle_stdin(self.now, &bytes),
                    Action::Event(event) => self.events.push(event),
                    Action::StopAgent => self.app.handle_stdin_eof(self.now),
                    Action::SpillWrite { .. } => panic!("these tests set no host spill policy"),
                }
            }
            self.app.handle_jobs(self.now);
            while !self.manual_io {
                let Some(request) = self.app.poll_io() else {
                    break;
                };
                progressed = true;
                let outcome = self.disk.perform(request.work);
                self.app.handle_io(self.now, request.id, outcome);
            }
            while let Some(line) = self.app.next_line(self.now) {
                progressed = true;
                self.lines += 1;
                if line.starts_with(br#"{"type":"rpc_chunk""#) {
                    self.chunk_lines += 1;
                }
                self.client.handle(self.now, Input::stdout(&line));
            }
            if !progressed {
                return;
            }
        }
        panic!("the pair did not settle");
    }

    /// Drives until `done` holds over the events, waiting for shell commands in between.
    pub fn drive_until(&mut self, mut done: impl FnMut(&[ClientEvent]) -> bool) {
        let deadline = Instant::now() + JOB_WAIT;
        loop {
            self.drive();
            if done(&self.events) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out; events: {:#?}",
                self.events
            );
            self.app.wait_job(self.now, Duration::from_millis(50));
        }
    }

    /// Hands in one input to the client at the pair's time.
    pub fn input(&mut self, input: Input<'_>) -> CallResult {
        self.client.handle(self.now, input)
    }

    /// Makes a call that asks for a request: the request made, or why it was refused.
    pub fn request(&mut self, call: Call) -> Result<RequestId, ClientError> {
        match self.input(Input::Call(call)) {
            CallResult::Request(result) => result,
            other => panic!("a request call returned {other:?}"),
        }
    }

    /// Makes a call that answers the agent: whether the answer went out.
    pub fn reply(&mut self, call: Call) -> bool {
        match self.input(Input::Call(call)) {
            CallResult::Sent => true,
            CallResult::NotOpen => false,
            other => panic!("an answer call returned {other:?}"),
        }
    }

    /// Sends a command; returns its request.
    pub fn send(&mut self, command: Value) -> RequestId {
        let request = self.request(Call::Send(cmd(command))).expect("sent");
        self.drive();
        request
    }

    /// The answer to a request, waiting for it.
    pub fn answer(&mut self, request: RequestId) -> Result<Value, (String, Option<String>)> {
        self.drive_until(|events| response(events, request).is_some());
        response(&self.events, request).unwrap()
    }

    /// Sends a command and waits for its answer.
    pub fn call(&mut self, command: Value) -> Result<Value, (String, Option<String>)> {
        let request = self.send(command);
        self.answer(request)
    }

    /// Prompts and waits for the end of the run; returns the frames the run streamed
    /// (agent_start .. agent_end).
    pub fn turn(&mut self, message: &str) -> Vec<Value> {
        self.events.clear();
        let request = self
            .request(Call::Send(cmd(
                serde_json::json!({"type": "prompt", "message": message}),
            )))
            .unwrap();
        self.drive_until(|events| events.contains(&ClientEvent::TurnFinished));
        assert_eq!(response(&self.events, request), Some(Ok(Value::Null)));
        self.frames()
    }

    /// The frames received so far (ClientEvent::Frame), by value.
    pub fn frames(&self) -> Vec<Value> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ClientEvent::Frame { frame } => Some(frame.to_value()),
                _ => None,
            })
            .collect()
    }

    /// Reads the whole history as the client does (PAGE-07).
    pub fn history(&mut self) -> (HistorySource, Vec<Value>) {
        self.events.clear();
        self.request(Call::ReadHistory).unwrap();
        self.drive_until(|events| {
            events
                .iter()
                .any(|e| matches!(e, ClientEvent::History { .. }))
        });
        self.events
            .iter()
            .find_map(|e| match e {
                ClientEvent::History {
                    source, outcome, ..
                } => Some((
                    *source,
                    outcome
                        .clone()
                        .expect("the history")
                        .iter()
                        .map(to_json)
                        .collect(),
                )),
                _ => None,
            })
            .unwrap()
    }
}

/// The answer to `request` among `events`: data (null when absent), or the error and code.
pub fn response(
    events: &[ClientEvent],
    request: RequestId,
) -> Option<Result<Value, (String, Option<String>)>> {
    events.iter().find_map(|e| match e {
        ClientEvent::Response {
            request: r,
            outcome,
            ..
        } if *r == request => Some(
            outcome
                .clone()
                .map(|data| to_json(&data))
                .map_err(|f| (f.error, f.code.map(|c| c.as_str().to_owned()))),
        ),
        _ => None,
    })
}

/// The `type` of each frame.
pub fn types(frames: &[Value]) -> Vec<&str> {
    frames.iter().filter_map(|f| f["type"].as_str()).collect()
}

/// The text deltas of the frames, in order.
pub fn deltas<'a>(frames: &'a [Value], kind: &str) -> Vec<&'a str> {
    frames
        .iter()
        .filter(|f| f["type"] == "message_update" && f["assistantMessageEvent"]["type"] == kind)
        .filter_map(|f| f["assistantMessageEvent"]["delta"].as_str())
        .collect()
}

/// A command written as JSON, typed as the client takes it.
pub fn cmd(command: Value) -> musewire_wire::Command {
    musewire_wire::Command::from_value_with_id(command)
        .expect("a command")
        .1
}

/// A typed value as JSON, for the assertions.
pub fn to_json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).expect("serialises")
}

/// A wire value written as JSON, typed.
pub fn wire_value<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a value of the wire model's shape")
}
