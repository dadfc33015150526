//! CALL-06 on frames the reference encoder wrote: every logical frame of the FRAME corpus
//! (`conformance/corpus/frame/*.stream`) and of the recorded oh-my-pi session
//! (`conformance/samples/omp-session.stream`) parses into the typed model and serialises
//! back to the same JSON value; a frame holding a lone surrogate escape, which no serde
//! `Value` holds, parses too and writes back unchanged.

use std::path::Path;

use musewire_core::frame::{DecodeEvent, Frame, StreamDecoder};
use musewire_wire::{AgentFrame, AssistantMessageEvent, ResponseData, SessionEvent};
use serde_json::Value;

fn frames(path: &Path) -> Vec<Frame> {
    let bytes = std::fs::read(path).unwrap();
    let mut decoder = StreamDecoder::new();
    decoder.handle_bytes(&bytes);
    decoder.handle_eof();
    let mut frames = Vec::new();
    while let Some(event) = decoder.poll_event() {
        if let DecodeEvent::Frame(frame) = event {
            frames.push(frame);
        }
    }
    frames
}

fn round_trip(name: &str, frame: &Frame) -> AgentFrame {
    let expected: Value = frame.parse().unwrap();
    // The lenient parse never fails on an object; duplicate members resolve as in JSON.parse.
    let typed =
        AgentFrame::from_slice_lenient(frame.payload()).unwrap_or_else(|e| panic!("{name}: {e}"));
    // What the Client reads (the scanner's surrogate flag, no second search) is the same.
    assert_eq!(
        AgentFrame::lenient(frame.parse(), frame.payload())
            .unwrap_or_else(|e| panic!("{name}: {e}")),
        typed,
        "{name}"
    );
    assert_eq!(
        typed.to_value(),
        expected,
        "{name}: {}",
        String::from_utf8_lossy(frame.payload())
    );
    if frame.frame_type().is_some() {
        assert_eq!(typed.type_name(), frame.frame_type(), "{name}");
    }
    typed
}

#[test]
fn call06_corpus_frames_round_trip() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/corpus/frame");
    let mut files = 0;
    let mut count = 0;
    let mut strict = 0;
    let mut surrogates = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "stream") {
            continue;
        }
        files += 1;
        for (i, frame) in frames(&path).iter().enumerate() {
            let name = format!("{}#{i}", path.file_name().unwrap().to_string_lossy());
            if serde_json::from_slice::<Value>(frame.payload()).is_err() {
                // A lone surrogate escape: JSON.parse takes it, a Rust string cannot hold it;
                // the typed model holds it as a stand-in and writes it back unchanged
                // (CALL-06).
                let typed = AgentFrame::from_slice(frame.payload())
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                // The framing layer's parse reads it too.
                assert_eq!(frame.parse::<AgentFrame>().unwrap(), typed, "{name}");
                let written = typed.to_vec();
                assert_eq!(
                    AgentFrame::from_slice(&written).unwrap(),
                    typed,
                    "{name}: {}",
                    String::from_utf8_lossy(&written)
                );
                if path.ends_with("frame13-accepts-lone-surrogate-escape.stream") {
                    // Already as JSON.stringify writes it: byte for byte.
                    assert_eq!(written, frame.payload(), "{name}");
                    surrogates += 1;
                }
                continue;
            }
            round_trip(&name, frame);
            count += 1;
            strict += usize::from(AgentFrame::from_slice(frame.payload()).is_ok());
        }
    }
    assert!(files > 100, "corpus files: {files}");
    assert_eq!(surrogates, 1, "the lone-surrogate corpus frame is typed");
    assert!(count > 100, "frames: {count}");
    // Only the duplicate-member cases need the lenient path.
    assert!(
        count - strict <= 5,
        "{} of {count} frames needed the lenient parse",
        count - strict
    );
}

#[test]
fn frame03_call06_omp_session_sample_is_fully_typed() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/samples/omp-session.stream");
    let frames = frames(&path);
    assert_eq!(frames.len(), 807);
    let mut deltas = 0;
    let mut messages = 0;
    for (i, frame) in frames.iter().enumerate() {
        let typed = round_trip(&format!("omp-session#{i}"), frame);
        assert_eq!(AgentFrame::from_slice(frame.payload()).unwrap(), typed);
        match &typed {
            AgentFrame::Ready(ready) => {
                assert_eq!(i, 0, "FRAME-03: ready comes first");
                assert_eq!(ready.protocol_version, 1);
                assert!(ready.supports(2));
                assert_eq!(ready.max_frame_bytes, Some(1_048_576));
                assert_eq!(ready.max_reassembled_frame_bytes, Some(67_108_864));
            }
            AgentFrame::Response(response) => match &response.data {
                Some(ResponseData::NegotiateProtocol(data)) => assert_eq!(data.protocol_version, 2),
                Some(ResponseData::Messages(data)) => messages += data.messages.len(),
                other => panic!("unexpected response data {other:?}"),
            },
            AgentFrame::Event(SessionEvent::MessageUpdate(update)) => {
                assert!(matches!(
                    update.assistant_message_event,
                    AssistantMessageEvent::TextDelta(_)
                ));
                deltas += 1;
            }
            other => panic!("unexpected frame {other:?}"),
        }
    }
    assert_eq!(deltas, 804);
    assert!(messages > 0);
}
