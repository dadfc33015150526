//! A small harness around `Agent` for the agent tests: the host's side writes lines, and the
//! agent's stdout is read back through the framing decoder, as a host reads it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use musewire_core::agent::{
    Agent, AgentAction, AgentCall, AgentCallResult, AgentConfig, AgentError, AgentEvent,
    CommandFailure, CommandId, DialogId, HostCallId, HostUriId, HostUriOperation, Input,
    PageSource,
};
use musewire_core::frame::{DecodeEvent, StreamDecoder};
use musewire_core::spill::{SpillOwner, SpillSource};
use musewire_wire::output::StoredOutput;
use musewire_wire::{AgentFrame, Command, ResponseData, ToolResult, UiRequest};
use serde_json::Value;

/// The application's calls, each one [`Agent::handle`] with its input (the agent's only way
/// in), with what each returns unpacked for the tests.
pub trait Through {
    fn call_now(&mut self, now: Instant, call: AgentCall) -> AgentCallResult;
    fn handle_stdin(&mut self, now: Instant, bytes: &[u8]);
    fn handle_stdin_eof(&mut self, now: Instant);
    fn handle_timeout(&mut self, now: Instant);

    fn respond(
        &mut self,
        now: Instant,
        request: CommandId,
        outcome: Result<Option<ResponseData>, CommandFailure>,
    ) -> Result<(), AgentError> {
        done(self.call_now(now, AgentCall::Respond(request, outcome)))
    }
    fn respond_messages_page(
        &mut self,
        now: Instant,
        request: CommandId,
        source: PageSource<'_, Value>,
    ) -> Result<(), AgentError> {
        let call = AgentCall::RespondMessagesPage {
            request,
            busy: source.busy,
            session_id: source.session_id.into(),
            leaf_id: source.leaf_id.map(str::to_owned),
            messages: source.messages.to_vec(),
        };
        done(self.call_now(now, call))
    }
    fn reject_unknown(&mut self, now: Instant, request: CommandId) -> Result<(), AgentError> {
        done(self.call_now(now, AgentCall::RejectUnknown(request)))
    }
    fn emit(&mut self, now: Instant, frame: &AgentFrame) -> Result<(), AgentError> {
        done(self.call_now(now, AgentCall::Emit(frame.clone())))
    }
    fn call_host_tool(
        &mut self,
        now: Instant,
        tool_call_id: &str,
        name: &str,
        arguments: Value,
    ) -> Result<HostCallId, AgentError> {
        let call = AgentCall::CallHostTool {
            tool_call_id: tool_call_id.into(),
            name: name.into(),
            arguments,
        };
        match self.call_now(now, call) {
            AgentCallResult::HostCall(made) => made,
            other => panic!("a host call's result: {other:?}"),
        }
    }
    fn cancel_host_tool(&mut self, now: Instant, call: HostCallId) -> bool {
        cancelled(self.call_now(now, AgentCall::CancelHostTool(call)))
    }
    fn request_host_uri(
        &mut self,
        now: Instant,
        url: &str,
        operation: HostUriOperation,
    ) -> Result<HostUriId, AgentError> {
        match self.call_now(now, AgentCall::RequestHostUri(url.into(), operation)) {
            AgentCallResult::HostUri(made) => made,
            other => panic!("a host URI request's result: {other:?}"),
        }
    }
    fn cancel_host_uri(&mut self, now: Instant, request: HostUriId) -> bool {
        cancelled(self.call_now(now, AgentCall::CancelHostUri(request)))
    }
    fn ui_dialog(&mut self, now: Instant, request: UiRequest) -> Result<DialogId, AgentError> {
        match self.call_now(now, AgentCall::UiDialog(request)) {
            AgentCallResult::Dialog(opened) => opened,
            other => panic!("a dialog's result: {other:?}"),
        }
    }
    fn ui_notice(&mut self, now: Instant, request: UiRequest) -> Result<String, AgentError> {
        match self.call_now(now, AgentCall::UiNotice(request)) {
            AgentCallResult::Notice(sent) => sent,
            other => panic!("a notice's result: {other:?}"),
        }
    }
    fn ui_cancel(&mut self, now: Instant, dialog: DialogId) -> bool {
        cancelled(self.call_now(now, AgentCall::UiCancel(dialog)))
    }
    fn settle_tool_result(
        &mut self,
        now: Instant,
        source: SpillSource,
        owner: Option<SpillOwner>,
        result: ToolResult,
    ) {
        let call = AgentCall::SettleToolResult {
            source,
            owner,
            result,
        };
        done(self.call_now(now, call)).expect("settling is always taken");
    }
    fn register_outputs(&mut self, now: Instant, outputs: Vec<StoredOutput>) -> usize {
        match self.call_now(now, AgentCall::RegisterOutputs(outputs)) {
            AgentCallResult::Registered(count) => count,
            other => panic!("a registration's result: {other:?}"),
        }
    }
}

impl Through for Agent {
    fn call_now(&mut self, now: Instant, call: AgentCall) -> AgentCallResult {
        self.handle(now, Input::Call(call))
            .expect("a call's result")
    }
    fn handle_stdin(&mut self, now: Instant, bytes: &[u8]) {
        assert_eq!(self.handle(now, Input::Stdin(bytes)), None);
    }
    fn handle_stdin_eof(&mut self, now: Instant) {
        assert_eq!(self.handle(now, Input::StdinEnd), None);
    }
    fn handle_timeout(&mut self, now: Instant) {
        assert_eq!(self.handle(now, Input::Timeout), None);
    }
}

fn done(result: AgentCallResult) -> Result<(), AgentError> {
    match result {
        AgentCallResult::Done(outcome) => outcome,
        other => panic!("a plain result: {other:?}"),
    }
}

fn cancelled(result: AgentCallResult) -> bool {
    match result {
        AgentCallResult::Cancelled => true,
        AgentCallResult::NotOpen => false,
        other => panic!("a cancel's result: {other:?}"),
    }
}

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
            decoder: StreamDecoder::new(),
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

/// How host tool calls are rejected when stdin closes (HOST-07), pinned by value.
pub const HOST_TOOL_DISCONNECTED: &str =
    "RPC client disconnected before host tool execution completed";
/// How host URI requests are rejected when stdin closes (HOST-07), pinned by value.
pub const HOST_URI_DISCONNECTED: &str = "RPC client disconnected before host URI request completed";
