//! The fuzz body for the [`Bridge`] (feature `fuzzing`): `fuzz/fuzz_targets/bridge_session.rs`
//! is a thin wrapper, and `core/tests/fuzz_bodies/acp.rs` runs it on seeds and on the ACP
//! transcripts under cargo test.
//!
//! The input is the bridge's whole input, interleaved: the first byte picks the
//! configuration (a session folder, an agent that serves stored output), then each [`Op`] is
//! a tag byte and its operands ([`decode`]; [`encode`] writes the same format, so seeds can be
//! made from transcripts with [`ops_from_transcript`]): raw editor bytes, well-formed editor
//! requests (initialize, with form elicitation for some operands, session/new, load, fork,
//! delete, prompt, cancel, `_muse/readOutput`, unknown methods, responses, and answers to the
//! permission requests and forms the bridge asked: ACP-08, ACP-09, ACP-36), raw agent bytes,
//! well-formed agent frames (responses to the commands the bridge actually wrote, shaped by
//! command, the events of a turn, the agent's dialogs, omp's subagent frames: ACP-37), stderr,
//! the end of an agent's stdout, its exit, the editor's end, a signal's shutdown, time
//! passing, what came of an HTTP MCP server's last exchange (MCP-18: a head, body bytes, its
//! end or its failure; `session/new` names an `http` or `sse` server for some operands), and
//! the driver's answers to the session folder's read and to a fork's or delete's file
//! (ACP-26, ACP-31, ACP-32: [`Input::SessionFolder`], [`Input::SessionFile`]).
//! Checked after every op:
//! - nothing panics;
//! - every editor action is complete JSON-RPC 2.0 lines: each a JSON object with
//!   `"jsonrpc":"2.0"` that is a response (an id, and a result or an error with an integer
//!   code and a string message), a notification or a request (a string method);
//! - every agent action is complete JSON lines, and names a session that was spawned; no
//!   session is spawned twice, none after the bridge began to end; an agent's stdin is
//!   closed at most once and its group killed at most once (ACP-12);
//! - the output of one input is bounded by its size (64 bytes a byte, 512 KiB a line);
//! - an HTTP MCP server (MCP-18) is opened once, sent requests only once opened and until
//!   stopped, and stopped at most once; the driver's actions never hold a header's value;
//! - after a timer input the next timeout is in the future (no busy loop), and once
//!   finished the bridge stays finished;
//! - determinism: a second bridge fed the same inputs at the same times gives the same
//!   actions.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{
    Action, AgentKey, Bridge, BridgeConfig, FileTicket, Input, McpRead, McpServerKey, ProcessKey,
    SessionFile, SessionFileDone, SessionFileFailure, SessionFileFailureKind,
};
use crate::client::ExitStatus;
use crate::mcp::http::{ExchangeId, HttpInput, ResponseHead};

/// The header value the fuzzed editor gives its HTTP MCP servers: never in an action's
/// `Debug` or transcript form (MCP-15).
const SECRET: &str = "fuzz-secret-header-value";

/// The session folder of the fuzzed bridge, when the configuration byte asks for one.
pub(crate) const SESSION_DIR: &str = "/state/sessions";

/// Bytes of output one input may give per byte it holds, on top of [`MAX_OUT_PER_LINE`] per
/// line it holds (a small event can update a card that holds up to 64 KiB, ACP-05).
const MAX_OUT_PER_BYTE: usize = 64;

/// Bytes of output one input may give per line it holds, and per session (an editor's end
/// or a timer reaches every session).
const MAX_OUT_PER_LINE: usize = 512 * 1024;

/// The stop reasons an `agent_end` carries.
const STOP_REASONS: [&str; 4] = ["stop", "length", "aborted", "error"];

/// The statuses of a subagent's lifecycle (ACP-37).
const SUBAGENT_STATUSES: [&str; 4] = ["started", "completed", "failed", "aborted"];

/// The statuses of todo tasks.
const TODO_STATUSES: [&str; 5] = ["pending", "in_progress", "completed", "cancelled", "odd"];

/// The most ops read from one input.
const MAX_OPS: usize = 512;

/// One step of a fuzzed bridge.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Bytes from the editor.
    Editor(Vec<u8>),
    /// A well-formed editor message, by kind and two operands.
    EditorMessage(u8, u8, u8),
    /// Bytes on a session's agent's stdout (the `n`-th spawned session, modulo).
    Agent(u8, Vec<u8>),
    /// A well-formed agent frame for a session, by kind and two operands.
    AgentFrame(u8, u8, u8, u8),
    /// Bytes on a session's agent's stderr.
    Stderr(u8, Vec<u8>),
    /// A session's agent's stdout ends.
    AgentEof(u8),
    /// A session's agent exits with this code.
    AgentExit(u8, i8),
    /// The editor's input ends.
    EditorEnd,
    /// A signal tells the bridge to end.
    Shutdown,
    /// Time passes (ms), then the timer input.
    Advance(u16),
    /// What came of the last exchange of the `n`-th session's HTTP MCP server (MCP-18), by
    /// kind: a head (status and content type by kind), body bytes, its end, its failure.
    McpHttp(u8, u8, Vec<u8>),
    /// The driver's answer to the oldest session-folder read, fork or delete it was asked
    /// (ACP-26, ACP-31, ACP-32), by kind and an operand: done, or failed in one of the ways
    /// the editor tells apart.
    Driver(u8, u8),
}

/// Reads the configuration byte and up to 512 ops from `data`; a truncated op ends it.
pub fn decode(data: &[u8]) -> (u8, Vec<Op>) {
    let Some((&config, mut rest)) = data.split_first() else {
        return (0, Vec::new());
    };
    let mut ops = Vec::new();
    fn take(n: usize, rest: &mut &[u8]) -> Option<Vec<u8>> {
        let (head, tail) = rest.split_at(n.min(rest.len()));
        *rest = tail;
        Some(head.to_vec())
    }
    fn byte(rest: &mut &[u8]) -> Option<u8> {
        let (&b, tail) = rest.split_first()?;
        *rest = tail;
        Some(b)
    }
    fn len(rest: &mut &[u8]) -> Option<usize> {
        let lo = byte(rest)?;
        let hi = byte(rest)?;
        Some(usize::from(u16::from_le_bytes([lo, hi])))
    }
    while ops.len() < MAX_OPS {
        let Some(tag) = byte(&mut rest) else { break };
        let op = (|| {
            Some(match tag % 12 {
                0 => {
                    let n = len(&mut rest)?;
                    Op::Editor(take(n, &mut rest)?)
                }
                1 => Op::EditorMessage(byte(&mut rest)?, byte(&mut rest)?, byte(&mut rest)?),
                2 => {
                    let s = byte(&mut rest)?;
                    let n = len(&mut rest)?;
                    Op::Agent(s, take(n, &mut rest)?)
                }
                3 => Op::AgentFrame(
                    byte(&mut rest)?,
                    byte(&mut rest)?,
                    byte(&mut rest)?,
                    byte(&mut rest)?,
                ),
                4 => {
                    let s = byte(&mut rest)?;
                    let n = len(&mut rest)?;
                    Op::Stderr(s, take(n, &mut rest)?)
                }
                5 => Op::AgentEof(byte(&mut rest)?),
                6 => Op::AgentExit(byte(&mut rest)?, byte(&mut rest)? as i8),
                7 => Op::EditorEnd,
                8 => Op::Shutdown,
                10 => {
                    let s = byte(&mut rest)?;
                    let kind = byte(&mut rest)?;
                    let n = len(&mut rest)?;
                    Op::McpHttp(s, kind, take(n, &mut rest)?)
                }
                11 => Op::Driver(byte(&mut rest)?, byte(&mut rest)?),
                _ => Op::Advance(len(&mut rest)? as u16),
            })
        })();
        match op {
            Some(op) => ops.push(op),
            None => break,
        }
    }
    (config, ops)
}

/// Writes `config` and `ops` in the format [`decode`] reads (byte strings over 64 KiB are
/// split into several ops).
pub fn encode(config: u8, ops: &[Op]) -> Vec<u8> {
    let mut out = vec![config];
    let bytes = |out: &mut Vec<u8>, tag: u8, session: Option<u8>, data: &[u8]| {
        for piece in data.chunks(usize::from(u16::MAX)) {
            out.push(tag);
            out.extend(session);
            out.extend((piece.len() as u16).to_le_bytes());
            out.extend_from_slice(piece);
        }
    };
    for op in ops {
        match op {
            Op::Editor(data) => bytes(&mut out, 0, None, data),
            Op::EditorMessage(a, b, c) => out.extend([1, *a, *b, *c]),
            Op::Agent(s, data) => bytes(&mut out, 2, Some(*s), data),
            Op::AgentFrame(s, a, b, c) => out.extend([3, *s, *a, *b, *c]),
            Op::Stderr(s, data) => bytes(&mut out, 4, Some(*s), data),
            Op::AgentEof(s) => out.extend([5, *s]),
            Op::AgentExit(s, code) => out.extend([6, *s, *code as u8]),
            Op::EditorEnd => out.push(7),
            Op::Shutdown => out.push(8),
            Op::Advance(ms) => {
                out.push(9);
                out.extend(ms.to_le_bytes());
            }
            Op::Driver(kind, a) => out.extend([11, *kind, *a]),
            Op::McpHttp(s, kind, data) => {
                // A head, an end or a failure carries no bytes: still one op.
                let empty: &[u8] = &[];
                let mut pieces: Vec<&[u8]> = data.chunks(usize::from(u16::MAX)).collect();
                if pieces.is_empty() {
                    pieces.push(empty);
                }
                for piece in pieces {
                    out.extend([10, *s, *kind]);
                    out.extend((piece.len() as u16).to_le_bytes());
                    out.extend_from_slice(piece);
                }
            }
        }
    }
    out
}

/// The configuration byte and ops of an ACP transcript (`conformance/transcripts/acp-*`,
/// JSONL: a header with `config.session_dir` and `config.agent_serves_output`, then steps of
/// `editor`, `editor_end`, `agent_stdout`/`agent_eof`/`agent_exit` of a `session`
/// `musewire-N`, `timer`, at `at` ms); `None` when it is not one.
pub fn ops_from_transcript(jsonl: &str) -> Option<(u8, Vec<Op>)> {
    let mut lines = jsonl.lines().filter(|l| !l.trim().is_empty());
    let header: Value = serde_json::from_str(lines.next()?).ok()?;
    if header.get("role")?.as_str()? != "bridge" {
        return None;
    }
    let config = &header["config"];
    let mut byte = 0u8;
    if config.get("session_dir").is_some() {
        byte |= 1;
    }
    if config["agent_serves_output"] == json!(true) {
        byte |= 2;
    }
    if config["agent"] == json!("omp") {
        byte |= 4;
    }
    let mut ops = Vec::new();
    let mut now = 0u64;
    for line in lines {
        let step: Value = serde_json::from_str(line).ok()?;
        if let Some(at) = step.get("at").and_then(Value::as_u64) {
            let mut gap = at.saturating_sub(now);
            now = now.max(at);
            while gap > 0 {
                let ms = gap.min(u64::from(u16::MAX));
                ops.push(Op::Advance(ms as u16));
                gap -= ms;
            }
        }
        let session = || -> Option<u8> {
            let name = step.get("session")?.as_str()?;
            let n: u8 = name.strip_prefix("musewire-")?.parse().ok()?;
            Some(n.saturating_sub(1))
        };
        // An MCP server's steps (MCP-01) are not modelled here: `mcp::fuzzing` fuzzes the
        // MCP client; the bridge's seeds keep the editor's and the agents' steps.
        let server = step.get("session").and_then(Value::as_str);
        if server.is_some_and(|s| matches!(s.parse(), Ok(ProcessKey::McpServer(_)))) {
            continue;
        }
        if let Some(text) = step.get("editor").and_then(Value::as_str) {
            ops.push(Op::Editor(text.as_bytes().to_vec()));
        } else if step.get("editor_end").is_some() {
            ops.push(Op::EditorEnd);
        } else if let Some(text) = step.get("agent_stdout").and_then(Value::as_str) {
            ops.push(Op::Agent(session()?, text.as_bytes().to_vec()));
        } else if step.get("agent_eof").is_some() {
            ops.push(Op::AgentEof(session()?));
        } else if let Some(exit) = step.get("agent_exit") {
            let code = exit.get("code").and_then(Value::as_i64).unwrap_or(-1);
            ops.push(Op::AgentExit(session()?, code as i8));
        }
        // A timer step is the Advance before it (the time moved) or nothing.
    }
    Some((byte, ops))
}

/// A bridge and what the harness knows of it.
struct Side {
    bridge: Bridge,
    /// Agent keys in the order spawned.
    spawned: Vec<AgentKey>,
    closed: BTreeSet<AgentKey>,
    killed: BTreeSet<AgentKey>,
    /// ACP session ids the editor was given.
    acp_ids: Vec<String>,
    /// Per spawned session: (id, type) of each command written to its agent.
    written: Vec<Vec<(String, String)>>,
    /// HTTP MCP servers opened (MCP-18): the last exchange each was asked for, if any.
    http: BTreeMap<McpServerKey, Option<ExchangeId>>,
    /// MCP servers stopped.
    mcp_stopped: BTreeSet<McpServerKey>,
    /// The ids of the requests the bridge made of the editor (ACP-08, ACP-09, ACP-36).
    asked: Vec<Value>,
    /// What the driver was asked and has not answered, oldest first: a folder read (`None`)
    /// or a fork's or delete's file (its ticket, and whether it is a fork).
    driver: VecDeque<Option<(FileTicket, bool)>>,
    ending: bool,
    finished: bool,
}

impl Side {
    fn new(config: BridgeConfig) -> Side {
        Side {
            bridge: Bridge::new(config),
            spawned: Vec::new(),
            closed: BTreeSet::new(),
            killed: BTreeSet::new(),
            acp_ids: Vec::new(),
            written: Vec::new(),
            http: BTreeMap::new(),
            mcp_stopped: BTreeSet::new(),
            asked: Vec::new(),
            driver: VecDeque::new(),
            ending: false,
            finished: false,
        }
    }

    /// Drains and checks the actions: their count in bytes, and the actions.
    fn drain(&mut self) -> (usize, Vec<Action>) {
        let mut out = 0;
        let mut actions = Vec::new();
        while let Some(action) = self.bridge.poll_action() {
            match &action {
                Action::Editor { bytes } => {
                    out += bytes.len();
                    for value in lines(bytes, "editor") {
                        check_editor_message(&value);
                        if let Some(id) = value["result"]["sessionId"].as_str() {
                            self.acp_ids.push(id.to_owned());
                        }
                        if value.get("method").is_some() {
                            if let Some(id) = value.get("id") {
                                self.asked.push(id.clone());
                            }
                        }
                    }
                }
                Action::Spawn { session, .. } => {
                    assert!(!self.ending, "a spawn after the bridge began to end");
                    let key = *session;
                    assert!(!self.spawned.contains(&key), "{key} spawned twice");
                    self.spawned.push(key);
                    self.written.push(Vec::new());
                }
                Action::Agent { session, bytes } => {
                    out += bytes.len();
                    let i = self.index(session);
                    for value in lines(bytes, "agent") {
                        if let (Some(id), Some(kind)) =
                            (value["id"].as_str(), value["type"].as_str())
                        {
                            self.written[i].push((id.to_owned(), kind.to_owned()));
                        }
                    }
                }
                // MCP-01: the fuzzed sessions name no MCP servers, but a server's lines
                // would be JSON all the same.
                Action::McpWrite { bytes, .. } => {
                    out += bytes.len();
                    lines(bytes, "mcp");
                }
                Action::McpSpawn { .. } | Action::McpHttpAbort { .. } => {}
                Action::McpStop { server } => {
                    assert!(self.mcp_stopped.insert(*server), "{server} stopped twice");
                }
                // MCP-18: opened once, before its requests; none after its stop.
                Action::McpHttpOpen { server, .. } => {
                    assert!(!self.http.contains_key(server), "{server} opened twice");
                    self.http.insert(*server, None);
                }
                Action::McpHttpSend { server, request } => {
                    assert!(
                        !self.mcp_stopped.contains(server),
                        "{server} sent to, stopped"
                    );
                    let last = self.http.get_mut(server);
                    let last = last.unwrap_or_else(|| panic!("{server} sent to, not opened"));
                    *last = Some(request.exchange);
                    out += request.body.as_ref().map_or(0, Vec::len);
                }
                // ACP-26, ACP-31, ACP-32: answered by `Op::Driver`.
                Action::ReadSessionFolder { .. } => self.driver.push_back(None),
                Action::ForkSessionFile { ticket, .. } => {
                    self.driver.push_back(Some((*ticket, true)))
                }
                Action::DeleteSessionFile { ticket, .. } => {
                    self.driver.push_back(Some((*ticket, false)))
                }
                // ACP-38: the fuzzed editors offer no `fs.writeTextFile`; a read would not be
                // answered either.
                Action::ReadEditedFile { .. } => {}
                Action::CloseAgentStdin { session } => {
                    self.index(session);
                    let key = *session;
                    assert!(self.closed.insert(key), "{key}'s stdin closed twice");
                }
                Action::StopAgent { session } => {
                    self.index(session);
                    let key = *session;
                    assert!(self.killed.insert(key), "{key}'s group killed twice");
                }
            }
            // MCP-15: no header value in what the driver is told, shown or recorded.
            assert!(!reveals_secret(&action), "a header value in {action:?}");
            actions.push(action);
        }
        if self.finished {
            assert!(self.bridge.is_finished(), "a finished bridge went on");
        }
        self.finished = self.bridge.is_finished();
        (out, actions)
    }

    fn index(&self, session: &AgentKey) -> usize {
        self.spawned
            .iter()
            .position(|k| k == session)
            .unwrap_or_else(|| panic!("an action for {session:?}, never spawned"))
    }

    /// The `n`-th spawned session's key (modulo), if any.
    fn session(&self, n: u8) -> Option<(usize, AgentKey)> {
        if self.spawned.is_empty() {
            return None;
        }
        let i = usize::from(n) % self.spawned.len();
        Some((i, self.spawned[i]))
    }

    /// The `n`-th ACP id given (modulo), or a made-up one.
    fn acp_id(&self, n: u8) -> String {
        match self.acp_ids.len() {
            0 => format!("s-{n}"),
            len => self.acp_ids[usize::from(n) % len].clone(),
        }
    }
}

/// The JSON lines of an action's bytes: complete (ending in a newline), each an object.
fn lines(bytes: &[u8], what: &str) -> Vec<Value> {
    assert_eq!(
        bytes.last(),
        Some(&b'\n'),
        "{what} bytes end with a newline"
    );
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|line| {
            let value: Value = serde_json::from_slice(line).unwrap_or_else(|e| {
                panic!(
                    "{what} line does not parse: {e}: {}",
                    String::from_utf8_lossy(line)
                )
            });
            assert!(value.is_object(), "{what} line is an object: {value}");
            value
        })
        .collect()
}

/// A JSON-RPC 2.0 message: a response (id; result or error {code, message}), a request or a
/// notification (string method).
fn check_editor_message(value: &Value) {
    assert_eq!(value["jsonrpc"], "2.0", "{value}");
    if let Some(method) = value.get("method") {
        assert!(method.is_string(), "{value}");
        return;
    }
    let id = value.get("id").expect("a response has an id");
    assert!(
        id.is_null() || id.is_string() || id.is_i64() || id.is_u64(),
        "{value}"
    );
    match (value.get("result"), value.get("error")) {
        (Some(_), None) => {}
        (None, Some(error)) => {
            assert!(error["code"].is_i64(), "{value}");
            assert!(error["message"].is_string(), "{value}");
        }
        _ => panic!("a response has a result or an error: {value}"),
    }
}

/// MCP-15: whether `action`, as the driver is told it (its bytes), shown (`Debug`) or
/// recorded (its serde form), holds the fuzzed header value. Bytes are searched as they are:
/// their `Debug` form (a list of numbers) would hide the value and, on long lines, cost more
/// than the bridge's own work.
fn reveals_secret(action: &Action) -> bool {
    let holds = |bytes: &[u8]| memchr::memmem::find(bytes, SECRET.as_bytes()).is_some();
    let shown = |action: &Action| {
        let text = format!("{action:?}") + &serde_json::to_string(action).unwrap_or_default();
        text.contains(SECRET)
    };
    match action {
        Action::Editor { bytes } | Action::Agent { bytes, .. } | Action::McpWrite { bytes, .. } => {
            holds(bytes)
        }
        Action::McpHttpSend { server, request } => {
            let body = request.body.as_deref().is_some_and(holds);
            let mut bare = request.clone();
            bare.body = None;
            body || shown(&Action::McpHttpSend {
                server: *server,
                request: bare,
            })
        }
        _ => shown(action),
    }
}

/// The harness: two bridges fed alike (determinism), the clock, and the ops' inputs.
struct Harness {
    sides: [Side; 2],
    now: Instant,
    next_id: u64,
}

impl Harness {
    fn new(config: u8) -> Harness {
        let config = BridgeConfig {
            session_dir: (config & 1 != 0).then(|| PathBuf::from(SESSION_DIR)),
            agent_serves_output: config & 2 != 0,
            agent: if config & 4 != 0 {
                crate::client::AgentKind::Omp
            } else {
                crate::client::AgentKind::Other
            },
            ..BridgeConfig::default()
        };
        Harness {
            sides: [Side::new(config.clone()), Side::new(config)],
            now: Instant::now(),
            next_id: 1,
        }
    }

    /// Hands one input to both bridges and checks what they do.
    fn feed(&mut self, input: Input<'_>, size: usize, newlines: usize) {
        let ends = matches!(input, Input::EditorEnd | Input::Shutdown);
        let timer = matches!(input, Input::Timeout);
        let mut outs = Vec::new();
        for side in &mut self.sides {
            side.bridge.handle(self.now, input.clone());
            let (bytes, actions) = side.drain();
            let sessions = side.spawned.len();
            let bound = MAX_OUT_PER_BYTE * size + MAX_OUT_PER_LINE * (newlines + 1 + sessions);
            assert!(
                bytes <= bound,
                "{bytes} bytes out for an input of {size} bytes, {newlines} lines: over {bound}"
            );
            if ends {
                side.ending = true;
            }
            if timer {
                if let Some(next) = side.bridge.poll_timeout() {
                    assert!(next > self.now, "a timeout due now was not handled");
                }
            }
            outs.push(actions);
        }
        assert_eq!(outs[0], outs[1], "the same inputs gave different actions");
    }

    fn editor(&mut self, bytes: &[u8]) {
        let newlines = bytes.iter().filter(|b| **b == b'\n').count();
        self.feed(Input::Editor(bytes), bytes.len(), newlines);
    }

    fn op(&mut self, op: Op) {
        match op {
            Op::Editor(bytes) => self.editor(&bytes),
            Op::EditorMessage(kind, a, b) => {
                let message = self.editor_message(kind, a, b);
                let mut line = serde_json::to_vec(&message).unwrap_or_default();
                line.push(b'\n');
                self.editor(&line);
            }
            Op::Agent(n, bytes) => {
                let Some((_, id)) = self.sides[0].session(n) else {
                    return;
                };
                let newlines = bytes.iter().filter(|b| **b == b'\n').count();
                self.feed(Input::AgentStdout(id, &bytes), bytes.len(), newlines);
            }
            Op::AgentFrame(n, kind, a, b) => {
                let Some((i, id)) = self.sides[0].session(n) else {
                    return;
                };
                let frame = self.agent_frame(i, kind, a, b);
                let mut line = serde_json::to_vec(&frame).unwrap_or_default();
                line.push(b'\n');
                self.feed(Input::AgentStdout(id, &line), line.len(), 1);
            }
            Op::Stderr(n, bytes) => {
                if let Some((_, id)) = self.sides[0].session(n) {
                    self.feed(Input::AgentStderr(id, &bytes), bytes.len(), 0);
                }
            }
            Op::AgentEof(n) => {
                if let Some((_, id)) = self.sides[0].session(n) {
                    self.feed(Input::AgentStdoutEnd(id), 0, 0);
                }
            }
            Op::AgentExit(n, code) => {
                if let Some((_, id)) = self.sides[0].session(n) {
                    let status = ExitStatus::Code(i32::from(code));
                    self.feed(Input::AgentExit(id, status), 0, 0);
                }
            }
            Op::McpHttp(n, kind, bytes) => self.mcp_http(n, kind, &bytes),
            Op::Driver(kind, a) => self.driver(kind, a),
            Op::EditorEnd => self.feed(Input::EditorEnd, 0, 0),
            Op::Shutdown => self.feed(Input::Shutdown, 0, 0),
            Op::Advance(ms) => {
                // The editor reads as time passes: an odd number of ms, half of what waits
                // (ACP-20: the agents may be held and released).
                let waiting = self.sides[0].bridge.editor_waiting();
                let written = if ms % 2 == 1 { waiting / 2 } else { waiting };
                self.feed(Input::EditorWritten(written), 0, 0);
                // The agents take what waits for their stdin (ACP-20), half on odd ms.
                for key in self.sides[0].spawned.clone() {
                    let id = key;
                    let waiting = self.sides[0].bridge.agent_stdin_waiting(id);
                    let written = if ms % 2 == 1 { waiting / 2 } else { waiting };
                    self.feed(Input::AgentWritten(id, written), 0, 0);
                }
                self.now += Duration::from_millis(u64::from(ms));
                self.feed(Input::Timeout, 0, 0);
            }
        }
    }

    /// MCP-18: what came of the last exchange of the `n`-th session's first HTTP server.
    fn mcp_http(&mut self, n: u8, kind: u8, bytes: &[u8]) {
        let Some((_, agent)) = self.sides[0].session(n) else {
            return;
        };
        let side = &self.sides[0];
        let found = side.http.range(McpServerKey { agent, index: 0 }..);
        let Some((&server, &Some(exchange))) = found.take_while(|(k, _)| k.agent == agent).next()
        else {
            return;
        };
        let statuses = [200, 202, 200, 404, 405, 500];
        let types = [
            Some("application/json"),
            Some("text/event-stream"),
            None,
            Some("text/plain"),
        ];
        let head = ResponseHead {
            status: statuses[usize::from(kind / 4) % statuses.len()],
            content_type: types[usize::from(kind / 24) % types.len()],
            session_id: (kind & 0x80 == 0).then_some("fuzz-session"),
        };
        let input = match kind % 4 {
            0 => HttpInput::Head { exchange, head },
            1 => HttpInput::Body { exchange, bytes },
            2 => HttpInput::End { exchange },
            _ => HttpInput::Failed {
                exchange,
                error: "the connection broke",
            },
        };
        let newlines = bytes.iter().filter(|b| **b == b'\n').count();
        self.feed(
            Input::Mcp(server, McpRead::Http(input)),
            bytes.len(),
            newlines,
        );
    }

    /// ACP-26, ACP-31, ACP-32: the driver's answer to the oldest read, fork or delete it
    /// was asked: done (a listing of a file by `a`, or the fork's copy named by `a`) or
    /// failed (not found, not a file, another failure).
    fn driver(&mut self, kind: u8, a: u8) {
        let Some(asked) = self.sides[0].driver.front().copied() else {
            return;
        };
        for side in &mut self.sides {
            side.driver.pop_front();
        }
        let failure = |kind: u8| SessionFileFailure {
            kind: match kind % 3 {
                0 => SessionFileFailureKind::NotFound,
                1 => SessionFileFailureKind::NotAFile,
                _ => SessionFileFailureKind::Other,
            },
            message: "the driver failed".into(),
        };
        let fails = kind % 4 == 3;
        match asked {
            None => {
                let header = format!(
                    "{{\"type\":\"session\",\"id\":\"s-{a}\",\"cwd\":\"/work\"}}\n\
                     {{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"{}\"}}}}\n",
                    "t".repeat(usize::from(a))
                );
                let files = (!fails).then(|| {
                    (0..usize::from(kind % 8))
                        .map(|n| SessionFile {
                            name: format!("s-{}.jsonl", (n + usize::from(a)) % 6),
                            modified_ms: Some(u64::from(a) * 1000 + n as u64),
                            head: header.clone().into_bytes(),
                            tail: if n % 2 == 0 {
                                Vec::new()
                            } else {
                                b"\xff{\n".to_vec()
                            },
                        })
                        .collect()
                });
                let input = Input::SessionFolder(files.ok_or_else(|| {
                    let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
                    super::SessionFolderError::io(std::path::Path::new("/sessions"), &denied)
                }));
                self.feed(input, 0, 0);
            }
            Some((ticket, fork)) => {
                let outcome = if fails {
                    Err(failure(a))
                } else if fork {
                    Ok(SessionFileDone::Forked {
                        name: format!("s-{}.jsonl", 10 + a % 4),
                    })
                } else {
                    Ok(SessionFileDone::Deleted)
                };
                self.feed(Input::SessionFile(ticket, outcome), 0, 0);
            }
        }
    }

    /// The editor's answer to the request the bridge made of it, by `a` (ACP-08, ACP-09,
    /// ACP-36): a permission option or `cancelled`, a form's accept (with a value offered or
    /// not), decline or cancel, an error, or a result of no shape.
    fn editor_answer(&self, a: u8, b: u8) -> Value {
        let asked = &self.sides[0].asked;
        let id = if asked.is_empty() {
            json!(format!("musewire-dialog-{a}"))
        } else {
            asked[usize::from(a) % asked.len()].clone()
        };
        let options = [
            "allow_once",
            "allow_always",
            "reject_once",
            "reject_always",
            "yes",
            "no",
            "choice-0",
            "choice-2",
        ];
        let value = ["yes", "no", "choice-1", "choice-9", "typed text"];
        let result = match b % 8 {
            0 => {
                json!({"outcome": {"outcome": "selected", "optionId": options[usize::from(a) % options.len()]}})
            }
            1 => json!({"outcome": {"outcome": "cancelled"}}),
            2 => {
                json!({"action": "accept", "content": {"value": value[usize::from(a) % value.len()]}})
            }
            3 => json!({"action": "accept", "content": {"value": a.is_multiple_of(2)}}),
            4 => json!({"action": "decline"}),
            5 => json!({"action": "cancel"}),
            6 => {
                return json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "refused"}})
            }
            _ => json!({"outcome": a}),
        };
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    }

    fn editor_message(&mut self, kind: u8, a: u8, b: u8) -> Value {
        self.next_id += 1;
        let id = match b % 4 {
            0 => json!(self.next_id),
            1 => json!(format!("r{}", self.next_id)),
            // Reused ids.
            2 => json!(u64::from(a % 4)),
            _ => json!(u64::from(b / 4)),
        };
        let session = self.sides[0].acp_id(a);
        let request = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let prompt = |text: String| {
            request(
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
            )
        };
        match kind % 19 {
            0 => {
                let mut meta = serde_json::Map::new();
                if a & 1 != 0 {
                    meta.insert("muse/usage".into(), json!(1));
                }
                if a & 2 != 0 {
                    meta.insert("muse/output".into(), json!(1));
                }
                let mut capabilities = json!({"_meta": meta});
                // ACP-36: an editor that offers form elicitation.
                if a & 4 != 0 {
                    capabilities["elicitation"] = json!({"form": {}});
                }
                request(
                    "initialize",
                    json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
                )
            }
            // ACP-31, ACP-32: a fork and a delete of a session given (or made up).
            14 => request(
                "session/fork",
                json!({"sessionId": session, "cwd": "/work", "mcpServers": []}),
            ),
            15 => request("session/delete", json!({"sessionId": session})),
            // ACP-08, ACP-09, ACP-36: an answer to a request the bridge made.
            16 => self.editor_answer(a, b),
            17 => request(
                "session/resume",
                json!({"sessionId": session, "cwd": "/work", "mcpServers": []}),
            ),
            // ACP-26: the session folder read, answered by `Op::Driver`.
            18 => request("session/list", json!({"cwd": "/work"})),
            // MCP-18: some sessions have an HTTP MCP server (streamable or HTTP+SSE).
            1 => {
                let headers = json!([{"name": "Authorization", "value": SECRET}]);
                let servers = match a % 4 {
                    1 => {
                        json!([{"type": "http", "name": "web", "url": "http://127.0.0.1:1/mcp", "headers": headers}])
                    }
                    2 => {
                        json!([{"type": "sse", "name": "old", "url": "http://127.0.0.1:1/sse", "headers": headers}])
                    }
                    _ => json!([]),
                };
                request(
                    "session/new",
                    json!({"cwd": "/work", "mcpServers": servers}),
                )
            }
            2 => request("session/new", json!({"cwd": "relative", "mcpServers": []})),
            3 => request(
                "session/load",
                json!({"sessionId": format!("s-{}", a % 4), "cwd": "/work", "mcpServers": []}),
            ),
            4 => request(
                "session/load",
                json!({"sessionId": session, "cwd": "/work", "mcpServers": []}),
            ),
            5 => prompt(format!("hello {a}")),
            6 => prompt("/status".into()),
            7 => prompt("x".repeat(usize::from(a) * 1024)),
            8 => {
                json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}})
            }
            9 => request(
                "_muse/readOutput",
                json!({"sessionId": session, "itemId": format!("c{}", a % 4),
                       "outputRef": format!("o{}", b % 4), "offsetBytes": u64::from(a) * 100,
                       "lengthBytes": 1000}),
            ),
            // ACP-35: modes set both ways, offered or not.
            10 => {
                let mode =
                    ["default", "acceptEdits", "bypassPermissions", "plan"][usize::from(b % 4)];
                match a % 3 {
                    0 => request("frobnicate", json!({})),
                    1 => request(
                        "session/set_mode",
                        json!({"sessionId": session, "modeId": mode}),
                    ),
                    _ => request(
                        "session/set_config_option",
                        json!({"sessionId": session, "configId": "mode", "value": mode}),
                    ),
                }
            }
            11 => json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": "x"}}),
            12 => json!({"jsonrpc": "2.0", "method": "some/notification", "params": a}),
            // ACP-14..16: images (past the bounds too), context, links, audio, blobs.
            _ if b & 1 == 1 => {
                let blocks: Vec<Value> = (0..usize::from(a % 32))
                    .map(|i| match (i + usize::from(b)) % 6 {
                        0 => json!({"type": "image", "data": "A".repeat(usize::from(b) * 4096), "mimeType": "image/png"}),
                        1 => json!({"type": "resource", "resource": {"uri": "file:///w/a", "text": "x".repeat(usize::from(a) * 4096)}}),
                        2 => json!({"type": "resource", "resource": {"uri": "file:///w/b", "blob": "aGk=", "mimeType": if i % 2 == 0 { "image/jpeg" } else { "application/zip" }}}),
                        3 => json!({"type": "resource_link", "name": "n\u{7}", "uri": "https://u:p@h/x", "size": i}),
                        4 => json!({"type": "audio", "data": "aGk=", "mimeType": "audio/wav"}),
                        _ => json!({"type": "text", "text": i.to_string()}),
                    })
                    .collect();
                request(
                    "session/prompt",
                    json!({"sessionId": session, "prompt": blocks}),
                )
            }
            _ => request(
                "session/prompt",
                json!({"sessionId": session, "prompt": (0..usize::from(a))
                    .map(|i| json!({"type": "text", "text": i.to_string()}))
                    .collect::<Vec<_>>()}),
            ),
        }
    }

    /// A frame of session `i`'s agent: a response to a command the bridge wrote (by `a`), or
    /// an event of a turn.
    fn agent_frame(&self, i: usize, kind: u8, a: u8, b: u8) -> Value {
        let written = &self.sides[0].written[i];
        let call = (!written.is_empty()).then(|| &written[usize::from(a) % written.len()]);
        let tool = format!("c{}", b % 4);
        let stored = json!({"sessionId": "agent-1", "itemId": tool, "outputRef": format!("o{}", a % 4),
            "availability": if b & 4 == 0 { "available" } else { "expired" },
            "totalBytes": 5000, "previewBytes": 10});
        match kind % 20 {
            0 => json!({"type": "ready", "protocolVersion": 1, "supportedProtocolVersions": [1],
                "capabilities": {"readOutput": b & 1 == 0}}),
            1..=4 => {
                let Some((id, command)) = call else {
                    return json!({"type": "agent_start"});
                };
                if kind % 20 == 4 {
                    return json!({"id": id, "type": "response", "command": command,
                        "success": false, "error": "failed",
                        "code": if b & 1 == 0 { "session_busy" } else { "not_found" }});
                }
                let messages: Vec<Value> = (0..usize::from(b % 6))
                    .map(|n| match n % 3 {
                        0 => json!({"role": "user", "content": format!("u{n}")}),
                        1 => json!({"role": "assistant", "content": [{"type": "text", "text": "a"},
                            {"type": "toolCall", "id": tool, "name": "bash", "arguments": {}}],
                            "usage": {"input": 3, "output": 2, "totalTokens": 5}}),
                        _ => json!({"role": "toolResult", "toolCallId": tool, "toolName": "bash",
                            "content": [{"type": "text", "text": "out"}], "isError": false,
                            "details": {"storedOutput": stored}}),
                    })
                    .collect();
                let data = match command.as_str() {
                    "get_state" => {
                        json!({"sessionFile": format!("{SESSION_DIR}/s-{}.jsonl", a % 4),
                        "sessionName": "title", "model": {"contextWindow": 1000},
                        "todoPhases": [{"name": "p", "tasks": [{"content": "t", "status": "in_progress"}]}]})
                    }
                    "switch_session" => json!({"cancelled": b & 1 == 1}),
                    "get_messages_page" => {
                        let mut page = json!({"messages": messages, "totalMessages": 40});
                        if b & 8 != 0 {
                            page["nextCursor"] = json!(format!("k{}", a));
                        }
                        page
                    }
                    "get_session_stats" => json!({"tokens": {"input": 10, "output": 5,
                        "cacheRead": 1, "cacheWrite": 0, "total": 16}}),
                    "read_output" => json!({"sessionId": "agent-1", "itemId": tool,
                        "outputRef": format!("o{}", a % 4), "offsetBytes": 0, "byteLen": 3,
                        "totalBytes": 3, "text": "abc", "eof": true}),
                    _ => json!({}),
                };
                json!({"id": id, "type": "response", "command": command, "success": true, "data": data})
            }
            5 => json!({"type": "agent_start"}),
            6 => json!({"type": "agent_end", "messages": [{"role": "assistant", "content": [],
                "stopReason": STOP_REASONS[usize::from(b % 4)]}]}),
            7 => json!({"type": "message_update", "message": {"role": "assistant", "content": []},
                "assistantMessageEvent": {"type": if b & 1 == 0 { "text_delta" } else { "thinking_delta" },
                "delta": "y".repeat(usize::from(a) * 64)}}),
            8 => json!({"type": "message_end", "message": {"role": "assistant", "content": [],
                "usage": {"input": a, "output": b, "totalTokens": u16::from(a) + u16::from(b)}}}),
            // ACP-19: a call's arguments streamed, then complete.
            9 if b & 8 != 0 => {
                let call = json!({"type": "toolCall", "id": tool, "name": "edit", "arguments":
                    {"path": "../x", "edits": [{"oldText": "a", "newText": "b".repeat(usize::from(a) * 512)}]}});
                let message = json!({"role": "assistant", "content": [call]});
                let event = if b & 16 == 0 {
                    json!({"type": "toolcall_start", "contentIndex": 0, "partial": message})
                } else {
                    json!({"type": "toolcall_end", "contentIndex": 0, "toolCall": call})
                };
                json!({"type": "message_update", "message": message, "assistantMessageEvent": event})
            }
            9 => json!({"type": "tool_execution_start", "toolCallId": tool, "toolName": "bash",
                "args": {"command": "ls"}}),
            10 => json!({"type": "tool_execution_update", "toolCallId": tool, "toolName": "bash",
                "partialResult": {"content": [{"type": "text", "text": "z".repeat(usize::from(a) * 64)}]}}),
            // ACP-17, ACP-18: an edit's per-file results.
            11 if b & 2 != 0 => json!({"type": "tool_execution_end", "toolCallId": tool,
                "toolName": "edit", "isError": b & 1 == 1, "result": {"content": [],
                "details": {"perFileResults": (0..usize::from(a % 80)).map(|n| json!({
                    "path": format!("f{}/../{n}", b), "oldText": "o", "newText": "n".repeat(n * 1024),
                    "firstChangedLine": n}))
                .collect::<Vec<_>>()}}}),
            11 => json!({"type": "tool_execution_end", "toolCallId": tool, "toolName": "bash",
                "isError": b & 1 == 1, "result": {"content": [{"type": "text", "text": "done"}],
                "details": {"storedOutput": stored}}}),
            12 => json!({"type": "tool_execution_end", "toolCallId": tool, "toolName": "todo",
                "isError": false, "result": {"content": [], "details": {"phases": [{"name": "p",
                "tasks": (0..usize::from(a)).map(|n| json!({"content": n.to_string(),
                "status": TODO_STATUSES[n % 5]}))
                .collect::<Vec<_>>()}]}}}),
            // ACP-08, ACP-09, ACP-43: a confirm, an approval of its call when exactly one call
            // has just started.
            13 if b & 8 != 0 => json!({"type": "extension_ui_request", "id": format!("u{a}"),
                "method": "confirm", "title": "Allow?", "message": "m"}),
            13 => {
                json!({"type": format!("kind_{}", a % 3), "id": format!("i{b}"), "status": "running",
                "text": "t"})
            }
            14 => {
                json!({"type": "available_commands_update", "commands": [{"name": "c", "description": "d"}]})
            }
            // ACP-08, ACP-09, ACP-36: the agent's dialogs, approvals among them.
            16 => {
                let id = format!("q{}", a % 4);
                match b % 6 {
                    0 => json!({"type": "extension_ui_request", "id": id, "method": "confirm",
                        "title": "Sure?", "message": "m".repeat(usize::from(a) * 64)}),
                    1 => json!({"type": "extension_ui_request", "id": id, "method": "select",
                        "title": "Pick", "options": (0..usize::from(a % 5)).map(|n| n.to_string()).collect::<Vec<_>>()}),
                    2 => json!({"type": "extension_ui_request", "id": id, "method": "select",
                        "title": "Allow tool: bash\nCommand: ls", "options": ["Approve", "Deny"]}),
                    3 => {
                        json!({"type": "extension_ui_request", "id": id, "method": "input", "title": "Name"})
                    }
                    4 => json!({"type": "extension_ui_request", "id": id, "method": "editor",
                        "title": "Text", "prefill": "p", "timeout": u64::from(a) * 10}),
                    _ => json!({"type": "extension_ui_request", "id": "c", "method": "cancel",
                        "targetId": id}),
                }
            }
            // ACP-37: omp's subagents.
            17 => json!({"type": "subagent_lifecycle", "payload": {"id": format!("s{}", a % 4),
                "agent": "explore", "status": SUBAGENT_STATUSES[usize::from(b % 4)],
                "description": if b & 4 == 0 { Value::from("a task") } else { Value::Null }, "index": 0}}),
            18 => json!({"type": "subagent_progress", "payload": {"task": "t\nmore",
                "progress": {"id": format!("s{}", a % 4), "status": if b & 1 == 0 { "running" } else { "completed" },
                "lastIntent": "doing", "recentOutput": (0..usize::from(b % 9)).map(|n| "o".repeat(n * usize::from(a) * 16)).collect::<Vec<_>>(),
                "toolCount": b, "requests": a}}}),
            _ => json!({"type": "response", "command": "parse", "success": false, "error": "bad"}),
        }
    }
}

/// Runs `ops` on a bridge made by `config` (see [`decode`]) and checks the invariants of the
/// module docs; then ends it (the editor's end, every agent's exit, the budget's time) and
/// checks that it is finished.
pub fn run(config: u8, ops: impl IntoIterator<Item = Op>) {
    let mut h = Harness::new(config);
    for op in ops {
        h.op(op);
    }
    h.feed(Input::EditorEnd, 0, 0);
    let spawned = h.sides[0].spawned.len();
    for n in 0..spawned {
        h.op(Op::AgentExit(n as u8, 0));
    }
    h.op(Op::Advance(u16::MAX));
    for side in &h.sides {
        assert!(
            side.bridge.is_finished(),
            "not finished after the editor's end"
        );
        if spawned <= usize::from(u8::MAX) {
            assert_eq!(
                side.killed.len(),
                spawned,
                "every agent's group is killed once"
            );
        }
    }
}

/// `bridge_session`: the fuzz target's body.
pub fn bridge_session(data: &[u8]) {
    let (config, ops) = decode(data);
    run(config, ops);
}
