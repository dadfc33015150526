//! Stored output through the bridge (OUT-01, 02, 06, 07; seed `000_e10f2c33e5f11cff.txt`):
//! the opt-in, the tool cards' handles and the typed errors of `_muse/readOutput`.

use agent_client_protocol_schema::v1::{Error, Meta};
use serde_json::{json, Value};

use crate::output::{
    Availability, OutputError, OutputErrorCode, StoredOutput, MAX_READ_BYTES, READ_METHOD,
};

/// The `_meta` key of the opt-in, the advertisement and the handles (OUT-01, OUT-02).
pub(crate) const OUTPUT_META: &str = "muse/output";

/// The JSON-RPC code of a read the adapter or the agent refused for its reference (not
/// found, foreign, expired, unavailable): ACP's "resource not found".
const NOT_FOUND: i32 = -32002;

/// Whether `_meta["muse/output"]` of the client capabilities is 1 (OUT-01).
pub(crate) fn output_opt_in(meta: Option<&Meta>) -> bool {
    meta.and_then(|m| m.get(OUTPUT_META)) == Some(&Value::from(1))
}

/// What `initialize` advertises under `_meta["muse/output"]` (OUT-01): version 1, the read
/// method and the most bytes per read.
pub(crate) fn advertisement() -> Value {
    json!({"version": 1, "method": READ_METHOD, "maxLengthBytes": MAX_READ_BYTES})
}

/// A tool card's `_meta["muse/output"]` (OUT-02): the stored output's metadata under the
/// editor's session id, and the read method only when the reference is available.
pub(crate) fn card_meta(session_id: &str, stored: &StoredOutput) -> Meta {
    let mut handle = json!({
        "sessionId": session_id,
        "itemId": stored.item_id,
        "outputRef": stored.output_ref,
        "byteLen": stored.byte_len,
        "availability": stored.availability,
        "mediaType": stored.media_type,
    });
    if stored.availability == Availability::Available {
        handle["method"] = json!(READ_METHOD);
    }
    let mut meta = Meta::new();
    meta.insert(OUTPUT_META.into(), handle);
    meta
}

/// A read's failure as a typed JSON-RPC error (OUT-07): `data` is `{code, message}`, the
/// code `OutputError`'s tag (or the agent's code), the JSON-RPC code by kind: bad params
/// -32602, a reference not found, foreign, expired or unavailable -32002, a read that failed
/// or ran out of time -32603.
pub(crate) fn typed_error(code: &str, message: &str) -> Error {
    use OutputErrorCode as C;
    let rpc = match OutputErrorCode::from_wire(code) {
        Some(
            C::InvalidParams
            | C::PathNotReference
            | C::UriNotReference
            | C::OffsetOutOfRange
            | C::OffsetInsideCharacter
            | C::LengthInsideCharacter,
        ) => -32602,
        Some(C::Unknown | C::Foreign | C::Expired | C::Unavailable) => NOT_FOUND,
        None if code == SESSION_NOT_FOUND => NOT_FOUND,
        Some(C::BadRead | C::ReadTimedOut) | None => -32603,
    };
    Error::new(rpc, message.to_owned()).data(json!({"code": code, "message": message}))
}

/// The code of a read for a session the adapter has not open (ours: the bridge's, not the
/// agent's).
pub(crate) const SESSION_NOT_FOUND: &str = "session_not_found";

/// [`typed_error`] of an [`OutputError`].
pub(crate) fn output_error(error: &OutputError) -> Error {
    typed_error(error.code().as_str(), &error.to_string())
}
