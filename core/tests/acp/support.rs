//! A bridge with one session and a scripted agent, for the ACP tests.
#![allow(dead_code)]

use std::time::Instant;

use musewire_core::acp::{
    Action, AgentKey, Bridge, FileTicket, ForkNaming, Input, McpHttpLaunch, McpLaunch, McpRead,
    McpServerKey, ProcessKey, ReviewTicket,
};
use musewire_core::client::ExitStatus;
use musewire_core::mcp::http::{ExchangeId, HttpInput, HttpRequest, ResponseHead};
use serde_json::{json, Value};

/// The agent key a test names as text (`musewire-N`).
pub fn agent_key(text: &str) -> AgentKey {
    match text.parse() {
        Ok(ProcessKey::Agent(key)) => key,
        other => panic!("{text:?} is no agent key: {other:?}"),
    }
}

/// The MCP server key a test names as text (`musewire-N/mcp-M`).
pub fn server_key(text: &str) -> McpServerKey {
    match text.parse() {
        Ok(ProcessKey::McpServer(key)) => key,
        other => panic!("{text:?} is no MCP server key: {other:?}"),
    }
}

/// A bridge driven by hand: what went to the editor, to the agent, and what was spawned.
pub struct Harness {
    pub bridge: Bridge,
    pub now: Instant,
    pub editor: Vec<Value>,
    pub agent: Vec<Value>,
    /// The agent each frame in `agent` went to, in step with it.
    pub agent_to: Vec<AgentKey>,
    pub spawned: Vec<(String, std::path::PathBuf)>,
    /// Sessions whose agent's stdin was closed (ACP-12), in order.
    pub closed: Vec<String>,
    /// Sessions whose agent's group was killed (ACP-12), in order.
    pub stopped: Vec<String>,
    /// Session folders the bridge asked to read (ACP-26), in order.
    pub folder_reads: Vec<std::path::PathBuf>,
    /// Session files the bridge asked to fork (ACP-31): ticket, folder, source, naming.
    pub forks: Vec<(FileTicket, std::path::PathBuf, String, ForkNaming)>,
    /// Session files the bridge asked to delete (ACP-32): ticket, folder, name.
    pub deletes: Vec<(FileTicket, std::path::PathBuf, String)>,
    /// MCP servers started (MCP-01): server key and launch.
    pub mcp_spawned: Vec<(String, McpLaunch)>,
    /// What went to MCP servers: server key and message.
    pub mcp: Vec<(String, Value)>,
    /// MCP servers stopped, in order.
    pub mcp_stopped: Vec<String>,
    /// HTTP MCP servers made ready (MCP-18): server key and where.
    pub mcp_http_opened: Vec<(String, McpHttpLaunch)>,
    /// Requests sent to HTTP MCP servers (MCP-18): server key and request.
    pub mcp_http: Vec<(String, HttpRequest)>,
    /// Exchanges of HTTP MCP servers dropped (MCP-18).
    pub mcp_http_aborted: Vec<(String, ExchangeId)>,
    /// Edited files the bridge asked to read (ACP-38): ticket, cwd, path.
    pub edited_reads: Vec<(ReviewTicket, std::path::PathBuf, std::path::PathBuf)>,
}

impl Harness {
    pub fn new() -> Self {
        Harness {
            bridge: Bridge::new(Default::default()),
            now: Instant::now(),
            editor: Vec::new(),
            agent: Vec::new(),
            agent_to: Vec::new(),
            spawned: Vec::new(),
            closed: Vec::new(),
            stopped: Vec::new(),
            folder_reads: Vec::new(),
            forks: Vec::new(),
            deletes: Vec::new(),
            mcp_spawned: Vec::new(),
            mcp: Vec::new(),
            mcp_stopped: Vec::new(),
            mcp_http_opened: Vec::new(),
            mcp_http: Vec::new(),
            mcp_http_aborted: Vec::new(),
            edited_reads: Vec::new(),
        }
    }

    pub fn drain(&mut self) {
        while let Some(action) = self.bridge.poll_action() {
            match action {
                Action::Editor { bytes } => {
                    assert_eq!(bytes.last(), Some(&b'\n'));
                    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                        self.editor.push(serde_json::from_slice(line).unwrap());
                    }
                }
                Action::Agent { session, bytes } => {
                    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                        self.agent.push(serde_json::from_slice(line).unwrap());
                        self.agent_to.push(session);
                    }
                }
                Action::Spawn { session, cwd } => self.spawned.push((session.to_string(), cwd)),
                Action::CloseAgentStdin { session } => self.closed.push(session.to_string()),
                Action::StopAgent { session } => self.stopped.push(session.to_string()),
                Action::ReadSessionFolder { dir } => self.folder_reads.push(dir),
                Action::ForkSessionFile {
                    ticket,
                    dir,
                    source,
                    naming,
                } => self.forks.push((ticket, dir, source, naming)),
                Action::DeleteSessionFile { ticket, dir, name } => {
                    self.deletes.push((ticket, dir, name))
                }
                Action::McpSpawn { server, launch } => {
                    self.mcp_spawned.push((server.to_string(), launch))
                }
                Action::McpWrite { server, bytes } => {
                    assert_eq!(bytes.last(), Some(&b'\n'));
                    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                        self.mcp
                            .push((server.to_string(), serde_json::from_slice(line).unwrap()));
                    }
                }
                Action::McpStop { server } => self.mcp_stopped.push(server.to_string()),
                Action::McpHttpOpen { server, launch } => {
                    self.mcp_http_opened.push((server.to_string(), launch))
                }
                Action::McpHttpSend { server, request } => {
                    self.mcp_http.push((server.to_string(), request))
                }
                Action::McpHttpAbort { server, exchange } => {
                    self.mcp_http_aborted.push((server.to_string(), exchange))
                }
                Action::ReadEditedFile { ticket, cwd, path } => {
                    self.edited_reads.push((ticket, cwd, path))
                }
            }
        }
    }

    pub fn editor_bytes(&mut self, bytes: &[u8]) {
        self.bridge.handle(self.now, Input::Editor(bytes));
        self.drain();
    }

    pub fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.editor_bytes(&line);
    }

    pub fn request(&mut self, id: u64, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    pub fn agent_lines(&mut self, session: &str, frames: &[Value]) {
        let mut bytes = Vec::new();
        for frame in frames {
            bytes.extend(serde_json::to_vec(frame).unwrap());
            bytes.push(b'\n');
        }
        self.bridge
            .handle(self.now, Input::AgentStdout(agent_key(session), &bytes));
        self.drain();
    }

    /// Lines from an MCP server's stdout.
    pub fn mcp_lines(&mut self, server: &str, frames: &[Value]) {
        let mut bytes = Vec::new();
        for frame in frames {
            bytes.extend(serde_json::to_vec(frame).unwrap());
            bytes.push(b'\n');
        }
        self.mcp_read(server, McpRead::Stdout(&bytes));
    }

    /// An HTTP MCP server's answer to an exchange (MCP-18): its head, its body whole, its
    /// end.
    pub fn mcp_http_answer(
        &mut self,
        server: &str,
        exchange: ExchangeId,
        head: ResponseHead<'_>,
        body: &[u8],
    ) {
        for input in [
            HttpInput::Head { exchange, head },
            HttpInput::Body {
                exchange,
                bytes: body,
            },
            HttpInput::End { exchange },
        ] {
            self.mcp_read(server, McpRead::Http(input));
        }
    }

    /// Something an MCP server's process did.
    pub fn mcp_read(&mut self, server: &str, read: McpRead<'_>) {
        self.bridge
            .handle(self.now, Input::Mcp(server_key(server), read));
        self.drain();
    }

    pub fn agent_exit(&mut self, session: &str) {
        self.bridge.handle(
            self.now,
            Input::AgentExit(agent_key(session), ExitStatus::Code(1)),
        );
        self.drain();
    }

    /// initialize + session/new + the agent's ready frame and its answers to the bridge's
    /// `get_state` and `get_available_models` (ACP-24): the session id.
    pub fn session(&mut self) -> String {
        self.request(1, "initialize", json!({"protocolVersion": 1}));
        self.request(2, "session/new", json!({"cwd": "/tmp", "mcpServers": []}));
        let key = self.spawned.last().expect("an agent was spawned").0.clone();
        self.agent_lines(
            &key,
            &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
        );
        self.answer_opening(&key);
        let id = self.answer(2).unwrap()["result"]["sessionId"]
            .as_str()
            .unwrap()
            .to_owned();
        self.editor.clear();
        id
    }

    /// session/new (request `id`, cwd `/tmp`), the agent's ready frame and its answers to
    /// what the opening asks (ACP-24): the session id.
    pub fn open(&mut self, id: u64) -> String {
        self.request(id, "session/new", json!({"cwd": "/tmp", "mcpServers": []}));
        let key = self.spawned.last().expect("an agent was spawned").0.clone();
        self.agent_lines(
            &key,
            &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
        );
        self.answer_opening(&key);
        self.answer(id).expect("session/new answered")["result"]["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned()
    }

    /// Answers what a `session/resume` asks (ACP-25): the ready frame, `switch_session`,
    /// then as [`Harness::answer_opening`].
    pub fn answer_opening_after_switch(&mut self, key: &str) {
        self.agent_lines(
            key,
            &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
        );
        let switch = self.asked("switch_session").expect("switch_session asked");
        self.agent_lines(
            key,
            &[
                json!({"id": switch["id"], "type": "response", "command": "switch_session",
                "success": true, "data": {"cancelled": false}}),
            ],
        );
        self.answer_opening(key);
    }

    /// The bridge's last request of this type to the agent, if any.
    pub fn asked(&self, command: &str) -> Option<Value> {
        self.agent
            .iter()
            .rev()
            .find(|m| m["type"] == command && m["id"] != "req_0")
            .cloned()
    }

    /// Answers what a session's opening asks (ACP-24): `get_state` with the model
    /// `musewire/scripted` at thinking level `off`, then `get_available_models` with
    /// `musewire/scripted` and `musewire/scripted-large`.
    pub fn answer_opening(&mut self, key: &str) {
        if self.asked("get_state").is_none() {
            // Commands wait for the agent's first word (FRAME-03, FRAME-04).
            self.agent_lines(
                key,
                &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
            );
        }
        let state = self
            .asked("get_state")
            .expect("the bridge asked for the state");
        self.agent_lines(
            key,
            &[
                json!({"id": state["id"], "type": "response", "command": "get_state",
                "success": true, "data": {"model": model("scripted"), "thinkingLevel": "off"}}),
            ],
        );
        let models = self
            .asked("get_available_models")
            .expect("the bridge asked for the models");
        self.agent_lines(
            key,
            &[
                json!({"id": models["id"], "type": "response", "command": "get_available_models",
                "success": true, "data": {"models": [model("scripted"), model("scripted-large")]}}),
            ],
        );
    }

    /// Sends a prompt (request id 10) and acknowledges it: the agent's request id.
    pub fn prompt(&mut self, session: &str, text: &str) -> String {
        self.request(
            10,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        );
        let sent = self.agent.last().unwrap().clone();
        assert_eq!(sent["type"], "prompt");
        assert_eq!(sent["message"], text);
        let id = sent["id"].as_str().unwrap().to_owned();
        let agent = self.agent_to.last().unwrap().to_string();
        self.agent_lines(
            &agent,
            &[
                json!({"id": id, "type": "response", "command": "prompt", "success": true}),
                json!({"type": "agent_start"}),
            ],
        );
        id
    }

    /// The bridge's timer, `after` from now (the harness's clock moves on).
    pub fn timeout(&mut self, after: std::time::Duration) {
        self.now += after;
        self.bridge.handle(self.now, Input::Timeout);
        self.drain();
    }

    /// Answers the bridge's last `get_session_stats` (ACP-02): with this data, or failed.
    pub fn answer_stats(&mut self, session: &str, data: Option<Value>) {
        let asked = self
            .agent
            .iter()
            .rev()
            .find(|m| m["type"] == "get_session_stats")
            .expect("the bridge asked for the session's stats")
            .clone();
        let id = asked["id"].clone();
        let frame = match data {
            Some(data) => json!({"id": id, "type": "response", "command": "get_session_stats",
                "success": true, "data": data}),
            None => json!({"id": id, "type": "response", "command": "get_session_stats",
                "success": false, "error": "musewire agent does not support the get_session_stats command"}),
        };
        self.agent_lines(session, &[frame]);
    }

    /// The `session/update` updates sent so far, in order.
    pub fn updates(&self) -> Vec<Value> {
        self.editor
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| m["params"]["update"].clone())
            .collect()
    }

    /// The answer to editor request `id`, if sent.
    pub fn answer(&self, id: u64) -> Option<Value> {
        self.editor.iter().find(|m| m["id"] == json!(id)).cloned()
    }
}

/// A model of provider `musewire` as the agent describes it.
pub fn model(id: &str) -> Value {
    json!({"id": id, "name": id, "provider": "musewire", "reasoning": true})
}

/// An assistant message with this stop reason.
pub fn assistant(text: &str, stop_reason: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": stop_reason})
}

/// `message_update` with this assistant event.
pub fn update(event: Value) -> Value {
    json!({"type": "message_update", "message": assistant("", "stop"), "assistantMessageEvent": event})
}

/// `agent_end` with one assistant message.
pub fn agent_end(stop_reason: &str) -> Value {
    json!({"type": "agent_end", "messages": [assistant("x", stop_reason)]})
}

/// The editor requests the bridge made with this method, in order.
pub fn asked(h: &Harness, method: &str) -> Vec<Value> {
    h.editor
        .iter()
        .filter(|m| m["method"] == method && m.get("id").is_some())
        .cloned()
        .collect()
}

/// The agent's `extension_ui_response`s, in order.
pub fn answers(h: &Harness) -> Vec<Value> {
    h.agent
        .iter()
        .filter(|m| m["type"] == "extension_ui_response")
        .cloned()
        .collect()
}

/// The editor answers the permission `request` with `option` (ACP-08, ACP-09).
pub fn choose(h: &mut Harness, request: &Value, option: &str) {
    h.send(json!({"jsonrpc": "2.0", "id": request["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": option}}}));
}

/// The editor sets session `s`'s mode by `session/set_mode` (ACP-35), as request `id`.
pub fn set_mode(h: &mut Harness, id: u64, s: &str, mode: &str) {
    h.request(
        id,
        "session/set_mode",
        json!({"sessionId": s, "modeId": mode}),
    );
}
