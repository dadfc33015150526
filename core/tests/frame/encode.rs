//! Outbound framing: FRAME-11 (v2 chunking) and FRAME-12 (v1 over-limit transforms).

use crate::common;

use common::*;
use musewire_core::frame::{
    DecodeEvent, FrameEncoder, ProtocolVersion, CHUNK_PAYLOAD_BYTES, MAX_FRAME_BYTES,
};
use serde_json::{json, Value};

/// The reference's texts for an overlong response and frame (FRAME-07), pinned by value.
const RESPONSE_OVERFLOW_ERROR: &str = "RPC response exceeded the transport limit";
const FRAME_OVERFLOW_ERROR: &str = "RPC frame exceeded the transport limit";

fn encoder(protocol: ProtocolVersion) -> FrameEncoder {
    let mut e = FrameEncoder::new();
    e.set_protocol(protocol);
    e
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

#[test]
fn frame_11_large_frames_go_out_as_256_kib_chunks_one_line_at_a_time() {
    let mut enc = encoder(ProtocolVersion::V2);
    let big = json!({"type": "response", "data": "é".repeat(700_000)});
    let json_len = serde_json::to_vec(&big).unwrap().len();
    let mut encoded = enc.encode(&big);
    assert!(encoded.is_chunked());
    let count = json_len.div_ceil(CHUNK_PAYLOAD_BYTES);
    assert_eq!(encoded.remaining(), count);
    let mut index = 0;
    let mut line = Vec::new();
    while encoded.write_next(&mut line) {
        assert!(line.len() <= MAX_FRAME_BYTES);
        let chunk: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(chunk["type"], "rpc_chunk");
        assert_eq!(chunk["chunkId"], "rpc-1");
        assert_eq!(chunk["index"], index);
        assert_eq!(chunk["count"], count);
        assert_eq!(chunk["byteLength"], json_len);
        line.clear();
        index += 1;
    }
    assert_eq!(index, count);
    // The next chunked frame gets the next id; small frames are not chunked.
    assert_eq!(
        lines(&enc.encode_to_vec(&json!({"type": "small"}))).len(),
        1
    );
    let second = lines(&enc.encode_to_vec(&big));
    assert_eq!(second[0]["chunkId"], "rpc-2");
}

#[test]
fn frame_11_chunks_decode_back_to_the_frame() {
    let mut enc = encoder(ProtocolVersion::V2);
    let big = json!({"type": "message_end", "message": {"text": "x\u{2028}\"y\"".repeat(300_000)}});
    let events = decode(&enc.encode_to_vec(&big), ProtocolVersion::V2);
    let got = values(&events);
    assert_eq!(got, vec![Ok(big)]);
}

#[test]
fn frame_11_frames_over_64_mib_become_the_overflow_frame() {
    let mut enc = encoder(ProtocolVersion::V2);
    let huge = json!({"id": "r", "type": "response", "command": "get_messages", "success": true, "data": "x".repeat(64 << 20)});
    let out = lines(&enc.encode_to_vec(&huge));
    assert_eq!(
        out,
        vec![
            json!({"id": "r", "type": "response", "command": "get_messages", "success": false, "error": RESPONSE_OVERFLOW_ERROR})
        ]
    );
    // The chunk id was spent all the same, as in the reference.
    let big = json!({"type": "x", "data": "y".repeat(2 << 20)});
    assert_eq!(lines(&enc.encode_to_vec(&big))[0]["chunkId"], "rpc-2");
}

#[test]
fn frame_12_v1_response_over_the_limit_becomes_the_overflow_response() {
    let mut enc = encoder(ProtocolVersion::V1);
    let big = json!({"type": "response", "command": "get_messages", "id": 5, "success": true, "data": "x".repeat(MAX_FRAME_BYTES)});
    let out = lines(&enc.encode_to_vec(&big));
    // A non-string id is dropped; key order is the reference's.
    assert_eq!(
        serde_json::to_string(&out[0]).unwrap(),
        format!(
            r#"{{"type":"response","command":"get_messages","success":false,"error":"{RESPONSE_OVERFLOW_ERROR}"}}"#
        )
    );
}

#[test]
fn frame_12_v1_frame_of_exactly_the_limit_passes_unchanged() {
    let mut enc = encoder(ProtocolVersion::V1);
    let frame = frame_of_len(MAX_FRAME_BYTES - 1);
    let value: Value = serde_json::from_slice(&frame).unwrap();
    let out = enc.encode_to_vec(&value);
    assert_eq!(out.len(), MAX_FRAME_BYTES);
    assert_eq!(&out[..out.len() - 1], &frame[..]);
    let value: Value = serde_json::from_slice(&frame_of_len(MAX_FRAME_BYTES)).unwrap();
    assert!(enc.encode_to_vec(&value).len() < MAX_FRAME_BYTES);
}

#[test]
fn frame_12_agent_end_drops_messages_already_streamed() {
    for protocol in [ProtocolVersion::V1, ProtocolVersion::V2] {
        let mut enc = encoder(protocol);
        let m1 = json!({"role": "user", "content": "a".repeat(600_000)});
        let m2 = json!({"role": "assistant", "content": "b".repeat(600_000)});
        let m3 = json!({"role": "assistant", "content": "tail"});
        enc.encode_to_vec(&json!({"type": "agent_start"}));
        enc.encode_to_vec(&json!({"type": "message_end", "message": m1}));
        enc.encode_to_vec(&json!({"type": "message_end", "message": m2}));
        let end = json!({"type": "agent_end", "messages": [m1, m2, m3]});
        let out = lines(&enc.encode_to_vec(&end));
        assert_eq!(
            out,
            vec![json!({"type": "agent_end", "messages": [m3], "messageCount": 3})],
            "{protocol:?}"
        );
        // After the terminal agent_end the streamed set is empty again: nothing is dropped.
        let again = lines(&enc.encode_to_vec(&json!({"type": "agent_end", "messages": [m3]})));
        assert_eq!(again, vec![json!({"type": "agent_end", "messages": [m3]})]);
    }
}

#[test]
fn frame_12_a_continuing_agent_end_keeps_the_streamed_set() {
    let mut enc = encoder(ProtocolVersion::V1);
    let m1 = json!({"role": "user", "content": "a".repeat(600_000)});
    let m2 = json!({"role": "assistant", "content": "b".repeat(600_000)});
    enc.encode_to_vec(&json!({"type": "message_end", "message": m1}));
    enc.encode_to_vec(&json!({"type": "agent_end", "messages": [], "willContinue": true}));
    let out = lines(&enc.encode_to_vec(&json!({"type": "agent_end", "messages": [m1, m2]})));
    assert!(out == vec![json!({"type": "agent_end", "messages": [m2], "messageCount": 2})]);
}

#[test]
fn frame_12_v1_streamed_snapshot_is_the_message_as_sent() {
    // A message_end that was itself shrunk is remembered shrunk, so the full message in
    // agent_end does not match it and is kept (then shrunk), as in the reference.
    let mut enc = encoder(ProtocolVersion::V1);
    let m1 = json!({"role": "user", "content": "a".repeat(1_100_000)});
    enc.encode_to_vec(&json!({"type": "message_end", "message": m1}));
    let out = lines(&enc.encode_to_vec(&json!({"type": "agent_end", "messages": [m1]})));
    assert_eq!(out[0]["messageCount"], 1);
    assert_eq!(out[0]["messages"].as_array().map(Vec::len), Some(1));
    assert!(out[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("chars elided for RPC frame"));
}

#[test]
fn frame_12_shrink_passes_cut_strings_arrays_and_objects_in_turn() {
    let mut enc = encoder(ProtocolVersion::V1);
    // One 2 MB string: the first pass (256 Ki units) is enough.
    let out = lines(
        &enc.encode_to_vec(&json!({"type": "tool_execution_end", "result": "z".repeat(2_000_000)})),
    );
    let text = out[0]["result"].as_str().unwrap();
    let head = 256 * 1024 - 80;
    assert_eq!(
        text,
        format!(
            "{}\n…[{} chars elided for RPC frame]",
            "z".repeat(head),
            2_000_000 - head
        )
    );
    // 5,000 strings of 300 chars: passes 1..=4 keep too much; pass 5 keeps 32 items of 1,024 units.
    let items: Vec<Value> = (0..5000).map(|_| Value::String("q".repeat(300))).collect();
    let out = lines(&enc.encode_to_vec(&json!({"type": "e", "items": items})));
    let kept = out[0]["items"].as_array().unwrap();
    assert_eq!(kept.len(), 513, "pass 1 keeps 512 and a note");
    assert_eq!(kept[512], "…[4488 items elided for RPC frame]");
    // Many keys: objects are cut and counted.
    let mut map = serde_json::Map::new();
    map.insert("type".into(), "wide".into());
    for i in 0..3000 {
        map.insert(format!("k{i}"), Value::String("v".repeat(400)));
    }
    let out = lines(&enc.encode_to_vec(&Value::Object(map)));
    assert_eq!(out[0]["rpcFrameElidedKeys"], 3001 - 512);
    assert_eq!(out[0].as_object().unwrap().len(), 513);
}

#[test]
fn frame_12_shrink_counts_utf16_units_as_javascript_does() {
    let mut enc = encoder(ProtocolVersion::V1);
    // Astral characters are two units each: 400,000 of them are 800,000 units.
    let out = lines(&enc.encode_to_vec(&json!({"type": "t", "s": "😀".repeat(400_000)})));
    let text = out[0]["s"].as_str().unwrap();
    let head_units = 256 * 1024 - 80;
    assert!(text.starts_with(&"😀".repeat(head_units / 2)));
    assert!(text.ends_with(&format!(
        "\n…[{} chars elided for RPC frame]",
        800_000 - head_units
    )));
}

#[test]
fn frame_12_what_no_pass_can_save_becomes_rpc_frame_error() {
    let mut enc = encoder(ProtocolVersion::V1);
    // A tree 8 wide and 6 deep of 64-unit strings is still 18 MB after the last pass.
    let mut v = json!("s".repeat(64));
    for _ in 0..6 {
        let mut level = serde_json::Map::new();
        for k in 0..8 {
            level.insert(format!("k{k}"), v.clone());
        }
        v = Value::Object(level);
    }
    let frame = json!({"type": "x".repeat(2000), "payload": v});
    let out = lines(&enc.encode_to_vec(&frame));
    let error_type = out[0]["originalType"].as_str().unwrap();
    assert_eq!(out[0]["type"], "rpc_frame_error");
    assert_eq!(out[0]["error"], FRAME_OVERFLOW_ERROR);
    assert!(error_type.starts_with(&"x".repeat(944)) && error_type.contains("chars elided"));
}

#[test]
fn frame_12_every_line_the_encoder_writes_is_within_the_limit() {
    for protocol in [ProtocolVersion::V1, ProtocolVersion::V2] {
        let mut enc = encoder(protocol);
        for size in [10, 1 << 19, (1 << 20) - 40, 1 << 20, 3 << 20] {
            let out = enc.encode_to_vec(&json!({"type": "r", "s": "w".repeat(size)}));
            assert!(out
                .split(|&c| c == b'\n')
                .all(|l| l.len() < MAX_FRAME_BYTES));
            let events = decode(&out, protocol);
            assert!(events.iter().all(|e| matches!(e, DecodeEvent::Frame(_))));
        }
    }
}

#[test]
fn frame_06_unsupported_version_has_the_reference_message() {
    let mut enc = FrameEncoder::new();
    assert_eq!(
        enc.set_protocol_number(3).unwrap_err().to_string(),
        "Unsupported RPC protocol version: 3"
    );
    assert!(enc.set_protocol_number(2).is_ok());
    assert_eq!(enc.protocol(), ProtocolVersion::V2);
}
