//! Conversation messages (`AgentMessage`, tagged by `role`) and their content blocks
//! (tagged by `type`), as `get_messages`, `message_*` events and `agent_end` carry them.
//!
//! Open-ended payloads (tool `arguments`, result `details`, provider metadata) stay
//! [`serde_json::Value`]: the core passes them on and never needs their inside.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Number, Value};

use super::codec::{boxed_hooks, wire_enum, wire_struct, BoxedHooks};
use crate::output::StoredOutput;

wire_struct! {
    /// `{type:"text", text, textSignature?}`.
    pub struct TextContent {
        /// The block's text: a message's, or what a tool returned.
        req text: String = "text",
        /// Provider message metadata (OpenAI responses).
        opt text_signature: String = "textSignature",
    }
}

wire_struct! {
    /// `{type:"thinking", thinking, thinkingSignature?, itemId?}`.
    pub struct ThinkingContent {
        /// The reasoning text.
        req thinking: String = "thinking",
        /// Provider signature of the reasoning item.
        opt thinking_signature: String = "thinkingSignature",
        /// Provider item id.
        opt item_id: String = "itemId",
    }
}

wire_struct! {
    /// `{type:"redactedThinking", data}`.
    pub struct RedactedThinkingContent {
        /// Opaque provider data.
        req data: String = "data",
    }
}

wire_struct! {
    /// `{type:"image", data, mimeType, detail?, providerFile?, url?}`.
    pub struct ImageContent {
        /// Base64 image bytes.
        req data: String = "data",
        /// e.g. `image/png`.
        req mime_type: String = "mimeType",
        /// Resolution hint: `auto`, `low`, `high`, `original`.
        opt detail: String = "detail",
        /// Provider-native file reference.
        opt provider_file: Value = "providerFile",
        /// An https mirror of `data`.
        opt url: String = "url",
    }
}

wire_struct! {
    /// `{type:"toolCall", id, name, arguments, …}`: the model asks for a tool.
    pub struct ToolCall {
        /// Tool call id, matched by the tool result's `toolCallId`.
        req id: String = "id",
        /// Tool name.
        req name: String = "name",
        /// The arguments object, as sent.
        req arguments: Value = "arguments",
        /// Google thought signature.
        opt thought_signature: String = "thoughtSignature",
        /// Harness-level intent.
        opt intent: String = "intent",
        /// Verbatim in-band block of a synthetic call.
        opt raw_block: String = "rawBlock",
        /// Original wire name of an OpenAI custom tool.
        opt custom_wire_name: String = "customWireName",
        /// Provider-native metadata.
        opt provider_metadata: Value = "providerMetadata",
    }
}

wire_enum! {
    /// One content block of a message.
    pub enum ContentBlock tag "type" {
        /// Text.
        "text" => Text(TextContent),
        /// Model reasoning.
        "thinking" => Thinking(ThinkingContent),
        /// Redacted reasoning.
        "redactedThinking" => RedactedThinking(RedactedThinkingContent),
        /// An image.
        "image" => Image(Box<ImageContent>),
        /// A tool call (assistant messages).
        "toolCall" => ToolCall(Box<ToolCall>),
    }
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent {
            text: text.into(),
            ..Default::default()
        })
    }

    /// An image block from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(Box::new(ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            ..Default::default()
        }))
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// A user, developer or custom message's content: a plain string or a list of blocks.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageContent {
    /// A plain string.
    Text(String),
    /// Content blocks (text and images).
    Blocks(Vec<ContentBlock>),
}

impl Default for MessageContent {
    fn default() -> Self {
        MessageContent::Text(String::new())
    }
}

impl Serialize for MessageContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MessageContent::Text(text) => serializer.serialize_str(text),
            MessageContent::Blocks(blocks) => blocks.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MessageContent;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of content blocks")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(MessageContent::Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(MessageContent::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1).min(64));
                while let Some(block) = seq.next_element()? {
                    blocks.push(block);
                }
                Ok(MessageContent::Blocks(blocks))
            }
        }
        deserializer.deserialize_any(V)
    }
}

boxed_hooks!(ImageContent, ToolCall, AssistantMessage);

wire_struct! {
    /// Token counts of one assistant turn.
    pub struct Usage {
        /// Non-cached input tokens.
        opt input: u64 = "input",
        /// Output tokens.
        opt output: u64 = "output",
        /// Tokens read from the prompt cache.
        opt cache_read: u64 = "cacheRead",
        /// Tokens written to the prompt cache.
        opt cache_write: u64 = "cacheWrite",
        /// Sum of the above plus orchestration.
        opt total_tokens: u64 = "totalTokens",
        /// Cost breakdown.
        opt cost: UsageCost = "cost",
    }
}

wire_struct! {
    /// What one assistant turn cost, by part (`Usage.cost`), numbers as sent.
    pub struct UsageCost {
        /// For the non-cached input.
        opt input: Number = "input",
        /// For the output.
        opt output: Number = "output",
        /// For the prompt cache's reads.
        opt cache_read: Number = "cacheRead",
        /// For the prompt cache's writes.
        opt cache_write: Number = "cacheWrite",
        /// In all.
        opt total: Number = "total",
    }
}

wire_struct! {
    /// `{role:"user", content, timestamp, …}`.
    pub struct UserMessage {
        /// The message content.
        req content: MessageContent = "content",
        /// Injected by the system (e.g. auto-continue).
        opt synthetic: bool = "synthetic",
        /// Injected mid-turn as a steer.
        opt steering: bool = "steering",
        /// Billing attribution.
        opt attribution: Value = "attribution",
        /// Unix time in milliseconds.
        opt timestamp: u64 = "timestamp",
    }
}

wire_struct! {
    /// `{role:"assistant", content, api, provider, model, usage, stopReason, timestamp, …}`.
    pub struct AssistantMessage {
        /// Text, thinking, image and tool call blocks.
        req content: Vec<ContentBlock> = "content",
        /// Provider API, e.g. `anthropic-messages`.
        opt api: String = "api",
        /// Provider, e.g. `anthropic`.
        opt provider: String = "provider",
        /// Model id.
        opt model: String = "model",
        /// Token usage.
        opt usage: Usage = "usage",
        /// `stop`, `length`, `toolUse`, `error` or `aborted`.
        opt stop_reason: String = "stopReason",
        /// The provider's error text when `stopReason` is `error`.
        opt error_message: String = "errorMessage",
        /// Provider response id.
        opt response_id: String = "responseId",
        /// Unix time in milliseconds.
        opt timestamp: u64 = "timestamp",
        /// Request duration in milliseconds.
        opt duration: Number = "duration",
    }
}

wire_struct! {
    /// `{role:"toolResult", toolCallId, toolName, content, details?, isError, timestamp}`.
    pub struct ToolResultMessage {
        /// The id of the tool call this answers.
        req tool_call_id: String = "toolCallId",
        /// The tool's name.
        req tool_name: String = "toolName",
        /// Text and image blocks.
        req content: Vec<ContentBlock> = "content",
        /// Tool-specific details, as sent.
        opt details: Value = "details",
        /// Whether the tool failed.
        opt is_error: bool = "isError",
        /// Unix time in milliseconds.
        opt timestamp: u64 = "timestamp",
    }
}

wire_struct! {
    /// `{role:"bashExecution", command, output, exitCode, cancelled, truncated, …}`: a
    /// user-run shell command (the `bash` command, or `!` in the TUI).
    pub struct BashExecutionMessage {
        /// The command line.
        req command: String = "command",
        /// What it wrote, possibly cut (`truncated`).
        req output: String = "output",
        /// Exit code (absent when it did not exit).
        opt exit_code: i64 = "exitCode",
        /// Whether it was cancelled.
        opt cancelled: bool = "cancelled",
        /// Whether the output was truncated.
        opt truncated: bool = "truncated",
        /// Images extracted from terminal graphics.
        opt images: Vec<ContentBlock> = "images",
        /// Output metadata.
        opt meta: Value = "meta",
        /// Excluded from the model's context.
        opt exclude_from_context: bool = "excludeFromContext",
        /// Unix time in milliseconds.
        opt timestamp: u64 = "timestamp",
    }
}

wire_struct! {
    /// `{role:"pythonExecution", code, output, …}` (oh-my-pi).
    pub struct PythonExecutionMessage {
        /// The code run.
        req code: String = "code",
        /// What it wrote, possibly cut (`truncated`).
        req output: String = "output",
        /// The exit code (absent when it did not exit).
        opt exit_code: i64 = "exitCode",
        /// Whether it was cancelled.
        opt cancelled: bool = "cancelled",
        /// Whether the output was truncated.
        opt truncated: bool = "truncated",
        /// Unix time in milliseconds.
        opt timestamp: u64 = "timestamp",
    }
}

wire_struct! {
    /// `{role:"custom"|"hookMessage", customType, content, display, details?, timestamp}`:
    /// a message an extension injected.
    pub struct CustomMessage {
        /// The extension's message type.
        req custom_type: String = "customType",
        /// What the model sees: a string or text and image blocks.
        req content: MessageContent = "content",
        /// Whether a UI shows it.
        opt display: bool = "display",
        /// Extension details, as sent.
        opt details: Value = "details",
        /// Unix time in milliseconds.
        opt timestamp: u64 = "timestamp",
    }
}

wire_struct! {
    /// `{role:"branchSummary", summary, fromId, timestamp}`.
    pub struct BranchSummaryMessage {
        /// The summary text.
        opt summary: String = "summary",
        /// The entry the branch left from.
        opt from_id: String = "fromId",
        /// Unix time in milliseconds.
        opt timestamp: u64 = "timestamp",
    }
}

wire_struct! {
    /// `{role:"compactionSummary", summary, tokensBefore, timestamp}`.
    pub struct CompactionSummaryMessage {
        /// The summary text.
        opt summary: String = "summary",
        /// Context tokens before compaction.
        opt tokens_before: u64 = "tokensBefore",
        /// Unix time in milliseconds.
        opt timestamp: u64 = "timestamp",
    }
}

wire_struct! {
    /// `{role:"fileMention", files, timestamp}`: files auto-read from `@path` mentions.
    pub struct FileMentionMessage {
        /// `{path, content, lineCount?, …}` per file, as sent.
        req files: Vec<Value> = "files",
        /// Unix time in milliseconds.
        opt timestamp: u64 = "timestamp",
    }
}

wire_enum! {
    /// A conversation message (`AgentMessage`), tagged by `role`.
    pub enum AgentMessage tag "role" {
        /// A user message.
        "user" => User(UserMessage),
        /// A developer (system-injected) message; same shape as a user message.
        "developer" => Developer(UserMessage),
        /// An assistant message.
        "assistant" => Assistant(Box<AssistantMessage>),
        /// A tool result.
        "toolResult" => ToolResult(ToolResultMessage),
        /// A user-run shell command.
        "bashExecution" => BashExecution(BashExecutionMessage),
        /// A user-run Python cell (oh-my-pi).
        "pythonExecution" => PythonExecution(PythonExecutionMessage),
        /// An extension message.
        "custom" => Custom(CustomMessage),
        /// A legacy hook message.
        "hookMessage" => HookMessage(CustomMessage),
        /// A branch summary.
        "branchSummary" => BranchSummary(BranchSummaryMessage),
        /// A compaction summary.
        "compactionSummary" => CompactionSummary(CompactionSummaryMessage),
        /// Auto-read file mentions.
        "fileMention" => FileMention(FileMentionMessage),
    }
}

impl AgentMessage {
    /// The `role` (`None` for an unknown message without a string role).
    pub fn role(&self) -> Option<&str> {
        self.tag()
    }
}

wire_struct! {
    /// A tool's result as hosts and tools produce it (`AgentToolResult`):
    /// `{content, details?, isError?}`.
    pub struct ToolResult {
        /// Text and image blocks.
        req content: Vec<ContentBlock> = "content",
        /// Details for a UI, as sent.
        opt details: Value = "details",
        /// A non-throwing failure.
        opt is_error: bool = "isError",
    }
}

wire_struct! {
    /// What musewire reads of a tool result's `details` (the rest is the tool's own, kept in
    /// `extra`): the stored output a spilled result names (OUT-02; `details.storedOutput`).
    pub struct ToolResultDetails {
        /// Where the full result was stored, when it was spilled.
        opt stored_output: StoredOutput = "storedOutput",
    }
}

impl ToolResultDetails {
    /// Reads `details` (`None` when it is not an object of this shape: a tool's own details
    /// may be anything).
    pub fn from_details(details: &Value) -> Option<Self> {
        Self::deserialize(details).ok()
    }
}

/// The stored output named by `details.storedOutput`, when there is one of the right shape.
fn stored_output(details: Option<&Value>) -> Option<StoredOutput> {
    ToolResultDetails::from_details(details?)?.stored_output
}

impl ToolResultMessage {
    /// The stored output this result was spilled to (OUT-02, OUT-08: the history keeps it).
    pub fn stored_output(&self) -> Option<StoredOutput> {
        stored_output(self.details.as_ref())
    }
}

impl ToolResult {
    /// The stored output this result was spilled to (OUT-02), from `details.storedOutput`.
    pub fn stored_output(&self) -> Option<StoredOutput> {
        stored_output(self.details.as_ref())
    }

    /// A result of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![ContentBlock::text(text)],
            ..ToolResult::default()
        }
    }
}
