//! The transcript format: JSONL, a header line then one line per step.
//!
//! ```text
//! {"role":"client","config":{"expect_ready":false},"rules":["CALL-02"],"description":"…"}
//! {"at":0,"call":"send","command":{"type":"frobnicate"},"returns":{"ok":1},"expect":[…]}
//! {"at":5,"stdout":"{\"type\":\"response\",…}\n","expect":[…]}
//! ```
//!
//! The header's `role` says which core the transcript drives: `"client"` (the host side,
//! [`Client`](musewire_core::client::Client)), `"agent"` (the agent side,
//! [`Agent`](musewire_core::agent::Agent)) or `"bridge"` (the ACP adapter,
//! [`Bridge`](musewire_core::acp::Bridge): inputs `editor`, `editor_end`, and per session
//! `agent_stdout`, `agent_stderr`, `agent_eof`, `agent_exit` with `"session": ID`,
//! `edited_file` (the driver's read of an edited file, ACP-38) and `timer`;
//! `conformance/transcripts/README.md` has the table).
//!
//! A step has an optional time `at` (milliseconds from the start; default: the previous
//! step's time; never decreasing), exactly one input, and `expect`, the actions drained from
//! the core after the input, each as its `serde_json` serialisation. A call that returns a
//! value also has `returns`. The inputs of a client transcript:
//!
//! | input | what the replayer hands to `Client::handle` ([`Input::to_client`]) |
//! |---|---|
//! | `"stdout": TEXT`, `"stdout_b64": B64`, `"stdout_file": PATH` | `Input::Stdout` with those bytes (`PATH` relative to the transcript's directory, raw bytes) |
//! | `"stderr": TEXT`, `"stderr_b64": B64` | `Input::Stderr` |
//! | `"eof": true` | `Input::StdoutEnd` |
//! | `"exit": {"code": N}` / `{"signal": N}` / `"unknown"`, optional `"stderr_tail": TEXT` | `Input::Exit` |
//! | `"timer": true` | `Input::Timeout` at `at` |
//! | `"call": NAME` with its arguments | `Input::Call`: the application's call, below |
//! | `"spill_done": "spill-N"` with `"saved": {spillRef, output}` or `"failure": {reason}` | `Input::SpillDone`: the driver's answer to a `spill_write` action (a host tool result over `max_inline_bytes`) |
//!
//! Calls: `send {command}`, `prompt {message, behavior?: "steer"|"followUp"}`, `read_history`,
//! `set_host_tools {tools}`, `set_host_uri_schemes {schemes}` return `{"ok": REQUEST_ID}` or
//! `{"err": MESSAGE}`; `host_tool_update {id, partial_result}`, `host_tool_result {id, result,
//! is_error?}`, `host_uri_result {id, fields}`, `ui_respond {id, answer}` return a boolean;
//! `stop` and `restart` return nothing.
//!
//! The inputs of an agent transcript:
//!
//! | input | what the replayer does |
//! |---|---|
//! | `"stdin": TEXT`, `"stdin_b64": B64`, `"stdin_file": PATH` | `handle_stdin` with the bytes the host wrote |
//! | `"eof": true` | `handle_stdin_eof` |
//! | `"timer": true` | `handle_timeout` at `at` |
//! | `"call": NAME` with its arguments | the application's call: an [`AgentCall`] (`respond`, `respond_messages_page`, `reject_unknown`, `emit`, `call_host_tool`, `cancel_host_tool`, `request_host_uri`, `cancel_host_uri`, `ui_dialog`, `ui_notice`, `ui_cancel`, `settle_tool_result`, `register_outputs`; its docs list the arguments and return values) |
//! | `"spill_done": "spill-N"` with `"saved": {spillRef, output}` or `"failure": {reason}` | the driver's answer to a `spill_write` action ([`agent::Input::SpillDone`]) |
//! | `"read_done": "read-N"` with `"text": TEXT` or `"b64": B64` and `"total_len": N`, or `"error": {"code": …}` | the driver's answer to an `output_read` action ([`agent::Input::ReadDone`]) |
//!
//! In a call's arguments (both roles), an object `{"$repeat": TEXT, "times": N}` stands for
//! TEXT repeated N times (at most 64 MiB), so a step can build a megabyte of data in a line;
//! with a third member `"as_key_of": VALUE` it stands for an object with that string as its
//! one key and VALUE as its value.
//!
//! The header's `config` holds, for a client, [`ClientConfig`] fields, all optional:
//! `max_frame_bytes`, `max_reassembled_frame_bytes`, `negotiate_v2`, `ready_timeout_ms`,
//! `expect_ready`, `start_probe`, `stderr_tail_bytes`, `history_page_limit`, `observe`, `max_inline_bytes`
//! and `spill_store` (the spill policy of host tool results), `spill_owner` (its owner
//! session); for an agent, [`AgentConfig`] fields, all optional: `max_input_line_bytes`,
//! `unknown_commands` (`"reject"` or `"deliver"`), `max_inline_bytes` and `spill_store` (the
//! spill policy), `serve_outputs` (OUT-10).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use musewire_core::acp::{BridgeConfig, EditedFileFailure, ProcessKey, ReviewTicket};
use musewire_core::agent::{self, AgentCall, AgentConfig, ReadId, UnknownCommands};
use musewire_core::client::{self, AgentKind, Call, ClientConfig, ExitStatus};
use musewire_core::output::ReadBytes;
use musewire_core::spill::SpillId;
use musewire_core::spill::{SaveFailure, Saved, SpillOwner};
use musewire_wire::output::OutputError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The first line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// Which core the transcript drives.
    pub role: Role,
    /// The core's configuration.
    #[serde(default)]
    pub config: ConfigSpec,
    /// The rule IDs of `conformance/RULES.md` this transcript covers.
    #[serde(default)]
    pub rules: Vec<String>,
    /// What the transcript shows.
    #[serde(default)]
    pub description: String,
}

/// Which core a transcript drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The host side: a [`Client`](musewire_core::client::Client) fed the agent's output.
    Client,
    /// The agent side: an [`Agent`](musewire_core::agent::Agent) fed the host's input.
    Agent,
    /// The ACP bridge: a [`Bridge`](musewire_core::acp::Bridge) fed the editor's bytes and
    /// each session's agent output.
    Bridge,
}

/// [`ClientConfig`] or [`AgentConfig`] as a transcript writes it: every field optional,
/// durations in ms; a field of the other role's configuration is refused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigSpec {
    /// [`ClientConfig::max_frame_bytes`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_frame_bytes: Option<usize>,
    /// [`ClientConfig::max_reassembled_frame_bytes`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_reassembled_frame_bytes: Option<usize>,
    /// [`ClientConfig::negotiate_v2`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negotiate_v2: Option<bool>,
    /// [`ClientConfig::ready_timeout`], in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_timeout_ms: Option<u64>,
    /// [`ClientConfig::expect_ready`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_ready: Option<bool>,
    /// [`ClientConfig::start_probe`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_probe: Option<bool>,
    /// [`ClientConfig::stderr_tail_bytes`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_tail_bytes: Option<usize>,
    /// [`ClientConfig::history_page_limit`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_page_limit: Option<u64>,
    /// [`ClientConfig::observe`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observe: Option<bool>,
    /// [`AgentConfig::max_input_line_bytes`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input_line_bytes: Option<usize>,
    /// [`AgentConfig::unknown_commands`]: `"reject"` or `"deliver"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_commands: Option<String>,
    /// [`ClientConfig::spill_owner`]'s session id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill_owner: Option<String>,
    /// [`AgentConfig::spill`]'s or [`ClientConfig::spill`]'s `max_inline_bytes` (SPILL-01:
    /// absent, no spill).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_inline_bytes: Option<usize>,
    /// The spill policy's `has_store`: whether the driver performs spill writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill_store: Option<bool>,
    /// [`AgentConfig::serve_outputs`] (OUT-10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serve_outputs: Option<bool>,
    /// [`BridgeConfig::session_dir`] (bridge role).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_dir: Option<PathBuf>,
    /// [`BridgeConfig::agent_serves_output`] (bridge role).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_serves_output: Option<bool>,
    /// [`BridgeConfig::approval_policy`] (bridge role).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_policy: Option<String>,
    /// [`BridgeConfig::agent`] (bridge role): `omp`, `pi`, `bundled` or `other`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentKind>,
}

impl ConfigSpec {
    /// Refuses the fields that do not belong to `role`'s configuration.
    pub fn check(&self, role: Role) -> Result<(), String> {
        let client_fields = [
            ("max_frame_bytes", self.max_frame_bytes.is_some()),
            (
                "max_reassembled_frame_bytes",
                self.max_reassembled_frame_bytes.is_some(),
            ),
            ("negotiate_v2", self.negotiate_v2.is_some()),
            ("ready_timeout_ms", self.ready_timeout_ms.is_some()),
            ("expect_ready", self.expect_ready.is_some()),
            ("start_probe", self.start_probe.is_some()),
            ("stderr_tail_bytes", self.stderr_tail_bytes.is_some()),
            ("history_page_limit", self.history_page_limit.is_some()),
            ("observe", self.observe.is_some()),
            ("spill_owner", self.spill_owner.is_some()),
        ];
        let agent_fields = [
            ("max_input_line_bytes", self.max_input_line_bytes.is_some()),
            ("unknown_commands", self.unknown_commands.is_some()),
            ("serve_outputs", self.serve_outputs.is_some()),
        ];
        // The spill policy is either side's (a client's spills host tool results).
        let spill_fields = [
            ("max_inline_bytes", self.max_inline_bytes.is_some()),
            ("spill_store", self.spill_store.is_some()),
        ];
        let bridge_fields = [
            ("session_dir", self.session_dir.is_some()),
            ("agent_serves_output", self.agent_serves_output.is_some()),
            ("approval_policy", self.approval_policy.is_some()),
            ("agent", self.agent.is_some()),
        ];
        // A bridge takes the client fields for each session's client.
        let foreign: Vec<_> = match role {
            Role::Client => [&agent_fields[..], &bridge_fields[..]].concat(),
            Role::Agent => [&client_fields[..], &bridge_fields[..]].concat(),
            Role::Bridge => [&agent_fields[..], &spill_fields[..]].concat(),
        };
        match foreign.iter().find(|(_, set)| *set) {
            Some((name, _)) => Err(format!("config field {name:?} is not for role {role:?}")),
            None => Ok(()),
        }
    }

    /// The agent's configuration: the defaults with the fields given.
    pub fn to_agent_config(&self) -> Result<AgentConfig, String> {
        let mut config = AgentConfig::default();
        if let Some(v) = self.max_input_line_bytes {
            config.max_input_line_bytes = v;
        }
        config.spill.max_inline_bytes = self.max_inline_bytes;
        config.spill.has_store = self.spill_store.unwrap_or(false);
        config.serve_outputs = self.serve_outputs.unwrap_or(false);
        match self.unknown_commands.as_deref() {
            None => {}
            Some("reject") => config.unknown_commands = UnknownCommands::Reject,
            Some("deliver") => config.unknown_commands = UnknownCommands::Deliver,
            Some(other) => {
                return Err(format!(
                    "unknown_commands is \"reject\" or \"deliver\", not {other:?}"
                ))
            }
        }
        Ok(config)
    }

    /// The bridge's configuration: the defaults with the fields given (the client fields
    /// for each session's client).
    pub fn to_bridge_config(&self) -> BridgeConfig {
        BridgeConfig {
            client: self.to_config(),
            session_dir: self.session_dir.clone(),
            agent_serves_output: self.agent_serves_output.unwrap_or(false),
            approval_policy: self.approval_policy.clone(),
            agent: self.agent.unwrap_or_default(),
            ..BridgeConfig::default()
        }
    }

    /// The client's configuration: the defaults with the fields given.
    pub fn to_config(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        if let Some(v) = self.max_frame_bytes {
            config.max_frame_bytes = v;
        }
        if let Some(v) = self.max_reassembled_frame_bytes {
            config.max_reassembled_frame_bytes = v;
        }
        if let Some(v) = self.negotiate_v2 {
            config.negotiate_v2 = v;
        }
        if let Some(v) = self.ready_timeout_ms {
            config.ready_timeout = Duration::from_millis(v);
        }
        if let Some(v) = self.expect_ready {
            config.expect_ready = v;
        }
        if let Some(v) = self.start_probe {
            config.start_probe = v;
        }
        if let Some(v) = self.stderr_tail_bytes {
            config.stderr_tail_bytes = v;
        }
        if let Some(v) = self.history_page_limit {
            config.history_page_limit = v;
        }
        if let Some(v) = self.observe {
            config.observe = v;
        }
        config.spill.max_inline_bytes = self.max_inline_bytes;
        config.spill.has_store = self.spill_store.unwrap_or(false);
        config.spill_owner = self.spill_owner.clone().map(SpillOwner::new);
        config
    }
}

/// One input of a step, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// Bytes on the agent's stdout (client role).
    Stdout(Vec<u8>),
    /// Bytes the host wrote to the agent's stdin (agent role).
    Stdin(Vec<u8>),
    /// Bytes on the agent's stderr.
    Stderr(Vec<u8>),
    /// The end of the agent's stdout (client role) or of its stdin (agent role).
    Eof,
    /// The agent's exit.
    Exit {
        /// How it ended: its exit code, the signal that killed it, or unknown.
        status: ExitStatus,
        /// The stderr tail the driver hands in with it.
        stderr_tail: Vec<u8>,
    },
    /// `handle_timeout` at the step's time.
    Timer,
    /// A call of the client's application.
    Call(Call),
    /// A call of the agent's application.
    AgentCall(AgentCall),
    /// The driver's answer to a spill write, of either role ([`client::Input::SpillDone`],
    /// [`agent::Input::SpillDone`]).
    SpillDone(SpillId, Result<Saved, SaveFailure>),
    /// The driver's answer to an agent's output read ([`agent::Input::ReadDone`]).
    AgentIo(agent::Input<'static>),
    /// Bytes from the editor (bridge role).
    Editor(Vec<u8>),
    /// The editor's input ended (bridge role).
    EditorEnd,
    /// The driver's read of an edited file (bridge role, ACP-38): `"edited_file": TICKET`
    /// with `"text"` or `"b64"` (its bytes) or `"failure"`: `"not_found"`, `"symlink"`,
    /// `"not_a_file"`, `"outside"`, `{"too_large": SIZE}` or `{"other": MESSAGE}`.
    EditedFile(ReviewTicket, Result<Vec<u8>, EditedFileFailure>),
    /// One input of a session's agent (bridge role).
    Session {
        /// The process: a session's agent (`musewire-N`) or one of its MCP servers
        /// (`musewire-N/mcp-M`).
        session: ProcessKey,
        /// What the agent did.
        input: SessionInput,
    },
}

/// What a session's agent did, in a bridge transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionInput {
    /// Bytes on its stdout.
    Stdout(Vec<u8>),
    /// Bytes on its stderr.
    Stderr(Vec<u8>),
    /// Its stdout ended.
    Eof,
    /// It exited (or could not be spawned: `"unknown"`).
    Exit(ExitStatus),
}

impl Input {
    /// The bytes of a stdout or stdin step, which a replay may hand in cut into reads.
    pub fn stream_bytes(&self) -> Option<&[u8]> {
        match self {
            Input::Stdout(bytes) | Input::Stdin(bytes) | Input::Editor(bytes) => Some(bytes),
            Input::Session {
                input: SessionInput::Stdout(bytes),
                ..
            } => Some(bytes),
            _ => None,
        }
    }

    /// The input as a [`Client`](musewire_core::client::Client) takes it, for
    /// [`Client::handle`](musewire_core::client::Client::handle) (stdout in one read, bytes
    /// borrowed); `None` for an input of the agent role.
    pub fn to_client(&self) -> Option<client::Input<'_>> {
        Some(match self {
            Input::Stdout(bytes) => client::Input::stdout(bytes),
            Input::Stderr(bytes) => client::Input::stderr(bytes),
            Input::Eof => client::Input::StdoutEnd,
            Input::Exit {
                status,
                stderr_tail,
            } => client::Input::Exit(*status, Cow::Borrowed(stderr_tail)),
            Input::Timer => client::Input::Timeout,
            Input::Call(call) => client::Input::Call(call.clone()),
            Input::SpillDone(id, saved) => client::Input::SpillDone(*id, saved.clone()),
            Input::Stdin(_)
            | Input::AgentCall(_)
            | Input::AgentIo(_)
            | Input::Editor(_)
            | Input::EditorEnd
            | Input::EditedFile(..)
            | Input::Session { .. } => return None,
        })
    }
}

/// A step: its line as written (kept for `bless`), its time and input.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The line's JSON object, as read.
    pub raw: Map<String, Value>,
    /// 1-based line number in the file.
    pub line: usize,
    /// Milliseconds from the start.
    pub at: u64,
    /// What the step hands the core at `at`, parsed from the line's members.
    pub input: Input,
}

impl Step {
    /// The expected actions, if the step has them.
    pub fn expect(&self) -> Option<&Vec<Value>> {
        self.raw.get("expect").and_then(Value::as_array)
    }

    /// The expected return value, if the step has one.
    pub fn returns(&self) -> Option<&Value> {
        self.raw.get("returns")
    }

    /// A one-line summary of the input, for messages.
    pub fn summary(&self) -> String {
        let mut fields = self.raw.clone();
        fields.remove("expect");
        fields.remove("returns");
        crate::diff::truncated(&Value::Object(fields), 160)
    }
}

/// A parsed transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its first line: the role, the config and the rule IDs it covers.
    pub header: Header,
    /// The lines after the header, one step each, in file order.
    pub steps: Vec<Step>,
}

/// Reads and parses a transcript file (sidecar files are read too).
pub fn load(path: &Path) -> Result<Transcript, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    parse(&text, dir)
        .map(|(header, steps)| Transcript {
            path: path.to_owned(),
            header,
            steps,
        })
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses a transcript's text; `dir` is where sidecar files are looked up.
pub fn parse(text: &str, dir: &Path) -> Result<(Header, Vec<Step>), String> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines.next().ok_or("empty transcript")?;
    let header: Header =
        serde_json::from_str(first).map_err(|e| format!("line 1: bad header: {e}"))?;
    header
        .config
        .check(header.role)
        .map_err(|e| format!("line 1: bad header: {e}"))?;
    let mut steps = Vec::new();
    let mut last_at = 0;
    for (index, line) in lines {
        let line_no = index + 1;
        let raw: Map<String, Value> = serde_json::from_str(line)
            .map_err(|e| format!("line {line_no}: not a JSON object: {e}"))?;
        let at = match raw.get("at") {
            None => last_at,
            Some(v) => v
                .as_u64()
                .ok_or_else(|| format!("line {line_no}: \"at\" must be a whole number of ms"))?,
        };
        if at < last_at {
            return Err(format!(
                "line {line_no}: \"at\" goes back in time ({at} < {last_at})"
            ));
        }
        last_at = at;
        let input =
            parse_input(header.role, &raw, dir).map_err(|e| format!("line {line_no}: {e}"))?;
        steps.push(Step {
            raw,
            line: line_no,
            at,
            input,
        });
    }
    Ok((header, steps))
}

const CLIENT_INPUTS: [&str; 10] = [
    "stdout",
    "stdout_b64",
    "stdout_file",
    "stderr",
    "stderr_b64",
    "eof",
    "exit",
    "timer",
    "call",
    "spill_done",
];

const AGENT_INPUTS: [&str; 8] = [
    "stdin",
    "stdin_b64",
    "stdin_file",
    "eof",
    "timer",
    "call",
    "spill_done",
    "read_done",
];

const BRIDGE_INPUTS: [&str; 8] = [
    "editor",
    "editor_end",
    "edited_file",
    "agent_stdout",
    "agent_stderr",
    "agent_eof",
    "agent_exit",
    "timer",
];

/// The most bytes one `$repeat` may build.
const MAX_REPEAT_BYTES: usize = 64 * 1024 * 1024;

/// `value` with every `{"$repeat": TEXT, "times": N}` replaced by TEXT repeated N times, and
/// every `{"$repeat": TEXT, "times": N, "as_key_of": VALUE}` by an object with that string as
/// its one key (frames whose keys alone are over the limit, FRAME-12).
pub fn expand_repeats(value: &Value) -> Result<Value, String> {
    Ok(match value {
        Value::Object(fields) => match (fields.get("$repeat"), fields.get("times")) {
            (Some(text), Some(times)) if fields.len() == 2 || fields.len() == 3 => {
                let text = text.as_str().ok_or("\"$repeat\" must be a string")?;
                let times = times
                    .as_u64()
                    .and_then(|t| usize::try_from(t).ok())
                    .ok_or("\"times\" must be a whole number")?;
                if text.len().saturating_mul(times) > MAX_REPEAT_BYTES {
                    return Err("a \"$repeat\" builds at most 64 MiB".into());
                }
                let built = text.repeat(times);
                match fields.get("as_key_of") {
                    None if fields.len() == 2 => Value::String(built),
                    Some(value) => {
                        let mut object = Map::new();
                        object.insert(built, expand_repeats(value)?);
                        Value::Object(object)
                    }
                    None => {
                        return Err("a \"$repeat\" has \"times\" and maybe \"as_key_of\"".into())
                    }
                }
            }
            _ => Value::Object(
                fields
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), expand_repeats(v)?)))
                    .collect::<Result<_, String>>()?,
            ),
        },
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(expand_repeats)
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

/// An `edited_file` step's `"failure"` ([`Input::EditedFile`]).
fn edited_file_failure(value: &Value) -> Result<EditedFileFailure, String> {
    let bad = || format!("not an edited file's failure: {value}");
    Ok(match value {
        Value::String(kind) => match kind.as_str() {
            "not_found" => EditedFileFailure::NotFound,
            "symlink" => EditedFileFailure::Symlink,
            "not_a_file" => EditedFileFailure::NotAFile,
            "outside" => EditedFileFailure::Outside,
            _ => return Err(bad()),
        },
        Value::Object(fields) => match (fields.get("too_large"), fields.get("other")) {
            (Some(size), None) => EditedFileFailure::TooLarge {
                size: size.as_u64().ok_or_else(bad)?,
            },
            (None, Some(Value::String(other))) => EditedFileFailure::Other(other.clone()),
            _ => return Err(bad()),
        },
        _ => return Err(bad()),
    })
}

fn parse_input(role: Role, raw: &Map<String, Value>, dir: &Path) -> Result<Input, String> {
    let keys: &[&str] = match role {
        Role::Client => &CLIENT_INPUTS,
        Role::Agent => &AGENT_INPUTS,
        Role::Bridge => &BRIDGE_INPUTS,
    };
    let present: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| raw.contains_key(*k))
        .collect();
    let [key] = present[..] else {
        return Err(format!(
            "a {role:?} step needs exactly one input of {keys:?}, found {present:?}"
        ));
    };
    let value = &raw[key];
    let text = |v: &Value| {
        v.as_str()
            .map(|s| s.as_bytes().to_vec())
            .ok_or_else(|| format!("\"{key}\" must be a string"))
    };
    let b64 = |v: &Value| {
        let s = v
            .as_str()
            .ok_or_else(|| format!("\"{key}\" must be a string"))?;
        STANDARD
            .decode(s)
            .map_err(|e| format!("\"{key}\" is not base64: {e}"))
    };
    let file = |v: &Value| {
        let name = v
            .as_str()
            .ok_or_else(|| format!("\"{key}\" must be a string"))?;
        let path = dir.join(name);
        std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    let call_step = || {
        let args: Map<String, Value> = raw
            .iter()
            .filter(|(k, _)| *k != "expect" && *k != "returns")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        expand_repeats(&Value::Object(args))
    };
    let call_step = || match call_step()? {
        Value::Object(fields) => Ok::<_, String>(fields),
        _ => unreachable!("an object expands to an object"),
    };
    let session = || {
        raw.get("session")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("\"{key}\" needs \"session\": the process key"))?
            .parse::<ProcessKey>()
            .map_err(|e| e.to_string())
    };
    let in_session = |input: SessionInput| -> Result<Input, String> {
        Ok(Input::Session {
            session: session()?,
            input,
        })
    };
    Ok(match key {
        "editor" => Input::Editor(text(value)?),
        "editor_end" => Input::EditorEnd,
        "edited_file" => {
            let ticket = value
                .as_u64()
                .map(ReviewTicket)
                .ok_or("\"edited_file\" must be the read's ticket, a number")?;
            let read = match (raw.get("text"), raw.get("b64"), raw.get("failure")) {
                (Some(t), None, None) => Ok(text(t)?),
                (None, Some(b), None) => Ok(b64(b)?),
                (None, None, Some(failure)) => Err(edited_file_failure(failure)?),
                _ => return Err("edited_file takes \"text\", \"b64\" or \"failure\"".into()),
            };
            Input::EditedFile(ticket, read)
        }
        "agent_stdout" => in_session(SessionInput::Stdout(text(value)?))?,
        "agent_stderr" => in_session(SessionInput::Stderr(text(value)?))?,
        "agent_eof" => in_session(SessionInput::Eof)?,
        "agent_exit" => in_session(SessionInput::Exit(exit_status(value)?))?,
        "stdout" => Input::Stdout(text(value)?),
        "stdout_b64" => Input::Stdout(b64(value)?),
        "stdout_file" => Input::Stdout(file(value)?),
        "stdin" => Input::Stdin(text(value)?),
        "stdin_b64" => Input::Stdin(b64(value)?),
        "stdin_file" => Input::Stdin(file(value)?),
        "stderr" => Input::Stderr(text(value)?),
        "stderr_b64" => Input::Stderr(b64(value)?),
        "eof" => Input::Eof,
        "timer" => Input::Timer,
        "exit" => Input::Exit {
            status: exit_status(value)?,
            stderr_tail: match raw.get("stderr_tail") {
                None => Vec::new(),
                Some(v) => v
                    .as_str()
                    .ok_or("\"stderr_tail\" must be a string")?
                    .as_bytes()
                    .to_vec(),
            },
        },
        "call" => match role {
            Role::Client => Input::Call(Call::read(&call_step()?).map_err(|e| e.to_string())?),
            Role::Agent => {
                Input::AgentCall(AgentCall::read(&call_step()?).map_err(|e| e.to_string())?)
            }
            Role::Bridge => unreachable!("a bridge step has no call"),
        },
        "spill_done" => {
            let id = value
                .as_str()
                .and_then(SpillId::from_wire)
                .ok_or("\"spill_done\" must be a spill-N id")?;
            let saved = match (raw.get("saved"), raw.get("failure")) {
                (Some(saved), None) => Ok(serde_json::from_value::<Saved>(saved.clone())
                    .map_err(|e| format!("\"saved\" is not {{spillRef, output}}: {e}"))?),
                (None, Some(failure)) => {
                    Err(serde_json::from_value::<SaveFailure>(failure.clone())
                        .map_err(|e| format!("\"failure\" is not {{reason}}: {e}"))?)
                }
                _ => return Err("spill_done takes \"saved\" or \"failure\"".into()),
            };
            Input::SpillDone(id, saved)
        }
        "read_done" => {
            let id = value
                .as_str()
                .and_then(ReadId::from_wire)
                .ok_or("\"read_done\" must be a read-N id")?;
            let read = match raw.get("error") {
                Some(error) => Err(serde_json::from_value::<OutputError>(error.clone())
                    .map_err(|e| format!("\"error\" is not an output error: {e}"))?),
                None => {
                    let bytes = match (raw.get("text"), raw.get("b64")) {
                        (Some(t), None) => text(t)?,
                        (None, Some(b)) => b64(b)?,
                        _ => return Err("read_done takes \"text\", \"b64\" or \"error\"".into()),
                    };
                    let total_len = raw
                        .get("total_len")
                        .and_then(Value::as_u64)
                        .ok_or("read_done needs \"total_len\"")?;
                    Ok(ReadBytes { bytes, total_len })
                }
            };
            Input::AgentIo(agent::Input::ReadDone(id, read))
        }
        _ => unreachable!("the keys are the role's inputs"),
    })
}

fn exit_status(value: &Value) -> Result<ExitStatus, String> {
    let number = |v: &Value| {
        v.as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| "an exit code or signal is a 32-bit integer".to_owned())
    };
    if value == "unknown" {
        return Ok(ExitStatus::Unknown);
    }
    if let Some(code) = value.get("code") {
        return Ok(ExitStatus::Code(number(code)?));
    }
    if let Some(signal) = value.get("signal") {
        return Ok(ExitStatus::Signal(number(signal)?));
    }
    Err("\"exit\" is {\"code\": N}, {\"signal\": N} or \"unknown\"".into())
}

/// A step as `bless` writes it: the line as read, the actions, the return value.
pub type BlessedStep = (Map<String, Value>, Vec<Value>, Option<Value>);

/// Writes a transcript back: the header, then each step's line as read with `expect` (and
/// `returns`) replaced by the given values.
pub fn render(header: &Header, steps: &[BlessedStep]) -> String {
    let mut out = serde_json::to_string(header).expect("a header serialises");
    out.push('\n');
    for (raw, expect, returns) in steps {
        let mut fields = raw.clone();
        fields.remove("expect");
        fields.remove("returns");
        if let Some(r) = returns {
            fields.insert("returns".into(), r.clone());
        }
        fields.insert("expect".into(), Value::Array(expect.clone()));
        out.push_str(&serde_json::to_string(&fields).expect("a step serialises"));
        out.push('\n');
    }
    out
}
