//! The editor's MCP servers of each session, as host tools of its agent (MCP-01..09,
//! MCP-18): the bridge starts each entry of `session/new`, `session/load` and
//! `session/resume` — a `stdio` one as a process ([`McpServer`] client), an `http` one over
//! streamable HTTP and an `sse` one over HTTP+SSE ([`McpHttpServer`] client, the driver doing
//! the requests: [`Action::McpHttpOpen`], [`Action::McpHttpSend`], [`Action::McpHttpAbort`],
//! answered as [`McpRead::Http`]) — registers the servers' tools with the agent through
//! `set_host_tools`, answers the agent's `host_tool_call`s for them, and stops them with the
//! session.
//!
//! Each server is named in actions and inputs by its [`McpServerKey`]: the session's agent
//! key and the entry's position.

use super::{AgentKey, McpServerKey};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;

use agent_client_protocol_schema::v1::McpServer as McpEntry;

use agent_client_protocol_schema::v1::{RequestId, SessionId};

use super::outbox::{Drain, Outbox};
use super::{notices, AcpSession, Action, Bridge};
use crate::client::{self, Call, CallResult, CommandFailure, RequestId as AgentRequest};
use crate::mcp::http::{
    redacted_url, ExchangeId, HttpAction, HttpConfig, HttpInput, HttpRequest, HttpTransport,
    McpHttpServer, SecretHeaders,
};
use crate::mcp::{self, McpConfig, McpServer, TOOL_PREFIX};
use crate::wire::{HostToolCall, HostToolDefinition, ToolResult};
use url::Url;

/// The most MCP servers one session starts; later entries are left out with a notice.
pub(crate) const MAX_MCP_SERVERS: usize = 32;

/// How to start one MCP server: [`Action::McpSpawn`]'s parameters.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct McpLaunch {
    /// The program, as the editor gave it.
    pub command: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for it, on top of the bridge's environment.
    pub env: Vec<(String, String)>,
    /// The session's working directory, where it runs.
    pub cwd: PathBuf,
}

/// Where an HTTP MCP server is and what to send it (MCP-18): [`Action::McpHttpOpen`]'s
/// parameters. Serialised (for transcripts) as `{"url","headers":[NAME…]}`: the URL
/// redacted (scheme, host, port and path only), the headers' names only, never their values
/// (MCP-15); its `Debug` likewise.
#[derive(Clone, PartialEq, Eq)]
pub struct McpHttpLaunch {
    /// The server's URL, as the editor gave it (the endpoint, or the HTTP+SSE stream's URL).
    pub url: Url,
    /// The editor's headers, sent on every request of this server and nowhere else.
    pub headers: SecretHeaders,
}

impl serde::Serialize for McpHttpLaunch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name).collect();
        let mut out = s.serialize_struct("McpHttpLaunch", 2)?;
        out.serialize_field("url", &redacted_url(&self.url))?;
        out.serialize_field("headers", &names)?;
        out.end()
    }
}

impl std::fmt::Debug for McpHttpLaunch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpLaunch")
            .field("url", &redacted_url(&self.url))
            .field("headers", &self.headers)
            .finish()
    }
}

/// [`Action::McpHttpSend`]'s request, for transcripts: `{"exchange","method","url","body"}`
/// (the body as text; the protocol's own headers are implied by them).
pub(crate) fn request_summary<S: serde::Serializer>(
    request: &HttpRequest,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut out = s.serialize_struct("HttpRequest", 4)?;
    out.serialize_field("exchange", &request.exchange.0)?;
    out.serialize_field("method", request.method.as_str())?;
    out.serialize_field("url", &redacted_url(&request.url))?;
    let body = request.body.as_deref().map(String::from_utf8_lossy);
    out.serialize_field("body", &body)?;
    out.end()
}

/// [`Action::McpHttpAbort`]'s exchange, for transcripts: its number.
pub(crate) fn exchange_number<S: serde::Serializer>(
    exchange: &ExchangeId,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_u64(exchange.0)
}

/// What an MCP server did: [`super::Input::Mcp`]'s event.
#[derive(Debug, Clone, PartialEq)]
pub enum McpRead<'a> {
    /// Bytes from its stdout (a stdio server).
    Stdout(&'a [u8]),
    /// Its stdout ended (a stdio server).
    StdoutEnd,
    /// It exited, or could not be started (a stdio server).
    Exit,
    /// What came of one of an HTTP server's exchanges (MCP-18): only
    /// [`HttpInput::Head`], [`HttpInput::Body`], [`HttpInput::End`] and
    /// [`HttpInput::Failed`] are the driver's to give; the others are ignored here.
    Http(HttpInput<'a>),
}

/// What `initialize` advertises (MCP-01, MCP-18): `http` and `sse` servers are started too.
pub(crate) fn capabilities() -> agent_client_protocol_schema::v1::McpCapabilities {
    agent_client_protocol_schema::v1::McpCapabilities::new()
        .http(true)
        .sse(true)
}

/// One MCP server of a session, by transport.
#[derive(Debug)]
enum SessionServer {
    /// A process, spoken to on its stdin and stdout.
    Stdio(Box<McpServer>),
    /// Over HTTP (MCP-18): streamable HTTP or HTTP+SSE.
    Http(Box<McpHttpServer>),
}

impl SessionServer {
    /// The protocol machine (name, tools, state), whichever the transport.
    fn protocol(&self) -> &McpServer {
        match self {
            SessionServer::Stdio(server) => server,
            SessionServer::Http(server) => server.server(),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match self {
            SessionServer::Stdio(server) => server.poll_timeout(),
            SessionServer::Http(server) => server.poll_timeout(),
        }
    }

    fn timeout(&mut self, now: Instant) {
        match self {
            SessionServer::Stdio(server) => server.handle(now, mcp::Input::Timeout),
            SessionServer::Http(server) => server.handle(now, HttpInput::Timeout),
        }
    }

    fn stop(&mut self, now: Instant) {
        match self {
            SessionServer::Stdio(server) => server.handle(now, mcp::Input::Stop),
            SessionServer::Http(server) => server.handle(now, HttpInput::Stop),
        }
    }

    fn call(&mut self, now: Instant, id: String, tool: String, arguments: serde_json::Value) {
        match self {
            SessionServer::Stdio(server) => server.handle(
                now,
                mcp::Input::Call {
                    id,
                    tool,
                    arguments,
                },
            ),
            SessionServer::Http(server) => server.handle(
                now,
                HttpInput::Call {
                    id,
                    tool,
                    arguments,
                },
            ),
        }
    }

    fn cancel(&mut self, now: Instant, id: String) {
        match self {
            SessionServer::Stdio(server) => server.handle(now, mcp::Input::Cancel { id }),
            SessionServer::Http(server) => server.handle(now, HttpInput::Cancel { id }),
        }
    }

    /// The next of its actions, as the bridge's (`Ok`) or the session's own (`Err`).
    fn poll(&mut self, key: McpServerKey) -> Option<Result<Action, mcp::Action>> {
        match self {
            SessionServer::Stdio(server) => Some(match server.poll_action()? {
                mcp::Action::Write { bytes } => Ok(Action::McpWrite { server: key, bytes }),
                mcp::Action::Stop => Ok(Action::McpStop { server: key }),
                other => Err(other),
            }),
            SessionServer::Http(server) => Some(match server.poll_action()? {
                HttpAction::Send(request) => Ok(Action::McpHttpSend {
                    server: key,
                    request,
                }),
                HttpAction::Abort(exchange) => Ok(Action::McpHttpAbort {
                    server: key,
                    exchange,
                }),
                HttpAction::Stop => Ok(Action::McpStop { server: key }),
                HttpAction::Tools(tools) => Err(mcp::Action::Tools(tools)),
                HttpAction::Result {
                    id,
                    result,
                    is_error,
                } => Err(mcp::Action::Result {
                    id,
                    result,
                    is_error,
                }),
                HttpAction::Notice(text) => Err(mcp::Action::Notice(text)),
            }),
        }
    }
}

/// How one entry of `mcpServers` is started.
enum Start {
    Stdio(McpLaunch),
    Http(McpHttpLaunch, HttpTransport),
    /// Not started: why.
    Refused(&'static str),
}

/// A session's MCP servers.
#[derive(Debug, Default)]
pub(crate) struct SessionMcp {
    /// By server key.
    servers: BTreeMap<McpServerKey, SessionServer>,
    /// Notices waiting for the session's id (MCP-09).
    held: Vec<String>,
    /// The set last registered with the agent, if any was.
    registered: Option<Vec<HostToolDefinition>>,
    /// Our `set_host_tools` requests not answered yet.
    registering: BTreeSet<AgentRequest>,
    /// `session/new`'s answer, held while a server starts (MCP-02).
    held_open: Option<(SessionId, RequestId, super::open::Opening)>,
    /// The servers are being stopped with the session (MCP-01): their tools are no longer
    /// registered or withdrawn (the agent goes too; a `set_host_tools` to it would only fail,
    /// and its notice reach an editor that may have gone).
    stopping: bool,
}

impl SessionMcp {
    /// Whether `request` is one of our `set_host_tools`.
    /// The opening's answer held while a server starts (MCP-02), taken: the editor's
    /// request it answers, when one was held.
    pub(crate) fn take_held_open(&mut self) -> Option<RequestId> {
        self.held_open.take().map(|(_, editor, _)| editor)
    }

    /// Whether the opening's answer waits for a server (MCP-02): the session is opening.
    pub(crate) fn is_holding_open(&self) -> bool {
        self.held_open.is_some()
    }

    pub(crate) fn is_registration(&self, request: AgentRequest) -> bool {
        self.registering.contains(&request)
    }

    /// The earliest timer of the session's servers.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        self.servers
            .values()
            .filter_map(SessionServer::poll_timeout)
            .min()
    }
}

impl Bridge {
    /// MCP-01: the session's `stdio` servers are started in its cwd; MCP-18: its `http`
    /// servers over streamable HTTP and its `sse` servers over HTTP+SSE, with the editor's
    /// headers.
    pub(crate) fn mcp_start(
        &mut self,
        now: Instant,
        key: AgentKey,
        entries: Vec<McpEntry>,
        cwd: &std::path::Path,
    ) {
        let config = McpConfig {
            init_budget: self.config.mcp_init_budget.unwrap_or(mcp::INIT_BUDGET),
            ..McpConfig::default()
        };
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        let headers = |list: Vec<agent_client_protocol_schema::v1::HttpHeader>| {
            SecretHeaders::new(list.into_iter().map(|h| (h.name, h.value)).collect())
        };
        let http = |url: &str, list, transport| match Url::parse(url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => Start::Http(
                McpHttpLaunch {
                    url,
                    headers: headers(list),
                },
                transport,
            ),
            _ => Start::Refused("its URL is not an http or https URL"),
        };
        let mut names: Vec<String> = Vec::new();
        for (index, entry) in entries.into_iter().enumerate() {
            let (name, start) = match entry {
                McpEntry::Stdio(stdio) => {
                    let launch = McpLaunch {
                        command: stdio.command,
                        args: stdio.args,
                        env: stdio.env.into_iter().map(|v| (v.name, v.value)).collect(),
                        cwd: cwd.to_path_buf(),
                    };
                    (stdio.name, Start::Stdio(launch))
                }
                McpEntry::Http(entry) => {
                    let start = http(&entry.url, entry.headers, HttpTransport::Streamable);
                    (entry.name, start)
                }
                McpEntry::Sse(entry) => {
                    let start = http(&entry.url, entry.headers, HttpTransport::Sse);
                    (entry.name, start)
                }
                _ => (
                    "(unknown)".to_owned(),
                    Start::Refused("its transport is not one the bridge knows"),
                ),
            };
            if let Start::Refused(why) = start {
                session
                    .mcp
                    .held
                    .push(format!("MCP server {name:?} is not started: {why}"));
                continue;
            }
            let part = mcp::name_part(&name);
            if names.contains(&part) {
                session.mcp.held.push(format!(
                    "MCP server {name:?} is not started: another server of this session has that name"
                ));
                continue;
            }
            if names.len() >= MAX_MCP_SERVERS {
                session.mcp.held.push(format!(
                    "MCP server {name:?} is not started: a session starts at most {MAX_MCP_SERVERS}"
                ));
                continue;
            }
            names.push(part);
            let server_key = McpServerKey {
                agent: key,
                index: u32::try_from(index).unwrap_or(u32::MAX),
            };
            let server = match start {
                Start::Stdio(launch) => {
                    self.actions.push_back(Action::McpSpawn {
                        server: server_key,
                        launch,
                    });
                    SessionServer::Stdio(Box::new(McpServer::new(&name, now, config)))
                }
                // MCP-18: the driver learns where and with what headers before the first
                // request, which the machine asks for at once (drained below).
                Start::Http(launch, transport) => {
                    let http_config = HttpConfig {
                        mcp: config,
                        transport,
                        ..HttpConfig::default()
                    };
                    let url = launch.url.clone();
                    self.actions.push_back(Action::McpHttpOpen {
                        server: server_key,
                        launch,
                    });
                    SessionServer::Http(Box::new(McpHttpServer::new(&name, url, now, http_config)))
                }
                Start::Refused(_) => continue,
            };
            session.mcp.servers.insert(server_key, server);
        }
        self.mcp_drain(now, key);
    }

    /// An MCP server did something: its process (stdio), or one of its exchanges (MCP-18).
    /// A read of the other transport's kind is ignored.
    pub(crate) fn mcp_read(&mut self, now: Instant, server: McpServerKey, read: McpRead<'_>) {
        let key = server.agent;
        let Some(machine) = self
            .sessions
            .get_mut(&key)
            .and_then(|s| s.mcp.servers.get_mut(&server))
        else {
            return;
        };
        match (machine, read) {
            (SessionServer::Stdio(machine), McpRead::Stdout(bytes)) => {
                machine.handle(now, mcp::Input::Stdout(bytes))
            }
            (SessionServer::Stdio(machine), McpRead::StdoutEnd) => {
                machine.handle(now, mcp::Input::StdoutEnd)
            }
            (SessionServer::Stdio(machine), McpRead::Exit) => machine.handle(now, mcp::Input::Exit),
            (
                SessionServer::Http(machine),
                McpRead::Http(
                    input @ (HttpInput::Head { .. }
                    | HttpInput::Body { .. }
                    | HttpInput::End { .. }
                    | HttpInput::Failed { .. }),
                ),
            ) => machine.handle(now, input),
            _ => return,
        }
        self.mcp_drain(now, key);
    }

    /// Routes to session `key`'s MCP handler (its servers' timers or stop, a host tool call
    /// or its withdrawal), then performs what its servers did.
    pub(super) fn on_session_mcp(
        &mut self,
        now: Instant,
        key: AgentKey,
        handler: impl FnOnce(&mut AcpSession) -> Drain,
    ) {
        self.on_session(now, key, |session, _| handler(session));
        self.mcp_drain(now, key);
    }

    /// MCP-02: `session/new` is answered once every server of the session has started (its
    /// tools registered before the first prompt) or failed, within the start-up budget; true
    /// when the answer is held.
    pub(super) fn mcp_hold_open(
        &mut self,
        key: AgentKey,
        acp_id: &SessionId,
        editor: &RequestId,
        opening: super::open::Opening,
    ) -> bool {
        let Some(session) = self.sessions.get_mut(&key) else {
            return false;
        };
        if session.mcp.held_open.is_some()
            || !session
                .mcp
                .servers
                .values()
                .any(|s| s.protocol().is_starting())
        {
            return false;
        }
        session.mcp.held_open = Some((acp_id.clone(), editor.clone(), opening));
        true
    }

    /// MCP-03: the agent answered a `set_host_tools`; a refusal is noted (MCP-09), unless the
    /// bridge's editor has ended (ACP-12).
    pub(crate) fn mcp_registered(
        &mut self,
        key: AgentKey,
        request: AgentRequest,
        failure: Option<CommandFailure>,
    ) {
        let failure = failure.filter(|_| !self.editor_ended);
        if let Some((session, mut out)) = self.session_out(key) {
            session.mcp_registered(&request, failure);
            session.mcp_opened(&mut out);
        }
    }

    /// Performs the session's servers' actions: their writes and stops for the driver, their
    /// results for the agent, their tool sets registered (MCP-03), their notices shown.
    fn mcp_drain(&mut self, now: Instant, key: AgentKey) {
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        let mut changed = false;
        let mut answers = Vec::new();
        for (server_key, server) in session.mcp.servers.iter_mut() {
            while let Some(action) = server.poll(*server_key) {
                match action {
                    Ok(action) => self.actions.push_back(action),
                    Err(mcp::Action::Write { .. } | mcp::Action::Stop) => {}
                    Err(mcp::Action::Tools(_)) => changed = true,
                    Err(mcp::Action::Result {
                        id,
                        result,
                        is_error,
                    }) => answers.push(Call::HostToolResult {
                        id,
                        result,
                        is_error,
                    }),
                    Err(mcp::Action::Notice(text)) => session.mcp.held.push(text),
                }
            }
        }
        if changed && !session.mcp.stopping && !self.editor_ended {
            // MCP-03: the union of the session's servers' tools, sent when it changed.
            // A name two servers give (`a_` and `a` can meet) goes to the first.
            let mut tools: Vec<HostToolDefinition> = Vec::new();
            for tool in session
                .mcp
                .servers
                .values()
                .flat_map(|s| s.protocol().tools())
            {
                if !tools.iter().any(|t| t.name == tool.name) {
                    tools.push(tool.clone());
                }
            }
            let first = session.mcp.registered.is_none();
            if session.mcp.registered.as_ref() != Some(&tools) && !(first && tools.is_empty()) {
                session.mcp.registered = Some(tools.clone());
                answers.push(Call::SetHostTools(tools));
            }
        }
        let mut wrote = false;
        for call in answers {
            if !session.exited {
                let registers = matches!(call, Call::SetHostTools(_));
                let sent = session.client.handle(now, client::Input::Call(call));
                match sent {
                    CallResult::Request(Ok(request)) if registers => {
                        session.mcp.registering.insert(request);
                    }
                    CallResult::Request(Err(error)) => session.mcp.held.push(format!(
                        "the MCP servers' tools could not be registered with the agent: {error}"
                    )),
                    _ => {}
                }
                wrote = true;
            }
        }
        if wrote {
            self.drain(now, key);
        }
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        if !session
            .mcp
            .servers
            .values()
            .any(|s| s.protocol().is_starting())
        {
            // An agent that ended meanwhile opens nothing (its opening was failed then).
            let alive = !session.exited && !session.client.is_closed();
            if let Some((acp_id, editor, opening)) = session.mcp.held_open.take().filter(|_| alive)
            {
                self.opened(now, key, acp_id, &editor, opening);
            }
        }
        if let Some((session, mut out)) = self.session_out(key) {
            session.mcp_opened(&mut out);
        }
    }
}

impl AcpSession {
    /// The session's servers' timers.
    pub(super) fn mcp_timeout(&mut self, now: Instant) -> Drain {
        for server in self.mcp.servers.values_mut() {
            server.timeout(now);
        }
        Drain::NotNeeded
    }

    /// MCP-01: the session's servers are stopped with it.
    pub(super) fn mcp_stop(&mut self, now: Instant) -> Drain {
        self.mcp.stopping = true;
        for server in self.mcp.servers.values_mut() {
            server.stop(now);
        }
        Drain::NotNeeded
    }

    /// MCP-05, MCP-08: the agent's host tool call goes to the server that registered the
    /// name, else to one whose prefix it has (a server starting or gone answers with why);
    /// a call no server owns is answered as an error.
    pub(super) fn mcp_call(&mut self, now: Instant, call: HostToolCall) -> Drain {
        let registered = self.mcp.servers.values().position(|s| {
            s.protocol()
                .tools()
                .iter()
                .any(|t| t.name == call.tool_name)
        });
        let by_prefix = || {
            self.mcp
                .servers
                .values()
                .position(|s| s.protocol().owns(&call.tool_name))
        };
        let index = registered.or_else(by_prefix);
        let owner = index.and_then(|i| self.mcp.servers.values_mut().nth(i));
        if let Some(server) = owner {
            server.call(now, call.id, call.tool_name, call.arguments);
            return Drain::NotNeeded;
        }
        let text = if call.tool_name.starts_with(TOOL_PREFIX) {
            format!(
                "no running MCP server of this session has the tool {:?}",
                call.tool_name
            )
        } else {
            format!("the bridge has no host tool {:?}", call.tool_name)
        };
        let answer = Call::HostToolResult {
            id: call.id,
            result: ToolResult::text(text),
            is_error: true,
        };
        self.client.handle(now, client::Input::Call(answer));
        Drain::Needed
    }

    /// MCP-05: the agent withdrew a call; the server running it is told.
    pub(super) fn mcp_cancel(&mut self, now: Instant, id: String) -> Drain {
        let owner = self.mcp.servers.values_mut();
        if let Some(server) = owner.into_iter().find(|s| s.protocol().has_call(&id)) {
            server.cancel(now, id);
        }
        Drain::NotNeeded
    }

    /// MCP-03: the agent answered the `set_host_tools` `request`; its `failure` is noted
    /// (MCP-09) unless the session is ending, whose refusal is no news.
    fn mcp_registered(&mut self, request: &AgentRequest, failure: Option<CommandFailure>) {
        self.mcp.registering.remove(request);
        if let (Some(failure), false) = (failure, self.mcp.stopping) {
            self.mcp.held.push(format!(
                "the agent refused the MCP servers' tools (set_host_tools): {failure}"
            ));
        }
    }

    /// MCP-09: the notices held for the session are shown once it has its id.
    pub(super) fn mcp_opened(&mut self, out: &mut Outbox<'_>) {
        if self.acp_id.0.is_empty() {
            return;
        }
        for text in std::mem::take(&mut self.mcp.held) {
            let update = self.mapper.notice(&notices::line("MCP", &text));
            out.update(self, update);
        }
    }
}
