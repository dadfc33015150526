//! The helpers the Client builds on: command serialisation, response accessors, typed
//! payloads, host tool/URI and extension UI frames.

use musewire_wire::*;
use serde_json::{json, Value};

fn response(json: &str) -> Response {
    match AgentFrame::from_slice(json.as_bytes()).unwrap() {
        AgentFrame::Response(response) => *response,
        other => panic!("{other:?}"),
    }
}

#[test]
fn call01_command_is_written_id_first_as_the_reference_host_does() {
    let command = Command::NegotiateProtocol(NegotiateProtocol {
        protocol_version: 2,
        ..Default::default()
    });
    assert_eq!(command.type_name(), "negotiate_protocol");
    assert_eq!(
        command.to_vec_with_id(Some("req-1")),
        br#"{"id":"req-1","type":"negotiate_protocol","protocolVersion":2}"#
    );
    assert_eq!(
        command.to_vec_with_id(None),
        br#"{"type":"negotiate_protocol","protocolVersion":2}"#
    );
    assert_eq!(
        serde_json::to_string(&command).unwrap(),
        r#"{"type":"negotiate_protocol","protocolVersion":2}"#
    );
    let page = Command::GetMessagesPage(GetMessagesPage {
        limit: Some(256),
        ..Default::default()
    });
    assert_eq!(
        page.to_vec_with_id(Some("7")),
        br#"{"id":"7","type":"get_messages_page","limit":256}"#
    );
}

#[test]
fn call04_prompt_streaming_behavior_is_typed() {
    let prompt = Command::Prompt(Prompt {
        message: "go on".into(),
        images: Some(vec![ContentBlock::image("AA==", "image/png")]),
        streaming_behavior: Some(StreamingBehavior::FollowUp),
        ..Default::default()
    });
    assert_eq!(
        prompt.to_value_with_id(Some("p")),
        json!({"id":"p","type":"prompt","message":"go on","images":[{"type":"image","data":"AA==","mimeType":"image/png"}],"streamingBehavior":"followUp"})
    );
    let steer = Command::Prompt(Prompt {
        message: "x".into(),
        streaming_behavior: Some(StreamingBehavior::Steer),
        ..Default::default()
    });
    assert_eq!(steer.to_value_with_id(None)["streamingBehavior"], "steer");
}

#[test]
fn call06_commands_unknown_to_this_version_can_still_be_sent() {
    let mut fields = serde_json::Map::new();
    fields.insert("level".into(), json!(3));
    let command = Command::other("set_hologram_level", fields);
    assert_eq!(command.type_name(), "set_hologram_level");
    assert_eq!(
        command.to_vec_with_id(Some("h")),
        br#"{"id":"h","type":"set_hologram_level","level":3}"#
    );
    let (id, parsed) =
        Command::from_slice_with_id(br#"{"type":"set_hologram_level","id":"h","level":3}"#)
            .unwrap();
    assert_eq!(id.as_deref(), Some("h"));
    assert_eq!(parsed, command);
}

#[test]
fn call08_failure_code_is_typed() {
    let busy = response(
        r#"{"id":"1","type":"response","command":"get_messages_page","success":false,"error":"Cannot page messages while the session is changing","code":"session_busy"}"#,
    );
    assert!(!busy.is_success());
    assert_eq!(busy.error_code(), Some(&ErrorCode::SessionBusy));
    assert_eq!(
        busy.error.as_deref(),
        Some("Cannot page messages while the session is changing")
    );
    let stale = response(
        r#"{"id":"2","type":"response","command":"get_messages_page","success":false,"error":"RPC message cursor is stale","code":"stale_cursor"}"#,
    );
    assert_eq!(stale.error_code(), Some(&ErrorCode::StaleCursor));
    let future = response(
        r#"{"id":"3","type":"response","command":"x","success":false,"error":"e","code":"quota_exceeded"}"#,
    );
    assert_eq!(
        future.error_code(),
        Some(&ErrorCode::Other("quota_exceeded".into()))
    );
    assert_eq!(future.error_code().unwrap().as_str(), "quota_exceeded");
    let plain =
        response(r#"{"id":"4","type":"response","command":"bash","success":false,"error":"boom"}"#);
    assert_eq!(plain.error_code(), None);
    let ok = response(r#"{"id":"5","type":"response","command":"abort","success":true}"#);
    assert!(ok.is_success());
    assert_eq!(ok.data, None);
    // Built failures serialise as the reference writes them.
    let built = Response::failure(
        Some("9".into()),
        "get_messages_page",
        "RPC message cursor is stale",
        Some(ErrorCode::StaleCursor),
    );
    assert_eq!(
        serde_json::to_string(&built).unwrap(),
        r#"{"id":"9","type":"response","command":"get_messages_page","success":false,"error":"RPC message cursor is stale","code":"stale_cursor"}"#
    );
}

#[test]
fn call02_idless_parse_failure() {
    let parse = response(
        r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: x"}"#,
    );
    assert_eq!(parse.id, None);
    assert_eq!(parse.command, "parse");
}

#[test]
fn call03_prompt_acknowledgement_and_prompt_result() {
    let ack = response(
        r#"{"id":"p","type":"response","command":"prompt","success":true,"data":{"agentInvoked":false}}"#,
    );
    assert!(
        matches!(ack.data, Some(ResponseData::Prompt(ref d)) if d.agent_invoked == Some(false))
    );
    let AgentFrame::PromptResult(result) =
        AgentFrame::from_slice(br#"{"type":"prompt_result","id":"p","agentInvoked":false}"#)
            .unwrap()
    else {
        panic!()
    };
    assert_eq!(result.id.as_deref(), Some("p"));
    assert!(!result.agent_invoked);
}

#[test]
fn page06_messages_page_with_and_without_next_cursor() {
    let middle = response(
        r#"{"id":"1","type":"response","command":"get_messages_page","success":true,"data":{"messages":[{"role":"user","content":"hi","timestamp":1}],"nextCursor":"abc","totalMessages":2}}"#,
    );
    let Some(ResponseData::MessagesPage(page)) = &middle.data else {
        panic!()
    };
    assert_eq!(page.next_cursor.as_deref(), Some("abc"));
    assert_eq!(page.total_messages, 2);
    assert_eq!(page.messages[0].role(), Some("user"));
    let last = response(
        r#"{"id":"2","type":"response","command":"get_messages_page","success":true,"data":{"messages":[{"role":"user","content":"yo","timestamp":2}],"totalMessages":2}}"#,
    );
    let Some(ResponseData::MessagesPage(page)) = &last.data else {
        panic!()
    };
    assert_eq!(page.next_cursor, None);
    assert!(!serde_json::to_string(&last).unwrap().contains("nextCursor"));
}

#[test]
fn frame03_ready_frame() {
    let AgentFrame::Ready(ready) = AgentFrame::from_slice(br#"{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1,2],"maxFrameBytes":1048576,"maxReassembledFrameBytes":67108864}"#).unwrap() else {
        panic!()
    };
    assert!(ready.supports(2));
    assert!(!ready.supports(3));
    assert_eq!(ready.max_frame_bytes, Some(1_048_576));
}

#[test]
fn agent_end_is_terminal_unless_it_says_otherwise() {
    for (json, terminal) in [
        (r#"{"type":"agent_end","messages":[]}"#, true),
        (
            r#"{"type":"agent_end","messages":[],"isTerminal":true}"#,
            true,
        ),
        (
            r#"{"type":"agent_end","messages":[],"isTerminal":false}"#,
            false,
        ),
    ] {
        let AgentFrame::Event(SessionEvent::AgentEnd(end)) =
            AgentFrame::from_slice(json.as_bytes()).unwrap()
        else {
            panic!()
        };
        assert_eq!(end.is_terminal(), terminal, "{json}");
    }
}

#[test]
fn host01_set_host_tools_command_and_response() {
    let command = Command::SetHostTools(SetHostTools {
        tools: vec![HostToolDefinition {
            name: "host_search".into(),
            description: "Search".into(),
            parameters: json!({"type":"object","properties":{}}),
            ..Default::default()
        }],
        ..Default::default()
    });
    assert_eq!(
        command.to_value_with_id(Some("t")),
        json!({"id":"t","type":"set_host_tools","tools":[{"name":"host_search","description":"Search","parameters":{"type":"object","properties":{}}}]})
    );
    let r = response(
        r#"{"id":"t","type":"response","command":"set_host_tools","success":true,"data":{"toolNames":["host_search"]}}"#,
    );
    assert!(
        matches!(r.data, Some(ResponseData::HostTools(ref d)) if d.tool_names == ["host_search"])
    );
}

#[test]
fn host02_host_tool_call_update_and_result() {
    let AgentFrame::HostToolCall(call) = AgentFrame::from_slice(br#"{"type":"host_tool_call","id":"h1","toolCallId":"tc","toolName":"host_search","arguments":{"q":"x"}}"#).unwrap() else {
        panic!()
    };
    assert_eq!(
        (
            call.id.as_str(),
            call.tool_call_id.as_str(),
            call.tool_name.as_str()
        ),
        ("h1", "tc", "host_search")
    );
    assert_eq!(call.arguments, json!({"q":"x"}));
    let update = HostFrame::HostToolUpdate(HostToolUpdate {
        id: "h1".into(),
        partial_result: ToolResult {
            content: vec![ContentBlock::text("working")],
            ..Default::default()
        },
        ..Default::default()
    });
    assert_eq!(
        update.to_vec(),
        br#"{"type":"host_tool_update","id":"h1","partialResult":{"content":[{"type":"text","text":"working"}]}}"#
    );
    let result = HostFrame::HostToolResult(HostToolResult {
        id: "h1".into(),
        result: ToolResult {
            content: vec![ContentBlock::text("failed")],
            ..Default::default()
        },
        is_error: Some(true),
        ..Default::default()
    });
    assert_eq!(
        result.to_vec(),
        br#"{"type":"host_tool_result","id":"h1","result":{"content":[{"type":"text","text":"failed"}]},"isError":true}"#
    );
}

#[test]
fn host03_host05_cancels_and_uri_requests() {
    let AgentFrame::HostToolCancel(cancel) =
        AgentFrame::from_slice(br#"{"type":"host_tool_cancel","id":"c","targetId":"h1"}"#).unwrap()
    else {
        panic!()
    };
    assert_eq!(cancel.target_id, "h1");
    let AgentFrame::HostUriRequest(request) = AgentFrame::from_slice(
        br#"{"type":"host_uri_request","id":"u","operation":"write","url":"db://x","content":"y"}"#,
    )
    .unwrap() else {
        panic!()
    };
    assert!(request.is_write());
    assert_eq!(request.content.as_deref(), Some("y"));
    let AgentFrame::HostUriCancel(cancel) =
        AgentFrame::from_slice(br#"{"type":"host_uri_cancel","id":"c2","targetId":"u"}"#).unwrap()
    else {
        panic!()
    };
    assert_eq!(cancel.target_id, "u");
    let result = HostFrame::HostUriResult(HostUriResult {
        id: "u".into(),
        content: Some("ok".into()),
        content_type: Some("text/markdown".into()),
        ..Default::default()
    });
    assert_eq!(
        result.to_vec(),
        br#"{"type":"host_uri_result","id":"u","content":"ok","contentType":"text/markdown"}"#
    );
}

#[test]
fn host04_set_host_uri_schemes() {
    let command = Command::SetHostUriSchemes(SetHostUriSchemes {
        schemes: vec![HostUriSchemeDefinition {
            scheme: "db".into(),
            writable: Some(true),
            ..Default::default()
        }],
        ..Default::default()
    });
    assert_eq!(
        command.to_vec_with_id(Some("s")),
        br#"{"id":"s","type":"set_host_uri_schemes","schemes":[{"scheme":"db","writable":true}]}"#
    );
    let r = response(
        r#"{"id":"s","type":"response","command":"set_host_uri_schemes","success":true,"data":{"schemes":["db"]}}"#,
    );
    assert!(matches!(r.data, Some(ResponseData::HostUriSchemes(ref d)) if d.schemes == ["db"]));
}

#[test]
fn host06_extension_ui_requests_and_responses() {
    let AgentFrame::ExtensionUiRequest(request) = AgentFrame::from_slice(br#"{"type":"extension_ui_request","id":"u1","method":"select","title":"Pick","options":["a","b"],"timeout":5000}"#).unwrap() else {
        panic!()
    };
    assert!(request.is_dialog());
    assert_eq!(request.id(), Some("u1"));
    let UiRequest::Select(select) = &request else {
        panic!()
    };
    assert_eq!(select.options, ["a", "b"]);
    assert_eq!(select.timeout.as_ref().and_then(|t| t.as_u64()), Some(5000));
    let AgentFrame::ExtensionUiRequest(notify) = AgentFrame::from_slice(
        br#"{"type":"extension_ui_request","id":"u2","method":"notify","message":"hi"}"#,
    )
    .unwrap() else {
        panic!()
    };
    assert!(!notify.is_dialog());
    for (frame, expected) in [
        (
            UiResponse::value("u1", "a"),
            r#"{"type":"extension_ui_response","id":"u1","value":"a"}"#,
        ),
        (
            UiResponse::decline("u1"),
            r#"{"type":"extension_ui_response","id":"u1","confirmed":false}"#,
        ),
        (
            UiResponse::cancelled("u1"),
            r#"{"type":"extension_ui_response","id":"u1","cancelled":true}"#,
        ),
        (
            UiResponse::timed_out("u1"),
            r#"{"type":"extension_ui_response","id":"u1","cancelled":true,"timedOut":true}"#,
        ),
    ] {
        assert_eq!(
            String::from_utf8(HostFrame::ExtensionUiResponse(frame).to_vec()).unwrap(),
            expected
        );
    }
}

#[test]
fn pi_v1_only_differences() {
    for (command, name) in [
        (Command::GetCommands(GetCommands::default()), "get_commands"),
        (
            Command::Fork(Fork {
                entry_id: "e".into(),
                ..Default::default()
            }),
            "fork",
        ),
        (Command::Clone(CloneSession::default()), "clone"),
        (
            Command::GetForkMessages(GetForkMessages::default()),
            "get_fork_messages",
        ),
    ] {
        assert_eq!(command.type_name(), name);
    }
    let r = response(
        r#"{"id":"1","type":"response","command":"get_commands","success":true,"data":{"commands":[{"name":"fix","source":"prompt","sourceInfo":{"path":"/x"}}]}}"#,
    );
    let Some(ResponseData::Commands(data)) = &r.data else {
        panic!()
    };
    assert_eq!(data.commands[0].extra["sourceInfo"], json!({"path":"/x"}));
    let AgentFrame::Event(SessionEvent::CompactionEnd(end)) = AgentFrame::from_slice(
        br#"{"type":"compaction_end","reason":"manual","aborted":true,"willRetry":false}"#,
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(end.aborted, Some(true));
}

#[test]
fn unknown_command_response_data_stays_a_value() {
    let r = response(
        r#"{"id":"1","type":"response","command":"get_holograms","success":true,"data":{"holograms":[1]}}"#,
    );
    assert_eq!(r.data, Some(ResponseData::Other(json!({"holograms":[1]}))));
    assert_eq!(
        ResponseData::from_value("login", json!({"providerId":"x"})).unwrap(),
        ResponseData::Login(LoginData {
            provider_id: "x".into(),
            ..Default::default()
        })
    );
    let v: Value = serde_json::to_value(&r).unwrap();
    assert_eq!(v["data"], json!({"holograms":[1]}));
}

#[test]
fn call06_get_state_reads_every_member_of_omps_session_state_typed_and_writes_it_back() {
    let sent = r#"{"id":"s","type":"response","command":"get_state","success":true,"data":{"sessionId":"s1","fastModeEnabled":true,"fastModeActive":false,"tokensPerSecond":12,"systemPrompt":["be brief"],"dumpTools":[{"name":"bash","description":"Run","parameters":{"type":"object"},"examples":[{"command":"ls"}]}],"contextUsage":{"tokens":5230,"contextWindow":200000,"percent":2.615},"later":1}}"#;
    let response = response(sent);
    let Some(ResponseData::State(state)) = &response.data else {
        panic!("{response:?}");
    };
    assert_eq!(state.fast_mode_enabled, Some(true));
    assert_eq!(state.fast_mode_active, Some(false));
    assert_eq!(state.tokens_per_second, Some(12.into()));
    // The long members nobody reads on the host path are typed when asked.
    assert_eq!(
        state.system_prompt.as_ref().map(|p| p.get().unwrap()),
        Some(vec!["be brief".to_owned()])
    );
    let tools = state.dump_tools.as_ref().unwrap().get().unwrap();
    assert_eq!(tools[0].name.as_deref(), Some("bash"));
    assert_eq!(tools[0].description.as_deref(), Some("Run"));
    assert_eq!(
        tools[0].parameters.as_ref().map(|p| p.get().unwrap()),
        Some(json!({"type": "object"}))
    );
    assert_eq!(
        tools[0].examples.as_ref().map(|e| e.get().unwrap()),
        Some(vec![json!({"command": "ls"})])
    );
    assert_eq!(state.context_usage.as_ref().unwrap().tokens, Some(5230));
    // Only what this version does not know is left in `extra`; nothing is lost on the way
    // back (an integer stays an integer).
    assert_eq!(state.extra.keys().collect::<Vec<_>>(), ["later"]);
    let back: Value = serde_json::to_value(AgentFrame::Response(Box::new(response))).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(sent).unwrap());
    assert!(serde_json::to_string(&back)
        .unwrap()
        .contains(r#""tokensPerSecond":12,"#));
    // A tool without a description (omp passes each tool's own through) still parses.
    let bare = r#"{"type":"response","command":"get_state","success":true,"data":{"dumpTools":[{"name":"x","parameters":{}}]}}"#;
    let Some(ResponseData::State(state)) = response_data(bare) else {
        panic!("not a session state");
    };
    assert_eq!(
        state.dump_tools.unwrap().get().unwrap()[0].description,
        None
    );
    // `tokensPerSecond: null` (no assistant message yet) is kept as sent.
    let none = r#"{"type":"response","command":"get_state","success":true,"data":{"tokensPerSecond":null}}"#;
    let Some(ResponseData::State(state)) = response_data(none) else {
        panic!("not a session state");
    };
    assert_eq!(state.tokens_per_second, None);
    assert_eq!(state.extra.get("tokensPerSecond"), Some(&Value::Null));
}

fn response_data(json: &str) -> Option<ResponseData> {
    response(json).data
}

#[test]
fn call06_an_assistant_messages_usage_cost_is_typed_and_written_back_as_sent() {
    let sent = r#"{"role":"assistant","content":[],"usage":{"input":3,"output":5,"cost":{"input":0.000009,"output":7.5e-5,"cacheRead":0,"cacheWrite":0,"total":8.4e-5,"later":"kept"}},"stopReason":"stop","timestamp":1}"#;
    let message: AgentMessage = serde_json::from_str(sent).unwrap();
    let AgentMessage::Assistant(assistant) = &message else {
        panic!("{message:?}");
    };
    let cost = assistant.usage.as_ref().unwrap().cost.as_ref().unwrap();
    assert_eq!(cost.total.as_ref().and_then(|n| n.as_f64()), Some(8.4e-5));
    assert_eq!(cost.cache_read, Some(0.into()));
    assert_eq!(cost.extra.get("later"), Some(&json!("kept")));
    let back = serde_json::to_value(&message).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(sent).unwrap());
}

/// CALL-06: a `message_update`'s message so far (`message`, the event's `partial`) is kept
/// as received and typed when asked; it writes back the same value, lone surrogates
/// included, and the `Value` entry point gives the same frame.
#[test]
fn call06_message_update_message_is_typed_when_asked() {
    let json = r#"{"type":"message_update","message":{"role":"assistant","content":[{"type":"text","text":"a\ud83d \"q\"\n"}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1},"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"\n","partial":{"role":"assistant","content":[{"type":"text","text":"a\ud83d \"q\"\n"}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1}}}"#;
    let frame = AgentFrame::from_slice(json.as_bytes()).unwrap();
    let AgentFrame::Event(SessionEvent::MessageUpdate(update)) = &frame else {
        panic!("{frame:?}")
    };
    let AgentMessage::Assistant(message) = update.message.as_ref().unwrap().get().unwrap() else {
        panic!("not an assistant message")
    };
    let ContentBlock::Text(text) = &message.content[0] else {
        panic!("{:?}", message.content)
    };
    assert_eq!(display_text(&text.text), "a\u{FFFD} \"q\"\n");
    let AssistantMessageEvent::TextDelta(delta) = &update.assistant_message_event else {
        panic!()
    };
    let partial = delta.partial.as_ref().unwrap().get().unwrap();
    assert_eq!(partial.content, message.content);
    let value = parse_value(json.as_bytes()).unwrap();
    assert_eq!(frame.to_value(), value);
    assert_eq!(AgentFrame::from_value(value).unwrap(), frame);

    // A typed value makes one, and two equal messages written differently are equal.
    let made = Lazy::new(&partial).unwrap();
    assert_eq!(made.get().unwrap(), partial);
    assert_eq!(&made, delta.partial.as_ref().unwrap());
    let spaced: Lazy<AssistantMessage> =
        serde_json::from_str(&format!(" {} ", made.json().replace(",", " , "))).unwrap();
    assert_ne!(spaced.json(), made.json());
    assert_eq!(spaced, made);

    // A member that is not JSON still fails the frame, as a typed read did.
    assert!(AgentFrame::from_slice(
        br#"{"type":"message_update","message":{"role":,"assistantMessageEvent":{"type":"start"}}"#
    )
    .is_err());
}
