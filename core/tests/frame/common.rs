//! Helpers shared by the framing tests.
#![allow(dead_code)]

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use musewire_core::frame::{
    DecodeEvent, DecoderConfig, FrameError, ProtocolVersion, StreamDecoder,
};
use serde_json::{json, Value};

/// Decodes `input` in one read, starting in `protocol`, and returns every event.
pub fn decode(input: &[u8], protocol: ProtocolVersion) -> Vec<DecodeEvent> {
    decode_split(input, protocol, &[])
}

/// Decodes `input` cut at `cuts` (sorted offsets), and returns every event.
pub fn decode_split(input: &[u8], protocol: ProtocolVersion, cuts: &[usize]) -> Vec<DecodeEvent> {
    let mut decoder = StreamDecoder::with_config(DecoderConfig {
        protocol,
        ..DecoderConfig::default()
    });
    let mut events = Vec::new();
    let mut at = 0;
    for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
        let cut = cut.clamp(at, input.len());
        decoder.handle_bytes(&input[at..cut]);
        at = cut;
        while let Some(e) = decoder.poll_event() {
            events.push(e);
        }
    }
    decoder.handle_eof();
    while let Some(e) = decoder.poll_event() {
        events.push(e);
    }
    events
}

/// The frames of `events` as JSON values, errors as `Err`.
pub fn values(events: &[DecodeEvent]) -> Vec<Result<Value, FrameError>> {
    events
        .iter()
        .map(|e| match e {
            DecodeEvent::Frame(f) => Ok(f.parse().expect("frame parses")),
            DecodeEvent::Error(e) => Err(e.clone()),
        })
        .collect()
}

/// The errors among `events`.
pub fn errors(events: &[DecodeEvent]) -> Vec<FrameError> {
    events
        .iter()
        .filter_map(|e| match e {
            DecodeEvent::Error(e) => Some(e.clone()),
            DecodeEvent::Frame(_) => None,
        })
        .collect()
}

/// A chunk line with the given fields, as the reference writes it.
pub fn chunk_line(id: &str, index: i64, count: i64, byte_length: i64, payload: &[u8]) -> Vec<u8> {
    let mut line = serde_json::to_vec(&json!({
        "type": "rpc_chunk",
        "chunkId": id,
        "index": index,
        "count": count,
        "byteLength": byte_length,
        "data": STANDARD.encode(payload),
    }))
    .unwrap();
    line.push(b'\n');
    line
}

/// A logical frame of exactly `len` bytes of compact JSON: `{"type":"big","pad":"xxx…"}`.
pub fn frame_of_len(len: usize) -> Vec<u8> {
    let overhead = br#"{"type":"big","pad":""}"#.len();
    let mut out = br#"{"type":"big","pad":""#.to_vec();
    out.extend(std::iter::repeat_n(b'x', len - overhead));
    out.extend_from_slice(br#""}"#);
    out
}

/// The chunk lines for `payload` in 256 KiB pieces, chunkId `id`.
pub fn chunk_lines(id: &str, payload: &[u8]) -> Vec<Vec<u8>> {
    let pieces: Vec<&[u8]> = payload.chunks(256 * 1024).collect();
    pieces
        .iter()
        .enumerate()
        .map(|(i, p)| chunk_line(id, i as i64, pieces.len() as i64, payload.len() as i64, p))
        .collect()
}
