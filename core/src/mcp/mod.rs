//! A sans-IO MCP client (rules MCP-*): one [`McpServer`] per MCP server process, so that the
//! editor's MCP servers reach any agent as host tools (HOST-01..03).
//!
//! The machine follows the crate's run-loop contract (the [crate docs](crate)): the driver
//! hands in the server's stdout, its end and its exit, the agent's host tool calls and
//! cancels, and timers through [`McpServer::handle`]; drains [`McpServer::poll_action`] (bytes
//! for the server's stdin, the tool set to register, a call's result, a notice for the user,
//! the process to stop) and sleeps until [`McpServer::poll_timeout`]. It speaks MCP's stdio
//! transport: newline-delimited JSON-RPC 2.0, each line at most 32 MiB.
//!
//! Its life (MCP-02..07): `initialize` is written at once and must be answered within the
//! start-up budget ([`McpConfig::init_budget`]); then `notifications/initialized` and
//! `tools/list` (every page, at most 16), and the tools are given as
//! [`Action::Tools`], named `mcp__SERVER__TOOL`. A host tool call becomes `tools/call`, its
//! result's content shown through [`crate::blocks`]; an MCP error, a call past
//! [`McpConfig::call_budget`], or a server that has gone answers the call as an error, never
//! leaves it waiting. `notifications/tools/list_changed` lists the tools again. A server that
//! writes a line that is not JSON-RPC, exits, or misses its start-up budget has failed: its
//! tools are withdrawn (an empty [`Action::Tools`]), its calls answered as errors, a notice
//! given and the process stopped.
//!
//! ```
//! use std::time::Instant;
//! use musewire_core::mcp::{Action, McpConfig, McpServer, Input};
//!
//! let now = Instant::now();
//! let mut server = McpServer::new("fs", now, McpConfig::default());
//! let Some(Action::Write { bytes }) = server.poll_action() else { panic!() };
//! assert!(bytes.starts_with(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\""));
//! server.handle(now, Input::Stdout(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}}}}\n"));
//! server.handle(now, Input::Stdout(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}]}}\n"));
//! let tools: Vec<_> = std::iter::from_fn(|| server.poll_action())
//!     .filter_map(|a| match a { Action::Tools(t) => Some(t), _ => None })
//!     .collect();
//! assert_eq!(tools[0][0].name, "mcp__fs__echo");
//! ```

#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod http;
pub(crate) mod sse;
mod tools;
pub(crate) mod types;

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

pub(crate) use tools::name_part;
use tools::ToolSet;
#[cfg(feature = "acp")]
pub(crate) use tools::TOOL_PREFIX;
use types::{
    CallToolParams, CallToolResult, Implementation, InitializeParams, InitializeResult,
    ListToolsResult, RpcError, PROTOCOL_VERSION,
};

use crate::blocks::{self, LiveBlock, Source};
use crate::frame::{Line, LineDecoder};
use crate::wire::{ContentBlock, HostToolDefinition, ToolResult};

/// The longest line taken from a server: 32 MiB, as the editor's (ACP-07). A longer line is
/// skipped with a notice; a call it answered runs into its budget.
pub(crate) const MAX_LINE_BYTES: usize = 32 * 1024 * 1024;

/// The most pages of `tools/list` read; the tools of later pages are left out, with a notice.
pub(crate) const MAX_LIST_PAGES: usize = 16;

/// The most `tools/call`s waiting on one server; a call past it is answered as an error.
pub(crate) const MAX_PENDING_CALLS: usize = 64;

/// How long a server may take to answer `initialize` and list its tools (as codex's
/// `startup_timeout_sec`).
pub(crate) const INIT_BUDGET: Duration = Duration::from_secs(10);

/// How long a `tools/call` may take before it is answered as an error and cancelled.
pub(crate) const CALL_BUDGET: Duration = Duration::from_secs(60);

/// How an [`McpServer`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpConfig {
    /// The start-up budget: `initialize` and the first listing (default 10 s).
    pub init_budget: Duration,
    /// A call's budget (default 60 s).
    pub call_budget: Duration,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            init_budget: INIT_BUDGET,
            call_budget: CALL_BUDGET,
        }
    }
}

/// One input to an [`McpServer`].
#[derive(Debug, Clone, PartialEq)]
pub enum Input<'a> {
    /// Bytes read from the server's stdout.
    Stdout(&'a [u8]),
    /// One whole JSON-RPC message, from a transport that frames messages itself (HTTP, MCP-11):
    /// read as a line of stdout is, without its line bound.
    Message(&'a [u8]),
    /// The server's stdout ended.
    StdoutEnd,
    /// The server exited, or could not be started.
    Exit,
    /// The time of [`McpServer::poll_timeout`] has come.
    Timeout,
    /// The agent calls one of the server's tools (HOST-02): its host tool call id, the host
    /// tool name (`mcp__SERVER__TOOL`) and the arguments.
    Call {
        /// The host tool call's id, which the result carries.
        id: String,
        /// The host tool name.
        tool: String,
        /// The arguments, as the agent sent them.
        arguments: Value,
    },
    /// The agent withdrew a call (HOST-03): no result is given for it.
    Cancel {
        /// The host tool call's id.
        id: String,
    },
    /// The session ends: the server is stopped.
    Stop,
}

/// Work for the driver, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Write these bytes to the server's stdin: complete JSON-RPC lines.
    Write {
        /// One or more JSON-RPC messages, each ending in a newline.
        #[serde(serialize_with = "as_text")]
        bytes: Vec<u8>,
    },
    /// The server's tools are now these (empty: withdrawn); register them with the agent.
    Tools(Vec<HostToolDefinition>),
    /// A host tool call's answer: its result, and whether it is an error.
    Result {
        /// The host tool call's id.
        id: String,
        /// The server's content made the agent's: each block through the credential check
        /// and the model's cap (`core::blocks`), as text and image blocks.
        result: ToolResult,
        /// Whether the call failed.
        is_error: bool,
    },
    /// Tell the user this (plain text naming the server; the caller brackets it).
    Notice(String),
    /// Stop the server's process (its process group). Comes once.
    Stop,
}

fn as_text<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(bytes))
}

/// Where the server is.
#[derive(Debug, Clone, PartialEq)]
enum State {
    /// `initialize` written, due by the deadline.
    Initializing { deadline: Instant },
    /// Answered; its tools are listed (if the deadline is set, the first listing is due by it).
    Ready { first_listing: Option<Instant> },
    /// It failed or was stopped: every call is answered as an error.
    Gone { reason: String },
}

/// What one of our requests waits for.
#[derive(Debug, Clone)]
enum Pending {
    Initialize,
    List,
    Call {
        id: String,
        tool: String,
        deadline: Instant,
    },
}

/// One MCP server, as its client. See the [module docs](self).
#[derive(Debug)]
pub struct McpServer {
    name: String,
    part: String,
    config: McpConfig,
    state: State,
    reader: LineDecoder,
    next_id: u64,
    pending: BTreeMap<u64, Pending>,
    tools: ToolSet,
    /// The pages of a listing under way.
    listing: Option<(Vec<Value>, usize)>,
    /// A `list_changed` came while a listing was under way.
    relist: bool,
    stopped: bool,
    /// The version `initialize` was answered with.
    protocol_version: Option<String>,
    actions: VecDeque<Action>,
}

impl McpServer {
    /// A client for the server the editor named `name`, with `initialize` queued.
    pub fn new(name: &str, now: Instant, config: McpConfig) -> Self {
        let mut server = McpServer {
            name: name.to_owned(),
            part: name_part(name),
            config,
            state: State::Initializing {
                deadline: now + config.init_budget,
            },
            reader: LineDecoder::new(MAX_LINE_BYTES + 1),
            next_id: 0,
            pending: BTreeMap::new(),
            tools: ToolSet::default(),
            listing: None,
            relist: false,
            stopped: false,
            protocol_version: None,
            actions: VecDeque::new(),
        };
        server.request(
            "initialize",
            json!(initialize_params()),
            Pending::Initialize,
        );
        server
    }

    /// The server's name, as the editor gave it.
    pub fn name(&self) -> &str {
        &self.name
    }

    #[cfg(any(feature = "acp", test))]
    /// Whether `tool` (a host tool name) is one of this server's, by its prefix.
    pub(crate) fn owns(&self, tool: &str) -> bool {
        tool.strip_prefix(tools::TOOL_PREFIX)
            .and_then(|rest| rest.strip_prefix(self.part.as_str()))
            .is_some_and(|rest| rest.starts_with("__"))
    }

    #[cfg(any(feature = "acp", test))]
    /// Whether the host tool call `id` waits on this server.
    pub(crate) fn has_call(&self, id: &str) -> bool {
        self.pending
            .values()
            .any(|p| matches!(p, Pending::Call { id: c, .. } if c == id))
    }

    /// Whether our request `request` (its JSON-RPC id) still waits for its answer.
    pub(crate) fn is_waiting(&self, request: u64) -> bool {
        self.pending.contains_key(&request)
    }

    /// The protocol version the server answered `initialize` with, once it has.
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// Starts again from `initialize` (a transport that lost its session, MCP-12): every call
    /// waiting is answered as an error, a listing under way is dropped, the tools stay
    /// registered until the new listing replaces them; a server that is gone stays gone.
    pub(crate) fn restart(&mut self, now: Instant, why: &str) {
        if self.is_gone() {
            return;
        }
        for (_, pending) in std::mem::take(&mut self.pending) {
            if let Pending::Call { id, tool, .. } = pending {
                let text = format!(
                    "MCP server {:?} {why} before tools/call {tool:?} was answered",
                    self.name
                );
                self.error_result(id, text);
            }
        }
        self.listing = None;
        self.relist = false;
        self.protocol_version = None;
        self.state = State::Initializing {
            deadline: now + self.config.init_budget,
        };
        self.request(
            "initialize",
            json!(initialize_params()),
            Pending::Initialize,
        );
    }

    /// The tools registered now.
    pub fn tools(&self) -> &[HostToolDefinition] {
        &self.tools.definitions
    }

    #[cfg(feature = "acp")]
    /// Whether the server is starting: `initialize` or the first listing not answered yet.
    pub(crate) fn is_starting(&self) -> bool {
        matches!(
            self.state,
            State::Initializing { .. }
                | State::Ready {
                    first_listing: Some(_)
                }
        )
    }

    /// Whether the server has failed or been stopped.
    pub(crate) fn is_gone(&self) -> bool {
        matches!(self.state, State::Gone { .. })
    }

    /// The next action, if any.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When [`Input::Timeout`] is next due: the start-up budget, or a call's.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let start = match self.state {
            State::Initializing { deadline } => Some(deadline),
            State::Ready { first_listing } => first_listing,
            State::Gone { .. } => None,
        };
        self.pending
            .values()
            .filter_map(|p| match p {
                Pending::Call { deadline, .. } => Some(*deadline),
                _ => None,
            })
            .chain(start)
            .min()
    }

    /// Hands in one input.
    pub fn handle(&mut self, now: Instant, input: Input<'_>) {
        match input {
            Input::Stdout(bytes) => {
                let mut reader = std::mem::replace(&mut self.reader, LineDecoder::new(2));
                reader.push(bytes, &mut |line| self.line(now, line));
                self.reader = reader;
            }
            Input::StdoutEnd => {
                let mut reader = std::mem::replace(&mut self.reader, LineDecoder::new(2));
                reader.finish(&mut |line| self.line(now, line));
                self.reader = reader;
                self.fail("closed its stdout");
            }
            Input::Message(bytes) => self.message(now, bytes),
            Input::Exit => self.fail("exited"),
            Input::Timeout => self.timeout(now),
            Input::Call {
                id,
                tool,
                arguments,
            } => self.call(now, id, &tool, &arguments),
            Input::Cancel { id } => self.cancel(&id),
            Input::Stop => self.end("stopped with the session", false),
        }
    }

    fn request(&mut self, method: &str, params: Value, pending: Pending) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(id, pending);
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn write(&mut self, message: &Value) {
        let mut bytes = serde_json::to_vec(message).unwrap_or_default();
        bytes.push(b'\n');
        self.actions.push_back(Action::Write { bytes });
    }

    fn notice(&mut self, text: String) {
        self.actions
            .push_back(Action::Notice(format!("MCP server {:?} {text}", self.name)));
    }

    fn line(&mut self, now: Instant, line: Line<'_>) {
        if self.is_gone() {
            return;
        }
        let bytes = match line {
            Line::Text(bytes) => bytes,
            Line::TooLong => {
                return self.notice(format!(
                    "wrote a message over {MAX_LINE_BYTES} bytes; it was skipped"
                ))
            }
        };
        self.message(now, bytes);
    }

    fn message(&mut self, now: Instant, bytes: &[u8]) {
        if self.is_gone() {
            return;
        }
        let Ok(Value::Object(mut message)) = crate::wire::parse_value(bytes) else {
            // MCP-06: stdout holds only MCP messages; anything else is a broken server.
            return self.fail("wrote something that is not a JSON-RPC message");
        };
        if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return self.fail("wrote something that is not a JSON-RPC message");
        }
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let id = message.remove("id");
        match (method, id) {
            (Some(method), Some(id)) => self.server_request(&method, id),
            (Some(method), None) => self.server_notification(&method),
            (None, Some(id)) => {
                let outcome = match (message.remove("result"), message.remove("error")) {
                    (Some(result), None) => Ok(result),
                    (None, Some(error)) => Err(error),
                    _ => return self.fail("wrote a response with neither a result nor an error"),
                };
                if let Some(pending) = id.as_u64().and_then(|id| self.pending.remove(&id)) {
                    self.answer(now, pending, outcome);
                }
            }
            (None, None) => self.fail("wrote something that is not a JSON-RPC message"),
        }
    }

    /// MCP-07: the server's requests: `ping` answered, anything else not offered.
    fn server_request(&mut self, method: &str, id: Value) {
        let answer = if method == "ping" {
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        } else {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("method not found: {method}")}})
        };
        self.write(&answer);
    }

    fn server_notification(&mut self, method: &str) {
        // MCP-04: a changed list is listed again.
        if method == "notifications/tools/list_changed" && !self.is_gone() {
            if self.listing.is_some() || matches!(self.state, State::Initializing { .. }) {
                self.relist = true;
            } else {
                self.list(None);
            }
        }
    }

    fn list(&mut self, cursor: Option<String>) {
        let params = match &cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        if cursor.is_none() {
            self.listing = Some((Vec::new(), 0));
        }
        self.request("tools/list", params, Pending::List);
    }

    fn answer(&mut self, now: Instant, pending: Pending, outcome: Result<Value, Value>) {
        match pending {
            Pending::Initialize => self.initialized(now, outcome),
            Pending::List => self.listed(outcome),
            Pending::Call { id, tool, .. } => self.called(id, &tool, outcome),
        }
    }

    fn initialized(&mut self, now: Instant, outcome: Result<Value, Value>) {
        let result = match outcome {
            Ok(result) => result,
            Err(error) => {
                return self.fail(&format!("refused initialize: {}", error_text(&error)));
            }
        };
        let Ok(result) = serde_json::from_value::<InitializeResult>(result) else {
            return self.fail("answered initialize with something that is not its result");
        };
        self.protocol_version = Some(result.protocol_version.clone());
        self.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        if result.capabilities.tools.is_none() {
            self.state = State::Ready {
                first_listing: None,
            };
            return;
        }
        self.state = State::Ready {
            first_listing: Some(now + self.config.init_budget),
        };
        self.relist = false;
        self.list(None);
    }

    fn listed(&mut self, outcome: Result<Value, Value>) {
        let page = match outcome {
            Ok(result) => serde_json::from_value::<ListToolsResult>(result).ok(),
            Err(error) => {
                self.listing = None;
                self.notice(format!("refused tools/list: {}", error_text(&error)));
                return self.listing_done();
            }
        };
        let Some(page) = page else {
            return self.fail("answered tools/list with something that is not its result");
        };
        let Some((mut tools, pages)) = self.listing.take() else {
            return;
        };
        tools.extend(page.tools);
        let pages = pages + 1;
        match page.next_cursor {
            Some(cursor) if pages < MAX_LIST_PAGES => {
                self.listing = Some((tools, pages));
                self.request("tools/list", json!({ "cursor": cursor }), Pending::List);
            }
            more => {
                if more.is_some() {
                    self.notice(format!(
                        "has more than {MAX_LIST_PAGES} pages of tools; the rest are left out"
                    ));
                }
                let (set, notices) = ToolSet::from_listing(&self.part, &tools);
                for notice in notices {
                    self.notice(notice);
                }
                self.tools = set;
                self.actions
                    .push_back(Action::Tools(self.tools.definitions.clone()));
                self.listing_done();
            }
        }
    }

    fn listing_done(&mut self) {
        if let State::Ready { first_listing } = &mut self.state {
            *first_listing = None;
        }
        if std::mem::take(&mut self.relist) {
            self.list(None);
        }
    }

    fn call(&mut self, now: Instant, id: String, tool: &str, arguments: &Value) {
        let reason = match &self.state {
            State::Gone { reason } => Some(format!("is not running ({reason})")),
            State::Initializing { .. } => Some("is still starting".to_owned()),
            State::Ready { .. } => None,
        };
        if let Some(reason) = reason {
            return self.error_result(id, format!("MCP server {:?} {reason}", self.name));
        }
        let Some(mcp_name) = self.tools.mcp_names.get(tool).cloned() else {
            return self.error_result(
                id,
                format!("MCP server {:?} has no tool {tool:?}", self.name),
            );
        };
        let waiting = self
            .pending
            .values()
            .filter(|p| matches!(p, Pending::Call { .. }))
            .count();
        if waiting >= MAX_PENDING_CALLS {
            return self.error_result(
                id,
                format!(
                    "MCP server {:?} has {MAX_PENDING_CALLS} calls waiting already",
                    self.name
                ),
            );
        }
        let arguments = if arguments.is_object() {
            arguments.clone()
        } else {
            json!({})
        };
        let params = json!(CallToolParams {
            name: &mcp_name,
            arguments: &arguments,
        });
        self.request(
            "tools/call",
            params,
            Pending::Call {
                id,
                tool: mcp_name,
                deadline: now + self.config.call_budget,
            },
        );
    }

    /// MCP-05: a result's content through [`crate::blocks`]; an MCP error as an error result.
    fn called(&mut self, id: String, tool: &str, outcome: Result<Value, Value>) {
        let result = match outcome {
            Ok(result) => serde_json::from_value::<CallToolResult>(result),
            Err(error) => {
                return self.error_result(
                    id,
                    format!(
                        "MCP server {:?} failed tools/call {tool:?}: {}",
                        self.name,
                        error_text(&error)
                    ),
                );
            }
        };
        let Ok(result) = result else {
            return self.error_result(
                id,
                format!(
                    "MCP server {:?} answered tools/call {tool:?} with something that is not its result",
                    self.name
                ),
            );
        };
        let is_error = result.is_error == Some(true);
        let empty = result.content.as_array().is_none_or(Vec::is_empty);
        let content = match (empty, result.structured_content) {
            (true, Some(structured)) => json!([{"type": "text", "text": structured.to_string()}]),
            _ => result.content,
        };
        let source = Source::Server {
            id: &self.name,
            address: None,
        };
        let shown = blocks::show_tool_result(
            &blocks::RawToolResult {
                content,
                is_error,
                data_is_content: true,
            },
            &source,
            blocks::DEFAULT_CAP_CHARS,
        );
        let content: Vec<ContentBlock> = shown
            .copies
            .live
            .into_iter()
            .map(|block| match block {
                LiveBlock::Text { text } => ContentBlock::text(text),
                LiveBlock::Image { data, mime_type } => ContentBlock::image(data, mime_type),
            })
            .collect();
        self.actions.push_back(Action::Result {
            id,
            result: ToolResult {
                content,
                ..ToolResult::default()
            },
            is_error,
        });
    }

    fn error_result(&mut self, id: String, text: String) {
        self.actions.push_back(Action::Result {
            id,
            result: ToolResult::text(text),
            is_error: true,
        });
    }

    /// HOST-03, MCP-05: a withdrawn call is cancelled at the server, and not answered.
    fn cancel(&mut self, id: &str) {
        let request = self
            .pending
            .iter()
            .find(|(_, p)| matches!(p, Pending::Call { id: c, .. } if c == id))
            .map(|(r, _)| *r);
        if let Some(request) = request {
            self.pending.remove(&request);
            self.cancelled(request, "the agent withdrew the call");
        }
    }

    fn cancelled(&mut self, request: u64, reason: &str) {
        self.write(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request, "reason": reason}}));
    }

    fn timeout(&mut self, now: Instant) {
        match self.state {
            State::Initializing { deadline } if deadline <= now => {
                let secs = self.config.init_budget.as_secs();
                return self.fail(&format!("did not answer initialize within {secs} s"));
            }
            State::Ready {
                first_listing: Some(deadline),
            } if deadline <= now => {
                let secs = self.config.init_budget.as_secs();
                return self.fail(&format!("did not list its tools within {secs} s"));
            }
            _ => {}
        }
        let late: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| matches!(p, Pending::Call { deadline, .. } if *deadline <= now))
            .map(|(r, _)| *r)
            .collect();
        for request in late {
            if let Some(Pending::Call { id, tool, .. }) = self.pending.remove(&request) {
                let secs = self.config.call_budget.as_secs();
                self.cancelled(request, "no answer within the call budget");
                self.error_result(
                    id,
                    format!(
                        "MCP server {:?} did not answer tools/call {tool:?} within {secs} s",
                        self.name
                    ),
                );
            }
        }
    }

    /// A transport lost our request `request` (MCP-11): it is answered as the server's error
    /// would be (a call as an error result, `initialize` as a failed start, a listing with a
    /// notice), `why` saying what happened.
    fn lost(&mut self, request: u64, why: &str) {
        match self.pending.remove(&request) {
            Some(Pending::Initialize) => self.fail(&format!("could not answer initialize: {why}")),
            Some(Pending::List) => {
                self.listing = None;
                self.notice(format!("could not answer tools/list: {why}"));
                self.listing_done();
            }
            Some(Pending::Call { id, tool, .. }) => {
                let text = format!(
                    "MCP server {:?} could not answer tools/call {tool:?}: {why}",
                    self.name
                );
                self.error_result(id, text);
            }
            None => {}
        }
    }

    /// MCP-06: the server has failed: a notice, then as [`McpServer::end`].
    fn fail(&mut self, reason: &str) {
        self.end(reason, true);
    }

    /// The server is gone: its tools withdrawn, its calls answered as errors, the process
    /// stopped; with a notice when it failed.
    fn end(&mut self, reason: &str, failed: bool) {
        if self.is_gone() {
            return;
        }
        self.state = State::Gone {
            reason: reason.to_owned(),
        };
        if failed {
            let withdrawn = if self.tools.definitions.is_empty() {
                ""
            } else {
                "; its tools are withdrawn"
            };
            self.notice(format!("{reason}{withdrawn}"));
        }
        if !self.tools.definitions.is_empty() {
            self.tools = ToolSet::default();
            self.actions.push_back(Action::Tools(Vec::new()));
        }
        self.listing = None;
        for (_, pending) in std::mem::take(&mut self.pending) {
            if let Pending::Call { id, tool, .. } = pending {
                let text = format!(
                    "MCP server {:?} {reason} before tools/call {tool:?} was answered",
                    self.name
                );
                self.error_result(id, text);
            }
        }
        if !self.stopped {
            self.stopped = true;
            self.actions.push_back(Action::Stop);
        }
    }
}

fn initialize_params() -> InitializeParams<'static> {
    InitializeParams {
        protocol_version: PROTOCOL_VERSION,
        capabilities: json!({}),
        client_info: Implementation {
            name: "musewire".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
    }
}

/// An error object's text: `message (code N)`.
fn error_text(error: &Value) -> String {
    match serde_json::from_value::<RpcError>(error.clone()) {
        Ok(error) => format!("{} (code {})", error.message, error.code),
        Err(_) => error.to_string(),
    }
}

#[cfg(test)]
mod tests;
