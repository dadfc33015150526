//! The inbound side: bytes in, logical frames and errors out (FRAME-01..10, FRAME-13).

use std::collections::VecDeque;

use super::envelope::{fast_chunk, ChunkData, Envelope};
use super::error::FrameError;
use super::limits::{ProtocolVersion, MAX_FRAME_BYTES};
use super::line::{Line, LineDecoder};
use super::logical::Frame;
use super::reassembly::Reassembler;
use super::scan::{scan, Kind, Scanned};

/// What the [`StreamDecoder`] hands up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeEvent {
    /// A logical frame.
    Frame(Frame),
    /// A framing error; when [`FrameError::is_fatal`], nothing follows it.
    Error(FrameError),
}

/// How a [`StreamDecoder`] starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecoderConfig {
    /// Physical line limit, LF included (FRAME-02). Default 1,048,576.
    pub max_frame_bytes: usize,
    /// The version in force at the start. Default v1.
    pub protocol: ProtocolVersion,
    /// What a `negotiate_protocol` response does to the version (FRAME-05). Default
    /// [`Negotiation::Follow`].
    pub negotiation: Negotiation,
}

/// What a [`StreamDecoder`] does with a successful `negotiate_protocol` response that names
/// version 2 (FRAME-05).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Negotiation {
    /// Switches to v2 right after that response line, as a client reading its agent does.
    Follow,
    /// Keeps the version in force until [`StreamDecoder::set_protocol`]: for a reader that
    /// tracks its own request (a `Client`).
    Ignore,
}

impl Default for DecoderConfig {
    fn default() -> Self {
        DecoderConfig {
            max_frame_bytes: MAX_FRAME_BYTES,
            protocol: ProtocolVersion::V1,
            negotiation: Negotiation::Follow,
        }
    }
}

/// Counters kept by a [`StreamDecoder`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecoderStats {
    /// Bytes handed in.
    pub bytes: u64,
    /// Logical frames handed up.
    pub frames: u64,
    /// Errors handed up.
    pub errors: u64,
}

/// Decodes an agent's stdout: line splitting, v2 chunk reassembly, envelope reading.
///
/// Feed bytes with [`handle_bytes`](Self::handle_bytes) in any split, end with
/// [`handle_eof`](Self::handle_eof), and drain [`poll_event`](Self::poll_event) after each.
/// The same bytes give the same events however they are split. After a fatal error the
/// decoder ignores further input.
#[derive(Debug)]
pub struct StreamDecoder {
    lines: LineDecoder,
    state: State,
}

#[derive(Debug)]
struct State {
    reassembler: Reassembler,
    protocol: ProtocolVersion,
    follow_negotiation: bool,
    /// Hand up plain lines unchecked (see [`StreamDecoder::check_late`]).
    late_check: bool,
    /// Searchers for what keeps a line from going up unchecked, built once.
    escape: memchr::memmem::Finder<'static>,
    chunk_type: memchr::memmem::Finder<'static>,
    events: VecDeque<DecodeEvent>,
    failed: bool,
    max_frame_bytes: usize,
    stats: DecoderStats,
}

impl Default for StreamDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamDecoder {
    /// A decoder with the default configuration (v1, following negotiation).
    pub fn new() -> Self {
        Self::with_config(DecoderConfig::default())
    }

    /// A decoder with `config`.
    pub fn with_config(config: DecoderConfig) -> Self {
        StreamDecoder {
            lines: LineDecoder::new(config.max_frame_bytes),
            state: State {
                reassembler: Reassembler::default(),
                protocol: config.protocol,
                follow_negotiation: config.negotiation == Negotiation::Follow,
                late_check: false,
                escape: memchr::memmem::Finder::new(b"\\u"),
                chunk_type: memchr::memmem::Finder::new(b"rpc_chunk"),
                events: VecDeque::new(),
                failed: false,
                max_frame_bytes: config.max_frame_bytes,
                stats: DecoderStats::default(),
            },
        }
    }

    /// The version in force.
    pub fn protocol(&self) -> ProtocolVersion {
        self.state.protocol
    }

    /// Sets the version in force, from the next line on.
    pub fn set_protocol(&mut self, protocol: ProtocolVersion) {
        self.state.protocol = protocol;
    }

    /// Whether to switch to v2 after a successful `negotiate_protocol` response (FRAME-05).
    /// A client turns this on when it sends its own negotiation, so the switch happens right
    /// after the response line, before any line that follows it in the same read.
    pub(crate) fn set_follow_negotiation(&mut self, follow: bool) {
        self.state.follow_negotiation = follow;
    }

    /// Hands up plain lines unchecked from now on (by default every line is checked here),
    /// for a consumer that parses every frame anyway and so need not have its JSON read
    /// twice (the typed Client does).
    ///
    /// A line that is valid UTF-8, holds neither `rpc_chunk` nor a `\u` escape,
    /// comes while no chunk sequence is open, and cannot be the negotiation response the
    /// decoder follows, is handed up as it is: a [`Frame`] that is not
    /// [checked](Frame::is_checked), whose envelope reads as absent. So is a reassembled
    /// payload once it is known to be UTF-8. Its consumer parses it, and only when that
    /// parse fails calls [`Frame::check`], which gives the error this decoder would have
    /// handed up in its place ([`FrameError::NotJson`] for a line, the fatal
    /// [`FrameError::ReassembledNotJson`] for a reassembled payload, or the fatal
    /// [`FrameError::NotAnObject`]; after a fatal one the consumer takes nothing more).
    /// Every other line is checked here as always. Such a frame counts in the frames of
    /// [`StreamDecoder::stats`], whatever its check finds.
    pub fn check_late(&mut self) {
        self.state.late_check = true;
    }

    /// Whether a fatal error has ended the stream.
    pub fn is_failed(&self) -> bool {
        self.state.failed
    }

    /// The counters so far.
    pub fn stats(&self) -> DecoderStats {
        self.state.stats
    }

    /// Bytes held: a partial line plus an open chunk sequence.
    pub fn buffered(&self) -> usize {
        self.lines.buffered() + self.state.reassembler.buffered()
    }

    /// Hands in bytes read from the agent's stdout.
    pub fn handle_bytes(&mut self, bytes: &[u8]) {
        self.state.stats.bytes += bytes.len() as u64;
        if self.state.failed {
            return;
        }
        let state = &mut self.state;
        self.lines.push(bytes, &mut |line| state.on_line(line));
    }

    /// Hands in the end of the stream: a last line without LF is a frame (FRAME-01); an open
    /// chunk sequence is an error.
    pub fn handle_eof(&mut self) {
        if self.state.failed {
            return;
        }
        let state = &mut self.state;
        self.lines.finish(&mut |line| state.on_line(line));
        if !self.state.failed && self.state.reassembler.is_open() {
            self.state.fail(FrameError::SequenceTruncated);
        }
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<DecodeEvent> {
        self.state.events.pop_front()
    }
}

impl State {
    fn error(&mut self, error: FrameError) {
        self.stats.errors += 1;
        self.events.push_back(DecodeEvent::Error(error));
    }

    fn fail(&mut self, error: FrameError) {
        self.failed = true;
        self.reassembler.reset();
        self.error(error);
    }

    fn on_line(&mut self, line: Line<'_>) {
        if self.failed {
            return;
        }
        let line = match line {
            Line::TooLong => {
                let limit = self.max_frame_bytes;
                return self.error(FrameError::LineTooLong { limit });
            }
            Line::Text(line) => line,
        };
        if self.protocol == ProtocolVersion::V2 {
            if let Some((header, data)) = fast_chunk(line) {
                // The fast read is exact once the data decodes; when it does not, the push
                // changed nothing and the scanner below decides what is wrong.
                match self.reassembler.push(header, Some(data)) {
                    Ok(Some(payload)) => return self.on_reassembled(payload),
                    Ok(None) => return,
                    Err(FrameError::InvalidChunkData) => {}
                    Err(e) => return self.fail(e),
                }
            }
        }
        // The reference client's reader decodes a plain line lossily: invalid UTF-8 becomes
        // U+FFFD and the frame goes on (FRAME-01). Reassembled payloads stay strict (FRAME-10).
        let lossy;
        let line = if simdutf8::basic::from_utf8(line).is_ok() {
            if self.may_defer(line) {
                return self.push_frame(Frame::unchecked(line.to_vec(), false, false));
            }
            line
        } else {
            lossy = String::from_utf8_lossy(line).into_owned().into_bytes();
            &lossy[..]
        };
        let mut envelope = Envelope::default();
        let scanned = match scan(line, &mut |m| envelope.note(m)) {
            Ok(scanned) => scanned,
            Err(e) => return self.error(not_json(line, e.to_string())),
        };
        if scanned.top == Kind::Object && envelope.is_chunk() {
            if self.protocol != ProtocolVersion::V2 {
                return self.fail(FrameError::ChunkBeforeNegotiation);
            }
            let result = envelope.chunk().and_then(|(header, data)| match data {
                ChunkData::Plain(d) => self.reassembler.push(header, Some(d)),
                ChunkData::Unescaped(d) => self.reassembler.push(header, d.as_deref()),
                ChunkData::NotString => self.reassembler.push(header, None),
            });
            match result {
                Ok(Some(payload)) => self.on_reassembled(payload),
                Ok(None) => {}
                Err(e) => self.fail(e),
            }
            return;
        }
        if self.reassembler.is_open() {
            return self.fail(FrameError::SequenceInterrupted);
        }
        if scanned.top != Kind::Object {
            return self.fail(FrameError::NotAnObject);
        }
        let frame = FrameHead::read(&envelope).into_frame(line.to_vec(), &scanned, false);
        self.push_frame(frame);
    }

    /// Whether a valid UTF-8 `line` may go up unchecked ([`StreamDecoder::check_late`]):
    /// nothing the scan would find in it changes how the decoder goes on. It is no chunk
    /// (it does not hold `rpc_chunk`, nor a `\u` escape that could spell it), no chunk
    /// sequence is open (which any other line would interrupt), and it cannot switch the
    /// protocol (the decoder does not follow a negotiation in v1). Without a `\u` escape
    /// the scan would also find no surrogate escape.
    fn may_defer(&self, line: &[u8]) -> bool {
        self.checks_late()
            && !self.reassembler.is_open()
            && self.escape.find(line).is_none()
            && self.chunk_type.find(line).is_none()
    }

    fn on_reassembled(&mut self, mut payload: Vec<u8>) {
        // The reference decodes with TextDecoder, which drops a leading BOM.
        if payload.starts_with(b"\xef\xbb\xbf") {
            payload.drain(..3);
        }
        if simdutf8::basic::from_utf8(&payload).is_err() {
            return self.fail(FrameError::ReassembledNotUtf8);
        }
        // What follows a reassembled payload does not depend on its envelope: checking late,
        // it goes up unchecked, and its check gives the fatal errors later. Unscanned, a `\u`
        // escape anywhere may be a surrogate's (one starting `\ud`); checked here, the scan
        // says.
        let late = self.checks_late();
        let surrogate_escape = late
            && self
                .escape
                .find_iter(&payload)
                .any(|at| matches!(payload.get(at + 2), Some(b'd' | b'D')));
        let mut frame = Frame::unchecked(payload, true, surrogate_escape);
        if !late {
            if let Err(error) = frame.check() {
                return self.fail(error);
            }
        }
        self.push_frame(frame);
    }

    /// Whether frames may go up unchecked now: the late check is on, and the decoder does
    /// not follow a negotiation in v1 (it must read that response to switch).
    fn checks_late(&self) -> bool {
        self.late_check && !(self.follow_negotiation && self.protocol == ProtocolVersion::V1)
    }

    fn push_frame(&mut self, frame: Frame) {
        if self.follow_negotiation
            && self.protocol == ProtocolVersion::V1
            && frame.frame_type() == Some("response")
            && frame.command() == Some("negotiate_protocol")
            && negotiated_v2(&frame)
        {
            self.protocol = ProtocolVersion::V2;
        }
        self.stats.frames += 1;
        self.events.push_back(DecodeEvent::Frame(frame));
    }
}

/// The envelope strings of a frame, read before its payload moves into it.
pub(super) struct FrameHead {
    pub(super) frame_type: Option<String>,
    pub(super) id: Option<String>,
    pub(super) command: Option<String>,
}

impl FrameHead {
    pub(super) fn read(envelope: &Envelope<'_>) -> Self {
        FrameHead {
            frame_type: envelope.frame_type.and_then(|m| m.string_value()),
            id: envelope.id.and_then(|m| m.string_value()),
            command: envelope.command.and_then(|m| m.string_value()),
        }
    }

    fn into_frame(self, payload: Vec<u8>, scanned: &Scanned, chunked: bool) -> Frame {
        Frame {
            payload,
            checked: true,
            compact: scanned.compact,
            surrogate_escape: scanned.surrogate_escape,
            chunked,
            frame_type: self.frame_type,
            id: self.id,
            command: self.command,
        }
    }
}

/// Whether a `negotiate_protocol` response is a success naming version 2 (FRAME-05).
fn negotiated_v2(frame: &Frame) -> bool {
    let Ok(value) = frame.parse::<serde_json::Value>() else {
        return false;
    };
    value.get("success") == Some(&serde_json::Value::Bool(true))
        && value
            .get("data")
            .and_then(|d| d.get("protocolVersion"))
            .and_then(serde_json::Value::as_f64)
            == Some(2.0)
}

pub(super) fn not_json(line: &[u8], detail: String) -> FrameError {
    let cut = line.len().min(64);
    FrameError::NotJson {
        detail,
        prefix: String::from_utf8_lossy(&line[..cut]).into_owned(),
    }
}
