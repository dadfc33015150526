//! The Client's session rules: FRAME-03..06, FRAME-13, CALL-01..08, PAGE-07, HOST-01..06.

use crate::common as client_common;

use client_common::*;
use musewire_core::client::{
    Action, Call, ClientConfig, ClientError, ClientEvent, CommandFailure, ExitStatus,
    HistorySource, Input, RequestId, SessionError,
};
use musewire_core::frame::ProtocolVersion;
use musewire_wire::{
    AgentFrame, AgentMessage, ErrorCode, HostToolCall, HostUriRequest, HostUriResult,
    StreamingBehavior, ToolResult, UiResponse,
};
use serde_json::{json, Value};

fn response(id: &str, command: &str, data: Value) -> String {
    json!({"id": id, "type": "response", "command": command, "success": true, "data": data})
        .to_string()
}

#[test]
fn frame_03_04_ready_offering_v2_is_negotiated_first_and_commands_wait() {
    let mut h = Harness::new(ClientConfig::default());
    // FRAME-03: the start-up probe goes as the agent starts, before any ready frame.
    assert_eq!(
        h.split().0,
        vec![json!({"id": "req_0", "type": "get_state"})]
    );
    let state = h
        .request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    assert!(h.split().0.is_empty(), "held until ready");
    h.agent(READY_V2);
    let (written, events) = h.split();
    assert_eq!(
        written,
        vec![json!({"id": "req_2", "type": "negotiate_protocol", "protocolVersion": 2})]
    );
    assert!(matches!(
        &events[..],
        [ClientEvent::Frame {
            frame: AgentFrame::Ready(_)
        }]
    ));
    // The probe's answer comes in v1 while the negotiation runs: it is the client's own.
    h.agent(&response(
        "req_0",
        "get_state",
        json!({"isStreaming": false}),
    ));
    assert_eq!(h.split(), (vec![], vec![]));
    h.agent(&response(
        "req_2",
        "negotiate_protocol",
        json!({"protocolVersion": 2}),
    ));
    let (written, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::Ready {
            protocol: ProtocolVersion::V2
        }]
    );
    assert_eq!(written, vec![json!({"id": "req_1", "type": "get_state"})]);
    assert_eq!(state, RequestId(1));
    assert_eq!(h.client.protocol(), ProtocolVersion::V2);
}

#[test]
fn frame_03_an_agent_without_a_ready_frame_is_v1_as_soon_as_it_answers_the_probe() {
    let mut h = Harness::new(ClientConfig::default());
    assert_eq!(
        h.split().0,
        vec![json!({"id": "req_0", "type": "get_state"})]
    );
    let prompt = h.request(Call::Prompt("hi".into(), None)).unwrap();
    let messages = h
        .request(Call::Send(cmd(json!({"type": "get_messages"}))))
        .unwrap();
    assert_eq!(h.split(), (vec![], vec![]), "held, nothing more asked");
    // pi: no ready frame; its answer to the probe is its first frame.
    h.advance(1_500);
    h.agent(&response(
        "req_0",
        "get_state",
        json!({"isStreaming": false}),
    ));
    let (written, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::Ready {
            protocol: ProtocolVersion::V1
        }],
        "the probe's answer is not the application's"
    );
    assert_eq!(
        written,
        vec![
            json!({"id": prompt.wire(), "type": "prompt", "message": "hi"}),
            json!({"id": messages.wire(), "type": "get_messages"}),
        ]
    );
    assert_eq!(h.client.poll_timeout(), None, "no ready timer left");
    // A failure is an answer too (an agent without get_state); a restart asks again.
    h.input(Input::Call(Call::Restart));
    h.drain();
    h.request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    assert!(h.split().0.is_empty());
    h.agent(r#"{"id":"req_0","type":"response","command":"get_state","success":false,"error":"Unknown command: get_state"}"#);
    let (written, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::Ready {
            protocol: ProtocolVersion::V1
        }]
    );
    assert_eq!(written.len(), 1);
}

#[test]
fn frame_03_the_probe_can_be_turned_off_and_is_never_sent_without_a_ready_wait() {
    // Turned off: the commands wait for the ready frame or the timeout, as the reference does.
    let mut h = Harness::new(ClientConfig {
        start_probe: false,
        ..ClientConfig::default()
    });
    h.request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    assert_eq!(h.split(), (vec![], vec![]));
    h.agent(READY_V2);
    assert_eq!(
        h.split().0,
        vec![json!({"id": "req_2", "type": "negotiate_protocol", "protocolVersion": 2})]
    );
    // Nor to an agent that is not expected to send a ready frame, nor when observing.
    for config in [
        ClientConfig {
            expect_ready: false,
            ..ClientConfig::default()
        },
        ClientConfig {
            observe: true,
            ..ClientConfig::default()
        },
    ] {
        let mut h = Harness::new(config);
        assert!(h.split().0.is_empty());
    }
}

#[test]
fn frame_04_ready_asking_for_more_than_the_ceilings_stays_v1() {
    let mut h = Harness::new(ClientConfig::default());
    h.drain(); // FRAME-03's probe
    h.agent(r#"{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1,2],"maxFrameBytes":2097152,"maxReassembledFrameBytes":67108864}"#);
    let (written, events) = h.split();
    assert!(written.is_empty());
    assert_eq!(
        events.last(),
        Some(&ClientEvent::Ready {
            protocol: ProtocolVersion::V1
        })
    );
}

#[test]
fn frame_05_chunks_right_after_the_negotiation_response_in_the_same_read_are_reassembled() {
    let mut h = Harness::new(ClientConfig::default());
    h.agent(READY_V2);
    h.drain();
    let mut encoder = musewire_core::frame::FrameEncoder::new();
    let mut bytes =
        response("req_1", "negotiate_protocol", json!({"protocolVersion": 2})).into_bytes();
    bytes.push(b'\n');
    encoder.set_protocol(ProtocolVersion::V2);
    bytes.extend(
        encoder.encode_to_vec(
            &json!({"type": "message_end", "message": {"text": "x".repeat(2 << 20)}}),
        ),
    );
    h.input(Input::stdout(&bytes));
    let (_, events) = h.split();
    assert_eq!(
        events[0],
        ClientEvent::Ready {
            protocol: ProtocolVersion::V2
        }
    );
    assert!(
        matches!(&events[1], ClientEvent::Frame { frame } if frame.type_name() == Some("message_end"))
    );
}

#[test]
fn frame_05_a_chunk_before_negotiation_is_fatal_and_fails_pending_requests() {
    let mut h = Harness::new(ClientConfig::default());
    h.agent(r#"{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]}"#);
    let state = h
        .request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    h.drain();
    h.agent(r#"{"type":"rpc_chunk","chunkId":"rpc-1","index":0,"count":2,"byteLength":1048576,"data":"AAAA"}"#);
    let actions = h.drain();
    let error = SessionError::Protocol {
        rule: "FRAME-05",
        message: "RPC chunk received before protocol negotiation".into(),
    };
    assert_eq!(
        actions,
        vec![
            Action::Event(ClientEvent::Response {
                request: state,
                command: "get_state".into(),
                outcome: Err(CommandFailure {
                    error: format!("{error}"),
                    code: None
                })
            }),
            Action::Event(ClientEvent::Closed { error }),
            Action::StopAgent,
        ]
    );
    assert_eq!(
        h.request(Call::Send(cmd(json!({"type": "get_state"})))),
        Err(ClientError::Closed)
    );
}

#[test]
fn frame_06_refused_negotiation_stays_v1() {
    let mut h = Harness::new(ClientConfig::default());
    h.agent(READY_V2);
    h.drain();
    h.agent(r#"{"id":"req_1","type":"response","command":"negotiate_protocol","success":false,"error":"Unsupported RPC protocol version: 2"}"#);
    let (_, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::Ready {
            protocol: ProtocolVersion::V1
        }]
    );
}

#[test]
fn frame_03_an_agent_without_a_ready_frame_is_v1_only() {
    // Either its first frame is something else…
    let mut h = Harness::new(ClientConfig::default());
    let id = h
        .request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    h.drain();
    h.agent(r#"{"type":"agent_start"}"#);
    let (written, events) = h.split();
    assert_eq!(
        events[0],
        ClientEvent::Ready {
            protocol: ProtocolVersion::V1
        }
    );
    assert_eq!(written, vec![json!({"id": id.wire(), "type": "get_state"})]);
    // …or the ready timeout passes: the bound for an agent that says nothing at all.
    let mut h = Harness::new(ClientConfig::default());
    h.request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    assert_eq!(h.split().0.len(), 1, "the probe");
    assert_eq!(
        h.client.poll_timeout(),
        Some(h.start + std::time::Duration::from_secs(30))
    );
    h.advance(29_999);
    assert!(h.split().0.is_empty());
    h.advance(1);
    let (written, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::Ready {
            protocol: ProtocolVersion::V1
        }]
    );
    assert_eq!(written.len(), 1);
}

#[test]
fn call_01_responses_are_matched_on_id_not_order() {
    let mut h = Harness::v2();
    let bash = h
        .request(Call::Send(cmd(
            json!({"type": "bash", "command": "sleep 1"}),
        )))
        .unwrap();
    let state = h
        .request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    assert_ne!(bash, state);
    h.drain();
    h.agent(&response(
        &state.wire(),
        "get_state",
        json!({"isStreaming": false}),
    ));
    h.agent(&response(&bash.wire(), "bash", json!({"exitCode": 0})));
    let (_, events) = h.split();
    let order: Vec<RequestId> = events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Response { request, .. } => Some(*request),
            _ => None,
        })
        .collect();
    assert_eq!(order, vec![state, bash]);
}

#[test]
fn call_02_idless_failures_match_the_one_pending_request_of_that_command() {
    let mut h = Harness::v1();
    let unknown = h
        .request(Call::Send(cmd(json!({"type": "frobnicate"}))))
        .unwrap();
    let state = h
        .request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    h.drain();
    h.agent(r#"{"type":"response","command":"frobnicate","success":false,"error":"Unknown command: frobnicate"}"#);
    let (_, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::Response {
            request: unknown,
            command: "frobnicate".into(),
            outcome: Err(CommandFailure {
                error: "Unknown command: frobnicate".into(),
                code: None
            })
        }]
    );
    // "parse" goes to the single pending request…
    h.agent(r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: x"}"#);
    let (_, events) = h.split();
    assert!(matches!(&events[..], [ClientEvent::Response { request, .. }] if *request == state));
    // …and with two pending, nothing is guessed: it is surfaced as unmatched.
    h.request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    h.request(Call::Send(cmd(json!({"type": "bash", "command": "x"}))))
        .unwrap();
    h.drain();
    h.agent(r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: y"}"#);
    let (_, events) = h.split();
    assert!(matches!(&events[..], [ClientEvent::Unmatched { .. }]));
}

#[test]
fn call_03_prompt_acknowledgement_local_only_result_and_late_failure() {
    let mut h = Harness::v2();
    let local = h.request(Call::Prompt("/help".into(), None)).unwrap();
    let agent = h.request(Call::Prompt("hello".into(), None)).unwrap();
    let later = h.request(Call::Prompt("/retry".into(), None)).unwrap();
    h.drain();
    h.agent(&response(
        &local.wire(),
        "prompt",
        json!({"agentInvoked": false}),
    ));
    h.agent(r#"{"id":"req_3","type":"response","command":"prompt","success":true}"#);
    h.agent(r#"{"id":"req_4","type":"response","command":"prompt","success":true}"#);
    h.drain();
    // A prompt that turned out local-only, and a later failure of another.
    h.agent(
        &json!({"type": "prompt_result", "id": later.wire(), "agentInvoked": false}).to_string(),
    );
    h.agent(&json!({"id": agent.wire(), "type": "response", "command": "prompt", "success": false, "error": "provider down"}).to_string());
    // A prompt_result for the local-only prompt (already complete) is passed on, not matched.
    h.agent(
        &json!({"type": "prompt_result", "id": local.wire(), "agentInvoked": false}).to_string(),
    );
    let (_, events) = h.split();
    assert_eq!(events[0], ClientEvent::PromptLocalOnly { request: later });
    assert_eq!(
        events[1],
        ClientEvent::PromptFailed {
            request: agent,
            failure: CommandFailure {
                error: "provider down".into(),
                code: None
            }
        }
    );
    assert!(
        matches!(&events[2], ClientEvent::Frame { frame: AgentFrame::PromptResult(r) }
        if r.id.as_deref() == Some(local.wire().as_str()))
    );
}

#[test]
fn call_04_prompt_while_streaming_must_choose_steer_or_follow_up() {
    let mut h = Harness::v2();
    h.agent(r#"{"type":"agent_start"}"#);
    assert!(h.client.is_streaming());
    assert_eq!(
        h.request(Call::Prompt("more".into(), None)),
        Err(ClientError::StreamingBehaviorRequired)
    );
    h.drain();
    h.request(Call::Prompt(
        "more".into(),
        Some(StreamingBehavior::FollowUp),
    ))
    .unwrap();
    let (written, _) = h.split();
    assert_eq!(written[0]["streamingBehavior"], "followUp");
}

#[test]
fn call_05_abort_bash_is_sent_at_once_whatever_is_pending() {
    let mut h = Harness::v2();
    h.request(Call::Send(cmd(
        json!({"type": "bash", "command": "sleep 100"}),
    )))
    .unwrap();
    h.drain();
    h.request(Call::Send(cmd(json!({"type": "abort_bash"}))))
        .unwrap();
    let (written, _) = h.split();
    assert_eq!(written[0]["type"], "abort_bash");
}

#[test]
fn call_06_unknown_frames_and_fields_are_passed_on() {
    let mut h = Harness::v2();
    h.agent(r#"{"type":"from_the_future","x":[1,{"y":2}]}"#);
    h.agent(r#"{"type":"message_update","newField":true}"#);
    let (_, events) = h.split();
    assert!(
        matches!(
            &events[0],
            ClientEvent::Frame {
                frame: AgentFrame::Unknown(_)
            }
        ),
        "{events:?}"
    );
    // Passed on as received: each re-serialises to the frame the agent wrote.
    let frames: Vec<Value> = events
        .iter()
        .map(|e| match e {
            ClientEvent::Frame { frame } => frame.to_value(),
            other => panic!("not a frame: {other:?}"),
        })
        .collect();
    assert_eq!(
        frames,
        vec![
            json!({"type": "from_the_future", "x": [1, {"y": 2}]}),
            json!({"type": "message_update", "newField": true}),
        ]
    );
}

#[test]
fn call_07_exit_fails_pending_requests_with_status_and_stderr_and_the_client_restarts() {
    let mut h = Harness::v2();
    let state = h
        .request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    h.drain();
    h.input(Input::stderr(b"panic: out of tokens\n"));
    h.input(Input::exit(ExitStatus::Code(3)));
    let (_, events) = h.split();
    let error = SessionError::Exited {
        status: ExitStatus::Code(3),
        stderr: "panic: out of tokens".into(),
    };
    assert_eq!(
        error.to_string(),
        "Agent process exited with code 3. Stderr: panic: out of tokens"
    );
    assert_eq!(
        events,
        vec![
            ClientEvent::Response {
                request: state,
                command: "get_state".into(),
                outcome: Err(CommandFailure {
                    error: error.to_string(),
                    code: None
                })
            },
            ClientEvent::Closed { error },
        ]
    );
    h.input(Input::Call(Call::Restart));
    let again = h
        .request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    assert!(again > state, "ids stay unique across restarts");
}

#[test]
fn call_07_stdout_eof_closes_after_a_grace_period_without_an_exit_status() {
    let mut h = Harness::v2();
    h.request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    h.drain();
    h.input(Input::StdoutEnd);
    assert!(h.split().1.is_empty());
    h.advance(100);
    let (_, events) = h.split();
    assert!(matches!(
        events.last(),
        Some(ClientEvent::Closed {
            error: SessionError::OutputEnded { .. }
        })
    ));
}

#[test]
fn call_08_failure_codes_are_exposed() {
    let mut h = Harness::v2();
    let page = h
        .request(Call::Send(cmd(
            json!({"type": "get_messages_page", "cursor": "x"}),
        )))
        .unwrap();
    h.drain();
    h.agent(&json!({"id": page.wire(), "type": "response", "command": "get_messages_page", "success": false, "error": "RPC message cursor is stale", "code": "stale_cursor"}).to_string());
    let (_, events) = h.split();
    assert!(matches!(
        &events[..],
        [ClientEvent::Response {
            outcome: Err(CommandFailure {
                code: Some(ErrorCode::StaleCursor),
                ..
            }),
            ..
        }]
    ));
    // Serialised (as transcripts and the CLI show it), the code is the wire string.
    assert_eq!(
        serde_json::to_value(&events[0]).unwrap()["outcome"]["err"]["code"],
        "stale_cursor"
    );
}

/// History message number `n`: a user message.
fn message(n: i64) -> Value {
    json!({"role": "user", "content": format!("m{n}")})
}

/// The messages numbered `ns`, typed.
fn messages(ns: &[i64]) -> Vec<AgentMessage> {
    ns.iter().map(|&n| wire(message(n))).collect()
}

fn page(id: &str, ns: &[i64], next: Option<&str>, total: i64) -> String {
    let messages: Vec<Value> = ns.iter().map(|&n| message(n)).collect();
    let mut data = json!({"messages": messages, "totalMessages": total});
    if let Some(n) = next {
        data["nextCursor"] = json!(n);
    }
    response(id, "get_messages_page", data)
}

#[test]
fn page_07_history_drains_pages_of_256() {
    let mut h = Harness::v2();
    let walk = h.request(Call::ReadHistory).unwrap();
    let (written, _) = h.split();
    assert_eq!(
        written,
        vec![json!({"id": "req_3", "type": "get_messages_page", "limit": 256})]
    );
    h.agent(&page("req_3", &[1, 2], Some("c1"), 3));
    let (written, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::HistoryProgress {
            request: walk,
            read: 2,
            total: 3
        }]
    );
    assert_eq!(
        written,
        vec![json!({"id": "req_4", "type": "get_messages_page", "cursor": "c1", "limit": 256})]
    );
    h.agent(&page("req_4", &[3], None, 3));
    let (_, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::History {
            request: walk,
            source: HistorySource::Pages,
            outcome: Ok(messages(&[1, 2, 3]))
        }]
    );
}

#[test]
fn page_07_busy_or_stale_falls_back_to_get_messages_and_discards_pages() {
    for code in ["session_busy", "stale_cursor"] {
        let mut h = Harness::v2();
        let walk = h.request(Call::ReadHistory).unwrap();
        h.drain();
        h.agent(&page("req_3", &[1, 2], Some("c1"), 3));
        h.drain();
        h.agent(&json!({"id": "req_4", "type": "response", "command": "get_messages_page", "success": false, "error": "x", "code": code}).to_string());
        let (written, _) = h.split();
        assert_eq!(
            written,
            vec![json!({"id": "req_5", "type": "get_messages"})]
        );
        h.agent(&response(
            "req_5",
            "get_messages",
            json!({"messages": [message(7), message(8)]}),
        ));
        let (_, events) = h.split();
        assert_eq!(
            events,
            vec![ClientEvent::History {
                request: walk,
                source: HistorySource::Legacy,
                outcome: Ok(messages(&[7, 8]))
            }]
        );
    }
}

#[test]
fn page_07_an_agent_that_does_not_page_falls_back_to_get_messages() {
    // A v2 agent without get_messages_page answers as omp and pi answer an unknown command:
    // id-less, matched by its command (CALL-02).
    let mut h = Harness::v2();
    let walk = h.request(Call::ReadHistory).unwrap();
    h.drain();
    h.agent(r#"{"type":"response","command":"get_messages_page","success":false,"error":"Unknown command: get_messages_page"}"#);
    let (written, _) = h.split();
    assert_eq!(
        written,
        vec![json!({"id": "req_4", "type": "get_messages"})]
    );
    h.agent(&response(
        "req_4",
        "get_messages",
        json!({"messages": [message(1)]}),
    ));
    let (_, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::History {
            request: walk,
            source: HistorySource::Legacy,
            outcome: Ok(messages(&[1]))
        }]
    );
}

#[test]
fn page_07_inconsistent_total_and_repeated_cursor_fail_without_fallback() {
    let cases = [
        (
            page("req_4", &[3], Some("c2"), 4),
            "RPC message pagination returned an inconsistent total",
        ),
        (
            page("req_4", &[3], Some("c1"), 3),
            "RPC message pagination repeated a cursor",
        ),
        (
            page("req_4", &[], None, 3),
            "RPC message pagination ended before the advertised total",
        ),
    ];
    for (second, message) in cases {
        let mut h = Harness::v2();
        let walk = h.request(Call::ReadHistory).unwrap();
        h.drain();
        h.agent(&page("req_3", &[1, 2], Some("c1"), 3));
        h.drain();
        h.agent(&second);
        let (written, events) = h.split();
        assert!(written.is_empty());
        assert_eq!(
            events,
            vec![ClientEvent::History {
                request: walk,
                source: HistorySource::Pages,
                outcome: Err(CommandFailure {
                    error: message.into(),
                    code: None
                })
            }]
        );
    }
}

/// PAGE-09 (ours): an agent that pages forever, a fresh cursor on every page
/// and more messages than its `totalMessages`, ends the walk with a typed error once the pages
/// would hold more than the total; an empty page that goes on ends it too.
#[test]
fn page_09_a_walk_past_the_advertised_total_or_on_empty_pages_fails() {
    let cases = [
        (
            page("req_4", &[3, 4], Some("c2"), 3),
            "RPC message pagination returned more messages than its total",
        ),
        (
            page("req_4", &[], Some("c2"), 3),
            "RPC message pagination returned an empty page before the end",
        ),
    ];
    for (second, message) in cases {
        let mut h = Harness::v2();
        let walk = h.request(Call::ReadHistory).unwrap();
        h.drain();
        h.agent(&page("req_3", &[1, 2], Some("c1"), 3));
        h.drain();
        h.agent(&second);
        let (written, events) = h.split();
        assert!(written.is_empty(), "no next page is asked for");
        assert_eq!(
            events,
            vec![ClientEvent::History {
                request: walk,
                source: HistorySource::Pages,
                outcome: Err(CommandFailure {
                    error: message.into(),
                    code: None
                })
            }]
        );
    }
    // The endless agent: one message per page, a fresh cursor every time, a total of 5. The
    // walk asks for at most five pages, then fails on the sixth message.
    let mut h = Harness::v2();
    let walk = h.request(Call::ReadHistory).unwrap();
    h.drain();
    let mut asked = 0;
    let mut outcome = None;
    for i in 0..1000 {
        h.agent(&page(
            &format!("req_{}", i + 3),
            &[i],
            Some(&format!("c{i}")),
            5,
        ));
        let (written, events) = h.split();
        asked += written.len();
        if let Some(ClientEvent::History { outcome: o, .. }) = events
            .into_iter()
            .find(|e| matches!(e, ClientEvent::History { request, .. } if *request == walk))
        {
            outcome = Some(o);
            break;
        }
    }
    assert_eq!(asked, 5, "pages asked for after the first");
    assert_eq!(
        outcome.map(|o| o.map_err(|f| f.error)),
        Some(Err(
            "RPC message pagination returned more messages than its total".to_owned()
        ))
    );
}

#[test]
fn page_07_v1_only_agents_use_get_messages_directly_and_direct_page_calls_never_fall_back() {
    let mut h = Harness::v1();
    let walk = h.request(Call::ReadHistory).unwrap();
    let (written, _) = h.split();
    assert_eq!(
        written,
        vec![json!({"id": "req_2", "type": "get_messages"})]
    );
    assert_eq!(
        walk,
        RequestId(1),
        "the walk has its own id; its requests are the client's"
    );
    let mut h = Harness::v2();
    let direct = h
        .request(Call::Send(cmd(json!({"type": "get_messages_page"}))))
        .unwrap();
    h.drain();
    h.agent(&json!({"id": direct.wire(), "type": "response", "command": "get_messages_page", "success": false, "error": "busy", "code": "session_busy"}).to_string());
    let (written, events) = h.split();
    assert!(written.is_empty());
    assert!(matches!(&events[..], [ClientEvent::Response { .. }]));
}

#[test]
fn host_01_host_tools_are_checked_before_sending() {
    let mut h = Harness::v2();
    let bad = [wire(
        json!({"name": " ", "description": "d", "parameters": {}}),
    )];
    assert_eq!(
        h.request(Call::SetHostTools(bad.to_vec())),
        Err(ClientError::InvalidHostTool(
            "Host tool at index 0 must provide a non-empty name".into()
        ))
    );
    let bad = [wire(
        json!({"name": "t", "description": "", "parameters": {}}),
    )];
    assert_eq!(
        h.request(Call::SetHostTools(bad.to_vec())),
        Err(ClientError::InvalidHostTool(
            "Host tool \"t\" must provide a non-empty description".into()
        ))
    );
    let bad = [wire(
        json!({"name": "t", "description": "d", "parameters": []}),
    )];
    assert_eq!(
        h.request(Call::SetHostTools(bad.to_vec())),
        Err(ClientError::InvalidHostTool(
            "Host tool \"t\" must provide a JSON Schema object".into()
        ))
    );
    assert!(h.split().0.is_empty());
    h.request(Call::SetHostTools(vec![wire(
        json!({"name": " t ", "description": " d ", "parameters": {"type": "object"}}),
    )]))
    .unwrap();
    let (written, _) = h.split();
    assert_eq!(
        written[0]["tools"],
        json!([{"name": "t", "description": "d", "parameters": {"type": "object"}}])
    );
}

#[test]
fn host_02_03_tool_calls_stream_updates_end_with_a_result_and_cancel_drops_late_results() {
    let mut h = Harness::v2();
    h.agent(r#"{"type":"host_tool_call","id":"h1","toolCallId":"tc1","toolName":"lookup","arguments":{"q":"x"}}"#);
    h.agent(r#"{"type":"host_tool_call","id":"h2","toolCallId":"tc2","toolName":"lookup","arguments":{}}"#);
    let (_, events) = h.split();
    assert_eq!(
        events[0],
        ClientEvent::HostToolCall(HostToolCall {
            id: "h1".into(),
            tool_call_id: "tc1".into(),
            tool_name: "lookup".into(),
            arguments: json!({"q": "x"}),
            ..Default::default()
        })
    );
    let content = json!({"content": [{"type": "text", "text": "partial"}]});
    assert!(h.answer(Call::HostToolUpdate("h1".into(), wire(content.clone()))));
    assert!(h.answer(Call::HostToolResult {
        id: "h1".into(),
        result: wire(json!({"content": [{"type": "text", "text": "no"}]})),
        is_error: true
    }));
    assert!(
        !h.answer(Call::HostToolResult {
            id: "h1".into(),
            result: ToolResult::default(),
            is_error: false
        }),
        "already finished"
    );
    let (written, _) = h.split();
    assert_eq!(
        written,
        vec![
            json!({"type": "host_tool_update", "id": "h1", "partialResult": content}),
            json!({"type": "host_tool_result", "id": "h1", "result": {"content": [{"type": "text", "text": "no"}]}, "isError": true}),
        ]
    );
    h.agent(r#"{"type":"host_tool_cancel","id":"c","targetId":"h2"}"#);
    let (_, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::HostToolCancelled { id: "h2".into() }]
    );
    assert!(!h.answer(Call::HostToolResult {
        id: "h2".into(),
        result: ToolResult::default(),
        is_error: false
    }));
    assert!(!h.answer(Call::HostToolUpdate("nope".into(), ToolResult::default())));
    assert!(h.split().0.is_empty());
}

#[test]
fn host_04_schemes_are_normalised_and_security_is_reserved() {
    let mut h = Harness::v2();
    assert_eq!(
        h.request(Call::SetHostUriSchemes(vec![wire(
            json!({"scheme": " Security "})
        )])),
        Err(ClientError::InvalidHostUriScheme(
            "Host URI scheme is reserved by OMP: security://".into()
        ))
    );
    assert_eq!(
        h.request(Call::SetHostUriSchemes(vec![wire(json!({"scheme": "1x"}))])),
        Err(ClientError::InvalidHostUriScheme(
            "Host URI scheme contains invalid characters: 1x".into()
        ))
    );
    assert_eq!(
        h.request(Call::SetHostUriSchemes(vec![wire(json!({"scheme": ""}))])),
        Err(ClientError::InvalidHostUriScheme(
            "Host URI scheme must be a non-empty string".into()
        ))
    );
    h.request(Call::SetHostUriSchemes(vec![
        wire(json!({"scheme": " Notes+V1 ", "writable": true})),
        wire(json!({"scheme": "notes+v1"})),
    ]))
    .unwrap();
    let (written, _) = h.split();
    assert_eq!(written[0]["schemes"], json!([{"scheme": "notes+v1"}]));
}

#[test]
fn host_05_uri_requests_are_answered_once_and_cancels_withdraw_them() {
    let mut h = Harness::v2();
    h.agent(r#"{"type":"host_uri_request","id":"u1","operation":"read","url":"notes://a"}"#);
    h.agent(r#"{"type":"host_uri_request","id":"u2","operation":"write","url":"notes://b","content":"hi"}"#);
    let (_, events) = h.split();
    assert_eq!(
        events[1],
        ClientEvent::HostUriRequest(HostUriRequest {
            id: "u2".into(),
            operation: "write".into(),
            url: "notes://b".into(),
            content: Some("hi".into()),
            ..Default::default()
        })
    );
    // The answer's id is set to the request's, whatever it held.
    let fields = HostUriResult {
        id: "ignored".into(),
        content: Some("text".into()),
        ..Default::default()
    };
    assert!(h.answer(Call::HostUriResult("u1".into(), fields.clone())));
    assert!(!h.answer(Call::HostUriResult("u1".into(), fields.clone())));
    h.agent(r#"{"type":"host_uri_cancel","id":"x","targetId":"u2"}"#);
    assert!(!h.answer(Call::HostUriResult("u2".into(), fields)));
    let (written, events) = h.split();
    assert_eq!(
        written,
        vec![json!({"type": "host_uri_result", "id": "u1", "content": "text"})]
    );
    assert_eq!(
        events,
        vec![ClientEvent::HostUriCancelled { id: "u2".into() }]
    );
}

#[test]
fn host_06_dialogs_time_out_are_cancelled_and_notices_need_no_answer() {
    let mut h = Harness::v2();
    h.agent(r#"{"type":"extension_ui_request","id":"d1","method":"confirm","title":"t","message":"m","timeout":5000}"#);
    h.agent(r#"{"type":"extension_ui_request","id":"d2","method":"select","title":"t","options":["a","b"]}"#);
    h.agent(r#"{"type":"extension_ui_request","id":"d3","method":"input","title":"t"}"#);
    h.agent(r#"{"type":"extension_ui_request","id":"n1","method":"notify","message":"hello"}"#);
    let (_, events) = h.split();
    assert_eq!(events.len(), 4);
    assert_eq!(
        h.client.poll_timeout(),
        Some(h.start + std::time::Duration::from_millis(5000))
    );
    h.advance(5000);
    let (_, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::UiWithdrawn {
            id: "d1".into(),
            timed_out: true
        }]
    );
    let answer = UiResponse::confirm("ignored");
    assert!(
        !h.answer(Call::UiRespond("d1".into(), answer.clone())),
        "timed out: dropped"
    );
    assert!(
        !h.answer(Call::UiRespond("n1".into(), answer.clone())),
        "a notice takes no answer"
    );
    h.agent(r#"{"type":"extension_ui_request","id":"c","method":"cancel","targetId":"d2"}"#);
    assert!(h.answer(Call::UiRespond(
        "d3".into(),
        UiResponse::value("ignored", "typed")
    )));
    let (written, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::UiWithdrawn {
            id: "d2".into(),
            timed_out: false
        }]
    );
    assert_eq!(
        written,
        vec![json!({"type": "extension_ui_response", "id": "d3", "value": "typed"})]
    );
}

#[test]
fn call_09_turns_end_at_a_terminal_agent_end_and_a_new_run_may_start_without_one() {
    let mut h = Harness::v2();
    h.agent(r#"{"type":"agent_start"}"#);
    h.agent(r#"{"type":"agent_end","messages":[],"isTerminal":false}"#);
    assert!(h.client.is_streaming());
    h.agent(r#"{"type":"todo_reminder"}"#);
    h.agent(r#"{"type":"agent_start"}"#);
    h.agent(r#"{"type":"agent_end","messages":[]}"#);
    assert!(!h.client.is_streaming());
    let (_, events) = h.split();
    let turns: Vec<&ClientEvent> = events
        .iter()
        .filter(|e| matches!(e, ClientEvent::TurnStarted | ClientEvent::TurnFinished))
        .collect();
    assert_eq!(
        turns,
        vec![
            &ClientEvent::TurnStarted,
            &ClientEvent::TurnStarted,
            &ClientEvent::TurnFinished
        ]
    );
}

#[test]
fn call_09_a_pi_agent_end_that_will_retry_does_not_end_the_turn() {
    let mut h = Harness::v1();
    h.agent(r#"{"type":"agent_start"}"#);
    h.agent(r#"{"type":"agent_end","messages":[],"willRetry":true}"#);
    assert!(h.client.is_streaming(), "pi runs again on its own");
    h.agent(r#"{"type":"agent_start"}"#);
    h.agent(r#"{"type":"agent_end","messages":[],"willRetry":false}"#);
    h.agent(r#"{"type":"agent_settled","aborted":false}"#);
    assert!(!h.client.is_streaming());
    let (_, events) = h.split();
    let finished = events
        .iter()
        .filter(|e| matches!(e, ClientEvent::TurnFinished))
        .count();
    assert_eq!(finished, 1);
}

#[test]
fn call_03_a_prompt_pi_handled_itself_is_local_only() {
    let mut h = Harness::v1();
    let prompt = h.request(Call::Prompt("/ext".into(), None)).unwrap();
    h.drain();
    h.agent(&response(
        &prompt.wire(),
        "prompt",
        json!({"disposition": "handled"}),
    ));
    // Local: no later failure or prompt_result is waited for, so a second response for
    // the same id is unmatched, not a late failure.
    h.drain();
    h.agent(
        &json!({"id": prompt.wire(), "type": "response", "command": "prompt",
        "success": false, "error": "late"})
        .to_string(),
    );
    let (_, events) = h.split();
    assert!(
        matches!(&events[..], [ClientEvent::Unmatched { .. }]),
        "{events:?}"
    );
}

#[test]
fn frame_13_a_non_json_line_is_reported_with_its_prefix_and_the_session_goes_on() {
    let mut h = Harness::v1();
    h.agent("Debugger listening on ws://127.0.0.1:9229/abc");
    let (_, events) = h.split();
    let [ClientEvent::ProtocolWarning {
        rule,
        prefix: Some(prefix),
        ..
    }] = &events[..]
    else {
        panic!("{events:?}")
    };
    assert_eq!(*rule, "FRAME-13");
    assert!(prefix.starts_with("Debugger listening"), "{prefix}");
    assert!(!h.client.is_closed());
}

#[test]
fn frame_04_an_unanswered_negotiation_gives_up_at_the_ready_timeout_and_goes_on_in_v1() {
    let mut h = Harness::new(ClientConfig::default());
    let state = h
        .request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    h.agent(READY_V2);
    h.drain();
    h.advance(30_000);
    let (written, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::Ready {
            protocol: ProtocolVersion::V1
        }]
    );
    assert_eq!(
        written,
        vec![json!({"id": state.wire(), "type": "get_state"})]
    );
    // A late answer is no longer ours.
    h.agent(&response(
        "req_2",
        "negotiate_protocol",
        json!({"protocolVersion": 2}),
    ));
    let (_, events) = h.split();
    assert!(matches!(&events[..], [ClientEvent::Unmatched { .. }]));
}

#[test]
fn call_07_restart_of_a_live_session_fails_what_is_pending_and_stops_the_old_agent() {
    let mut h = Harness::v2();
    h.request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    h.drain();
    h.input(Input::Call(Call::Restart));
    let actions = h.drain();
    // The old agent is stopped; the new one gets FRAME-03's probe.
    let probe = br#"{"id":"req_0","type":"get_state"}
"#;
    assert!(
        matches!(&actions[actions.len() - 2..], [Action::StopAgent, Action::Write { bytes }] if bytes == probe),
        "{actions:?}"
    );
    assert!(actions.iter().any(|a| matches!(
        a,
        Action::Event(ClientEvent::Closed {
            error: SessionError::Stopped
        })
    )));
}

#[test]
fn call_07_the_stderr_tail_starts_on_a_character() {
    let mut h = Harness::new(ClientConfig {
        stderr_tail_bytes: 5,
        ..ClientConfig::default()
    });
    h.drain();
    h.input(Input::stderr("ééé".as_bytes())); // 6 bytes: the cut falls inside the first é
    h.input(Input::exit(ExitStatus::Code(1)));
    let (_, events) = h.split();
    assert!(
        matches!(events.last(), Some(ClientEvent::Closed { error: SessionError::Exited { stderr, .. } }) if stderr == "éé"),
        "{events:?}"
    );
}

#[test]
fn frame_05_an_observer_follows_the_negotiation_it_sees_and_never_negotiates_itself() {
    let mut h = Harness::new(ClientConfig {
        observe: true,
        ..ClientConfig::default()
    });
    let (_, events) = h.split();
    assert_eq!(
        events,
        vec![ClientEvent::Ready {
            protocol: ProtocolVersion::V1
        }]
    );
    h.agent(READY_V2);
    let (written, _) = h.split();
    assert!(written.is_empty(), "an observer sends nothing of its own");
    assert!(h.answer(Call::RawLine(
        br#"{"id":"host-1","type":"negotiate_protocol","protocolVersion":2}"#.to_vec()
    )));
    h.drain();
    let mut bytes = response(
        "host-1",
        "negotiate_protocol",
        json!({"protocolVersion": 2}),
    )
    .into_bytes();
    bytes.push(b'\n');
    let mut encoder = musewire_core::frame::FrameEncoder::new();
    encoder.set_protocol(ProtocolVersion::V2);
    bytes.extend(
        encoder.encode_to_vec(
            &json!({"type": "message_end", "message": {"text": "x".repeat(2 << 20)}}),
        ),
    );
    h.input(Input::stdout(&bytes));
    let (_, events) = h.split();
    assert!(
        matches!(&events[0], ClientEvent::Unmatched { frame: AgentFrame::Response(r) } if r.id.as_deref() == Some("host-1"))
    );
    assert!(
        matches!(&events[1], ClientEvent::Frame { frame } if frame.type_name() == Some("message_end")),
        "chunks after the seen negotiation are reassembled"
    );
}

/// PAGE-07 with CALL-06: a message the wire model cannot type (a known role with members of
/// another shape, or not an object) does not fail the whole history: it comes back as
/// `AgentMessage::Unknown`, re-serialised as received, on both paths.
#[test]
fn page_07_call_06_a_message_of_another_shape_is_kept_not_fatal() {
    let odd = json!([{"role": "assistant", "content": "hi"}, 7, {"role": "user", "content": "ok", "timestamp": 1}]);
    // v1: get_messages.
    let mut h = Harness::v1();
    let walk = h.request(Call::ReadHistory).unwrap();
    h.drain();
    h.agent(&json!({"id": "req_2", "type": "response", "command": "get_messages", "success": true, "data": {"messages": odd}}).to_string());
    let (_, events) = h.split();
    let [ClientEvent::History {
        request,
        source: HistorySource::Legacy,
        outcome: Ok(messages),
    }] = &events[..]
    else {
        panic!("{events:?}")
    };
    assert_eq!(*request, walk);
    assert!(matches!(messages[0], AgentMessage::Unknown(_)));
    assert_eq!(serde_json::to_value(messages).unwrap(), odd);
    // v2: one page.
    let mut h = Harness::v2();
    let walk = h.request(Call::ReadHistory).unwrap();
    h.drain();
    h.agent(&json!({"id": "req_3", "type": "response", "command": "get_messages_page", "success": true, "data": {"messages": odd, "totalMessages": 3}}).to_string());
    let (_, events) = h.split();
    let [ClientEvent::History {
        request,
        source: HistorySource::Pages,
        outcome: Ok(messages),
    }] = &events[..]
    else {
        panic!("{events:?}")
    };
    assert_eq!(*request, walk);
    assert_eq!(serde_json::to_value(messages).unwrap(), odd);
}

/// HOST-09 (ours): a host answer over what the agent's ready frame says it
/// takes (maxFrameBytes in v1, maxReassembledFrameBytes in v2) would be dropped by the agent
/// and its call would hang; the client sends an error answer in its place at once and warns
/// the application. An answer within the limit goes out as it is.
#[test]
fn host_09_an_answer_over_the_agents_limit_fails_the_call_at_once() {
    let v1_ready = r#"{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1],"maxFrameBytes":1048576,"maxReassembledFrameBytes":67108864}"#;
    let v2_ready = r#"{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1,2],"maxFrameBytes":1048576,"maxReassembledFrameBytes":2097152}"#;
    for (ready, v2, big) in [(v1_ready, false, 1_100_000), (v2_ready, true, 2_200_000)] {
        let mut h = Harness::new(ClientConfig::default());
        h.agent(ready);
        h.drain();
        if v2 {
            h.agent(r#"{"id":"req_1","type":"response","command":"negotiate_protocol","success":true,"data":{"protocolVersion":2}}"#);
            h.drain();
        }
        h.agent(r#"{"type":"host_tool_call","id":"h1","toolCallId":"tc1","toolName":"t","arguments":{}}"#);
        h.agent(r#"{"type":"host_uri_request","id":"u1","operation":"read","url":"x://y"}"#);
        h.agent(r#"{"type":"host_tool_call","id":"h2","toolCallId":"tc2","toolName":"t","arguments":{}}"#);
        h.drain();
        let text = "a".repeat(big);
        let result = ToolResult::text(text.clone());
        assert!(h.answer(Call::HostToolResult {
            id: "h1".into(),
            result,
            is_error: false
        }));
        let fields = HostUriResult {
            content: Some(text),
            ..Default::default()
        };
        assert!(h.answer(Call::HostUriResult("u1".into(), fields)));
        let (written, events) = h.split();
        assert_eq!(written.len(), 2, "one answer each");
        assert_eq!(written[0]["type"], "host_tool_result");
        assert_eq!(written[0]["id"], "h1");
        assert_eq!(written[0]["isError"], true);
        let said = written[0]["result"]["content"][0]["text"].as_str().unwrap();
        assert!(said.contains("over the agent's limit"), "{said}");
        assert_eq!(written[1]["type"], "host_uri_result");
        assert_eq!(written[1]["isError"], true);
        let warned: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                ClientEvent::ProtocolWarning { rule, .. } => Some(*rule),
                _ => None,
            })
            .collect();
        assert_eq!(warned, ["HOST-09", "HOST-09"]);
        // Within the limit: sent as it is.
        let small = json!({"content": [{"type": "text", "text": "ok"}]});
        assert!(h.answer(Call::HostToolResult {
            id: "h2".into(),
            result: wire(small.clone()),
            is_error: false
        }));
        let (written, events) = h.split();
        assert_eq!(
            written,
            vec![json!({"type": "host_tool_result", "id": "h2", "result": small})]
        );
        assert!(events.is_empty());
    }
}

/// CALL-06: a `message_update` the wire model cannot type (no `message`, no `contentIndex`)
/// still shows its text through `text_delta`, read as JSON reads it; a typed one is read from
/// the model; a thinking delta is not assistant text.
#[test]
fn call_06_text_delta_reads_typed_and_untyped_message_updates() {
    let mut h = Harness::v1();
    h.agent(r#"{"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"loose "}}"#);
    h.agent(r#"{"type":"message_update","message":{"role":"assistant","content":[],"timestamp":1},"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"typed"}}"#);
    h.agent(r#"{"type":"message_update","assistantMessageEvent":{"type":"thinking_delta","delta":"hmm"}}"#);
    let (_, events) = h.split();
    let text: String = events.iter().filter_map(ClientEvent::text_delta).collect();
    let thinking: String = events
        .iter()
        .filter_map(ClientEvent::thinking_delta)
        .collect();
    assert_eq!(text, "loose typed");
    assert_eq!(thinking, "hmm");
    assert!(matches!(
        &events[1],
        ClientEvent::Frame {
            frame: AgentFrame::Event(_)
        }
    ));
}

#[test]
fn call_02_a_member_written_twice_reads_as_its_last_as_javascript_reads_it() {
    // FRAME-01/CALL-02 with the late check: the Client reads a plain line once,
    // typed; a member written twice still reads as its last, as the envelope (and
    // JavaScript) reads it. A response whose last `id` is null is no answer to req_1…
    let mut h = Harness::new(ClientConfig {
        expect_ready: false,
        ..ClientConfig::default()
    });
    let id = h
        .request(Call::Send(cmd(json!({"type": "get_state"}))))
        .unwrap();
    h.split();
    let wire = id.wire();
    h.agent(&format!(
        r#"{{"type":"response","id":"{wire}","id":null,"command":"get_state","success":true,"data":{{}}}}"#
    ));
    let (_, events) = h.split();
    assert!(
        matches!(&events[..], [ClientEvent::Unmatched { .. }]),
        "{events:?}"
    );
    // …and one whose last `id` is req_1 is its answer.
    h.agent(&format!(
        r#"{{"type":"response","id":"other","id":"{wire}","command":"get_state","success":true,"data":{{}}}}"#
    ));
    let (_, events) = h.split();
    assert!(
        matches!(&events[..], [ClientEvent::Response { request, .. }] if *request == id),
        "{events:?}"
    );
    // A first frame whose last `type` is not `ready` is no ready frame (FRAME-03): the
    // strict parse refuses a `type` written twice, and the envelope reads the last.
    let mut h = Harness::new(ClientConfig::default());
    h.agent(r#"{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1],"type":"agent_start"}"#);
    let (_, events) = h.split();
    assert_eq!(
        events[0],
        ClientEvent::Ready {
            protocol: ProtocolVersion::V1
        }
    );
}
