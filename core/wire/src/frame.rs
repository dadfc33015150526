//! Whole frames: [`AgentFrame`], everything an agent writes on stdout, and [`HostFrame`],
//! everything a host writes on stdin besides commands.

use serde_json::{Number, Value};

use super::codec::{self, boxed_hooks, wire_enum, wire_struct, BoxedHooks};
use super::event::SessionEvent;
use super::host::{
    HostCancel, HostToolCall, HostToolResult, HostToolUpdate, HostUriRequest, HostUriResult,
};
use super::response::{Response, SlashCommand};
use super::ui::{UiRequest, UiResponse};

wire_struct! {
    /// `ready`: an OMP-compatible agent's first frame (FRAME-03). An agent that sends none
    /// is v1-only.
    pub struct Ready {
        /// Always 1: the stream starts in v1.
        req protocol_version: u64 = "protocolVersion",
        /// Versions the agent can switch to (`[1,2]`).
        opt supported_protocol_versions: Vec<u64> = "supportedProtocolVersions",
        /// Physical line limit including the LF.
        opt max_frame_bytes: u64 = "maxFrameBytes",
        /// Reassembled v2 frame limit.
        opt max_reassembled_frame_bytes: u64 = "maxReassembledFrameBytes",
        /// The agent serves `read_output` (OUT-10, ours); absent from omp and pi.
        opt read_output: ReadOutputOffer = "readOutput",
    }
}

wire_struct! {
    /// `readOutput {version, maxLengthBytes}` in a ready frame: the agent serves stored-output
    /// reads with the `read_output` command (OUT-10, ours).
    pub struct ReadOutputOffer {
        /// The extension's version (1).
        req version: u64 = "version",
        /// The most bytes one read may ask for (1,048,576).
        req max_length_bytes: u64 = "maxLengthBytes",
    }
}

impl Ready {
    /// Whether the agent offers protocol `version`.
    pub fn supports(&self, version: u64) -> bool {
        self.supported_protocol_versions
            .as_deref()
            .is_some_and(|versions| versions.contains(&version))
    }
}

wire_struct! {
    /// `prompt_result {id, agentInvoked}`: a prompt acknowledged as agent-invoked turned out
    /// local-only (CALL-03).
    pub struct PromptResult {
        /// The id of the `prompt` request it settles.
        opt id: String = "id",
        /// `false`: the prompt was handled locally and no agent events follow.
        req agent_invoked: bool = "agentInvoked",
    }
}

wire_struct! {
    /// `available_commands_update {commands}`.
    pub struct AvailableCommandsUpdate {
        /// Every slash command now available (the whole list, not a change).
        req commands: Vec<SlashCommand> = "commands",
    }
}

wire_struct! {
    /// `extension_error {extensionPath, event, error}`.
    pub struct ExtensionError {
        /// Where the failing extension was loaded from.
        opt extension_path: String = "extensionPath",
        /// The event it was handling.
        opt event: String = "event",
        /// What the extension threw, as text.
        opt error: String = "error",
    }
}

wire_struct! {
    /// `rpc_frame_error {originalType, error}`: a frame the agent could not send within the
    /// v1 limit (FRAME-12).
    pub struct RpcFrameError {
        /// The dropped frame's type.
        opt original_type: String = "originalType",
        /// Why the frame could not be sent (the v1 limit it broke).
        req error: String = "error",
    }
}

wire_struct! {
    /// The payload of `subagent_lifecycle` (omp's `task:subagent:lifecycle` bus event), sent
    /// while the host's subscription is not `off` (`set_subagent_subscription`): a subagent
    /// started (`status` `started`) or ended (`completed`, `failed`, `aborted`).
    pub struct SubagentLifecyclePayload {
        /// Subagent id.
        req id: String = "id",
        /// Spawn index within its batch.
        opt index: u64 = "index",
        /// Agent name (`explore`, `task`, …).
        opt agent: String = "agent",
        /// Where the agent is defined (`bundled`, `user`, `project`, …).
        opt agent_source: String = "agentSource",
        /// Short description of the task.
        opt description: String = "description",
        /// `started`, `completed`, `failed` or `aborted`, as sent.
        opt status: String = "status",
        /// The subagent's session file.
        opt session_file: String = "sessionFile",
        /// The tool call (`task`) that spawned it.
        opt parent_tool_call_id: String = "parentToolCallId",
        /// Whether it runs detached from the parent's turn.
        opt detached: bool = "detached",
    }
}

impl SubagentLifecyclePayload {
    /// Whether the subagent has ended (any status but `started`; omp drops it from
    /// `get_subagents` then).
    pub fn has_ended(&self) -> bool {
        self.status
            .as_deref()
            .is_some_and(|status| status != "started")
    }
}

wire_struct! {
    /// A subagent's progress (omp's `AgentProgress`): `subagent_progress`'s `progress`, and
    /// `get_subagents`' `progress`.
    pub struct SubagentProgress {
        /// Subagent id.
        req id: String = "id",
        /// Spawn index.
        opt index: u64 = "index",
        /// Agent name.
        opt agent: String = "agent",
        /// Where the agent is defined.
        opt agent_source: String = "agentSource",
        /// `running`, `completed`, `failed`, `aborted`, as sent.
        opt status: String = "status",
        /// The task given.
        opt task: String = "task",
        /// The assignment given with the task.
        opt assignment: String = "assignment",
        /// Short description.
        opt description: String = "description",
        /// What the subagent said it is doing last.
        opt last_intent: String = "lastIntent",
        /// The tool running now.
        opt current_tool: String = "currentTool",
        /// The last tools run, as sent.
        opt recent_tools: Vec<Value> = "recentTools",
        /// The last lines of output, newest first (at most 8).
        opt recent_output: Vec<String> = "recentOutput",
        /// Tools run so far.
        opt tool_count: u64 = "toolCount",
        /// Model requests so far.
        opt requests: u64 = "requests",
        /// Tokens so far.
        opt tokens: Number = "tokens",
        /// Cost so far.
        opt cost: Number = "cost",
        /// Time since it started, in milliseconds.
        opt duration_ms: Number = "durationMs",
        /// The model it was asked to use, as sent.
        opt model_override: Value = "modelOverride",
        /// The model role it runs under.
        opt model_role: String = "modelRole",
    }
}

wire_struct! {
    /// The payload of `subagent_progress` (omp's `task:subagent:progress` bus event, at most
    /// one per 150 ms per subagent), sent while the subscription is not `off`.
    pub struct SubagentProgressPayload {
        /// Spawn index.
        opt index: u64 = "index",
        /// Agent name.
        opt agent: String = "agent",
        /// Where the agent is defined.
        opt agent_source: String = "agentSource",
        /// The task given.
        opt task: String = "task",
        /// The assignment given with the task.
        opt assignment: String = "assignment",
        /// The tool call that spawned it.
        opt parent_tool_call_id: String = "parentToolCallId",
        /// Whether it runs detached from the parent's turn.
        opt detached: bool = "detached",
        /// The subagent's session file.
        opt session_file: String = "sessionFile",
        /// The progress itself (its `id` is the subagent's).
        req progress: SubagentProgress = "progress",
    }
}

wire_struct! {
    /// `subagent_lifecycle {payload}`.
    pub struct SubagentLifecycle {
        /// Which subagent started or ended, and how.
        req payload: SubagentLifecyclePayload = "payload",
    }
}

wire_struct! {
    /// `subagent_progress {payload}`.
    pub struct SubagentProgressUpdate {
        /// The subagent's task and what it is doing now.
        req payload: SubagentProgressPayload = "payload",
    }
}

wire_struct! {
    /// The payload of `subagent_event`: a subagent's session event.
    pub struct SubagentEventPayload {
        /// Subagent id.
        req id: String = "id",
        /// The subagent's own session event, as its session emitted it.
        req event: SessionEvent = "event",
    }
}

wire_struct! {
    /// `subagent_event {payload:{id, event}}`.
    pub struct SubagentEvent {
        /// The subagent's id and the session event it emitted.
        req payload: SubagentEventPayload = "payload",
    }
}

wire_struct! {
    /// `command_output {text}`: output of a builtin slash command.
    pub struct CommandOutput {
        /// What the command printed, for the user.
        req text: String = "text",
    }
}

wire_struct! {
    /// `session_info_update {title?, sessionId}`.
    pub struct SessionInfoUpdate {
        /// The title the agent gives the session, for a host's list.
        opt title: String = "title",
        /// The agent's id for the session (`get_state`'s `sessionId`).
        opt session_id: String = "sessionId",
    }
}

wire_struct! {
    /// `config_update {model, thinkingLevel}`.
    pub struct ConfigUpdate {
        /// The model, as sent.
        opt model: Value = "model",
        /// The thinking level now in force, as the agent names it (`off`, `low`, `high`, …).
        opt thinking_level: String = "thinkingLevel",
    }
}

wire_struct! {
    /// `rpc_chunk`: one physical piece of a v2 frame over the limit. The framing layer
    /// reassembles these; a logical frame of this type only appears if one is nested.
    pub struct RpcChunk {
        /// Sequence id.
        req chunk_id: String = "chunkId",
        /// Position.
        req index: u64 = "index",
        /// Pieces.
        req count: u64 = "count",
        /// Reassembled length.
        req byte_length: u64 = "byteLength",
        /// Base64 payload.
        req data: String = "data",
    }
}

/// `Response` in a tagged union: its `type` is written by [`Response`] itself so that `id`
/// comes first, as the reference writes it.
impl Response {
    pub(crate) fn serialize_entries<M: serde::ser::SerializeMap>(
        &self,
        map: &mut M,
    ) -> Result<(), M::Error> {
        self.serialize_with_type(map)
    }

    pub(crate) fn extra_has(&self, key: &str) -> bool {
        self.extra.contains_key(key)
    }
}

wire_enum! {
    /// Everything an agent writes on stdout, tagged by `type`. An unknown type is
    /// [`AgentFrame::Unknown`] with the frame as received, and known frames keep unknown
    /// members: re-serialising gives the same JSON (CALL-06).
    pub enum AgentFrame tag "type" {
        /// The first frame (FRAME-03).
        "ready" => Ready(Ready),
        /// The answer to a command.
        "response" => Response(Box<Response>),
        /// A prompt turned out local-only (CALL-03).
        "prompt_result" => PromptResult(PromptResult),
        /// An extension UI request (HOST-06).
        "extension_ui_request" => ExtensionUiRequest(UiRequest),
        /// Run a host tool (HOST-02).
        "host_tool_call" => HostToolCall(HostToolCall),
        /// Abort a host tool call (HOST-03).
        "host_tool_cancel" => HostToolCancel(HostCancel),
        /// Serve a host URI (HOST-05).
        "host_uri_request" => HostUriRequest(HostUriRequest),
        /// Withdraw a host URI request (HOST-05).
        "host_uri_cancel" => HostUriCancel(HostCancel),
        /// The slash commands changed.
        "available_commands_update" => AvailableCommandsUpdate(AvailableCommandsUpdate),
        /// An extension failed.
        "extension_error" => ExtensionError(ExtensionError),
        /// A subagent started or ended.
        "subagent_lifecycle" => SubagentLifecycle(Box<SubagentLifecycle>),
        /// A subagent's progress.
        "subagent_progress" => SubagentProgress(Box<SubagentProgressUpdate>),
        /// A subagent's session event.
        "subagent_event" => SubagentEvent(Box<SubagentEvent>),
        /// A frame dropped for size (FRAME-12).
        "rpc_frame_error" => RpcFrameError(RpcFrameError),
        /// Output of a builtin slash command.
        "command_output" => CommandOutput(CommandOutput),
        /// Session title changed.
        "session_info_update" => SessionInfoUpdate(SessionInfoUpdate),
        /// Model or thinking level changed by a command.
        "config_update" => ConfigUpdate(ConfigUpdate),
        /// A chunk (normally consumed by the framing layer).
        "rpc_chunk" => RpcChunk(RpcChunk),
    }
    groups {
        /// An agent session event (`agent_start`, `message_update`, …).
        Event(SessionEvent),
    }
}

boxed_hooks!(
    Response,
    SubagentEvent,
    SubagentLifecycle,
    SubagentProgressUpdate
);

impl From<SessionEvent> for AgentFrame {
    /// A session event as the frame it is written as.
    fn from(event: SessionEvent) -> Self {
        AgentFrame::Event(event)
    }
}

impl AgentFrame {
    /// Parses one logical frame (the JSON text of an object).
    /// Lone surrogate escapes are held as stand-ins ([`super::display_text`]).
    pub fn from_slice(json: &[u8]) -> serde_json::Result<Self> {
        let protected = super::surrogate::protect(json);
        super::reader::from_slice(protected.as_deref().unwrap_or(json))
    }

    /// Converts an already parsed frame.
    pub fn from_value(value: Value) -> serde_json::Result<Self> {
        match value {
            Value::Object(object) => Self::from_entries(Vec::new(), codec::ValueMap::new(object)),
            _ => Err(serde::de::Error::custom("a frame must be a JSON object")),
        }
    }

    /// Parses a frame and never fails on a JSON object: a frame of a known type whose
    /// members do not have the expected shape (e.g. a newer agent changed one) is given as
    /// [`AgentFrame::Unknown`] with the frame as received, so a host passes it on
    /// (CALL-06). Duplicate members are resolved as JSON.parse does (last wins).
    pub fn from_slice_lenient(json: &[u8]) -> serde_json::Result<Self> {
        Self::lenient(Self::from_slice(json), json)
    }

    /// A strict parse's result, or the lenient reading of `json` when it failed (CALL-06):
    /// [`AgentFrame::from_slice_lenient`] for a reader that parsed `json` its own way (the
    /// core's framing layer).
    pub fn lenient(strict: serde_json::Result<Self>, json: &[u8]) -> serde_json::Result<Self> {
        match strict {
            Ok(frame) => Ok(frame),
            Err(error) => {
                let value = super::parse_value(json)?;
                if !value.is_object() {
                    return Err(error);
                }
                Ok(Self::from_value(value.clone()).unwrap_or(AgentFrame::Unknown(value)))
            }
        }
    }

    /// The frame's `type`.
    pub fn type_name(&self) -> Option<&str> {
        self.tag()
    }

    /// The frame as a JSON value (the same value it was parsed from, CALL-06), in the
    /// model form: a lone surrogate is its stand-in character.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("a frame serialises")
    }

    /// Compact JSON (no newline), lone surrogates written back as their escapes: the frame
    /// as `JSON.stringify` writes the value it was parsed from (CALL-06).
    pub fn to_vec(&self) -> Vec<u8> {
        super::to_vec(self).expect("a frame serialises")
    }
}

wire_enum! {
    /// Everything a host writes on stdin besides commands, tagged by `type`.
    pub enum HostFrame tag "type" {
        /// The answer to a UI dialog (HOST-06).
        "extension_ui_response" => ExtensionUiResponse(UiResponse),
        /// A host tool's partial result (HOST-02).
        "host_tool_update" => HostToolUpdate(HostToolUpdate),
        /// A host tool's result (HOST-02).
        "host_tool_result" => HostToolResult(HostToolResult),
        /// A host URI result (HOST-05).
        "host_uri_result" => HostUriResult(HostUriResult),
    }
}

impl HostFrame {
    /// Parses one frame (lone surrogate escapes held as stand-ins).
    pub fn from_slice(json: &[u8]) -> serde_json::Result<Self> {
        let protected = super::surrogate::protect(json);
        super::reader::from_slice(protected.as_deref().unwrap_or(json))
    }

    /// Converts an already parsed frame.
    pub fn from_value(value: Value) -> serde_json::Result<Self> {
        match value {
            Value::Object(object) => Self::from_entries(Vec::new(), codec::ValueMap::new(object)),
            _ => Err(serde::de::Error::custom("a frame must be a JSON object")),
        }
    }

    /// Compact JSON (no newline), lone surrogates written back as their escapes.
    pub fn to_vec(&self) -> Vec<u8> {
        super::to_vec(self).expect("a frame serialises")
    }

    /// The frame's `type`.
    pub fn type_name(&self) -> Option<&str> {
        self.tag()
    }
}
