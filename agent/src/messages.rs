//! The messages the agent keeps in its history, in the reference's shapes (see
//! `musewire_core::wire::AgentMessage`).

use serde_json::{json, Value};

/// A user message, holding `text` itself (not a copy).
pub fn user(text: String, timestamp: u64) -> Value {
    let mut message = serde_json::Map::new();
    message.insert("role".into(), "user".into());
    message.insert("content".into(), Value::String(text));
    message.insert("timestamp".into(), timestamp.into());
    Value::Object(message)
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

/// An assistant message with these content blocks.
pub fn assistant(model: &Model, content: Vec<Value>, stop: &str, timestamp: u64) -> Value {
    let output: u64 = content.iter().map(block_words).sum();
    json!({
        "role": "assistant",
        "content": content,
        "api": API,
        "provider": model.provider,
        "model": model.id,
        "usage": {
            "input": 0, "output": output, "cacheRead": 0, "cacheWrite": 0, "totalTokens": output,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": stop,
        "timestamp": timestamp,
    })
}

fn block_words(block: &Value) -> u64 {
    ["text", "thinking"]
        .iter()
        .filter_map(|k| block.get(k).and_then(Value::as_str))
        .map(|t| t.split_whitespace().count() as u64)
        .sum()
}

/// A tool result message answering `tool_call_id`.
pub fn tool_result(
    tool_call_id: &str,
    tool_name: &str,
    result: &Value,
    is_error: bool,
    timestamp: u64,
) -> Value {
    let mut message = json!({
        "role": "toolResult",
        "toolCallId": tool_call_id,
        "toolName": tool_name,
        "content": result.get("content").cloned().unwrap_or_else(|| json!([])),
    });
    if let Some(details) = result.get("details") {
        message["details"] = details.clone();
    }
    message["isError"] = is_error.into();
    message["timestamp"] = timestamp.into();
    message
}

/// A tool result `{content:[{type:"text", text}]}`, with details when given.
pub fn text_result(text: impl Into<String>, details: Option<Value>) -> Value {
    let mut result = json!({"content": [{"type": "text", "text": text.into()}]});
    if let Some(details) = details {
        result["details"] = details;
    }
    result
}

/// The text of the last assistant message (its text blocks, trimmed), as
/// `get_last_assistant_text` reports it.
pub fn last_assistant_text(history: &[Value]) -> Option<String> {
    history
        .iter()
        .rev()
        .filter(|m| m["role"] == "assistant")
        .find(|m| {
            !(m["stopReason"] == "aborted" && m["content"].as_array().is_some_and(Vec::is_empty))
        })
        .and_then(|m| {
            let text: String = m["content"]
                .as_array()?
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            let text = text.trim();
            (!text.is_empty()).then(|| text.to_owned())
        })
}
