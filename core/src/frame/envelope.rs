//! Reading a frame's envelope: `type`, `id`, `command`, and a chunk's metadata (FRAME-07).
//!
//! A chunk line as the reference writes it (`JSON.stringify` order, no escapes) is read by a
//! fast path that compares fixed text; anything unusual falls back to the JSON scanner, which
//! reads every top-level member as JavaScript would (the last of duplicate keys wins, numbers
//! such as `1.0` or `-0` are integers, lone surrogates count as one code unit).

use super::error::FrameError;
use super::limits::{
    is_safe_integer, MAX_CHUNK_COUNT, MAX_CHUNK_ID_UNITS, MAX_FRAME_BYTES,
    MAX_REASSEMBLED_FRAME_BYTES,
};
use super::scan::{unescape_utf16, Kind, Member};

/// A chunk's metadata, checked against FRAME-07.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChunkHeader {
    /// The chunkId as UTF-16 code units (JavaScript string identity).
    pub chunk_id: Vec<u16>,
    pub index: u32,
    pub count: u32,
    pub byte_length: usize,
}

impl ChunkHeader {
    fn checked(
        chunk_id: Vec<u16>,
        index: f64,
        count: f64,
        byte_length: f64,
    ) -> Result<Self, FrameError> {
        if chunk_id.is_empty()
            || chunk_id.len() > MAX_CHUNK_ID_UNITS
            || !is_safe_integer(index)
            || !is_safe_integer(count)
            || !is_safe_integer(byte_length)
            || index < 0.0
            || count < 2.0
            || count > f64::from(MAX_CHUNK_COUNT)
            || index >= count
            || byte_length < MAX_FRAME_BYTES as f64
            || byte_length > MAX_REASSEMBLED_FRAME_BYTES as f64
        {
            return Err(FrameError::InvalidChunkMetadata);
        }
        Ok(ChunkHeader {
            chunk_id,
            index: index as u32,
            count: count as u32,
            byte_length: byte_length as usize,
        })
    }
}

/// A chunk's `data` member as found on the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChunkData<'a> {
    /// The string's contents, without escapes.
    Plain(&'a [u8]),
    /// The string held escapes; this is its value, or `None` when it is not ASCII (and so
    /// cannot be base64).
    Unescaped(Option<Vec<u8>>),
    /// Missing, or not a string.
    NotString,
}

const FAST_PREFIX: &[u8] = b"{\"type\":\"rpc_chunk\",\"chunkId\":\"";

/// Reads a chunk line written exactly as the reference writes it. `None` means "not in
/// that shape": use the scanner.
pub(crate) fn fast_chunk(line: &[u8]) -> Option<(ChunkHeader, &[u8])> {
    let rest = line.strip_prefix(FAST_PREFIX)?;
    let end = rest.iter().position(|&c| c == b'"')?;
    let id = &rest[..end];
    if !id.iter().all(|&c| (0x20..0x7f).contains(&c) && c != b'\\') {
        return None;
    }
    let rest = rest[end..].strip_prefix(b"\",\"index\":")?;
    let (index, rest) = fast_uint(rest)?;
    let rest = rest.strip_prefix(b",\"count\":")?;
    let (count, rest) = fast_uint(rest)?;
    let rest = rest.strip_prefix(b",\"byteLength\":")?;
    let (byte_length, rest) = fast_uint(rest)?;
    let data = rest.strip_prefix(b",\"data\":\"")?.strip_suffix(b"\"}")?;
    let chunk_id = id.iter().map(|&c| u16::from(c)).collect();
    let header =
        ChunkHeader::checked(chunk_id, index as f64, count as f64, byte_length as f64).ok()?;
    Some((header, data))
}

/// A canonical non-negative integer of at most 15 digits, and the text after it.
fn fast_uint(b: &[u8]) -> Option<(u64, &[u8])> {
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 15 || (digits > 1 && b[0] == b'0') {
        return None;
    }
    let value = b[..digits]
        .iter()
        .fold(0u64, |acc, &c| acc * 10 + u64::from(c - b'0'));
    Some((value, &b[digits..]))
}

/// The top-level members the framing layer reads, collected while scanning (last one wins).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Envelope<'a> {
    pub frame_type: Option<Member<'a>>,
    pub id: Option<Member<'a>>,
    pub command: Option<Member<'a>>,
    chunk_id: Option<Member<'a>>,
    index: Option<Member<'a>>,
    count: Option<Member<'a>>,
    byte_length: Option<Member<'a>>,
    data: Option<Member<'a>>,
}

impl<'a> Envelope<'a> {
    /// Notes one top-level member.
    pub(super) fn note(&mut self, m: Member<'a>) {
        let slot = match key_name(&m) {
            Some("type") => &mut self.frame_type,
            Some("id") => &mut self.id,
            Some("command") => &mut self.command,
            Some("chunkId") => &mut self.chunk_id,
            Some("index") => &mut self.index,
            Some("count") => &mut self.count,
            Some("byteLength") => &mut self.byte_length,
            Some("data") => &mut self.data,
            _ => return,
        };
        *slot = Some(m);
    }

    /// Whether `type` is `"rpc_chunk"`.
    pub(crate) fn is_chunk(&self) -> bool {
        self.frame_type.is_some_and(|m| m.value_is_str("rpc_chunk"))
    }

    /// The chunk's metadata, checked (FRAME-07), and its data member.
    pub(super) fn chunk(&self) -> Result<(ChunkHeader, ChunkData<'a>), FrameError> {
        let chunk_id = match self.chunk_id {
            Some(m) if m.kind == Kind::String => {
                if m.value_escaped {
                    unescape_utf16(m.value)
                } else {
                    String::from_utf8_lossy(m.value).encode_utf16().collect()
                }
            }
            _ => return Err(FrameError::InvalidChunkMetadata),
        };
        let header = ChunkHeader::checked(
            chunk_id,
            number(self.index),
            number(self.count),
            number(self.byte_length),
        )?;
        let data = match self.data {
            Some(m) if m.kind == Kind::String && !m.value_escaped => ChunkData::Plain(m.value),
            Some(m) if m.kind == Kind::String => {
                let units = unescape_utf16(m.value);
                ChunkData::Unescaped(
                    units
                        .iter()
                        .all(|&u| u < 0x80)
                        .then(|| units.iter().map(|&u| u as u8).collect()),
                )
            }
            _ => ChunkData::NotString,
        };
        Ok((header, data))
    }
}

/// The member's key when it is one the envelope reads.
fn key_name(m: &Member<'_>) -> Option<&'static str> {
    const NAMES: [&str; 8] = [
        "type",
        "id",
        "command",
        "chunkId",
        "index",
        "count",
        "byteLength",
        "data",
    ];
    if m.key_escaped {
        NAMES.into_iter().find(|n| m.key_is(n))
    } else {
        NAMES.into_iter().find(|n| m.key == n.as_bytes())
    }
}

/// A number member as JavaScript reads it; NaN (never a safe integer) when absent or not a
/// number.
fn number(m: Option<Member<'_>>) -> f64 {
    match m {
        Some(m) if m.kind == Kind::Number => std::str::from_utf8(m.value)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}
