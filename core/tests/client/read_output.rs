//! The host side of `read_output` (OUT-10, ours): the ready frame's
//! offer, the client's refusal before writing, the typed page and failure code, and the
//! drivers' shared whole-output fetch (`OutputFetch`) against a fake agent in-process.

use crate::common as client_common;

use std::time::Instant;

use client_common::*;
use musewire_core::client::{
    Action, Call, CallError, CallResult, ClientConfig, ClientError, ClientEvent, FetchError,
    FetchProgress, Input, OutputFetch,
};
use musewire_core::output::{read_result, OutputCatalog, ReadParams, WalkError, TEXT_MEDIA_TYPE};
use musewire_wire::output::{
    Availability, Encoding, OutputError, OutputErrorCode, OutputRef, ReadResult, StoredOutput,
};
use musewire_wire::{
    AgentFrame, Command, ReadOutput, ReadOutputOffer, Ready, ResponseData, ToolResult,
};
use musewire_wire::{Answered, FromAnswer};
use serde_json::{json, Value};

const READY_OFFER: &str = r#"{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1,2],"maxFrameBytes":1048576,"maxReassembledFrameBytes":67108864,"readOutput":{"version":1,"maxLengthBytes":1048576}}"#;

fn reference() -> OutputRef {
    OutputRef::from_random([0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60, 0x71])
}

/// A v2 session with an agent whose ready frame is `ready`; actions drained.
fn session(ready: &str) -> Harness {
    let mut h = Harness::new(ClientConfig::default());
    h.agent(ready);
    h.drain();
    h.agent(r#"{"id":"req_1","type":"response","command":"negotiate_protocol","success":true,"data":{"protocolVersion":2}}"#);
    h.drain();
    h
}

fn read_command(offset: u64, length: Option<u64>) -> Command {
    Command::ReadOutput(ReadOutput {
        session_id: "s-1".into(),
        item_id: "call-1".into(),
        output_ref: reference().to_string(),
        offset_bytes: offset,
        length_bytes: length,
        ..ReadOutput::default()
    })
}

#[test]
fn out_10_wire_offer_and_command_are_typed_as_the_contract_writes_them() {
    let AgentFrame::Ready(ready) = AgentFrame::from_slice(READY_OFFER.as_bytes()).unwrap() else {
        panic!("a ready frame")
    };
    assert_eq!(
        ready.read_output,
        Some(ReadOutputOffer {
            version: 1,
            max_length_bytes: 1_048_576,
            ..Default::default()
        })
    );
    // Written back unchanged (CALL-06), and absent when not offered.
    assert_eq!(
        AgentFrame::Ready(ready).to_vec(),
        READY_OFFER.as_bytes().to_vec()
    );
    let plain: Ready =
        serde_json::from_value(json!({"protocolVersion": 1, "supportedProtocolVersions": [1]}))
            .unwrap();
    assert_eq!(plain.read_output, None);

    let line = r#"{"id":"r","type":"read_output","sessionId":"s-1","itemId":"call-1","outputRef":"out-0a1b2c3d4e5f6071","offsetBytes":5,"lengthBytes":7}"#;
    let (id, command) = Command::from_slice_with_id(line.as_bytes()).unwrap();
    assert_eq!(id.as_deref(), Some("r"));
    assert_eq!(command, read_command(5, Some(7)));
    assert_eq!(command.to_vec_with_id(Some("r")), line.as_bytes());
    // `lengthBytes` is optional (OUT-03's default applies).
    let (_, short) = Command::from_slice_with_id(
        br#"{"type":"read_output","sessionId":"s-1","itemId":"call-1","outputRef":"out-0a1b2c3d4e5f6071","offsetBytes":0}"#,
    )
    .unwrap();
    assert_eq!(short, read_command(0, None));
}

#[test]
fn out_10_offered_read_output_is_sent_and_its_page_is_typed() {
    let mut h = session(READY_OFFER);
    assert!(h.client.serves_read_output());
    assert_eq!(h.client.read_output_max_bytes(), Some(1_048_576));
    let id = h.request(Call::Send(read_command(0, Some(4)))).unwrap();
    let (written, _) = h.split();
    assert_eq!(
        written,
        [
            json!({"id": id.wire(), "type": "read_output", "sessionId": "s-1", "itemId": "call-1",
                "outputRef": "out-0a1b2c3d4e5f6071", "offsetBytes": 0, "lengthBytes": 4})
        ]
    );
    let page = json!({"sessionId": "s-1", "itemId": "call-1", "outputRef": "out-0a1b2c3d4e5f6071",
        "content": "héj", "encoding": "utf8", "mediaType": TEXT_MEDIA_TYPE,
        "offsetBytes": 0, "byteLen": 4, "eof": true});
    h.agent(
        &json!({"id": id.wire(), "type": "response", "command": "read_output", "success": true,
                "data": page})
        .to_string(),
    );
    let (_, events) = h.split();
    let [ClientEvent::Response {
        request,
        outcome: Ok(data),
        ..
    }] = events.as_slice()
    else {
        panic!("one response: {events:?}")
    };
    assert_eq!(*request, id);
    let ResponseData::ReadOutput(result) = data else {
        panic!("typed as a read result: {data:?}")
    };
    assert_eq!(result.encoding, Encoding::Utf8);
    assert_eq!(result.bytes().unwrap(), "héj".as_bytes());
    assert!(result.eof);
    // What a driver's call gives back: the page, typed.
    let typed = ReadResult::from_answer(Answered::Data(data.clone())).unwrap();
    assert_eq!(&typed, result);
    assert_eq!(serde_json::to_value(data).unwrap(), page);
}

#[test]
fn out_10_not_offered_is_refused_before_anything_is_written() {
    // A ready frame without the offer (omp, pi), another version, a maximum of 0.
    for ready in [
        READY_V2.to_owned(),
        READY_OFFER.replace(r#""version":1"#, r#""version":2"#),
        READY_OFFER.replace(r#""maxLengthBytes":1048576"#, r#""maxLengthBytes":0"#),
    ] {
        let mut h = session(&ready);
        assert!(!h.client.serves_read_output(), "{ready}");
        assert_eq!(
            h.request(Call::Send(read_command(0, None))),
            Err(ClientError::ReadOutputNotOffered)
        );
        // An untyped command of that type is the same command.
        let untyped = Command::other(
            "read_output",
            json!({"sessionId": "s-1"}).as_object().unwrap().clone(),
        );
        assert_eq!(
            h.request(Call::Send(untyped)),
            Err(ClientError::ReadOutputNotOffered)
        );
        assert!(h.drain().is_empty(), "nothing written, no event");
    }
    // An agent without a ready frame (v1-only).
    let mut h = Harness::v1();
    assert_eq!(
        h.request(Call::Send(read_command(0, None))),
        Err(ClientError::ReadOutputNotOffered)
    );
    assert!(h.drain().is_empty());
    // Before the ready frame the offer is not known: refused (saying so), not held.
    let mut h = Harness::new(ClientConfig::default());
    assert!(!h.client.serves_read_output());
    // FRAME-03's start-up probe goes as the agent starts, before anything else.
    assert_eq!(h.split().0.len(), 1);
    assert_eq!(
        h.request(Call::Send(read_command(0, None))),
        Err(ClientError::ReadOutputBeforeReady)
    );
    h.agent(READY_OFFER);
    let (written, _) = h.split();
    assert_eq!(written.len(), 1, "only the negotiation: {written:?}");
    assert_eq!(written[0]["type"], "negotiate_protocol");
}

#[test]
fn out_10_offer_is_known_from_the_ready_frame_while_negotiating() {
    // The ready frame has come (v2 offered); the negotiation is not answered yet: the read
    // is held with the other commands and written once the session is ready.
    let mut h = Harness::new(ClientConfig::default());
    h.agent(READY_OFFER);
    h.drain();
    assert!(h.client.serves_read_output());
    let id = h.request(Call::Send(read_command(0, Some(10)))).unwrap();
    assert!(h.split().0.is_empty(), "held until ready");
    h.agent(r#"{"id":"req_1","type":"response","command":"negotiate_protocol","success":true,"data":{"protocolVersion":2}}"#);
    let (written, _) = h.split();
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["id"], id.wire());
    assert_eq!(written[0]["type"], "read_output");
}

#[test]
fn out_10_offer_is_forgotten_on_restart() {
    let mut h = session(READY_OFFER);
    assert!(h.client.serves_read_output());
    h.input(Input::Call(Call::Restart));
    h.drain();
    assert!(!h.client.serves_read_output());
    h.agent(READY_V2);
    h.drain();
    h.agent(r#"{"id":"req_2","type":"response","command":"negotiate_protocol","success":true,"data":{"protocolVersion":2}}"#);
    h.drain();
    assert_eq!(
        h.request(Call::Send(read_command(0, None))),
        Err(ClientError::ReadOutputNotOffered)
    );
}

#[test]
fn out_10_params_the_agent_would_refuse_are_refused_before_writing() {
    let small = READY_OFFER.replace(r#""maxLengthBytes":1048576"#, r#""maxLengthBytes":100"#);
    let mut h = session(&small);
    assert_eq!(h.client.read_output_max_bytes(), Some(100));
    let over = h.request(Call::Send(read_command(0, Some(101))));
    assert!(
        matches!(&over, Err(ClientError::InvalidReadOutput(OutputError::InvalidParams { field, .. })) if field == "lengthBytes"),
        "{over:?}"
    );
    // OUT-03: the default length (65,536) is over this agent's maximum too.
    assert!(h.request(Call::Send(read_command(0, None))).is_err());
    // OUT-09: a path or a URI is not a reference.
    let mut path = read_command(0, Some(10));
    if let Command::ReadOutput(read) = &mut path {
        read.output_ref = "/etc/passwd".into();
    }
    assert_eq!(
        h.request(Call::Send(path)),
        Err(ClientError::InvalidReadOutput(
            OutputError::PathNotReference
        ))
    );
    let mut uri = read_command(0, Some(10));
    if let Command::ReadOutput(read) = &mut uri {
        read.output_ref = "file:///etc/passwd".into();
    }
    assert_eq!(
        h.request(Call::Send(uri)),
        Err(ClientError::InvalidReadOutput(OutputError::UriNotReference))
    );
    assert!(h.drain().is_empty(), "nothing written");
    // Within the maximum it goes.
    assert!(h.request(Call::Send(read_command(0, Some(100)))).is_ok());
    assert_eq!(h.split().0.len(), 1);
}

#[test]
fn out_10_a_failed_read_has_its_code_typed() {
    let mut h = session(READY_OFFER);
    for code in OutputErrorCode::ALL {
        let id = h.request(Call::Send(read_command(0, None))).unwrap();
        h.drain();
        h.agent(
            &json!({"id": id.wire(), "type": "response", "command": "read_output",
                    "success": false, "error": "no", "code": code.as_str()})
            .to_string(),
        );
        let (_, events) = h.split();
        let [ClientEvent::Response {
            outcome: Err(failure),
            ..
        }] = events.as_slice()
        else {
            panic!("a failure: {events:?}")
        };
        assert_eq!(failure.output_code(), Some(code));
        assert_eq!(CallError::Failed(failure.clone()).output_code(), Some(code));
    }
    // A code that is not a read failure's is none of them.
    assert_eq!(OutputErrorCode::from_wire("session_busy"), None);
    // The code of an OutputError is its serde tag, as the agent writes it.
    assert_eq!(
        OutputError::OffsetOutOfRange {
            offset: 9,
            byte_len: 3
        }
        .code(),
        OutputErrorCode::OffsetOutOfRange
    );
    assert_eq!(OutputError::Unknown.code(), OutputErrorCode::Unknown);
    assert_eq!(
        OutputError::ReadTimedOut.code(),
        OutputErrorCode::ReadTimedOut
    );
}

#[test]
fn out_02_stored_output_in_tool_result_details_is_typed() {
    let stored = StoredOutput {
        session_id: "s-1".into(),
        item_id: "call-1".into(),
        output_ref: reference(),
        byte_len: 10_485_760,
        media_type: TEXT_MEDIA_TYPE.into(),
        availability: Availability::Available,
    };
    let result: ToolResult = wire(json!({
        "content": [{"type": "text", "text": "head…tail"}],
        "details": {"exitCode": 0, "storedOutput": stored},
    }));
    assert_eq!(result.stored_output(), Some(stored));
    // A tool's own details without it, or of another shape, name none.
    for details in [
        json!({"exitCode": 0}),
        json!("text"),
        json!({"storedOutput": 3}),
    ] {
        let result: ToolResult = wire(json!({"content": [], "details": details}));
        assert_eq!(result.stored_output(), None);
    }
}

/// How the fake agent answers one page.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Fault {
    /// Honestly, from its store (pages shortened at character boundaries: OUT-05).
    None,
    /// The page starts elsewhere than asked.
    WrongOffset,
    /// More bytes than asked.
    TooLong,
    /// Says `eof` one byte short of the end.
    EarlyEof,
    /// A failure with this code.
    Fail(OutputErrorCode),
}

/// A fake agent in-process serving one stored output, on a client that was offered
/// `read_output`.
struct FakeAgent {
    h: Harness,
    stored: StoredOutput,
    bytes: Vec<u8>,
    catalog: OutputCatalog,
    /// How the agent answers the n-th page.
    fault: Box<dyn Fn(u64) -> Fault>,
    asked: Vec<ReadParams>,
}

impl FakeAgent {
    fn new(bytes: &[u8], media_type: &str) -> Self {
        let stored = StoredOutput {
            session_id: "s-1".into(),
            item_id: "call-1".into(),
            output_ref: reference(),
            byte_len: bytes.len() as u64,
            media_type: media_type.into(),
            availability: Availability::Available,
        };
        let mut catalog = OutputCatalog::default();
        catalog.insert(stored.clone());
        FakeAgent {
            h: session(READY_OFFER),
            stored,
            bytes: bytes.to_vec(),
            catalog,
            fault: Box::new(|_| Fault::None),
            asked: Vec::new(),
        }
    }

    /// One page's round trip through the client, as a driver's call makes it.
    fn request(&mut self, call: Call) -> Result<ReadResult, CallError> {
        let id = match self.h.input(Input::Call(call)) {
            CallResult::Request(Ok(id)) => id,
            CallResult::Request(Err(e)) => return Err(CallError::Refused(e)),
            other => panic!("a request: {other:?}"),
        };
        let lines: Vec<Vec<u8>> = self
            .h
            .drain()
            .into_iter()
            .filter_map(|a| match a {
                Action::Write { bytes } => Some(bytes),
                _ => None,
            })
            .collect();
        let [line] = lines.as_slice() else {
            panic!("one line written: {lines:?}")
        };
        let (wire_id, command) = Command::from_slice_with_id(line.trim_ascii_end()).unwrap();
        assert_eq!(wire_id, Some(id.wire()));
        assert_eq!(command.type_name(), "read_output");
        let params = ReadParams::from_value(&command.to_value_with_id(None)).unwrap();
        let n = self.asked.len() as u64;
        self.asked.push(params.clone());
        let answer = match (self.fault)(n) {
            Fault::Fail(code) => {
                json!({"id": id.wire(), "type": "response", "command": "read_output",
                       "success": false, "error": "refused", "code": code.as_str()})
            }
            fault => {
                let read = self.catalog.plan_read(&params, Instant::now()).unwrap();
                let start = read.request.offset_bytes as usize;
                let end = (start + read.request.length_bytes as usize).min(self.bytes.len());
                let mut page =
                    read_result(&read.request, &self.bytes[start..end], self.stored.byte_len)
                        .unwrap();
                match fault {
                    Fault::WrongOffset => page.offset_bytes += 1,
                    Fault::TooLong => {
                        let end = (end + 1).min(self.bytes.len());
                        page.content = String::from_utf8(self.bytes[start..end].to_vec()).unwrap();
                        page.byte_len = (end - start) as u64;
                    }
                    Fault::EarlyEof => page.eof = true,
                    _ => {}
                }
                json!({"id": id.wire(), "type": "response", "command": "read_output",
                       "success": true, "data": page})
            }
        };
        self.h.agent(&answer.to_string());
        let (_, events) = self.h.split();
        let [ClientEvent::Response { outcome, .. }] = events.as_slice() else {
            panic!("one response: {events:?}")
        };
        match outcome.clone() {
            Ok(data) => CallError::read::<ReadResult>(Answered::Data(data)),
            Err(failure) => Err(CallError::Failed(failure)),
        }
    }

    /// Runs `fetch` to its end as both drivers do; the sink collects the bytes and progress.
    fn fetch(
        &mut self,
        mut fetch: OutputFetch,
    ) -> (Result<u64, FetchError>, Vec<u8>, Vec<FetchProgress>) {
        let mut got = Vec::new();
        let mut progress = Vec::new();
        let mut sink = |bytes: &[u8], p: FetchProgress| {
            got.extend_from_slice(bytes);
            progress.push(p);
            Ok(())
        };
        let outcome = (|| {
            while let Some(call) = fetch.next_call() {
                let answer = self.request(call);
                fetch.page(answer, &mut sink)?;
            }
            Ok(fetch.finish().byte_len)
        })();
        (outcome, got, progress)
    }
}

/// Text with characters of 1 to 4 bytes, so that pages end inside characters.
fn mixed_text(len: usize) -> Vec<u8> {
    let pieces = ["a", "é", "€", "😀", "\n"];
    let mut text = String::new();
    let mut i = 0;
    while text.len() < len {
        text.push_str(pieces[i % pieces.len()]);
        i += 1;
    }
    text.into_bytes()
}

#[test]
fn out_10_fetch_walks_pages_of_varying_lengths_to_eof_byte_for_byte() {
    let bytes = mixed_text(1000);
    let mut agent = FakeAgent::new(&bytes, TEXT_MEDIA_TYPE);
    let fetch = OutputFetch::stored(&agent.stored, 7).unwrap();
    let (outcome, got, progress) = agent.fetch(fetch);
    assert_eq!(outcome.unwrap(), bytes.len() as u64);
    assert_eq!(got, bytes, "the pages put together are the output exactly");
    // OUT-04: each page asked where the previous one ended (its byteLen, not the 7 asked),
    // so the offsets are not multiples of 7 once a character was cut.
    let offsets: Vec<u64> = agent.asked.iter().map(|p| p.offset_bytes).collect();
    assert!(offsets.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] <= 7));
    assert!(offsets.iter().any(|o| o % 7 != 0), "{offsets:?}");
    let steps: Vec<u64> = offsets.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(steps.iter().any(|s| *s < 7), "some pages were shorter");
    // The last page is short (normal: OUT-04); progress counts up to the total.
    assert!(bytes.len() as u64 - offsets.last().unwrap() <= 7);
    assert_eq!(progress.len(), agent.asked.len());
    let last = progress.last().unwrap();
    assert_eq!(
        (last.received, last.total, last.pages),
        (
            bytes.len() as u64,
            Some(bytes.len() as u64),
            agent.asked.len() as u64
        )
    );
    assert!(progress.windows(2).all(|w| w[1].received > w[0].received));
}

#[test]
fn out_10_fetch_reassembles_binary_pages_and_a_short_last_page() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
    let mut agent = FakeAgent::new(&bytes, "application/octet-stream");
    // Without a known length: the walk ends at eof alone.
    let fetch = OutputFetch::new("s-1", "call-1", reference(), 300).unwrap();
    let (outcome, got, progress) = agent.fetch(fetch);
    assert_eq!(outcome.unwrap(), 1000);
    assert_eq!(got, bytes);
    let offsets: Vec<u64> = agent.asked.iter().map(|p| p.offset_bytes).collect();
    assert_eq!(offsets, [0, 300, 600, 900], "the last page holds 100 bytes");
    assert_eq!(progress.last().unwrap().total, None);
}

#[test]
fn out_10_fetch_refuses_inconsistent_pages() {
    let bytes = mixed_text(100);
    for (fault, check) in [
        (
            Fault::WrongOffset,
            (|e: &FetchError| {
                matches!(
                    e,
                    FetchError::Page {
                        error: WalkError::WrongOffset { .. },
                        ..
                    }
                )
            }) as fn(&FetchError) -> bool,
        ),
        (Fault::TooLong, |e| {
            matches!(
                e,
                FetchError::Page {
                    error: WalkError::TooLong { .. },
                    ..
                }
            )
        }),
        // An eof before the known length.
        (Fault::EarlyEof, |e| {
            matches!(e, FetchError::Length { eof: true, .. })
        }),
        (
            Fault::Fail(OutputErrorCode::Expired),
            |e| matches!(e, FetchError::Call { error, .. } if error.output_code() == Some(OutputErrorCode::Expired)),
        ),
    ] {
        let mut agent = FakeAgent::new(&bytes, TEXT_MEDIA_TYPE);
        // The third page is the bad one.
        agent.fault = Box::new(move |n| if n == 2 { fault } else { Fault::None });
        let fetch = OutputFetch::stored(&agent.stored, 10).unwrap();
        let (outcome, got, _) = agent.fetch(fetch);
        let error = outcome.unwrap_err();
        assert!(check(&error), "{fault:?}: {error}");
        assert!(error.to_string().contains("offset") || matches!(error, FetchError::Length { .. }));
        // The two good pages reached the sink; nothing of the bad one did.
        assert_eq!(got, bytes[..got.len()]);
        assert_eq!(agent.asked.len(), 3, "{fault:?}: stopped at the bad page");
    }
}

#[test]
fn out_10_fetch_refuses_a_page_past_the_known_end() {
    // The agent's output is longer than the tool result said: the page that goes past the
    // known length is refused, and nothing of it reaches the sink.
    let bytes = mixed_text(100);
    let mut agent = FakeAgent::new(&bytes, TEXT_MEDIA_TYPE);
    let fetch = OutputFetch::stored(&agent.stored, 40)
        .unwrap()
        .expecting(50);
    let (outcome, got, _) = agent.fetch(fetch);
    let error = outcome.unwrap_err();
    assert!(
        matches!(error, FetchError::Length { expected: 50, eof: false, got } if got > 50),
        "{error}"
    );
    assert!(got.len() <= 40, "only the first page: {}", got.len());
}

#[test]
fn out_10_fetch_from_an_agent_that_does_not_offer_it_is_refused_at_once() {
    let mut agent = FakeAgent::new(b"abc", TEXT_MEDIA_TYPE);
    agent.h = session(READY_V2);
    let fetch = OutputFetch::stored(&agent.stored, 10).unwrap();
    let mut fetch = fetch;
    let call = fetch.next_call().unwrap();
    let CallResult::Request(Err(refused)) = agent.h.input(Input::Call(call)) else {
        panic!("refused")
    };
    assert!(agent.h.drain().is_empty(), "nothing written");
    let error = fetch
        .page(Err(CallError::Refused(refused)), &mut |_: &[u8], _| Ok(()))
        .unwrap_err();
    assert!(
        matches!(
            error,
            FetchError::Call {
                offset: 0,
                error: CallError::Refused(ClientError::ReadOutputNotOffered)
            }
        ),
        "{error}"
    );
}

#[test]
fn out_07_fetch_of_an_expired_or_unavailable_output_asks_nothing() {
    for (availability, expected) in [
        (Availability::Expired, OutputError::Expired),
        (Availability::Unavailable, OutputError::Unavailable),
    ] {
        let stored = StoredOutput {
            session_id: "s-1".into(),
            item_id: "call-1".into(),
            output_ref: reference(),
            byte_len: 3,
            media_type: TEXT_MEDIA_TYPE.into(),
            availability,
        };
        let error = OutputFetch::stored(&stored, 10).unwrap_err();
        assert!(matches!(error, FetchError::Invalid(e) if e == expected));
    }
    assert!(matches!(
        OutputFetch::new("s", "i", reference(), 0),
        Err(FetchError::Invalid(OutputError::InvalidParams { .. }))
    ));
}

#[test]
fn out_10_read_output_is_built_from_the_checked_params() {
    let params = ReadParams::from_value(&json!({"sessionId": "s-1", "itemId": "call-1",
        "outputRef": "out-0a1b2c3d4e5f6071", "offsetBytes": 3}))
    .unwrap();
    let command = Command::from(ReadOutput::from(&params));
    assert_eq!(command, read_command(3, Some(65_536)));
    let value: Value = command.to_value_with_id(None);
    assert_eq!(ReadParams::from_value(&value).unwrap(), params);
}
