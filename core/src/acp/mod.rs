//! The Agent Client Protocol adapter: [`Bridge`] makes any `--mode rpc` agent an ACP agent
//! for editors (JSON-RPC 2.0, newline-delimited over stdio, protocol version 1; seed
//! `003_53309ea8c05bcc75.txt`, rules ACP-*).
//!
//! The bridge is sans-IO and follows the crate's run-loop contract (the [crate docs](crate)):
//! the driver hands in every [`Input`] through [`Bridge::handle`] (bytes from the editor, the
//! output and exit of each session's agent, timers), drains [`Bridge::poll_action`] (bytes for
//! the editor, an agent to spawn in a session's cwd, bytes for a session's agent, an agent to
//! stop) and sleeps until [`Bridge::poll_timeout`]. Inside, each ACP session has its own
//! [`Client`] and its own agent process.
//!
//! ```
//! use std::time::Instant;
//! use musewire_core::acp::{Action, Bridge, Input};
//!
//! let now = Instant::now();
//! let mut bridge = Bridge::new(Default::default());
//! bridge.handle(now, Input::Editor(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n"));
//! let Some(Action::Editor { bytes }) = bridge.poll_action() else { panic!() };
//! let answer: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
//! assert_eq!(answer["result"]["protocolVersion"], 1);
//! bridge.handle(now, Input::Editor(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\",\"params\":{\"cwd\":\"/tmp\",\"mcpServers\":[]}}\n"));
//! assert!(matches!(bridge.poll_action(), Some(Action::Spawn { .. })));
//! ```

mod bound;
mod map;
mod plan;
mod rpc;
mod status;

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use agent_client_protocol_schema::v1::{
    AgentCapabilities, AvailableCommand, AvailableCommandsUpdate, CancelNotification,
    ClientCapabilities, ContentBlock, ContentChunk, Error, Implementation, InitializeRequest,
    InitializeResponse, Meta, NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse,
    RequestId, SessionNotification, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol_schema::ProtocolVersion;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// The ACP schema types the bridge speaks in (`agent-client-protocol-schema`).
pub use agent_client_protocol_schema as schema;
pub use agent_client_protocol_schema::v1::SessionId;
pub use bound::{bound_snapshot, cut_to_bytes, MAX_SURFACE_BYTES, TRUNCATION_NOTICE};
pub use map::Mapper;
pub use plan::{plan_from_phases, plan_from_tasks, MAX_PLAN_ENTRIES, MAX_PLAN_ENTRY_BYTES};
pub use rpc::MAX_EDITOR_LINE_BYTES;
pub use status::{is_status_prompt, usage_opt_in, Facts, Tokens, STATUS_COMMAND};

use crate::client::{
    self, commands, Call, Client, ClientConfig, ClientEvent, ExitStatus, RequestId as AgentRequest,
};
use crate::wire::{AgentEvent, AgentFrame};
use rpc::{Incoming, Line, LineReader};

/// How a [`Bridge`] starts.
#[derive(Debug, Clone, Default)]
pub struct BridgeConfig {
    /// The configuration of each session's [`Client`].
    pub client: ClientConfig,
    /// The folder the agent keeps its sessions in, each the file `<sessionId>.jsonl` (the
    /// bundled agent's `--session-dir`, CONTRACT §3), which the driver hands the agent. With
    /// it the ACP session id is the agent's session id, `session/load` works and
    /// `loadSession` is advertised (ACP-06); without it neither.
    pub session_dir: Option<PathBuf>,
    /// Whether the configured agent is known to serve `read_output` (the bundled agent run
    /// with `--max-inline-bytes`): `initialize` comes before any agent runs, so the OUT-01
    /// advertisement rests on this; each session then shows handles and serves reads only
    /// when its agent's ready frame offers `readOutput` too.
    pub agent_serves_output: bool,
}

/// One input to a [`Bridge`].
#[derive(Debug, Clone, PartialEq)]
pub enum Input<'a> {
    /// Bytes read from the editor (stdin).
    Editor(&'a [u8]),
    /// The editor's input ended: every agent is stopped.
    EditorEnd,
    /// Bytes read from a session's agent's stdout.
    AgentStdout(SessionId, &'a [u8]),
    /// Bytes read from a session's agent's stderr.
    AgentStderr(SessionId, &'a [u8]),
    /// A session's agent's stdout ended.
    AgentStdoutEnd(SessionId),
    /// A session's agent exited (or could not be spawned: [`ExitStatus::Unknown`]).
    AgentExit(SessionId, ExitStatus),
    /// The time of [`Bridge::poll_timeout`] has come.
    Timeout,
}

/// Work for the driver, in order. Serialised (for transcripts) as
/// `{"action":"editor","bytes":LINE}`, `{"action":"spawn","session","cwd"}`,
/// `{"action":"agent","session","bytes"}`, `{"action":"stop_agent","session"}`, bytes as text.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Write these bytes to the editor (stdout): complete JSON-RPC lines.
    Editor {
        /// The lines.
        #[serde(serialize_with = "as_text")]
        bytes: Vec<u8>,
    },
    /// Start an agent process for this session, in this directory, and report its output and
    /// exit as [`Input::AgentStdout`], [`Input::AgentStderr`], [`Input::AgentExit`].
    Spawn {
        /// The session.
        session: SessionId,
        /// The session's working directory.
        cwd: PathBuf,
    },
    /// Write these bytes to the session's agent's stdin.
    Agent {
        /// The session.
        session: SessionId,
        /// Complete JSON lines.
        #[serde(serialize_with = "as_text")]
        bytes: Vec<u8>,
    },
    /// Stop the session's agent process.
    StopAgent {
        /// The session.
        session: SessionId,
    },
}

fn as_text<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(bytes))
}

/// A prompt being answered.
#[derive(Debug)]
struct Turn {
    /// The editor's `session/prompt` request.
    editor: RequestId,
    /// Our `prompt` command to the agent.
    prompt: AgentRequest,
    cancel_requested: bool,
}

#[derive(Debug)]
struct Session {
    client: Client,
    mapper: Mapper,
    turn: Option<Turn>,
    /// The agent exited or was stopped.
    exited: bool,
}

/// The ACP adapter. See the [module docs](self).
#[derive(Debug)]
pub struct Bridge {
    config: BridgeConfig,
    reader: LineReader,
    /// By session id (`SessionId` is not `Ord`).
    sessions: BTreeMap<Arc<str>, Session>,
    next_session: u64,
    /// What the editor said in `initialize`, kept for the session's lifetime.
    client_capabilities: Option<ClientCapabilities>,
    client_meta: Option<Meta>,
    /// The editor opted into `muse/usage` metadata (ACP-02).
    usage_meta: bool,
    editor_ended: bool,
    actions: VecDeque<Action>,
}

impl Bridge {
    /// A bridge with no sessions.
    pub fn new(config: BridgeConfig) -> Self {
        Bridge {
            config,
            reader: LineReader::default(),
            sessions: BTreeMap::new(),
            next_session: 0,
            client_capabilities: None,
            client_meta: None,
            usage_meta: false,
            editor_ended: false,
            actions: VecDeque::new(),
        }
    }

    /// The client capabilities of the editor's `initialize`, as sent.
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.client_capabilities.as_ref()
    }

    /// The `_meta` of the editor's `initialize`, as sent.
    pub fn client_meta(&self) -> Option<&Meta> {
        self.client_meta.as_ref()
    }

    /// Whether the editor has gone and every agent has exited: the driver may end.
    pub fn is_finished(&self) -> bool {
        self.editor_ended && self.sessions.values().all(|s| s.exited)
    }

    /// The next action, if any.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When [`Input::Timeout`] is next due.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.sessions
            .values()
            .filter_map(|s| s.client.poll_timeout())
            .min()
    }

    /// Hands in one input.
    pub fn handle(&mut self, now: Instant, input: Input<'_>) {
        match input {
            Input::Editor(bytes) => {
                for line in self.reader.push(bytes) {
                    self.editor_line(now, line);
                }
            }
            Input::EditorEnd => {
                if let Some(line) = self.reader.finish() {
                    self.editor_line(now, line);
                }
                self.editor_ended = true;
                let ids: Vec<SessionId> =
                    self.sessions.keys().cloned().map(SessionId::new).collect();
                for id in ids {
                    self.session_input(now, &id, client::Input::Call(Call::Stop));
                }
            }
            Input::AgentStdout(id, bytes) => {
                self.session_input(now, &id, client::Input::stdout(bytes))
            }
            Input::AgentStderr(id, bytes) => {
                self.session_input(now, &id, client::Input::stderr(bytes))
            }
            Input::AgentStdoutEnd(id) => self.session_input(now, &id, client::Input::StdoutEnd),
            Input::AgentExit(id, status) => {
                if let Some(session) = self.sessions.get_mut(&*id.0) {
                    session.exited = true;
                }
                self.session_input(now, &id, client::Input::exit(status));
            }
            Input::Timeout => {
                let ids: Vec<SessionId> =
                    self.sessions.keys().cloned().map(SessionId::new).collect();
                for id in ids {
                    self.session_input(now, &id, client::Input::Timeout);
                }
            }
        }
    }

    fn editor_line(&mut self, now: Instant, line: Line) {
        let text = match line {
            Line::Text(text) => text,
            Line::TooLong => {
                // ACP-07: an over-long line is a parse error, skipped.
                let error = Error::parse_error().data(json!(format!(
                    "a message is over {MAX_EDITOR_LINE_BYTES} bytes"
                )));
                return self.editor(rpc::error_line(&RequestId::Null, &error));
            }
        };
        match rpc::parse_line(&text) {
            Ok(None) | Ok(Some(Incoming::Response)) => {}
            Ok(Some(Incoming::Request { id, method, params })) => {
                match self.request(now, &id, &method, params) {
                    Ok(Some(bytes)) => self.editor(bytes),
                    Ok(None) => {}
                    Err(error) => self.editor(rpc::error_line(&id, &error)),
                }
            }
            Ok(Some(Incoming::Notification { method, params })) => {
                self.notification(now, &method, params)
            }
            // ACP-07: a bad line is answered and skipped, never fatal.
            Err(error) => self.editor(rpc::error_line(&RequestId::Null, &error)),
        }
    }

    /// Answers a request at once (`Some` line) or later (`None`: a prompt).
    fn request(
        &mut self,
        now: Instant,
        id: &RequestId,
        method: &str,
        params: Value,
    ) -> Result<Option<Vec<u8>>, Error> {
        match method {
            "initialize" => {
                let request: InitializeRequest = params_of(params)?;
                // ACP-02: usage metadata only for an editor that opted in.
                self.usage_meta = usage_opt_in(request.client_capabilities.meta.as_ref());
                self.client_capabilities = Some(request.client_capabilities);
                self.client_meta = request.meta;
                let mut response = InitializeResponse::new(ProtocolVersion::V1)
                    .agent_capabilities(AgentCapabilities::new())
                    .agent_info(Implementation::new("musewire", env!("CARGO_PKG_VERSION")));
                if self.usage_meta {
                    let mut meta = Meta::new();
                    meta.insert("muse/usage".into(), json!({"version": 1}));
                    response = response.meta(meta);
                }
                Ok(Some(rpc::result_line(id, &response)))
            }
            "session/new" => {
                let request: NewSessionRequest = params_of(params)?;
                if !request.cwd.is_absolute() {
                    return Err(Error::invalid_params().data(json!("cwd must be an absolute path")));
                }
                self.next_session += 1;
                let session = SessionId::new(format!("musewire-{}", self.next_session));
                let mut mapper = Mapper::new();
                mapper.usage_meta = self.usage_meta;
                let commands = mapper.facts.commands();
                self.sessions.insert(
                    session.0.clone(),
                    Session {
                        client: Client::new(self.config.client.clone(), now),
                        mapper,
                        turn: None,
                        exited: false,
                    },
                );
                self.actions.push_back(Action::Spawn {
                    session: session.clone(),
                    cwd: request.cwd,
                });
                let answer = rpc::result_line(id, &NewSessionResponse::new(session.clone()));
                self.editor(answer);
                // ACP-01: `/status` is advertised beside the agent's own commands.
                self.editor(commands_line(&session, commands));
                Ok(None)
            }
            "session/prompt" => {
                let request: PromptRequest = params_of(params)?;
                self.prompt(now, id, request).map(|()| None)
            }
            _ => Err(Error::method_not_found().data(json!(method))),
        }
    }

    fn prompt(
        &mut self,
        now: Instant,
        id: &RequestId,
        request: PromptRequest,
    ) -> Result<(), Error> {
        let session_id = request.session_id;
        let session = self
            .sessions
            .get_mut(&*session_id.0)
            .ok_or_else(|| Error::session_not_found(session_id.clone()))?;
        if session.turn.is_some() {
            return Err(
                Error::invalid_request().data(json!("a prompt is already running in this session"))
            );
        }
        if session.client.is_closed() {
            return Err(Error::internal_error().data(json!("the session's agent has exited")));
        }
        let text = prompt_text(&request.prompt);
        if is_status_prompt(&text) {
            // ACP-01: answered here; no model turn, and the text after it is not executed.
            let status = session.mapper.facts.status_text();
            let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(status)));
            let update =
                SessionNotification::new(session_id, SessionUpdate::AgentMessageChunk(chunk));
            self.editor(rpc::notification_line("session/update", &update));
            self.editor(rpc::result_line(
                id,
                &PromptResponse::new(StopReason::EndTurn),
            ));
            return Ok(());
        }
        let started = session
            .client
            .handle(now, client::Input::Call(Call::Prompt(text, None)));
        let prompt = started
            .request()
            .ok_or_else(|| Error::internal_error().data(json!("the prompt was not sent")))?;
        session.mapper.start_turn();
        session.turn = Some(Turn {
            editor: id.clone(),
            prompt,
            cancel_requested: false,
        });
        self.drain(&session_id);
        Ok(())
    }

    fn notification(&mut self, now: Instant, method: &str, params: Value) {
        // Unknown notifications, and ones that don't parse, are ignored.
        if method != "session/cancel" {
            return;
        }
        let Ok(cancel) = serde_json::from_value::<CancelNotification>(params) else {
            return;
        };
        let Some(session) = self.sessions.get_mut(&*cancel.session_id.0) else {
            return;
        };
        let Some(turn) = session.turn.as_mut() else {
            return;
        };
        if !turn.cancel_requested {
            turn.cancel_requested = true;
            session
                .client
                .handle(now, client::Input::Call(Call::Send(commands::abort())));
            self.drain(&cancel.session_id);
        }
    }

    fn session_input(&mut self, now: Instant, id: &SessionId, input: client::Input<'_>) {
        if let Some(session) = self.sessions.get_mut(&*id.0) {
            session.client.handle(now, input);
            self.drain(id);
        }
    }

    /// Passes a session's client actions on, mapping its events.
    fn drain(&mut self, id: &SessionId) {
        let Some(session) = self.sessions.get_mut(&*id.0) else {
            return;
        };
        let mut out: Vec<Vec<u8>> = Vec::new();
        while let Some(action) = session.client.poll_action() {
            match action {
                client::Action::Write { bytes } => self.actions.push_back(Action::Agent {
                    session: id.clone(),
                    bytes,
                }),
                client::Action::StopAgent => self.actions.push_back(Action::StopAgent {
                    session: id.clone(),
                }),
                client::Action::Event(event) => session_event(id, session, event, &mut out),
            }
            for bytes in out.drain(..) {
                self.actions.push_back(Action::Editor { bytes });
            }
        }
    }

    fn editor(&mut self, bytes: Vec<u8>) {
        self.actions.push_back(Action::Editor { bytes });
    }
}

/// One client event of a session: `session/update`s, or the prompt's answer.
fn session_event(
    id: &SessionId,
    session: &mut Session,
    event: ClientEvent,
    out: &mut Vec<Vec<u8>>,
) {
    let is_prompt = |request: &AgentRequest, turn: &Option<Turn>| {
        turn.as_ref().is_some_and(|t| t.prompt == *request)
    };
    match event {
        ClientEvent::Frame {
            frame: AgentFrame::AvailableCommandsUpdate(update),
        } => {
            session.mapper.facts.agent_commands = status::agent_commands(&update.commands);
            out.push(commands_line(id, session.mapper.facts.commands()));
        }
        // Issue 12 item 3: an item of a kind this version does not know.
        ClientEvent::Frame {
            frame: AgentFrame::Unknown(item) | AgentFrame::Event(AgentEvent::Unknown(item)),
        } => {
            for update in session.mapper.unknown_item(&item) {
                let notification = SessionNotification::new(id.clone(), update);
                out.push(rpc::notification_line("session/update", &notification));
            }
        }
        ClientEvent::Frame {
            frame: AgentFrame::Event(event),
        } => {
            for update in session.mapper.event(&event) {
                let notification = SessionNotification::new(id.clone(), update);
                out.push(rpc::notification_line("session/update", &notification));
            }
        }
        ClientEvent::Response {
            request,
            outcome: Err(failure),
            ..
        }
        | ClientEvent::PromptFailed { request, failure }
            if is_prompt(&request, &session.turn) =>
        {
            if let Some(turn) = session.turn.take() {
                let error = Error::internal_error().data(json!(failure.to_string()));
                out.push(rpc::error_line(&turn.editor, &error));
            }
        }
        ClientEvent::PromptLocalOnly { request } if is_prompt(&request, &session.turn) => {
            finish_turn(session, out);
        }
        // CALL-09: the turn is over; the prompt is answered with its stop reason.
        ClientEvent::TurnFinished => finish_turn(session, out),
        ClientEvent::Closed { error } => {
            if let Some(turn) = session.turn.take() {
                let error = Error::internal_error().data(json!(error.to_string()));
                out.push(rpc::error_line(&turn.editor, &error));
            }
        }
        _ => {}
    }
}

/// An `available_commands_update` notification.
fn commands_line(id: &SessionId, commands: Vec<AvailableCommand>) -> Vec<u8> {
    let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands));
    rpc::notification_line(
        "session/update",
        &SessionNotification::new(id.clone(), update),
    )
}

fn finish_turn(session: &mut Session, out: &mut Vec<Vec<u8>>) {
    if let Some(turn) = session.turn.take() {
        let reason = session.mapper.stop_reason(turn.cancel_requested);
        out.push(rpc::result_line(&turn.editor, &PromptResponse::new(reason)));
    }
}

/// The prompt's text for the agent: text blocks as they are, links and resources by uri.
fn prompt_text(blocks: &[ContentBlock]) -> String {
    let parts: Vec<String> = blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.clone()),
            ContentBlock::ResourceLink(link) => Some(link.uri.clone()),
            _ => None,
        })
        .collect();
    parts.join("\n")
}

fn params_of<T: DeserializeOwned>(params: Value) -> Result<T, Error> {
    serde_json::from_value(params).map_err(|e| Error::invalid_params().data(json!(e.to_string())))
}
