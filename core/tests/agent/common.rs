//! A small harness around `Agent` for the agent tests: the host's side writes lines, and the
//! agent's stdout is read back through the framing decoder, as a host reads it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use musewire_core::agent::{Agent, AgentAction, AgentConfig, AgentEvent, CommandId};
use musewire_core::frame::{DecodeEvent, DecoderConfig, StreamDecoder};
use musewire_core::wire::Command;
use serde_json::Value;

pub const READY: &str = r#"{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1,2],"maxFrameBytes":1048576,"maxReassembledFrameBytes":67108864}"#;

pub struct Harness {
    pub agent: Agent,
    pub start: Instant,
    pub now: Instant,
    /// Reads the agent's stdout as a host does (v2 after a successful negotiation).
    pub decoder: StreamDecoder,
}

impl Harness {
    /// An agent whose ready frame has been read.
    pub fn new(config: AgentConfig) -> Self {
        let start = Instant::now();
        let mut h = Harness {
            agent: Agent::new(config),
            start,
            now: start,
            decoder: StreamDecoder::with_config(DecoderConfig {
                follow_negotiation: true,
                ..DecoderConfig::default()
            }),
        };
        let (frames, _) = h.split();
        assert_eq!(frames[0]["type"], "ready");
        h
    }

    pub fn fresh() -> Self {
        Self::new(AgentConfig::default())
    }

    /// An agent that has negotiated v2; actions drained.
    pub fn v2() -> Self {
        let mut h = Self::fresh();
        h.host(r#"{"id":"n","type":"negotiate_protocol","protocolVersion":2}"#);
        h.split();
        h
    }

    /// The host writes one line.
    pub fn host(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.agent.handle_stdin(self.now, &bytes);
    }

    pub fn advance(&mut self, ms: u64) {
        self.now += Duration::from_millis(ms);
        self.agent.handle_timeout(self.now);
    }

    /// Drains: the physical lines written and the events.
    pub fn raw(&mut self) -> (Vec<Vec<u8>>, Vec<AgentEvent>) {
        let mut lines = Vec::new();
        let mut events = Vec::new();
        while let Some(action) = self.agent.poll_action() {
            match action {
                AgentAction::Write(line) => {
                    assert!(line.ends_with(b"\n"), "one whole line per write");
                    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
                    lines.push(line)
                }
                AgentAction::Event(e) => events.push(e),
                other => panic!("no spill or output read without a store: {other:?}"),
            }
        }
        (lines, events)
    }

    /// Drains: the logical frames written (decoded as a host reads them) and the events.
    pub fn split(&mut self) -> (Vec<Value>, Vec<AgentEvent>) {
        let (lines, events) = self.raw();
        let mut frames = Vec::new();
        for line in lines {
            self.decoder.handle_bytes(&line);
            while let Some(event) = self.decoder.poll_event() {
                match event {
                    DecodeEvent::Frame(frame) => frames.push(frame.parse().unwrap()),
                    DecodeEvent::Error(e) => panic!("the agent wrote a bad frame: {e}"),
                }
            }
        }
        (frames, events)
    }

    /// Drains, expecting exactly one frame and no events.
    pub fn one_frame(&mut self) -> Value {
        let (frames, events) = self.split();
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(frames.len(), 1, "{frames:?}");
        frames.into_iter().next().unwrap()
    }

    /// The host sends a command; returns the request handed to the application.
    pub fn command(&mut self, line: &str) -> (CommandId, Command) {
        self.host(line);
        let (frames, events) = self.split();
        assert!(frames.is_empty(), "{frames:?}");
        match &events[..] {
            [AgentEvent::Command {
                request, command, ..
            }] => (*request, command.clone()),
            other => panic!("expected one command, got {other:?}"),
        }
    }
}
