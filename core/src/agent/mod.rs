//! The agent side of the RPC protocol: [`Agent`] is what a Rust program embeds to *be* an
//! `<agent> --mode rpc`.
//!
//! The agent follows the crate's run-loop contract: everything goes in as an [`Input`]
//! through one method, [`Agent::handle`]. The driver hands in stdin and timers; the
//! application makes its calls as [`Input::Call`] with an [`AgentCall`]: it answers the
//! commands it is handed ([`AgentCall::Respond`], in any order, CALL-01), emits session
//! events ([`AgentCall::Emit`]), calls host tools, reads host URIs and opens dialogs. After
//! each input the driver drains [`Agent::poll_action`] (one stdout line at a time, and
//! [`AgentEvent`]s) and then sleeps until [`Agent::poll_timeout`]. Calls as data also serve
//! drivers that pass calls between threads and the `"role":"agent"` conformance transcripts.
//!
//! With a spill store the driver also performs I/O for the agent: [`AgentAction::SpillWrite`]
//! and [`AgentAction::OutputRead`], answered with [`Input::SpillDone`] and [`Input::ReadDone`]
//! (tool-result spill through [`AgentCall::SettleToolResult`], SPILL-01..05, and `read_output`,
//! OUT-10, which the agent answers itself when [`AgentConfig::serve_outputs`] is set).
//!
//! The core itself answers what needs no application: the ready frame (FRAME-03),
//! `negotiate_protocol` (FRAME-04..06), lines that are not JSON (FRAME-14), unknown command
//! types, `set_host_tools` and `set_host_uri_schemes` (HOST-01, HOST-04, reported as events);
//! it routes the host's answers to host tool calls, host URI requests and dialogs
//! (HOST-02..06), and rejects what is pending when stdin closes (HOST-07). Every frame goes
//! out through the [`FrameEncoder`] (FRAME-11, FRAME-12).
//!
//! ```
//! use std::time::Instant;
//! use musewire_core::agent::{Agent, AgentAction, AgentCall, AgentConfig, AgentEvent, Input};
//! use musewire_wire::{ResponseData, SessionState};
//!
//! let now = Instant::now();
//! let mut agent = Agent::new(AgentConfig::default());
//! agent.handle(now, Input::Stdin(b"{\"id\":\"1\",\"type\":\"get_state\"}\n"));
//! let mut stdout = Vec::new();
//! let mut requests = Vec::new();
//! while let Some(action) = agent.poll_action() {
//!     match action {
//!         AgentAction::Write(line) => stdout.extend(line),
//!         AgentAction::Event(AgentEvent::Command { request, .. }) => requests.push(request),
//!         // Other events; spill writes and output reads come only with a store.
//!         _ => {}
//!     }
//! }
//! assert!(stdout.starts_with(b"{\"type\":\"ready\",\"protocolVersion\":1,"));
//! let state = SessionState { is_streaming: Some(false), ..Default::default() };
//! let answer = AgentCall::Respond(requests[0], Ok(Some(ResponseData::State(Box::new(state)))));
//! agent.handle(now, Input::Call(answer));
//! let AgentAction::Write(line) = agent.poll_action().unwrap() else { panic!() };
//! assert_eq!(line, b"{\"id\":\"1\",\"type\":\"response\",\"command\":\"get_state\",\"success\":true,\"data\":{\"isStreaming\":false}}\n");
//! ```

mod action;
mod call;
mod config;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod host;
mod inbound;
mod input;
mod js;
mod outputs;
mod program;

use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};

pub use action::{
    AgentAction, AgentEvent, CommandId, DialogId, DialogOutcome, HostCallId, HostUriContent,
    HostUriId, ReadId, SettledToolResult, SpillId,
};
pub use call::{AgentCall, AgentCallResult};
pub use config::{AgentConfig, UnknownCommands, DEFAULT_MAX_INPUT_LINE_BYTES};
pub use error::{AgentError, HostFailure};
pub use host::{result_text, HostUriOperation};
pub use input::Input;
pub(crate) use outputs::READ_OUTPUT_COMMAND;
pub use program::{on_event, AgentProgram, Ended, OnEvent};

pub use crate::client::CommandFailure;
use crate::frame::{
    EncodedFrame, FrameEncoder, LineDecoder, ProtocolVersion, MAX_FRAME_BYTES,
    MAX_REASSEMBLED_FRAME_BYTES,
};
use crate::output::OutputCatalog;
use crate::paging::{build_page, page_data, PageError, PageOptions, Snapshot};
use crate::wire::{AgentFrame, HostToolDefinition, HostUriSchemeDefinition, Ready, ResponseData};

/// The history a `get_messages_page` is answered from (PAGE-01..06): one stable snapshot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageSource<'a, M> {
    /// The session is streaming or compacting: the page is refused with `session_busy`
    /// (PAGE-05) and nothing else is looked at.
    pub busy: bool,
    /// The session's id.
    pub session_id: &'a str,
    /// The current leaf of the session tree (`None` for an empty session).
    pub leaf_id: Option<&'a str>,
    /// Every message of the history, in order, as JSON values or anything that serialises
    /// to the JSON the host reads (only the page's messages are serialised).
    pub messages: &'a [M],
}

/// What waits in the output queue: a frame's lines, produced as they are polled, an event,
/// or I/O for the driver.
#[derive(Debug)]
enum Out {
    Lines(EncodedFrame),
    /// An event or an I/O action for the driver.
    Action(AgentAction),
    /// A `read_output` that arrived at `at`, planned when it reaches the front (OUT-10).
    Read {
        id: Option<Value>,
        fields: Map<String, Value>,
        at: Instant,
    },
}

/// A command handed to the application and not yet answered.
#[derive(Debug, Clone)]
struct Pending {
    /// The host's id, echoed in the response.
    id: Option<Value>,
    /// The command's `type` (for the response's `command`).
    command: Value,
    /// The paging options of a `get_messages_page`.
    page: Option<PageOptions>,
}

/// An open host URI request.
#[derive(Debug, Clone)]
struct PendingUri {
    write: bool,
    url: String,
    scheme: String,
}

/// The agent side of one session. See the [module docs](self).
#[derive(Debug)]
pub struct Agent {
    config: AgentConfig,
    lines: LineDecoder,
    encoder: FrameEncoder,
    out: VecDeque<Out>,
    next_request: u64,
    next_outbound: u64,
    requests: BTreeMap<CommandId, Pending>,
    host_tools: BTreeMap<String, HostToolDefinition>,
    host_schemes: BTreeMap<String, HostUriSchemeDefinition>,
    tool_calls: BTreeMap<HostCallId, String>,
    uri_requests: BTreeMap<HostUriId, PendingUri>,
    dialogs: BTreeMap<DialogId, Option<Instant>>,
    input_closed: bool,
    /// The stored outputs `read_output` serves (OUT-07, OUT-08).
    catalog: OutputCatalog,
    spills: crate::spill::Saves<crate::spill::SpillSource>,
    next_read: u64,
    reads: BTreeMap<ReadId, outputs::PendingRead>,
}

impl Agent {
    /// An agent whose first frame, the ready frame (FRAME-03), is already queued.
    pub fn new(config: AgentConfig) -> Self {
        let mut agent = Agent {
            lines: LineDecoder::new(config.max_input_line_bytes),
            encoder: FrameEncoder::new(),
            out: VecDeque::new(),
            next_request: 0,
            next_outbound: 0,
            requests: BTreeMap::new(),
            host_tools: BTreeMap::new(),
            host_schemes: BTreeMap::new(),
            tool_calls: BTreeMap::new(),
            uri_requests: BTreeMap::new(),
            dialogs: BTreeMap::new(),
            input_closed: false,
            catalog: OutputCatalog::default(),
            spills: crate::spill::Saves::default(),
            next_read: 0,
            reads: BTreeMap::new(),
            config,
        };
        let ready = AgentFrame::Ready(Ready {
            protocol_version: 1,
            supported_protocol_versions: Some(vec![1, 2]),
            max_frame_bytes: Some(MAX_FRAME_BYTES as u64),
            max_reassembled_frame_bytes: Some(MAX_REASSEMBLED_FRAME_BYTES as u64),
            // OUT-10: the offer; without it the frame is omp's, byte for byte.
            read_output: agent.config.serve_outputs.then(outputs::read_output_offer),
            ..Ready::default()
        });
        let ready = ready.to_value();
        agent.write(&ready);
        agent
    }

    /// The protocol version frames are encoded in now.
    pub fn protocol(&self) -> ProtocolVersion {
        self.encoder.protocol()
    }

    /// Commands handed out and not yet answered.
    pub fn pending_requests(&self) -> usize {
        self.requests.len()
    }

    /// Host tool calls, host URI requests and dialogs still open.
    pub fn pending_host_requests(&self) -> usize {
        self.tool_calls.len() + self.uri_requests.len() + self.dialogs.len()
    }

    /// Whether stdin has ended (HOST-07).
    pub(crate) fn is_input_closed(&self) -> bool {
        self.input_closed
    }

    /// The host's tools, by name (HOST-01).
    pub fn host_tools(&self) -> impl Iterator<Item = &HostToolDefinition> {
        self.host_tools.values()
    }

    /// The host's URI schemes, by scheme (HOST-04).
    pub fn host_uri_schemes(&self) -> impl Iterator<Item = &HostUriSchemeDefinition> {
        self.host_schemes.values()
    }

    /// Hands in bytes read from stdin, in any split.
    fn handle_stdin(&mut self, now: Instant, bytes: &[u8]) {
        if self.input_closed {
            return;
        }
        let mut lines = Vec::new();
        self.lines.push(bytes, &mut |line| lines.push(owned(line)));
        for line in lines {
            self.handle_line(now, line);
        }
    }

    /// Hands in the end of stdin: a last line without LF is read, then every pending dialog,
    /// host tool call and host URI request is rejected (HOST-07), then
    /// [`AgentEvent::InputClosed`]. Commands still pending can be answered.
    fn handle_stdin_eof(&mut self, now: Instant) {
        if self.input_closed {
            return;
        }
        let mut lines = Vec::new();
        self.lines.finish(&mut |line| lines.push(owned(line)));
        for line in lines {
            self.handle_line(now, line);
        }
        self.close_input();
    }

    /// Hands in the passing of time: dialog timeouts (HOST-06), and stored-output reads past
    /// their deadline (OUT-10: `read_timed_out`).
    fn handle_timeout(&mut self, now: Instant) {
        self.expire_reads(now);
        let expired: Vec<DialogId> = self
            .dialogs
            .iter()
            .filter(|(_, deadline)| deadline.is_some_and(|d| now >= d))
            .map(|(id, _)| *id)
            .collect();
        for dialog in expired {
            self.dialogs.remove(&dialog);
            self.event(AgentEvent::DialogResolved {
                dialog,
                outcome: DialogOutcome::TimedOut,
            });
        }
    }

    /// The next action, if any. A chunked frame's lines are produced one per call.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<AgentAction> {
        loop {
            match self.out.front_mut()? {
                Out::Lines(frame) => {
                    let mut line = Vec::new();
                    let wrote = frame.write_next(&mut line);
                    if !wrote || frame.remaining() == 0 {
                        self.out.pop_front();
                    }
                    if wrote {
                        return Some(AgentAction::Write(line));
                    }
                }
                Out::Read { .. } => {
                    let Some(Out::Read { id, fields, at }) = self.out.pop_front() else {
                        unreachable!("the front is a read")
                    };
                    // Planned now, its answer (a read action or a failure) ahead of what
                    // came after it.
                    let after = std::mem::take(&mut self.out);
                    self.read_output(at, id, fields);
                    self.out.extend(after);
                }
                Out::Action(_) => {
                    let Some(Out::Action(action)) = self.out.pop_front() else {
                        unreachable!("the front is an action")
                    };
                    return Some(action);
                }
            }
        }
    }

    /// When [`Input::Timeout`] is next due.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let dialogs = self.dialogs.values().flatten().min().copied();
        [dialogs, self.next_read_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Answers a command (CALL-01): `Ok(data)` is a success (`data` absent when `None`),
    /// `Err` a failure with its message and optional code (CALL-08). The response echoes the
    /// host's id and the command's type.
    ///
    /// `data` is the command's typed payload ([`ResponseData`]); the answer to a command
    /// outside the wire model (an extension's, delivered with [`UnknownCommands::Deliver`])
    /// is [`ResponseData::Other`] holding its JSON.
    pub(super) fn respond(
        &mut self,
        request: CommandId,
        outcome: Result<Option<ResponseData>, CommandFailure>,
    ) -> Result<(), AgentError> {
        let outcome = outcome.map(|data| data.map(|data| to_value(&data)));
        self.answer(request, outcome)
    }

    /// `respond` with the payload already JSON.
    fn answer(
        &mut self,
        request: CommandId,
        outcome: Result<Option<Value>, CommandFailure>,
    ) -> Result<(), AgentError> {
        let pending = self
            .requests
            .remove(&request)
            .ok_or(AgentError::UnknownCommand(request))?;
        self.write_response(pending.id, Some(pending.command), outcome);
        Ok(())
    }

    /// Answers a `get_messages_page` from a snapshot of the history (PAGE-01..06): busy →
    /// `session_busy`; else the limit, the cursor and its binding to the snapshot are
    /// checked, and a page of at most `limit` messages and 768 KiB (at least one message)
    /// is sent as `{messages, nextCursor?, totalMessages}`.
    pub(super) fn respond_messages_page<M: Serialize>(
        &mut self,
        request: CommandId,
        source: PageSource<'_, M>,
    ) -> Result<(), AgentError> {
        let options = match self.requests.get(&request) {
            None => return Err(AgentError::UnknownCommand(request)),
            Some(Pending { page: None, .. }) => return Err(AgentError::NotAPageCommand(request)),
            Some(Pending {
                page: Some(options),
                ..
            }) => options.clone(),
        };
        let outcome = if source.busy {
            Err(PageError::SessionBusy)
        } else {
            let snapshot = Snapshot {
                session_id: source.session_id,
                leaf_id: source.leaf_id,
            };
            build_page(source.messages, &snapshot, &options)
                .map(|page| page_data(&page, source.messages))
        };
        let outcome = outcome.map(Some).map_err(|error| CommandFailure {
            error: error.to_string(),
            code: error.code(),
        });
        self.answer(request, outcome)
    }

    /// Answers a command of an unknown type that was delivered
    /// ([`UnknownCommands::Deliver`]) as the reference does: `Unknown command: X`, without
    /// the id.
    pub(super) fn reject_unknown(&mut self, request: CommandId) -> Result<(), AgentError> {
        let pending = self
            .requests
            .remove(&request)
            .ok_or(AgentError::UnknownCommand(request))?;
        self.write_unknown_command(Some(&pending.command));
        Ok(())
    }

    /// Emits a frame: a session event (`agent_start`, `message_update`, …), a notice, a
    /// `prompt_result`, any frame of the protocol (FRAME-11, FRAME-12 apply).
    ///
    /// A frame outside the wire model (an extension's) is [`AgentFrame::Unknown`] holding
    /// its JSON, which must be an object with a string `type` ([`AgentError::InvalidFrame`]
    /// otherwise); it is written as it is.
    pub(super) fn emit(&mut self, frame: &AgentFrame) -> Result<(), AgentError> {
        let frame = match frame {
            AgentFrame::Unknown(value) => {
                if !value.get("type").is_some_and(Value::is_string) {
                    return Err(AgentError::InvalidFrame);
                }
                value.clone()
            }
            known => known.to_value(),
        };
        self.write(&frame);
        Ok(())
    }

    fn write(&mut self, frame: &Value) {
        let encoded = self.encoder.encode(frame);
        self.out.push_back(Out::Lines(encoded));
    }

    fn event(&mut self, event: AgentEvent) {
        self.out.push_back(Out::Action(AgentAction::Event(event)));
    }

    fn next_outbound(&mut self) -> u64 {
        self.next_outbound += 1;
        self.next_outbound
    }

    /// `{id?, type:"response", command?, success, data?|error, code?}` in the reference's
    /// member order.
    fn write_response(
        &mut self,
        id: Option<Value>,
        command: Option<Value>,
        outcome: Result<Option<Value>, CommandFailure>,
    ) {
        let mut frame = Map::new();
        if let Some(id) = id {
            frame.insert("id".into(), id);
        }
        frame.insert("type".into(), "response".into());
        if let Some(command) = command {
            frame.insert("command".into(), command);
        }
        match outcome {
            Ok(data) => {
                frame.insert("success".into(), true.into());
                if let Some(data) = data {
                    frame.insert("data".into(), data);
                }
            }
            Err(failure) => {
                frame.insert("success".into(), false.into());
                frame.insert("error".into(), failure.error.into());
                if let Some(code) = failure.code {
                    frame.insert("code".into(), code.as_str().into());
                }
            }
        }
        self.write(&Value::Object(frame));
    }

    fn write_failure(&mut self, id: Option<Value>, command: &str, error: String) {
        self.write_response(
            id,
            Some(Value::from(command)),
            Err(CommandFailure { error, code: None }),
        );
    }

    /// The reference's answer to an unknown type: no id; `command` is the type as sent
    /// (absent when there is none).
    fn write_unknown_command(&mut self, kind: Option<&Value>) {
        let error = format!("Unknown command: {}", js::string(kind));
        self.write_response(
            None,
            kind.cloned(),
            Err(CommandFailure { error, code: None }),
        );
    }
}

/// A wire value as JSON, in the model form (lone surrogates as their stand-ins).
fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("a wire value serialises")
}

fn owned(line: crate::frame::Line<'_>) -> Option<Vec<u8>> {
    match line {
        crate::frame::Line::Text(text) => Some(text.to_vec()),
        crate::frame::Line::TooLong => None,
    }
}
