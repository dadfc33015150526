//! Reassembling v2 chunk sequences (FRAME-08, FRAME-09).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::envelope::ChunkHeader;
use super::error::FrameError;
use super::limits::CHUNK_PAYLOAD_BYTES;

#[derive(Debug)]
struct Pending {
    header: ChunkHeader,
    next_index: u32,
    buf: Vec<u8>,
}

/// Collects the chunks of one logical frame, checking every rule of FRAME-08 and FRAME-09.
///
/// Base64 is decoded straight into the reassembly buffer, and the buffer grows with the data
/// actually received (never beyond the declared byteLength), so a sequence that declares
/// 64 MiB and sends 10 bytes holds 10 bytes. A push whose data does not decode changes
/// nothing; every error is fatal to the stream.
#[derive(Debug, Default)]
pub(crate) struct Reassembler {
    pending: Option<Pending>,
}

/// Decoded length of canonical padded base64 text, or `None` when its length cannot be.
fn decoded_len(data: &[u8]) -> Option<usize> {
    if data.is_empty() || !data.len().is_multiple_of(4) {
        return None;
    }
    let pad = data
        .iter()
        .rev()
        .take(2)
        .take_while(|&&c| c == b'=')
        .count();
    Some(data.len() / 4 * 3 - pad)
}

/// Appends the bytes of canonical padded base64 `data` (whose decoded length is `len`) to
/// `out`; on failure `out` is left as it was. The bulk goes through a SIMD decoder that writes
/// straight into the spare capacity (no zeroing first); the last quantum, which carries the
/// padding and any trailing bits, through one that rejects what is not canonical (FRAME-08).
fn decode_append(data: &[u8], len: usize, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    let (bulk, last) = data.split_at(data.len() - 4);
    let bulk_out = bulk.len() / 4 * 3;
    let mut tail = [0u8; 3];
    let tail_len = len - bulk_out;
    let ok = base64_simd::STANDARD.decode_append(bulk, out).is_ok()
        && out.len() == start + bulk_out
        && matches!(STANDARD.decode_slice(last, &mut tail[..tail_len]), Ok(n) if n == tail_len);
    if ok {
        out.extend_from_slice(&tail[..tail_len]);
    } else {
        out.truncate(start);
    }
    ok
}

impl Reassembler {
    /// Whether a sequence is open.
    pub(crate) fn is_open(&self) -> bool {
        self.pending.is_some()
    }

    /// Bytes held for the open sequence.
    pub(super) fn buffered(&self) -> usize {
        self.pending.as_ref().map_or(0, |p| p.buf.len())
    }

    /// Drops any open sequence.
    pub(super) fn reset(&mut self) {
        self.pending = None;
    }

    /// Adds one chunk whose metadata passed FRAME-07; `data` is its base64 text (`None` when
    /// the member is missing, not a string, or not ASCII). Returns the logical frame's bytes
    /// when this chunk completes it.
    pub(super) fn push(
        &mut self,
        header: ChunkHeader,
        data: Option<&[u8]>,
    ) -> Result<Option<Vec<u8>>, FrameError> {
        let data = data.ok_or(FrameError::InvalidChunkData)?;
        let len = decoded_len(data).ok_or(FrameError::InvalidChunkData)?;
        let (start, in_sequence) = match &self.pending {
            None => (0, header.index == 0),
            Some(p) => (
                p.buf.len(),
                p.header.chunk_id == header.chunk_id
                    && p.header.count == header.count
                    && p.header.byte_length == header.byte_length
                    && p.next_index == header.index,
            ),
        };
        let byte_length = self
            .pending
            .as_ref()
            .map_or(header.byte_length, |p| p.header.byte_length);
        if len > CHUNK_PAYLOAD_BYTES || !in_sequence || start + len > byte_length {
            // Every check fails in the reference's order: the data first.
            STANDARD
                .decode(data)
                .map_err(|_| FrameError::InvalidChunkData)?;
            return Err(if len > CHUNK_PAYLOAD_BYTES {
                FrameError::ChunkPayloadTooLarge
            } else if self.pending.is_none() {
                FrameError::SequenceStart
            } else if !in_sequence {
                FrameError::SequenceMismatch
            } else {
                FrameError::SequenceExceedsLength
            });
        }
        let mut fresh = Vec::new();
        let buf = match &mut self.pending {
            Some(p) => &mut p.buf,
            None => &mut fresh,
        };
        if buf.capacity() < start + len {
            let target = (start + len)
                .max(buf.capacity().saturating_mul(2))
                .min(byte_length);
            buf.reserve_exact(target - start);
        }
        if !decode_append(data, len, buf) {
            return Err(FrameError::InvalidChunkData);
        }
        let pending = self.pending.get_or_insert(Pending {
            header,
            next_index: 0,
            buf: fresh,
        });
        pending.next_index += 1;
        if pending.next_index < pending.header.count {
            return Ok(None);
        }
        let pending = self.pending.take().expect("open sequence");
        if pending.buf.len() != pending.header.byte_length {
            return Err(FrameError::SequenceLengthMismatch);
        }
        Ok(Some(pending.buf))
    }
}
