//! The editor's MCP servers of each session, as host tools of its agent (MCP-01..09): the
//! bridge starts each `stdio` entry of `session/new` and `session/load` (one
//! [`McpServer`] client each), registers the servers' tools with the agent through
//! `set_host_tools`, answers the agent's `host_tool_call`s for them, and stops them with the
//! session.
//!
//! Each server process is named in actions and inputs by its [`McpServerKey`]: the
//! session's agent key and the entry's position.

use super::{AgentKey, McpServerKey};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;

use agent_client_protocol_schema::v1::McpServer as McpEntry;

use agent_client_protocol_schema::v1::{RequestId, SessionId};

use super::{notices, Action, Bridge};
use crate::client::{self, Call, CallResult, CommandFailure, RequestId as AgentRequest};
use crate::mcp::{self, McpConfig, McpServer, TOOL_PREFIX};
use crate::wire::{HostToolCall, HostToolDefinition, ToolResult};

/// The most MCP servers one session starts; later entries are left out with a notice.
pub const MAX_MCP_SERVERS: usize = 32;

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

/// What an MCP server's process did: [`super::Input::Mcp`]'s event.
#[derive(Debug, Clone, PartialEq)]
pub enum McpRead<'a> {
    /// Bytes from its stdout.
    Stdout(&'a [u8]),
    /// Its stdout ended.
    StdoutEnd,
    /// It exited, or could not be started.
    Exit,
}

/// A session's MCP servers.
#[derive(Debug, Default)]
pub(crate) struct SessionMcp {
    /// By server key.
    servers: BTreeMap<McpServerKey, McpServer>,
    /// Notices waiting for the session's id (MCP-09).
    held: Vec<String>,
    /// The set last registered with the agent, if any was.
    registered: Option<Vec<HostToolDefinition>>,
    /// Our `set_host_tools` requests not answered yet.
    registering: BTreeSet<AgentRequest>,
    /// `session/new`'s answer, held while a server starts (MCP-02).
    held_open: Option<(SessionId, RequestId, bool)>,
}

impl SessionMcp {
    /// Whether `request` is one of our `set_host_tools`.
    pub(crate) fn is_registration(&self, request: AgentRequest) -> bool {
        self.registering.contains(&request)
    }

    /// The earliest timer of the session's servers.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        self.servers
            .values()
            .filter_map(McpServer::poll_timeout)
            .min()
    }
}

impl Bridge {
    /// MCP-01: the session's `stdio` servers are started in its cwd; other transports are
    /// noted, not started.
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
        let mut names: Vec<String> = Vec::new();
        for (index, entry) in entries.into_iter().enumerate() {
            let (name, launch) = match entry {
                McpEntry::Stdio(stdio) => {
                    let launch = McpLaunch {
                        command: stdio.command,
                        args: stdio.args,
                        env: stdio.env.into_iter().map(|v| (v.name, v.value)).collect(),
                        cwd: cwd.to_path_buf(),
                    };
                    (stdio.name, Some(launch))
                }
                McpEntry::Http(http) => (http.name, None),
                McpEntry::Sse(sse) => (sse.name, None),
                _ => ("(unknown)".to_owned(), None),
            };
            let Some(launch) = launch else {
                session.mcp.held.push(format!(
                    "MCP server {name:?} is not started: only stdio servers are supported"
                ));
                continue;
            };
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
            session
                .mcp
                .servers
                .insert(server_key, McpServer::new(&name, now, config));
            self.actions.push_back(Action::McpSpawn {
                server: server_key,
                launch,
            });
        }
        self.mcp_drain(now, key);
    }

    /// An MCP server's process did something.
    pub(crate) fn mcp_read(&mut self, now: Instant, server: McpServerKey, read: McpRead<'_>) {
        let key = server.agent;
        let Some(machine) = self
            .sessions
            .get_mut(&key)
            .and_then(|s| s.mcp.servers.get_mut(&server))
        else {
            return;
        };
        let input = match read {
            McpRead::Stdout(bytes) => mcp::Input::Stdout(bytes),
            McpRead::StdoutEnd => mcp::Input::StdoutEnd,
            McpRead::Exit => mcp::Input::Exit,
        };
        machine.handle(now, input);
        self.mcp_drain(now, key);
    }

    /// The session's servers' timers.
    pub(crate) fn mcp_timeout(&mut self, now: Instant, key: AgentKey) {
        if let Some(session) = self.sessions.get_mut(&key) {
            for server in session.mcp.servers.values_mut() {
                server.handle(now, mcp::Input::Timeout);
            }
        }
        self.mcp_drain(now, key);
    }

    /// MCP-01: the session's servers are stopped with it.
    pub(crate) fn mcp_stop(&mut self, now: Instant, key: AgentKey) {
        if let Some(session) = self.sessions.get_mut(&key) {
            for server in session.mcp.servers.values_mut() {
                server.handle(now, mcp::Input::Stop);
            }
        }
        self.mcp_drain(now, key);
    }

    /// MCP-05, MCP-08: the agent calls a host tool; only MCP servers' tools are registered.
    pub(crate) fn mcp_call(&mut self, now: Instant, key: AgentKey, call: HostToolCall) {
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        // The server that registered the name; else one whose prefix it has (a server
        // starting or gone answers with why).
        let registered = session
            .mcp
            .servers
            .values()
            .position(|s| s.tools().iter().any(|t| t.name == call.tool_name));
        let by_prefix = || {
            session
                .mcp
                .servers
                .values()
                .position(|s| s.owns(&call.tool_name))
        };
        let index = registered.or_else(by_prefix);
        let owner = index.and_then(|i| session.mcp.servers.values_mut().nth(i));
        match owner {
            Some(server) => server.handle(
                now,
                mcp::Input::Call {
                    id: call.id,
                    tool: call.tool_name,
                    arguments: call.arguments,
                },
            ),
            None => {
                let text = if call.tool_name.starts_with(TOOL_PREFIX) {
                    format!(
                        "no running MCP server of this session has the tool {:?}",
                        call.tool_name
                    )
                } else {
                    format!("the bridge has no host tool {:?}", call.tool_name)
                };
                let answer = Call::HostToolResult(call.id, ToolResult::text(text), true);
                session.client.handle(now, client::Input::Call(answer));
                self.drain(now, key);
            }
        }
        self.mcp_drain(now, key);
    }

    /// MCP-05: the agent withdrew a call.
    pub(crate) fn mcp_cancel(&mut self, now: Instant, key: AgentKey, id: String) {
        if let Some(session) = self.sessions.get_mut(&key) {
            if let Some(server) = session.mcp.servers.values_mut().find(|s| s.has_call(&id)) {
                server.handle(now, mcp::Input::Cancel { id });
            }
        }
        self.mcp_drain(now, key);
    }

    /// MCP-02: `session/new` is answered once every server of the session has started (its
    /// tools registered before the first prompt) or failed, within the start-up budget; true
    /// when the answer is held.
    pub(crate) fn mcp_hold_open(
        &mut self,
        key: AgentKey,
        acp_id: &SessionId,
        editor: &RequestId,
        resumed: bool,
    ) -> bool {
        let Some(session) = self.sessions.get_mut(&key) else {
            return false;
        };
        if session.mcp.held_open.is_some()
            || !session.mcp.servers.values().any(McpServer::is_starting)
        {
            return false;
        }
        session.mcp.held_open = Some((acp_id.clone(), editor.clone(), resumed));
        true
    }

    /// MCP-03: the agent answered a `set_host_tools`; a refusal is noted (MCP-09).
    pub(crate) fn mcp_registered(
        &mut self,
        key: AgentKey,
        request: AgentRequest,
        failure: Option<CommandFailure>,
    ) {
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        session.mcp.registering.remove(&request);
        if let Some(failure) = failure {
            session.mcp.held.push(format!(
                "the agent refused the MCP servers' tools (set_host_tools): {failure}"
            ));
        }
        self.mcp_opened(key);
    }

    /// MCP-09: the notices held for the session's id are shown once it has one.
    pub(crate) fn mcp_opened(&mut self, key: AgentKey) {
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        if session.acp_id.0.is_empty() {
            return;
        }
        let held = std::mem::take(&mut session.mcp.held);
        let updates: Vec<_> = held
            .iter()
            .map(|text| session.mapper.notice(&notices::line("MCP", text)))
            .collect();
        for update in updates {
            self.session_update(key, update);
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
            while let Some(action) = server.poll_action() {
                match action {
                    mcp::Action::Write { bytes } => self.actions.push_back(Action::McpWrite {
                        server: *server_key,
                        bytes,
                    }),
                    mcp::Action::Stop => self.actions.push_back(Action::McpStop {
                        server: *server_key,
                    }),
                    mcp::Action::Tools(_) => changed = true,
                    mcp::Action::Result {
                        id,
                        result,
                        is_error,
                    } => answers.push(Call::HostToolResult(id, result, is_error)),
                    mcp::Action::Notice(text) => session.mcp.held.push(text),
                }
            }
        }
        if changed {
            // MCP-03: the union of the session's servers' tools, sent when it changed.
            // A name two servers give (`a_` and `a` can meet) goes to the first.
            let mut tools: Vec<HostToolDefinition> = Vec::new();
            for tool in session.mcp.servers.values().flat_map(|s| s.tools()) {
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
        if !session.mcp.servers.values().any(McpServer::is_starting) {
            if let Some((acp_id, editor, resumed)) = session.mcp.held_open.take() {
                self.opened(now, key, acp_id, &editor, resumed);
            }
        }
        self.mcp_opened(key);
    }
}
