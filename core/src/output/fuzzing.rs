//! The fuzz body for stored-output reads (feature `fuzzing`):
//! `fuzz/fuzz_targets/output_read.rs` is a thin wrapper, and
//! `core/tests/fuzz_bodies/spill_output.rs` runs it on seeds.
//!
//! From the input it builds read params (well-formed or not), a stored output (text or
//! binary) and a page size, and checks (OUT-03..05, OUT-07):
//! - checking params never panics, and accepted params are within their ranges;
//! - a planned read's answer never leaves the requested range: it starts at the offset, holds
//!   at most the length asked for, and decodes to exactly the stored bytes there, so text
//!   never gains a replacement character;
//! - a refused read (unknown, foreign, out of range) asks for nothing;
//! - a reader walk over a binary or valid UTF-8 output reassembles it exactly.

use std::time::Instant;

use arbitrary::{Arbitrary, Unstructured};
use serde_json::{json, Map, Value};

use super::{
    read_result, Availability, OutputCatalog, OutputError, OutputRef, ReadParams, ReaderWalk,
    StoredOutput, MAX_READ_BYTES, MAX_SAFE_INTEGER, TEXT_MEDIA_TYPE,
};

#[derive(Debug, Arbitrary)]
struct Input {
    stored: Vec<u8>,
    as_text: bool,
    text: bool,
    offset: Num,
    length: Option<Num>,
    reference: Reference,
    other_session: bool,
    expired: bool,
    page: u16,
}

#[derive(Debug, Arbitrary)]
enum Num {
    Small(u8),
    Int(u64),
    Neg(i64),
    Float(f64),
    Text(String),
}

#[derive(Debug, Arbitrary)]
enum Reference {
    Issued,
    Other([u8; 8]),
    Text(String),
}

impl Num {
    fn value(&self) -> Value {
        match self {
            Num::Small(n) => json!(n),
            Num::Int(n) => json!(n),
            Num::Neg(n) => json!(n),
            Num::Float(f) => json!(f),
            Num::Text(s) => json!(s),
        }
    }
}

/// Runs one input. Panics when an invariant breaks.
pub fn output_read(data: &[u8]) {
    let Ok(input) = Input::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    let mut stored = input.stored;
    if input.as_text {
        stored = String::from_utf8_lossy(&stored).into_owned().into_bytes();
    }
    let media_type = if input.text {
        TEXT_MEDIA_TYPE
    } else {
        "application/octet-stream"
    };
    let issued = OutputRef::from_random([7; 8]);
    let mut catalog = OutputCatalog::default();
    catalog.insert(StoredOutput {
        session_id: "s".into(),
        item_id: "i".into(),
        output_ref: issued.clone(),
        byte_len: stored.len() as u64,
        media_type: media_type.into(),
        availability: if input.expired {
            Availability::Expired
        } else {
            Availability::Available
        },
    });

    let mut params = Map::new();
    let session = if input.other_session { "t" } else { "s" };
    params.insert("sessionId".into(), json!(session));
    params.insert("itemId".into(), json!("i"));
    let reference = match &input.reference {
        Reference::Issued => issued.to_string(),
        Reference::Other(bytes) => OutputRef::from_random(*bytes).to_string(),
        Reference::Text(text) => text.clone(),
    };
    params.insert("outputRef".into(), json!(reference));
    params.insert("offsetBytes".into(), input.offset.value());
    if let Some(length) = &input.length {
        params.insert("lengthBytes".into(), length.value());
    }
    let now = Instant::now();
    if let Ok(params) = ReadParams::from_value(&Value::Object(params)) {
        assert!(params.offset_bytes <= MAX_SAFE_INTEGER);
        assert!((1..=MAX_READ_BYTES).contains(&params.length_bytes));
        match catalog.plan_read(&params, now) {
            Ok(read) => {
                assert_eq!(params.output_ref, issued);
                assert!(!input.other_session && !input.expired);
                let request = read.request;
                let start = request.offset_bytes as usize;
                assert!(start < stored.len() || start == 0);
                let end = start
                    .saturating_add(request.length_bytes as usize)
                    .min(stored.len());
                match read_result(&request, &stored[start..end], stored.len() as u64) {
                    Ok(page) => {
                        assert_eq!(page.offset_bytes, request.offset_bytes);
                        assert!(page.byte_len <= request.length_bytes);
                        let bytes = page.bytes().expect("decodes");
                        assert_eq!(bytes.len() as u64, page.byte_len);
                        assert_eq!(bytes, &stored[start..start + bytes.len()]);
                        assert_eq!(page.eof, start + bytes.len() == stored.len());
                    }
                    Err(error) => assert!(
                        input.text
                            && matches!(
                                error,
                                OutputError::OffsetInsideCharacter { .. }
                                    | OutputError::LengthInsideCharacter { .. }
                            ),
                        "{error:?}"
                    ),
                }
            }
            Err(error) => assert!(matches!(
                error,
                OutputError::Unknown
                    | OutputError::Foreign
                    | OutputError::Expired
                    | OutputError::OffsetOutOfRange { .. }
            )),
        }
    }

    // The whole walk.
    if input.expired {
        return;
    }
    let page = u64::from(input.page).clamp(if input.text { 4 } else { 1 }, MAX_READ_BYTES);
    let walkable = !input.text || std::str::from_utf8(&stored).is_ok();
    let mut walk = ReaderWalk::new("s", "i", issued, page).expect("a page size in range");
    let mut whole = Vec::new();
    let mut pages = 0usize;
    while let Some(params) = walk.next_params() {
        pages += 1;
        assert!(pages <= stored.len() + 1, "the walk doesn't end");
        let read = catalog.plan_read(&params, now).expect("a walk's read");
        let request = read.request;
        let start = request.offset_bytes as usize;
        let end = start
            .saturating_add(request.length_bytes as usize)
            .min(stored.len());
        let result = match read_result(&request, &stored[start..end], stored.len() as u64) {
            Ok(result) => result,
            Err(error) => {
                assert!(!walkable, "{error:?}");
                return;
            }
        };
        whole.extend(walk.handle(&result).expect("a good page"));
    }
    assert_eq!(whole, stored);
}
