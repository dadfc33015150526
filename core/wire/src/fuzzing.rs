//! The fuzz body for the wire model's JSON reader (feature `fuzzing`):
//! `fuzz/fuzz_targets/wire_reader.rs` is a thin wrapper, and `core/wire/tests/wire/reader.rs` runs
//! it on seeds.
//!
//! The reader (`reader`, private to the crate) must give exactly what serde_json
//! gives, for any bytes: the same JSON value or the same error message, and, for a frame, the
//! same typed [`AgentFrame`] as serde_json's reading of it (CALL-06 rests on this).

use serde_json::Value;

use super::AgentFrame;

/// Reads `data` with the reader and with serde_json and checks they agree; panics when not.
pub fn wire_reader(data: &[u8]) {
    let ours = super::reader::from_slice::<Value>(data);
    let theirs = serde_json::from_slice::<Value>(data);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the reader's value differs"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "the errors differ"),
        _ => panic!("the reader {ours:?}, serde_json {theirs:?}"),
    }
    let ours = super::reader::from_slice::<AgentFrame>(data);
    let theirs = serde_json::from_slice::<AgentFrame>(data);
    match (ours, theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the reader's frame differs"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "the frame errors differ"),
        (ours, theirs) => panic!("the reader {ours:?}, serde_json {theirs:?}"),
    }
}
