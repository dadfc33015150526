//! The page cursor (PAGE-03): base64url, without padding, of the JSON text
//! `{"version":1,"sessionId":…,"leafId":…,"messageCount":…,"offset":…}`.

use base64::alphabet::URL_SAFE;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;

use super::error::PageError;
use crate::frame::non_negative_safe_integer;

/// The only cursor version.
pub(crate) const CURSOR_VERSION: u64 = 1;
/// Longest cursor accepted, in characters.
pub(crate) const MAX_CURSOR_CHARS: usize = 2048;
/// Longest `sessionId` or `leafId` accepted in a cursor, in UTF-16 code units as the
/// reference counts them.
pub(crate) const MAX_CURSOR_ID_UNITS: usize = 256;

/// Decodes as Node's `Buffer.from(text, "base64url")` does for a canonical text (trailing
/// bits are checked by re-encoding), and encodes without padding.
const BASE64URL: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

/// A decoded cursor: where the next page starts, in which snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cursor {
    /// The session the cursor was issued in.
    pub session_id: String,
    /// The leaf of the session tree when it was issued (`null` for an empty session).
    pub leaf_id: Option<String>,
    /// How many messages the history held.
    pub message_count: u64,
    /// The first message of the next page; at most `message_count`.
    pub offset: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Payload<'a> {
    version: u64,
    session_id: &'a str,
    leaf_id: Option<&'a str>,
    message_count: u64,
    offset: u64,
}

impl Cursor {
    /// The cursor's text: base64url of its JSON, keys in the reference's order.
    pub fn encode(&self) -> String {
        let json = serde_json::to_vec(&Payload {
            version: CURSOR_VERSION,
            session_id: &self.session_id,
            leaf_id: self.leaf_id.as_deref(),
            message_count: self.message_count,
            offset: self.offset,
        })
        .expect("a cursor serialises");
        BASE64URL.encode(json)
    }

    /// Reads a cursor with every check of PAGE-03: 1..=2,048 characters of the base64url
    /// alphabet, canonical (re-encoding gives the same text), strict UTF-8 (a leading BOM is
    /// dropped, as `TextDecoder` does), one JSON object whose `version` is 1, `sessionId` a
    /// string of 1..=256 UTF-16 units, `leafId` null or such a string, `messageCount` and
    /// `offset` safe non-negative integers with `offset ≤ messageCount`. Anything else is
    /// [`PageError::InvalidCursor`].
    pub fn decode(text: &str) -> Result<Cursor, PageError> {
        Self::try_decode(text).ok_or(PageError::InvalidCursor)
    }

    fn try_decode(text: &str) -> Option<Cursor> {
        if text.is_empty()
            || text.len() > MAX_CURSOR_CHARS
            || !text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return None;
        }
        let bytes = BASE64URL.decode(text).ok()?;
        if BASE64URL.encode(&bytes) != text {
            return None;
        }
        let json = std::str::from_utf8(&bytes).ok()?;
        let json = json.strip_prefix('\u{feff}').unwrap_or(json);
        let Value::Object(fields) = serde_json::from_str::<Value>(json).ok()? else {
            return None;
        };
        if non_negative_safe_integer(fields.get("version")?)? != CURSOR_VERSION {
            return None;
        }
        let session_id = id_string(fields.get("sessionId")?)?;
        let leaf_id = match fields.get("leafId")? {
            Value::Null => None,
            other => Some(id_string(other)?),
        };
        let message_count = non_negative_safe_integer(fields.get("messageCount")?)?;
        let offset = non_negative_safe_integer(fields.get("offset")?)?;
        (offset <= message_count).then_some(Cursor {
            session_id,
            leaf_id,
            message_count,
            offset,
        })
    }
}

/// A string of 1..=256 UTF-16 units.
fn id_string(value: &Value) -> Option<String> {
    let s = value.as_str()?;
    let units = s.encode_utf16().count();
    (1..=MAX_CURSOR_ID_UNITS)
        .contains(&units)
        .then(|| s.to_owned())
}
