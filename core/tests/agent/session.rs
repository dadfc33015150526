//! The Agent's session rules: FRAME-03..06, 11, 12, 14, 16 and CALL-01, 02, 06, 08, 10.

use crate::common as agent_common;

use agent_common::*;
use musewire_core::agent::{
    Agent, AgentAction, AgentConfig, AgentError, AgentEvent, CommandFailure, UnknownCommands,
};
use musewire_core::frame::ProtocolVersion;
use musewire_wire::{AgentFrame, Command, ErrorCode, PromptResult, ResponseData};
use serde_json::{json, Value};

#[test]
fn frame_03_the_ready_frame_comes_first_exactly() {
    let mut agent = Agent::new(AgentConfig::default());
    let Some(AgentAction::Write(line)) = agent.poll_action() else {
        panic!("the ready frame first")
    };
    assert_eq!(line, format!("{READY}\n").as_bytes());
    assert!(agent.poll_action().is_none());
    assert_eq!(agent.protocol(), ProtocolVersion::V1);
}

#[test]
fn frame_04_05_negotiation_is_answered_in_v1_and_chunking_starts_with_the_next_frame() {
    let mut h = Harness::fresh();
    h.host(r#"{"id":"n1","type":"negotiate_protocol","protocolVersion":2}"#);
    let (lines, events) = h.raw();
    h.decoder.handle_bytes(&lines[0]);
    assert_eq!(
        lines,
        [b"{\"id\":\"n1\",\"type\":\"response\",\"command\":\"negotiate_protocol\",\"success\":true,\"data\":{\"protocolVersion\":2}}\n".to_vec()]
    );
    assert_eq!(
        events,
        [AgentEvent::ProtocolChanged {
            protocol: ProtocolVersion::V2
        }]
    );
    assert_eq!(h.agent.protocol(), ProtocolVersion::V2);
    let big = json!({"type": "message_end", "message": {"role": "assistant", "content": "x".repeat(3 << 20)}});
    h.agent.emit(h.now, &frame(&big)).unwrap();
    let (lines, _) = h.raw();
    assert_eq!(lines.len(), 13, "3 MiB in 256 KiB chunks");
    for (index, line) in lines.iter().enumerate() {
        let chunk: Value = serde_json::from_slice(line).unwrap();
        assert_eq!(chunk["type"], "rpc_chunk");
        assert_eq!(chunk["chunkId"], "rpc-1");
        assert_eq!(chunk["index"], index);
        assert!(line.len() <= 1 << 20);
    }
    // Read back as a host reads it.
    for line in &lines {
        h.decoder.handle_bytes(line);
    }
    let frames: Vec<Value> = std::iter::from_fn(|| h.decoder.poll_event())
        .map(|e| match e {
            musewire_core::frame::DecodeEvent::Frame(f) => f.parse().unwrap(),
            musewire_core::frame::DecodeEvent::Error(e) => panic!("{e}"),
        })
        .collect();
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[0]["command"], "negotiate_protocol");
    assert!(
        frames[1] == big,
        "the chunked frame reassembles to the original"
    );
}

#[test]
fn frame_06_any_other_version_is_refused_with_the_reference_message() {
    let mut h = Harness::fresh();
    for (asked, shown) in [
        ("3", "3"),
        ("1", "1"),
        ("\"2\"", "2"),
        ("null", "null"),
        ("1.5", "1.5"),
    ] {
        h.host(&format!(
            r#"{{"id":"n","type":"negotiate_protocol","protocolVersion":{asked}}}"#
        ));
        assert_eq!(
            h.one_frame(),
            json!({"id": "n", "type": "response", "command": "negotiate_protocol", "success": false,
                   "error": format!("Unsupported RPC protocol version: {shown}")})
        );
    }
    h.host(r#"{"type":"negotiate_protocol"}"#);
    assert_eq!(
        h.one_frame()["error"],
        "Unsupported RPC protocol version: undefined"
    );
    assert_eq!(h.agent.protocol(), ProtocolVersion::V1);
    // 2.0 is the number 2.
    h.host(r#"{"id":"n","type":"negotiate_protocol","protocolVersion":2.0}"#);
    let (frames, _) = h.split();
    assert_eq!(frames[0]["success"], true);
    assert_eq!(h.agent.protocol(), ProtocolVersion::V2);
}

#[test]
fn frame_11_chunk_lines_are_produced_one_per_poll() {
    let mut h = Harness::v2();
    h.agent
        .emit(
            h.now,
            &frame(&json!({"type": "x", "data": "y".repeat(5 << 20)})),
        )
        .unwrap();
    h.agent
        .emit(h.now, &frame(&json!({"type": "after"})))
        .unwrap();
    let mut count = 0;
    while let Some(AgentAction::Write(line)) = h.agent.poll_action() {
        count += 1;
        let frame: Value = serde_json::from_slice(&line).unwrap();
        if frame["type"] == "after" {
            break;
        }
        assert_eq!(frame["type"], "rpc_chunk");
    }
    // 5 MiB and the envelope: 21 chunks of 256 KiB, then the next frame in order.
    assert_eq!(count, 22);
}

#[test]
fn frame_12_a_response_over_the_limit_in_v1_becomes_the_overflow_response() {
    let mut h = Harness::fresh();
    let (request, _) = h.command(r#"{"id":"m","type":"get_messages"}"#);
    h.agent
        .respond(
            h.now,
            request,
            Ok(Some(ResponseData::Other(
                json!({"messages": ["z".repeat(2 << 20)]}),
            ))),
        )
        .unwrap();
    assert_eq!(
        h.one_frame(),
        json!({"id": "m", "type": "response", "command": "get_messages", "success": false,
               "error": "RPC response exceeded the transport limit"})
    );
}

#[test]
fn frame_14_a_line_that_is_not_json_gets_the_parse_failure_and_reading_goes_on() {
    let mut h = Harness::fresh();
    h.host("hello there");
    let (frames, events) = h.split();
    let error = frames[0]["error"].as_str().unwrap();
    assert!(error.starts_with("Failed to parse command: "), "{error}");
    assert_eq!(
        frames[0],
        json!({"type": "response", "command": "parse", "success": false, "error": error})
    );
    assert!(matches!(
        &events[..],
        [AgentEvent::InputError {
            rule: "FRAME-14",
            ..
        }]
    ));
    let (_, command) = h.command(r#"{"id":"1","type":"get_state"}"#);
    assert!(matches!(command, Command::GetState(_)));
    // Two JSON values on one line are not one command.
    h.host(r#"{"type":"get_state"} {}"#);
    assert_eq!(h.one_frame_or_events().0[0]["command"], "parse");
}

#[test]
fn frame_14_a_command_holding_lone_surrogates_is_accepted_and_answered_with_its_id() {
    // JSON.parse takes a lone surrogate escape (a cut emoji): the command is delivered, and
    // whatever the agent writes back holds the same escapes, so the host matches its id.
    let mut h = Harness::fresh();
    h.host(r#"{"id":"p\ud83d","type":"prompt","message":"cut \ud83d, low \ude00"}"#);
    let (lines, events) = h.raw();
    assert!(lines.is_empty(), "{lines:?}");
    let [AgentEvent::Command {
        request,
        id: Some(id),
        command: Command::Prompt(prompt),
    }] = &events[..]
    else {
        panic!("expected the prompt, got {events:?}")
    };
    assert_eq!(
        musewire_wire::display_text(&prompt.message),
        "cut \u{FFFD}, low \u{FFFD}"
    );
    assert_eq!(
        musewire_wire::display_text(id.as_str().unwrap()),
        "p\u{FFFD}"
    );
    let request = *request;
    // An event echoing the text, then the response.
    let echo =
        musewire_wire::AgentFrame::from_slice(br#"{"type":"command_output","text":"cut \ud83d"}"#)
            .unwrap();
    h.agent.emit(h.now, &echo).unwrap();
    h.agent.respond(h.now, request, Ok(None)).unwrap();
    let (lines, _) = h.raw();
    assert_eq!(
        lines,
        [
            br#"{"type":"command_output","text":"cut \ud83d"}"#.to_vec(),
            br#"{"id":"p\ud83d","type":"response","command":"prompt","success":true}"#.to_vec(),
        ]
        .map(|mut line| {
            line.push(b'\n');
            line
        })
    );
}

impl Harness {
    fn one_frame_or_events(&mut self) -> (Vec<Value>, Vec<AgentEvent>) {
        self.split()
    }
}

#[test]
fn frame_14_16_an_inbound_line_over_the_cap_is_discarded_with_a_clear_error() {
    let mut h = Harness::new(AgentConfig {
        max_input_line_bytes: 1024,
        ..AgentConfig::default()
    });
    let long = format!(r#"{{"type":"prompt","message":"{}"}}"#, "a".repeat(3000));
    // Fed in small reads: never more than the cap is held.
    for piece in long.as_bytes().chunks(100) {
        h.agent.handle_stdin(h.now, piece);
    }
    h.agent
        .handle_stdin(h.now, b"\n{\"id\":\"2\",\"type\":\"get_state\"}\n");
    let (frames, events) = h.split();
    assert_eq!(
        frames,
        [
            json!({"type": "response", "command": "parse", "success": false,
                "error": "Failed to parse command: input line exceeds the limit of 1024 bytes"})
        ]
    );
    assert!(matches!(
        &events[0],
        AgentEvent::InputError {
            rule: "FRAME-16",
            ..
        }
    ));
    assert!(matches!(
        &events[1],
        AgentEvent::Command {
            command: Command::GetState(_),
            ..
        }
    ));
    assert_eq!(
        musewire_core::agent::DEFAULT_MAX_INPUT_LINE_BYTES,
        64 * 1024 * 1024
    );
}

#[test]
fn frame_16_lines_are_read_as_the_reference_reads_them() {
    let mut h = Harness::fresh();
    // Blank and white-space lines are skipped; a BOM and non-breaking spaces are trimmed;
    // CRLF is accepted.
    h.agent.handle_stdin(
        h.now,
        "\n   \n\u{feff}\u{a0}{\"id\":\"1\",\"type\":\"get_state\"}\u{a0}\r\n".as_bytes(),
    );
    let (frames, events) = h.split();
    assert!(frames.is_empty());
    assert!(matches!(&events[..], [AgentEvent::Command { .. }]));
    // null: the dispatcher's TypeError, as a parse failure.
    h.host("null");
    assert_eq!(
        h.one_frame_or_events().0[0]["error"],
        "Failed to parse command: null is not an object (evaluating 'command.type')"
    );
    // Other values and objects without a type: "Unknown command: undefined", no command.
    for line in ["5", "[1]", "\"get_state\"", r#"{"id":"x"}"#] {
        h.host(line);
        assert_eq!(
            h.one_frame(),
            json!({"type": "response", "success": false, "error": "Unknown command: undefined"}),
            "{line}"
        );
    }
    // A non-string type is echoed as sent.
    h.host(r#"{"type":5}"#);
    assert_eq!(
        h.one_frame(),
        json!({"type": "response", "command": 5, "success": false, "error": "Unknown command: 5"})
    );
    // Invalid UTF-8 becomes U+FFFD and the command still goes through.
    h.agent.handle_stdin(
        h.now,
        b"{\"id\":\"1\",\"type\":\"prompt\",\"message\":\"a\xffb\"}\n",
    );
    let (_, events) = h.split();
    let [AgentEvent::Command {
        command: Command::Prompt(prompt),
        ..
    }] = &events[..]
    else {
        panic!("{events:?}")
    };
    assert_eq!(prompt.message, "a\u{fffd}b");
    // A last line without LF is read at the end of input.
    h.agent
        .handle_stdin(h.now, br#"{"id":"9","type":"get_state"}"#);
    assert!(h.split().1.is_empty());
    h.agent.handle_stdin_eof(h.now);
    let (_, events) = h.split();
    assert!(matches!(&events[0], AgentEvent::Command { .. }));
    assert_eq!(events.last(), Some(&AgentEvent::InputClosed));
}

#[test]
fn call_01_a_bash_can_be_answered_after_later_commands() {
    let mut h = Harness::fresh();
    let (bash, command) = h.command(r#"{"id":"b","type":"bash","command":"sleep 1"}"#);
    assert!(matches!(command, Command::Bash(ref b) if b.command == "sleep 1"));
    let (state, _) = h.command(r#"{"id":"s","type":"get_state"}"#);
    let (abort, _) = h.command(r#"{"id":"a","type":"abort_bash"}"#);
    assert_eq!(h.agent.pending_requests(), 3);
    let empty = ResponseData::State(Box::default());
    h.agent.respond(h.now, state, Ok(Some(empty))).unwrap();
    h.agent.respond(h.now, abort, Ok(None)).unwrap();
    h.agent
        .respond(
            h.now,
            bash,
            Ok(Some(ResponseData::Other(
                json!({"output": "", "exitCode": null, "cancelled": true}),
            ))),
        )
        .unwrap();
    let (frames, _) = h.split();
    let ids: Vec<&str> = frames.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["s", "a", "b"]);
    assert_eq!(
        frames[1],
        json!({"id": "a", "type": "response", "command": "abort_bash", "success": true})
    );
    // Answered once.
    assert_eq!(
        h.agent.respond(h.now, bash, Ok(None)),
        Err(AgentError::UnknownCommand(bash))
    );
    assert_eq!(h.agent.pending_requests(), 0);
}

#[test]
fn call_02_an_unknown_command_gets_the_reference_failure_without_its_id() {
    let mut h = Harness::fresh();
    h.host(r#"{"id":"x","type":"frobnicate","a":1}"#);
    assert_eq!(
        h.one_frame(),
        json!({"type": "response", "command": "frobnicate", "success": false,
               "error": "Unknown command: frobnicate"})
    );
}

#[test]
fn call_06_unknown_commands_can_be_delivered_whole_and_unknown_members_are_kept() {
    let mut h = Harness::new(AgentConfig {
        unknown_commands: UnknownCommands::Deliver,
        ..AgentConfig::default()
    });
    let (request, command) = h.command(r#"{"id":"x","type":"frobnicate","a":1}"#);
    assert_eq!(
        command,
        Command::Unknown(json!({"type": "frobnicate", "a": 1}))
    );
    h.agent.reject_unknown(h.now, request).unwrap();
    assert_eq!(h.one_frame()["error"], "Unknown command: frobnicate");
    let (_, command) = h.command(r#"{"id":"y","type":"get_state","future":[1]}"#);
    let Command::GetState(args) = command else {
        panic!()
    };
    assert_eq!(args.extra["future"], json!([1]));
}

#[test]
fn call_08_failures_carry_their_code_and_non_string_ids_are_echoed() {
    let mut h = Harness::fresh();
    let (request, _) = h.command(r#"{"id":7,"type":"compact"}"#);
    h.agent
        .respond(
            h.now,
            request,
            Err(CommandFailure {
                error: "busy".into(),
                code: Some(ErrorCode::SessionBusy),
            }),
        )
        .unwrap();
    assert_eq!(
        h.one_frame(),
        json!({"id": 7, "type": "response", "command": "compact", "success": false,
               "error": "busy", "code": "session_busy"})
    );
    // Events and other frames go out as given.
    assert_eq!(
        h.agent.emit(h.now, &AgentFrame::Unknown(json!([1]))),
        Err(AgentError::InvalidFrame)
    );
    h.agent
        .emit(
            h.now,
            &AgentFrame::PromptResult(PromptResult {
                id: Some("p".into()),
                agent_invoked: false,
                ..PromptResult::default()
            }),
        )
        .unwrap();
    assert_eq!(h.one_frame()["type"], "prompt_result");
}

#[test]
fn call_10_a_known_command_with_ill_typed_members_is_refused_with_its_id() {
    let mut h = Harness::fresh();
    h.host(r#"{"id":"p","type":"prompt","message":5}"#);
    let frame = h.one_frame();
    assert_eq!(frame["id"], "p");
    assert_eq!(frame["command"], "prompt");
    assert_eq!(frame["success"], false);
    assert!(frame["error"]
        .as_str()
        .unwrap()
        .starts_with("Invalid prompt command: "));
}

/// A frame as the wire model reads it; one it does not read (an assistant message whose
/// content is a string) as it is.
fn frame(value: &Value) -> AgentFrame {
    AgentFrame::from_value(value.clone()).unwrap_or_else(|_| AgentFrame::Unknown(value.clone()))
}
