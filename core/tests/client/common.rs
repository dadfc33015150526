//! A small harness around `Client` for the client tests: every input goes in through
//! `Client::handle`, as a driver hands it in.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use musewire_core::client::{
    Action, Call, CallResult, Client, ClientConfig, ClientError, ClientEvent, Input, RequestId,
};
use musewire_wire::Command;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub const READY_V2: &str = r#"{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1,2],"maxFrameBytes":1048576,"maxReassembledFrameBytes":67108864}"#;

/// A command written as JSON, typed by the wire model (an unknown `type` gives
/// `Command::Unknown`, CALL-06).
pub fn cmd(command: Value) -> Command {
    Command::from_value_with_id(command)
        .expect("the test's command is a JSON object")
        .1
}

/// A wire value written as JSON (a message, a host tool definition, a tool result, …).
pub fn wire<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("the test's value has the wire model's shape")
}

pub struct Harness {
    pub client: Client,
    pub start: Instant,
    pub now: Instant,
}

impl Harness {
    pub fn new(config: ClientConfig) -> Self {
        let start = Instant::now();
        Harness {
            client: Client::new(config, start),
            start,
            now: start,
        }
    }

    /// A client that has negotiated v2 with a reference-like agent; actions drained.
    pub fn v2() -> Self {
        let mut h = Harness::new(ClientConfig::default());
        h.agent(READY_V2);
        h.drain();
        h.agent(r#"{"id":"req_1","type":"response","command":"negotiate_protocol","success":true,"data":{"protocolVersion":2}}"#);
        h.drain();
        h
    }

    /// A client for a v1-only agent, ready at once; actions drained.
    pub fn v1() -> Self {
        let mut h = Harness::new(ClientConfig {
            expect_ready: false,
            ..ClientConfig::default()
        });
        h.drain();
        h
    }

    /// Hands in one input at the harness's time.
    pub fn input(&mut self, input: Input<'_>) -> CallResult {
        self.client.handle(self.now, input)
    }

    /// Makes a call that asks for a request ([`Call::Send`], [`Call::Prompt`], …): the
    /// request made, or why it was refused.
    pub fn request(&mut self, call: Call) -> Result<RequestId, ClientError> {
        match self.input(Input::Call(call)) {
            CallResult::Request(result) => result,
            other => panic!("a request call returned {other:?}"),
        }
    }

    /// Makes a call that answers the agent ([`Call::HostToolResult`], [`Call::UiRespond`],
    /// …): whether the answer went out.
    pub fn answer(&mut self, call: Call) -> bool {
        match self.input(Input::Call(call)) {
            CallResult::Sent => true,
            CallResult::NotOpen => false,
            other => panic!("an answer call returned {other:?}"),
        }
    }

    /// The agent writes one line.
    pub fn agent(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.input(Input::stdout(&bytes));
    }

    /// Time passes, then the timer is handed in.
    pub fn advance(&mut self, ms: u64) {
        self.now += Duration::from_millis(ms);
        self.input(Input::Timeout);
    }

    pub fn drain(&mut self) -> Vec<Action> {
        std::iter::from_fn(|| self.client.poll_action()).collect()
    }

    /// Drains, returning the lines written (as JSON) and the events.
    pub fn split(&mut self) -> (Vec<Value>, Vec<ClientEvent>) {
        let mut written = Vec::new();
        let mut events = Vec::new();
        for action in self.drain() {
            match action {
                Action::Write { bytes } => {
                    for line in bytes.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
                        written.push(serde_json::from_slice(line).expect("written lines are JSON"));
                    }
                }
                Action::Event(e) => events.push(e),
                // Tests that care about StopAgent or spill writes look at `drain()`.
                Action::StopAgent | Action::SpillWrite { .. } => {}
            }
        }
        (written, events)
    }
}
