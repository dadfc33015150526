//! The Agent Client Protocol adapter: [`Bridge`] makes any `--mode rpc` agent an ACP agent
//! for editors (JSON-RPC 2.0, newline-delimited over stdio, protocol version 1; seed
//! `003_53309ea8c05bcc75.txt`, rules ACP-*).
//!
//! The bridge is sans-IO and follows the crate's run-loop contract (the [crate docs](crate)):
//! the driver hands in every [`Input`] through [`Bridge::handle`] (bytes from the editor, the
//! output and exit of each session's agent, timers), drains [`Bridge::poll_action`] (bytes for
//! the editor, an agent to spawn in a session's cwd, bytes for a session's agent, an agent's
//! stdin to close, an agent's process group to kill) and sleeps until [`Bridge::poll_timeout`].
//! Nothing outlives the bridge (ACP-12): a stopped agent gets [`STOP_GRACE`] after its stdin
//! closes to end its own children, then its process group is killed. Inside, each ACP session has its own
//! [`Client`] and its own agent process, named in actions and inputs by its agent key
//! (`musewire-N`; the ACP session id too, unless the agent keeps its sessions in
//! [`BridgeConfig::session_dir`], when the ACP id is the name of its session file there).
//!
//! Besides prompts: `session/load` (ACP-06: the agent switched to the session's file, the
//! plan cleared, the conversation replayed and the title, latest plan and usage rebuilt from
//! at most 20 pages of 100 history messages, no model turn) and `_muse/readOutput` (OUT-01, 06, 07: negotiated at
//! `initialize`, each read checked against the history, then the agent's `read_output`
//! within 20 s, failures typed); `conformance/RULES.md` notes how. The agent's dialogs are
//! asked of the editor (`dialogs`: approvals tied to their tool call and other choices as
//! `session/request_permission`, text as form elicitation, ACP-08, ACP-09), and what it says
//! outside the model's text is shown in the turn (`notices`: local-only prompts, errors,
//! retries, ACP-10, ACP-11). The editor's MCP servers of a session (`mcpServers`, stdio) are
//! started with it and their tools given to its agent as host tools (`mcp`, MCP-01..09: one
//! [`crate::mcp::McpServer`] each, its process named by a server key).
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
mod card;
mod config;
mod list;
mod sessions;
pub use config::{
    approval_policy_of, MAX_MODELS, MODEL_OPTION, OMP_THINKING_LEVELS, PI_THINKING_LEVELS,
    THOUGHT_OPTION,
};
pub use list::{
    rfc3339, SessionFile, MAX_SESSION_FILES, SESSIONS_PAGE, SESSION_FILE_HEAD_BYTES,
    SESSION_FILE_TAIL_BYTES,
};
mod dialogs;
mod flow;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod history;
mod kind;
mod map;
mod mcp;
mod notices;
mod output;
mod plan;
mod prompt;
mod rpc;
mod silence;
mod start;
mod status;
mod stop;

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use agent_client_protocol_schema::v1::{
    AgentCapabilities, AvailableCommand, AvailableCommandsUpdate, CancelNotification,
    ClientCapabilities, CloseSessionRequest, ConfigOptionUpdate, ContentBlock, ContentChunk, Error,
    Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest, LoadSessionRequest,
    LoadSessionResponse, Meta, NewSessionRequest, NewSessionResponse, Plan, PromptCapabilities,
    PromptRequest, PromptResponse, RequestId, ResumeSessionRequest, ResumeSessionResponse,
    SessionCapabilities, SessionCloseCapabilities, SessionConfigOptionValue, SessionInfoUpdate,
    SessionListCapabilities, SessionNotification, SessionResumeCapabilities, SessionUpdate,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, StopReason, TextContent,
};
use agent_client_protocol_schema::ProtocolVersion;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// The ACP schema types the bridge speaks in (`agent-client-protocol-schema`).
pub use agent_client_protocol_schema as schema;
pub use agent_client_protocol_schema::v1::SessionId;
pub use bound::{bound_snapshot, cut_to_bytes, MAX_SURFACE_BYTES, TRUNCATION_NOTICE};
pub use card::{MAX_CARD_DIFFS, MAX_CARD_LOCATIONS};
pub use dialogs::{
    approval_tool, APPROVAL_OPTIONS, APPROVAL_TITLE_PREFIX, APPROVE, DENY, ELICITATION_METHOD,
    PERMISSION_METHOD, TEXT_FIELD,
};
pub use flow::{EDITOR_HIGH_WATER, EDITOR_READ_LIMIT, MAX_WAITING_REQUESTS};
pub use history::{HISTORY_PAGE_LIMIT, MAX_HISTORY_PAGES, MAX_REPLAY_MESSAGES};
pub use map::Mapper;
pub use mcp::{is_mcp_server_key, McpLaunch, McpRead, MAX_MCP_SERVERS};
pub use notices::MAX_NOTICE_BYTES;
pub use output::{output_opt_in, OUTPUT_META};
pub use plan::{plan_from_phases, plan_from_tasks, MAX_PLAN_ENTRIES, MAX_PLAN_ENTRY_BYTES};
pub use prompt::{
    agent_takes_images, convert as prompt_content, decoded_len, PromptContent, AUDIO_NOTE,
    CONTEXT_CUT_NOTICE, IMAGES_TOO_LARGE, IMAGE_NOT_TAKEN_NOTE, MAX_CONTEXT_BYTES,
    MAX_PROMPT_IMAGES, MAX_PROMPT_IMAGE_BYTES, TOO_MANY_IMAGES,
};
pub use rpc::MAX_EDITOR_LINE_BYTES;
pub use silence::{SilenceBudget, DEFAULT_SILENCE_BUDGET};
pub use status::{is_status_prompt, usage_opt_in, Facts, Tokens, STATUS_COMMAND};
pub use stop::{SHUTDOWN_BUDGET, STOP_GRACE};

use crate::client::{
    self, commands, Call, Client, ClientConfig, ClientEvent, CommandFailure, ExitStatus,
    RequestId as AgentRequest,
};
use crate::frame::LineDecoder;
use crate::output::{
    Availability, OutputError, OutputErrorCode, ReadParams, ReadResult, StoredOutput, READ_BUDGET,
    READ_METHOD,
};
use crate::spill::SaveFailure;
use crate::wire::{
    AgentEvent, AgentFrame, Command, Prompt, ReadOutput, ResponseData, SessionStatsData,
    SwitchSession,
};
use history::{Next, Rebuild, Walk};
use rpc::{Incoming, Line};

/// How a [`Bridge`] starts.
#[derive(Debug, Clone, Default)]
pub struct BridgeConfig {
    /// The configuration of each session's [`Client`].
    pub client: ClientConfig,
    /// The folder the agent keeps its sessions in (the driver passes it `--session-dir`):
    /// the bundled agent's `<sessionId>.jsonl`, omp's `<timestamp>_<id>.jsonl` (CONTRACT §3).
    /// With it the ACP session id is that file's name without `.jsonl` (from `get_state`'s
    /// `sessionFile`), `session/load` switches the agent to `<dir>/<id>.jsonl` and
    /// `loadSession` is advertised (ACP-06); without it neither.
    pub session_dir: Option<PathBuf>,
    /// Whether the configured agent is known to serve `read_output` (the bundled agent run
    /// with `--max-inline-bytes`): `initialize` comes before any agent runs, so the OUT-01
    /// advertisement rests on this; each session then shows handles and serves reads only
    /// when its agent's ready frame offers `readOutput` too.
    pub agent_serves_output: bool,
    /// The approval policy the agent command names (omp's `--approval-mode`), shown by
    /// `/status` (ACP-01, ACP-24); `None` shows `unknown`.
    pub approval_policy: Option<String>,
    /// Whether the configured agent takes prompt images (omp, pi, the bundled agent:
    /// [`agent_takes_images`]): `initialize` advertises `promptCapabilities.image` on it, and
    /// images reach the agent only then (ACP-14).
    pub agent_takes_images: bool,
    /// How long a session's agent may say nothing while the editor waits on it (ACP-21).
    pub silence_budget: SilenceBudget,
    /// The MCP servers' start-up budget (MCP-02); `None`: [`crate::mcp::INIT_BUDGET`].
    pub mcp_init_budget: Option<std::time::Duration>,
}

/// One input to a [`Bridge`].
#[derive(Debug, Clone, PartialEq)]
pub enum Input<'a> {
    /// Bytes read from the editor (stdin).
    Editor(&'a [u8]),
    /// The editor's input ended: every agent is stopped (ACP-12).
    EditorEnd,
    /// The bridge is told to end (the driver caught SIGTERM, SIGINT or SIGHUP): as
    /// [`Input::EditorEnd`], except that an unfinished line of the editor's is dropped. The
    /// editor's bytes after either are ignored.
    Shutdown,
    /// Bytes read from a session's agent's stdout (the session named by the agent key of its
    /// [`Action::Spawn`], as in every agent input).
    AgentStdout(SessionId, &'a [u8]),
    /// Bytes read from a session's agent's stderr.
    AgentStderr(SessionId, &'a [u8]),
    /// A session's agent's stdout ended.
    AgentStdoutEnd(SessionId),
    /// A session's agent exited (or could not be spawned: [`ExitStatus::Unknown`]).
    AgentExit(SessionId, ExitStatus),
    /// An MCP server's process (named by the server key of its [`Action::McpSpawn`]) did
    /// something (MCP-01).
    Mcp(&'a str, McpRead<'a>),
    /// The time of [`Bridge::poll_timeout`] has come.
    Timeout,
    /// The session folder as [`Action::ReadSessionFolder`] asked: its `*.jsonl` regular
    /// files (symlinks not followed), or why it could not be read (ACP-26).
    SessionFolder(Result<Vec<SessionFile>, String>),
    /// The driver wrote this many bytes of the [`Action::Editor`] lines to the editor
    /// (ACP-20: what waits decides whether the agents are read, [`Bridge::reads_agent`]).
    EditorWritten(usize),
}

/// Work for the driver, in order. Serialised (for transcripts) as
/// `{"action":"editor","bytes":LINE}`, `{"action":"spawn","session","cwd"}`,
/// `{"action":"agent","session","bytes"}`, `{"action":"close_agent_stdin","session"}`,
/// `{"action":"stop_agent","session"}`, `{"action":"mcp_spawn","server","launch"}`,
/// `{"action":"mcp_write","server","bytes"}`, `{"action":"mcp_stop","server"}`, bytes as text.
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
        /// The session's agent key, which the inputs of its agent name.
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
    /// Close the session's agent's stdin once what was queued for it is written: the first
    /// step of stopping it (ACP-12). Its [`Action::StopAgent`] follows after [`STOP_GRACE`],
    /// or at its exit.
    CloseAgentStdin {
        /// The session.
        session: SessionId,
    },
    /// Read the session folder for `session/list` (ACP-26): the name, modification time,
    /// first [`SESSION_FILE_HEAD_BYTES`] and last [`SESSION_FILE_TAIL_BYTES`] of each of its
    /// `*.jsonl` regular files (no symlink followed, at most [`MAX_SESSION_FILES`], the
    /// newest), handed back as [`Input::SessionFolder`]. One is asked at a time.
    ReadSessionFolder {
        /// The folder ([`BridgeConfig::session_dir`]).
        dir: PathBuf,
    },
    /// Kill the session's agent and every process left in its process group (ACP-12: the
    /// driver starts each agent as the leader of a process group of its own). Comes once
    /// per agent: when the grace after [`Action::CloseAgentStdin`] is over, or once the agent
    /// has exited (then for what is left of its group).
    StopAgent {
        /// The session.
        session: SessionId,
    },
    /// Start an MCP server (MCP-01) as the leader of a process group of its own, and report
    /// its stdout, its end and its exit as [`Input::Mcp`] under this server key.
    McpSpawn {
        /// The server key (`AGENT_KEY/mcp-N`).
        server: String,
        /// What to run, and where.
        launch: McpLaunch,
    },
    /// Write these bytes to the MCP server's stdin.
    McpWrite {
        /// The server key.
        server: String,
        /// Complete JSON-RPC lines.
        #[serde(serialize_with = "as_text")]
        bytes: Vec<u8>,
    },
    /// Kill the MCP server's process group (MCP-01, MCP-06). Comes once per server.
    McpStop {
        /// The server key.
        server: String,
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

/// What the bridge waits for from a session's agent, by our request to it.
#[derive(Debug)]
enum Pending {
    /// `session/new`: `get_state` gives the model and thinking level (ACP-24) and, with a
    /// session folder, names the agent's session file, whose name becomes the ACP session id
    /// (ACP-06).
    NewState { editor: RequestId },
    /// `session/new`: `get_available_models` for the model option (ACP-24); the session is
    /// answered with its id once it comes, or at `deadline` without the model option (then
    /// a later answer is a `config_option_update`, as [`Pending::Models`]).
    NewModels {
        editor: RequestId,
        acp_id: SessionId,
        deadline: Instant,
        resumed: bool,
    },
    /// `session/load`: `get_available_models` (ACP-24), asked beside the history walk; its
    /// answer after the load's is a `config_option_update`.
    Models,
    /// `session/set_config_option`: `set_model` or `set_thinking_level` (ACP-24).
    SetConfig { editor: RequestId },
    /// `session/set_config_option`: `get_state` for what the change left in effect (ACP-24).
    ConfigState { editor: RequestId },
    /// `session/load`: `switch_session` to the session's file (ACP-06).
    /// `session/resume` too (ACP-25): without the replay (`replay` false).
    LoadSwitch { editor: RequestId, replay: bool },
    /// `session/resume`: `get_state` for the options and the title (ACP-24, ACP-25).
    ResumeState { editor: RequestId },
    /// `session/load`: `get_state` for the title (ACP-06).
    LoadState { editor: RequestId },
    /// `session/load`: a history page (ACP-06).
    LoadPage {
        editor: RequestId,
        walk: Walk,
        rebuild: Box<Rebuild>,
    },
    /// `session/load`: the whole history through `get_messages`, from an agent that does
    /// not page (v1-only, or paging refused: PAGE-07's fallback; ACP-06).
    LoadLegacy {
        editor: RequestId,
        rebuild: Box<Rebuild>,
    },
    /// `session/load`: `get_session_stats` for the cumulative usage (ACP-02, ACP-06);
    /// `complete` when the walk reached the history's end within the budget.
    LoadStats {
        editor: RequestId,
        rebuild: Box<Rebuild>,
        complete: bool,
    },
    /// A turn ended: `get_session_stats` for the cumulative usage before the prompt is
    /// answered (ACP-02), due by `deadline` (then the bridge's own sum stands). The prompt's
    /// editor id stays in the session's turn.
    TurnStats { deadline: Instant },
    /// `_muse/readOutput`: a history page checked for the reference (OUT-06).
    ReadCheck {
        editor: RequestId,
        params: ReadParams,
        walk: Walk,
    },
    /// `_muse/readOutput`: the agent's `read_output`, due by `deadline` (OUT-07).
    Read {
        editor: RequestId,
        params: ReadParams,
        deadline: Instant,
    },
    /// ACP-21: `get_state` asked of an agent silent for half its budget; the answer (any
    /// byte) only shows it is alive.
    Probe,
}

impl Pending {
    /// The editor's request this answers, if one of its own.
    fn editor(&self) -> Option<&RequestId> {
        match self {
            Pending::NewState { editor }
            | Pending::NewModels { editor, .. }
            | Pending::SetConfig { editor }
            | Pending::ConfigState { editor }
            | Pending::LoadSwitch { editor, .. }
            | Pending::ResumeState { editor }
            | Pending::LoadState { editor }
            | Pending::LoadPage { editor, .. }
            | Pending::LoadLegacy { editor, .. }
            | Pending::LoadStats { editor, .. }
            | Pending::ReadCheck { editor, .. }
            | Pending::Read { editor, .. } => Some(editor),
            Pending::TurnStats { .. } | Pending::Models | Pending::Probe => None,
        }
    }

    /// Whether the session is being opened (new or load): no prompt yet.
    fn is_opening(&self) -> bool {
        matches!(
            self,
            Pending::NewState { .. }
                | Pending::NewModels { .. }
                | Pending::LoadSwitch { .. }
                | Pending::ResumeState { .. }
                | Pending::LoadState { .. }
                | Pending::LoadPage { .. }
                | Pending::LoadLegacy { .. }
                | Pending::LoadStats { .. }
        )
    }
}

#[derive(Debug)]
struct Session {
    /// The editor's id of the session (its file's name with a session folder, else the
    /// agent key); empty while `session/new` waits for it.
    acp_id: SessionId,
    client: Client,
    mapper: Mapper,
    turn: Option<Turn>,
    /// Our requests to the agent that the bridge answers the editor from.
    pending: BTreeMap<AgentRequest, Pending>,
    /// Stored outputs this session's tool results showed, by reference: the live evidence
    /// a read falls back on while the agent cannot page (OUT-06 note).
    seen_outputs: BTreeMap<String, StoredOutput>,
    /// The agent exited or was stopped.
    exited: bool,
    /// ACP-12: where its agent is in being stopped.
    stop: stop::Stop,
    /// ACP-13: until when its agent may stay silent.
    start: start::StartBudget,
    /// ACP-24: its model and thinking level.
    config: config::Config,
    /// ACP-26: the title the agent's stream last gave.
    title: Option<String>,
    /// ACP-21: since when its agent has said nothing.
    silence: silence::Silence,
    /// MCP-01: the editor's MCP servers of this session.
    mcp: mcp::SessionMcp,
}

/// The notice a load's replay ends with when the history goes on past the budget (ACP-06).
pub const REPLAY_CUT_NOTICE: &str =
    "[… history replay stopped after 20 pages of 100 messages: later messages are not shown]";

/// How long a turn's end waits for the agent's `get_session_stats` before answering the
/// prompt with the bridge's own sum (ACP-02).
pub const STATS_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

/// How long `session/new` waits for the agent's `get_available_models` before it opens
/// the session without the model option (ACP-24).
pub const MODELS_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

/// The most stored outputs a session remembers from its live stream.
const MAX_SEEN_OUTPUTS: usize = 4096;

/// The ACP adapter. See the [module docs](self).
#[derive(Debug)]
pub struct Bridge {
    config: BridgeConfig,
    reader: LineDecoder,
    /// By agent key (`SessionId` is not `Ord`): the key of the driver's agent process.
    sessions: BTreeMap<Arc<str>, Session>,
    /// Agent keys by ACP session id.
    keys: BTreeMap<Arc<str>, Arc<str>>,
    next_session: u64,
    /// What the editor said in `initialize`, kept for the session's lifetime.
    client_capabilities: Option<ClientCapabilities>,
    client_meta: Option<Meta>,
    /// The editor opted into `muse/usage` metadata (ACP-02).
    usage_meta: bool,
    /// The editor opted into `muse/output` and the configured agent serves it (OUT-01).
    output_meta: bool,
    editor_ended: bool,
    /// The dialogs asked of the editor (ACP-08, ACP-09).
    dialogs: dialogs::Dialogs,
    /// ACP-12: the bridge's end, begun with the editor's.
    shutdown: stop::Shutdown,
    /// ACP-26: the `session/list` requests waiting for the folder's read.
    listing: Vec<(RequestId, ListSessionsRequest)>,
    /// ACP-20: the editor bytes given to the driver and not yet written.
    editor_queue: flow::EditorQueue,
    actions: VecDeque<Action>,
}

impl Bridge {
    /// A bridge with no sessions.
    pub fn new(config: BridgeConfig) -> Self {
        Bridge {
            config,
            reader: rpc::editor_lines(),
            sessions: BTreeMap::new(),
            keys: BTreeMap::new(),
            next_session: 0,
            client_capabilities: None,
            client_meta: None,
            usage_meta: false,
            output_meta: false,
            editor_ended: false,
            dialogs: dialogs::Dialogs::default(),
            shutdown: stop::Shutdown::default(),
            listing: Vec::new(),
            editor_queue: flow::EditorQueue::default(),
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

    /// Whether the editor has gone and every agent has exited, or [`SHUTDOWN_BUDGET`] has
    /// passed since (ACP-12): the driver may end.
    pub fn is_finished(&self) -> bool {
        self.editor_ended && (self.shutdown.is_over() || self.sessions.values().all(|s| s.exited))
    }

    /// The next action, if any.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        let action = self.actions.pop_front();
        if let Some(Action::Editor { bytes }) = &action {
            self.editor_queue.queued(bytes.len());
        }
        action
    }

    /// When [`Input::Timeout`] is next due: a session's client's timer, a read's budget, a
    /// stop's grace or the shutdown's budget (ACP-12).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let stops = self
            .sessions
            .values()
            .filter_map(|s| s.stop.timeout())
            .chain(self.shutdown.timeout().filter(|_| !self.is_finished()));
        let reads = self.sessions.values().flat_map(|s| {
            s.pending.values().filter_map(|p| match p {
                Pending::Read { deadline, .. }
                | Pending::TurnStats { deadline }
                | Pending::NewModels { deadline, .. } => Some(*deadline),
                _ => None,
            })
        });
        // ACP-13: an agent's start-up budget, while it is silent.
        let starts = self
            .sessions
            .values()
            .filter(|s| !s.exited && !self.agents_held())
            .filter_map(|s| s.start.timeout());
        let mcp = self.sessions.values().filter_map(|s| s.mcp.poll_timeout());
        self.sessions
            .values()
            .filter_map(|s| s.client.poll_timeout())
            .chain(reads)
            .chain(stops)
            .chain(starts)
            .chain(self.silence_timeouts())
            .chain(mcp)
            .min()
    }

    /// Hands in one input.
    pub fn handle(&mut self, now: Instant, input: Input<'_>) {
        match input {
            // ACP-12: nothing more is read once the bridge is ending.
            Input::Editor(_) if self.editor_ended => {}
            Input::Editor(bytes) => {
                let mut reader = std::mem::replace(&mut self.reader, rpc::editor_lines());
                reader.push(bytes, &mut |line| self.editor_line(now, line));
                self.reader = reader;
            }
            Input::EditorEnd if !self.editor_ended => {
                let mut reader = std::mem::replace(&mut self.reader, rpc::editor_lines());
                reader.finish(&mut |line| self.editor_line(now, line));
                self.reader = reader;
                self.shut_down(now);
            }
            Input::EditorEnd | Input::Shutdown => self.shut_down(now),
            Input::AgentStdout(id, bytes) => {
                if let Some(session) = self.sessions.get_mut(&*id.0) {
                    if !bytes.is_empty() {
                        session.start.heard();
                        session.silence.restart(now);
                    }
                }
                self.session_input(now, &id.0, client::Input::stdout(bytes))
            }
            Input::AgentStderr(id, bytes) => {
                self.session_input(now, &id.0, client::Input::stderr(bytes))
            }
            Input::AgentStdoutEnd(id) => self.session_input(now, &id.0, client::Input::StdoutEnd),
            Input::AgentExit(id, status) => {
                if let Some(session) = self.sessions.get_mut(&*id.0) {
                    session.exited = true;
                    // ACP-12: what is left of its process group goes with it.
                    let kill = session.stop.exited(&SessionId::new(id.0.clone()));
                    self.actions.extend(kill);
                }
                self.session_input(now, &id.0, client::Input::exit(status));
                self.mcp_stop(now, &id.0);
            }
            Input::SessionFolder(files) => self.listed(files),
            Input::EditorWritten(bytes) => self.editor_written(now, bytes),
            Input::Mcp(server, read) => self.mcp_read(now, server, read),
            Input::Timeout => {
                self.shutdown.tick(now);
                for key in self.session_keys() {
                    self.silent_agent(now, &key);
                    self.stopped_answering(now, &key);
                    self.stop_due(now, &key);
                    self.expire_reads(now, &key);
                    self.mcp_timeout(now, &key);
                    self.session_input(now, &key, client::Input::Timeout);
                }
            }
        }
    }

    /// ACP-13: an agent silent past its start-up budget fails what the editor waits for in
    /// its session, and is stopped.
    fn silent_agent(&mut self, now: Instant, key: &Arc<str>) {
        // ACP-20: an agent that is not read is not silent.
        if self.agents_held() {
            return;
        }
        let Some(session) = self.sessions.get_mut(key) else {
            return;
        };
        if session.exited || !session.start.expired(now) {
            return;
        }
        let message = start::silent_agent_message(
            self.config.client.ready_timeout,
            &session.client.stderr_tail(),
        );
        let error = Error::internal_error().data(json!(message));
        let mut waiting: Vec<RequestId> = std::mem::take(&mut session.pending)
            .into_values()
            .filter_map(|p| p.editor().cloned())
            .collect();
        waiting.extend(session.turn.take().map(|turn| turn.editor));
        for editor in waiting {
            self.editor(rpc::error_line(&editor, &error));
        }
        self.session_input(now, key, client::Input::Call(Call::Stop));
    }

    /// ACP-12: the editor has gone or the bridge is told to end: every agent is stopped.
    fn shut_down(&mut self, now: Instant) {
        self.editor_ended = true;
        if !self.shutdown.begin(now) {
            return;
        }
        for key in self.session_keys() {
            self.session_input(now, &key, client::Input::Call(Call::Stop));
            self.stop_agent(now, &key);
            self.mcp_stop(now, &key);
        }
    }

    /// ACP-12: the session's agent is stopped: its stdin closed now, its group killed after
    /// the grace (or at its exit). Idempotent.
    fn stop_agent(&mut self, now: Instant, key: &Arc<str>) {
        if let Some(session) = self.sessions.get_mut(key) {
            let close = session.stop.begin(now, &SessionId::new(key.clone()));
            self.actions.extend(close);
        }
    }

    /// ACP-12: a stop's grace is over: the agent's group is killed.
    fn stop_due(&mut self, now: Instant, key: &Arc<str>) {
        if let Some(session) = self.sessions.get_mut(key) {
            let kill = session.stop.due(now, &SessionId::new(key.clone()));
            self.actions.extend(kill);
        }
    }

    fn session_keys(&self) -> Vec<Arc<str>> {
        self.sessions.keys().cloned().collect()
    }

    /// OUT-07: a read past its 20-second budget fails as `read_timed_out`; ACP-02: a turn's
    /// `get_session_stats` past its budget leaves the bridge's own sum and the prompt is
    /// answered. A late answer is dropped.
    fn expire_reads(&mut self, now: Instant, key: &Arc<str>) {
        let Some(session) = self.sessions.get_mut(key) else {
            return;
        };
        let late_stats: Vec<AgentRequest> = session
            .pending
            .iter()
            .filter(|(_, p)| matches!(p, Pending::TurnStats { deadline } if *deadline <= now))
            .map(|(r, _)| *r)
            .collect();
        if !late_stats.is_empty() {
            let mut out = Vec::new();
            for request in late_stats {
                session.pending.remove(&request);
            }
            end_turn(session, None, &mut out);
            for bytes in out {
                self.actions.push_back(Action::Editor { bytes });
            }
        }
        // ACP-24: a session whose agent is slow to list its models opens without them.
        let late_models: Vec<AgentRequest> = session
            .pending
            .iter()
            .filter(|(_, p)| matches!(p, Pending::NewModels { deadline, .. } if *deadline <= now))
            .map(|(r, _)| *r)
            .collect();
        let mut opening = Vec::new();
        for request in late_models {
            if let Some(Pending::NewModels {
                editor,
                acp_id,
                resumed,
                ..
            }) = session.pending.insert(request, Pending::Models)
            {
                opening.push((editor, acp_id, resumed));
            }
        }
        for (editor, acp_id, resumed) in opening {
            self.opened(key, acp_id, &editor, resumed);
        }
        let Some(session) = self.sessions.get_mut(key) else {
            return;
        };
        let late: Vec<AgentRequest> = session
            .pending
            .iter()
            .filter(|(_, p)| matches!(p, Pending::Read { deadline, .. } if *deadline <= now))
            .map(|(r, _)| *r)
            .collect();
        for request in late {
            if let Some(editor) = session
                .pending
                .remove(&request)
                .and_then(|p| p.editor().cloned())
            {
                let error = output::typed_error(
                    OutputErrorCode::ReadTimedOut.as_str(),
                    "the stored output was not read within the 20-second read budget",
                );
                self.actions.push_back(Action::Editor {
                    bytes: rpc::error_line(&editor, &error),
                });
            }
        }
    }

    fn editor_line(&mut self, now: Instant, line: Line<'_>) {
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
        match rpc::parse_line(text) {
            Ok(None) => {}
            Ok(Some(Incoming::Response { id, outcome })) => self.editor_answer(now, &id, outcome),
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

    /// Answers a request at once (`Some` line) or later (`None`).
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
                let meta = request.client_capabilities.meta.as_ref();
                // ACP-02: usage metadata only for an editor that opted in.
                self.usage_meta = usage_opt_in(meta);
                // OUT-01: stored output only for an editor that opted in, with an agent
                // known to serve it.
                self.output_meta = output_opt_in(meta) && self.config.agent_serves_output;
                self.client_capabilities = Some(request.client_capabilities);
                self.client_meta = request.meta;
                // ACP-06: loading works where the agent keeps its sessions in our folder.
                // ACP-25: close always; resume and list where loading works.
                let stored = self.config.session_dir.is_some();
                let sessions = SessionCapabilities::new()
                    .close(SessionCloseCapabilities::new())
                    .list(stored.then(SessionListCapabilities::new))
                    .resume(stored.then(SessionResumeCapabilities::new));
                let capabilities = AgentCapabilities::new()
                    .load_session(stored)
                    .session_capabilities(sessions)
                    // ACP-14, ACP-15, ACP-16: exactly what reaches the agent.
                    .prompt_capabilities(
                        PromptCapabilities::new()
                            .image(self.config.agent_takes_images)
                            .embedded_context(true),
                    );
                let mut response = InitializeResponse::new(ProtocolVersion::V1)
                    .agent_capabilities(capabilities)
                    .agent_info(Implementation::new("musewire", env!("CARGO_PKG_VERSION")));
                let mut meta = Meta::new();
                if self.usage_meta {
                    meta.insert("muse/usage".into(), json!({"version": 1}));
                }
                if self.output_meta {
                    meta.insert(OUTPUT_META.into(), output::advertisement());
                }
                if !meta.is_empty() {
                    response = response.meta(meta);
                }
                Ok(Some(rpc::result_line(id, &response)))
            }
            "session/new" => {
                let request: NewSessionRequest = params_of(params)?;
                if !request.cwd.is_absolute() {
                    return Err(Error::invalid_params().data(json!("cwd must be an absolute path")));
                }
                let key = self.open_session(now, request.cwd.clone());
                self.mcp_start(now, &key, request.mcp_servers, &request.cwd);
                // ACP-24: the model and thinking level; ACP-06: the session file's name is
                // the ACP session id.
                self.send(
                    now,
                    &key,
                    commands::get_state(),
                    |editor| Pending::NewState { editor },
                    id,
                );
                Ok(None)
            }
            "session/load" => {
                let request: LoadSessionRequest = params_of(params)?;
                self.load(now, id, request).map(|()| None)
            }
            "session/prompt" => {
                let request: PromptRequest = params_of(params)?;
                self.prompt(now, id, request).map(|()| None)
            }
            "session/list" => {
                let request: ListSessionsRequest = params_of(params)?;
                self.list(id, request).map(|()| None)
            }
            "session/close" => {
                let request: CloseSessionRequest = params_of(params)?;
                self.close_session(now, id, &request).map(|()| None)
            }
            "session/resume" => {
                let request: ResumeSessionRequest = params_of(params)?;
                self.resume(now, id, request).map(|()| None)
            }
            "session/set_config_option" => {
                let request: SetSessionConfigOptionRequest = params_of(params)?;
                self.set_config_option(now, id, request).map(|()| None)
            }
            READ_METHOD => self.read_output(now, id, &params).map(|()| None),
            _ => Err(Error::method_not_found().data(json!(method))),
        }
    }

    /// Starts a session's agent in `cwd`; its key.
    fn open_session(&mut self, now: Instant, cwd: PathBuf) -> Arc<str> {
        self.next_session += 1;
        let key: Arc<str> = format!("musewire-{}", self.next_session).into();
        let mut mapper = Mapper::new();
        mapper.usage_meta = self.usage_meta;
        // ACP-17, ACP-18: card paths are absolute against the session's cwd.
        mapper.cwd = Some(cwd.clone());
        self.sessions.insert(
            key.clone(),
            Session {
                acp_id: SessionId::new(""),
                client: Client::new(self.config.client.clone(), now),
                mapper,
                turn: None,
                pending: BTreeMap::new(),
                seen_outputs: BTreeMap::new(),
                exited: false,
                stop: stop::Stop::default(),
                start: start::StartBudget::new(now, self.config.client.ready_timeout),
                config: config::Config::new(self.config.approval_policy.clone()),
                title: None,
                silence: silence::Silence::new(now),
                mcp: mcp::SessionMcp::default(),
            },
        );
        self.actions.push_back(Action::Spawn {
            session: SessionId::new(key.clone()),
            cwd,
        });
        key
    }

    /// Sends the agent a command whose answer the bridge turns into the editor's.
    fn send(
        &mut self,
        now: Instant,
        key: &Arc<str>,
        command: Command,
        pending: impl FnOnce(RequestId) -> Pending,
        editor: &RequestId,
    ) {
        if !self.ask(now, key, command, pending(editor.clone())) {
            let error = Error::internal_error().data(json!("the agent could not be asked"));
            self.editor(rpc::error_line(editor, &error));
        }
    }

    /// Sends the agent a command whose answer `pending` says what to do with; whether it
    /// went.
    fn ask(&mut self, now: Instant, key: &Arc<str>, command: Command, pending: Pending) -> bool {
        let Some(session) = self.sessions.get_mut(key) else {
            return false;
        };
        session.begin_waiting(now);
        let sent = session
            .client
            .handle(now, client::Input::Call(Call::Send(command)));
        let asked = sent.request().map(|request| {
            session.pending.insert(request, pending);
        });
        self.drain(now, key);
        asked.is_some()
    }

    /// The session has its ACP id: `session/new` is answered and `/status` advertised.
    fn opened(&mut self, key: &Arc<str>, acp_id: SessionId, editor: &RequestId, resumed: bool) {
        if self.mcp_hold_open(key, &acp_id, editor, resumed) {
            return;
        }
        let Some(session) = self.sessions.get_mut(key) else {
            return;
        };
        session.acp_id = acp_id.clone();
        session.mapper.output_session = self.output_meta.then(|| acp_id.0.to_string());
        let commands = session.mapper.facts.commands();
        self.keys.insert(acp_id.0.clone(), key.clone());
        let options = session.config.options();
        let answer = if resumed {
            // ACP-25: a resumed session's answer has no id of its own.
            rpc::result_line(
                editor,
                &ResumeSessionResponse::new().config_options(options),
            )
        } else {
            rpc::result_line(
                editor,
                &NewSessionResponse::new(acp_id.clone()).config_options(options),
            )
        };
        self.editor(answer);
        // ACP-01: `/status` is advertised beside the agent's own commands.
        self.editor(commands_line(&acp_id, commands));
        self.mcp_opened(key);
    }

    /// `session/load` (ACP-06): the agent is started in the cwd and switched to the
    /// session's file in our folder; then the title, the latest plan and usage are rebuilt.
    fn load(
        &mut self,
        now: Instant,
        id: &RequestId,
        request: LoadSessionRequest,
    ) -> Result<(), Error> {
        self.check_stored(&request.session_id, &request.cwd, "load")?;
        // ACP-25: a session that is open is loaded again, in a new agent.
        self.reload(now, &request.session_id);
        self.switch_to(
            now,
            id,
            &request.session_id,
            request.cwd,
            request.mcp_servers,
            true,
        );
        Ok(())
    }

    /// A stored session opened in a new agent in `cwd` (ACP-06, ACP-25): the agent is
    /// switched to the session's file in our folder, then the session is replayed (a load)
    /// or not (a resume). The id is checked by the caller.
    pub(super) fn switch_to(
        &mut self,
        now: Instant,
        id: &RequestId,
        session_id: &SessionId,
        cwd: PathBuf,
        mcp_servers: Vec<agent_client_protocol_schema::v1::McpServer>,
        replay: bool,
    ) {
        let Some(dir) = self.config.session_dir.clone() else {
            return;
        };
        let name = &*session_id.0;
        let key = self.open_session(now, cwd.clone());
        if let Some(session) = self.sessions.get_mut(&key) {
            session.acp_id = session_id.clone();
            session.mapper.output_session = self.output_meta.then(|| name.to_owned());
        }
        self.mcp_start(now, &key, mcp_servers, &cwd);
        self.keys.insert(session_id.0.clone(), key.clone());
        let path = dir.join(format!("{name}.jsonl"));
        let switch = Command::SwitchSession(SwitchSession {
            session_path: path.to_string_lossy().into_owned(),
            ..SwitchSession::default()
        });
        self.send(
            now,
            &key,
            switch,
            |editor| Pending::LoadSwitch { editor, replay },
            id,
        );
    }

    /// The name of a session file directly in our session folder, `.jsonl` dropped, when it
    /// is a safe file name (ACP-06).
    fn session_stem(&self, file: &str) -> Option<String> {
        let dir = self.config.session_dir.as_deref()?;
        let file = std::path::Path::new(file);
        if file.parent() != Some(dir) {
            return None;
        }
        let stem = file.file_name()?.to_str()?.strip_suffix(".jsonl")?;
        is_session_file_name(stem).then(|| stem.to_owned())
    }

    /// The agent key of an ACP session the editor may use: known, open and not opening.
    fn usable(&self, session_id: &SessionId) -> Result<Arc<str>, Error> {
        let key = self
            .keys
            .get(&*session_id.0)
            .ok_or_else(|| Error::session_not_found(session_id.clone()))?;
        let session = self
            .sessions
            .get(key)
            .ok_or_else(|| Error::session_not_found(session_id.clone()))?;
        if session.pending.values().any(Pending::is_opening) {
            return Err(Error::invalid_request().data(json!("the session is still opening")));
        }
        if session.client.is_closed() || session.exited {
            return Err(Error::internal_error().data(json!("the session's agent has exited")));
        }
        Ok(key.clone())
    }

    fn prompt(
        &mut self,
        now: Instant,
        id: &RequestId,
        request: PromptRequest,
    ) -> Result<(), Error> {
        let session_id = request.session_id;
        let key = self.usable(&session_id)?;
        let Some(session) = self.sessions.get_mut(&key) else {
            return Err(Error::session_not_found(session_id));
        };
        if session.turn.is_some() {
            return Err(
                Error::invalid_request().data(json!("a prompt is already running in this session"))
            );
        }
        // ACP-14..16: too many images or image bytes is refused before anything is sent.
        let content = prompt::convert(&request.prompt, self.config.agent_takes_images)?;
        let text = content.message;
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
        let command = Command::Prompt(Prompt {
            message: text,
            images: (!content.images.is_empty()).then_some(content.images),
            ..Prompt::default()
        });
        session.begin_waiting(now);
        let started = session
            .client
            .handle(now, client::Input::Call(Call::Send(command)));
        let prompt = started
            .request()
            .ok_or_else(|| Error::internal_error().data(json!("the prompt was not sent")))?;
        session.mapper.start_turn();
        // ACP-14..16: what did not reach the agent is said in the turn.
        for note in &content.notes {
            let update = session.mapper.notice(note);
            let notification = SessionNotification::new(session_id.clone(), update);
            self.actions.push_back(Action::Editor {
                bytes: rpc::notification_line("session/update", &notification),
            });
        }
        session.turn = Some(Turn {
            editor: id.clone(),
            prompt,
            cancel_requested: false,
        });
        self.drain(now, &key);
        Ok(())
    }

    /// `session/set_config_option` (ACP-24): the option and value checked against what was
    /// offered (else invalid params and nothing sent), then `set_model` or
    /// `set_thinking_level`, then `get_state`; answered with the options then in effect.
    fn set_config_option(
        &mut self,
        now: Instant,
        id: &RequestId,
        request: SetSessionConfigOptionRequest,
    ) -> Result<(), Error> {
        let key = self.usable(&request.session_id)?;
        let Some(session) = self.sessions.get(&key) else {
            return Err(Error::session_not_found(request.session_id));
        };
        let SessionConfigOptionValue::ValueId { value } = &request.value else {
            return Err(Error::invalid_params().data(json!("these options take a value id")));
        };
        let command = session.config.command(&request.config_id.0, &value.0)?;
        self.send(
            now,
            &key,
            command,
            |editor| Pending::SetConfig { editor },
            id,
        );
        Ok(())
    }

    /// `_muse/readOutput` (OUT-01, 06, 07): the params checked, the session known and open,
    /// the reference looked up in at most 20 pages of 100 of the agent's history, then read
    /// by the agent's `read_output` within 20 seconds. Every failure is a typed error; no
    /// turn is started and nothing is changed.
    fn read_output(&mut self, now: Instant, id: &RequestId, params: &Value) -> Result<(), Error> {
        if !self.output_meta {
            // OUT-01: nothing was advertised, so there is no such method.
            return Err(Error::method_not_found().data(json!(READ_METHOD)));
        }
        let params = ReadParams::from_value(params).map_err(|e| output::output_error(&e))?;
        let session_id = SessionId::new(params.session_id.as_str());
        let key = self.usable(&session_id).map_err(|_| {
            output::typed_error(
                output::SESSION_NOT_FOUND,
                "the session is not open in this adapter (load it first)",
            )
        })?;
        let offers = self
            .sessions
            .get(&key)
            .is_some_and(|s| s.client.serves_read_output());
        if !offers {
            return Err(output::output_error(&OutputError::Unavailable));
        }
        // ACP-23: what waits on one agent is bounded.
        self.room_for_request(&key)?;
        self.send(
            now,
            &key,
            Walk::first(),
            |editor| Pending::ReadCheck {
                editor,
                params,
                walk: Walk::default(),
            },
            id,
        );
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
        let Some(key) = self.keys.get(&*cancel.session_id.0).cloned() else {
            return;
        };
        // ACP-08: what waits for the editor is denied first.
        self.cancel_dialogs(now, &key);
        self.cancel_turn(now, &key);
    }

    /// The session's turn is cancelled: the agent is told to abort, once.
    fn cancel_turn(&mut self, now: Instant, key: &Arc<str>) {
        let Some(session) = self.sessions.get_mut(key) else {
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
            self.drain(now, key);
        }
    }

    fn session_input(&mut self, now: Instant, key: &Arc<str>, input: client::Input<'_>) {
        if let Some(session) = self.sessions.get_mut(key) {
            session.client.handle(now, input);
            self.drain(now, key);
        }
    }

    /// Passes a session's client actions on, mapping its events.
    fn drain(&mut self, now: Instant, key: &Arc<str>) {
        loop {
            let Some(session) = self.sessions.get_mut(key) else {
                return;
            };
            let Some(action) = session.client.poll_action() else {
                return;
            };
            match action {
                client::Action::Write { bytes } => self.actions.push_back(Action::Agent {
                    session: SessionId::new(key.clone()),
                    bytes,
                }),
                // ACP-12: every stop closes stdin first, and kills after the grace.
                client::Action::StopAgent => {
                    let close = session.stop.begin(now, &SessionId::new(key.clone()));
                    self.actions.extend(close);
                }
                // The bridge's clients send no host tool results, and it keeps no store.
                client::Action::SpillWrite { id, .. } => {
                    let no_store = client::Input::SpillDone(id, Err(SaveFailure::no_store()));
                    session.client.handle(now, no_store);
                }
                client::Action::Event(ClientEvent::Response {
                    request, outcome, ..
                }) if session.pending.contains_key(&request) => {
                    let pending = session.pending.remove(&request).expect("checked");
                    self.answer(now, key, pending, outcome);
                }
                // MCP-05, MCP-08: host tool calls go to the session's MCP servers.
                client::Action::Event(ClientEvent::HostToolCall(call)) => {
                    self.mcp_call(now, key, call)
                }
                client::Action::Event(ClientEvent::HostToolCancelled { id }) => {
                    self.mcp_cancel(now, key, id)
                }
                client::Action::Event(ClientEvent::Response {
                    request, outcome, ..
                }) if session.mcp.is_registration(request) => {
                    self.mcp_registered(key, request, outcome.err())
                }
                // ACP-08, ACP-09: dialogs go to the editor.
                client::Action::Event(
                    event @ (ClientEvent::UiRequest(_) | ClientEvent::UiWithdrawn { .. }),
                ) => self.dialog_event(now, key, event),
                client::Action::Event(ClientEvent::Closed { error }) => {
                    let mut out = Vec::new();
                    // Whatever waited on the agent fails; an opening session is forgotten.
                    let pending = std::mem::take(&mut session.pending);
                    for (_, p) in pending {
                        let error = Error::internal_error().data(json!(error.to_string()));
                        if let Some(editor) = p.editor() {
                            out.push(rpc::error_line(editor, &error));
                        }
                        if p.is_opening() {
                            self.keys.retain(|_, k| k != key);
                        }
                    }
                    session_event(session, ClientEvent::Closed { error }, &mut out);
                    for bytes in out {
                        self.actions.push_back(Action::Editor { bytes });
                    }
                    // ACP-09: nothing answers the editor's open requests now.
                    self.forget_dialogs(key);
                }
                client::Action::Event(event) => {
                    let mut out = Vec::new();
                    let turn_ended = session_event(session, event, &mut out);
                    for bytes in out {
                        self.actions.push_back(Action::Editor { bytes });
                    }
                    if turn_ended {
                        self.turn_stats(now, key);
                    }
                }
            }
        }
    }

    /// ACP-02: a turn ended; the agent's `get_session_stats` gives the cumulative usage
    /// before the prompt is answered (a command that cannot be sent: the bridge's own sum).
    fn turn_stats(&mut self, now: Instant, key: &Arc<str>) {
        let Some(session) = self.sessions.get_mut(key) else {
            return;
        };
        let sent = session.client.handle(
            now,
            client::Input::Call(Call::Send(commands::get_session_stats())),
        );
        match sent.request() {
            Some(request) => {
                let deadline = now + STATS_BUDGET;
                session
                    .pending
                    .insert(request, Pending::TurnStats { deadline });
            }
            None => {
                let mut out = Vec::new();
                end_turn(session, None, &mut out);
                for bytes in out {
                    self.editor(bytes);
                }
            }
        }
        self.drain(now, key);
    }

    /// The agent answered a request the bridge made for the editor.
    fn answer(
        &mut self,
        now: Instant,
        key: &Arc<str>,
        pending: Pending,
        outcome: Result<ResponseData, CommandFailure>,
    ) {
        match (pending, outcome) {
            (Pending::NewState { editor }, Ok(ResponseData::State(state))) => {
                // ACP-02: the context window, when the agent reports one.
                if let Some(session) = self.sessions.get_mut(key) {
                    session.mapper.facts.context_window =
                        state.model.as_ref().and_then(|m| m.context_window);
                }
                // ACP-06: the name of the agent's session file in our folder (`<id>.jsonl`
                // of the bundled agent, `<timestamp>_<id>.jsonl` of omp) without `.jsonl`, so
                // that a load finds the file again; else our key (not loadable).
                let acp_id = state
                    .session_file
                    .as_deref()
                    .and_then(|file| self.session_stem(file))
                    .filter(|stem| !self.keys.contains_key(stem.as_str()))
                    .map_or_else(|| SessionId::new(key.clone()), SessionId::new);
                if let Some(session) = self.sessions.get_mut(key) {
                    session.learn_protocol();
                    session.learn_state(&state);
                }
                self.send(
                    now,
                    key,
                    commands::get_available_models(),
                    |editor| Pending::NewModels {
                        editor,
                        acp_id,
                        deadline: now + MODELS_BUDGET,
                        resumed: false,
                    },
                    &editor,
                );
            }
            (
                Pending::NewModels {
                    editor,
                    acp_id,
                    resumed,
                    ..
                },
                outcome,
            ) => {
                // ACP-24: an agent that offers no models (or refuses the command) gets no
                // model option, and the session opens all the same.
                if let (Some(session), Ok(ResponseData::Models(models))) =
                    (self.sessions.get_mut(key), &outcome)
                {
                    session.config.models(&models.models);
                }
                self.opened(key, acp_id, &editor, resumed);
            }
            (Pending::Models, outcome) => {
                let Some(session) = self.sessions.get_mut(key) else {
                    return;
                };
                if let Ok(ResponseData::Models(models)) = &outcome {
                    session.config.models(&models.models);
                    // ACP-24: a load already answered learns of them by an update.
                    if !session.pending.values().any(Pending::is_opening) {
                        let update = ConfigOptionUpdate::new(session.config.options());
                        self.session_update(key, SessionUpdate::ConfigOptionUpdate(update));
                    }
                }
            }
            (Pending::SetConfig { editor }, Ok(_)) => {
                self.send(
                    now,
                    key,
                    commands::get_state(),
                    |editor| Pending::ConfigState { editor },
                    &editor,
                );
            }
            (Pending::SetConfig { editor }, Err(failure)) => {
                let error = Error::invalid_params().data(json!(failure.error));
                self.editor(rpc::error_line(&editor, &error));
            }
            (Pending::ConfigState { editor }, outcome) => {
                let Some(session) = self.sessions.get_mut(key) else {
                    return;
                };
                if let Ok(ResponseData::State(state)) = &outcome {
                    session.learn_state(state);
                }
                let response = SetSessionConfigOptionResponse::new(session.config.options());
                self.editor(rpc::result_line(&editor, &response));
            }
            (Pending::LoadSwitch { editor, replay }, Ok(ResponseData::Cancelled(data)))
                if !data.cancelled && !replay =>
            {
                self.send(
                    now,
                    key,
                    commands::get_state(),
                    |editor| Pending::ResumeState { editor },
                    &editor,
                );
            }
            (Pending::ResumeState { editor }, outcome) => {
                let Some(session) = self.sessions.get_mut(key) else {
                    return;
                };
                session.learn_protocol();
                let mut title = None;
                if let Ok(ResponseData::State(state)) = &outcome {
                    session.learn_state(state);
                    session.mapper.facts.context_window =
                        state.model.as_ref().and_then(|m| m.context_window);
                    title = state.session_name.clone().filter(|t| !t.is_empty());
                }
                let acp_id = session.acp_id.clone();
                // ACP-25: the title, as a load shows it; nothing is replayed.
                if let Some(title) = title {
                    let update = SessionInfoUpdate::new().title(title);
                    self.session_update(key, SessionUpdate::SessionInfoUpdate(update));
                }
                self.send(
                    now,
                    key,
                    commands::get_available_models(),
                    |editor| Pending::NewModels {
                        editor,
                        acp_id,
                        deadline: now + MODELS_BUDGET,
                        resumed: true,
                    },
                    &editor,
                );
            }
            (Pending::LoadSwitch { editor, .. }, Ok(ResponseData::Cancelled(data)))
                if !data.cancelled =>
            {
                // ACP-06: the obsolete plan is cleared before new state is shown.
                self.session_update(key, SessionUpdate::Plan(Plan::new(Vec::new())));
                self.send(
                    now,
                    key,
                    commands::get_state(),
                    |editor| Pending::LoadState { editor },
                    &editor,
                );
            }
            (Pending::LoadState { editor }, outcome) => {
                let mut rebuild = Box::<Rebuild>::default();
                rebuild.replay.output_session = self
                    .sessions
                    .get(key)
                    .and_then(|s| s.mapper.output_session.clone());
                rebuild.replay.cwd = self.sessions.get(key).and_then(|s| s.mapper.cwd.clone());
                if let Ok(ResponseData::State(state)) = outcome {
                    if let Some(session) = self.sessions.get_mut(key) {
                        session.learn_state(&state);
                    }
                    // ACP-02: the window; ACP-06: the agent's todos, for a history that
                    // shows no `todo` result.
                    rebuild.context_window = state.model.as_ref().and_then(|m| m.context_window);
                    rebuild.state_plan = state
                        .todo_phases
                        .as_ref()
                        .and_then(Value::as_array)
                        .map(|phases| plan_from_phases(phases));
                    if let Some(title) = state.session_name.filter(|t| !t.is_empty()) {
                        let update = SessionInfoUpdate::new().title(title);
                        self.session_update(key, SessionUpdate::SessionInfoUpdate(update));
                    }
                }
                // ACP-24: the models, beside the walk.
                if let Some(session) = self.sessions.get_mut(key) {
                    session.learn_protocol();
                }
                self.ask(now, key, commands::get_available_models(), Pending::Models);
                // PAGE-07: an agent that did not negotiate v2 (pi) does not page.
                let paged = self
                    .sessions
                    .get(key)
                    .is_some_and(|s| s.client.protocol() == crate::frame::ProtocolVersion::V2);
                if paged {
                    self.send(
                        now,
                        key,
                        Walk::first(),
                        |editor| Pending::LoadPage {
                            editor,
                            walk: Walk::default(),
                            rebuild,
                        },
                        &editor,
                    );
                } else {
                    self.load_legacy(now, key, editor, rebuild);
                }
            }
            (
                Pending::LoadPage {
                    editor,
                    mut walk,
                    mut rebuild,
                },
                Ok(ResponseData::MessagesPage(page)),
            ) => {
                // ACP-06: the conversation replayed as the pages come, before the answer.
                for update in rebuild.page(&page.messages) {
                    self.session_update(key, update);
                }
                match walk.after(&page) {
                    Next::Page(command) => self.send(
                        now,
                        key,
                        command,
                        |editor| Pending::LoadPage {
                            editor,
                            walk,
                            rebuild,
                        },
                        &editor,
                    ),
                    Next::End => self.load_stats(now, key, editor, rebuild, true),
                    Next::OutOfBudget => {
                        self.replay_cut(key);
                        self.load_stats(now, key, editor, rebuild, false)
                    }
                }
            }
            // PAGE-07: paging refused in a way that falls back (busy, stale, not offered):
            // the whole history through `get_messages`, messages already replayed once.
            (
                Pending::LoadPage {
                    editor, rebuild, ..
                },
                Err(failure),
            ) if crate::client::history::falls_back(&failure) => {
                self.load_legacy(now, key, editor, rebuild)
            }
            // ACP-06: a history that can't be read leaves the facts unknown.
            (
                Pending::LoadPage {
                    editor, rebuild, ..
                },
                _,
            ) => self.load_stats(now, key, editor, rebuild, false),
            (
                Pending::LoadLegacy {
                    editor,
                    mut rebuild,
                },
                outcome,
            ) => {
                let complete = match crate::client::history::legacy(outcome) {
                    Ok(messages) => {
                        // ACP-06: within the same budget as the pages, the oldest first.
                        let shown = messages.len().min(MAX_REPLAY_MESSAGES);
                        for update in rebuild.page(&messages[..shown]) {
                            self.session_update(key, update);
                        }
                        if shown < messages.len() {
                            self.replay_cut(key);
                        }
                        shown == messages.len()
                    }
                    Err(_) => false,
                };
                self.load_stats(now, key, editor, rebuild, complete)
            }
            (
                Pending::LoadStats {
                    editor,
                    rebuild,
                    complete,
                },
                outcome,
            ) => {
                let stats = match outcome {
                    Ok(ResponseData::SessionStats(stats)) => Some(stats),
                    _ => None,
                };
                self.loaded(key, &editor, *rebuild, complete, stats.as_deref());
            }
            // ACP-21: the probe's answer only showed the agent alive.
            (Pending::Probe, _) => {}
            (Pending::TurnStats { .. }, outcome) => {
                // ACP-02: the agent's totals replace; a failed command keeps our own sum.
                let stats = match outcome {
                    Ok(ResponseData::SessionStats(stats)) => Some(stats),
                    _ => None,
                };
                let mut out = Vec::new();
                if let Some(session) = self.sessions.get_mut(key) {
                    end_turn(session, stats.as_deref(), &mut out);
                }
                for bytes in out {
                    self.editor(bytes);
                }
            }
            // ACP-24: without a session folder the id is ours, and a session whose agent
            // will not tell its state opens all the same.
            (Pending::NewState { editor }, _) if self.config.session_dir.is_none() => {
                let acp_id = SessionId::new(key.clone());
                self.send(
                    now,
                    key,
                    commands::get_available_models(),
                    |editor| Pending::NewModels {
                        editor,
                        acp_id,
                        deadline: now + MODELS_BUDGET,
                        resumed: false,
                    },
                    &editor,
                );
            }
            (Pending::NewState { editor } | Pending::LoadSwitch { editor, .. }, outcome) => {
                let reason = match outcome {
                    Err(failure) => failure.to_string(),
                    Ok(_) => "the agent did not open the session".to_owned(),
                };
                let error = match self.sessions.get(key).map(|s| s.acp_id.clone()) {
                    Some(id) if !id.0.is_empty() => {
                        Error::session_not_found(id).data(json!(reason))
                    }
                    _ => Error::internal_error().data(json!(reason)),
                };
                self.editor(rpc::error_line(&editor, &error));
                self.keys.retain(|_, k| k != key);
                if let Some(session) = self.sessions.get_mut(key) {
                    session.client.handle(now, client::Input::Call(Call::Stop));
                }
                self.drain(now, key);
            }
            (
                Pending::ReadCheck {
                    editor,
                    params,
                    mut walk,
                },
                outcome,
            ) => self.read_check(now, key, editor, params, &mut walk, outcome),
            (Pending::Read { editor, params, .. }, outcome) => {
                let line = match outcome {
                    // The page, typed by the client (OUT-10).
                    Ok(ResponseData::ReadOutput(mut result)) => {
                        // OUT-04: the three ids as the editor sent them.
                        result.session_id = params.session_id.clone();
                        rpc::result_line(&editor, &result)
                    }
                    // A page the wire model could not type: say what does not read.
                    Ok(ResponseData::Other(data)) => {
                        match serde_json::from_value::<ReadResult>(data) {
                            // OUT-04: the three ids as the editor sent them.
                            Ok(mut result) => {
                                result.session_id = params.session_id.clone();
                                rpc::result_line(&editor, &result)
                            }
                            Err(e) => rpc::error_line(
                                &editor,
                                &output::typed_error(
                                    "bad_read",
                                    &format!("the agent's page does not read: {e}"),
                                ),
                            ),
                        }
                    }
                    Ok(_) => rpc::error_line(
                        &editor,
                        &output::typed_error("bad_read", "the agent's answer is not a page"),
                    ),
                    Err(failure) => {
                        let code = failure
                            .code
                            .as_ref()
                            .map_or("bad_read".to_owned(), |c| c.to_string());
                        rpc::error_line(&editor, &output::typed_error(&code, &failure.error))
                    }
                };
                self.editor(line);
            }
        }
    }

    /// OUT-06: one history page of a read's check.
    fn read_check(
        &mut self,
        now: Instant,
        key: &Arc<str>,
        editor: RequestId,
        params: ReadParams,
        walk: &mut Walk,
        outcome: Result<ResponseData, CommandFailure>,
    ) {
        let found = match outcome {
            Ok(ResponseData::MessagesPage(page)) => {
                match history::find_stored(&page.messages, &params.item_id, &params.output_ref) {
                    Some(found) => Some(found),
                    None => match walk.after(&page) {
                        Next::Page(command) => {
                            let walk = std::mem::take(walk);
                            return self.send(
                                now,
                                key,
                                command,
                                |editor| Pending::ReadCheck {
                                    editor,
                                    params,
                                    walk,
                                },
                                &editor,
                            );
                        }
                        // Outside the budget: not found, never guessed.
                        Next::End | Next::OutOfBudget => Some(Err(OutputError::Unknown)),
                    },
                }
            }
            // The agent cannot page now (it streams): what this session's tool results
            // showed is the evidence.
            _ => None,
        };
        let found = found.unwrap_or_else(|| {
            let seen = self
                .sessions
                .get(key)
                .and_then(|s| s.seen_outputs.get(params.output_ref.as_str()).cloned());
            match seen {
                Some(stored) if stored.item_id == params.item_id => Ok(stored),
                Some(_) => Err(OutputError::Foreign),
                None => Err(OutputError::Unknown),
            }
        });
        let stored = match found {
            Ok(stored) => stored,
            Err(e) => return self.editor(rpc::error_line(&editor, &output::output_error(&e))),
        };
        match stored.availability {
            Availability::Available => {}
            Availability::Expired => {
                return self.editor(rpc::error_line(
                    &editor,
                    &output::output_error(&OutputError::Expired),
                ))
            }
            Availability::Unavailable => {
                return self.editor(rpc::error_line(
                    &editor,
                    &output::output_error(&OutputError::Unavailable),
                ))
            }
        }
        // The agent's own session id for the output, which the editor's may not be.
        let command = Command::ReadOutput(ReadOutput {
            session_id: stored.session_id.clone(),
            item_id: params.item_id.clone(),
            output_ref: params.output_ref.to_string(),
            offset_bytes: params.offset_bytes,
            length_bytes: Some(params.length_bytes),
            ..ReadOutput::default()
        });
        let deadline = now + READ_BUDGET;
        self.send(
            now,
            key,
            command,
            |editor| Pending::Read {
                editor,
                params,
                deadline,
            },
            &editor,
        );
    }

    /// A load's history walk is over: `get_session_stats` for the cumulative usage (ACP-02).
    /// ACP-06: the replay says where it stopped.
    fn replay_cut(&mut self, key: &Arc<str>) {
        let notice = ContentChunk::new(ContentBlock::Text(TextContent::new(REPLAY_CUT_NOTICE)));
        self.session_update(key, SessionUpdate::AgentMessageChunk(notice));
    }

    /// `session/load` from an agent that does not page: `get_messages` (PAGE-07, ACP-06).
    fn load_legacy(
        &mut self,
        now: Instant,
        key: &Arc<str>,
        editor: RequestId,
        rebuild: Box<Rebuild>,
    ) {
        self.send(
            now,
            key,
            crate::client::history::legacy_command(),
            |editor| Pending::LoadLegacy { editor, rebuild },
            &editor,
        );
    }

    fn load_stats(
        &mut self,
        now: Instant,
        key: &Arc<str>,
        editor: RequestId,
        rebuild: Box<Rebuild>,
        complete: bool,
    ) {
        self.send(
            now,
            key,
            commands::get_session_stats(),
            |editor| Pending::LoadStats {
                editor,
                rebuild,
                complete,
            },
            &editor,
        );
    }

    /// A load's end (ACP-06): the rebuilt facts shown (or left unknown), then the answer.
    /// The history's facts count only when the walk reached its end (`complete`); the agent's
    /// `get_session_stats` totals replace the cumulative usage (ACP-02) and its `get_state`
    /// todos stand in for a history with no `todo` result.
    fn loaded(
        &mut self,
        key: &Arc<str>,
        editor: &RequestId,
        rebuild: Rebuild,
        complete: bool,
        stats: Option<&SessionStatsData>,
    ) {
        let Some(session) = self.sessions.get_mut(key) else {
            return;
        };
        let mut updates = Vec::new();
        let agent_commands = std::mem::take(&mut session.mapper.facts.agent_commands);
        let (facts, plan) = if complete {
            (rebuild.facts, rebuild.plan.or(rebuild.state_plan))
        } else {
            (Facts::default(), rebuild.state_plan)
        };
        session.mapper.facts = facts;
        session.mapper.facts.agent_commands = agent_commands;
        session.mapper.facts.context_window = rebuild.context_window;
        session.mapper.facts.requested(&session.config);
        if let Some(stats) = stats {
            session.mapper.facts.session_stats(stats);
        }
        if let Some(plan) = plan {
            session.mapper.facts.plan_size = Some(plan.entries.len());
            updates.push(SessionUpdate::Plan(plan));
        }
        if session.mapper.usage_meta {
            if let Some(update) = session.mapper.facts.usage_update() {
                updates.push(SessionUpdate::SessionInfoUpdate(update));
            }
        }
        if let Some(update) = session.mapper.facts.context_update() {
            updates.push(SessionUpdate::UsageUpdate(update));
        }
        let acp_id = session.acp_id.clone();
        let commands = session.mapper.facts.commands();
        let options = session.config.options();
        for update in updates {
            self.session_update(key, update);
        }
        self.editor(rpc::result_line(
            editor,
            &LoadSessionResponse::new().config_options(options),
        ));
        self.editor(commands_line(&acp_id, commands));
    }

    fn session_update(&mut self, key: &Arc<str>, update: SessionUpdate) {
        if let Some(session) = self.sessions.get(key) {
            let notification = SessionNotification::new(session.acp_id.clone(), update);
            self.editor(rpc::notification_line("session/update", &notification));
        }
    }

    fn editor(&mut self, bytes: Vec<u8>) {
        self.actions.push_back(Action::Editor { bytes });
    }
}

/// Whether an ACP session id names a session file of our folder: 1..=128 ASCII letters,
/// digits, `-`, `_` and `.`, not starting with `.` (ACP-06: the id becomes
/// `<dir>/<id>.jsonl`, so it can't name another folder).
fn is_session_file_name(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// One client event of a session: `session/update`s, or the prompt's answer; true when the
/// prompt's turn ended and waits for the end-of-turn usage (ACP-02).
fn session_event(session: &mut Session, event: ClientEvent, out: &mut Vec<Vec<u8>>) -> bool {
    let id = &session.acp_id.clone();
    let is_prompt = |request: &AgentRequest, turn: &Option<Turn>| {
        turn.as_ref().is_some_and(|t| t.prompt == *request)
    };
    match event {
        ClientEvent::Frame {
            frame: AgentFrame::Ready(_),
        } => {
            // OUT-01: no handles unless this agent serves stored-output reads (its client
            // knows).
            let serves = session.client.serves_read_output();
            session.mapper.output_session = session.mapper.output_session.take().filter(|_| serves);
        }
        ClientEvent::Frame {
            frame: AgentFrame::AvailableCommandsUpdate(update),
        } => {
            session.mapper.facts.agent_commands = status::agent_commands(&update.commands);
            if !id.0.is_empty() {
                out.push(commands_line(id, session.mapper.facts.commands()));
            }
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
            if let AgentEvent::ToolExecutionEnd(end) = &event {
                // OUT-06: what this session's tool results showed, bounded.
                let details = end.result.as_ref().and_then(|r| r.get("details"));
                if let Some(stored) = history::stored_output(details) {
                    if session.seen_outputs.len() < MAX_SEEN_OUTPUTS {
                        session
                            .seen_outputs
                            .insert(stored.output_ref.to_string(), stored);
                    }
                }
            }
            let mut updates = session.mapper.event(&event);
            // ACP-24: a level the agent changed itself moves the option.
            if let AgentEvent::ThinkingLevelChanged(level) = &event {
                let level = level.thinking_level.as_ref().or(level.level.as_ref());
                if level.is_some_and(|l| session.config.thinking_changed(l)) {
                    session.mapper.facts.requested(&session.config);
                    let options = ConfigOptionUpdate::new(session.config.options());
                    updates.push(SessionUpdate::ConfigOptionUpdate(options));
                }
            }
            for update in updates {
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
        // ACP-10: a prompt the agent answered itself (a builtin command) ends the turn,
        // acknowledged so (`agentInvoked: false`) or later (`prompt_result`).
        ClientEvent::PromptLocalOnly { request } if is_prompt(&request, &session.turn) => {
            finish_turn(session, out);
        }
        // CALL-03: `agentInvoked: false` (omp) or `disposition: "handled"` (pi 1.6).
        ClientEvent::Response {
            request,
            outcome: Ok(ResponseData::Prompt(data)),
            ..
        } if data.is_local() && is_prompt(&request, &session.turn) => {
            finish_turn(session, out);
        }
        // ACP-10, ACP-11: what the agent says outside the model's text.
        ClientEvent::Frame { frame } => {
            for update in frame_updates(session, &frame) {
                let notification = SessionNotification::new(id.clone(), update);
                out.push(rpc::notification_line("session/update", &notification));
            }
        }
        // CALL-09: the turn is over; the prompt is answered with its stop reason once the
        // end-of-turn usage is known (ACP-02).
        ClientEvent::TurnFinished => return session.turn.is_some(),
        ClientEvent::Closed { error } => {
            if let Some(turn) = session.turn.take() {
                let error = Error::internal_error().data(json!(error.to_string()));
                out.push(rpc::error_line(&turn.editor, &error));
            }
        }
        _ => {}
    }
    false
}

/// What a frame that is no event shows (ACP-10, ACP-11): a builtin command's output, the
/// title, a config change, an extension's error.
fn frame_updates(session: &mut Session, frame: &AgentFrame) -> Vec<SessionUpdate> {
    let mapper = &mut session.mapper;
    match frame {
        AgentFrame::CommandOutput(output) if !output.text.is_empty() => {
            let mut text = bound_snapshot(&output.text);
            if !text.ends_with('\n') {
                text.push('\n');
            }
            let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
            vec![SessionUpdate::AgentMessageChunk(chunk)]
        }
        // ACP-26: a title reaches the editor when it changes.
        AgentFrame::SessionInfoUpdate(info) => match info.title.as_deref() {
            Some(title) if !title.is_empty() => {
                let title = map::title(&map::withhold_credential_uris(title), None, None);
                if session.title.as_deref() == Some(title.as_str()) {
                    return Vec::new();
                }
                session.title = Some(title.clone());
                vec![SessionUpdate::SessionInfoUpdate(
                    SessionInfoUpdate::new().title(title),
                )]
            }
            _ => Vec::new(),
        },
        // ACP-10, ACP-24: a change a command made is shown, and the options follow it.
        AgentFrame::ConfigUpdate(update) => {
            let mut updates = vec![mapper.notice(&notices::config_update(update))];
            if session.config.update(update) {
                mapper.facts.requested(&session.config);
                let options = ConfigOptionUpdate::new(session.config.options());
                updates.push(SessionUpdate::ConfigOptionUpdate(options));
            }
            updates
        }
        AgentFrame::ExtensionError(error) => {
            vec![mapper.notice(&notices::extension_error(error))]
        }
        _ => Vec::new(),
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

/// The end of a model turn (ACP-02): the agent's totals (`get_session_stats`) replace the
/// cumulative usage, else the bridge's own sum stands; then the `muse/usage` metadata (when
/// negotiated), the standard `usage_update` (when the window is known) and the prompt's
/// answer.
fn end_turn(session: &mut Session, stats: Option<&SessionStatsData>, out: &mut Vec<Vec<u8>>) {
    if session.turn.is_none() {
        return;
    }
    let id = session.acp_id.clone();
    let facts = &mut session.mapper.facts;
    if let Some(stats) = stats {
        facts.session_stats(stats);
    }
    let mut updates = Vec::new();
    if session.mapper.usage_meta {
        if let Some(update) = facts.usage_update() {
            updates.push(SessionUpdate::SessionInfoUpdate(update));
        }
    }
    if let Some(update) = facts.context_update() {
        updates.push(SessionUpdate::UsageUpdate(update));
    }
    // ACP-26: the session's `updatedAt`, the time of its last message.
    if let Some(ms) = facts.last_message_ms {
        let update = SessionInfoUpdate::new().updated_at(list::rfc3339(ms));
        updates.push(SessionUpdate::SessionInfoUpdate(update));
    }
    for update in updates {
        let notification = SessionNotification::new(id.clone(), update);
        out.push(rpc::notification_line("session/update", &notification));
    }
    finish_turn(session, out);
}

fn finish_turn(session: &mut Session, out: &mut Vec<Vec<u8>>) {
    if let Some(turn) = session.turn.take() {
        let reason = session.mapper.stop_reason(turn.cancel_requested);
        out.push(rpc::result_line(&turn.editor, &PromptResponse::new(reason)));
    }
}

fn params_of<T: DeserializeOwned>(params: Value) -> Result<T, Error> {
    serde_json::from_value(params).map_err(|e| Error::invalid_params().data(json!(e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::is_session_file_name;

    #[test]
    fn acp_06_a_session_id_names_a_file_of_the_folder_only() {
        for good in ["s-1", "session-12", "2026-01-01T00.00_abc", "a.b"] {
            assert!(is_session_file_name(good), "{good}");
        }
        let long = "x".repeat(129);
        for bad in [
            "", ".hidden", "..", "../x", "a/b", "a\\b", "a b", "é", "a\0", &long,
        ] {
            assert!(!is_session_file_name(bad), "{bad:?}");
        }
    }
}
