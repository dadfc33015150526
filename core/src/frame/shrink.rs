//! The v1 over-limit transforms of the reference encoder (FRAME-12): agent_end compaction,
//! the seven shrink passes, and the overflow frames.

use serde_json::{Map, Value};

/// One shrink pass: caps on string length (UTF-16 units), array items and object keys.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ShrinkPass {
    string_cap: usize,
    array_limit: usize,
    object_limit: usize,
}

const fn pass(string_cap: usize, array_limit: usize, object_limit: usize) -> ShrinkPass {
    ShrinkPass {
        string_cap,
        array_limit,
        object_limit,
    }
}

/// The reference's passes, mildest first.
pub(crate) const SHRINK_PASSES: [ShrinkPass; 7] = [
    pass(256 * 1024, 512, 512),
    pass(64 * 1024, 256, 256),
    pass(16 * 1024, 128, 128),
    pass(4 * 1024, 64, 64),
    pass(1024, 32, 32),
    pass(256, 8, 16),
    pass(64, 1, 8),
];

const STRING_ELISION_RESERVE: usize = 80;
const METADATA_STRING_CAP: usize = 1024;

/// Message of the overflow response.
pub const RESPONSE_OVERFLOW_ERROR: &str = "RPC response exceeded the transport limit";
/// Message of the `rpc_frame_error` frame.
pub const FRAME_OVERFLOW_ERROR: &str = "RPC frame exceeded the transport limit";

/// Cuts a string longer than `cap` UTF-16 units to a head and an elision note, counting as
/// JavaScript does. Where the reference's cut would split a surrogate pair (leaving a lone
/// surrogate), the head stops before the pair.
pub(crate) fn shrink_string(s: &str, cap: usize) -> String {
    let units = s.encode_utf16().count();
    if units <= cap {
        return s.to_owned();
    }
    let head_units = cap.saturating_sub(STRING_ELISION_RESERVE);
    let mut seen = 0;
    let mut end = 0;
    for (at, c) in s.char_indices() {
        if seen + c.len_utf16() > head_units {
            break;
        }
        seen += c.len_utf16();
        end = at + c.len_utf8();
    }
    format!(
        "{}\n…[{} chars elided for RPC frame]",
        &s[..end],
        units - head_units
    )
}

/// Applies one pass to a value.
pub(crate) fn shrink_value(value: &Value, pass: ShrinkPass) -> Value {
    match value {
        Value::String(s) => Value::String(shrink_string(s, pass.string_cap)),
        Value::Array(items) => {
            let keep = items.len().min(pass.array_limit);
            let mut out: Vec<Value> = items[..keep]
                .iter()
                .map(|v| shrink_value(v, pass))
                .collect();
            if keep < items.len() {
                out.push(Value::String(format!(
                    "…[{} items elided for RPC frame]",
                    items.len() - keep
                )));
            }
            Value::Array(out)
        }
        Value::Object(map) => {
            let keep = map.len().min(pass.object_limit);
            let mut out: Map<String, Value> = map
                .iter()
                .take(keep)
                .map(|(k, v)| (k.clone(), shrink_value(v, pass)))
                .collect();
            if keep < map.len() {
                out.insert("rpcFrameElidedKeys".into(), Value::from(map.len() - keep));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// An `agent_end` with its `messages` array, less the leading messages the client already
/// received in identical `message_end` frames, plus `messageCount`. `None` for other frames.
pub(crate) fn compact_agent_end(frame: &Value, streamed: &[Value]) -> Option<Value> {
    let map = frame.as_object()?;
    if map.get("type").and_then(Value::as_str) != Some("agent_end") {
        return None;
    }
    let messages = map.get("messages")?.as_array()?;
    let skip = messages
        .iter()
        .zip(streamed)
        .take_while(|(message, seen)| message == seen)
        .count();
    let mut out = map.clone();
    out.insert("messages".into(), Value::Array(messages[skip..].to_vec()));
    out.insert("messageCount".into(), Value::from(messages.len()));
    Some(Value::Object(out))
}

/// What replaces a frame that no pass could bring under the limit.
pub(crate) fn overflow_frame(frame: &Value) -> Value {
    let Some(map) = frame.as_object() else {
        let mut out = Map::new();
        out.insert("type".into(), "rpc_frame_error".into());
        out.insert("error".into(), FRAME_OVERFLOW_ERROR.into());
        return Value::Object(out);
    };
    let meta = |key: &str| {
        map.get(key)
            .and_then(Value::as_str)
            .map(|s| Value::String(shrink_string(s, METADATA_STRING_CAP)))
    };
    let mut out = Map::new();
    match map.get("type").and_then(Value::as_str) {
        Some("response") => {
            if let Some(id) = meta("id") {
                out.insert("id".into(), id);
            }
            out.insert("type".into(), "response".into());
            out.insert(
                "command".into(),
                meta("command").unwrap_or_else(|| "unknown".into()),
            );
            out.insert("success".into(), false.into());
            out.insert("error".into(), RESPONSE_OVERFLOW_ERROR.into());
        }
        Some("agent_end") => {
            out.insert("type".into(), "agent_end".into());
            out.insert("messages".into(), Value::Array(Vec::new()));
            let count = match map.get("messageCount") {
                Some(Value::Number(n)) => Value::Number(n.clone()),
                _ => Value::from(0),
            };
            out.insert("messageCount".into(), count);
        }
        _ => {
            out.insert("type".into(), "rpc_frame_error".into());
            if let Some(t) = meta("type") {
                out.insert("originalType".into(), t);
            }
            out.insert("error".into(), FRAME_OVERFLOW_ERROR.into());
        }
    }
    Value::Object(out)
}
