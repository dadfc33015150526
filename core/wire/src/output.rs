//! The data of stored-output reads (OUT-02..OUT-10): the reference the store issues, what a
//! tool result's `details` say of a stored output, a read's answer and what a read failed on.
//! The checks and the reads themselves are the core's (`musewire_core::output`).

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

pub use crate::output_code::OutputErrorCode;

/// How long a driver may take over one read (the seed's read budget, OUT-07).
pub const READ_BUDGET: Duration = Duration::from_secs(20);

/// What a stored-output read failed on. Nothing was read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum OutputError {
    /// A param is missing or out of its range (OUT-03).
    #[error("invalid {field}: {reason}")]
    InvalidParams {
        /// The param's wire name.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The reference is a path, not a reference (OUT-07).
    #[error("outputRef is a path, not an output reference")]
    PathNotReference,
    /// The reference is a URI, not a reference (OUT-07).
    #[error("outputRef is a URI, not an output reference")]
    UriNotReference,
    /// No such reference was issued (OUT-07).
    #[error("unknown output reference")]
    Unknown,
    /// The reference belongs to another session or item (OUT-07).
    #[error("the output reference belongs to another session or item")]
    Foreign,
    /// The stored output expired (OUT-07).
    #[error("the stored output has expired")]
    Expired,
    /// The stored output can't be served (OUT-07).
    #[error("the stored output is unavailable")]
    Unavailable,
    /// The offset is not within the output (OUT-07).
    #[error("offset {offset} is out of range for an output of {byte_len} bytes")]
    OffsetOutOfRange {
        /// The offset asked for.
        offset: u64,
        /// The output's length.
        byte_len: u64,
    },
    /// A text read starts inside a UTF-8 character (OUT-05).
    #[error("offset {offset} is inside a UTF-8 character")]
    OffsetInsideCharacter {
        /// The offset asked for.
        offset: u64,
    },
    /// A text read is too short for the character at its offset (OUT-05, ours).
    #[error("a {length}-byte read at {offset} can't hold the UTF-8 character there")]
    LengthInsideCharacter {
        /// The offset asked for.
        offset: u64,
        /// The length asked for.
        length: u64,
    },
    /// The bytes a driver read are not the range asked for (a driver bug).
    #[error("the read returned bytes outside the requested range: {reason}")]
    BadRead {
        /// What was wrong.
        reason: String,
    },
    /// The driver did not answer the read within [`READ_BUDGET`] (OUT-07).
    #[error("the read did not finish within its {}-second budget", READ_BUDGET.as_secs())]
    ReadTimedOut,
}

impl OutputError {
    /// The error's code, typed (its serde tag: `invalid_params`, `unknown`, …,
    /// `read_timed_out`): the `code` of a failed `read_output` response (OUT-10).
    pub fn code(&self) -> OutputErrorCode {
        match self {
            OutputError::InvalidParams { .. } => OutputErrorCode::InvalidParams,
            OutputError::PathNotReference => OutputErrorCode::PathNotReference,
            OutputError::UriNotReference => OutputErrorCode::UriNotReference,
            OutputError::Unknown => OutputErrorCode::Unknown,
            OutputError::Foreign => OutputErrorCode::Foreign,
            OutputError::Expired => OutputErrorCode::Expired,
            OutputError::Unavailable => OutputErrorCode::Unavailable,
            OutputError::OffsetOutOfRange { .. } => OutputErrorCode::OffsetOutOfRange,
            OutputError::OffsetInsideCharacter { .. } => OutputErrorCode::OffsetInsideCharacter,
            OutputError::LengthInsideCharacter { .. } => OutputErrorCode::LengthInsideCharacter,
            OutputError::BadRead { .. } => OutputErrorCode::BadRead,
            OutputError::ReadTimedOut => OutputErrorCode::ReadTimedOut,
        }
    }

    /// [`OutputError::InvalidParams`] of `field`, for `reason`.
    pub fn param(field: &str, reason: impl Into<String>) -> Self {
        OutputError::InvalidParams {
            field: field.to_owned(),
            reason: reason.into(),
        }
    }
}

/// A reference to a stored output, as the store issued it: `out-` and 16 lowercase hex
/// digits. It can't hold a path or a URI.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct OutputRef(String);

const REF_PREFIX: &str = "out-";
const REF_HEX: usize = 16;

impl OutputRef {
    /// The reference for 8 random bytes (drawn by the store, never by the core).
    pub fn from_random(bytes: [u8; 8]) -> Self {
        let mut text = String::with_capacity(REF_PREFIX.len() + REF_HEX);
        text.push_str(REF_PREFIX);
        for byte in bytes {
            text.push_str(&format!("{byte:02x}"));
        }
        OutputRef(text)
    }

    /// Reads a reference from a caller (OUT-07): a path or a URI is refused as such; any
    /// other text that is not of the issued shape was never issued.
    pub fn parse(text: &str) -> Result<Self, OutputError> {
        if has_uri_scheme(text) {
            return Err(OutputError::UriNotReference);
        }
        if text.contains(['/', '\\']) || text.starts_with(['.', '~']) {
            return Err(OutputError::PathNotReference);
        }
        let hex = text.strip_prefix(REF_PREFIX).ok_or(OutputError::Unknown)?;
        if hex.len() != REF_HEX || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(OutputError::Unknown);
        }
        Ok(OutputRef(text.to_owned()))
    }

    /// The reference as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its 16 hex digits (the local store's file-name prefix).
    pub fn hex(&self) -> &str {
        &self.0[REF_PREFIX.len()..]
    }
}

impl std::fmt::Display for OutputRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for OutputRef {
    type Error = OutputError;
    fn try_from(text: String) -> Result<Self, OutputError> {
        OutputRef::parse(&text)
    }
}

impl From<OutputRef> for String {
    fn from(r: OutputRef) -> String {
        r.0
    }
}

/// Whether `text` starts with `scheme:` (RFC 3986: a letter, then letters, digits, `+-.`).
fn has_uri_scheme(text: &str) -> bool {
    let Some((scheme, _)) = text.split_once(':') else {
        return false;
    };
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// Whether a stored output can be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Availability {
    /// It can.
    Available,
    /// It was removed (retention).
    Expired,
    /// It can't be served (missing, access failed, unsupported).
    Unavailable,
}

/// A stored output's metadata: what a tool result's `details` carry (OUT-02) and what a
/// read is checked against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredOutput {
    /// The session it belongs to.
    pub session_id: String,
    /// The item (tool call) it belongs to.
    pub item_id: String,
    /// The store-issued reference a read names (OUT-09).
    pub output_ref: OutputRef,
    /// The whole output's length in bytes, what a walk reads up to.
    pub byte_len: u64,
    /// Its media type as stored: a text type (`text/*`, `application/json`, `*+json`) is read in UTF-8 pages,
    /// anything else in base64 ones (OUT-05).
    pub media_type: String,
    /// Whether it can be read.
    pub availability: Availability,
}

/// How a page's content is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// The bytes are UTF-8 text, as they are.
    Utf8,
    /// The bytes, base64 (standard alphabet, padded).
    Base64,
}

/// A read's answer (OUT-04).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResult {
    /// The session, as asked.
    pub session_id: String,
    /// The item, as asked.
    pub item_id: String,
    /// The reference, as asked.
    pub output_ref: OutputRef,
    /// The page's bytes, written as `encoding` says: the text itself, or base64 (OUT-04,
    /// OUT-05).
    pub content: String,
    /// How `content` is encoded.
    pub encoding: Encoding,
    /// The output's media type.
    pub media_type: String,
    /// Where the page starts.
    pub offset_bytes: u64,
    /// How many bytes of the output the page holds.
    pub byte_len: u64,
    /// Whether the page ends the output.
    pub eof: bool,
}

impl ReadResult {
    /// The page's bytes, decoded.
    pub fn bytes(&self) -> Result<Vec<u8>, base64::DecodeError> {
        match self.encoding {
            Encoding::Utf8 => Ok(self.content.as_bytes().to_vec()),
            Encoding::Base64 => base64::engine::general_purpose::STANDARD.decode(&self.content),
        }
    }

    /// The result as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
