//! A logical frame as the framing layer hands it up.

use serde::de::DeserializeOwned;

use super::envelope::Envelope;
use super::error::FrameError;
use super::scan::{scan, write_compact, Kind};

/// One logical frame: the JSON text of an object, with its envelope already read.
///
/// The payload is valid UTF-8 and exactly one JSON object; `type`, `id` and `command` are
/// read without parsing the rest, so a caller that needs only those pays for nothing more.
/// [`Frame::parse`] gives the full typed parse when wanted.
///
/// A decoder told to check late ([`StreamDecoder::check_late`]) hands up some frames
/// unchecked ([`Frame::is_checked`] false): a plain line whose JSON was not looked at yet,
/// whose envelope reads as absent. Its consumer parses it first and calls [`Frame::check`]
/// only when that parse fails; see there.
///
/// [`StreamDecoder::check_late`]: super::StreamDecoder::check_late
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub(crate) payload: Vec<u8>,
    /// Whether the payload was scanned (its JSON checked, its envelope read).
    pub(crate) checked: bool,
    pub(crate) compact: bool,
    /// Whether the scanner saw a `\u` escape that may be a surrogate's (see [`Frame::parse`]).
    pub(crate) surrogate_escape: bool,
    pub(crate) chunked: bool,
    pub(crate) frame_type: Option<String>,
    pub(crate) id: Option<String>,
    pub(crate) command: Option<String>,
}

impl Frame {
    /// A payload handed up unchecked (see [`StreamDecoder::check_late`]): valid UTF-8,
    /// `chunked` when reassembled, `surrogate_escape` unless it holds no `\u` escape.
    ///
    /// [`StreamDecoder::check_late`]: super::StreamDecoder::check_late
    pub(crate) fn unchecked(payload: Vec<u8>, chunked: bool, surrogate_escape: bool) -> Frame {
        Frame {
            payload,
            checked: false,
            compact: false,
            surrogate_escape,
            chunked,
            frame_type: None,
            id: None,
            command: None,
        }
    }

    /// Whether the frame's JSON was checked and its envelope read. Only a decoder told to
    /// check late hands up unchecked frames.
    pub fn is_checked(&self) -> bool {
        self.checked
    }

    /// Checks an unchecked frame as the decoder would have (FRAME-01, FRAME-10): reads its
    /// envelope, or gives the error the decoder would have handed up in its place: for a
    /// line, [`FrameError::NotJson`] (the line is skipped, the stream goes on); for a
    /// reassembled payload, the fatal [`FrameError::ReassembledNotJson`]; for either,
    /// [`FrameError::NotAnObject`] (fatal, FRAME-13: nothing after a fatal error counts). A
    /// frame already checked is left as it is.
    ///
    /// A consumer that parses an unchecked frame into a type that takes only a JSON object,
    /// with a parser at least as strict as the scan (the wire model's `AgentFrame` is: it
    /// reads only maps, and takes only what serde_json takes), need call this only when
    /// that parse fails: a parse that succeeds has shown the payload is one JSON object.
    /// Its envelope is then in the parsed value; where a member is written twice the
    /// framing layer reads the last, as JavaScript does.
    ///
    /// The decoder does not learn of an error a late check finds: it goes on decoding what
    /// follows (its consumer takes nothing after a fatal one) and counts the frame as a
    /// frame in its stats.
    pub fn check(&mut self) -> Result<(), FrameError> {
        if self.checked {
            return Ok(());
        }
        let mut envelope = Envelope::default();
        let scanned = match scan(&self.payload, &mut |m| envelope.note(m)) {
            Ok(scanned) => scanned,
            Err(e) if self.chunked => {
                return Err(FrameError::ReassembledNotJson {
                    detail: e.to_string(),
                })
            }
            Err(e) => return Err(super::decoder::not_json(&self.payload, e.to_string())),
        };
        if scanned.top != Kind::Object {
            return Err(FrameError::NotAnObject);
        }
        let head = super::decoder::FrameHead::read(&envelope);
        self.compact = scanned.compact;
        self.surrogate_escape = scanned.surrogate_escape;
        self.frame_type = head.frame_type;
        self.id = head.id;
        self.command = head.command;
        self.checked = true;
        Ok(())
    }

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

    /// Whether the payload holds no insignificant whitespace (false while the frame is
    /// unchecked: not looked at yet).
    pub fn is_compact(&self) -> bool {
        self.compact && self.checked
    }

    /// Whether the frame arrived as a v2 chunk sequence.
    pub fn was_chunked(&self) -> bool {
        self.chunked
    }

    /// Appends the frame as compact JSON (no insignificant whitespace; strings and numbers
    /// exactly as received).
    pub fn write_compact(&self, out: &mut Vec<u8>) {
        if self.compact && self.checked {
            out.extend_from_slice(&self.payload);
        } else {
            write_compact(&self.payload, out);
        }
    }

    /// Parses the whole frame into `T`. A lone surrogate escape, which `JSON.parse` takes,
    /// is read into the wire model's stand-in ([`musewire_wire::display_text`]), so every frame
    /// the framing layer passes up parses.
    pub fn parse<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        // The scanner already looked at every `\u` escape: without one that may be a
        // surrogate's, only a plane-16 character (byte 0xF4) needs the mapping.
        let protected =
            musewire_wire::__private::protect_scanned(&self.payload, self.surrogate_escape);
        let payload = protected.as_deref().unwrap_or(&self.payload);
        // The wire model's reader: serde_json's values, with strings copied once.
        musewire_wire::__private::from_slice(payload)
    }
}
