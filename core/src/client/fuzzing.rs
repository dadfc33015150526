//! The fuzz body for the [`Client`] (feature `fuzzing`): `fuzz/fuzz_targets/client_session.rs`
//! is a thin wrapper, and `core/tests/fuzz_bodies/client.rs` runs it on seeds under cargo test.
//!
//! The input is read as a sequence of [`Op`]s: raw stdout bytes, well-formed agent frames
//! (ready, responses to the ids the client actually wrote, history pages, chunked frames over
//! 1 MiB, host calls, dialogs, raw chunk frames with arbitrary metadata), application calls,
//! timer advances, stderr, EOF, exit, stop and restart. Checked after every op:
//! - nothing panics;
//! - pending state is bounded: [`Client::pending_requests`] never exceeds what the session
//!   asked for (one per command, two per history read, one for the negotiation);
//! - no request is answered twice, and no answer names a request the application never made;
//! - after [`Input::Timeout`] the next timeout is in the future (no busy loop);
//! - once the session closes, every request the application made got exactly one
//!   `Response` or `History` event.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use arbitrary::{Arbitrary, Unstructured};
use serde_json::{json, Value};

use super::{
    Action, Call, CallResult, Client, ClientConfig, ClientEvent, ExitStatus, Input, RequestId,
    StreamingBehavior,
};
use crate::frame::{FrameEncoder, ProtocolVersion};
use crate::wire::{Command, HostUriResult, HostUriSchemeDefinition, ToolResult, UiResponse};

/// What the agent writes, built so that most inputs reach the client's routing.
#[derive(Debug, Clone, Arbitrary)]
pub enum AgentLine {
    /// A ready frame; `v2` offers version 2, `over` asks for more than the client allows.
    Ready {
        /// Offers v2.
        v2: bool,
        /// Advertises a larger maxFrameBytes than the client accepts.
        over: bool,
    },
    /// A response to the `which`-th command the client wrote (its id and type), successful
    /// or not, shaped for its command (negotiation, page, messages).
    Response {
        /// Which written command (modulo how many there are).
        which: u16,
        /// Success.
        ok: bool,
        /// The failure's code: none, session_busy, stale_cursor, other.
        code: u8,
        /// For a page: the next cursor (none when 0).
        cursor: u8,
        /// For a page: totalMessages, and how many messages this page carries.
        total: u8,
    },
    /// An id-less failure for a command type the client wrote (or `parse`).
    IdlessFailure {
        /// Which written command, or parse when out of range.
        which: u16,
    },
    /// `prompt_result` for the `which`-th written command.
    PromptResult {
        /// Which written command.
        which: u16,
        /// `agentInvoked`.
        invoked: bool,
    },
    /// `agent_start`.
    AgentStart,
    /// `agent_end`, with `isTerminal` when given.
    AgentEnd(Option<bool>),
    /// `todo_reminder`.
    TodoReminder,
    /// `host_tool_call` with id `h<n>`.
    HostToolCall(u8),
    /// `host_tool_cancel` of `h<n>`.
    HostToolCancel(u8),
    /// pi's extension announcing itself (HOST-10).
    PiAnnounce,
    /// A host tool call through pi's extension: an `input` dialog `p<n>` for tool call
    /// `pc<n>`, its placeholder a call unless `garbled` (HOST-10).
    PiCall {
        /// The dialog's number.
        n: u8,
        /// The placeholder is no call.
        garbled: bool,
    },
    /// pi's extension saying tool call `pc<n>` was aborted (HOST-10).
    PiCancel(u8),
    /// `host_uri_request` with id `u<n>`.
    HostUriRequest(u8),
    /// `host_uri_cancel` of `u<n>`.
    HostUriCancel(u8),
    /// `extension_ui_request` with id `d<n>`, a method by number, an optional timeout (ms).
    Ui {
        /// The id's number.
        id: u8,
        /// select, confirm, input, editor, notify, setStatus, cancel (of `d<id>`), other.
        method: u8,
        /// The timeout in ms.
        timeout: Option<u16>,
    },
    /// A frame over 1 MiB (chunked once the agent speaks v2); at most one per input.
    Big,
    /// An `rpc_chunk` frame with arbitrary metadata.
    Chunk {
        /// `index`.
        index: u16,
        /// `count`.
        count: u16,
        /// `byteLength`, in KiB.
        kib: u32,
        /// Valid base64 data when true.
        valid: bool,
    },
    /// A frame of a type nobody knows.
    Unknown,
}

/// One step of a fuzzed session.
#[derive(Debug, Clone, Arbitrary)]
pub enum Op {
    /// Raw bytes on stdout.
    Raw(Vec<u8>),
    /// A frame on stdout, encoded as the agent would (chunked after v2), handed in as two
    /// reads cut at `cut` (modulo its length).
    Frame(AgentLine, u16),
    /// Bytes on stderr.
    Stderr(Vec<u8>),
    /// `send` of a command by number (get_state, bash, abort_bash, get_messages,
    /// get_messages_page, prompt, frobnicate, a non-object).
    Send(u8),
    /// `prompt`, with a streaming behaviour when given (true: steer).
    Prompt(Option<bool>),
    /// `read_history`.
    ReadHistory,
    /// `set_host_tools` with a valid (true) or invalid tool.
    SetHostTools(bool),
    /// `set_host_uri_schemes` with a valid (true) or reserved scheme.
    SetHostUriSchemes(bool),
    /// `host_tool_update` for `h<n>` (`p<n>`, a call through pi's extension, when `n & 8`).
    HostToolUpdate(u8),
    /// `host_tool_result` for `h<n>` (`p<n>` when `n & 8`), an error when true.
    HostToolResult(u8, bool),
    /// `host_uri_result` for `u<n>`.
    HostUriResult(u8),
    /// `ui_respond` for `d<n>`.
    UiRespond(u8),
    /// Time passes (ms, times 16), then the timer (`Input::Timeout`).
    Advance(u16),
    /// Stdout ends.
    Eof,
    /// The agent exits with this code.
    Exit(i8),
    /// The application stops the session.
    Stop,
    /// The application starts the client again.
    Restart,
}

/// What the harness knows about the session.
struct Harness {
    client: Client,
    now: Instant,
    encoder: FrameEncoder,
    /// (wire id, command type) of each command the client wrote, this session.
    written: Vec<(String, String)>,
    /// Answers per application request, all sessions.
    answers: BTreeMap<RequestId, u32>,
    /// Requests asked for since the last (re)start, and their weight in pending state.
    budget: usize,
    big_used: bool,
}

/// The client's own requests at a start: the negotiation and the start-up probe (FRAME-03).
const NEGOTIATION: usize = 2;

impl Harness {
    fn new() -> Self {
        let now = Instant::now();
        Harness {
            client: Client::new(ClientConfig::default(), now),
            now,
            encoder: FrameEncoder::new(),
            written: Vec::new(),
            answers: BTreeMap::new(),
            budget: NEGOTIATION,
            big_used: false,
        }
    }

    fn drain(&mut self) {
        while let Some(action) = self.client.poll_action() {
            match action {
                Action::Write { bytes } => {
                    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                        let value: Value =
                            serde_json::from_slice(line).expect("the client writes JSON lines");
                        if let (Some(id), Some(kind)) = (
                            value.get("id").and_then(Value::as_str),
                            value.get("type").and_then(Value::as_str),
                        ) {
                            self.written.push((id.to_owned(), kind.to_owned()));
                        }
                    }
                }
                Action::StopAgent | Action::SpillWrite { .. } => {}
                Action::Event(
                    ClientEvent::Response { request, .. } | ClientEvent::History { request, .. },
                ) => {
                    let count = self
                        .answers
                        .get_mut(&request)
                        .unwrap_or_else(|| panic!("an answer to {request:?}, never requested"));
                    *count += 1;
                    assert_eq!(*count, 1, "{request:?} answered twice");
                }
                Action::Event(_) => {}
            }
        }
        assert!(
            self.client.pending_requests() <= self.budget,
            "pending requests {} exceed what was asked for ({})",
            self.client.pending_requests(),
            self.budget
        );
        if self.client.is_closed() {
            assert_eq!(self.client.pending_requests(), 0);
            for (request, count) in &self.answers {
                assert_eq!(
                    *count, 1,
                    "{request:?} not answered once the session closed"
                );
            }
        }
    }

    /// Hands `input` in at the harness's time, as every driver does.
    fn input(&mut self, input: Input<'_>) -> CallResult {
        self.client.handle(self.now, input)
    }

    fn requested(&mut self, result: CallResult, weight: usize) {
        if let Some(id) = result.request() {
            assert!(
                self.answers.insert(id, 0).is_none(),
                "request id {id:?} reused"
            );
            self.budget += weight;
        }
    }

    fn stdout(&mut self, bytes: &[u8], cut: usize) {
        let cut = if bytes.is_empty() {
            0
        } else {
            cut % bytes.len()
        };
        self.input(Input::stdout(&bytes[..cut]));
        self.input(Input::stdout(&bytes[cut..]));
    }

    fn written(&self, which: u16) -> Option<(String, String)> {
        if self.written.is_empty() {
            return None;
        }
        Some(self.written[usize::from(which) % self.written.len()].clone())
    }

    fn frame(&mut self, frame: AgentLine) -> Option<Value> {
        Some(match frame {
            AgentLine::Ready { v2, over } => json!({
                "type": "ready", "protocolVersion": 1,
                "supportedProtocolVersions": if v2 { json!([1, 2]) } else { json!([1]) },
                "maxFrameBytes": if over { 2_097_152 } else { 1_048_576 },
                "maxReassembledFrameBytes": 67_108_864,
            }),
            AgentLine::Response {
                which,
                ok,
                code,
                cursor,
                total,
            } => {
                let (id, command) = self.written(which)?;
                if !ok {
                    let mut failure = json!({"id": id, "type": "response", "command": command, "success": false, "error": "failed"});
                    match code % 4 {
                        1 => failure["code"] = "session_busy".into(),
                        2 => failure["code"] = "stale_cursor".into(),
                        3 => failure["code"] = "other".into(),
                        _ => {}
                    }
                    return Some(failure);
                }
                let messages: Vec<Value> = (0..total % 4)
                    .map(|i| json!({"role": "user", "content": i}))
                    .collect();
                let data = match command.as_str() {
                    "negotiate_protocol" => json!({"protocolVersion": 2}),
                    "get_messages" => json!({"messages": messages}),
                    "get_messages_page" => {
                        let mut page = json!({"messages": messages, "totalMessages": total % 8});
                        if cursor != 0 {
                            page["nextCursor"] = format!("c{}", cursor % 8).into();
                        }
                        page
                    }
                    "prompt" if total % 2 == 0 => json!({"agentInvoked": false}),
                    _ => json!({}),
                };
                json!({"id": id, "type": "response", "command": command, "success": true, "data": data})
            }
            AgentLine::IdlessFailure { which } => {
                let command = self
                    .written(which)
                    .filter(|_| which % 5 != 0)
                    .map_or("parse".to_owned(), |(_, c)| c);
                json!({"type": "response", "command": command, "success": false, "error": format!("Unknown command: {command}")})
            }
            AgentLine::PromptResult { which, invoked } => {
                let (id, _) = self.written(which)?;
                json!({"type": "prompt_result", "id": id, "agentInvoked": invoked})
            }
            AgentLine::AgentStart => json!({"type": "agent_start"}),
            AgentLine::AgentEnd(terminal) => match terminal {
                Some(t) => json!({"type": "agent_end", "messages": [], "isTerminal": t}),
                None => json!({"type": "agent_end", "messages": []}),
            },
            AgentLine::TodoReminder => json!({"type": "todo_reminder", "todos": []}),
            AgentLine::HostToolCall(n) => {
                json!({"type": "host_tool_call", "id": format!("h{}", n % 8), "toolCallId": "c", "toolName": "t", "arguments": {}})
            }
            AgentLine::HostToolCancel(n) => {
                json!({"type": "host_tool_cancel", "id": "x", "targetId": format!("h{}", n % 8)})
            }
            AgentLine::PiAnnounce => {
                json!({"type": "extension_ui_request", "id": "pa", "method": "setStatus", "statusKey": "musewire:host_tools", "statusText": "1"})
            }
            AgentLine::PiCall { n, garbled } => {
                let placeholder = if garbled {
                    "{".to_owned()
                } else {
                    json!({"toolCallId": format!("pc{}", n % 8), "toolName": "t", "arguments": {}})
                        .to_string()
                };
                json!({"type": "extension_ui_request", "id": format!("p{}", n % 8), "method": "input", "title": "musewire:host_tool_call", "placeholder": placeholder})
            }
            AgentLine::PiCancel(n) => {
                json!({"type": "extension_ui_request", "id": "pk", "method": "setStatus", "statusKey": "musewire:host_tool_cancel", "statusText": format!("pc{}", n % 8)})
            }
            AgentLine::HostUriRequest(n) => {
                json!({"type": "host_uri_request", "id": format!("u{}", n % 8), "operation": "read", "url": "db://x"})
            }
            AgentLine::HostUriCancel(n) => {
                json!({"type": "host_uri_cancel", "id": "x", "targetId": format!("u{}", n % 8)})
            }
            AgentLine::Ui {
                id,
                method,
                timeout,
            } => {
                let methods = [
                    "select",
                    "confirm",
                    "input",
                    "editor",
                    "notify",
                    "setStatus",
                    "cancel",
                    "open_url",
                ];
                let mut ui = json!({"type": "extension_ui_request", "id": format!("d{}", id % 8), "method": methods[usize::from(method) % methods.len()]});
                if method % 8 == 6 {
                    ui["targetId"] = format!("d{}", (id / 8) % 8).into();
                }
                if let Some(ms) = timeout {
                    ui["timeout"] = ms.into();
                }
                ui
            }
            AgentLine::Big => {
                if self.big_used {
                    return None;
                }
                self.big_used = true;
                json!({"type": "message_end", "message": {"role": "assistant", "text": "z".repeat(1_100_000)}})
            }
            AgentLine::Chunk {
                index,
                count,
                kib,
                valid,
            } => json!({
                "type": "rpc_chunk", "chunkId": "rpc-1", "index": index % 300, "count": count % 300,
                "byteLength": u64::from(kib % 70_000) * 1024,
                "data": if valid { "QUJD" } else { "QUJ" },
            }),
            AgentLine::Unknown => json!({"type": "from_the_future", "x": 1}),
        })
    }

    fn op(&mut self, op: Op) {
        match op {
            Op::Raw(bytes) => {
                self.input(Input::stdout(&bytes));
            }
            Op::Frame(frame, cut) => {
                let Some(value) = self.frame(frame) else {
                    return;
                };
                let bytes = self.encoder.encode_to_vec(&value);
                // The agent switches to v2 right after a successful negotiation response.
                if value["command"] == "negotiate_protocol" && value["success"] == true {
                    self.encoder.set_protocol(ProtocolVersion::V2);
                }
                self.stdout(&bytes, usize::from(cut));
            }
            Op::Stderr(bytes) => {
                self.input(Input::stderr(&bytes));
            }
            Op::Send(kind) => {
                let command = match kind % 8 {
                    0 => json!({"type": "get_state"}),
                    1 => json!({"type": "bash", "command": "true"}),
                    2 => json!({"type": "abort_bash"}),
                    3 => json!({"type": "get_messages"}),
                    4 => json!({"type": "get_messages_page", "limit": 256}),
                    5 => json!({"type": "prompt", "message": "hi"}),
                    6 => json!({"type": "frobnicate"}),
                    _ => json!(["not", "an", "object"]),
                };
                let command = Command::from_value_with_id(command.clone())
                    .map(|(_, c)| c)
                    .unwrap_or(Command::Unknown(command));
                let result = self.input(Input::Call(Call::Send(command)));
                self.requested(result, 1);
            }
            Op::Prompt(behavior) => {
                let behavior = behavior.map(|steer| {
                    if steer {
                        StreamingBehavior::Steer
                    } else {
                        StreamingBehavior::FollowUp
                    }
                });
                let result = self.input(Input::Call(Call::Prompt("hi".into(), behavior)));
                self.requested(result, 1);
            }
            Op::ReadHistory => {
                let result = self.input(Input::Call(Call::ReadHistory));
                self.requested(result, 2);
            }
            Op::SetHostTools(valid) => {
                let tool = if valid {
                    json!({"name": "t", "description": "d", "parameters": {"type": "object"}})
                } else {
                    json!({"name": " ", "description": "d", "parameters": {}})
                };
                let tool = serde_json::from_value(tool).expect("a tool definition");
                let result = self.input(Input::Call(Call::SetHostTools(vec![tool])));
                self.requested(result, 1);
            }
            Op::SetHostUriSchemes(valid) => {
                let scheme = if valid { " DB " } else { "security" };
                let result = self.input(Input::Call(Call::SetHostUriSchemes(vec![
                    HostUriSchemeDefinition {
                        scheme: scheme.into(),
                        ..Default::default()
                    },
                ])));
                self.requested(result, 1);
            }
            Op::HostToolUpdate(n) => {
                self.input(Input::Call(Call::HostToolUpdate(
                    host_call_id(n),
                    ToolResult::default(),
                )));
            }
            Op::HostToolResult(n, error) => {
                self.input(Input::Call(Call::HostToolResult {
                    id: host_call_id(n),
                    result: ToolResult::default(),
                    is_error: error,
                }));
            }
            Op::HostUriResult(n) => {
                let result = HostUriResult {
                    content: Some("x".into()),
                    ..Default::default()
                };
                self.input(Input::Call(Call::HostUriResult(
                    format!("u{}", n % 8),
                    result,
                )));
            }
            Op::UiRespond(n) => {
                let id = format!("d{}", n % 8);
                let answer = UiResponse::confirm(id.clone());
                self.input(Input::Call(Call::UiRespond(id, answer)));
            }
            Op::Advance(ms) => {
                self.now += Duration::from_millis(u64::from(ms) * 16);
                self.input(Input::Timeout);
                if let Some(next) = self.client.poll_timeout() {
                    assert!(next > self.now, "a timeout due now was not handled");
                }
            }
            Op::Eof => {
                self.input(Input::StdoutEnd);
            }
            Op::Exit(code) => {
                let exit = Input::Exit(ExitStatus::Code(i32::from(code)), b"tail"[..].into());
                self.input(exit);
            }
            Op::Stop => {
                self.input(Input::Call(Call::Stop));
            }
            Op::Restart => {
                self.input(Input::Call(Call::Restart));
                // The old session's requests were all failed by now.
                self.drain();
                self.restarted();
            }
        }
        self.drain();
    }

    fn restarted(&mut self) {
        self.encoder = FrameEncoder::new();
        self.written.clear();
        self.budget = NEGOTIATION;
    }
}

/// Runs a scripted session and checks the invariants of the module docs.
pub fn run(ops: impl IntoIterator<Item = Op>) {
    let mut h = Harness::new();
    h.drain();
    for op in ops {
        h.op(op);
    }
    // End the session: every request must then be answered exactly once.
    h.input(Input::StdoutEnd);
    h.input(Input::exit(ExitStatus::Code(0)));
    h.drain();
    assert!(h.client.is_closed());
    for (request, count) in &h.answers {
        assert_eq!(*count, 1, "{request:?} not answered exactly once");
    }
}

/// `client_session`: the fuzz target's body. Reads up to 256 [`Op`]s from `data`.
pub fn client_session(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let mut ops = Vec::new();
    while !u.is_empty() && ops.len() < 256 {
        match Op::arbitrary(&mut u) {
            Ok(op) => ops.push(op),
            Err(_) => break,
        }
    }
    run(ops);
}

/// The host tool call an op answers: `h<n>`, or `p<n>` (through pi's extension) when `n & 8`.
fn host_call_id(n: u8) -> String {
    let kind = if n & 8 != 0 { 'p' } else { 'h' };
    format!("{kind}{}", n % 8)
}
