//! Host tools, host URIs and extension UI, agent side: HOST-01..08.

use crate::common as agent_common;

use agent_common::*;
use musewire_core::agent::{
    AgentError, AgentEvent, DialogOutcome, HostFailure, HostUriContent, HostUriOperation,
};
use musewire_wire::{
    BashData, ConfirmRequest, NotifyRequest, ResponseData, SelectRequest, UiRequest,
};
use serde_json::{json, Value};

fn with_tool() -> Harness {
    let mut h = Harness::fresh();
    h.host(r#"{"id":"t","type":"set_host_tools","tools":[{"name":"lookup","description":"Look up","parameters":{"type":"object"}}]}"#);
    h.split();
    h
}

fn with_schemes() -> Harness {
    let mut h = Harness::fresh();
    h.host(r#"{"id":"s","type":"set_host_uri_schemes","schemes":[{"scheme":"db","immutable":true},{"scheme":"notes","writable":true}]}"#);
    h.split();
    h
}

#[test]
fn host_01_set_host_tools_checks_each_tool_with_the_reference_messages() {
    let mut h = Harness::fresh();
    for (tools, error) in [
        (
            json!([{"description": "d", "parameters": {}}]),
            "Host tool at index 0 must provide a non-empty name",
        ),
        (
            json!([{"name": "a", "description": "d", "parameters": {}}, {"name": " ", "description": "d", "parameters": {}}]),
            "Host tool at index 1 must provide a non-empty name",
        ),
        (
            json!([{"name": " a ", "description": "", "parameters": {}}]),
            "Host tool \"a\" must provide a non-empty description",
        ),
        (
            json!([{"name": "a", "description": "d", "parameters": []}]),
            "Host tool \"a\" must provide a JSON Schema object",
        ),
        (json!("nope"), "set_host_tools requires a tools array"),
    ] {
        h.host(&json!({"id": "t", "type": "set_host_tools", "tools": tools}).to_string());
        assert_eq!(
            h.one_frame(),
            json!({"id": "t", "type": "response", "command": "set_host_tools", "success": false, "error": error})
        );
    }
    assert_eq!(
        h.agent.host_tools().count(),
        0,
        "a refused set changes nothing"
    );
    h.host(r#"{"id":"t","type":"set_host_tools","tools":[{"name":" lookup ","description":" Look up ","parameters":{"type":"object"}},{"name":"b","label":"Bee","description":"d","parameters":{},"hidden":true}]}"#);
    let (frames, events) = h.split();
    assert_eq!(
        frames,
        [
            json!({"id": "t", "type": "response", "command": "set_host_tools", "success": true, "data": {"toolNames": ["lookup", "b"]}})
        ]
    );
    let [AgentEvent::HostToolsChanged { tools }] = &events[..] else {
        panic!("{events:?}")
    };
    assert_eq!(tools[0].name, "lookup");
    assert_eq!(
        tools[0].label.as_deref(),
        Some("lookup"),
        "label defaults to the name"
    );
    assert_eq!(tools[0].description, "Look up");
    assert_eq!(tools[0].hidden, Some(false));
    assert_eq!(tools[1].label.as_deref(), Some("Bee"));
    assert_eq!(tools[1].hidden, Some(true));
    // A new set replaces the old one.
    h.host(r#"{"id":"t","type":"set_host_tools","tools":[]}"#);
    h.split();
    assert_eq!(h.agent.host_tools().count(), 0);
}

#[test]
fn host_02_calls_stream_updates_and_end_with_a_result_or_the_joined_error_text() {
    let mut h = with_tool();
    assert_eq!(
        h.agent.call_host_tool(h.now, "tc", "missing", json!({})),
        Err(AgentError::UnknownHostTool("missing".into()))
    );
    let call = h
        .agent
        .call_host_tool(h.now, "tc-1", "lookup", json!({"q": 1}))
        .unwrap();
    assert_eq!(
        h.one_frame(),
        json!({"type": "host_tool_call", "id": "host-tool-1", "toolCallId": "tc-1", "toolName": "lookup", "arguments": {"q": 1}})
    );
    h.host(r#"{"type":"host_tool_update","id":"host-tool-1","partialResult":{"content":[{"type":"text","text":"half"}]}}"#);
    h.host(r#"{"type":"host_tool_result","id":"host-tool-1","result":{"content":[{"type":"text","text":"done"}]}}"#);
    let (frames, events) = h.split();
    assert!(frames.is_empty());
    assert_eq!(
        events,
        [
            AgentEvent::HostToolUpdate {
                call,
                partial_result: json!({"content": [{"type": "text", "text": "half"}]})
            },
            AgentEvent::HostToolFinished {
                call,
                outcome: Ok(json!({"content": [{"type": "text", "text": "done"}]}))
            },
        ]
    );
    for (content, error) in [
        (
            json!([{"type": "text", "text": " bad "}, {"type": "image", "data": "x"}, {"type": "text", "text": "worse\n"}]),
            "bad \nworse",
        ),
        (json!([]), "Host tool execution failed"),
        (
            json!([{"type": "text", "text": "  "}]),
            "Host tool execution failed",
        ),
    ] {
        let call = h
            .agent
            .call_host_tool(h.now, "tc", "lookup", json!({}))
            .unwrap();
        h.split();
        h.host(&json!({"type": "host_tool_result", "id": call.wire(), "result": {"content": content}, "isError": true}).to_string());
        let (_, events) = h.split();
        assert_eq!(
            events,
            [AgentEvent::HostToolFinished {
                call,
                outcome: Err(HostFailure::Failed(error.into()))
            }]
        );
    }
    // A result without a content array is not a host frame: it is read as a command.
    h.host(r#"{"type":"host_tool_result","id":"host-tool-9","result":{}}"#);
    assert_eq!(h.one_frame()["error"], "Unknown command: host_tool_result");
}

#[test]
fn host_03_a_cancel_is_written_and_late_or_unknown_results_are_dropped() {
    let mut h = with_tool();
    let call = h
        .agent
        .call_host_tool(h.now, "tc", "lookup", json!({}))
        .unwrap();
    h.split();
    assert!(h.agent.cancel_host_tool(h.now, call));
    assert_eq!(
        h.one_frame(),
        json!({"type": "host_tool_cancel", "id": "cancel-2", "targetId": "host-tool-1"})
    );
    assert!(!h.agent.cancel_host_tool(h.now, call));
    for line in [
        r#"{"type":"host_tool_update","id":"host-tool-1","partialResult":{"content":[]}}"#,
        r#"{"type":"host_tool_result","id":"host-tool-1","result":{"content":[]}}"#,
        r#"{"type":"host_tool_result","id":"nobody","result":{"content":[]}}"#,
    ] {
        h.host(line);
        let (frames, events) = h.split();
        assert!(frames.is_empty() && events.is_empty(), "{line}");
    }
    assert_eq!(h.agent.pending_host_requests(), 0);
}

#[test]
fn host_04_schemes_are_normalised_the_reserved_one_refused_and_the_set_replaced() {
    let mut h = Harness::fresh();
    for (schemes, error) in [
        (
            json!([{"scheme": " "}]),
            "Host URI scheme must be a non-empty string",
        ),
        (
            json!([{"scheme": "1db"}]),
            "Host URI scheme contains invalid characters: 1db",
        ),
        (
            json!([{"scheme": " Security "}]),
            "Host URI scheme is reserved by OMP: security://",
        ),
        (json!({}), "set_host_uri_schemes requires a schemes array"),
    ] {
        h.host(&json!({"id": "s", "type": "set_host_uri_schemes", "schemes": schemes}).to_string());
        assert_eq!(h.one_frame()["error"], error);
    }
    h.host(r#"{"id":"s","type":"set_host_uri_schemes","schemes":[{"scheme":" DB "},{"scheme":"x+y.z-1","writable":true},{"scheme":"db","immutable":true}]}"#);
    let (frames, events) = h.split();
    assert_eq!(frames[0]["data"], json!({"schemes": ["db", "x+y.z-1"]}));
    let [AgentEvent::HostUriSchemesChanged { schemes }] = &events[..] else {
        panic!()
    };
    assert_eq!(
        schemes[0].immutable,
        Some(true),
        "a later duplicate replaces the earlier one"
    );
    assert_eq!(schemes[1].writable, Some(true));
    h.host(r#"{"id":"s","type":"set_host_uri_schemes","schemes":[{"scheme":"notes"}]}"#);
    h.split();
    let names: Vec<&str> = h
        .agent
        .host_uri_schemes()
        .map(|s| s.scheme.as_str())
        .collect();
    assert_eq!(names, ["notes"]);
}

#[test]
fn host_05_uri_requests_writes_only_when_writable_and_the_error_text_precedence() {
    let mut h = with_schemes();
    assert_eq!(
        h.agent
            .request_host_uri(h.now, "web://x", HostUriOperation::Read),
        Err(AgentError::UnknownHostUriScheme("web".into()))
    );
    assert_eq!(
        h.agent
            .request_host_uri(h.now, "db://t/1", HostUriOperation::Write("x".into())),
        Err(AgentError::NotWritable("db".into()))
    );
    let write = h
        .agent
        .request_host_uri(h.now, "notes://a", HostUriOperation::Write("body".into()))
        .unwrap();
    assert_eq!(
        h.one_frame(),
        json!({"type": "host_uri_request", "id": write.wire(), "operation": "write", "url": "notes://a", "content": "body"})
    );
    let read = h
        .agent
        .request_host_uri(h.now, "DB://t/1", HostUriOperation::Read)
        .unwrap();
    assert_eq!(
        h.one_frame(),
        json!({"type": "host_uri_request", "id": read.wire(), "operation": "read", "url": "DB://t/1"})
    );
    h.host(&json!({"type": "host_uri_result", "id": read.wire(), "content": "row"}).to_string());
    h.host(&json!({"type": "host_uri_result", "id": write.wire(), "isError": true}).to_string());
    let (_, events) = h.split();
    assert_eq!(
        events,
        [
            AgentEvent::HostUriFinished {
                request: read,
                outcome: Ok(HostUriContent {
                    content: "row".into(),
                    content_type: "text/plain".into(),
                    notes: None,
                    immutable: true
                }),
            },
            AgentEvent::HostUriFinished {
                request: write,
                outcome: Err(HostFailure::Failed(
                    "Host URI write failed for notes://a".into()
                ))
            },
        ]
    );
    for (fields, error) in [
        (json!({"isError": true, "error": "E", "content": "C"}), "E"),
        (json!({"isError": true, "error": "", "content": "C"}), "C"),
        (json!({"isError": true}), "Host URI read failed for db://q"),
    ] {
        let request = h
            .agent
            .request_host_uri(h.now, "db://q", HostUriOperation::Read)
            .unwrap();
        h.split();
        let mut frame = fields.clone();
        frame["type"] = "host_uri_result".into();
        frame["id"] = request.wire().into();
        h.host(&frame.to_string());
        let (_, events) = h.split();
        assert_eq!(
            events,
            [AgentEvent::HostUriFinished {
                request,
                outcome: Err(HostFailure::Failed(error.into()))
            }]
        );
    }
    // contentType, notes and immutable as given.
    let request = h
        .agent
        .request_host_uri(h.now, "notes://n", HostUriOperation::Read)
        .unwrap();
    h.split();
    h.host(&json!({"type": "host_uri_result", "id": request.wire(), "content": "{}", "contentType": "application/json", "notes": ["n"], "immutable": false}).to_string());
    let (_, events) = h.split();
    assert_eq!(
        events,
        [AgentEvent::HostUriFinished {
            request,
            outcome: Ok(HostUriContent {
                content: "{}".into(),
                content_type: "application/json".into(),
                notes: Some(vec!["n".into()]),
                immutable: false
            })
        }]
    );
    // A withdrawn request: cancel written, its result dropped.
    let request = h
        .agent
        .request_host_uri(h.now, "db://w", HostUriOperation::Read)
        .unwrap();
    h.split();
    assert!(h.agent.cancel_host_uri(h.now, request));
    assert_eq!(
        h.one_frame(),
        json!({"type": "host_uri_cancel", "id": format!("cancel-{}", request.0 + 1), "targetId": request.wire()})
    );
    h.host(
        &json!({"type": "host_uri_result", "id": request.wire(), "content": "late"}).to_string(),
    );
    assert_eq!(h.split().1, []);
}

fn select(timeout: Option<u64>) -> UiRequest {
    UiRequest::Select(SelectRequest {
        title: "Pick".into(),
        options: vec!["a".into(), "b".into()],
        timeout: timeout.map(Into::into),
        ..SelectRequest::default()
    })
}

#[test]
fn host_06_dialogs_are_answered_time_out_to_their_default_or_are_withdrawn() {
    let mut h = Harness::fresh();
    let dialog = h.agent.ui_dialog(h.now, select(Some(1000))).unwrap();
    assert_eq!(
        h.one_frame(),
        json!({"type": "extension_ui_request", "id": "ui-1", "method": "select", "title": "Pick", "options": ["a", "b"], "timeout": 1000})
    );
    assert_eq!(
        h.agent.poll_timeout(),
        Some(h.now + std::time::Duration::from_secs(1))
    );
    h.advance(999);
    assert_eq!(h.split().1, []);
    h.advance(1);
    assert_eq!(
        h.split().1,
        [AgentEvent::DialogResolved {
            dialog,
            outcome: DialogOutcome::TimedOut
        }]
    );
    assert_eq!(h.agent.poll_timeout(), None);
    // A late answer is dropped.
    h.host(r#"{"type":"extension_ui_response","id":"ui-1","value":"a"}"#);
    assert_eq!(h.split(), (vec![], vec![]));
    // Answered.
    let dialog = h.agent.ui_dialog(h.now, select(None)).unwrap();
    h.split();
    h.host(
        &json!({"type": "extension_ui_response", "id": dialog.wire(), "value": "b"}).to_string(),
    );
    let (_, events) = h.split();
    let [AgentEvent::DialogResolved { outcome, .. }] = &events[..] else {
        panic!()
    };
    assert_eq!(outcome.value(), Some("b"));
    let confirm = UiRequest::Confirm(ConfirmRequest {
        title: "Sure?".into(),
        ..ConfirmRequest::default()
    });
    let dialog = h.agent.ui_dialog(h.now, confirm).unwrap();
    h.split();
    h.host(&json!({"type": "extension_ui_response", "id": dialog.wire(), "cancelled": true, "timedOut": true}).to_string());
    let (_, events) = h.split();
    let [AgentEvent::DialogResolved { outcome, .. }] = &events[..] else {
        panic!()
    };
    assert!(!outcome.confirmed() && outcome.timed_out() && outcome.value().is_none());
    // Withdrawn by the agent.
    let dialog = h.agent.ui_dialog(h.now, select(Some(50))).unwrap();
    h.split();
    assert!(h.agent.ui_cancel(h.now, dialog));
    let frame = h.one_frame();
    assert_eq!(frame["method"], "cancel");
    assert_eq!(frame["targetId"], dialog.wire());
    assert_eq!(h.agent.poll_timeout(), None);
    // Notices need no answer; the two calls do not mix.
    let notify = UiRequest::Notify(NotifyRequest {
        message: "hi".into(),
        ..NotifyRequest::default()
    });
    assert!(matches!(
        h.agent.ui_dialog(h.now, notify.clone()),
        Err(AgentError::WrongUiMethod(_))
    ));
    assert!(matches!(
        h.agent.ui_notice(h.now, select(None)),
        Err(AgentError::WrongUiMethod(_))
    ));
    let id = h.agent.ui_notice(h.now, notify).unwrap();
    assert_eq!(
        h.one_frame(),
        json!({"type": "extension_ui_request", "id": id, "method": "notify", "message": "hi"})
    );
    assert_eq!(h.agent.pending_host_requests(), 0);
}

#[test]
fn host_07_when_stdin_closes_every_pending_host_request_is_rejected() {
    let mut h = with_tool();
    h.host(r#"{"id":"s","type":"set_host_uri_schemes","schemes":[{"scheme":"db"}]}"#);
    let (bash, _) = {
        h.split();
        h.command(r#"{"id":"b","type":"bash","command":"true"}"#)
    };
    let dialog = h.agent.ui_dialog(h.now, select(Some(10_000))).unwrap();
    let call = h
        .agent
        .call_host_tool(h.now, "tc", "lookup", json!({}))
        .unwrap();
    let uri = h
        .agent
        .request_host_uri(h.now, "db://x", HostUriOperation::Read)
        .unwrap();
    h.split();
    h.agent.handle_stdin_eof(h.now);
    let (frames, events) = h.split();
    assert!(frames.is_empty());
    assert_eq!(
        events,
        [
            AgentEvent::DialogResolved {
                dialog,
                outcome: DialogOutcome::Disconnected
            },
            AgentEvent::HostToolFinished {
                call,
                outcome: Err(HostFailure::Disconnected(HOST_TOOL_DISCONNECTED))
            },
            AgentEvent::HostUriFinished {
                request: uri,
                outcome: Err(HostFailure::Disconnected(HOST_URI_DISCONNECTED))
            },
            AgentEvent::InputClosed,
        ]
    );
    assert_eq!(
        DialogOutcome::DISCONNECTED,
        "RPC client disconnected before extension UI response completed"
    );
    assert_eq!(h.agent.pending_host_requests(), 0);
    assert_eq!(h.agent.poll_timeout(), None);
    // New host requests are refused; pending commands can still be answered.
    assert_eq!(
        h.agent.call_host_tool(h.now, "tc", "lookup", json!({})),
        Err(AgentError::Disconnected(HOST_TOOL_DISCONNECTED))
    );
    assert_eq!(
        h.agent
            .request_host_uri(h.now, "db://x", HostUriOperation::Read),
        Err(AgentError::Disconnected(HOST_URI_DISCONNECTED))
    );
    assert!(matches!(
        h.agent.ui_dialog(h.now, select(None)),
        Err(AgentError::Disconnected(_))
    ));
    h.agent
        .respond(
            h.now,
            bash,
            Ok(Some(ResponseData::Bash(BashData::default()))),
        )
        .unwrap();
    assert_eq!(h.one_frame()["id"], "b");
    // Input after the end is ignored.
    h.host(r#"{"id":"x","type":"get_state"}"#);
    assert_eq!(h.split(), (Vec::<Value>::new(), vec![]));
}

#[test]
fn host_08_ids_are_counters_and_misuse_is_refused_at_the_call() {
    let mut h = with_tool();
    let a = h
        .agent
        .call_host_tool(h.now, "1", "lookup", json!({}))
        .unwrap();
    let d = h.agent.ui_dialog(h.now, select(None)).unwrap();
    let b = h
        .agent
        .call_host_tool(h.now, "2", "lookup", json!({}))
        .unwrap();
    assert_eq!(
        (a.wire(), d.wire(), b.wire()),
        ("host-tool-1".into(), "ui-2".into(), "host-tool-3".into())
    );
    assert_eq!(
        musewire_core::agent::HostCallId::from_wire("host-tool-01"),
        None
    );
    // A dialog answer for a tool id, or a tool result for a dialog id, matches nothing.
    h.split();
    h.host(r#"{"type":"extension_ui_response","id":"host-tool-1","value":"x"}"#);
    h.host(r#"{"type":"host_tool_result","id":"ui-2","result":{"content":[]}}"#);
    assert_eq!(h.split(), (Vec::<Value>::new(), vec![]));
    assert_eq!(h.agent.pending_host_requests(), 3);
}
