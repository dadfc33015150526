//! Fuzz bodies for the framing layer (feature `fuzzing`); the targets in `fuzz/` are thin
//! wrappers, so stable builds compile and test these too.

use arbitrary::{Arbitrary, Unstructured};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Value};

use super::{
    DecodeEvent, DecoderConfig, FrameEncoder, FrameError, Negotiation, ProtocolVersion,
    StreamDecoder, MAX_FRAME_BYTES,
};

fn drain(decoder: &mut StreamDecoder, events: &mut Vec<DecodeEvent>) {
    while let Some(event) = decoder.poll_event() {
        events.push(event);
    }
}

fn run(input: &[u8], config: &DecoderConfig, cuts: &[usize]) -> Vec<DecodeEvent> {
    run_checked(input, config, cuts, false)
}

fn run_checked(
    input: &[u8],
    config: &DecoderConfig,
    cuts: &[usize],
    late: bool,
) -> Vec<DecodeEvent> {
    let mut decoder = StreamDecoder::with_config(config.clone());
    if late {
        decoder.check_late();
    }
    let mut events = Vec::new();
    let mut at = 0;
    for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
        let cut = cut.clamp(at, input.len());
        decoder.handle_bytes(&input[at..cut]);
        at = cut;
        drain(&mut decoder, &mut events);
        assert!(decoder.buffered() <= config.max_frame_bytes + 64 * 1024 * 1024);
    }
    decoder.handle_eof();
    drain(&mut decoder, &mut events);
    events
}

/// `line_decoder`: any bytes, any split, a small line limit; the events must not depend on
/// the split, and nothing may panic.
pub fn line_decoder(data: &[u8]) {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let config = DecoderConfig {
        max_frame_bytes: 2 + usize::from(head & 0x3f) * 4,
        protocol: if head & 0x40 != 0 {
            ProtocolVersion::V2
        } else {
            ProtocolVersion::V1
        },
        negotiation: match head & 0x80 != 0 {
            true => Negotiation::Follow,
            false => Negotiation::Ignore,
        },
    };
    for line in rest.split(|&b| b == b'\n') {
        scan_agrees_with_serde(line);
    }
    let whole = run(rest, &config, &[]);
    let cuts: Vec<usize> = rest
        .iter()
        .enumerate()
        .filter(|(_, &b)| b % 7 == 0)
        .map(|(i, _)| i)
        .collect();
    let split = run(rest, &config, &cuts);
    assert!(whole == split, "events depend on how the input was split");
    late_check_agrees(rest, &config, &cuts, &whole);
    let full = run(rest, &DecoderConfig::default(), &cuts);
    for event in &full {
        if let DecodeEvent::Frame(frame) = event {
            let value: Value = frame.parse().expect("a frame is JSON");
            assert!(value.is_object());
            let mut compact = Vec::new();
            frame.write_compact(&mut compact);
            assert_eq!(crate::wire::parse_value(&compact).ok(), Some(value));
        }
    }
}

/// A decoder that checks late ([`StreamDecoder::check_late`]) gives the same events as one
/// that checks at once, `eager`, once its consumer does as the `Client` does: parse each
/// unchecked frame as an `AgentFrame`, and check it only when that parse fails. A parse
/// that succeeds never meets a frame the check refuses. Compared up to the first fatal
/// error, after which the consumer takes nothing.
pub(crate) fn late_check_agrees(
    input: &[u8],
    config: &DecoderConfig,
    cuts: &[usize],
    eager: &[DecodeEvent],
) {
    let mut late = Vec::new();
    for event in run_checked(input, config, cuts, true) {
        let event = match event {
            DecodeEvent::Frame(mut frame) if !frame.is_checked() => {
                let parsed = frame.parse::<crate::wire::AgentFrame>().ok();
                match frame.check() {
                    Ok(()) => {
                        if let Some(crate::wire::AgentFrame::Response(response)) = &parsed {
                            // The Client routes a late response by its typed id and command:
                            // they route as the envelope's (a lone surrogate, which no id or
                            // command of ours holds, reads as U+FFFD in the envelope).
                            let ours = |id: Option<&str>| {
                                (
                                    id.is_some(),
                                    id.and_then(crate::client::RequestId::from_wire),
                                )
                            };
                            assert_eq!(ours(response.id.as_deref()), ours(frame.id()));
                            let command = frame.command().unwrap_or_default();
                            if !command.contains('\u{fffd}') {
                                assert_eq!(response.command, command);
                            }
                        }
                        DecodeEvent::Frame(frame)
                    }
                    Err(error) => {
                        assert!(
                            parsed.is_none(),
                            "the typed parse took a frame the check refuses"
                        );
                        DecodeEvent::Error(error)
                    }
                }
            }
            event => event,
        };
        let fatal = matches!(&event, DecodeEvent::Error(e) if e.is_fatal());
        late.push(event);
        if fatal {
            break;
        }
    }
    assert!(late == eager, "a late check changed the events");
}

/// The scanner accepts a text exactly when serde_json does, but for what JavaScript's
/// `JSON.parse` allows and serde_json does not (lone surrogate escapes, nesting past 128).
pub fn scan_agrees_with_serde(text: &[u8]) {
    let Ok(utf8) = std::str::from_utf8(text) else {
        return;
    };
    let ours = super::scan::scan(text, &mut |_| {}).is_ok();
    match serde_json::from_str::<serde::de::IgnoredAny>(utf8) {
        Ok(_) => assert!(ours, "the scanner refused valid JSON"),
        Err(e) => {
            let why = e.to_string();
            if !why.contains("lone")
                && !why.contains("recursion limit")
                && !why.contains("surrogate")
            {
                assert!(!ours, "the scanner accepted invalid JSON: {why}");
            }
        }
    }
}

/// One step of a structured chunk stream.
#[derive(Debug, Arbitrary)]
pub(crate) enum ChunkOp {
    /// A chunk with these fields; `payload` bytes of `fill`, or raw `data` text.
    Chunk {
        /// Which of a few chunk ids.
        id: u8,
        /// The index.
        index: i16,
        /// The count.
        count: i16,
        /// Offset of byteLength from 1 MiB, in KiB steps.
        length_step: i16,
        /// Payload length.
        payload_len: u32,
        /// Payload fill byte.
        fill: u8,
        /// When set, this text as `data` instead of the payload's base64.
        raw_data: Option<String>,
    },
    /// A plain frame.
    Plain,
    /// A line that is not JSON.
    Garbage,
}

/// The reference semantics of FRAME-07..09, written as plainly as possible, to compare
/// against the decoder.
#[derive(Default)]
struct Model {
    open: Option<(String, i64, i64, i64, usize)>, // id, count, byteLength, next index, received
}

impl Model {
    fn chunk(
        &mut self,
        id: &str,
        index: i64,
        count: i64,
        byte_length: i64,
        data: &str,
    ) -> Result<bool, FrameError> {
        if id.is_empty()
            || index < 0
            || !(2..=256).contains(&count)
            || index >= count
            || !(1 << 20..=64 << 20).contains(&byte_length)
        {
            return Err(FrameError::InvalidChunkMetadata);
        }
        let bytes = STANDARD
            .decode(data)
            .map_err(|_| FrameError::InvalidChunkData)?;
        if data.is_empty() || STANDARD.encode(&bytes) != data {
            return Err(FrameError::InvalidChunkData);
        }
        if bytes.len() > 256 * 1024 {
            return Err(FrameError::ChunkPayloadTooLarge);
        }
        let open = match self.open.take() {
            None if index != 0 => return Err(FrameError::SequenceStart),
            None => (id.to_owned(), count, byte_length, 0, 0),
            Some(open) => open,
        };
        if open.0 != id || open.1 != count || open.2 != byte_length || open.3 != index {
            return Err(FrameError::SequenceMismatch);
        }
        let received = open.4 + bytes.len();
        if received as i64 > byte_length {
            return Err(FrameError::SequenceExceedsLength);
        }
        if index + 1 < count {
            self.open = Some((open.0, count, byte_length, index + 1, received));
            return Ok(false);
        }
        if received as i64 != byte_length {
            return Err(FrameError::SequenceLengthMismatch);
        }
        Ok(true)
    }
}

/// `reassembler`: structured chunk streams; the decoder's first error (or success) must
/// match the plain model of FRAME-07..09, and nothing may panic.
pub fn reassembler(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(ops) = Vec::<ChunkOp>::arbitrary(&mut u) else {
        return;
    };
    let mut input = Vec::new();
    let mut model = Model::default();
    let mut expected: Option<FrameError> = None;
    let mut completed = 0usize;
    let mut plain = 0usize;
    for op in ops.iter().take(64) {
        match op {
            ChunkOp::Chunk {
                id,
                index,
                count,
                length_step,
                payload_len,
                fill,
                raw_data,
            } => {
                let id = ["a", "b", "rpc-1"][usize::from(*id % 3)];
                let byte_length = (1i64 << 20) + i64::from(*length_step) * 1024;
                let payload = vec![*fill; (*payload_len % (256 * 1024 + 2)) as usize];
                let data = raw_data
                    .clone()
                    .unwrap_or_else(|| STANDARD.encode(&payload));
                let line = json!({"type": "rpc_chunk", "chunkId": id, "index": index, "count": count, "byteLength": byte_length, "data": data});
                input.extend(serde_json::to_vec(&line).expect("serialises"));
                if expected.is_none() {
                    match model.chunk(id, i64::from(*index), i64::from(*count), byte_length, &data)
                    {
                        Ok(true) => completed += 1,
                        Ok(false) => {}
                        Err(e) => expected = Some(e),
                    }
                }
            }
            ChunkOp::Plain => {
                input.extend_from_slice(br#"{"type":"plain"}"#);
                if expected.is_none() {
                    if model.open.is_some() {
                        expected = Some(FrameError::SequenceInterrupted);
                    } else {
                        plain += 1;
                    }
                }
            }
            ChunkOp::Garbage => input.extend_from_slice(b"}{"),
        }
        input.push(b'\n');
    }
    if expected.is_none() && model.open.is_some() {
        expected = Some(FrameError::SequenceTruncated);
    }
    let config = DecoderConfig {
        protocol: ProtocolVersion::V2,
        ..DecoderConfig::default()
    };
    let events = run(&input, &config, &[]);
    late_check_agrees(&input, &config, &[], &events);
    let fatal: Vec<&FrameError> = events
        .iter()
        .filter_map(|e| match e {
            DecodeEvent::Error(e) if e.is_fatal() => Some(e),
            _ => None,
        })
        .collect();
    let frames = events
        .iter()
        .filter(|e| matches!(e, DecodeEvent::Frame(_)))
        .count();
    match expected {
        // A completed payload of fill bytes is not JSON: the model stops there too.
        _ if completed > 0 => assert!(fatal.len() == 1),
        Some(e) => assert_eq!(fatal, vec![&e]),
        None => {
            assert!(fatal.is_empty(), "{fatal:?}");
            assert_eq!(frames, plain);
        }
    }
}

/// `encode_roundtrip`: a JSON object from the input (or one built from its bytes), with a
/// pad that may push it over the line limit, encoded in v1 and v2 and decoded again.
pub fn encode_roundtrip(data: &[u8]) {
    let Some((&pad, rest)) = data.split_first() else {
        return;
    };
    let mut frame = match serde_json::from_slice::<Value>(rest) {
        Ok(Value::Object(map)) => Value::Object(map),
        Ok(other) => json!({"type": "wrapped", "value": other}),
        Err(_) => json!({"type": "text", "text": String::from_utf8_lossy(rest)}),
    };
    if pad & 0x80 != 0 {
        frame["pad"] = Value::String("p".repeat(usize::from(pad & 0x7f) * 9 * 1024));
    }
    for protocol in [ProtocolVersion::V1, ProtocolVersion::V2] {
        let mut encoder = FrameEncoder::new();
        encoder.set_protocol(protocol);
        let bytes = encoder.encode_to_vec(&frame);
        assert!(bytes
            .split(|&c| c == b'\n')
            .all(|line| line.len() < MAX_FRAME_BYTES));
        let config = DecoderConfig {
            protocol,
            ..DecoderConfig::default()
        };
        let events = run(&bytes, &config, &[]);
        late_check_agrees(&bytes, &config, &[], &events);
        assert_eq!(events.len(), 1);
        let DecodeEvent::Frame(decoded) = &events[0] else {
            panic!("round trip gave an error, not a frame");
        };
        let value: Value = decoded.parse().expect("JSON");
        let over = serde_json::to_vec(&frame).map_or(0, |j| j.len()) >= MAX_FRAME_BYTES;
        let mut expected = frame.clone();
        // Over the limit, an agent_end is compacted (nothing was streamed: all messages
        // stay, messageCount is added) in both versions (FRAME-12).
        if over && frame["type"] == "agent_end" {
            if let Some(n) = frame["messages"].as_array().map(Vec::len) {
                expected["messageCount"] = json!(n);
            }
        }
        if protocol == ProtocolVersion::V2 || !over {
            assert!(
                value == expected,
                "{protocol:?} round trip changed the frame"
            );
        }
    }
}
