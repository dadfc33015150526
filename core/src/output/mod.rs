//! Stored-output reads (OUT-03, OUT-04, OUT-05, OUT-07; seed `000_e10f2c33e5f11cff.txt`),
//! pure.
//!
//! A stored output (a spilled tool result, for one) is named by a reference the store issued,
//! an [`OutputRef`] (`out-` and 16 lowercase hex digits), never by a path or a URI from the
//! caller. Reading it is three steps:
//!
//! 1. [`ReadParams::from_value`] checks the request's params exactly (OUT-03);
//! 2. [`OutputCatalog::plan_read`] checks the reference against what the store issued and
//!    the offset against the output's length (OUT-07), and gives the read as an action,
//!    [`OutputRead`]: which output, which range, by when. Nothing is read on a failure;
//! 3. the driver performs it with a positioned read and [`read_result`] builds the answer
//!    from the bytes read (OUT-04, OUT-05).
//!
//! The host side pages through an output with a [`ReaderWalk`]: it asks page by page,
//! advancing by each page's returned `byteLen` (never the requested length) until `eof`, and
//! hands back each page's decoded bytes, so the pages put together are the output exactly.
//!
//! ## Decisions written down (ours, see `conformance/RULES.md` OUT-09)
//!
//! * `offsetBytes` is required; a number with a zero fraction (`3.0`) counts as the integer
//!   it is equal to, as it does for the JavaScript peers; unknown members are ignored.
//! * An offset is in range when it is below the output's length; an empty output is read
//!   at offset 0 only (one empty page, `eof`).
//! * Text is an output whose media type is `text/*`, `application/json` or `*+json`. A text
//!   page starting on a UTF-8 continuation byte is refused; a page ending inside a character
//!   stops before that character (a shorter `byteLen`; the next page starts on it); a page
//!   too short to hold the character at its start is refused; a page whose bytes are not
//!   UTF-8 goes as base64. No replacement character is ever made.
//!
//! ```
//! use std::time::Instant;
//! use musewire_core::output::*;
//! use musewire_wire::output::{Availability, OutputRef, StoredOutput};
//! use serde_json::json;
//!
//! let output_ref = OutputRef::from_random([0xab; 8]);
//! let mut catalog = OutputCatalog::default();
//! catalog.insert(StoredOutput {
//!     session_id: "s".into(), item_id: "call-1".into(), output_ref: output_ref.clone(),
//!     byte_len: 5, media_type: TEXT_MEDIA_TYPE.into(), availability: Availability::Available,
//! });
//! let stored = b"h\xC3\xA9llo"[..5].to_vec(); // "héll": 5 bytes
//!
//! let mut walk = ReaderWalk::new("s", "call-1", output_ref, 2).unwrap();
//! let mut whole = Vec::new();
//! while let Some(params) = walk.next_params() {
//!     let params = ReadParams::from_value(&params.to_value()).unwrap();
//!     let read = catalog.plan_read(&params, Instant::now()).unwrap();
//!     // The driver: a positioned read of `read.request`'s range.
//!     let start = read.request.offset_bytes as usize;
//!     let end = (start + read.request.length_bytes as usize).min(stored.len());
//!     let result = read_result(&read.request, &stored[start..end], 5).unwrap();
//!     whole.extend(walk.handle(&result).unwrap());
//! }
//! assert_eq!(whole, stored);
//! ```

#[cfg(feature = "fuzzing")]
pub mod fuzzing;

pub(crate) use musewire_wire::output::{
    Availability, Encoding, OutputError, OutputErrorCode, OutputRef, ReadResult, StoredOutput,
    READ_BUDGET,
};

use std::collections::BTreeMap;
use std::time::Instant;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The read method's name in the Muse adapter protocol (OUT-01).
#[cfg(feature = "acp")]
pub(crate) const READ_METHOD: &str = "_muse/readOutput";

/// The version of `read_output`, musewire's extension of the RPC protocol (OUT-10): what an
/// agent's ready frame offers and what a host speaks.
pub(crate) const READ_OUTPUT_VERSION: u64 = 1;

/// The most bytes one read may ask for (OUT-03).
pub const MAX_READ_BYTES: u64 = 1_048_576;

/// The length of a read that names none (OUT-03).
pub(crate) const DEFAULT_READ_BYTES: u64 = 65_536;

/// The largest safe integer of JavaScript, 2^53 − 1: the largest offset (OUT-03).
pub(crate) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The media type of spilled tool text.
pub const TEXT_MEDIA_TYPE: &str = "text/plain; charset=utf-8";

/// A read's params, checked (OUT-03). Read from JSON only through
/// [`ReadParams::from_value`], which checks them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadParams {
    /// The session the output belongs to.
    pub session_id: String,
    /// The item (tool call) the output belongs to.
    pub item_id: String,
    /// The store-issued reference (OUT-09), checked as such before any lookup.
    pub output_ref: OutputRef,
    /// Where to start, in bytes.
    pub offset_bytes: u64,
    /// How many bytes to read at most (1..=[`MAX_READ_BYTES`]).
    pub length_bytes: u64,
}

impl ReadParams {
    /// Checks params exactly (OUT-03, OUT-07): ids non-empty strings, `outputRef` a
    /// reference, `offsetBytes` a non-negative safe integer, `lengthBytes` absent (65,536)
    /// or 1..=1,048,576.
    pub fn from_value(params: &Value) -> Result<Self, OutputError> {
        let Some(map) = params.as_object() else {
            return Err(OutputError::param("params", "not an object"));
        };
        let session_id = id(map, "sessionId")?;
        let item_id = id(map, "itemId")?;
        let output_ref = match map.get("outputRef") {
            Some(Value::String(text)) => OutputRef::parse(text)?,
            Some(_) => return Err(OutputError::param("outputRef", "not a string")),
            None => return Err(OutputError::param("outputRef", "missing")),
        };
        let offset_bytes = match map.get("offsetBytes") {
            Some(value) => safe_integer(value).ok_or_else(|| {
                OutputError::param("offsetBytes", "not a non-negative safe integer")
            })?,
            None => return Err(OutputError::param("offsetBytes", "missing")),
        };
        let length_bytes = match map.get("lengthBytes") {
            None => DEFAULT_READ_BYTES,
            Some(value) => safe_integer(value)
                .filter(|n| (1..=MAX_READ_BYTES).contains(n))
                .ok_or_else(|| {
                    OutputError::param("lengthBytes", "not an integer from 1 to 1048576")
                })?,
        };
        Ok(ReadParams {
            session_id,
            item_id,
            output_ref,
            offset_bytes,
            length_bytes,
        })
    }

    /// The params as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The `read_output` command asking for these params (OUT-10).
impl From<&ReadParams> for crate::wire::ReadOutput {
    fn from(params: &ReadParams) -> Self {
        crate::wire::ReadOutput {
            session_id: params.session_id.clone(),
            item_id: params.item_id.clone(),
            output_ref: params.output_ref.as_str().to_owned(),
            offset_bytes: params.offset_bytes,
            length_bytes: Some(params.length_bytes),
            ..crate::wire::ReadOutput::default()
        }
    }
}

fn id(map: &Map<String, Value>, field: &str) -> Result<String, OutputError> {
    match map.get(field) {
        Some(Value::String(text)) if !text.is_empty() => Ok(text.clone()),
        Some(Value::String(_)) => Err(OutputError::param(field, "empty")),
        Some(_) => Err(OutputError::param(field, "not a string")),
        None => Err(OutputError::param(field, "missing")),
    }
}

/// A JSON number that is a non-negative safe integer (JavaScript's `Number.isSafeInteger`
/// and `>= 0`).
fn safe_integer(value: &Value) -> Option<u64> {
    let Value::Number(number) = value else {
        return None;
    };
    if let Some(n) = number.as_u64() {
        return (n <= MAX_SAFE_INTEGER).then_some(n);
    }
    if number.is_i64() {
        return None; // negative
    }
    let f = number.as_f64()?;
    // -0.0 is a safe integer equal to 0.
    (f.is_finite() && f.fract() == 0.0 && (-0.0..=MAX_SAFE_INTEGER as f64).contains(&f))
        .then_some(f as u64)
}

/// A positioned read's answer, from the driver (the local store's `LocalStore::read`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadBytes {
    /// The bytes at the requested offset: the requested length, or less at the end.
    pub bytes: Vec<u8>,
    /// The stored output's length.
    pub total_len: u64,
}

/// The member of a tool result's `details` that carries its [`StoredOutput`] (OUT-02,
/// OUT-10; read typed by [`musewire_wire::ToolResultDetails`]).
pub(crate) const STORED_OUTPUT_MEMBER: &str = "storedOutput";

/// The stored outputs a history names (OUT-08, history replay): every `toolResult` message
/// whose `details` carry a well-formed `storedOutput` for that message's own tool
/// call (`itemId` = `toolCallId`), in order. Anything else is skipped.
pub fn stored_outputs_in_history<'a>(
    messages: impl IntoIterator<Item = &'a Value>,
) -> Vec<StoredOutput> {
    use crate::wire::ToolResultMessage;
    messages
        .into_iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("toolResult"))
        .filter_map(|m| ToolResultMessage::deserialize(m).ok())
        .filter_map(|message| {
            // The typed reading of `details` (`ToolResultMessage::stored_output`).
            let output = message.stored_output()?;
            (output.item_id == message.tool_call_id).then_some(output)
        })
        .collect()
}

/// The stored outputs a reader knows, by reference.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputCatalog {
    outputs: BTreeMap<OutputRef, StoredOutput>,
}

impl OutputCatalog {
    /// Records an output (a newer record of the same reference replaces the older).
    pub fn insert(&mut self, output: StoredOutput) {
        self.outputs.insert(output.output_ref.clone(), output);
    }

    /// An output's record.
    pub fn get(&self, output_ref: &OutputRef) -> Option<&StoredOutput> {
        self.outputs.get(output_ref)
    }

    /// Marks an output as no longer readable; whether it was known.
    pub fn set_availability(&mut self, output_ref: &OutputRef, availability: Availability) -> bool {
        match self.outputs.get_mut(output_ref) {
            Some(output) => {
                output.availability = availability;
                true
            }
            None => false,
        }
    }

    /// How many outputs are recorded.
    pub fn len(&self) -> usize {
        self.outputs.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.outputs.is_empty()
    }

    /// Checks a read against the records (OUT-07) and gives it as an action due within
    /// 20 s after `now` (OUT-07). On an error nothing is to be read.
    pub fn plan_read(&self, params: &ReadParams, now: Instant) -> Result<OutputRead, OutputError> {
        let output = self
            .outputs
            .get(&params.output_ref)
            .ok_or(OutputError::Unknown)?;
        if output.session_id != params.session_id || output.item_id != params.item_id {
            return Err(OutputError::Foreign);
        }
        match output.availability {
            Availability::Available => {}
            Availability::Expired => return Err(OutputError::Expired),
            Availability::Unavailable => return Err(OutputError::Unavailable),
        }
        check_offset(params.offset_bytes, output.byte_len)?;
        Ok(OutputRead {
            request: ReadRequest {
                session_id: params.session_id.clone(),
                item_id: params.item_id.clone(),
                output_ref: params.output_ref.clone(),
                offset_bytes: params.offset_bytes,
                length_bytes: params.length_bytes,
                media_type: output.media_type.clone(),
            },
            deadline: now + READ_BUDGET,
        })
    }
}

/// Whether `offset` is within an output of `byte_len` bytes (OUT-07): below its length, or
/// 0 for an empty one.
pub fn check_offset(offset: u64, byte_len: u64) -> Result<(), OutputError> {
    if offset < byte_len || offset == 0 {
        Ok(())
    } else {
        Err(OutputError::OffsetOutOfRange { offset, byte_len })
    }
}

/// Which stored bytes to read: the serialisable part of an [`OutputRead`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadRequest {
    /// The session the output was stored under (`storedOutput.sessionId`).
    pub session_id: String,
    /// The tool call whose result was stored (`storedOutput.itemId`).
    pub item_id: String,
    /// The store-issued reference of the output to read (OUT-09).
    pub output_ref: OutputRef,
    /// Where to start.
    pub offset_bytes: u64,
    /// How many bytes at most.
    pub length_bytes: u64,
    /// The output's media type.
    pub media_type: String,
}

/// The action: read `request`'s range with a positioned read, by `deadline`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputRead {
    /// What to read.
    pub request: ReadRequest,
    /// When the read is to be given up.
    pub deadline: Instant,
}

/// Whether a media type is text (`text/*`, `application/json`, `*+json`), its parameters
/// aside.
pub(crate) fn is_text_media_type(media_type: &str) -> bool {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence.starts_with("text/") || essence == "application/json" || essence.ends_with("+json")
}

/// Builds a read's answer from the bytes read at `request.offset_bytes` of an output of
/// `total_len` bytes (OUT-04, OUT-05). `bytes` must be the range asked for, shortened only by
/// the output's end.
pub fn read_result(
    request: &ReadRequest,
    bytes: &[u8],
    total_len: u64,
) -> Result<ReadResult, OutputError> {
    let offset = request.offset_bytes;
    check_offset(offset, total_len)?;
    let len = bytes.len() as u64;
    let expected = request.length_bytes.min(total_len - offset);
    if len != expected {
        return Err(OutputError::BadRead {
            reason: format!("{len} bytes for a range of {expected}"),
        });
    }
    let mut page = bytes;
    let mut text = None;
    if is_text_media_type(&request.media_type) {
        // OUT-05: never start inside a character.
        if page.first().is_some_and(|b| (0x80..0xC0).contains(b)) {
            return Err(OutputError::OffsetInsideCharacter { offset });
        }
        let at_end = offset + len == total_len;
        match std::str::from_utf8(page) {
            Ok(valid) => text = Some(valid),
            // The range stops inside a character: stop before it.
            Err(e) if e.error_len().is_none() && !at_end => {
                if e.valid_up_to() == 0 {
                    return Err(OutputError::LengthInsideCharacter {
                        offset,
                        length: request.length_bytes,
                    });
                }
                page = &page[..e.valid_up_to()];
                text = std::str::from_utf8(page).ok();
            }
            // Not UTF-8: the bytes as they are, base64.
            Err(_) => {}
        }
    }
    let (content, encoding) = match text {
        Some(text) => (text.to_owned(), Encoding::Utf8),
        None => (
            base64::engine::general_purpose::STANDARD.encode(page),
            Encoding::Base64,
        ),
    };
    let byte_len = page.len() as u64;
    Ok(ReadResult {
        session_id: request.session_id.clone(),
        item_id: request.item_id.clone(),
        output_ref: request.output_ref.clone(),
        content,
        encoding,
        media_type: request.media_type.clone(),
        offset_bytes: offset,
        byte_len,
        eof: offset + byte_len == total_len,
    })
}

/// What a page handed to a [`ReaderWalk`] got wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WalkError {
    /// The walk is over.
    #[error("the walk has ended")]
    Done,
    /// The page names another session, item or reference.
    #[error("the page is for another output")]
    OtherOutput,
    /// The page starts elsewhere than asked.
    #[error("the page starts at {got}, not {expected}")]
    WrongOffset {
        /// Where the walk is.
        expected: u64,
        /// Where the page starts.
        got: u64,
    },
    /// The page is longer than asked for.
    #[error("the page holds {got} bytes, more than the {asked} asked for")]
    TooLong {
        /// The most bytes a page may hold: the walk's page size.
        asked: u64,
        /// The page's `byteLen`.
        got: u64,
    },
    /// The content does not decode to `byteLen` bytes.
    #[error("the page's content is not {byte_len} bytes of {encoding:?}")]
    BadContent {
        /// The page's `byteLen`.
        byte_len: u64,
        /// The encoding the page claims for its `content`.
        encoding: Encoding,
    },
    /// An empty page before the end: the walk would never end.
    #[error("an empty page before eof")]
    NoProgress,
}

/// The host's walk through a stored output (OUT-04): page by page, each asked at the
/// offset the previous one ended (advancing by the returned `byteLen`), until `eof`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderWalk {
    session_id: String,
    item_id: String,
    output_ref: OutputRef,
    page_bytes: u64,
    offset: u64,
    done: bool,
}

impl ReaderWalk {
    /// A walk asking `page_bytes` (1..=[`MAX_READ_BYTES`]) a page.
    pub fn new(
        session_id: impl Into<String>,
        item_id: impl Into<String>,
        output_ref: OutputRef,
        page_bytes: u64,
    ) -> Result<Self, OutputError> {
        if !(1..=MAX_READ_BYTES).contains(&page_bytes) {
            return Err(OutputError::param(
                "lengthBytes",
                "not an integer from 1 to 1048576",
            ));
        }
        Ok(ReaderWalk {
            session_id: session_id.into(),
            item_id: item_id.into(),
            output_ref,
            page_bytes,
            offset: 0,
            done: false,
        })
    }

    /// The next read to ask for, or `None` when the walk is over.
    pub fn next_params(&self) -> Option<ReadParams> {
        (!self.done).then(|| ReadParams {
            session_id: self.session_id.clone(),
            item_id: self.item_id.clone(),
            output_ref: self.output_ref.clone(),
            offset_bytes: self.offset,
            length_bytes: self.page_bytes,
        })
    }

    /// Takes the answer to [`ReaderWalk::next_params`]: the page's bytes, to append to what
    /// came before. A wrong page changes nothing.
    pub fn handle(&mut self, page: &ReadResult) -> Result<Vec<u8>, WalkError> {
        if self.done {
            return Err(WalkError::Done);
        }
        if page.session_id != self.session_id
            || page.item_id != self.item_id
            || page.output_ref != self.output_ref
        {
            return Err(WalkError::OtherOutput);
        }
        if page.offset_bytes != self.offset {
            return Err(WalkError::WrongOffset {
                expected: self.offset,
                got: page.offset_bytes,
            });
        }
        if page.byte_len > self.page_bytes {
            return Err(WalkError::TooLong {
                asked: self.page_bytes,
                got: page.byte_len,
            });
        }
        let bytes = page
            .bytes()
            .ok()
            .filter(|b| b.len() as u64 == page.byte_len)
            .ok_or(WalkError::BadContent {
                byte_len: page.byte_len,
                encoding: page.encoding,
            })?;
        if bytes.is_empty() && !page.eof {
            return Err(WalkError::NoProgress);
        }
        self.offset += page.byte_len;
        self.done = page.eof;
        Ok(bytes)
    }

    /// Where the next page starts: the bytes received so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Whether the last page came.
    pub fn is_done(&self) -> bool {
        self.done
    }
}
