//! CALL-06: every frame round-trips through the typed model (deserialize → serialize gives
//! the same JSON value), unknown members and unknown types included.

use crate::wire_samples;

use musewire_wire::{
    AgentFrame, AgentMessage, Command, ContentBlock, HostFrame, SessionEvent, UiRequest,
};
use serde_json::{json, Value};
use wire_samples::{AGENT_FRAMES, COMMANDS, HOST_FRAMES};

fn value(json: &str) -> Value {
    serde_json::from_str(json).unwrap()
}

/// Parses `json` as an agent frame, checks it is not `Unknown`, and that it round-trips.
fn agent_round_trip(name: &str, json: &str) -> AgentFrame {
    let frame = AgentFrame::from_slice(json.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        !matches!(frame, AgentFrame::Unknown(_)),
        "{name}: parsed as Unknown"
    );
    assert_eq!(frame.to_value(), value(json), "{name}: round trip");
    // The `Value` entry point gives the same frame.
    assert_eq!(
        AgentFrame::from_value(value(json)).unwrap(),
        frame,
        "{name}: from_value"
    );
    frame
}

/// Adds a member at the top level of an object.
fn with_member(json: &str, key: &str, member: Value) -> Value {
    let mut v = value(json);
    v.as_object_mut().unwrap().insert(key.to_owned(), member);
    v
}

#[test]
fn call06_every_agent_frame_round_trips() {
    for (name, json) in AGENT_FRAMES {
        let frame = agent_round_trip(name, json);
        let wire_type = value(json)["type"].as_str().unwrap().to_owned();
        assert_eq!(frame.type_name(), Some(wire_type.as_str()), "{name}");
    }
}

#[test]
fn call06_every_host_frame_round_trips() {
    for (name, json) in HOST_FRAMES {
        let frame =
            HostFrame::from_slice(json.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!matches!(frame, HostFrame::Unknown(_)), "{name}");
        assert_eq!(serde_json::to_value(&frame).unwrap(), value(json), "{name}");
        assert_eq!(HostFrame::from_value(value(json)).unwrap(), frame, "{name}");
    }
}

#[test]
fn call01_every_command_round_trips_id_first() {
    for (name, json) in COMMANDS {
        let (id, command) =
            Command::from_slice_with_id(json.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!matches!(command, Command::Unknown(_)), "{name}");
        assert_eq!(
            command.type_name(),
            value(json)["type"].as_str().unwrap(),
            "{name}"
        );
        // Byte for byte as the reference host writes it: id, type, then the members.
        assert_eq!(
            String::from_utf8(command.to_vec_with_id(id.as_deref())).unwrap(),
            *json,
            "{name}"
        );
    }
}

#[test]
fn call06_unknown_members_are_kept_on_every_frame() {
    let future = json!({"nested": [1, 2.5, null, {"deep": "x"}], "n": 18446744073709551615u64});
    for (name, json) in AGENT_FRAMES {
        let expected = with_member(json, "zzFutureField", future.clone());
        let frame =
            AgentFrame::from_value(expected.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!matches!(frame, AgentFrame::Unknown(_)), "{name}");
        assert_eq!(frame.to_value(), expected, "{name}");
        let text = serde_json::to_string(&expected).unwrap();
        assert_eq!(
            AgentFrame::from_slice(text.as_bytes()).unwrap(),
            frame,
            "{name}"
        );
    }
    for (name, json) in HOST_FRAMES {
        let expected = with_member(json, "zzFutureField", future.clone());
        let frame = HostFrame::from_value(expected.clone()).unwrap();
        assert_eq!(serde_json::to_value(&frame).unwrap(), expected, "{name}");
    }
    for (name, json) in COMMANDS {
        let expected = with_member(json, "zzFutureField", future.clone());
        let (id, command) = Command::from_value_with_id(expected.clone()).unwrap();
        assert_eq!(command.to_value_with_id(id.as_deref()), expected, "{name}");
    }
}

#[test]
fn call06_unknown_members_deep_inside_messages_are_kept() {
    let json = r#"{"id":"r","type":"response","command":"get_messages","success":true,"data":{"messages":[
        {"role":"toolResult","toolCallId":"t","toolName":"read","content":[{"type":"text","text":"x","zz":1},{"type":"hologram","payload":{"a":[1]}}],"isError":false,"timestamp":1,"prunedAt":5,"useless":true},
        {"role":"assistant","content":[{"type":"toolCall","id":"t","name":"read","arguments":{},"zz":[true]},{"type":"anthropicServerTool","block":{"type":"server_tool_use","id":"s","name":"web_search"}}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"reasoningTokens":1,"cost":{"total":0.5}},"stopReason":"stop","timestamp":2,"contextSnapshot":{"promptTokens":5,"nonMessageTokens":1}},
        {"role":"hologram","content":"from the future","timestamp":3}
    ],"zzPage":{"x":1}},"zzTop":"t"}"#;
    let frame = agent_round_trip("deep", json);
    let AgentFrame::Response(response) = &frame else {
        panic!()
    };
    let Some(musewire_wire::ResponseData::Messages(data)) = &response.data else {
        panic!("{response:?}")
    };
    assert_eq!(data.messages.len(), 3);
    let AgentMessage::ToolResult(tool) = &data.messages[0] else {
        panic!()
    };
    assert_eq!(tool.extra["prunedAt"], json!(5));
    assert_eq!(tool.content[0].as_text(), Some("x"));
    assert!(matches!(&tool.content[1], ContentBlock::Unknown(v) if v["type"] == "hologram"));
    assert!(matches!(&data.messages[2], AgentMessage::Unknown(v) if v["role"] == "hologram"));
    assert_eq!(data.extra["zzPage"], json!({"x": 1}));
    assert_eq!(response.extra["zzTop"], json!("t"));
}

#[test]
fn call06_unknown_frame_types_are_kept_as_received() {
    for json in [
        r#"{"type":"hologram_update","id":"h1","payload":{"frames":[1,2,3]},"at":1.5}"#,
        r#"{"id":"x","type":"brand_new","nested":{"type":"response"}}"#,
        r#"{"no_type":true,"value":[1]}"#,
        r#"{"type":7,"value":"non-string type"}"#,
        r#"{}"#,
    ] {
        let frame = AgentFrame::from_slice(json.as_bytes()).unwrap();
        assert!(matches!(frame, AgentFrame::Unknown(_)), "{json}");
        assert_eq!(frame.to_value(), value(json), "{json}");
        let host = HostFrame::from_slice(json.as_bytes()).unwrap();
        assert!(matches!(host, HostFrame::Unknown(_)), "{json}");
    }
    let frame = AgentFrame::from_slice(br#"{"type":"hologram_update","x":1}"#).unwrap();
    assert_eq!(frame.type_name(), Some("hologram_update"));
}

#[test]
fn call06_unknown_nested_tags_are_kept() {
    // An unknown UI method, assistant message event, and subagent event.
    for (json, check) in [
        (
            r#"{"type":"extension_ui_request","id":"u","method":"hologram","title":"t"}"#,
            (|f: &AgentFrame| matches!(f, AgentFrame::ExtensionUiRequest(UiRequest::Unknown(_))))
                as fn(&AgentFrame) -> bool,
        ),
        (
            r#"{"type":"message_update","message":{"role":"assistant","content":[],"timestamp":1},"assistantMessageEvent":{"type":"audio_delta","contentIndex":0,"delta":"AAAA"}}"#,
            |f| matches!(f, AgentFrame::Event(SessionEvent::MessageUpdate(u)) if u.assistant_message_event.tag() == Some("audio_delta")),
        ),
        (
            r#"{"type":"subagent_event","payload":{"id":"sa","event":{"type":"future_event","x":1}}}"#,
            |f| matches!(f, AgentFrame::SubagentEvent(e) if matches!(e.payload.event, SessionEvent::Unknown(_))),
        ),
    ] {
        let frame = AgentFrame::from_slice(json.as_bytes()).unwrap();
        assert!(check(&frame), "{json}: {frame:?}");
        assert_eq!(frame.to_value(), value(json), "{json}");
    }
    let frame =
        AgentFrame::from_slice(br#"{"type":"extension_ui_request","id":"u","method":"hologram"}"#)
            .unwrap();
    let AgentFrame::ExtensionUiRequest(ui) = &frame else {
        panic!()
    };
    assert_eq!(ui.id(), Some("u"));
    assert_eq!(ui.method(), Some("hologram"));
}

#[test]
fn call06_explicit_nulls_and_member_order_survive() {
    // An optional member sent as null stays null; a type after other members still works.
    for json in [
        r#"{"type":"extension_ui_request","id":"u","method":"setStatus","statusKey":"k","statusText":null}"#,
        r#"{"id":"u","method":"notify","message":"m","type":"extension_ui_request"}"#,
        r#"{"success":true,"data":{"messages":[]},"command":"get_messages","type":"response","id":"r"}"#,
        r#"{"type":"response","command":"get_messages_page","success":false,"error":"x","code":null}"#,
        r#"{"type":"message_end","message":{"content":"late role","timestamp":1,"role":"user"}}"#,
    ] {
        let frame = AgentFrame::from_slice(json.as_bytes()).unwrap();
        assert!(!matches!(frame, AgentFrame::Unknown(_)), "{json}");
        assert_eq!(frame.to_value(), value(json), "{json}");
    }
}

#[test]
fn call06_reordered_response_gets_typed_data() {
    let frame = AgentFrame::from_slice(br#"{"data":{"protocolVersion":2},"success":true,"command":"negotiate_protocol","type":"response"}"#).unwrap();
    let AgentFrame::Response(response) = frame else {
        panic!()
    };
    assert!(
        matches!(response.data, Some(musewire_wire::ResponseData::NegotiateProtocol(ref d)) if d.protocol_version == 2)
    );
}

#[test]
fn call06_duplicate_type_is_read_as_json_parse_does() {
    // JSON.parse keeps the last `type`; the strict parse refuses, the lenient one agrees.
    let json = br#"{"type":"agent_start","type":"turn_start"}"#;
    assert!(AgentFrame::from_slice(json).is_err());
    let frame = AgentFrame::from_slice_lenient(json).unwrap();
    assert!(
        matches!(frame, AgentFrame::Event(SessionEvent::TurnStart(_))),
        "{frame:?}"
    );
}

#[test]
fn call06_lenient_parse_passes_on_a_changed_known_frame() {
    // A newer agent changed a known member's type: the strict parse fails, the lenient
    // one passes the frame on as received.
    let json = r#"{"type":"tool_execution_start","toolCallId":42,"toolName":"read"}"#;
    assert!(AgentFrame::from_slice(json.as_bytes()).is_err());
    let frame = AgentFrame::from_slice_lenient(json.as_bytes()).unwrap();
    assert!(matches!(frame, AgentFrame::Unknown(_)));
    assert_eq!(frame.to_value(), value(json));
    assert!(AgentFrame::from_slice_lenient(b"[1]").is_err());
    assert!(AgentFrame::from_slice_lenient(b"not json").is_err());
}
