//! The fuzz body for the [`Agent`] (feature `fuzzing`): `fuzz/fuzz_targets/agent_session.rs`
//! is a thin wrapper, and `core/tests/fuzz_bodies/agent.rs` runs it on seeds under cargo test.
//!
//! The input is read as a sequence of [`Op`]s: raw stdin bytes, well-formed host lines
//! (commands, negotiation, host tool and URI results for the ids the agent actually wrote,
//! dialog answers, page requests with cursors the agent issued), application calls (answers
//! to pending commands in any order, pages from a history that may change, frames of any
//! size, host tool calls, URI requests, dialogs, notices, cancels), time and the end of
//! stdin. Checked after every op:
//! - nothing panics, and every line written is one frame within `maxFrameBytes` that a host's
//!   decoder reads without error (v2 after the negotiation);
//! - every command is answered at most once, and the agent's pending count is exact;
//! - every host tool call, URI request and dialog is resolved at most once, and all of them
//!   exactly once after stdin ends (HOST-07);
//! - after [`Input::Timeout`](super::Input::Timeout) the next timeout is in the future.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use arbitrary::{Arbitrary, Unstructured};
use serde_json::{json, Value};

use super::{
    Agent, AgentAction, AgentConfig, AgentEvent, CommandId, DialogId, HostCallId, HostUriId,
    HostUriOperation, PageSource, UnknownCommands,
};
use crate::frame::{DecodeEvent, StreamDecoder, MAX_FRAME_BYTES};
use crate::wire::{
    AgentFrame, AgentMessage, Empty, MessageEvent, ResponseData, SelectRequest, SessionEvent,
    UiRequest,
};

/// A line the host writes.
#[derive(Debug, Clone, Arbitrary)]
pub enum HostLine {
    /// A command by number (get_state, bash, prompt, get_messages, abort, frobnicate, a
    /// typeless object, an ill-typed prompt), with an id by number.
    Command(u8, u8),
    /// `negotiate_protocol` with this version.
    Negotiate(u8),
    /// `set_host_tools`, valid or not.
    SetHostTools(bool),
    /// `set_host_uri_schemes`, valid or not.
    SetHostUriSchemes(bool),
    /// `get_messages_page` with a cursor the agent issued (by number) and a limit.
    Page(Option<u8>, u16),
    /// `host_tool_update` for the n-th call the agent made.
    ToolUpdate(u8),
    /// `host_tool_result` for the n-th call, an error when true.
    ToolResult(u8, bool),
    /// `host_uri_result` for the n-th request, an error when true.
    UriResult(u8, bool),
    /// `extension_ui_response` for the n-th dialog.
    UiResponse(u8),
}

/// One step of a fuzzed session.
#[derive(Debug, Clone, Arbitrary)]
pub enum Op {
    /// Raw bytes on stdin.
    Raw(Vec<u8>),
    /// A well-formed line, handed in as two reads cut at the given point.
    Line(HostLine, u16),
    /// The application answers the n-th pending command, successfully or not.
    Respond(u8, bool),
    /// The application answers the n-th pending page request; busy; the history then grows.
    RespondPage(u8, bool, bool),
    /// The application emits a frame: small, or (once) over 1 MiB.
    Emit(bool),
    /// A host tool call.
    CallTool,
    /// A host URI request, a write when true.
    RequestUri(bool),
    /// A dialog with an optional timeout (ms).
    Dialog(Option<u16>),
    /// A notice.
    Notice,
    /// Cancels of the n-th call, request or dialog.
    CancelTool(u8),
    /// See [`Op::CancelTool`].
    CancelUri(u8),
    /// See [`Op::CancelTool`].
    CancelDialog(u8),
    /// Time passes (ms, times 8), then `handle_timeout`.
    Advance(u16),
    /// Stdin ends.
    Eof,
}

struct Harness {
    agent: Agent,
    now: Instant,
    decoder: StreamDecoder,
    pending: Vec<(CommandId, bool)>,
    answered: BTreeSet<CommandId>,
    cursors: Vec<String>,
    calls: Vec<HostCallId>,
    uris: Vec<HostUriId>,
    dialogs: Vec<DialogId>,
    resolved: BTreeMap<String, u32>,
    history: Vec<Value>,
    big_used: bool,
    closed: bool,
}

impl Harness {
    fn new(unknown_commands: UnknownCommands) -> Self {
        let mut h = Harness {
            agent: Agent::new(AgentConfig {
                max_input_line_bytes: 4096,
                unknown_commands,
                ..AgentConfig::default()
            }),
            now: Instant::now(),
            decoder: StreamDecoder::new(),
            pending: Vec::new(),
            answered: BTreeSet::new(),
            cursors: Vec::new(),
            calls: Vec::new(),
            uris: Vec::new(),
            dialogs: Vec::new(),
            resolved: BTreeMap::new(),
            history: (0..40).map(|i| json!({"role": "user", "i": i})).collect(),
            big_used: false,
            closed: false,
        };
        h.drain();
        h
    }

    fn resolve(&mut self, key: String) {
        let count = self.resolved.entry(key.clone()).or_insert(0);
        *count += 1;
        assert_eq!(*count, 1, "{key} resolved twice");
    }

    fn drain(&mut self) {
        while let Some(action) = self.agent.poll_action() {
            match action {
                AgentAction::Write(line) => {
                    assert!(line.len() <= MAX_FRAME_BYTES && line.ends_with(b"\n"));
                    assert_eq!(memchr::memchr_iter(b'\n', &line).count(), 1);
                    self.decoder.handle_bytes(&line);
                    while let Some(event) = self.decoder.poll_event() {
                        match event {
                            DecodeEvent::Frame(frame) => {
                                let value: Value = frame.parse().expect("JSON");
                                if let Some(c) = value["data"]["nextCursor"].as_str() {
                                    self.cursors.push(c.to_owned());
                                }
                            }
                            DecodeEvent::Error(e) => panic!("a bad frame: {e}"),
                        }
                    }
                }
                AgentAction::Event(event) => match event {
                    AgentEvent::Command {
                        request, command, ..
                    } => {
                        let page = command.type_name() == "get_messages_page";
                        self.pending.push((request, page));
                    }
                    AgentEvent::HostToolFinished { call, .. } => self.resolve(call.wire()),
                    AgentEvent::HostUriFinished { request, .. } => self.resolve(request.wire()),
                    AgentEvent::DialogResolved { dialog, .. } => self.resolve(dialog.wire()),
                    _ => {}
                },
                other => panic!("no spill or output read without a store: {other:?}"),
            }
        }
        assert_eq!(self.agent.pending_requests(), self.pending.len());
    }

    fn pick<T: Copy>(list: &[T], n: u8) -> Option<T> {
        (!list.is_empty()).then(|| list[usize::from(n) % list.len()])
    }

    fn line(&self, line: &HostLine) -> String {
        let id = |list: &[String], n: u8| {
            Self::pick(&(0..list.len()).collect::<Vec<_>>(), n)
                .map(|i| list[i].clone())
                .unwrap_or_else(|| "none".into())
        };
        let calls: Vec<String> = self.calls.iter().map(|c| c.wire()).collect();
        let uris: Vec<String> = self.uris.iter().map(|c| c.wire()).collect();
        let dialogs: Vec<String> = self.dialogs.iter().map(|c| c.wire()).collect();
        match line {
            HostLine::Command(kind, id) => match kind % 8 {
                0 => json!({"id": id.to_string(), "type": "get_state"}),
                1 => json!({"id": id.to_string(), "type": "bash", "command": "true"}),
                2 => json!({"id": id.to_string(), "type": "prompt", "message": "hi"}),
                3 => json!({"id": id.to_string(), "type": "get_messages"}),
                4 => json!({"id": *id, "type": "abort"}),
                5 => json!({"id": id.to_string(), "type": "frobnicate"}),
                6 => json!({"id": id.to_string()}),
                _ => json!({"id": id.to_string(), "type": "prompt", "message": 5}),
            },
            HostLine::Negotiate(v) => json!({"id": "n", "type": "negotiate_protocol", "protocolVersion": v % 4}),
            HostLine::SetHostTools(valid) => json!({"id": "t", "type": "set_host_tools", "tools": [
                {"name": if *valid { "tool" } else { "" }, "description": "d", "parameters": {}}]}),
            HostLine::SetHostUriSchemes(valid) => json!({"id": "s", "type": "set_host_uri_schemes", "schemes": [
                {"scheme": if *valid { "db" } else { "security" }, "writable": true}]}),
            HostLine::Page(cursor, limit) => {
                let mut frame = json!({"id": "p", "type": "get_messages_page", "limit": limit % 300});
                if let Some(n) = cursor {
                    frame["cursor"] = id(&self.cursors, *n).into();
                }
                frame
            }
            HostLine::ToolUpdate(n) => json!({"type": "host_tool_update", "id": id(&calls, *n), "partialResult": {"content": []}}),
            HostLine::ToolResult(n, error) => json!({"type": "host_tool_result", "id": id(&calls, *n), "result": {"content": [{"type": "text", "text": "r"}]}, "isError": error}),
            HostLine::UriResult(n, error) => json!({"type": "host_uri_result", "id": id(&uris, *n), "content": "c", "isError": error}),
            HostLine::UiResponse(n) => json!({"type": "extension_ui_response", "id": id(&dialogs, *n), "value": "v"}),
        }
        .to_string()
    }

    fn step(&mut self, op: Op) {
        let now = self.now;
        match op {
            Op::Raw(bytes) => self.agent.handle_stdin(now, &bytes),
            Op::Line(line, cut) => {
                let mut bytes = self.line(&line).into_bytes();
                bytes.push(b'\n');
                let cut = usize::from(cut) % bytes.len();
                self.agent.handle_stdin(now, &bytes[..cut]);
                self.agent.handle_stdin(now, &bytes[cut..]);
            }
            Op::Respond(n, ok) => {
                if let Some((request, _)) = Self::pick(&self.pending, n) {
                    let outcome = if ok {
                        Ok(Some(ResponseData::Other(json!({}))))
                    } else {
                        Err(super::CommandFailure {
                            error: "no".into(),
                            code: None,
                        })
                    };
                    self.agent.respond(request, outcome).expect("pending");
                    assert!(self.answered.insert(request));
                    self.pending.retain(|(r, _)| *r != request);
                    assert!(
                        self.agent.respond(request, Ok(None)).is_err(),
                        "answered once"
                    );
                }
            }
            Op::RespondPage(n, busy, grow) => {
                let pages: Vec<(CommandId, bool)> =
                    self.pending.iter().copied().filter(|p| p.1).collect();
                if let Some((request, _)) = Self::pick(&pages, n) {
                    let source = PageSource {
                        busy,
                        session_id: "s",
                        leaf_id: Some("l"),
                        messages: &self.history,
                    };
                    self.agent
                        .respond_messages_page(request, source)
                        .expect("a page request");
                    self.pending.retain(|(r, _)| *r != request);
                    if grow {
                        self.history.push(json!({"role": "assistant"}));
                    }
                }
            }
            Op::Emit(big) => {
                let event = if big && !self.big_used {
                    self.big_used = true;
                    let message = json!({"content": "x".repeat(1_100_000)});
                    SessionEvent::MessageEnd(MessageEvent {
                        message: AgentMessage::Unknown(message),
                        ..MessageEvent::default()
                    })
                } else {
                    SessionEvent::AgentStart(Empty::default())
                };
                let frame = AgentFrame::Event(event);
                self.agent.emit(&frame).expect("a typed frame");
            }
            Op::CallTool => {
                if let Ok(call) = self.agent.call_host_tool("tc", "tool", json!({})) {
                    assert!(!self.closed);
                    self.calls.push(call);
                }
            }
            Op::RequestUri(write) => {
                let operation = if write {
                    HostUriOperation::Write("w".into())
                } else {
                    HostUriOperation::Read
                };
                if let Ok(request) = self.agent.request_host_uri("db://x", operation) {
                    assert!(!self.closed);
                    self.uris.push(request);
                }
            }
            Op::Dialog(timeout) => {
                let request = UiRequest::Select(SelectRequest {
                    title: "t".into(),
                    timeout: timeout.map(Into::into),
                    ..SelectRequest::default()
                });
                if let Ok(dialog) = self.agent.ui_dialog(now, request) {
                    assert!(!self.closed);
                    self.dialogs.push(dialog);
                }
            }
            Op::Notice => {
                let notice = UiRequest::Notify(crate::wire::NotifyRequest {
                    message: "m".into(),
                    ..Default::default()
                });
                self.agent.ui_notice(notice).expect("a notice");
            }
            Op::CancelTool(n) => {
                if let Some(call) = Self::pick(&self.calls, n) {
                    if self.agent.cancel_host_tool(call) {
                        self.resolve(call.wire());
                    }
                }
            }
            Op::CancelUri(n) => {
                if let Some(request) = Self::pick(&self.uris, n) {
                    if self.agent.cancel_host_uri(request) {
                        self.resolve(request.wire());
                    }
                }
            }
            Op::CancelDialog(n) => {
                if let Some(dialog) = Self::pick(&self.dialogs, n) {
                    if self.agent.ui_cancel(dialog) {
                        self.resolve(dialog.wire());
                    }
                }
            }
            Op::Advance(ms) => {
                self.now += Duration::from_millis(u64::from(ms) * 8);
                self.agent.handle_timeout(self.now);
                self.drain();
                assert!(self.agent.poll_timeout().is_none_or(|t| t > self.now));
            }
            Op::Eof => {
                self.agent.handle_stdin_eof(now);
                self.closed = true;
            }
        }
        self.drain();
        if self.closed {
            assert_eq!(self.agent.pending_host_requests(), 0);
            let made = self.calls.len() + self.uris.len() + self.dialogs.len();
            assert_eq!(
                self.resolved.len(),
                made,
                "every host request resolved after the end"
            );
        }
    }
}

/// Runs a sequence of ops on a fresh agent. Panics when an invariant breaks.
pub fn run(ops: Vec<Op>, unknown_commands: UnknownCommands) {
    let mut h = Harness::new(unknown_commands);
    for op in ops {
        h.step(op);
    }
}

/// The fuzz target: reads ops from the input and runs them.
pub fn agent_session(data: &[u8]) {
    let mut input = Unstructured::new(data);
    let unknown_commands = if bool::arbitrary(&mut input).unwrap_or(false) {
        UnknownCommands::Deliver
    } else {
        UnknownCommands::Reject
    };
    let mut ops = Vec::new();
    while let Ok(op) = Op::arbitrary(&mut input) {
        ops.push(op);
        if ops.len() >= 256 {
            break;
        }
    }
    run(ops, unknown_commands);
}
