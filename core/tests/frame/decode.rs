//! Inbound framing, one test (or more) per rule: FRAME-01, 02, 05, 07, 08, 09, 10, 13.

use crate::common;

use common::*;
use musewire_core::frame::{
    DecodeEvent, FrameError, Line, LineDecoder, ProtocolVersion, StreamDecoder, MAX_FRAME_BYTES,
};
use serde_json::json;

const V1: ProtocolVersion = ProtocolVersion::V1;
const V2: ProtocolVersion = ProtocolVersion::V2;

#[test]
fn frame_01_splits_on_lf_strips_one_cr_and_skips_blank_lines() {
    let input = b"{\"type\":\"a\"}\r\n\n  \r\n{\"type\":\"b\",\"t\":\"x\\r\"}\n\t\n";
    let got = values(&decode(input, V1));
    assert_eq!(
        got,
        vec![
            Ok(json!({"type": "a"})),
            Ok(json!({"type": "b", "t": "x\r"}))
        ]
    );
}

#[test]
fn frame_01_u2028_and_u2029_inside_strings_are_not_line_breaks() {
    let input = "{\"type\":\"a\",\"text\":\"one\u{2028}two\u{2029}three\"}\n".as_bytes();
    let got = values(&decode(input, V1));
    assert_eq!(
        got,
        vec![Ok(
            json!({"type": "a", "text": "one\u{2028}two\u{2029}three"})
        )]
    );
}

#[test]
fn frame_01_last_line_without_lf_is_a_frame_at_eof() {
    let got = values(&decode(b"{\"type\":\"a\"}\n{\"type\":\"last\"}", V1));
    assert_eq!(
        got,
        vec![Ok(json!({"type": "a"})), Ok(json!({"type": "last"}))]
    );
}

#[test]
fn frame_01_only_a_cr_directly_before_lf_is_stripped() {
    // "\r\r\n": one CR is stripped, the other stays (it is JSON whitespace here).
    let mut decoder = LineDecoder::new(64);
    let mut lines = Vec::new();
    decoder.push(b"{}\r\r\n{}\r\n", &mut |l| {
        if let Line::Text(t) = l {
            lines.push(t.to_vec())
        }
    });
    assert_eq!(lines, vec![b"{}\r".to_vec(), b"{}".to_vec()]);
}

#[test]
fn frame_01_envelope_is_read_without_a_full_parse() {
    let events = decode(
        br#"{"id":"r1","command":"get_state","type":"response","data":{"type":"inner","id":"no"}}"#,
        V1,
    );
    let DecodeEvent::Frame(frame) = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(frame.frame_type(), Some("response"));
    assert_eq!(frame.id(), Some("r1"));
    assert_eq!(frame.command(), Some("get_state"));
    // Escaped keys and values are read as JavaScript reads them; the last duplicate wins.
    let events = decode(
        br#"{"typ\u0065":"first","type":"resp\u006fnse","id":7}"#,
        V1,
    );
    let DecodeEvent::Frame(frame) = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(frame.frame_type(), Some("response"));
    assert_eq!(frame.id(), None, "a numeric id is not an id");
}

#[test]
fn frame_01_compact_output_keeps_strings_and_numbers_exactly() {
    let events = decode(
        b"{ \"type\" : \"a b\" ,\t\"n\": 1.50e3 , \"s\":\"\\u00e9 \\\" \"}",
        V1,
    );
    let DecodeEvent::Frame(frame) = &events[0] else {
        panic!("{events:?}")
    };
    assert!(!frame.is_compact());
    let mut out = Vec::new();
    frame.write_compact(&mut out);
    assert_eq!(
        out,
        br#"{"type":"a b","n":1.50e3,"s":"\u00e9 \" "}"#.to_vec()
    );
}

#[test]
fn frame_02_oversized_line_is_rejected_then_decoding_resynchronises() {
    let mut input = frame_of_len(MAX_FRAME_BYTES); // LF makes it one byte too long
    input.push(b'\n');
    input.extend_from_slice(b"{\"type\":\"after\"}\n");
    let got = values(&decode(&input, V1));
    assert_eq!(
        got,
        vec![
            Err(FrameError::LineTooLong {
                limit: MAX_FRAME_BYTES
            }),
            Ok(json!({"type": "after"}))
        ]
    );
    assert!(!FrameError::LineTooLong { limit: 1 }.is_fatal());
}

#[test]
fn frame_02_a_line_of_exactly_the_limit_passes() {
    let mut input = frame_of_len(MAX_FRAME_BYTES - 1);
    input.push(b'\n');
    let events = decode(&input, V1);
    assert!(
        matches!(&events[..], [DecodeEvent::Frame(f)] if f.payload().len() == MAX_FRAME_BYTES - 1)
    );
}

#[test]
fn frame_02_holds_at_most_the_limit_while_rejecting() {
    let mut decoder = StreamDecoder::new();
    let block = vec![b'x'; 64 * 1024];
    decoder.handle_bytes(b"{\"pad\":\"");
    let mut max_held = 0;
    for _ in 0..40 {
        decoder.handle_bytes(&block);
        max_held = max_held.max(decoder.buffered());
    }
    assert!(max_held <= MAX_FRAME_BYTES, "held {max_held}");
    assert_eq!(decoder.buffered(), 0, "discarding holds nothing");
    assert!(matches!(
        decoder.poll_event(),
        Some(DecodeEvent::Error(FrameError::LineTooLong { .. }))
    ));
    decoder.handle_bytes(b"\"}\n{\"type\":\"ok\"}\n");
    assert!(
        matches!(decoder.poll_event(), Some(DecodeEvent::Frame(f)) if f.frame_type() == Some("ok"))
    );
}

#[test]
fn frame_05_chunk_before_negotiation_is_fatal() {
    let mut input = chunk_line("a", 0, 2, MAX_FRAME_BYTES as i64, b"x");
    input.extend_from_slice(b"{\"type\":\"never\"}\n");
    let got = errors(&decode(&input, V1));
    assert_eq!(got, vec![FrameError::ChunkBeforeNegotiation]);
    assert_eq!(FrameError::ChunkBeforeNegotiation.rule(), "FRAME-05");
}

#[test]
fn frame_05_negotiation_response_switches_the_stream_to_v2() {
    let payload = frame_of_len(MAX_FRAME_BYTES + 10);
    let mut input =
        br#"{"type":"response","command":"negotiate_protocol","success":false,"error":"no"}"#
            .to_vec();
    input.push(b'\n');
    input.extend_from_slice(br#"{"id":"n","type":"response","command":"negotiate_protocol","success":true,"data":{"protocolVersion":2}}"#);
    input.push(b'\n');
    for line in chunk_lines("rpc-1", &payload) {
        input.extend_from_slice(&line);
    }
    let events = decode(&input, V1);
    assert_eq!(events.len(), 3, "{:?}", errors(&events));
    assert!(
        matches!(&events[2], DecodeEvent::Frame(f) if f.was_chunked() && f.payload() == &payload[..])
    );
}

fn first_error(lines: &[Vec<u8>]) -> Option<FrameError> {
    let input: Vec<u8> = lines.concat();
    errors(&decode(&input, V2)).into_iter().next()
}

fn meta_case(chunk: serde_json::Value) -> Option<FrameError> {
    let mut line = serde_json::to_vec(&chunk).unwrap();
    line.push(b'\n');
    first_error(&[line])
}

#[test]
fn frame_07_every_metadata_field_is_checked() {
    let good = json!({"type":"rpc_chunk","chunkId":"c","index":0,"count":2,"byteLength":1048576,"data":"AAAA"});
    assert_eq!(meta_case(good.clone()), Some(FrameError::SequenceTruncated));
    let bad: Vec<(&str, serde_json::Value)> = vec![
        ("chunkId", json!(null)),
        ("chunkId", json!("")),
        ("chunkId", json!(7)),
        ("chunkId", json!("x".repeat(129))),
        ("index", json!(-1)),
        ("index", json!(2)),
        ("index", json!(0.5)),
        ("index", json!("0")),
        ("count", json!(1)),
        ("count", json!(257)),
        ("count", json!(9007199254740992u64)),
        ("byteLength", json!(1048575)),
        ("byteLength", json!(67108865)),
        ("byteLength", json!(null)),
    ];
    for (field, value) in bad {
        let mut chunk = good.clone();
        chunk[field] = value.clone();
        assert_eq!(
            meta_case(chunk),
            Some(FrameError::InvalidChunkMetadata),
            "{field}={value}"
        );
    }
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("count");
    assert_eq!(meta_case(missing), Some(FrameError::InvalidChunkMetadata));
    assert_eq!(FrameError::InvalidChunkMetadata.rule(), "FRAME-07");
}

#[test]
fn frame_07_limits_are_inclusive_and_numbers_are_read_as_javascript_does() {
    // 128 UTF-16 units (an astral char counts two), count 256, byteLength 64 MiB: valid.
    let id = format!("{}{}", "a".repeat(126), '\u{1F600}');
    let ok = json!({"type":"rpc_chunk","chunkId":id,"index":0,"count":256,"byteLength":67108864,"data":"AAAA"});
    assert_eq!(meta_case(ok), Some(FrameError::SequenceTruncated));
    let too_long = format!("{}{}", "a".repeat(127), '\u{1F600}');
    let bad = json!({"type":"rpc_chunk","chunkId":too_long,"index":0,"count":2,"byteLength":1048576,"data":"AAAA"});
    assert_eq!(meta_case(bad), Some(FrameError::InvalidChunkMetadata));
    // 1.0, -0 and 2e0 are integers to JSON.parse.
    let line = br#"{"type":"rpc_chunk","chunkId":"c","index":-0,"count":2e0,"byteLength":1048576.0,"data":"AAAA"}"#;
    assert_eq!(
        first_error(&[[&line[..], b"\n"].concat()]),
        Some(FrameError::SequenceTruncated)
    );
}

#[test]
fn frame_08_data_must_be_canonical_padded_base64() {
    let base = json!({"type":"rpc_chunk","chunkId":"c","index":0,"count":2,"byteLength":1048576});
    for data in [
        json!(""),
        json!(5),
        json!(null),
        json!("AAA"),
        json!("AA=="),
        json!("AAB="),
        json!("AB=="),
        json!("A==="),
        json!("AA-_"),
        json!("AAAA\n"),
        json!("AA AA"),
        json!("=AAA"),
        json!("é"),
    ] {
        let mut chunk = base.clone();
        chunk["data"] = data.clone();
        let want = if data == json!("AA==") {
            FrameError::SequenceTruncated
        } else {
            FrameError::InvalidChunkData
        };
        assert_eq!(meta_case(chunk), Some(want), "data={data}");
    }
    // "AB==" has trailing bits set: not canonical.
    let mut missing = base.clone();
    missing.as_object_mut().unwrap().remove("chunkId");
    missing["data"] = json!("!!");
    assert_eq!(
        meta_case(missing),
        Some(FrameError::InvalidChunkMetadata),
        "metadata is checked first"
    );
    // Escaped base64 (`\/`) is the same string to JSON.parse.
    let line = br#"{"type":"rpc_chunk","chunkId":"c","index":0,"count":2,"byteLength":1048576,"data":"AA\/A"}"#;
    assert_eq!(
        first_error(&[[&line[..], b"\n"].concat()]),
        Some(FrameError::SequenceTruncated)
    );
}

#[test]
fn frame_08_payload_over_256_kib_is_rejected_after_the_data_check() {
    let big = vec![7u8; 256 * 1024 + 1];
    assert_eq!(
        first_error(&[chunk_line("c", 0, 2, 1 << 20, &big)]),
        Some(FrameError::ChunkPayloadTooLarge)
    );
    let exact = vec![7u8; 256 * 1024];
    assert_eq!(
        first_error(&[chunk_line("c", 0, 4, 1 << 20, &exact)]),
        Some(FrameError::SequenceTruncated)
    );
}

#[test]
fn frame_09_sequence_rules() {
    let p = vec![1u8; 256 * 1024];
    let n = 1 << 20;
    let cases: Vec<(Vec<Vec<u8>>, FrameError)> = vec![
        (
            vec![chunk_line("c", 1, 4, n, &p)],
            FrameError::SequenceStart,
        ),
        (
            vec![chunk_line("c", 0, 4, n, &p), chunk_line("d", 1, 4, n, &p)],
            FrameError::SequenceMismatch,
        ),
        (
            vec![chunk_line("c", 0, 4, n, &p), chunk_line("c", 1, 5, n, &p)],
            FrameError::SequenceMismatch,
        ),
        (
            vec![
                chunk_line("c", 0, 4, n, &p),
                chunk_line("c", 1, 4, n + 1, &p),
            ],
            FrameError::SequenceMismatch,
        ),
        (
            vec![chunk_line("c", 0, 4, n, &p), chunk_line("c", 2, 4, n, &p)],
            FrameError::SequenceMismatch,
        ),
        (
            vec![chunk_line("c", 0, 4, n, &p), chunk_line("c", 0, 4, n, &p)],
            FrameError::SequenceMismatch,
        ),
        (
            vec![
                chunk_line("c", 0, 5, n, &p),
                chunk_line("c", 1, 5, n, &p),
                chunk_line("c", 2, 5, n, &p),
                chunk_line("c", 3, 5, n, &p),
                chunk_line("c", 4, 5, n, b"x"),
            ],
            FrameError::SequenceExceedsLength,
        ),
        (
            vec![chunk_line("c", 0, 2, n, &p), chunk_line("c", 1, 2, n, &p)],
            FrameError::SequenceLengthMismatch,
        ),
        (
            vec![chunk_line("c", 0, 2, n, &p), b"{\"type\":\"x\"}\n".to_vec()],
            FrameError::SequenceInterrupted,
        ),
        (
            vec![chunk_line("c", 0, 2, n, &p), b"[1]\n".to_vec()],
            FrameError::SequenceInterrupted,
        ),
    ];
    for (lines, want) in cases {
        assert_eq!(first_error(&lines), Some(want.clone()), "{want:?}");
        assert_eq!(want.rule(), "FRAME-09");
        assert!(want.is_fatal());
    }
}

/// FRAME-15: the sequence truncated by the end of the stream is fatal and labelled FRAME-15, as
/// RULES.md says, not FRAME-09.
#[test]
fn frame_15_a_sequence_truncated_by_end_of_stream_is_labelled_frame_15() {
    let p = vec![1u8; 256 * 1024];
    let n = 1 << 20;
    let got = first_error(&[chunk_line("c", 0, 2, n, &p)]);
    assert_eq!(got, Some(FrameError::SequenceTruncated));
    assert_eq!(FrameError::SequenceTruncated.rule(), "FRAME-15");
    assert!(FrameError::SequenceTruncated.is_fatal());
}

#[test]
fn frame_09_memory_grows_with_data_received_not_with_the_declared_length() {
    let mut decoder = StreamDecoder::new();
    decoder.set_protocol(V2);
    decoder.handle_bytes(&chunk_line("c", 0, 256, 64 << 20, b"0123456789"));
    assert_eq!(decoder.buffered(), 10);
    assert!(decoder.poll_event().is_none());
}

#[test]
fn frame_10_reassembled_bytes_must_be_utf8_json_and_an_object() {
    let n = 1 << 20;
    let with_tail = |tail: &[u8]| {
        let mut payload = frame_of_len(n - tail.len());
        payload.extend_from_slice(tail);
        chunk_lines("c", &payload)
    };
    // Invalid UTF-8 inside the string.
    let mut payload = frame_of_len(n);
    payload[20] = 0xff;
    assert_eq!(
        first_error(&chunk_lines("c", &payload)),
        Some(FrameError::ReassembledNotUtf8)
    );
    // Trailing text after the object.
    assert!(matches!(
        first_error(&with_tail(b"x")),
        Some(FrameError::ReassembledNotJson { .. })
    ));
    // Two values.
    assert!(matches!(
        first_error(&with_tail(b"{}")),
        Some(FrameError::ReassembledNotJson { .. })
    ));
    // An array, not an object.
    let mut array = b"[".to_vec();
    array.extend(std::iter::repeat_n(b'1', n - 2));
    array.push(b']');
    assert_eq!(
        first_error(&chunk_lines("c", &array)),
        Some(FrameError::NotAnObject)
    );
    // Whitespace around the object, and a BOM (TextDecoder drops it), are accepted.
    let events = decode(&with_tail(b" \n").concat(), V2);
    assert!(matches!(&events[..], [DecodeEvent::Frame(_)]), "{events:?}");
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend(frame_of_len(n - 3));
    let events = decode(&chunk_lines("c", &bom).concat(), V2);
    assert!(
        matches!(&events[..], [DecodeEvent::Frame(f)] if f.payload().starts_with(b"{")),
        "{events:?}"
    );
}

#[test]
fn frame_10_a_plain_line_that_is_json_but_not_an_object_is_fatal() {
    for line in [&b"[1,2]\n"[..], b"3\n", b"\"s\"\n", b"null\n"] {
        let mut input = line.to_vec();
        input.extend_from_slice(b"{\"type\":\"never\"}\n");
        let got = values(&decode(&input, V1));
        assert_eq!(got, vec![Err(FrameError::NotAnObject)]);
    }
}

#[test]
fn frame_13_a_line_that_is_not_json_is_reported_with_a_bounded_prefix_and_decoding_goes_on() {
    let garbage = format!("{}\n", "not json ".repeat(50));
    let input = [garbage.as_bytes(), b"{\"a\":1,}\n", b"{\"type\":\"ok\"}\n"].concat();
    let events = decode(&input, V1);
    let errs = errors(&events);
    assert_eq!(errs.len(), 2);
    for e in &errs {
        let FrameError::NotJson { prefix, .. } = e else {
            panic!("{e:?}")
        };
        assert!(prefix.len() <= 64);
        assert_eq!(e.rule(), "FRAME-13");
        assert!(!e.is_fatal());
    }
    assert!(matches!(events.last(), Some(DecodeEvent::Frame(f)) if f.frame_type() == Some("ok")));
}

#[test]
fn frame_13_after_a_fatal_error_nothing_more_is_handed_up() {
    let mut decoder = StreamDecoder::new();
    decoder.handle_bytes(b"[]\n{\"type\":\"a\"}\n");
    decoder.handle_bytes(b"{\"type\":\"b\"}\n");
    decoder.handle_eof();
    assert!(decoder.is_failed());
    assert!(matches!(
        decoder.poll_event(),
        Some(DecodeEvent::Error(FrameError::NotAnObject))
    ));
    assert!(decoder.poll_event().is_none());
}

#[test]
fn frame_01_invalid_utf8_in_a_plain_line_becomes_u_fffd_as_in_the_reference_client() {
    let got = values(&decode(b"{\"type\":\"a\",\"t\":\"\xff\xc3(\"}\n", V1));
    assert_eq!(
        got,
        vec![Ok(json!({"type": "a", "t": "\u{fffd}\u{fffd}("}))]
    );
}

#[test]
fn frame_01_invalid_json_grammar_is_rejected() {
    for bad in [
        &b"{\"a\":01}"[..],
        b"{\"a\":1.}",
        b"{\"a\":-}",
        b"{\"a\":tru}",
        b"{\"a\" 1}",
        b"{a:1}",
        b"{\"a\":\"\x01\"}",
        b"{\"a\":\"\\x\"}",
        b"{\"a\":\"\\u12g4\"}",
        b"{\"a\":[1,]}",
        b"{\"a\":1",
        b"{\"a\":1}}",
    ] {
        let got = errors(&decode(bad, V1));
        assert!(
            matches!(&got[..], [FrameError::NotJson { .. }]),
            "{:?} -> {got:?}",
            String::from_utf8_lossy(bad)
        );
    }
    for good in [
        &b"{\"a\":-0.5e+10,\"b\":[true,false,null,{}],\"c\":\"\\ud800\"}"[..],
        b"{}",
        b"{\"\":{\"\":[[]]}}",
    ] {
        let got = decode(good, V1);
        assert!(
            matches!(&got[..], [DecodeEvent::Frame(_)]),
            "{:?}",
            String::from_utf8_lossy(good)
        );
    }
}

#[test]
fn frame_15_eof_inside_a_sequence_is_fatal_and_noise_inside_keeps_it_open() {
    let p = vec![1u8; 256 * 1024];
    let n = 1 << 20;
    let mut input = chunk_line("c", 0, 4, n, &p);
    input.extend_from_slice(b"not json\n");
    input.extend(chunk_line("c", 1, 4, n, &p));
    let got = errors(&decode(&input, V2));
    assert!(
        matches!(
            &got[..],
            [FrameError::NotJson { .. }, FrameError::SequenceTruncated]
        ),
        "{got:?}"
    );
    assert_eq!(
        FrameError::SequenceTruncated.to_string(),
        "rpc chunk sequence truncated by end of stream"
    );
}

/// Decodes `input` with a late check (`StreamDecoder::check_late`), and returns every
/// event.
fn decode_late(input: &[u8], protocol: ProtocolVersion) -> Vec<DecodeEvent> {
    let mut decoder = StreamDecoder::with_config(musewire_core::frame::DecoderConfig {
        protocol,
        negotiation: musewire_core::frame::Negotiation::Ignore,
        ..Default::default()
    });
    decoder.check_late();
    decoder.handle_bytes(input);
    decoder.handle_eof();
    std::iter::from_fn(|| decoder.poll_event()).collect()
}

/// The events with every unchecked frame checked, as a consumer of a late check does.
fn checked(events: Vec<DecodeEvent>) -> Vec<DecodeEvent> {
    events
        .into_iter()
        .map(|event| match event {
            DecodeEvent::Frame(mut frame) => match frame.check() {
                Ok(()) => DecodeEvent::Frame(frame),
                Err(error) => DecodeEvent::Error(error),
            },
            event => event,
        })
        .collect()
}

#[test]
fn frame_13_a_late_check_hands_plain_lines_up_unchecked_and_checks_them_as_at_once() {
    // FRAME-01, FRAME-13 with the late check the Client uses: plain lines go up unchecked,
    // their envelope unread; checking them gives what the decoder gives at once: the frame with
    // its envelope, a NotJson error, or the fatal NotAnObject.
    let input =
        b"{\"type\":\"response\",\"id\":\"7\",\"command\":\"get_state\"}\n{not json\n[1,2]\n";
    let late = decode_late(input, V1);
    assert_eq!(late.len(), 3);
    for event in &late {
        let DecodeEvent::Frame(frame) = event else {
            panic!("a plain line goes up as a frame: {event:?}");
        };
        assert!(!frame.is_checked());
        assert_eq!((frame.frame_type(), frame.id()), (None, None));
    }
    let late = checked(late);
    let DecodeEvent::Frame(frame) = &late[0] else {
        panic!("the object checks: {:?}", late[0]);
    };
    assert!(frame.is_checked());
    assert_eq!(
        (frame.frame_type(), frame.id(), frame.command()),
        (Some("response"), Some("7"), Some("get_state"))
    );
    assert!(
        matches!(&late[1], DecodeEvent::Error(FrameError::NotJson { prefix, .. }) if prefix == "{not json")
    );
    assert_eq!(late[2], DecodeEvent::Error(FrameError::NotAnObject));
    // What the decoder gives at once is the same.
    assert_eq!(late, decode(input, V1));
}

#[test]
fn frame_09_a_late_check_still_checks_chunks_escapes_and_lines_inside_a_sequence() {
    // The lines whose check changes how decoding goes on are checked at once: a chunk
    // (FRAME-07..09), a line with a `\u` escape (which could spell rpc_chunk), and any
    // line while a sequence is open (FRAME-09: it interrupts the sequence).
    let first = chunk_line("c1", 0, 4, 1 << 20, &vec![b' '; 256 * 1024]);
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"type\":\"a\",\"t\":\"\\u00e9\"}\n");
    input.extend_from_slice(&first);
    input.push(b'\n');
    input.extend_from_slice(b"{\"type\":\"b\"}\n");
    let late = decode_late(&input, V2);
    assert!(
        matches!(&late[0], DecodeEvent::Frame(f) if f.is_checked() && f.frame_type() == Some("a"))
    );
    assert_eq!(late[1], DecodeEvent::Error(FrameError::SequenceInterrupted));
    assert_eq!(late, decode(&input, V2));
}

#[test]
fn frame_10_a_late_check_hands_a_reassembled_payload_up_unchecked_and_checks_it_as_at_once() {
    // FRAME-10 with the late check: a reassembled payload goes up unchecked; checked, it
    // is the frame the decoder gives at once, or the same fatal error.
    let object = frame_of_len(3 << 19);
    let not_json = vec![b'x'; 3 << 19];
    for payload in [&object, &not_json] {
        let mut input = Vec::new();
        for line in chunk_lines("c1", payload) {
            input.extend_from_slice(&line);
        }
        let late = decode_late(&input, V2);
        assert!(
            matches!(&late[..], [DecodeEvent::Frame(f)] if !f.is_checked() && f.was_chunked()),
            "{late:?}"
        );
        let late = checked(late);
        assert_eq!(late, decode(&input, V2));
        if payload == &not_json {
            assert!(matches!(
                &late[..],
                [DecodeEvent::Error(FrameError::ReassembledNotJson { .. })]
            ));
        } else {
            assert!(matches!(&late[..], [DecodeEvent::Frame(f)] if f.frame_type() == Some("big")));
        }
    }
}
