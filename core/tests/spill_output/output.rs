//! Stored-output reads (OUT-03, OUT-04, OUT-05, OUT-07; seed 000):
//! `cargo test -p musewire-core --test output`.

use std::time::{Duration, Instant};

use musewire_core::output::{
    read_result, OutputCatalog, ReadParams, ReadRequest, ReaderWalk, WalkError, MAX_READ_BYTES,
    TEXT_MEDIA_TYPE,
};
use musewire_wire::output::{
    Availability, Encoding, OutputError, OutputRef, ReadResult, StoredOutput,
};
use proptest::prelude::*;
use serde_json::{json, Value};

/// The length of a read that names none (OUT-03), pinned by value.
const DEFAULT_READ_BYTES: u64 = 65_536;
/// JavaScript's largest safe integer, the largest offset (OUT-03).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;
/// How long a driver may take over one read (OUT-07).
const READ_BUDGET: Duration = Duration::from_secs(20);

fn issued() -> OutputRef {
    OutputRef::from_random([0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef])
}

fn params(extra: Value) -> Value {
    let mut base =
        json!({"sessionId": "s", "itemId": "i", "outputRef": issued().as_str(), "offsetBytes": 0});
    for (k, v) in extra.as_object().unwrap() {
        if v.is_null() && k != "lengthBytes" {
            base.as_object_mut().unwrap().remove(k);
        } else {
            base[k] = v.clone();
        }
    }
    base
}

fn invalid(field: &str) -> impl Fn(Result<ReadParams, OutputError>) -> bool + '_ {
    move |r| matches!(r, Err(OutputError::InvalidParams { field: f, .. }) if f == field)
}

fn catalog(byte_len: u64, media_type: &str) -> OutputCatalog {
    let mut catalog = OutputCatalog::default();
    catalog.insert(StoredOutput {
        session_id: "s".into(),
        item_id: "i".into(),
        output_ref: issued(),
        byte_len,
        media_type: media_type.into(),
        availability: Availability::Available,
    });
    catalog
}

fn request(offset: u64, length: u64, media_type: &str) -> ReadRequest {
    ReadRequest {
        session_id: "s".into(),
        item_id: "i".into(),
        output_ref: issued(),
        offset_bytes: offset,
        length_bytes: length,
        media_type: media_type.into(),
    }
}

/// The driver's part, done on a slice: a positioned read of the requested range.
fn pread(stored: &[u8], request: &ReadRequest) -> Vec<u8> {
    let start = (request.offset_bytes as usize).min(stored.len());
    let end = start
        .saturating_add(request.length_bytes as usize)
        .min(stored.len());
    stored[start..end].to_vec()
}

#[test]
fn out_03_09_params_are_checked_exactly() {
    let ok = ReadParams::from_value(&params(json!({}))).unwrap();
    assert_eq!(ok.length_bytes, DEFAULT_READ_BYTES);
    assert_eq!(ok.length_bytes, 65_536);
    let p = |extra| ReadParams::from_value(&params(extra));
    assert_eq!(
        p(json!({"lengthBytes": 1_048_576})).unwrap().length_bytes,
        MAX_READ_BYTES
    );
    assert_eq!(p(json!({"lengthBytes": 1})).unwrap().length_bytes, 1);
    assert_eq!(
        p(json!({"offsetBytes": MAX_SAFE_INTEGER}))
            .unwrap()
            .offset_bytes,
        9_007_199_254_740_991
    );
    // A float equal to an integer is that integer, as for the JavaScript peers.
    assert_eq!(p(json!({"offsetBytes": 3.0})).unwrap().offset_bytes, 3);
    for bad in [
        json!({"lengthBytes": 0}),
        json!({"lengthBytes": 1_048_577}),
        json!({"lengthBytes": -1}),
        json!({"lengthBytes": 2.5}),
        json!({"lengthBytes": "10"}),
        json!({"lengthBytes": null}),
    ] {
        assert!(invalid("lengthBytes")(p(bad.clone())), "{bad}");
    }
    for bad in [
        json!({"offsetBytes": -1}),
        json!({"offsetBytes": MAX_SAFE_INTEGER + 1}),
        json!({"offsetBytes": 1e300}),
        json!({"offsetBytes": 0.5}),
        json!({"offsetBytes": "0"}),
        json!({"offsetBytes": null}),
    ] {
        assert!(invalid("offsetBytes")(p(bad.clone())), "{bad}");
    }
    assert!(invalid("sessionId")(p(json!({"sessionId": ""}))));
    assert!(invalid("sessionId")(p(json!({"sessionId": 1}))));
    assert!(invalid("itemId")(p(json!({"itemId": null}))));
    assert!(invalid("outputRef")(p(json!({"outputRef": 5}))));
    assert!(invalid("params")(ReadParams::from_value(&json!([1]))));
}

#[test]
fn out_07_09_paths_and_uris_are_refused_as_such() {
    for path in [
        "/tmp/x",
        "../out-0123456789abcdef",
        "~/x",
        "a\\b",
        "./x",
        "..",
        ".",
    ] {
        assert_eq!(
            OutputRef::parse(path),
            Err(OutputError::PathNotReference),
            "{path}"
        );
    }
    for uri in [
        "file:///etc/passwd",
        "https://x.example/o",
        "artifact://1",
        "c:x",
    ] {
        assert_eq!(
            OutputRef::parse(uri),
            Err(OutputError::UriNotReference),
            "{uri}"
        );
    }
    for other in [
        "",
        "abc",
        "out-",
        "out-0123456789ABCDEF",
        "out-0123456789abcde",
    ] {
        assert_eq!(
            OutputRef::parse(other),
            Err(OutputError::Unknown),
            "{other}"
        );
    }
    assert_eq!(OutputRef::parse("out-0123456789abcdef").unwrap(), issued());
    assert_eq!(
        ReadParams::from_value(&params(json!({"outputRef": "file:///x"}))),
        Err(OutputError::UriNotReference)
    );
}

#[test]
fn out_07_unknown_foreign_expired_unavailable_and_out_of_range_fail_typed() {
    let now = Instant::now();
    let catalog = catalog(10, TEXT_MEDIA_TYPE);
    let read = |extra| catalog.plan_read(&ReadParams::from_value(&params(extra)).unwrap(), now);
    assert_eq!(
        read(json!({"outputRef": "out-ffffffffffffffff"})),
        Err(OutputError::Unknown)
    );
    assert_eq!(read(json!({"sessionId": "t"})), Err(OutputError::Foreign));
    assert_eq!(read(json!({"itemId": "j"})), Err(OutputError::Foreign));
    assert_eq!(
        read(json!({"offsetBytes": 10})),
        Err(OutputError::OffsetOutOfRange {
            offset: 10,
            byte_len: 10
        })
    );
    assert!(read(json!({"offsetBytes": 9})).is_ok());
    for (availability, error) in [
        (Availability::Expired, OutputError::Expired),
        (Availability::Unavailable, OutputError::Unavailable),
    ] {
        let mut c = catalog.clone();
        assert!(c.set_availability(&issued(), availability));
        assert_eq!(
            c.plan_read(&ReadParams::from_value(&params(json!({}))).unwrap(), now),
            Err(error)
        );
    }
    // An empty output is read at 0 only.
    let empty = catalog_empty();
    let p0 = ReadParams::from_value(&params(json!({}))).unwrap();
    assert!(empty.plan_read(&p0, now).is_ok());
    let p1 = ReadParams::from_value(&params(json!({"offsetBytes": 1}))).unwrap();
    assert!(matches!(
        empty.plan_read(&p1, now),
        Err(OutputError::OffsetOutOfRange { .. })
    ));
}

fn catalog_empty() -> OutputCatalog {
    catalog(0, TEXT_MEDIA_TYPE)
}

#[test]
fn out_07_the_read_action_names_the_output_range_and_deadline() {
    let now = Instant::now();
    let read = catalog(100, TEXT_MEDIA_TYPE)
        .plan_read(
            &ReadParams::from_value(&params(json!({"offsetBytes": 40, "lengthBytes": 8}))).unwrap(),
            now,
        )
        .unwrap();
    assert_eq!(read.request, request(40, 8, TEXT_MEDIA_TYPE));
    assert_eq!(read.deadline, now + READ_BUDGET);
    assert_eq!(
        serde_json::to_value(&read.request).unwrap(),
        json!({"sessionId":"s","itemId":"i","outputRef":"out-0123456789abcdef","offsetBytes":40,"lengthBytes":8,"mediaType":"text/plain; charset=utf-8"})
    );
}

#[test]
fn out_04_the_result_repeats_the_ids_and_a_short_last_page_is_normal() {
    let stored = b"hello world";
    let page = read_result(&request(6, 100, TEXT_MEDIA_TYPE), &stored[6..], 11).unwrap();
    assert_eq!(
        page.to_value(),
        json!({
            "sessionId": "s", "itemId": "i", "outputRef": "out-0123456789abcdef",
            "content": "world", "encoding": "utf8", "mediaType": "text/plain; charset=utf-8",
            "offsetBytes": 6, "byteLen": 5, "eof": true,
        })
    );
    let first = read_result(&request(0, 5, TEXT_MEDIA_TYPE), &stored[..5], 11).unwrap();
    assert_eq!((first.byte_len, first.eof), (5, false));
    // A driver handing back another range is caught.
    assert!(matches!(
        read_result(&request(0, 5, TEXT_MEDIA_TYPE), &stored[..6], 11),
        Err(OutputError::BadRead { .. })
    ));
    assert!(matches!(
        read_result(&request(0, 5, TEXT_MEDIA_TYPE), &stored[..4], 11),
        Err(OutputError::BadRead { .. })
    ));
}

#[test]
fn out_05_09_a_text_offset_inside_a_character_is_refused_never_repaired() {
    let stored = "aé€😀".as_bytes(); // 1 + 2 + 3 + 4 bytes
    let at = |offset: u64, length: u64| {
        let r = request(offset, length, TEXT_MEDIA_TYPE);
        read_result(&r, &pread(stored, &r), stored.len() as u64)
    };
    assert_eq!(
        at(2, 10),
        Err(OutputError::OffsetInsideCharacter { offset: 2 })
    );
    assert_eq!(
        at(7, 10),
        Err(OutputError::OffsetInsideCharacter { offset: 7 })
    );
    // A range ending inside a character stops before it: a shorter byteLen.
    let page = at(0, 5).unwrap();
    assert_eq!(
        (page.content.as_str(), page.byte_len, page.eof),
        ("aé", 3, false)
    );
    // Too short for the character at the offset.
    assert_eq!(
        at(6, 3),
        Err(OutputError::LengthInsideCharacter {
            offset: 6,
            length: 3
        })
    );
    let page = at(6, 4).unwrap();
    assert_eq!((page.content.as_str(), page.eof), ("😀", true));
    assert!(!page.content.contains('\u{FFFD}'));
}

#[test]
fn out_05_binary_is_base64_and_never_reinterpreted_as_text() {
    // Valid UTF-8 bytes, but the output is binary: base64 all the same.
    let r = request(0, 10, "application/octet-stream");
    let page = read_result(&r, b"abc", 3).unwrap();
    assert_eq!(page.encoding, Encoding::Base64);
    assert_eq!(page.content, "YWJj");
    // A text output whose bytes aren't UTF-8: base64, no replacement character.
    let r = request(0, 10, TEXT_MEDIA_TYPE);
    let page = read_result(&r, b"a\xffb", 3).unwrap();
    assert_eq!(page.encoding, Encoding::Base64);
    assert_eq!(page.bytes().unwrap(), b"a\xffb");
}

fn walk_all(stored: &[u8], media_type: &str, page: u64) -> Result<Vec<u8>, String> {
    let catalog = catalog(stored.len() as u64, media_type);
    let mut walk = ReaderWalk::new("s", "i", issued(), page).map_err(|e| e.to_string())?;
    let mut whole = Vec::new();
    let mut pages = 0;
    while let Some(params) = walk.next_params() {
        pages += 1;
        assert!(pages <= stored.len() + 1, "the walk doesn't end");
        // Through the wire: the params as JSON, checked again.
        let params = ReadParams::from_value(&params.to_value()).map_err(|e| e.to_string())?;
        let read = catalog
            .plan_read(&params, Instant::now())
            .map_err(|e| e.to_string())?;
        let page = read_result(
            &read.request,
            &pread(stored, &read.request),
            stored.len() as u64,
        )
        .map_err(|e| e.to_string())?;
        let page: ReadResult = serde_json::from_value(page.to_value()).unwrap();
        whole.extend(walk.handle(&page).map_err(|e| e.to_string())?);
    }
    assert_eq!(walk.offset(), stored.len() as u64);
    Ok(whole)
}

#[test]
fn out_04_the_reader_walk_advances_by_the_returned_byte_len() {
    let text = "añ€😀".repeat(50);
    for page in [4, 5, 7, 64, 1000] {
        assert_eq!(
            walk_all(text.as_bytes(), TEXT_MEDIA_TYPE, page).unwrap(),
            text.as_bytes()
        );
    }
    let binary: Vec<u8> = (0..=255).collect();
    for page in [1, 3, 256, 1000] {
        assert_eq!(
            walk_all(&binary, "application/octet-stream", page).unwrap(),
            binary
        );
    }
    assert_eq!(walk_all(b"", TEXT_MEDIA_TYPE, 10).unwrap(), b"");
    assert!(ReaderWalk::new("s", "i", issued(), 0).is_err());
    assert!(ReaderWalk::new("s", "i", issued(), MAX_READ_BYTES + 1).is_err());
}

#[test]
fn out_04_09_the_reader_walk_refuses_wrong_pages() {
    let mut walk = ReaderWalk::new("s", "i", issued(), 4).unwrap();
    let good = read_result(&request(0, 4, TEXT_MEDIA_TYPE), b"abcd", 8).unwrap();
    let mut other = good.clone();
    other.item_id = "j".into();
    assert_eq!(walk.handle(&other), Err(WalkError::OtherOutput));
    let mut moved = good.clone();
    moved.offset_bytes = 1;
    assert!(matches!(
        walk.handle(&moved),
        Err(WalkError::WrongOffset { .. })
    ));
    let mut long = good.clone();
    long.byte_len = 5;
    long.content = "abcde".into();
    assert!(matches!(walk.handle(&long), Err(WalkError::TooLong { .. })));
    let mut lying = good.clone();
    lying.byte_len = 3;
    assert!(matches!(
        walk.handle(&lying),
        Err(WalkError::BadContent { .. })
    ));
    let mut empty = good.clone();
    empty.byte_len = 0;
    empty.content.clear();
    assert_eq!(walk.handle(&empty), Err(WalkError::NoProgress));
    // None of those moved the walk.
    assert_eq!(walk.offset(), 0);
    assert_eq!(walk.handle(&good).unwrap(), b"abcd");
    assert_eq!(walk.offset(), 4);
    let last = read_result(&request(4, 4, TEXT_MEDIA_TYPE), b"efgh", 8).unwrap();
    assert_eq!(walk.handle(&last).unwrap(), b"efgh");
    assert!(walk.is_done() && walk.next_params().is_none());
    assert_eq!(walk.handle(&last), Err(WalkError::Done));
}

proptest! {
    /// OUT-04/05: any output, any page size: the walk reassembles it exactly.
    #[test]
    fn out_04_05_walk_reassembles_exactly(
        text in "(.|\n){0,200}",
        binary in proptest::collection::vec(any::<u8>(), 0..300),
        page in 4u64..100,
    ) {
        prop_assert_eq!(walk_all(text.as_bytes(), TEXT_MEDIA_TYPE, page).unwrap(), text.as_bytes());
        prop_assert_eq!(walk_all(&binary, "application/octet-stream", page).unwrap(), binary);
    }

    /// OUT-05: a read of any range answers with exactly the bytes there, or refuses.
    #[test]
    fn out_05_a_read_never_leaves_its_range(
        text in "(.|\n){1,80}",
        offset in 0u64..400,
        length in 1u64..50,
    ) {
        let stored = text.as_bytes();
        let r = request(offset, length, TEXT_MEDIA_TYPE);
        match read_result(&r, &pread(stored, &r), stored.len() as u64) {
            Ok(page) => {
                let bytes = page.bytes().unwrap();
                let start = offset as usize;
                prop_assert!(bytes.len() as u64 <= length);
                prop_assert_eq!(&bytes[..], &stored[start..start + bytes.len()]);
                prop_assert_eq!(page.encoding, Encoding::Utf8);
            }
            Err(OutputError::OffsetOutOfRange { .. }) => prop_assert!(offset >= stored.len() as u64),
            Err(OutputError::OffsetInsideCharacter { .. }) => {
                prop_assert!(!text.is_char_boundary(offset as usize))
            }
            Err(OutputError::LengthInsideCharacter { .. }) => prop_assert!(length < 4),
            Err(other) => prop_assert!(false, "{other:?}"),
        }
    }
}
