//! The transport limits of the protocol (FRAME-02, FRAME-07, FRAME-11).

/// Maximum size of one physical frame, including its LF (FRAME-02).
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;
/// Maximum size of one logical frame reassembled from v2 chunks (FRAME-07).
pub(crate) const MAX_REASSEMBLED_FRAME_BYTES: usize = 64 * 1024 * 1024;
/// Payload bytes carried by one `rpc_chunk` frame; the last chunk may carry fewer (FRAME-08, 11).
pub const CHUNK_PAYLOAD_BYTES: usize = 256 * 1024;
/// Most chunks one logical frame may be split into: 64 MiB / 256 KiB (FRAME-07).
pub(crate) const MAX_CHUNK_COUNT: u32 = (MAX_REASSEMBLED_FRAME_BYTES / CHUNK_PAYLOAD_BYTES) as u32;
/// Longest `chunkId`, in UTF-16 code units as the reference counts them (FRAME-07).
pub(crate) const MAX_CHUNK_ID_UNITS: usize = 128;
/// Largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Whether JavaScript's `Number.isSafeInteger` holds for `x`: finite, integral, and at most
/// [`MAX_SAFE_INTEGER`] in magnitude. The one safe-integer check every rule uses (chunk
/// metadata, FRAME-07; cursor fields and page limits, PAGE-01, 03; `totalMessages`).
pub(crate) fn is_safe_integer(x: f64) -> bool {
    x.is_finite() && x.fract() == 0.0 && x.abs() <= MAX_SAFE_INTEGER
}

/// A JSON number that JavaScript reads as a safe non-negative integer (`5`, `5.0`, `5e0`,
/// `-0`); `None` for anything else.
pub(crate) fn non_negative_safe_integer(value: &serde_json::Value) -> Option<u64> {
    let x = value.as_number()?.as_f64()?;
    // `-0` passes as 0; every other negative fails.
    (is_safe_integer(x) && x > -1.0).then_some(x.abs() as u64)
}

/// The protocol version in force on a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// One JSON object per line; frames over the limit are shrunk (FRAME-12).
    V1,
    /// As v1, and frames over the limit travel as `rpc_chunk` frames (FRAME-11).
    V2,
}

impl serde::Serialize for ProtocolVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.number())
    }
}

impl ProtocolVersion {
    /// The number used on the wire (`1` or `2`).
    pub(crate) fn number(self) -> u32 {
        match self {
            ProtocolVersion::V1 => 1,
            ProtocolVersion::V2 => 2,
        }
    }

    /// The version for a wire number, if the protocol has it.
    pub(crate) fn from_number(n: u64) -> Option<Self> {
        match n {
            1 => Some(ProtocolVersion::V1),
            2 => Some(ProtocolVersion::V2),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn safe_integers_as_javascript_reads_them() {
        assert!(is_safe_integer(MAX_SAFE_INTEGER));
        assert!(is_safe_integer(-MAX_SAFE_INTEGER));
        assert!(!is_safe_integer(MAX_SAFE_INTEGER + 1.0));
        assert!(!is_safe_integer(1.5));
        assert!(!is_safe_integer(f64::NAN));
        assert!(!is_safe_integer(f64::INFINITY));
        for (value, expected) in [
            (json!(5), Some(5)),
            (json!(5.0), Some(5)),
            (json!(-0.0), Some(0)),
            (json!(9_007_199_254_740_991u64), Some(9_007_199_254_740_991)),
            (json!(9_007_199_254_740_992u64), None),
            (json!(-1), None),
            (json!(0.5), None),
            (json!("5"), None),
            (json!(null), None),
        ] {
            assert_eq!(non_negative_safe_integer(&value), expected, "{value}");
        }
    }
}
