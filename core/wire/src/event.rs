//! Agent session events (`AgentSessionEvent`): the run, turn, message and tool lifecycle,
//! compaction and retry, and the session notices of oh-my-pi and pi.

use serde_json::{Number, Value};

use super::codec::{wire_enum, wire_struct};
use super::lazy::Lazy;
use super::message::{AgentMessage, AssistantMessage, ImageContent, ToolCall};

wire_struct! {
    /// An event without members of its own (`agent_start`, `turn_start`, …).
    pub struct Empty {}
}

wire_struct! {
    /// `agent_end`: the run is over, with the messages it produced.
    pub struct AgentEnd {
        /// The run's messages (after FRAME-12 over-limit compaction: only those not
        /// already streamed in `message_end`).
        req messages: Vec<AgentMessage> = "messages",
        /// `false` when the agent will resume the session before its true final settle
        /// (oh-my-pi); absent means terminal.
        opt is_terminal: bool = "isTerminal",
        /// Whether the agent runs again on its own after this run (pi 1.6: a retry, overflow
        /// recovery; `agent_settled` comes only once it will not).
        opt will_retry: bool = "willRetry",
        /// Set on a transport-compacted `agent_end` (FRAME-12): the run's message count.
        opt message_count: u64 = "messageCount",
        /// Run telemetry, as sent.
        opt telemetry: Value = "telemetry",
        /// Run coverage, as sent.
        opt coverage: Value = "coverage",
    }
}

impl AgentEnd {
    /// Whether this `agent_end` ends the run for good (CALL-09): `isTerminal` not `false`
    /// (oh-my-pi) and `willRetry` not `true` (pi 1.6, whose retry runs on its own).
    pub fn is_terminal(&self) -> bool {
        self.is_terminal != Some(false) && self.will_retry != Some(true)
    }
}

wire_struct! {
    /// `turn_end`: one assistant response and its tool results.
    pub struct TurnEnd {
        /// The turn's assistant message, complete (its tool results follow in `toolResults`).
        req message: AgentMessage = "message",
        /// The turn's tool results: `toolResult` messages, each with its `role`.
        opt tool_results: Vec<AgentMessage> = "toolResults",
    }
}

wire_struct! {
    /// `message_start` / `message_end`.
    pub struct MessageEvent {
        /// The message as it stands: at `message_start` as it opens, at `message_end` complete.
        req message: AgentMessage = "message",
    }
}

wire_struct! {
    /// `message_update`: a streamed assistant message and the delta that changed it.
    pub struct MessageUpdate {
        /// The message so far (oh-my-pi, pi 0.73; pi 1.6 sends the delta only), typed when
        /// asked ([`Lazy::get`]): it grows with every update, and the deltas say what changed.
        opt message: Lazy<AgentMessage> = "message",
        /// What changed.
        req assistant_message_event: AssistantMessageEvent = "assistantMessageEvent",
        /// The response's cumulative usage so far, as sent (pi 1.6).
        opt usage: Value = "usage",
    }
}

wire_struct! {
    /// `start`, `text_start`, `thinking_start`, `toolcall_start`: a block opens.
    pub struct BlockStart {
        /// Index of the block in `content` (absent on `start`).
        opt content_index: u64 = "contentIndex",
        /// The tool call's id, on `toolcall_start` (pi 1.6, which sends no `partial`).
        opt id: String = "id",
        /// The tool's name, on `toolcall_start` (pi 1.6).
        opt tool_name: String = "toolName",
        /// The message so far, typed when asked ([`Lazy::get`]).
        opt partial: Lazy<AssistantMessage> = "partial",
    }
}

wire_struct! {
    /// `text_delta`, `thinking_delta`, `toolcall_delta`: text appended to a block.
    pub struct BlockDelta {
        /// Index of the block.
        req content_index: u64 = "contentIndex",
        /// The appended text (partial JSON for tool calls).
        req delta: String = "delta",
        /// The message so far, typed when asked ([`Lazy::get`]).
        opt partial: Lazy<AssistantMessage> = "partial",
    }
}

wire_struct! {
    /// `text_end`, `thinking_end`: a block is complete.
    pub struct BlockEnd {
        /// Index of the block.
        req content_index: u64 = "contentIndex",
        /// The block's whole text.
        req content: String = "content",
        /// The message so far, typed when asked ([`Lazy::get`]).
        opt partial: Lazy<AssistantMessage> = "partial",
    }
}

wire_struct! {
    /// `image_end`: an image block is complete.
    pub struct ImageEnd {
        /// Index of the block.
        req content_index: u64 = "contentIndex",
        /// The whole image block, data and media type.
        req content: Box<ImageContent> = "content",
        /// The message so far, typed when asked ([`Lazy::get`]).
        opt partial: Lazy<AssistantMessage> = "partial",
    }
}

wire_struct! {
    /// `toolcall_end`: a tool call block is complete.
    pub struct ToolCallEnd {
        /// Index of the block.
        req content_index: u64 = "contentIndex",
        /// The whole call: id, tool name and parsed arguments.
        req tool_call: Box<ToolCall> = "toolCall",
        /// The message so far, typed when asked ([`Lazy::get`]).
        opt partial: Lazy<AssistantMessage> = "partial",
    }
}

wire_struct! {
    /// `done`: the message completed (`reason` `stop`, `length` or `toolUse`).
    pub struct StreamDone {
        /// Why it stopped.
        req reason: String = "reason",
        /// The complete assistant message, when the stream sends it.
        opt message: Box<AssistantMessage> = "message",
    }
}

wire_struct! {
    /// `error`: the message failed (`reason` `aborted` or `error`).
    pub struct StreamError {
        /// Why it stopped.
        req reason: String = "reason",
        /// The assistant message up to the failure (its `errorMessage` says why).
        opt error: Box<AssistantMessage> = "error",
    }
}

wire_enum! {
    /// The `assistantMessageEvent` of a `message_update`.
    pub enum AssistantMessageEvent tag "type" {
        /// The message starts.
        "start" => Start(BlockStart),
        /// A text block opens.
        "text_start" => TextStart(BlockStart),
        /// Text appended.
        "text_delta" => TextDelta(BlockDelta),
        /// A text block completes.
        "text_end" => TextEnd(BlockEnd),
        /// A thinking block opens.
        "thinking_start" => ThinkingStart(BlockStart),
        /// Reasoning appended.
        "thinking_delta" => ThinkingDelta(BlockDelta),
        /// A thinking block completes.
        "thinking_end" => ThinkingEnd(BlockEnd),
        /// An image block completes.
        "image_end" => ImageEnd(ImageEnd),
        /// A tool call block opens.
        "toolcall_start" => ToolCallStart(BlockStart),
        /// Tool call arguments appended (partial JSON).
        "toolcall_delta" => ToolCallDelta(BlockDelta),
        /// A tool call block completes.
        "toolcall_end" => ToolCallEnd(ToolCallEnd),
        /// The message completed.
        "done" => Done(StreamDone),
        /// The message failed.
        "error" => Error(StreamError),
    }
}

wire_struct! {
    /// `tool_execution_start`.
    pub struct ToolExecutionStart {
        /// The model's id for the call; the `tool_execution_*` events of one call share it.
        req tool_call_id: String = "toolCallId",
        /// The tool's name as the model called it (a host tool's as registered).
        req tool_name: String = "toolName",
        /// Arguments, as sent.
        opt args: Value = "args",
        /// Harness-level intent.
        opt intent: String = "intent",
        /// The tool call that made this one through `ctx.executeTool()` (pi 1.6).
        opt parent_tool_call_id: String = "parentToolCallId",
    }
}

wire_struct! {
    /// `tool_execution_update`: a partial result.
    pub struct ToolExecutionUpdate {
        /// The model's id for the call; the `tool_execution_*` events of one call share it.
        req tool_call_id: String = "toolCallId",
        /// The tool's name as the model called it (a host tool's as registered).
        req tool_name: String = "toolName",
        /// Arguments, as sent.
        opt args: Value = "args",
        /// The partial result, as sent.
        opt partial_result: Value = "partialResult",
        /// The tool call that made this one through `ctx.executeTool()` (pi 1.6).
        opt parent_tool_call_id: String = "parentToolCallId",
    }
}

wire_struct! {
    /// `tool_stream_update` (oh-my-pi).
    pub struct ToolStreamUpdate {
        /// The model's id for the call; the `tool_execution_*` events of one call share it.
        req tool_call_id: String = "toolCallId",
        /// The tool's name as the model called it (a host tool's as registered).
        req tool_name: String = "toolName",
        /// The update, as sent.
        opt update: Value = "update",
    }
}

wire_struct! {
    /// `tool_execution_end`.
    pub struct ToolExecutionEnd {
        /// The model's id for the call; the `tool_execution_*` events of one call share it.
        req tool_call_id: String = "toolCallId",
        /// The tool's name as the model called it (a host tool's as registered).
        req tool_name: String = "toolName",
        /// The result, as sent.
        opt result: Value = "result",
        /// Whether the tool failed.
        opt is_error: bool = "isError",
        /// How long the tool ran, in milliseconds (pi 1.6; absent when it did not run).
        opt duration_ms: Number = "durationMs",
        /// The tool call that made this one through `ctx.executeTool()` (pi 1.6).
        opt parent_tool_call_id: String = "parentToolCallId",
    }
}

wire_struct! {
    /// A compaction's outcome (`CompactionResult`).
    pub struct CompactionResult {
        /// The text that replaces the compacted messages in the model's context.
        req summary: String = "summary",
        /// Short display summary.
        opt short_summary: String = "shortSummary",
        /// The id of the oldest session entry left in the context after the summary.
        opt first_kept_entry_id: String = "firstKeptEntryId",
        /// Context tokens before.
        opt tokens_before: u64 = "tokensBefore",
        /// Hook details, as sent.
        opt details: Value = "details",
    }
}

wire_struct! {
    /// `auto_compaction_start` (oh-my-pi).
    pub struct AutoCompactionStart {
        /// `threshold`, `overflow`, `idle`, `incomplete`.
        opt reason: String = "reason",
        /// `context-full`, `remote`, `handoff`, `shake`, `snapcompact`.
        opt action: String = "action",
    }
}

wire_struct! {
    /// `auto_compaction_end` (oh-my-pi).
    pub struct AutoCompactionEnd {
        /// What the compaction did, in the agent's words.
        opt action: String = "action",
        /// The result, when it completed.
        opt result: CompactionResult = "result",
        /// Whether it was aborted.
        opt aborted: bool = "aborted",
        /// Whether the prompt will be retried.
        opt will_retry: bool = "willRetry",
        /// Failure text.
        opt error_message: String = "errorMessage",
        /// Skipped for a benign reason.
        opt skipped: bool = "skipped",
    }
}

wire_struct! {
    /// `compaction_start` (pi 0.73).
    pub struct CompactionStart {
        /// `manual`, `threshold`, `overflow`.
        opt reason: String = "reason",
    }
}

wire_struct! {
    /// `compaction_end` (pi 0.73).
    pub struct CompactionEnd {
        /// `manual`, `threshold`, `overflow`.
        opt reason: String = "reason",
        /// The result, when it completed.
        opt result: CompactionResult = "result",
        /// Whether it was aborted.
        opt aborted: bool = "aborted",
        /// Whether the prompt will be retried.
        opt will_retry: bool = "willRetry",
        /// Failure text.
        opt error_message: String = "errorMessage",
    }
}

wire_struct! {
    /// `auto_retry_start`: a model request failed with an error worth retrying, and the agent
    /// tries again after `delayMs`.
    pub struct AutoRetryStart {
        /// Which attempt this is, from 1.
        req attempt: u64 = "attempt",
        /// The most attempts the agent makes before it gives up.
        opt max_attempts: u64 = "maxAttempts",
        /// How long the agent waits before this attempt, in milliseconds.
        opt delay_ms: Number = "delayMs",
        /// The error being retried.
        opt error_message: String = "errorMessage",
        /// Machine-readable error classifier.
        opt error_id: Number = "errorId",
    }
}

wire_struct! {
    /// `auto_retry_end`: the retries of an `auto_retry_start` are over, one way or the other.
    pub struct AutoRetryEnd {
        /// Whether a retry succeeded.
        req success: bool = "success",
        /// How many attempts were made in all.
        opt attempt: u64 = "attempt",
        /// The last attempt's error text, when the retries gave up.
        opt final_error: String = "finalError",
        /// Errors per attempt, as sent.
        opt retry_errors: Vec<Value> = "retryErrors",
    }
}

wire_struct! {
    /// `retry_fallback_applied`: the retries moved to a fallback model.
    pub struct RetryFallbackApplied {
        /// The model that failed, as the agent names it.
        opt from: String = "from",
        /// The fallback model tried next, as the agent names it.
        opt to: String = "to",
        /// The role the model fills in the agent's settings (`default`, `smol`, …).
        opt role: String = "role",
    }
}

wire_struct! {
    /// `retry_fallback_succeeded`: a request on the fallback model succeeded.
    pub struct RetryFallbackSucceeded {
        /// The fallback model's id, as the agent names it.
        opt model: String = "model",
        /// The role the model fills in the agent's settings (`default`, `smol`, …).
        opt role: String = "role",
    }
}

wire_struct! {
    /// `ttsr_triggered`.
    pub struct TtsrTriggered {
        /// The rules, as sent.
        opt rules: Vec<Value> = "rules",
    }
}

wire_struct! {
    /// `todo_reminder`: the agent reminds itself of open todos; a new run (`agent_start`)
    /// may follow without the first one having ended terminally.
    pub struct TodoReminder {
        /// The open todos, as sent.
        opt todos: Vec<Value> = "todos",
        /// How many reminders have been given in this run, this one included.
        opt attempt: u64 = "attempt",
        /// The most reminders the agent gives before it ends the run.
        opt max_attempts: u64 = "maxAttempts",
    }
}

wire_struct! {
    /// `irc_message` (oh-my-pi): a message from another agent arrived.
    pub struct IrcMessage {
        /// What arrived over omp's IRC bridge (a message between agents), as a custom message.
        req message: AgentMessage = "message",
    }
}

wire_struct! {
    /// `notice`: a message for the user (e.g. a session persistence failure).
    pub struct Notice {
        /// `info`, `warning`, `error`.
        opt level: String = "level",
        /// What to show the user.
        req message: String = "message",
        /// Where it comes from, e.g. `session-persistence`.
        opt source: String = "source",
    }
}

wire_struct! {
    /// `thinking_level_changed` (`thinkingLevel` in oh-my-pi, `level` in pi).
    pub struct ThinkingLevelChanged {
        /// The level now in force, as the agent names it (`off`, `low`, `high`, …).
        opt thinking_level: String = "thinkingLevel",
        /// The configured selector when it differs.
        opt configured: String = "configured",
        /// What `auto` resolved to.
        opt resolved: String = "resolved",
        /// The level (pi 0.73).
        opt level: String = "level",
    }
}

wire_struct! {
    /// `goal_updated`.
    pub struct GoalUpdated {
        /// The goal, or null.
        opt goal: Value = "goal",
        /// The goal mode's state, as sent.
        opt state: Value = "state",
    }
}

wire_struct! {
    /// `queue_update` (pi 0.73).
    pub struct QueueUpdate {
        /// Queued steering messages.
        opt steering: Vec<String> = "steering",
        /// Queued follow-ups.
        opt follow_up: Vec<String> = "followUp",
    }
}

wire_struct! {
    /// `session_info_changed` (pi 0.73).
    pub struct SessionInfoChanged {
        /// The session's name now; absent when it has none.
        opt name: String = "name",
    }
}

wire_struct! {
    /// `agent_settled` (pi 1.6): the agent will not go on by itself (no retry, recovery or
    /// queued message left); it follows the run's last `agent_end`.
    pub struct AgentSettled {
        /// Whether the run ended because it was aborted.
        opt aborted: bool = "aborted",
    }
}

wire_struct! {
    /// `entry_appended` (pi 1.6): an extension appended a custom session entry.
    pub struct EntryAppended {
        /// The session entry, as sent.
        opt entry: Value = "entry",
    }
}

wire_struct! {
    /// `summarization_retry_scheduled` (pi 1.6): a compaction or branch summary failed and
    /// is retried.
    pub struct SummarizationRetryScheduled {
        /// Which attempt this is, from 1.
        opt attempt: u64 = "attempt",
        /// The most attempts the agent makes before it gives up.
        opt max_attempts: u64 = "maxAttempts",
        /// How long the agent waits before this attempt, in milliseconds.
        opt delay_ms: Number = "delayMs",
        /// The error being retried.
        opt error_message: String = "errorMessage",
    }
}

wire_struct! {
    /// `summarization_retry_attempt_start` (pi 1.6).
    pub struct SummarizationRetryAttemptStart {
        /// `compaction` or `branchSummary`.
        opt source: String = "source",
        /// Why the compaction runs (`manual`, `threshold`, `overflow`); absent for a branch
        /// summary.
        opt reason: String = "reason",
    }
}

wire_struct! {
    /// `bash_execution_update` (pi 1.6): one chunk of a direct `bash` command's output.
    pub struct BashExecutionUpdate {
        /// The `bash` command's request id, when it had one.
        opt id: String = "id",
        /// The next piece of the command's output, in order.
        req delta: String = "delta",
    }
}

wire_enum! {
    /// What the agent streams about its session between responses (pi's `AgentSessionEvent`:
    /// runs, turns, messages, tool executions, compaction, retries, notices), tagged by
    /// `type`; an [`AgentFrame::Event`](super::AgentFrame::Event). Not the core's agent machine's events for its
    /// application (`musewire_core::agent::AgentEvent`).
    pub enum SessionEvent tag "type" {
        /// A run starts.
        "agent_start" => AgentStart(Empty),
        /// A run ends.
        "agent_end" => AgentEnd(AgentEnd),
        /// The agent will not go on by itself (pi 1.6).
        "agent_settled" => AgentSettled(AgentSettled),
        /// A turn starts.
        "turn_start" => TurnStart(Empty),
        /// A turn ends.
        "turn_end" => TurnEnd(TurnEnd),
        /// A message starts.
        "message_start" => MessageStart(MessageEvent),
        /// A streamed message changes.
        "message_update" => MessageUpdate(MessageUpdate),
        /// A message is complete.
        "message_end" => MessageEnd(MessageEvent),
        /// A tool starts.
        "tool_execution_start" => ToolExecutionStart(ToolExecutionStart),
        /// A tool reports progress.
        "tool_execution_update" => ToolExecutionUpdate(ToolExecutionUpdate),
        /// A tool streams an update (oh-my-pi).
        "tool_stream_update" => ToolStreamUpdate(ToolStreamUpdate),
        /// A tool ends.
        "tool_execution_end" => ToolExecutionEnd(ToolExecutionEnd),
        /// Automatic compaction starts (oh-my-pi).
        "auto_compaction_start" => AutoCompactionStart(AutoCompactionStart),
        /// Automatic compaction ends (oh-my-pi).
        "auto_compaction_end" => AutoCompactionEnd(AutoCompactionEnd),
        /// Compaction starts (pi 0.73).
        "compaction_start" => CompactionStart(CompactionStart),
        /// Compaction ends (pi 0.73).
        "compaction_end" => CompactionEnd(CompactionEnd),
        /// An automatic retry starts.
        "auto_retry_start" => AutoRetryStart(AutoRetryStart),
        /// An automatic retry ends.
        "auto_retry_end" => AutoRetryEnd(AutoRetryEnd),
        /// A fallback model was applied.
        "retry_fallback_applied" => RetryFallbackApplied(RetryFallbackApplied),
        /// A fallback model answered.
        "retry_fallback_succeeded" => RetryFallbackSucceeded(RetryFallbackSucceeded),
        /// The model changed.
        "model_changed" => ModelChanged(Empty),
        /// Configuration warnings changed.
        "config_warnings_changed" => ConfigWarningsChanged(Empty),
        /// Advisor cost changed.
        "advisor_cost_changed" => AdvisorCostChanged(Empty),
        /// The advisor yielded.
        "advisor_yielded" => AdvisorYielded(Empty),
        /// Rules triggered.
        "ttsr_triggered" => TtsrTriggered(TtsrTriggered),
        /// Open todos reminder.
        "todo_reminder" => TodoReminder(TodoReminder),
        /// Todos cleared.
        "todo_auto_clear" => TodoAutoClear(Empty),
        /// An IRC message.
        "irc_message" => IrcMessage(IrcMessage),
        /// A notice for the user.
        "notice" => Notice(Notice),
        /// The thinking level changed.
        "thinking_level_changed" => ThinkingLevelChanged(ThinkingLevelChanged),
        /// The goal changed.
        "goal_updated" => GoalUpdated(GoalUpdated),
        /// The queues changed (pi 0.73).
        "queue_update" => QueueUpdate(QueueUpdate),
        /// The session name changed (pi 0.73).
        "session_info_changed" => SessionInfoChanged(SessionInfoChanged),
        /// An extension appended a session entry (pi 1.6).
        "entry_appended" => EntryAppended(EntryAppended),
        /// A summary's retry is scheduled (pi 1.6).
        "summarization_retry_scheduled" => SummarizationRetryScheduled(SummarizationRetryScheduled),
        /// A summary's retry starts (pi 1.6).
        "summarization_retry_attempt_start" => SummarizationRetryAttemptStart(SummarizationRetryAttemptStart),
        /// A summary's retries are over (pi 1.6).
        "summarization_retry_finished" => SummarizationRetryFinished(Empty),
        /// A direct `bash` command's output chunk (pi 1.6).
        "bash_execution_update" => BashExecutionUpdate(BashExecutionUpdate),
    }
}
