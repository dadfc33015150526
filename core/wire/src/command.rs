//! Commands: everything the host sends the agent to ask for something, each answered by a
//! `response` with the same `id` (CALL-01). oh-my-pi 18.2.3's set, plus the v1-only pi
//! 0.73's `get_commands`, `fork`, `clone` and `get_fork_messages`, and pi 1.6's
//! `get_entries`.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::codec::{wire_enum, wire_struct};
use super::event::CompactionResult;
use super::host::{HostToolDefinition, HostUriSchemeDefinition};
use super::message::ContentBlock;
use super::response::{
    BashData, BranchData, BranchMessagesData, CancelledData, CommandsData, CycleModelData,
    EntriesData, FastModeData, HandoffData, LastAssistantTextData, LevelData, LoginData,
    LoginProvidersData, MessagesData, MessagesPageData, ModelInfo, ModelsData, PathData,
    PromptData, ProtocolVersionData, ResponseData, SessionState, SessionStatsData,
    SubagentMessagesData, SubagentsData, TodosData,
};
use crate::output::ReadResult;

wire_struct! {
    /// `negotiate_protocol {protocolVersion}`: switch to protocol v2 (FRAME-04).
    pub struct NegotiateProtocol {
        /// The version asked for (2).
        req protocol_version: u64 = "protocolVersion",
    }
}

/// How a prompt sent while the agent streams is queued (CALL-04).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum StreamingBehavior {
    /// Delivered after the current tool calls.
    #[serde(rename = "steer")]
    Steer,
    /// Delivered when the agent finishes.
    #[serde(rename = "followUp")]
    FollowUp,
}

wire_struct! {
    /// `prompt {message, images?, streamingBehavior?}`: acknowledged at once, the turn
    /// streams as events (CALL-03).
    pub struct Prompt {
        /// What the user typed, sent to the model as the user message.
        req message: String = "message",
        /// Attached images (`ContentBlock::Image` blocks, `{type:"image", data, mimeType}`).
        opt images: Vec<ContentBlock> = "images",
        /// Required while the agent streams (CALL-04).
        opt streaming_behavior: StreamingBehavior = "streamingBehavior",
    }
}

/// Commands of one shape: each its own type, with the members in braces.
macro_rules! same_members {
    ($members:tt $($(#[$meta:meta])* $name:ident,)*) => {$(
        wire_struct! {
            $(#[$meta])*
            pub struct $name $members
        }
    )*};
}

same_members! {
    {
        /// The user's text.
        req message: String = "message",
        /// Attached images (`ContentBlock::Image` blocks, `{type:"image", data, mimeType}`).
        opt images: Vec<ContentBlock> = "images",
    }
    /// `steer {message, images?}`: delivered into the current run, after its tool calls.
    Steer,
    /// `follow_up {message, images?}`: queued for when the current run ends.
    FollowUp,
    /// `abort_and_prompt {message, images?}`: aborts the current run, then prompts.
    AbortAndPrompt,
}

/// `new(message)` for the commands that carry the user's message.
macro_rules! with_message {
    ($($name:ident),*) => {$(
        impl $name {
            /// The command with `message`, its other members unset (no images).
            pub fn new(message: &str) -> Self {
                $name { message: message.to_owned(), ..$name::default() }
            }
        }
    )*};
}

with_message!(Prompt, Steer, FollowUp, AbortAndPrompt);

wire_struct! {
    /// `new_session {parentSession?}`: starts a new session.
    pub struct NewSession {
        /// The session file the new session records as its parent.
        opt parent_session: String = "parentSession",
    }
}

same_members! {
    {
        /// On or off.
        req enabled: bool = "enabled",
    }
    /// `set_fast_mode {enabled}`: fast mode on or off.
    SetFastMode,
    /// `set_auto_compaction {enabled}`: automatic compaction on or off.
    SetAutoCompaction,
    /// `set_auto_retry {enabled}`: automatic retry on or off.
    SetAutoRetry,
}

wire_struct! {
    /// `set_todos {phases}`: replaces the todo list.
    pub struct SetTodos {
        /// Todo phases, in the agent's own shape.
        req phases: Vec<Value> = "phases",
    }
}

impl SetTodos {
    /// The command replacing the list with `phases`.
    pub fn new(phases: Vec<Value>) -> Self {
        SetTodos {
            phases,
            ..SetTodos::default()
        }
    }
}

wire_struct! {
    /// `set_host_tools {tools}` (HOST-01): replaces the whole host-owned set.
    pub struct SetHostTools {
        /// Every host tool the agent may call from now on; an empty list withdraws them all.
        req tools: Vec<HostToolDefinition> = "tools",
    }
}

wire_struct! {
    /// `set_host_uri_schemes {schemes}` (HOST-04).
    pub struct SetHostUriSchemes {
        /// Every URI scheme the host serves from now on, replacing the set before (HOST-04).
        req schemes: Vec<HostUriSchemeDefinition> = "schemes",
    }
}

wire_struct! {
    /// `set_subagent_subscription {level}`: which subagent frames the agent sends.
    pub struct SetSubagentSubscription {
        /// `off`, `progress` or `events`.
        req level: String = "level",
    }
}

wire_struct! {
    /// `set_thinking_level {level}`.
    pub struct SetThinkingLevel {
        /// The level, as the agent spells it (`off`, `low`, `high`, …).
        req level: String = "level",
    }
}

wire_struct! {
    /// `get_subagent_messages {subagentId?, sessionFile?, fromByte?}`: a subagent's
    /// transcript.
    pub struct GetSubagentMessages {
        /// The subagent, as `get_subagents` names it; or give its `sessionFile`.
        opt subagent_id: String = "subagentId",
        /// The subagent's session file, as `get_subagents` gives it.
        opt session_file: String = "sessionFile",
        /// Byte offset to read from.
        opt from_byte: u64 = "fromByte",
    }
}

wire_struct! {
    /// `set_model {provider, modelId}`: chooses the model.
    pub struct SetModel {
        /// The provider's id, as `get_available_models` gives it (`anthropic`, `openai`, …).
        req provider: String = "provider",
        /// The model's `id` within that provider, as `get_available_models` gives it.
        req model_id: String = "modelId",
    }
}

same_members! {
    {
        /// The mode, as the agent spells it.
        req mode: String = "mode",
    }
    /// `set_steering_mode {mode}`: `all` or `one-at-a-time`.
    SetSteeringMode,
    /// `set_follow_up_mode {mode}`: `all` or `one-at-a-time`.
    SetFollowUpMode,
    /// `set_interrupt_mode {mode}` (oh-my-pi): `immediate` or `wait`.
    SetInterruptMode,
}

same_members! {
    {
        /// Instructions for the summary.
        opt custom_instructions: String = "customInstructions",
    }
    /// `compact {customInstructions?}`: compacts the context.
    Compact,
    /// `handoff {customInstructions?}` (oh-my-pi): hands off to a new session.
    Handoff,
}

wire_struct! {
    /// `bash {command}`: runs a shell command in the session's working directory,
    /// concurrently with other commands.
    pub struct Bash {
        /// A shell command line.
        req command: String = "command",
    }
}

impl Bash {
    /// The command running `command`.
    pub fn new(command: &str) -> Self {
        Bash {
            command: command.to_owned(),
            ..Bash::default()
        }
    }
}

wire_struct! {
    /// `export_html {outputPath?}`: exports the session as HTML.
    pub struct ExportHtml {
        /// Where to write.
        opt output_path: String = "outputPath",
    }
}

wire_struct! {
    /// `switch_session {sessionPath}`: switches to another session file.
    pub struct SwitchSession {
        /// Session file.
        req session_path: String = "sessionPath",
    }
}

same_members! {
    {
        /// The entry to start from.
        req entry_id: String = "entryId",
    }
    /// `branch {entryId}` (oh-my-pi): branches from an entry.
    Branch,
    /// `fork {entryId}` (pi 0.73): forks from an entry.
    Fork,
}

wire_struct! {
    /// `get_entries {since?}` (pi 1.6): the session's entries and leaf.
    pub struct GetEntries {
        /// Only the entries after this one (an unknown id fails: "Entry not found: ID").
        opt since: String = "since",
    }
}

wire_struct! {
    /// `set_session_name {name}`: names the session.
    pub struct SetSessionName {
        /// The session's display name (`get_state`'s `sessionName` afterwards).
        req name: String = "name",
    }
}

wire_struct! {
    /// `get_messages_page {cursor?, limit?}`: one page of history (PAGE-01..06); never
    /// falls back (PAGE-07).
    pub struct GetMessagesPage {
        /// The previous page's `nextCursor`.
        opt cursor: String = "cursor",
        /// 1..=256, default 100.
        opt limit: u64 = "limit",
    }
}

impl GetMessagesPage {
    /// The page after `cursor` (the first without one), at most `limit` messages.
    pub fn new(cursor: Option<&str>, limit: Option<u32>) -> Self {
        GetMessagesPage {
            cursor: cursor.map(str::to_owned),
            limit: limit.map(u64::from),
            ..GetMessagesPage::default()
        }
    }
}

wire_struct! {
    /// `read_output {sessionId, itemId, outputRef, offsetBytes, lengthBytes?}`: a page of a
    /// stored output (OUT-10, ours; the agent checks the params, OUT-03). Sent only to an
    /// agent whose ready frame offers it.
    pub struct ReadOutput {
        /// The session the output belongs to.
        req session_id: String = "sessionId",
        /// The item (tool call id) the output belongs to.
        req item_id: String = "itemId",
        /// The reference the agent issued (`out-<16 hex>`).
        req output_ref: String = "outputRef",
        /// Where to start, in bytes.
        req offset_bytes: u64 = "offsetBytes",
        /// How many bytes at most (default 65,536).
        opt length_bytes: u64 = "lengthBytes",
    }
}

wire_struct! {
    /// `login {providerId}`: logs in to a provider.
    pub struct Login {
        /// The id of the provider to log in to, as `get_login_providers` lists it.
        req provider_id: String = "providerId",
    }
}

same_members! {
    {}
    /// `abort`: stops the current run.
    Abort,
    /// `get_state`: the session's state.
    GetState,
    /// `get_available_commands` (oh-my-pi): the slash commands.
    GetAvailableCommands,
    /// `get_subagents`: the subagents.
    GetSubagents,
    /// `cycle_model`: the next model.
    CycleModel,
    /// `get_available_models`: the models the agent offers (ACP-24).
    GetAvailableModels,
    /// `cycle_thinking_level`: the next thinking level.
    CycleThinkingLevel,
    /// `abort_retry`: stops a pending retry.
    AbortRetry,
    /// `abort_bash`: stops a running `bash` (CALL-05).
    AbortBash,
    /// `get_session_stats`: the session's message counts and token totals (ACP-02).
    GetSessionStats,
    /// `get_branch_messages` (oh-my-pi): the entries one can branch from.
    GetBranchMessages,
    /// `get_last_assistant_text`: the last assistant text.
    GetLastAssistantText,
    /// `get_messages`: the whole history in one response.
    GetMessages,
    /// `get_login_providers`: the providers one can log in to.
    GetLoginProviders,
    /// `get_commands` (pi 0.73): the slash commands.
    GetCommands,
    /// `clone` (pi 0.73): clones the session (the variant is [`Command::Clone`]; the type's
    /// name keeps clear of the `Clone` trait).
    CloneSession,
    /// `get_fork_messages` (pi 0.73): the entries one can fork from.
    GetForkMessages,
}

/// The command table: each row is a command's `type`, its [`Command`] variant and its type
/// (the command's members; one type per command), the type its answer is read as and, where
/// its `data` is typed, the [`ResponseData`] variant that data reads into. Adding a command
/// is its type above, one row here, and its answer type (for a new one, a `wire_struct!` in
/// `response.rs` and its `ResponseData` variant).
///
/// A row is `"type" => Variant(Type) -> Answer`, then `as Data` (or `as Data(how)`) when a
/// successful response's `data` reads into `ResponseData::Data`; without `as`, its data stays
/// [`ResponseData::Other`] and its answer is `ResponseData`. `how` is:
///
/// - nothing: `Data` holds `Answer`; null data is `Other(null)`; the row writes `Answer`'s
///   [`FromAnswer`](crate::FromAnswer) (the answer is `Data`'s payload);
/// - `boxed`: the same, `Data` holding `Box<Answer>`;
/// - `nullable`: `Answer` is an `Option`, and null data is `Data(None)`;
/// - `shared`: another row reads into the same `Data` and writes its `FromAnswer` (an alias,
///   such as pi 0.73's `clone` of `new_session`); the compiler checks `Answer` is `Data`'s;
/// - `by_hand`: `Answer`'s `FromAnswer` is written by hand in `answer.rs` (`prompt`'s
///   takes an acknowledgement without data, CALL-03; `set_host_tools`' answer is the whole
///   `ResponseData`).
///
/// The table writes the [`Command`] union; each type's `TYPE`, its `From` into `Command` and
/// its [`TypedCommand`](crate::TypedCommand) (the drivers' generic `call` takes it:
/// `call(GetState::default())` gives a [`SessionState`](crate::SessionState)); how a
/// response's `data` is read per command (`response.rs`'s `DataSeed`) and the answers'
/// `FromAnswer`. The compiler checks that every `ResponseData` variant but `Other` is some
/// row's.
macro_rules! command_table {
    // How a successful response's `data` reads into a row's variant.
    (@read $d:ident, $data:ident (boxed)) => {
        match Option::deserialize($d)? {
            Some(v) => ResponseData::$data(Box::new(v)),
            None => ResponseData::Other(Value::Null),
        }
    };
    (@read $d:ident, $data:ident (nullable)) => {
        ResponseData::$data(Option::deserialize($d)?)
    };
    (@read $d:ident, $data:ident $(($how:ident))?) => {
        match Option::deserialize($d)? {
            Some(v) => ResponseData::$data(v),
            None => ResponseData::Other(Value::Null),
        }
    };
    // The `FromAnswer` a row writes (or checks).
    (@answer $answer:ty, $data:ident (boxed)) => {
        command_table!(@from_answer $answer, $data, data => *data);
    };
    (@answer $answer:ty, $data:ident (shared)) => {
        const _: fn($answer) -> ResponseData = ResponseData::$data;
    };
    (@answer $answer:ty, $data:ident (by_hand)) => {};
    (@answer $answer:ty, $data:ident (nullable)) => {
        command_table!(@answer $answer, $data);
    };
    (@answer $answer:ty, $data:ident) => {
        command_table!(@from_answer $answer, $data, data => data);
    };
    // The `FromAnswer` of an answer held by `ResponseData::$data`: `$out`, the answer made
    // of the variant's `$payload` (unboxed or as it is).
    (@from_answer $answer:ty, $data:ident, $payload:ident => $out:expr) => {
        impl $crate::FromAnswer for $answer {
            fn from_answer(answered: $crate::Answered) -> Result<Self, $crate::Answered> {
                match answered {
                    $crate::Answered::Data(ResponseData::$data($payload)) => Ok($out),
                    other => Err(other),
                }
            }
        }
    };
    (@name) => { None };
    (@name $data:ident) => { Some(stringify!($data)) };
    (
        $(#[$meta:meta])*
        pub enum $name:ident tag $tag:literal {
            $(
                $(#[$vmeta:meta])*
                $wire:literal => $variant:ident($ty:ident) -> $answer:ty
                    $(as $data:ident $(($how:ident))?)?,
            )*
        }
    ) => {
        wire_enum! {
            $(#[$meta])*
            pub enum $name tag $tag {
                $(
                    $(#[$vmeta])*
                    $wire => $variant($ty),
                )*
            }
        }

        /// Reads a successful response's `data` as `command`'s: into the table's variant for
        /// it, [`ResponseData::Other`] for a command whose data the table does not type.
        pub(super) fn response_data<'de, D: serde::Deserializer<'de>>(
            command: &str,
            d: D,
        ) -> Result<ResponseData, D::Error> {
            use serde::Deserialize;
            Ok(match command {
                $($( $wire => command_table!(@read d, $data $(($how))?), )?)*
                _ => ResponseData::Other(Value::deserialize(d)?),
            })
        }

        // Every `ResponseData` variant is some row's, or `Other`: a variant no row reads
        // into does not compile here.
        const _: () = {
            #[allow(dead_code, unreachable_patterns)]
            fn every_variant_is_a_rows(data: &ResponseData) {
                match data {
                    $($( ResponseData::$data(_) => {} )?)*
                    ResponseData::Other(_) => {}
                }
            }
        };

        $(
            impl $ty {
                /// The command's `type`.
                pub const TYPE: &'static str = $wire;
            }

            impl From<$ty> for $name {
                fn from(params: $ty) -> Self {
                    $name::$variant(params)
                }
            }

            impl $crate::TypedCommand for $ty {
                type Answer = $answer;

                fn into_command(self) -> $name {
                    $name::$variant(self)
                }
            }

            $( command_table!(@answer $answer, $data $(($how))?); )?
        )*

        /// Every command's `type`, in the table's order.
        #[cfg(test)]
        pub(crate) const TYPES: &[&str] = &[$($wire),*];

        /// Every command, its params left default, made by its typed command, with its
        /// `type`, in the table's order (for the table's tests).
        #[cfg(test)]
        pub(crate) fn every_command() -> Vec<(&'static str, $name)> {
            use $crate::TypedCommand;
            vec![$(($wire, $ty::default().into_command())),*]
        }

        /// A row of the table as its answer is read (see [`every_answer`]).
        #[cfg(test)]
        #[derive(Debug, Clone, Copy)]
        pub(crate) struct AnswerRow {
            /// The command's `type`.
            pub type_name: &'static str,
            /// The name of the [`ResponseData`] variant a successful response's `data`
            /// reads into (`None`: [`ResponseData::Other`]).
            pub data: Option<&'static str>,
            /// Reads an answer as the command's answer type (its
            /// [`TypedCommand::Answer`](crate::TypedCommand::Answer)'s
            /// [`FromAnswer`](crate::FromAnswer)), the answer dropped.
            pub read_answer: fn($crate::Answered) -> Result<(), $crate::Answered>,
        }

        /// Every command's [`AnswerRow`], in the table's order (for the table's tests).
        #[cfg(test)]
        pub(crate) fn every_answer() -> Vec<AnswerRow> {
            use $crate::{Answered, FromAnswer, TypedCommand};
            #[allow(clippy::result_large_err)]
            fn read_answer<C: TypedCommand>(answered: Answered) -> Result<(), Answered> {
                C::Answer::from_answer(answered).map(drop)
            }
            vec![$(AnswerRow {
                type_name: $wire,
                data: command_table!(@name $($data)?),
                read_answer: read_answer::<$ty>,
            }),*]
        }
    };
}

command_table! {
    /// A command, tagged by `type`. The `id` is not part of it: see [`Command::to_vec_with_id`].
    pub enum Command tag "type" {
        /// Switch to protocol v2 (FRAME-04).
        "negotiate_protocol" => NegotiateProtocol(NegotiateProtocol) -> ProtocolVersionData as NegotiateProtocol,
        /// Send a prompt.
        "prompt" => Prompt(Prompt) -> PromptData as Prompt(by_hand),
        /// Steer the running agent.
        "steer" => Steer(Steer) -> ResponseData,
        /// Queue a follow-up.
        "follow_up" => FollowUp(FollowUp) -> ResponseData,
        /// Abort the run.
        "abort" => Abort(Abort) -> ResponseData,
        /// Abort, then prompt.
        "abort_and_prompt" => AbortAndPrompt(AbortAndPrompt) -> ResponseData,
        /// Start a new session.
        "new_session" => NewSession(NewSession) -> CancelledData as Cancelled,
        /// Read the session state.
        "get_state" => GetState(GetState) -> SessionState as State(boxed),
        /// Fast mode on or off.
        "set_fast_mode" => SetFastMode(SetFastMode) -> FastModeData as FastMode,
        /// List slash commands (oh-my-pi).
        "get_available_commands" => GetAvailableCommands(GetAvailableCommands) -> CommandsData as Commands,
        /// Replace the todos.
        "set_todos" => SetTodos(SetTodos) -> TodosData as Todos,
        /// Replace the host tools (HOST-01).
        "set_host_tools" => SetHostTools(SetHostTools) -> ResponseData as HostTools(by_hand),
        /// Replace the host URI schemes (HOST-04).
        "set_host_uri_schemes" => SetHostUriSchemes(SetHostUriSchemes) -> ResponseData as HostUriSchemes(by_hand),
        /// Subagent frames level.
        "set_subagent_subscription" => SetSubagentSubscription(SetSubagentSubscription) -> LevelData as Level,
        /// List subagents.
        "get_subagents" => GetSubagents(GetSubagents) -> SubagentsData as Subagents,
        /// Read a subagent's transcript.
        "get_subagent_messages" => GetSubagentMessages(GetSubagentMessages) -> SubagentMessagesData as SubagentMessages,
        /// Choose the model.
        "set_model" => SetModel(SetModel) -> ModelInfo as Model,
        /// Next model.
        "cycle_model" => CycleModel(CycleModel) -> Option<CycleModelData> as CycleModel(nullable),
        /// List models.
        "get_available_models" => GetAvailableModels(GetAvailableModels) -> ModelsData as Models,
        /// Set the thinking level.
        "set_thinking_level" => SetThinkingLevel(SetThinkingLevel) -> ResponseData,
        /// Next thinking level.
        "cycle_thinking_level" => CycleThinkingLevel(CycleThinkingLevel) -> Option<LevelData> as CycleThinkingLevel(nullable),
        /// Steering queue mode.
        "set_steering_mode" => SetSteeringMode(SetSteeringMode) -> ResponseData,
        /// Follow-up queue mode.
        "set_follow_up_mode" => SetFollowUpMode(SetFollowUpMode) -> ResponseData,
        /// Interrupt mode (oh-my-pi).
        "set_interrupt_mode" => SetInterruptMode(SetInterruptMode) -> ResponseData,
        /// Compact the context.
        "compact" => Compact(Compact) -> CompactionResult as Compaction,
        /// Automatic compaction on or off.
        "set_auto_compaction" => SetAutoCompaction(SetAutoCompaction) -> ResponseData,
        /// Automatic retry on or off.
        "set_auto_retry" => SetAutoRetry(SetAutoRetry) -> ResponseData,
        /// Stop a pending retry.
        "abort_retry" => AbortRetry(AbortRetry) -> ResponseData,
        /// Run a shell command (runs concurrently with other commands).
        "bash" => Bash(Bash) -> BashData as Bash,
        /// Abort the shell command (CALL-05).
        "abort_bash" => AbortBash(AbortBash) -> ResponseData,
        /// Session statistics.
        "get_session_stats" => GetSessionStats(GetSessionStats) -> SessionStatsData as SessionStats(boxed),
        /// Export the session as HTML.
        "export_html" => ExportHtml(ExportHtml) -> PathData as Path,
        /// Switch to another session file.
        "switch_session" => SwitchSession(SwitchSession) -> CancelledData as Cancelled(shared),
        /// Branch from an entry (oh-my-pi).
        "branch" => Branch(Branch) -> BranchData as Branch,
        /// Entries one can branch from (oh-my-pi).
        "get_branch_messages" => GetBranchMessages(GetBranchMessages) -> BranchMessagesData as BranchMessages,
        /// The last assistant text.
        "get_last_assistant_text" => GetLastAssistantText(GetLastAssistantText) -> LastAssistantTextData as LastAssistantText,
        /// Name the session.
        "set_session_name" => SetSessionName(SetSessionName) -> ResponseData,
        /// Hand off to a new session (oh-my-pi).
        "handoff" => Handoff(Handoff) -> Option<HandoffData> as Handoff(nullable),
        /// The whole history in one response.
        "get_messages" => GetMessages(GetMessages) -> MessagesData as Messages,
        /// One page of history (PAGE-01).
        "get_messages_page" => GetMessagesPage(GetMessagesPage) -> MessagesPageData as MessagesPage,
        /// Login providers.
        "get_login_providers" => GetLoginProviders(GetLoginProviders) -> LoginProvidersData as LoginProviders,
        /// Log in.
        "login" => Login(Login) -> LoginData as Login,
        /// List slash commands (pi 0.73).
        "get_commands" => GetCommands(GetCommands) -> CommandsData as Commands(shared),
        /// Fork from an entry (pi 0.73).
        "fork" => Fork(Fork) -> BranchData as Branch(shared),
        /// Clone the session (pi 0.73).
        "clone" => Clone(CloneSession) -> CancelledData as Cancelled(shared),
        /// Entries one can fork from (pi 0.73).
        "get_fork_messages" => GetForkMessages(GetForkMessages) -> BranchMessagesData as BranchMessages(shared),
        /// The session's entries and leaf (pi 1.6).
        "get_entries" => GetEntries(GetEntries) -> EntriesData as Entries,
        /// Read a page of a stored output (OUT-10, ours: musewire's extension).
        "read_output" => ReadOutput(ReadOutput) -> ReadResult as ReadOutput,
    }
}

impl Command {
    /// The wire `type` (for `Unknown`, its `type` member, or `""`).
    pub fn type_name(&self) -> &str {
        self.tag().unwrap_or("")
    }

    /// A command whose type this version does not know: `type` plus the given members.
    pub fn other(type_name: &str, mut fields: Map<String, Value>) -> Self {
        fields.remove("id");
        let mut object = Map::with_capacity(fields.len() + 1);
        object.insert("type".to_owned(), Value::String(type_name.to_owned()));
        object.extend(fields);
        Command::Unknown(Value::Object(object))
    }

    /// The command as the reference host writes it: `{"id":…,"type":…,…members}`.
    pub fn with_id<'a>(&'a self, id: Option<&'a str>) -> CommandWithId<'a> {
        CommandWithId { id, command: self }
    }

    /// Compact JSON of [`Command::with_id`] (no newline), lone surrogates written back as
    /// their escapes.
    pub fn to_vec_with_id(&self, id: Option<&str>) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        // Serialising these types into memory cannot fail: every map key is a string.
        serde_json::to_writer(&mut out, &self.with_id(id)).expect("a command serialises");
        super::surrogate::restore(out)
    }

    /// [`Command::with_id`] as a JSON value.
    pub fn to_value_with_id(&self, id: Option<&str>) -> Value {
        serde_json::to_value(self.with_id(id)).expect("a command serialises")
    }

    /// Parses a command line as the agent reads it: `{id?, type, …}`; returns the id (when
    /// a string) and the command. An unknown `type` gives [`Command::Unknown`]. Lone
    /// surrogate escapes are held as stand-ins ([`super::display_text`]).
    pub fn from_slice_with_id(json: &[u8]) -> serde_json::Result<(Option<String>, Command)> {
        let value = super::parse_value(json)?;
        Self::from_value_with_id(value)
    }

    /// [`Command::from_slice_with_id`] from a parsed value.
    pub fn from_value_with_id(value: Value) -> serde_json::Result<(Option<String>, Command)> {
        let Value::Object(mut object) = value else {
            return Err(serde::de::Error::custom("a command must be an object"));
        };
        let id = match object.shift_remove("id") {
            Some(Value::String(id)) => Some(id),
            Some(other) => {
                // A non-string id is kept with the command.
                object.insert("id".to_owned(), other);
                None
            }
            None => None,
        };
        let command = Command::from_entries(Vec::new(), super::codec::ValueMap::new(object))?;
        Ok((id, command))
    }
}

/// A command with its request id, serialised id first (see [`Command::with_id`]).
#[derive(Debug, Clone, Copy)]
pub struct CommandWithId<'a> {
    /// The `id` member, written first; `None` writes none.
    pub id: Option<&'a str>,
    /// The command whose `type` and members follow the id.
    pub command: &'a Command,
}

impl Serialize for CommandWithId<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(id) = self.id {
            map.serialize_entry("id", id)?;
        }
        self.command.serialize_entries(&mut map)?;
        map.end()
    }
}
