//! CALL-06 as a property: any JSON object, with a known or unknown `type` and arbitrary
//! members, parses leniently into an [`AgentFrame`] that serialises back to the same value;
//! and every realistic sample mutated with arbitrary extra members deep inside still
//! parses strictly and round-trips.

use crate::wire_samples;

use musewire_wire::{AgentFrame, HostFrame};
use proptest::prelude::*;
use serde_json::{Map, Value};

const TYPES: &[&str] = &[
    "ready",
    "response",
    "prompt_result",
    "agent_start",
    "agent_end",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_end",
    "extension_ui_request",
    "host_tool_call",
    "host_uri_request",
    "subagent_event",
    "auto_retry_start",
    "todo_reminder",
    "notice",
    "hologram",
];

const KEYS: &[&str] = &[
    "id",
    "type",
    "command",
    "success",
    "data",
    "error",
    "code",
    "message",
    "messages",
    "role",
    "content",
    "text",
    "method",
    "title",
    "toolCallId",
    "toolName",
    "arguments",
    "isError",
    "timestamp",
    "assistantMessageEvent",
    "delta",
    "contentIndex",
    "isTerminal",
    "payload",
    "zz",
];

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z\"\\\\\n é😀]{0,8}".prop_map(Value::String),
        prop::sample::select(TYPES).prop_map(|t| Value::String(t.to_owned())),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..6).prop_map(|m| {
                Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Value> {
    (
        prop::option::of(prop::sample::select(TYPES)),
        prop::collection::vec((prop::sample::select(KEYS), json_value()), 0..8),
    )
        .prop_map(|(t, members)| {
            let mut object = Map::new();
            for (k, v) in members {
                object.insert(k.to_owned(), v);
            }
            if let Some(t) = t {
                object.insert("type".to_owned(), Value::String(t.to_owned()));
            }
            Value::Object(object)
        })
}

/// Adds `extra` under a new key to every object inside `value` (not to arrays of strings).
fn sprinkle(value: &mut Value, key: &str, extra: &Value) {
    match value {
        Value::Object(object) => {
            for (_, v) in object.iter_mut() {
                sprinkle(v, key, extra);
            }
            object.insert(key.to_owned(), extra.clone());
        }
        Value::Array(items) => items.iter_mut().for_each(|v| sprinkle(v, key, extra)),
        _ => {}
    }
}

proptest! {
    #[test]
    fn call06_any_object_round_trips(object in json_object()) {
        let text = serde_json::to_string(&object).unwrap();
        let frame = AgentFrame::from_slice_lenient(text.as_bytes()).unwrap();
        prop_assert_eq!(frame.to_value(), object.clone());
        if let Ok(strict) = AgentFrame::from_slice(text.as_bytes()) {
            prop_assert_eq!(strict.to_value(), object.clone());
        }
        if let Ok(host) = HostFrame::from_slice(text.as_bytes()) {
            prop_assert_eq!(serde_json::to_value(&host).unwrap(), object);
        }
    }

    #[test]
    fn call06_samples_with_unknown_members_everywhere_round_trip(
        index in 0..wire_samples::AGENT_FRAMES.len(),
        extra in json_value(),
    ) {
        let (name, json) = wire_samples::AGENT_FRAMES[index];
        let mut value: Value = serde_json::from_str(json).unwrap();
        sprinkle(&mut value, "zzFuture", &extra);
        let text = serde_json::to_string(&value).unwrap();
        let frame = AgentFrame::from_slice(text.as_bytes());
        prop_assert!(frame.is_ok(), "{}: {:?}", name, frame);
        let frame = frame.unwrap();
        prop_assert!(!matches!(frame, AgentFrame::Unknown(_)), "{}", name);
        prop_assert_eq!(frame.to_value(), value, "{}", name);
    }
}
