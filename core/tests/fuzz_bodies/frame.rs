//! The framing fuzz bodies (feature `fuzzing`) run on fixed seeds, so `cargo test` keeps them
//! compiling and passing between fuzz runs: FRAME-01/02 (line_decoder), FRAME-07..09
//! (reassembler), FRAME-11/12 (encode_roundtrip).
#![cfg(feature = "fuzzing")]

use musewire_core::frame::fuzzing;

use crate::seeds;

/// This file's seeds.
fn seeds(count: usize, max_len: usize) -> Vec<Vec<u8>> {
    seeds::seeds(0x9e37_79b9_7f4a_7c15, count, max_len)
}

#[test]
fn frame_01_line_decoder_fuzz_body_on_seeds() {
    let mut inputs = seeds(300, 400);
    inputs.push(b"\x40{\"type\":\"a\"}\r\n\n[1]\n{\"type\":\"rpc_chunk\"}\nxx".to_vec());
    inputs.push(b"\x05aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n{}\n".to_vec());
    for input in &inputs {
        fuzzing::line_decoder(input);
    }
}

#[test]
fn frame_09_reassembler_fuzz_body_on_seeds() {
    for input in seeds(300, 200) {
        fuzzing::reassembler(&input);
    }
}

#[test]
fn frame_11_encode_roundtrip_fuzz_body_on_seeds() {
    let mut inputs = seeds(40, 64);
    inputs.push(b"\xff{\"type\":\"agent_end\",\"messages\":[1,2,3]}".to_vec());
    inputs.push(b"\x81[1,2]".to_vec());
    for input in &inputs {
        fuzzing::encode_roundtrip(input);
    }
}

mod scanner_vs_serde {
    use musewire_core::frame::fuzzing::scan_agrees_with_serde;
    use proptest::prelude::*;
    use serde_json::Value;

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "\\PC{0,12}".prop_map(Value::String),
            "[\"\\\\\\u{0}-\\u{1f}a-z]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map("[a-z\"\\\\]{0,4}", inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// FRAME-01/13: the scanner that decides "is this one JSON value" agrees with serde_json
        /// on serialised values, pretty or compact, and on every one-byte corruption of them.
        #[test]
        fn frame_13_the_scanner_agrees_with_serde_json(v in value(), pretty in any::<bool>(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
            let text = if pretty { serde_json::to_vec_pretty(&v).unwrap() } else { serde_json::to_vec(&v).unwrap() };
            scan_agrees_with_serde(&text);
            let mut broken = text.clone();
            let i = at.index(broken.len());
            broken[i] = byte;
            scan_agrees_with_serde(&broken);
            broken.truncate(i);
            scan_agrees_with_serde(&broken);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// FRAME-10/13: the same on long strings dense with escapes and control characters,
        /// which the scanner's 64-byte SIMD path (`scan_simd`) reads across block edges, whole,
        /// corrupted at one byte, and cut short.
        #[test]
        fn frame_13_the_scanner_agrees_with_serde_json_on_long_strings(
            strings in prop::collection::vec("[\"\\\\\u{0}-\u{1f}a-z/\u{e9}\u{1F600}]{0,200}", 1..4),
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
        ) {
            let v = Value::Array(strings.into_iter().map(Value::String).collect());
            let text = serde_json::to_vec(&v).unwrap();
            scan_agrees_with_serde(&text);
            let mut broken = text.clone();
            let i = at.index(broken.len());
            broken[i] = byte;
            scan_agrees_with_serde(&broken);
            broken.truncate(i);
            scan_agrees_with_serde(&broken);
        }
    }

    #[test]
    fn frame_13_the_scanner_agrees_with_serde_json_on_near_misses() {
        for text in [
            &b"{}"[..],
            b"[]",
            b"0",
            b"-0",
            b"1e5",
            b"1E+5",
            b"-1.5e-3",
            b"01",
            b"1.",
            b".5",
            b"-",
            b"+1",
            b"1e",
            b"\"\\u00e9\"",
            b"\"\\u00g9\"",
            b"\"\\x\"",
            b"\"a\tb\"",
            b"\"\x7f\"",
            b"tru",
            b"true ",
            b" null",
            b"nul",
            b"[1,]",
            b"[,1]",
            b"{\"a\"1}",
            b"{\"a\":}",
            b"{,}",
            b"{\"a\":1,}",
            b"\"\\ud83d\\ude00\"",
            b"[[[[]]]]",
            b"\"unterminated",
            b"{\"a\":1}x",
            b"1 2",
            b"",
        ] {
            scan_agrees_with_serde(text);
        }
    }
}
