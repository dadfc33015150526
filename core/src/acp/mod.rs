//! The Agent Client Protocol adapter: [`Bridge`] makes any `--mode rpc` agent an ACP agent
//! for editors (JSON-RPC 2.0, newline-delimited over stdio, protocol version 1; seed
//! `003_53309ea8c05bcc75.txt`, rules ACP-*).
//!
//! The bridge is sans-IO and follows the crate's run-loop contract (the [crate docs](crate)):
//! the driver hands in every [`Input`] through [`Bridge::handle`] (bytes from the editor, the
//! output and exit of each session's agent, timers), drains [`Bridge::poll_action`] (bytes for
//! the editor, an agent to spawn in a session's cwd, bytes for a session's agent, an agent's
//! stdin to close, an agent's process group to kill) and sleeps until [`Bridge::poll_timeout`].
//! Nothing outlives the bridge (ACP-12): a stopped agent gets one second after its stdin
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
//! asked of the editor (`dialogs`: approvals tied to their tool call as
//! `session/request_permission`; a dialog tied to no tool as one item, a form elicitation
//! where the editor offers forms, else a permission request with no card of its own, ACP-08,
//! ACP-09, ACP-36), omp's subagents followed on cards of their own (`subagent`, ACP-37), and what it says
//! outside the model's text is shown in the turn (`notices`: local-only prompts, errors,
//! retries, ACP-10, ACP-11). A prompt while one runs is queued as the agent's follow-up and
//! answered after it (`queue`, ACP-27); one after a `session/cancel` is the next turn
//! (`next`, ACP-28). The editor's MCP servers of a session (`mcpServers`: stdio, http, sse)
//! are started with it and their tools given to its agent as host tools (`mcp`, MCP-01..09,
//! MCP-18: one [`crate::mcp::McpServer`] or [`crate::mcp::http::McpHttpServer`] each, named
//! by a server key).
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

mod auth;
mod bound;
mod card;
mod command;
mod config;
mod confirm;
mod list;
mod sessions;
pub use config::approval_policy_of;
pub use list::{
    SessionFile, SessionFolderError, MAX_SESSION_FILES, SESSION_FILE_HEAD_BYTES,
    SESSION_FILE_TAIL_BYTES,
};
mod dialogs;
mod elicit;
mod expiry;
mod flow;
mod fork;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod history;
mod key;
mod kind;
mod load;
mod map;
mod mcp;
mod methods;
mod mode;
mod next;
mod notices;
mod open;
mod outbox;
mod output;
mod plan;
mod prompt;
mod queue;
mod reads;
mod restart;
mod review;
mod rpc;
mod session;
mod silence;
mod start;
mod status;
mod step;
mod stop;
mod subagent;
mod turn;

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use agent_client_protocol_schema::v1::{
    AgentCapabilities, AvailableCommand, AvailableCommandsUpdate, ClientCapabilities,
    ConfigOptionUpdate, ContentBlock, ContentChunk, Error, ForkSessionResponse, Implementation,
    InitializeResponse, ListSessionsRequest, LoadSessionRequest, LoadSessionResponse, Meta,
    NewSessionResponse, Plan, PromptCapabilities, PromptRequest, PromptResponse, RequestId,
    ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities,
    SessionDeleteCapabilities, SessionForkCapabilities, SessionInfoUpdate, SessionListCapabilities,
    SessionNotification, SessionResumeCapabilities, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol_schema::ProtocolVersion;
use serde_json::{json, Value};

/// The ACP schema types the bridge speaks in (`agent-client-protocol-schema`).
use session::{AcpSession, Pending, Timer, TimerContext, Turn};

pub use agent_client_protocol_schema as schema;
pub(crate) use agent_client_protocol_schema::v1::SessionId;
pub use auth::terminal_login_command;
pub(crate) use bound::bound_snapshot;
pub use bound::{MAX_SURFACE_BYTES, TRUNCATION_NOTICE};
pub use dialogs::DIALOG_CALL_PREFIX;
pub(crate) use dialogs::{ELICITATION_METHOD, TEXT_FIELD};
pub use fork::{
    FileTicket, ForkNaming, SessionFileDone, SessionFileFailure, SessionFileFailureKind,
};
pub(crate) use history::MAX_REPLAY_MESSAGES;
pub use key::{AgentKey, BadProcessKey, McpServerKey, ProcessKey};
pub(crate) use map::{Cancel, Mapper};
pub use mcp::{McpHttpLaunch, McpLaunch, McpRead};
pub(crate) use output::{output_opt_in, OUTPUT_META};
pub(crate) use plan::plan_from_phases;
pub(crate) use prompt::PromptContent;
pub(crate) use queue::MAX_QUEUED_PROMPTS;
pub use restart::RESTARTED_NOTICE;
pub use review::{EditedFileFailure, ReviewTicket, MAX_REVIEW_FILE_BYTES};
pub(crate) use rpc::MAX_EDITOR_LINE_BYTES;
pub use silence::SilenceBudget;
pub(crate) use status::{is_status_prompt, usage_opt_in, Facts};
pub use subagent::SUBAGENT_CALL_PREFIX;

use crate::client::{
    self, AgentKind, Call, Client, ClientConfig, ClientEvent, CommandFailure, ExitStatus,
    RequestId as AgentRequest,
};
use crate::frame::LineDecoder;
use crate::output::{Availability, OutputError, ReadParams, ReadResult, READ_BUDGET, READ_METHOD};
use crate::spill::SaveFailure;
use crate::wire::{
    Abort, AgentFrame, Command, GetSessionStats, GetState, Prompt, ReadOutput, ResponseData,
    SessionEvent, SessionStatsData, StreamingBehavior, SwitchSession,
};
use history::{Next, Rebuild, Walk};
use load::{LoadStep, SwitchFor};
use methods::{EditorNotification, EditorReply, EditorRequest};
use open::is_session_file_name;
use rpc::{Incoming, Line};
use turn::{commands_line, end_turn, session_event, stats_of};

/// How a [`Bridge`] starts.
#[derive(Debug, Clone, Default)]
pub struct BridgeConfig {
    /// The configuration of each session's [`Client`].
    pub client: ClientConfig,
    /// The folder the agent keeps its sessions in (the driver passes it `--session-dir`):
    /// the bundled agent's `<sessionId>.jsonl`, omp's `<timestamp>_<id>.jsonl`.
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
    /// Which agent the sessions run, decided once from its command
    /// ([`AgentKind::from_command`]) and kept on each session: `initialize` advertises
    /// `promptCapabilities.image` when it [takes images](AgentKind::takes_images), and images
    /// reach the agent only then (ACP-14).
    pub agent: AgentKind,
    /// How long a session's agent may say nothing while the editor waits on it (ACP-21).
    pub silence_budget: SilenceBudget,
    /// The MCP servers' start-up budget (MCP-02); `None`: 10 s.
    pub mcp_init_budget: Option<std::time::Duration>,
    /// Where an agent started for `authenticate` runs (ACP-41: there is no session, so no
    /// session cwd): the driver's own working directory; `None`: `/`.
    pub auth_cwd: Option<PathBuf>,
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
    AgentStdout(AgentKey, &'a [u8]),
    /// Bytes read from a session's agent's stderr.
    AgentStderr(AgentKey, &'a [u8]),
    /// A session's agent's stdout ended.
    AgentStdoutEnd(AgentKey),
    /// A session's agent exited (or could not be spawned: [`ExitStatus::Unknown`]).
    AgentExit(AgentKey, ExitStatus),
    /// An MCP server (named by the server key of its [`Action::McpSpawn`] or
    /// [`Action::McpHttpOpen`]) did something: its process (MCP-01), or one of its HTTP
    /// exchanges (MCP-18).
    Mcp(McpServerKey, McpRead<'a>),
    /// The time of [`Bridge::poll_timeout`] has come.
    Timeout,
    /// The session folder as [`Action::ReadSessionFolder`] asked: its `*.jsonl` regular
    /// files (symlinks not followed), or why it could not be read (ACP-26).
    SessionFolder(Result<Vec<SessionFile>, SessionFolderError>),
    /// What the driver did with the session file of an [`Action::ForkSessionFile`] or
    /// [`Action::DeleteSessionFile`] (ACP-31, ACP-32), under its ticket.
    SessionFile(FileTicket, Result<SessionFileDone, SessionFileFailure>),
    /// The driver read the edited file of an [`Action::ReadEditedFile`] (its bytes, at most
    /// [`MAX_REVIEW_FILE_BYTES`]), or why it did not (ACP-38, ACP-39), under its ticket.
    EditedFile(ReviewTicket, Result<Vec<u8>, EditedFileFailure>),
    /// The driver wrote this many bytes of the [`Action::Editor`] lines to the editor
    /// (ACP-20: what waits decides whether the agents are read, [`Bridge::reads_agent`]).
    EditorWritten(usize),
    /// The driver wrote this many bytes of the session's [`Action::Agent`] lines to its
    /// agent's stdin, or dropped them since that stdin is closed (ACP-20: while more than
    /// 4 MiB wait for one agent, the editor is not read,
    /// [`Bridge::reads_editor`]).
    AgentWritten(AgentKey, usize),
}

/// Work for the driver, in order. Serialised (for transcripts) as
/// `{"action":"editor","bytes":LINE}`, `{"action":"spawn","session","cwd"}`,
/// `{"action":"agent","session","bytes"}`, `{"action":"close_agent_stdin","session"}`,
/// `{"action":"stop_agent","session"}`, `{"action":"mcp_spawn","server","launch"}`,
/// `{"action":"mcp_write","server","bytes"}`, `{"action":"mcp_stop","server"}`,
/// `{"action":"mcp_http_open","server","launch":{"url","headers":[NAME…]}}`,
/// `{"action":"mcp_http_send","server","request":{"exchange","method","url","body"}}`,
/// `{"action":"mcp_http_abort","server","exchange"}`,
/// `{"action":"read_session_folder","dir"}`,
/// `{"action":"fork_session_file","ticket","dir","source","naming"}`,
/// `{"action":"delete_session_file","ticket","dir","name"}`,
/// `{"action":"read_edited_file","ticket","cwd","path"}`, bytes as text.
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
        session: AgentKey,
        /// The session's working directory.
        cwd: PathBuf,
    },
    /// Write these bytes to the session's agent's stdin.
    Agent {
        /// The session.
        session: AgentKey,
        /// Complete JSON lines.
        #[serde(serialize_with = "as_text")]
        bytes: Vec<u8>,
    },
    /// Close the session's agent's stdin once what was queued for it is written: the first
    /// step of stopping it (ACP-12). Its [`Action::StopAgent`] follows one second later,
    /// or at its exit.
    CloseAgentStdin {
        /// The session.
        session: AgentKey,
    },
    /// Read the session folder for `session/list` (ACP-26): the name, modification time,
    /// first [`SESSION_FILE_HEAD_BYTES`] and last [`SESSION_FILE_TAIL_BYTES`] of each of its
    /// `*.jsonl` regular files (no symlink followed, at most [`MAX_SESSION_FILES`], the
    /// newest), handed back as [`Input::SessionFolder`]. One is asked at a time.
    ReadSessionFolder {
        /// The folder ([`BridgeConfig::session_dir`]).
        dir: PathBuf,
    },
    /// Copy the session file `source` of the folder `dir` to a new file named as `naming`
    /// says, under a fresh session id (ACP-31; the store's STORE-02: no symlink followed,
    /// the copy created exclusively, 0600), and hand back its name as [`Input::SessionFile`].
    ForkSessionFile {
        /// Which request this is, handed back with the outcome.
        ticket: FileTicket,
        /// The session folder ([`BridgeConfig::session_dir`]).
        dir: PathBuf,
        /// The file to copy: one name of the folder (`<id>.jsonl`), not a path.
        source: String,
        /// How the copy is named.
        naming: ForkNaming,
    },
    /// Remove the session file `name` of the folder `dir` (ACP-32; the store's STORE-03:
    /// only a regular file, a symlink refused), and hand back the outcome as
    /// [`Input::SessionFile`].
    DeleteSessionFile {
        /// Which request this is, handed back with the outcome.
        ticket: FileTicket,
        /// The session folder ([`BridgeConfig::session_dir`]).
        dir: PathBuf,
        /// The file to remove: one name of the folder (`<id>.jsonl`), not a path.
        name: String,
    },
    /// Read the file `path`, which an agent's `write` or `edit` changed, for the editor's
    /// review (ACP-38, ACP-39): `path` lies beneath `cwd` (both absolute and normalized);
    /// open each folder beneath `cwd` and the file itself without following a symlink
    /// (`O_NOFOLLOW`), only a regular file, at most [`MAX_REVIEW_FILE_BYTES`] of it (a
    /// larger one is [`EditedFileFailure::TooLarge`]); hand back its bytes as
    /// [`Input::EditedFile`].
    ReadEditedFile {
        /// Which read this is, handed back with the outcome.
        ticket: ReviewTicket,
        /// The session's working directory.
        cwd: PathBuf,
        /// The file.
        path: PathBuf,
    },
    /// Kill the session's agent and every process left in its process group (ACP-12: the
    /// driver starts each agent as the leader of a process group of its own). Comes once
    /// per agent: when the grace after [`Action::CloseAgentStdin`] is over, or once the agent
    /// has exited (then for what is left of its group).
    StopAgent {
        /// The session.
        session: AgentKey,
    },
    /// Start an MCP server (MCP-01) as the leader of a process group of its own, and report
    /// its stdout, its end and its exit as [`Input::Mcp`] under this server key.
    McpSpawn {
        /// The server key (`AGENT_KEY/mcp-N`).
        server: McpServerKey,
        /// What to run, and where.
        launch: McpLaunch,
    },
    /// Write these bytes to the MCP server's stdin.
    McpWrite {
        /// The server key.
        server: McpServerKey,
        /// Complete JSON-RPC lines.
        #[serde(serialize_with = "as_text")]
        bytes: Vec<u8>,
    },
    /// Kill the MCP server's process group (MCP-01, MCP-06); for an HTTP server, let its
    /// session's DELETE (just sent) finish on its own and take no more of its exchanges'
    /// inputs (MCP-18). Comes once per server.
    McpStop {
        /// The server key.
        server: McpServerKey,
    },
    /// Get ready to reach an HTTP MCP server (MCP-18): its URL and the editor's headers,
    /// added to each of its [`Action::McpHttpSend`] requests. Comes once, before them.
    McpHttpOpen {
        /// The server key.
        server: McpServerKey,
        /// Where, and the headers (never shown: [`crate::mcp::http::SecretHeaders`]).
        launch: McpHttpLaunch,
    },
    /// Send this request to the HTTP MCP server (MCP-18), with its headers, and report its
    /// response as [`McpRead::Http`] inputs under this server key.
    McpHttpSend {
        /// The server key.
        server: McpServerKey,
        /// The request.
        #[serde(serialize_with = "mcp::request_summary")]
        request: crate::mcp::http::HttpRequest,
    },
    /// Drop this exchange of the HTTP MCP server (close its connection): no more inputs
    /// are wanted for it (MCP-18).
    McpHttpAbort {
        /// The server key.
        server: McpServerKey,
        /// The exchange.
        #[serde(serialize_with = "mcp::exchange_number")]
        exchange: crate::mcp::http::ExchangeId,
    },
}

fn as_text<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(bytes))
}

/// The notice a load's replay ends with when the history goes on past the budget (ACP-06):
/// [`MAX_HISTORY_PAGES`] pages of [`WALK_PAGE_MESSAGES`].
pub(crate) const REPLAY_CUT_NOTICE: &str =
    "[… history replay stopped after 20 pages of 100 messages: later messages are not shown]";

/// How long a turn's end waits for the agent's `get_session_stats` before answering the
/// prompt with the bridge's own sum (ACP-02).
pub(crate) const STATS_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

/// How long `session/new` waits for the agent's `get_available_models` before it opens
/// the session without the model option (ACP-24).
pub(crate) const MODELS_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

/// The most stored outputs a session remembers from its live stream.
const MAX_SEEN_OUTPUTS: usize = 4096;

/// The ACP adapter. See the [module docs](self).
#[derive(Debug)]
pub struct Bridge {
    config: BridgeConfig,
    reader: LineDecoder,
    /// By agent key (`SessionId` is not `Ord`): the key of the driver's agent process.
    sessions: BTreeMap<AgentKey, AcpSession>,
    /// Agent keys by ACP session id.
    keys: BTreeMap<Arc<str>, AgentKey>,
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
    /// ACP-31, ACP-32: the forks and deletes waiting on the driver.
    files: fork::SessionFiles,
    /// ACP-35: the sessions' modes, by ACP id, for a later load or resume.
    modes: mode::Modes,
    /// ACP-38: the edited files on their way to the editor.
    edits: review::Edits,
    /// ACP-20: the editor bytes given to the driver and not yet written.
    editor_queue: flow::EditorQueue,
    /// ACP-41: the sign-in running.
    signin: auth::SignIn,
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
            files: fork::SessionFiles::default(),
            modes: mode::Modes::default(),
            edits: review::Edits::default(),
            editor_queue: flow::EditorQueue::default(),
            signin: auth::SignIn::default(),
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

    /// Whether the editor has gone and every agent has exited, or the shutdown budget (3 s) has
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

    /// When [`Input::Timeout`] is next due: the earliest of every session's timers (a
    /// start-up or silence budget, a stop's grace, a stats, models or read budget, its MCP
    /// servers', its client's) and the shutdown's budget (ACP-12).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let context = self.timer_context();
        self.sessions
            .values()
            .filter_map(|session| session.poll_timeout(context))
            .chain(self.shutdown.timeout().filter(|_| !self.is_finished()))
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
            Input::AgentStdout(key, bytes) => {
                if !bytes.is_empty() {
                    self.on_session(now, key, |session, _| session.heard_from_agent(now));
                }
                self.session_input(now, key, client::Input::stdout(bytes))
            }
            Input::AgentStderr(key, bytes) => {
                self.session_input(now, key, client::Input::stderr(bytes))
            }
            Input::AgentStdoutEnd(key) => self.session_input(now, key, client::Input::StdoutEnd),
            Input::AgentExit(key, status) => {
                self.on_session(now, key, |session, out| session.agent_exited(out));
                self.session_input(now, key, client::Input::exit(status));
                self.on_session_mcp(now, key, |session| session.mcp_stop(now));
                // ACP-32: a deleted session's file goes once its agent is gone.
                self.deletes_after_exit(key);
            }
            Input::SessionFolder(files) => self.listed(files),
            Input::SessionFile(ticket, outcome) => self.session_file(now, ticket, outcome),
            Input::EditedFile(ticket, outcome) => self.edited_file(now, ticket, outcome),
            Input::EditorWritten(bytes) => self.editor_written(now, bytes),
            Input::AgentWritten(key, bytes) => self.agent_written(key, bytes),
            Input::Mcp(server, read) => self.mcp_read(now, server, read),
            Input::Timeout => {
                self.shutdown.tick(now);
                for key in self.session_keys() {
                    for timer in Timer::ALL {
                        // Read again before each: an expiry may change the next one's.
                        let due = self
                            .sessions
                            .get(&key)
                            .and_then(|session| session.deadline(timer, self.timer_context()));
                        if due.is_some_and(|due| due <= now) {
                            self.expire(now, key, timer);
                        }
                    }
                }
            }
        }
    }

    /// What the sessions' deadlines depend on beyond each session.
    fn timer_context(&self) -> TimerContext {
        TimerContext {
            agents_held: self.agents_held(),
            silence_budget: self.config.silence_budget,
        }
    }

    /// ACP-12: the editor has gone or the bridge is told to end: every agent is stopped.
    fn shut_down(&mut self, now: Instant) {
        self.editor_ended = true;
        if !self.shutdown.begin(now) {
            return;
        }
        for key in self.session_keys() {
            self.session_input(now, key, client::Input::Call(Call::Stop));
            self.on_session(now, key, |session, out| session.stop_agent(now, out));
            self.on_session_mcp(now, key, |session| session.mcp_stop(now));
        }
    }

    fn session_keys(&self) -> Vec<AgentKey> {
        self.sessions.keys().copied().collect()
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
            // An answer to a request of ours, to what asked; one to no request of ours is
            // dropped.
            Ok(Some(Incoming::Response { id, outcome })) => match EditorReply::of(&id) {
                // ACP-38: an edited file's write.
                Some(EditorReply::Write(ticket)) => self.write_answered(now, ticket, &outcome),
                // ACP-41: a sign-in's question.
                Some(EditorReply::SignIn(n)) => self.sign_in_answer(now, n, &outcome),
                // ACP-08, ACP-09: a dialog.
                Some(EditorReply::Dialog(n)) => self.dialog_answer(now, n, outcome),
                None => {}
            },
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
        match EditorRequest::parse(method, params)? {
            EditorRequest::Initialize(request) => {
                let meta = request.client_capabilities.meta.as_ref();
                // ACP-02: usage metadata only for an editor that opted in.
                self.usage_meta = usage_opt_in(meta);
                // OUT-01: stored output only for an editor that opted in, with an agent
                // known to serve it.
                self.output_meta = output_opt_in(meta) && self.config.agent_serves_output;
                self.client_capabilities = Some(request.client_capabilities);
                self.client_meta = request.meta;
                // ACP-06: loading works where the agent keeps its sessions in our folder.
                // ACP-25: close always; resume and list where loading works; ACP-31,
                // ACP-32: fork and delete too.
                let stored = self.config.session_dir.is_some();
                let sessions = SessionCapabilities::new()
                    .close(SessionCloseCapabilities::new())
                    .list(stored.then(SessionListCapabilities::new))
                    .resume(stored.then(SessionResumeCapabilities::new))
                    .fork(stored.then(SessionForkCapabilities::new))
                    .delete(stored.then(SessionDeleteCapabilities::new));
                let capabilities = AgentCapabilities::new()
                    .load_session(stored)
                    // MCP-18: the editor's http and sse MCP servers are started too.
                    .mcp_capabilities(mcp::capabilities())
                    .session_capabilities(sessions)
                    // ACP-14, ACP-15, ACP-16: exactly what reaches the agent.
                    .prompt_capabilities(
                        PromptCapabilities::new()
                            .image(self.config.agent.takes_images())
                            .embedded_context(true),
                    );
                // ACP-40: the sign-in methods, by the agent's kind and the editor's offer.
                let methods = self
                    .client_capabilities
                    .as_ref()
                    .map(|editor| auth::auth_methods(self.config.agent, editor))
                    .unwrap_or_default();
                let mut response = InitializeResponse::new(ProtocolVersion::V1)
                    .agent_capabilities(capabilities)
                    .auth_methods(methods)
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
            EditorRequest::Authenticate(request) => self.authenticate(now, id, request),
            EditorRequest::NewSession(request) => {
                if !request.cwd.is_absolute() {
                    return Err(Error::invalid_params().data(json!("cwd must be an absolute path")));
                }
                let key = self.open_session(now, request.cwd.clone());
                if let Some(session) = self.sessions.get_mut(&key) {
                    // ACP-33: kept to start them again with a new agent.
                    session.restart.mcp = request.mcp_servers.clone();
                }
                self.mcp_start(now, key, request.mcp_servers, &request.cwd);
                // ACP-24: the model and thinking level; ACP-06: the session file's name is
                // the ACP session id.
                self.send(
                    now,
                    key,
                    Command::from(GetState::default()),
                    |editor| Pending::NewState { editor },
                    id,
                );
                Ok(None)
            }
            EditorRequest::LoadSession(request) => self.load(now, id, request).map(|()| None),
            EditorRequest::Prompt(request) => self.prompt(now, id, request).map(|()| None),
            EditorRequest::ListSessions(request) => self.list(id, request).map(|()| None),
            EditorRequest::CloseSession(request) => {
                self.close_session(now, id, &request).map(|()| None)
            }
            EditorRequest::ResumeSession(request) => self.resume(now, id, request).map(|()| None),
            EditorRequest::ForkSession(request) => self.fork(id, request).map(|()| None),
            EditorRequest::DeleteSession(request) => self.delete(now, id, request).map(|()| None),
            EditorRequest::SetMode(request) => self.set_mode(id, request).map(|()| None),
            EditorRequest::SetConfigOption(request) => {
                self.set_config_option(now, id, request).map(|()| None)
            }
            EditorRequest::ReadOutput(params) => self.read_output(now, id, &params).map(|()| None),
        }
    }

    /// Sends the agent a command whose answer the bridge turns into the editor's.
    fn send(
        &mut self,
        now: Instant,
        key: AgentKey,
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
    fn ask(&mut self, now: Instant, key: AgentKey, command: Command, pending: Pending) -> bool {
        let Some(session) = self.sessions.get_mut(&key) else {
            return false;
        };
        let asked = session.ask(now, command, pending);
        self.drain(now, key);
        asked
    }

    /// The agent key of an ACP session the editor may use: known, open and not opening.
    fn usable(&self, session_id: &SessionId) -> Result<AgentKey, Error> {
        let key = self
            .keys
            .get(&*session_id.0)
            .ok_or_else(|| Error::session_not_found(session_id.clone()))?;
        let session = self
            .sessions
            .get(key)
            .ok_or_else(|| Error::session_not_found(session_id.clone()))?;
        let reopening = session.mcp.is_holding_open() || session.restart.prompt.is_some();
        if reopening || session.pending.values().any(Pending::is_opening) {
            return Err(Error::invalid_request().data(json!("the session is still opening")));
        }
        if session.client.is_closed() || session.exited {
            return Err(Error::internal_error().data(json!("the session's agent has exited")));
        }
        Ok(*key)
    }

    fn notification(&mut self, now: Instant, method: &str, params: Value) {
        // Unknown notifications, and ones that don't parse, are ignored.
        let cancel = match EditorNotification::parse(method, params) {
            None => return,
            // ACP-41: the editor withdrew its `authenticate`.
            Some(EditorNotification::CancelRequest(cancel)) => {
                return self.sign_in_withdrawn(now, &cancel.request_id)
            }
            Some(EditorNotification::Cancel(cancel)) => cancel,
        };
        let Some(&key) = self.keys.get(&*cancel.session_id.0) else {
            return;
        };
        // ACP-08: what waits for the editor is denied first.
        self.cancel_dialogs(now, key);
        self.on_session(now, key, |session, _| session.cancel_turn(now));
        if let Some((session, mut out)) = self.session_out(key) {
            // ACP-28: what waited for the next turn is cancelled too.
            session.cancel_held(&mut out);
            // ACP-33: a prompt waiting for its restarted agent is answered cancelled instead.
            session.restart.cancelled = session.restart.prompt.is_some();
        }
    }

    fn session_input(&mut self, now: Instant, key: AgentKey, input: client::Input<'_>) {
        self.on_session(now, key, |session, _| {
            session.client.handle(now, input);
            outbox::Drain::Needed
        });
    }

    /// Passes a session's client actions on, mapping its events: each a step of the
    /// session's ([`AcpSession::step`]), what needs more than the session routed here.
    fn drain(&mut self, now: Instant, key: AgentKey) {
        let writes = self.writes_offered();
        loop {
            let events = if self.signin.is_login(key) {
                step::EventsTo::SignIn
            } else {
                step::EventsTo::Session
            };
            let Some((session, mut out)) = self.session_out(key) else {
                return;
            };
            match session.step(now, writes, events, &mut out) {
                step::Step::Idle => return,
                step => self.route_step(now, key, step),
            }
        }
    }

    fn session_update(&mut self, key: AgentKey, update: SessionUpdate) {
        if let Some(session) = self.sessions.get(&key) {
            let notification = SessionNotification::new(session.acp_id.clone(), update);
            self.editor(rpc::update_line(&notification));
        }
    }

    fn editor(&mut self, bytes: Vec<u8>) {
        self.actions.push_back(Action::Editor { bytes });
    }
}
