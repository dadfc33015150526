//! The wire model's JSON reader (there for the typed decode path's speed) gives exactly
//! serde_json's result: the same typed frame or value for every text serde_json reads, and
//! serde_json's own error (message and position) for every text it refuses. Checked on the
//! realistic samples, on random objects written compact and pretty, and on the same texts with
//! one byte changed (mostly no longer JSON).

use crate::wire_samples;

use musewire_wire::{parse_value, AgentFrame, HostFrame};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// The model's reads of `text` against serde_json's own.
fn same_as_serde_json(text: &[u8]) -> Result<(), TestCaseError> {
    let ours = AgentFrame::from_slice(text).map_err(|e| e.to_string());
    let theirs = serde_json::from_slice::<AgentFrame>(text).map_err(|e| e.to_string());
    prop_assert_eq!(
        ours,
        theirs,
        "AgentFrame of {:?}",
        String::from_utf8_lossy(text)
    );
    let ours = HostFrame::from_slice(text).map_err(|e| e.to_string());
    let theirs = serde_json::from_slice::<HostFrame>(text).map_err(|e| e.to_string());
    prop_assert_eq!(
        ours,
        theirs,
        "HostFrame of {:?}",
        String::from_utf8_lossy(text)
    );
    let ours = parse_value(text).map_err(|e| e.to_string());
    let theirs = serde_json::from_slice::<Value>(text).map_err(|e| e.to_string());
    // Compared as written, so that floats must agree to the bit.
    let ours = ours.map(|v| serde_json::to_string(&v).unwrap());
    let theirs = theirs.map(|v| serde_json::to_string(&v).unwrap());
    prop_assert_eq!(ours, theirs, "Value of {:?}", String::from_utf8_lossy(text));
    Ok(())
}

/// Texts the stand-in mapping of lone surrogates rewrites are compared elsewhere
/// (`wire_surrogates`): here serde_json gets the same text as the model.
fn comparable(text: &[u8]) -> bool {
    !text.windows(2).any(|w| w == b"\\u") && !text.contains(&0xF4)
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z\"\\\\\n\t\r/ é😀東]{0,40}".prop_map(Value::String),
        Just(Value::String("response".into())),
        Just(Value::String("message_update".into())),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(("[a-zA-Z\"\\\\]{1,10}", inner), 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn object() -> impl Strategy<Value = Value> {
    prop::collection::vec(
        (
            prop::sample::select(vec![
                "type", "id", "command", "success", "data", "message", "content", "text", "zz",
            ]),
            value(),
        ),
        0..8,
    )
    .prop_map(|members| {
        let mut object = Map::new();
        for (k, v) in members {
            object.insert(k.to_owned(), v);
        }
        Value::Object(object)
    })
}

#[test]
fn wire_reader_reads_every_sample_as_serde_json() {
    for (name, json) in wire_samples::AGENT_FRAMES {
        same_as_serde_json(json.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let pretty =
            serde_json::to_string_pretty(&serde_json::from_str::<Value>(json).unwrap()).unwrap();
        same_as_serde_json(pretty.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn wire_reader_edge_cases_as_serde_json() {
    let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
    let texts: Vec<String> = vec![
        r#"{"type":"message_update","message":{"role":"assistant","content":[{"type":"text","text":"a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\u2603"}]}}"#.into(),
        r#"{"type":"response","command":"get_state","success":true,"data":null}"#.into(),
        r#"{"type":"agent_end","messages":[],"isTerminal":-0}"#.into(),
        r#"{"type":"x","n":[1e400]}"#.into(),
        r#"{"type":"x","n":[18446744073709551616,-9223372036854775809,1.7976931348623157e308]}"#.into(),
        r#"{"type":"x","type":"y"}"#.into(),
        r#"{"type":"response","command":"get_messages","success":true,"data":{"messages":[{"role":"toolResult"}]}}"#.into(),
        r#"{"type":"x",}"#.into(),
        "{\"type\":\"x\"} x".into(),
        "{\"type\":\"a\u{1}\"}".into(),
        format!("{{\"type\":\"x\",\"d\":{}}}", deep(99)),
        format!("{{\"type\":\"x\",\"d\":{}}}", deep(130)),
        " \t\r\n{ \"type\" : \"ready\" } \n".into(),
        "[]".into(),
        "\"text\"".into(),
        "".into(),
    ];
    for text in texts {
        same_as_serde_json(text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    }
}

proptest! {
    #[test]
    fn wire_reader_matches_serde_json_on_random_objects(
        object in object(),
        pretty in any::<bool>(),
        mutation in prop::option::of((any::<prop::sample::Index>(), any::<u8>())),
    ) {
        let mut text = if pretty {
            serde_json::to_vec_pretty(&object).unwrap()
        } else {
            serde_json::to_vec(&object).unwrap()
        };
        if let Some((at, byte)) = mutation {
            if !text.is_empty() {
                let at = at.index(text.len());
                text[at] = byte;
            }
        }
        prop_assume!(comparable(&text));
        same_as_serde_json(&text)?;
    }
}

/// The `wire_reader` fuzz body (`fuzz/fuzz_targets/wire_reader.rs`) on the samples and on
/// random bytes, so a broken body shows on stable.
#[cfg(feature = "fuzzing")]
mod fuzz_body {
    use musewire_wire::fuzzing::wire_reader;
    use proptest::prelude::*;

    use super::wire_samples;

    #[test]
    fn wire_reader_fuzz_body_on_samples() {
        for (_, json) in wire_samples::AGENT_FRAMES {
            wire_reader(json.as_bytes());
            wire_reader(&json.as_bytes()[..json.len() / 2]);
        }
        wire_reader(b"");
        wire_reader(b"{\"type\":\"x\",\"a\":\"\\ud800\"}");
        wire_reader(b"\xff{");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn wire_reader_fuzz_body_on_random_bytes(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            wire_reader(&data);
        }
    }
}
