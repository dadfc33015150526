//! The response envelope `{id?, type:"response", command, success, data?, error?, code?}`:
//! typed success payloads per command, and failures with a typed `code` (CALL-08).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Number, Value};

use super::codec::{self, wire_struct, KeySeed, Prefix};
use super::event::CompactionResult;
use super::frame::SubagentProgress;
use super::lazy::{Lazy, MessageList};
use super::message::AgentMessage;
use super::session::SessionEntry;
use crate::output::ReadResult;

/// The machine-readable reason of a failure (`code`, CALL-08): match on this, never on the
/// message text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// `session_busy`: the session is streaming or compacting (PAGE-05).
    SessionBusy,
    /// `stale_cursor`: the history changed since the cursor was issued (PAGE-04).
    StaleCursor,
    /// A code this version does not know, as sent.
    Other(String),
}

impl ErrorCode {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::SessionBusy => "session_busy",
            ErrorCode::StaleCursor => "stale_cursor",
            ErrorCode::Other(code) => code,
        }
    }

    /// From the wire string.
    pub fn from_wire(code: &str) -> Self {
        match code {
            "session_busy" => ErrorCode::SessionBusy,
            "stale_cursor" => ErrorCode::StaleCursor,
            other => ErrorCode::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = KeySeed.deserialize(deserializer)?;
        Ok(ErrorCode::from_wire(&code))
    }
}

wire_struct! {
    /// `negotiate_protocol`: `{protocolVersion:2}` (FRAME-05).
    pub struct ProtocolVersionData {
        /// The version now in use.
        req protocol_version: u64 = "protocolVersion",
    }
}

wire_struct! {
    /// `prompt`: `{agentInvoked}` (CALL-03; absent data means agent events follow), or pi
    /// 1.6's `{disposition}`.
    pub struct PromptData {
        /// `false`: handled locally, no agent events follow.
        opt agent_invoked: bool = "agentInvoked",
        /// pi 1.6: `started` (a run starts), `queued` (behind the run in progress) or
        /// `handled` (an extension took it: no run starts).
        opt disposition: String = "disposition",
    }
}

impl PromptData {
    /// Whether no agent events follow this prompt: `agentInvoked: false` (oh-my-pi) or
    /// `disposition: "handled"` (pi 1.6).
    pub fn is_local(&self) -> bool {
        self.agent_invoked == Some(false) || self.disposition.as_deref() == Some("handled")
    }
}

wire_struct! {
    /// `new_session`, `switch_session`, `clone`: `{cancelled}`.
    pub struct CancelledData {
        /// An extension cancelled the switch.
        req cancelled: bool = "cancelled",
    }
}

wire_struct! {
    /// A model (`Model`), the members a host reads typed; the rest in `extra`.
    pub struct ModelInfo {
        /// The model's id within its provider (`set_model`'s `modelId`).
        req id: String = "id",
        /// Display name.
        opt name: String = "name",
        /// The API the provider is spoken to with (`anthropic-messages`, `openai-responses`, …).
        opt api: String = "api",
        /// The provider's id (`set_model`'s `provider`).
        opt provider: String = "provider",
        /// Whether it reasons.
        opt reasoning: bool = "reasoning",
        /// Context window in tokens.
        opt context_window: u64 = "contextWindow",
        /// Output limit in tokens.
        opt max_tokens: u64 = "maxTokens",
    }
}

wire_struct! {
    /// `get_state`: the session state (`RpcSessionState`).
    pub struct SessionState {
        /// The model in force.
        opt model: ModelInfo = "model",
        /// The thinking level in force, as the agent names it (`off`, `low`, `high`, …).
        opt thinking_level: String = "thinkingLevel",
        /// Whether a run is streaming.
        opt is_streaming: bool = "isStreaming",
        /// Whether compaction runs.
        opt is_compacting: bool = "isCompacting",
        /// `all` or `one-at-a-time`.
        opt steering_mode: String = "steeringMode",
        /// `all` or `one-at-a-time`.
        opt follow_up_mode: String = "followUpMode",
        /// `immediate` or `wait`.
        opt interrupt_mode: String = "interruptMode",
        /// The session's file on the agent's disk (absent for an in-memory session).
        opt session_file: String = "sessionFile",
        /// The folder session files are kept in (the bundled agent's `--session-dir`).
        opt session_dir: String = "sessionDir",
        /// The agent's id for the session.
        opt session_id: String = "sessionId",
        /// The session's display name (`set_session_name`).
        opt session_name: String = "sessionName",
        /// Automatic compaction on.
        opt auto_compaction_enabled: bool = "autoCompactionEnabled",
        /// Messages in the session.
        opt message_count: u64 = "messageCount",
        /// Messages queued.
        opt pending_message_count: u64 = "pendingMessageCount",
        /// Messages queued (oh-my-pi).
        opt queued_message_count: u64 = "queuedMessageCount",
        /// The todo phases (oh-my-pi and the bundled agent), as sent.
        opt todo_phases: Value = "todoPhases",
        /// Fast mode asked for (oh-my-pi).
        opt fast_mode_enabled: bool = "fastModeEnabled",
        /// Fast mode in effect (oh-my-pi).
        opt fast_mode_active: bool = "fastModeActive",
        /// Output tokens per second of the latest assistant message (oh-my-pi; `null`,
        /// kept in `extra`, when there is none).
        opt tokens_per_second: Number = "tokensPerSecond",
        /// The system prompt, for a session dump (oh-my-pi), typed when asked
        /// ([`Lazy::get`]): long, and read by no one on the host path.
        opt system_prompt: Lazy<Vec<String>> = "systemPrompt",
        /// The agent's tools, for a session dump (oh-my-pi and the bundled agent), typed when
        /// asked ([`Lazy::get`]): most of the answer, and read by no one on the host path.
        opt dump_tools: Lazy<Vec<DumpTool>> = "dumpTools",
        /// The context's occupancy (oh-my-pi).
        opt context_usage: ContextUsage = "contextUsage",
    }
}

wire_struct! {
    /// One of `get_state`'s `dumpTools`: a tool as the agent offers it to its model. Every
    /// member is optional: omp passes each tool's through as the tool has it.
    pub struct DumpTool {
        /// Tool name.
        opt name: String = "name",
        /// What the tool does, for the model.
        opt description: String = "description",
        /// JSON Schema of its arguments, as sent, read when asked ([`Lazy::get`]).
        opt parameters: Lazy<Value> = "parameters",
        /// Example calls, as sent, read when asked.
        opt examples: Lazy<Vec<Value>> = "examples",
    }
}

wire_struct! {
    /// `set_fast_mode`: `{enabled, active}`.
    pub struct FastModeData {
        /// Requested.
        req enabled: bool = "enabled",
        /// In effect.
        opt active: bool = "active",
    }
}

wire_struct! {
    /// A slash command (`get_available_commands`, `available_commands_update`, and pi's
    /// `get_commands`).
    pub struct SlashCommand {
        /// Name without the slash.
        req name: String = "name",
        /// Other names the command answers to, without the slash.
        opt aliases: Vec<String> = "aliases",
        /// One line on what the command does, for a picker.
        opt description: String = "description",
        /// Input hint, as sent.
        opt input: Value = "input",
        /// Subcommands, as sent.
        opt subcommands: Vec<Value> = "subcommands",
        /// Where it comes from.
        opt source: String = "source",
    }
}

wire_struct! {
    /// `{commands}` (`get_available_commands`, `get_commands`).
    pub struct CommandsData {
        /// Every slash command available now.
        req commands: Vec<SlashCommand> = "commands",
    }
}

wire_struct! {
    /// `set_todos`: `{todoPhases}`.
    pub struct TodosData {
        /// Phases, as sent.
        req todo_phases: Vec<Value> = "todoPhases",
    }
}

wire_struct! {
    /// `set_host_tools`: `{toolNames}` (HOST-01).
    pub struct HostToolsData {
        /// The registered names.
        req tool_names: Vec<String> = "toolNames",
    }
}

wire_struct! {
    /// `set_host_uri_schemes`: `{schemes}`, normalised (HOST-04).
    pub struct HostUriSchemesData {
        /// The normalised schemes.
        req schemes: Vec<String> = "schemes",
    }
}

wire_struct! {
    /// `set_subagent_subscription`, `cycle_thinking_level`: `{level}`.
    pub struct LevelData {
        /// The level now in force, as the agent names it.
        req level: String = "level",
    }
}

wire_struct! {
    /// A subagent (`RpcSubagentSnapshot`).
    pub struct SubagentSnapshot {
        /// The subagent's id (`get_subagent_messages`'s `subagentId`).
        req id: String = "id",
        /// Spawn index.
        opt index: u64 = "index",
        /// Agent name.
        opt agent: String = "agent",
        /// Where the agent is defined.
        opt agent_source: String = "agentSource",
        /// One line on what the subagent was asked.
        opt description: String = "description",
        /// Where it stands, as the agent names it (`running`, `completed`, …).
        opt status: String = "status",
        /// The task given to it, as sent.
        opt task: String = "task",
        /// The subagent's session file (`get_subagent_messages`'s `sessionFile`).
        opt session_file: String = "sessionFile",
        /// Last update, ms since epoch.
        opt last_update: u64 = "lastUpdate",
        /// Its latest progress report.
        opt progress: SubagentProgress = "progress",
        /// The tool call that started it in the parent session.
        opt parent_tool_call_id: String = "parentToolCallId",
        /// The assignment given with the task.
        opt assignment: String = "assignment",
    }
}

wire_struct! {
    /// `get_subagents`: `{subagents}`.
    pub struct SubagentsData {
        /// Every subagent the session has started, running or done.
        req subagents: Vec<SubagentSnapshot> = "subagents",
    }
}

wire_struct! {
    /// `get_subagent_messages`.
    pub struct SubagentMessagesData {
        /// Session file read.
        req session_file: String = "sessionFile",
        /// Offset read from.
        opt from_byte: u64 = "fromByte",
        /// Offset to read from next.
        opt next_byte: u64 = "nextByte",
        /// The file shrank; read from 0.
        opt reset: bool = "reset",
        /// The entries of the whole lines read.
        opt entries: Vec<SessionEntry> = "entries",
        /// The messages among them.
        opt messages: Vec<AgentMessage> = "messages",
    }
}

wire_struct! {
    /// `get_entries` (pi 1.6): the session's entries (after `since`, when given), in file
    /// order, and the current leaf. The tree is the host's to build from `parentId`
    /// (`get_tree` nests one level per entry, past what a JSON reader takes for a long
    /// session: musewire does not type it).
    pub struct EntriesData {
        /// The entries, in file order.
        req entries: Vec<SessionEntry> = "entries",
        /// The current leaf (`null` in an empty session).
        req leaf_id: Option<String> = "leafId",
    }
}

wire_struct! {
    /// `cycle_model`: `{model, thinkingLevel, isScoped}` (or null).
    pub struct CycleModelData {
        /// The model now in force.
        req model: ModelInfo = "model",
        /// The thinking level in force, as the agent names it (`off`, `low`, `high`, …).
        opt thinking_level: String = "thinkingLevel",
        /// Whether cycling is scoped.
        opt is_scoped: bool = "isScoped",
    }
}

wire_struct! {
    /// `get_available_models`: `{models}`.
    pub struct ModelsData {
        /// Every model the agent can use with the credentials it has.
        req models: Vec<ModelInfo> = "models",
    }
}

wire_struct! {
    /// `bash`: the result (`BashResult`).
    pub struct BashData {
        /// What the command wrote, possibly cut (`truncated`).
        req output: String = "output",
        /// The exit code (absent when it did not exit).
        opt exit_code: i64 = "exitCode",
        /// Whether it was cancelled.
        opt cancelled: bool = "cancelled",
        /// Whether it timed out.
        opt timed_out: bool = "timedOut",
        /// Whether output was truncated.
        opt truncated: bool = "truncated",
        /// Full output file, if truncated.
        opt full_output_path: String = "fullOutputPath",
    }
}

wire_struct! {
    /// `get_session_stats`' `tokens`: totals over the session's assistant messages' usage.
    pub struct SessionTokens {
        /// Non-cached input tokens.
        opt input: u64 = "input",
        /// Output tokens.
        opt output: u64 = "output",
        /// Reasoning tokens (within output).
        opt reasoning: u64 = "reasoning",
        /// Tokens read from the prompt cache.
        opt cache_read: u64 = "cacheRead",
        /// Tokens written to the prompt cache.
        opt cache_write: u64 = "cacheWrite",
        /// The sum of the messages' `totalTokens`.
        opt total: u64 = "total",
    }
}

wire_struct! {
    /// `get_session_stats` (`SessionStats`).
    pub struct SessionStatsData {
        /// The session's file on the agent's disk (absent for an in-memory session).
        opt session_file: String = "sessionFile",
        /// The agent's id for the session.
        opt session_id: String = "sessionId",
        /// How many messages the user sent.
        opt user_messages: u64 = "userMessages",
        /// How many messages the model sent.
        opt assistant_messages: u64 = "assistantMessages",
        /// How many tool calls the model made.
        opt tool_calls: u64 = "toolCalls",
        /// How many tool results the session holds.
        opt tool_results: u64 = "toolResults",
        /// All messages.
        opt total_messages: u64 = "totalMessages",
        /// Token totals over the session's assistant messages.
        opt tokens: SessionTokens = "tokens",
        /// Premium requests made (oh-my-pi).
        opt premium_requests: u64 = "premiumRequests",
        /// What the session's model calls cost, in US dollars as the agent prices them.
        opt cost: Number = "cost",
        /// The context's occupancy (oh-my-pi).
        opt context_usage: ContextUsage = "contextUsage",
    }
}

wire_struct! {
    /// `get_session_stats`' `contextUsage` (oh-my-pi's `ContextUsage`).
    pub struct ContextUsage {
        /// Tokens in the context, by the agent's own count.
        opt tokens: u64 = "tokens",
        /// The model's context window (0 when unknown).
        opt context_window: u64 = "contextWindow",
        /// `tokens` as a percentage of the window.
        opt percent: Number = "percent",
    }
}

wire_struct! {
    /// `export_html`: `{path}`.
    pub struct PathData {
        /// Where it was written.
        req path: String = "path",
    }
}

wire_struct! {
    /// `branch`, `fork`: `{text, cancelled}`.
    pub struct BranchData {
        /// The branched entry's text.
        opt text: String = "text",
        /// Whether it was cancelled.
        req cancelled: bool = "cancelled",
    }
}

wire_struct! {
    /// One entry one can branch or fork from.
    pub struct BranchEntry {
        /// The entry's id, to give `branch` or `fork`.
        req entry_id: String = "entryId",
        /// The user message's text, for a picker.
        req text: String = "text",
    }
}

wire_struct! {
    /// `get_branch_messages`, `get_fork_messages`: `{messages}`.
    pub struct BranchMessagesData {
        /// The user messages one can branch or fork from, oldest first.
        req messages: Vec<BranchEntry> = "messages",
    }
}

wire_struct! {
    /// `get_last_assistant_text`: `{text}` (null when there is none).
    pub struct LastAssistantTextData {
        /// The model's last reply as text.
        req text: Option<String> = "text",
    }
}

wire_struct! {
    /// `handoff`: `{savedPath?}` (or null).
    pub struct HandoffData {
        /// Where the handoff was saved.
        opt saved_path: String = "savedPath",
    }
}

wire_struct! {
    /// `get_messages`: `{messages}`.
    pub struct MessagesData {
        /// The whole history, each message typed when read ([`MessageList`]).
        req messages: MessageList = "messages",
    }
}

wire_struct! {
    /// `get_messages_page`: `{messages, nextCursor?, totalMessages}` (PAGE-06).
    pub struct MessagesPageData {
        /// This page, each message typed when read ([`MessageList`]).
        req messages: MessageList = "messages",
        /// The next page's cursor; absent on the last page.
        opt next_cursor: String = "nextCursor",
        /// Messages in the snapshot.
        req total_messages: u64 = "totalMessages",
    }
}

wire_struct! {
    /// A provider one can log in to (`get_login_providers`).
    pub struct LoginProvider {
        /// The provider's id, to give `login`.
        req id: String = "id",
        /// Display name.
        opt name: String = "name",
        /// Whether it can be used.
        opt available: bool = "available",
        /// Whether credentials are stored.
        opt authenticated: bool = "authenticated",
    }
}

wire_struct! {
    /// `get_login_providers`: `{providers}`.
    pub struct LoginProvidersData {
        /// Every provider the agent can log in to.
        req providers: Vec<LoginProvider> = "providers",
    }
}

wire_struct! {
    /// `login`: `{providerId}`.
    pub struct LoginData {
        /// The provider logged in.
        req provider_id: String = "providerId",
    }
}

/// The `data` of a successful response, typed by the response's `command`: the command
/// table's rows say which command's data reads into which variant. Written as its payload.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum ResponseData {
    /// `negotiate_protocol`.
    NegotiateProtocol(ProtocolVersionData),
    /// `prompt`.
    Prompt(PromptData),
    /// `new_session`, `switch_session`, `clone`.
    Cancelled(CancelledData),
    /// `get_state`.
    State(Box<SessionState>),
    /// `set_fast_mode`.
    FastMode(FastModeData),
    /// `get_available_commands`, `get_commands`.
    Commands(CommandsData),
    /// `set_todos`.
    Todos(TodosData),
    /// `set_host_tools`.
    HostTools(HostToolsData),
    /// `set_host_uri_schemes`.
    HostUriSchemes(HostUriSchemesData),
    /// `set_subagent_subscription`.
    Level(LevelData),
    /// `get_subagents`.
    Subagents(SubagentsData),
    /// `get_subagent_messages`.
    SubagentMessages(SubagentMessagesData),
    /// `set_model`.
    Model(ModelInfo),
    /// `cycle_model` (null when there is only one model).
    CycleModel(Option<CycleModelData>),
    /// `get_available_models`.
    Models(ModelsData),
    /// `cycle_thinking_level` (null when the model does not reason).
    CycleThinkingLevel(Option<LevelData>),
    /// `compact`.
    Compaction(CompactionResult),
    /// `bash`.
    Bash(BashData),
    /// `get_session_stats`.
    SessionStats(Box<SessionStatsData>),
    /// `export_html`.
    Path(PathData),
    /// `branch`, `fork`.
    Branch(BranchData),
    /// `get_branch_messages`, `get_fork_messages`.
    BranchMessages(BranchMessagesData),
    /// `get_last_assistant_text`.
    LastAssistantText(LastAssistantTextData),
    /// `handoff` (null when nothing was saved).
    Handoff(Option<HandoffData>),
    /// `get_messages`.
    Messages(MessagesData),
    /// `get_messages_page`.
    MessagesPage(MessagesPageData),
    /// `get_login_providers`.
    LoginProviders(LoginProvidersData),
    /// `login`.
    Login(LoginData),
    /// `get_entries` (pi 1.6).
    Entries(EntriesData),
    /// `read_output`: one page of a stored output (OUT-04, OUT-10).
    ReadOutput(ReadResult),
    /// Data of a command without a typed payload (or of a failure), as sent.
    Other(Value),
}

/// Reads `data` as the payload of `command`: the command table's variant for it
/// (`command.rs`, `command_table!`).
struct DataSeed<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for DataSeed<'_> {
    type Value = ResponseData;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ResponseData, D::Error> {
        super::command::response_data(self.0, d)
    }
}

impl ResponseData {
    /// Reads `data` as the payload of `command` (an unknown command gives `Other`).
    pub fn from_value(command: &str, data: Value) -> serde_json::Result<Self> {
        DataSeed(command).deserialize(data)
    }
}

/// A `response` frame: `{id?, type:"response", command, success, data?, error?, code?}`.
///
/// `data` is typed by `command` when the command is known and the response a success
/// ([`ResponseData::Other`] otherwise); members this version does not know are in `extra`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Response {
    /// The request id (absent on some failures, e.g. `parse`, CALL-02).
    pub id: Option<String>,
    /// The command answered (`parse` for an unparsable line).
    pub command: String,
    /// Success or failure.
    pub success: bool,
    /// The payload.
    pub data: Option<ResponseData>,
    /// The failure's message.
    pub error: Option<String>,
    /// The failure's machine-readable reason (CALL-08).
    pub code: Option<ErrorCode>,
    /// Members this version does not know (CALL-06).
    pub extra: Map<String, Value>,
}

impl Response {
    /// Whether the command succeeded.
    pub fn is_success(&self) -> bool {
        self.success
    }

    /// The failure's `code`, when there is one (CALL-08).
    pub fn error_code(&self) -> Option<&ErrorCode> {
        self.code.as_ref()
    }

    /// A success.
    pub fn ok(id: Option<String>, command: impl Into<String>, data: Option<ResponseData>) -> Self {
        Response {
            id,
            command: command.into(),
            success: true,
            data,
            ..Default::default()
        }
    }

    /// A failure: `success: false` with `error` and, when given, its `code`.
    pub fn failure(
        id: Option<String>,
        command: impl Into<String>,
        error: impl Into<String>,
        code: Option<ErrorCode>,
    ) -> Self {
        Response {
            id,
            command: command.into(),
            success: false,
            error: Some(error.into()),
            code,
            ..Default::default()
        }
    }

    pub(crate) fn from_entries<'de, A: MapAccess<'de>>(
        prefix: Prefix<'de>,
        mut map: A,
    ) -> Result<Self, A::Error> {
        #[allow(clippy::large_enum_variant)]
        enum Data {
            Typed(ResponseData),
            Raw(Value),
        }
        let mut id: Option<Option<String>> = None;
        let mut command: Option<String> = None;
        let mut success: Option<bool> = None;
        let mut data: Option<Data> = None;
        let mut error: Option<String> = None;
        let mut code: Option<ErrorCode> = None;
        let mut extra = Map::new();
        let mut raw_id: Option<Value> = None;
        let mut prefix = prefix.into_iter();
        loop {
            // Members read before the tag first, then the rest of the map.
            let (key, from_prefix) = match prefix.next() {
                Some((key, value)) => (key, Some(value)),
                None => match map.next_key_seed(KeySeed)? {
                    Some(key) => (key, None),
                    None => break,
                },
            };
            macro_rules! value {
                ($t:ty) => {
                    match from_prefix {
                        Some(v) => codec::from_prefix_value::<$t, A::Error>(v)?,
                        None => map.next_value::<$t>()?,
                    }
                };
            }
            match &*key {
                "id" => {
                    // The last `id` wins, as JavaScript reads a duplicate member (and as the
                    // framing layer reads the envelope).
                    let v = value!(Value);
                    match v {
                        Value::String(s) => {
                            id = Some(Some(s));
                            raw_id = None;
                        }
                        other => {
                            id = None;
                            raw_id = Some(other);
                        }
                    }
                }
                "command" => command = Some(value!(String)),
                "success" => success = Some(value!(bool)),
                "error" => match value!(Option<String>) {
                    Some(e) => error = Some(e),
                    None => {
                        extra.insert("error".to_owned(), Value::Null);
                    }
                },
                "code" => match value!(Option<ErrorCode>) {
                    Some(c) => code = Some(c),
                    None => {
                        extra.insert("code".to_owned(), Value::Null);
                    }
                },
                "data" => {
                    data = Some(match (&command, success) {
                        (Some(command), Some(true)) => Data::Typed(match from_prefix {
                            Some(v) => {
                                ResponseData::from_value(command, v).map_err(de::Error::custom)?
                            }
                            None => map.next_value_seed(DataSeed(command))?,
                        }),
                        _ => Data::Raw(value!(Value)),
                    });
                }
                _ => {
                    let v = value!(Value);
                    extra.insert(key.into_owned(), v);
                }
            }
        }
        if let Some(raw) = raw_id {
            // A non-string id is not an id: keep it as sent.
            extra.insert("id".to_owned(), raw);
        }
        let command = command.ok_or_else(|| de::Error::missing_field("command"))?;
        let success = success.ok_or_else(|| de::Error::missing_field("success"))?;
        let data = match data {
            None => None,
            Some(Data::Typed(d)) => Some(d),
            Some(Data::Raw(v)) if success => {
                Some(ResponseData::from_value(&command, v).map_err(de::Error::custom)?)
            }
            Some(Data::Raw(v)) => Some(ResponseData::Other(v)),
        };
        Ok(Response {
            id: id.flatten(),
            command,
            success,
            data,
            error,
            code,
            extra,
        })
    }

    /// Writes `type` and every member, in the reference's order
    /// (id, type, command, success, data, error, code, then unknown members).
    pub(crate) fn serialize_with_type<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        if let Some(id) = &self.id {
            map.serialize_entry("id", id)?;
        }
        map.serialize_entry("type", "response")?;
        map.serialize_entry("command", &self.command)?;
        map.serialize_entry("success", &self.success)?;
        if let Some(data) = &self.data {
            map.serialize_entry("data", data)?;
        }
        if let Some(error) = &self.error {
            map.serialize_entry("error", error)?;
        }
        if let Some(code) = &self.code {
            map.serialize_entry("code", code)?;
        }
        for (key, value) in &self.extra {
            let shadowed = match key.as_str() {
                "id" => self.id.is_some(),
                "error" => self.error.is_some(),
                "code" => self.code.is_some(),
                _ => false,
            };
            if !shadowed {
                map.serialize_entry(key, value)?;
            }
        }
        Ok(())
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        self.serialize_with_type(&mut map)?;
        map.end()
    }
}

impl<'de> serde::Deserialize<'de> for Response {
    /// Reads a response frame; its `type` member, if present, must be `response`.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Response;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a response object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Response, A::Error> {
                let mut response = Response::from_entries(Vec::new(), map)?;
                match response.extra.shift_remove("type") {
                    None => {}
                    Some(Value::String(t)) if t == "response" => {}
                    Some(_) => return Err(de::Error::custom("not a response frame")),
                }
                Ok(response)
            }
        }
        deserializer.deserialize_map(V)
    }
}
