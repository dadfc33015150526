//! The messages the agent keeps in its history, in the reference's shapes
//! ([`musewire_wire::AgentMessage`]).

use musewire_wire::{
    AgentMessage, AssistantMessage, ContentBlock, MessageContent, ToolResult, ToolResultMessage,
    Usage, UsageCost, UserMessage,
};
use serde_json::Value;

/// A user message, holding `text` itself (not a copy).
pub fn user(text: String, timestamp: u64) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: MessageContent::Text(text),
        timestamp: Some(timestamp),
        ..UserMessage::default()
    })
}

/// What the scripted model reports about itself on each assistant message.
#[derive(Debug, Clone)]
pub struct Model {
    /// Provider name.
    pub provider: String,
    /// Model id.
    pub id: String,
}

/// The model's API name.
pub const API: &str = "musewire-script";

/// An assistant message with these content blocks: its usage counts their words as output
/// tokens, at no cost.
pub fn assistant(
    model: &Model,
    content: Vec<ContentBlock>,
    stop: &str,
    timestamp: u64,
) -> AssistantMessage {
    let output: u64 = content.iter().map(block_words).sum();
    let zero = || Some(0u64.into());
    AssistantMessage {
        content,
        api: Some(API.to_owned()),
        provider: Some(model.provider.clone()),
        model: Some(model.id.clone()),
        usage: Some(Usage {
            input: Some(0),
            output: Some(output),
            cache_read: Some(0),
            cache_write: Some(0),
            total_tokens: Some(output),
            cost: Some(UsageCost {
                input: zero(),
                output: zero(),
                cache_read: zero(),
                cache_write: zero(),
                total: zero(),
                ..UsageCost::default()
            }),
            ..Usage::default()
        }),
        stop_reason: Some(stop.to_owned()),
        timestamp: Some(timestamp),
        ..AssistantMessage::default()
    }
}

fn block_words(block: &ContentBlock) -> u64 {
    let text = match block {
        ContentBlock::Text(text) => &text.text,
        ContentBlock::Thinking(thinking) => &thinking.thinking,
        _ => return 0,
    };
    text.split_whitespace().count() as u64
}

/// A tool result message answering `tool_call_id`: the result's content and details.
pub fn tool_result(
    tool_call_id: &str,
    tool_name: &str,
    result: &ToolResult,
    is_error: bool,
    timestamp: u64,
) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: tool_call_id.to_owned(),
        tool_name: tool_name.to_owned(),
        content: result.content.clone(),
        details: result.details.clone(),
        is_error: Some(is_error),
        timestamp: Some(timestamp),
        ..ToolResultMessage::default()
    }
}

/// A tool result `{content:[{type:"text", text}]}`, with details when given.
pub fn text_result(text: impl Into<String>, details: Option<Value>) -> ToolResult {
    ToolResult {
        details,
        ..ToolResult::text(text)
    }
}

/// The text of the last assistant message (its text blocks, trimmed), as
/// `get_last_assistant_text` reports it.
pub fn last_assistant_text(history: &[AgentMessage]) -> Option<String> {
    history
        .iter()
        .rev()
        .filter_map(|m| match m {
            AgentMessage::Assistant(assistant) => Some(assistant),
            _ => None,
        })
        .find(|m| !(m.stop_reason.as_deref() == Some("aborted") && m.content.is_empty()))
        .and_then(|m| {
            let text: String = m.content.iter().filter_map(ContentBlock::as_text).collect();
            let text = text.trim();
            (!text.is_empty()).then(|| text.to_owned())
        })
}
