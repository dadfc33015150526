//! A logical frame as the framing layer hands it up.

use serde::de::DeserializeOwned;

use super::scan::write_compact;

/// One logical frame: the JSON text of an object, with its envelope already read.
///
/// The payload is valid UTF-8 and exactly one JSON object; `type`, `id` and `command` are
/// read without parsing the rest, so a caller that needs only those pays for nothing more.
/// [`Frame::parse`] gives the full typed parse when wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub(crate) payload: Vec<u8>,
    pub(crate) compact: bool,
    /// Whether the scanner saw a `\u` escape that may be a surrogate's (see [`Frame::parse`]).
    pub(crate) surrogate_escape: bool,
    pub(crate) chunked: bool,
    pub(crate) frame_type: Option<String>,
    pub(crate) id: Option<String>,
    pub(crate) command: Option<String>,
}

impl Frame {
    /// The `type` member, when it is a string.
    pub fn frame_type(&self) -> Option<&str> {
        self.frame_type.as_deref()
    }

    /// The `id` member, when it is a string.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The `command` member, when it is a string.
    pub fn command(&self) -> Option<&str> {
        self.command.as_deref()
    }

    /// The frame's JSON text as received (reassembled for a chunked frame; a leading BOM
    /// removed).
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// The frame's JSON text, owned.
    pub fn into_payload(self) -> Vec<u8> {
        self.payload
    }

    /// Whether the payload holds no insignificant whitespace.
    pub fn is_compact(&self) -> bool {
        self.compact
    }

    /// Whether the frame arrived as a v2 chunk sequence.
    pub fn was_chunked(&self) -> bool {
        self.chunked
    }

    /// Appends the frame as compact JSON (no insignificant whitespace; strings and numbers
    /// exactly as received).
    pub fn write_compact(&self, out: &mut Vec<u8>) {
        if self.compact {
            out.extend_from_slice(&self.payload);
        } else {
            write_compact(&self.payload, out);
        }
    }

    /// Parses the whole frame into `T`. A lone surrogate escape, which `JSON.parse` takes,
    /// is read into the wire model's stand-in ([`crate::wire::display_text`]), so every frame
    /// the framing layer passes up parses.
    pub fn parse<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        // The scanner already looked at every `\u` escape: without one that may be a
        // surrogate's, only a plane-16 character (byte 0xF4) needs the mapping.
        let protected =
            crate::wire::surrogate::protect_scanned(&self.payload, self.surrogate_escape);
        let payload = protected.as_deref().unwrap_or(&self.payload);
        // The wire model's reader: serde_json's values, with strings copied once.
        crate::wire::reader::from_slice(payload)
    }
}
