//! The outbound side: logical frames in, physical lines out (FRAME-11, FRAME-12).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Value;

use super::error::UnsupportedVersion;
use super::limits::{
    ProtocolVersion, CHUNK_PAYLOAD_BYTES, MAX_FRAME_BYTES, MAX_REASSEMBLED_FRAME_BYTES,
};
use super::shrink::{compact_agent_end, overflow_frame, shrink_value, SHRINK_PASSES};

/// Encodes logical frames as an agent writes them.
///
/// In v1 a frame whose line would pass `maxFrameBytes` is brought under it as the reference
/// does (FRAME-12): a response becomes the overflow response; an `agent_end` first drops the
/// leading messages already streamed in identical `message_end` frames; then the seven
/// shrink passes; then `rpc_frame_error`. In v2 such a frame goes out as `rpc_chunk` frames
/// (FRAME-11), produced one line at a time by the returned [`EncodedFrame`].
///
/// ```
/// use musewire_core::frame::{FrameEncoder, ProtocolVersion};
/// let mut encoder = FrameEncoder::new();
/// encoder.set_protocol(ProtocolVersion::V2);
/// let big = serde_json::json!({"type": "response", "data": "x".repeat(2 << 20)});
/// let lines: Vec<Vec<u8>> = encoder.encode(&big).collect();
/// assert_eq!(lines.len(), 9); // 2 MiB + envelope, in 256 KiB chunks
/// assert!(lines.iter().all(|l| l.len() <= 1 << 20 && l.ends_with(b"\n")));
/// ```
#[derive(Debug, Clone, Default)]
pub struct FrameEncoder {
    protocol: Option<ProtocolVersion>,
    chunk_counter: u64,
    streamed: Vec<Value>,
}

/// The physical lines of one logical frame, produced one at a time.
///
/// Holds the frame's JSON text and, while a line is being produced, one chunk: the base64
/// transport of a large frame is never held whole.
#[derive(Debug, Clone)]
pub struct EncodedFrame {
    inner: Inner,
}

#[derive(Debug, Clone)]
enum Inner {
    Single(Option<Vec<u8>>),
    Chunks {
        json: Vec<u8>,
        chunk_id: String,
        index: usize,
        count: usize,
    },
}

/// What the single line of a v1 encoding holds, for the streamed-message bookkeeping.
enum Emitted {
    Original,
    Replaced(Value),
}

fn fits(json: &[u8]) -> bool {
    json.len() < MAX_FRAME_BYTES
}

/// The frame's JSON; a lone surrogate the wire model holds as a stand-in is written back as
/// its escape (`musewire_wire::to_vec`).
fn to_json(value: &Value) -> Vec<u8> {
    crate::wire::to_vec(value).expect("a JSON value serialises")
}

fn with_lf(mut json: Vec<u8>) -> Vec<u8> {
    json.push(b'\n');
    json
}

impl FrameEncoder {
    /// A v1 encoder with chunk ids starting at `rpc-1`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The version in force.
    pub fn protocol(&self) -> ProtocolVersion {
        self.protocol.unwrap_or(ProtocolVersion::V1)
    }

    /// Sets the version in force for the next frames.
    pub fn set_protocol(&mut self, protocol: ProtocolVersion) {
        self.protocol = Some(protocol);
    }

    /// Sets the version from its wire number; any other than 1 or 2 is refused with the
    /// reference's message (FRAME-06).
    pub fn set_protocol_number(&mut self, version: u64) -> Result<(), UnsupportedVersion> {
        let protocol =
            ProtocolVersion::from_number(version).ok_or(UnsupportedVersion(version.to_string()))?;
        self.set_protocol(protocol);
        Ok(())
    }

    /// Encodes one logical frame. Bookkeeping (streamed messages, chunk ids) happens now;
    /// the lines are produced as the returned value is drained, which must be done fully
    /// and in order before the next frame's lines.
    pub fn encode(&mut self, frame: &Value) -> EncodedFrame {
        let frame_type = frame.get("type").and_then(Value::as_str);
        if frame_type == Some("agent_start") {
            self.streamed.clear();
        }
        let json = to_json(frame);
        let mut emitted = Emitted::Original;
        let inner = if self.protocol() == ProtocolVersion::V2 && !fits(&json) {
            let compacted = compact_agent_end(frame, &self.streamed);
            let (value, json) = match &compacted {
                Some(c) => (c, to_json(c)),
                None => (frame, json),
            };
            if fits(&json) {
                Inner::Single(Some(with_lf(json)))
            } else {
                self.chunk_counter += 1;
                let chunk_id = format!("rpc-{}", self.chunk_counter);
                if json.len() > MAX_REASSEMBLED_FRAME_BYTES {
                    Inner::Single(Some(with_lf(to_json(&overflow_frame(value)))))
                } else {
                    let count = json.len().div_ceil(CHUNK_PAYLOAD_BYTES);
                    Inner::Chunks {
                        json,
                        chunk_id,
                        index: 0,
                        count,
                    }
                }
            }
        } else {
            let (line, e) = self.encode_v1(frame, json);
            emitted = e;
            Inner::Single(Some(line))
        };
        match frame_type {
            Some("message_end") => {
                let message = match (self.protocol(), &emitted) {
                    (ProtocolVersion::V2, _) | (_, Emitted::Original) => frame.get("message"),
                    (ProtocolVersion::V1, Emitted::Replaced(v)) => v
                        .get("message")
                        .filter(|_| v.get("type").and_then(Value::as_str) == Some("message_end")),
                };
                if let Some(message) = message {
                    self.streamed.push(message.clone());
                }
            }
            Some("agent_end") if frame.get("willContinue") != Some(&Value::Bool(true)) => {
                self.streamed.clear()
            }
            _ => {}
        }
        EncodedFrame { inner }
    }

    /// Encodes one frame and collects all its lines.
    pub fn encode_to_vec(&mut self, frame: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoded = self.encode(frame);
        while encoded.write_next(&mut out) {}
        out
    }

    fn encode_v1(&self, frame: &Value, json: Vec<u8>) -> (Vec<u8>, Emitted) {
        if fits(&json) {
            return (with_lf(json), Emitted::Original);
        }
        if frame.get("type").and_then(Value::as_str) == Some("response") {
            let overflow = overflow_frame(frame);
            return (with_lf(to_json(&overflow)), Emitted::Replaced(overflow));
        }
        let compacted = compact_agent_end(frame, &self.streamed);
        let base = compacted.as_ref().unwrap_or(frame);
        if compacted.is_some() {
            let json = to_json(base);
            if fits(&json) {
                return (with_lf(json), Emitted::Replaced(base.clone()));
            }
        }
        for pass in SHRINK_PASSES {
            let shrunk = shrink_value(base, pass);
            let json = to_json(&shrunk);
            if fits(&json) {
                return (with_lf(json), Emitted::Replaced(shrunk));
            }
        }
        let overflow = overflow_frame(base);
        (with_lf(to_json(&overflow)), Emitted::Replaced(overflow))
    }
}

impl EncodedFrame {
    /// Appends the next physical line (LF included) to `out`; false when none is left.
    pub fn write_next(&mut self, out: &mut Vec<u8>) -> bool {
        match &mut self.inner {
            Inner::Single(line) => match line.take() {
                Some(line) => {
                    out.extend_from_slice(&line);
                    true
                }
                None => false,
            },
            Inner::Chunks {
                json,
                chunk_id,
                index,
                count,
            } => {
                if *index == *count {
                    return false;
                }
                let start = *index * CHUNK_PAYLOAD_BYTES;
                let payload = &json[start..(start + CHUNK_PAYLOAD_BYTES).min(json.len())];
                write_chunk_line(out, chunk_id, *index, *count, json.len(), payload);
                *index += 1;
                if *index == *count {
                    *json = Vec::new();
                }
                true
            }
        }
    }

    /// Lines still to come.
    pub fn remaining(&self) -> usize {
        match &self.inner {
            Inner::Single(line) => usize::from(line.is_some()),
            Inner::Chunks { index, count, .. } => count - index,
        }
    }

    /// Whether the frame goes out as `rpc_chunk` frames.
    pub fn is_chunked(&self) -> bool {
        matches!(self.inner, Inner::Chunks { .. })
    }
}

impl Iterator for EncodedFrame {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        self.write_next(&mut out).then_some(out)
    }
}

fn write_chunk_line(
    out: &mut Vec<u8>,
    chunk_id: &str,
    index: usize,
    count: usize,
    byte_length: usize,
    payload: &[u8],
) {
    let start = out.len();
    out.extend_from_slice(b"{\"type\":\"rpc_chunk\",\"chunkId\":");
    serde_json::to_writer(&mut *out, chunk_id).expect("a string serialises");
    out.extend_from_slice(
        format!(",\"index\":{index},\"count\":{count},\"byteLength\":{byte_length},\"data\":\"")
            .as_bytes(),
    );
    let at = out.len();
    out.resize(at + payload.len().div_ceil(3) * 4, 0);
    let written = STANDARD
        .encode_slice(payload, &mut out[at..])
        .expect("room for the base64 text");
    out.truncate(at + written);
    out.extend_from_slice(b"\"}\n");
    debug_assert!(out.len() - start <= MAX_FRAME_BYTES);
}
