//! HOST-10: host tools on pi through musewire's extension, as the Client speaks it: the
//! announcement settles the route (for calls held before the session was ready too), the
//! tools go as the extension's command, a call dialog is a `host_tool_call`, its result is the
//! dialog's value, an abort is a cancel; without the announcement nothing changes.

use crate::common as client_common;

use client_common::{wire, Harness};
use musewire_core::client::pi_host_tools::with_extension;
use musewire_core::client::AgentKind;
use musewire_core::client::{Call, ClientConfig, ClientEvent, Input};
use musewire_wire::{HostToolCall, HostToolDefinition};
use serde_json::{json, Value};

const ANNOUNCE: &str = r#"{"type":"extension_ui_request","id":"u0","method":"setStatus","statusKey":"musewire:host_tools","statusText":"1"}"#;
const PROBE_ANSWER: &str =
    r#"{"id":"req_0","type":"response","command":"get_state","success":true,"data":{}}"#;

fn tool() -> HostToolDefinition {
    wire(json!({"name": "lookup", "description": "Looks up", "parameters": {"type": "object"}}))
}

fn call_dialog(id: &str, tool_call: &str) -> String {
    let placeholder =
        json!({"toolCallId": tool_call, "toolName": "lookup", "arguments": {"q": "x"}}).to_string();
    json!({"type": "extension_ui_request", "id": id, "method": "input", "title": "musewire:host_tool_call", "placeholder": placeholder}).to_string()
}

/// A pi with the extension, as it starts: the announcement, then the probe's answer.
fn pi_with_extension() -> Harness {
    let mut h = Harness::new(ClientConfig::default());
    h.agent(ANNOUNCE);
    h.agent(PROBE_ANSWER);
    h.drain();
    h
}

#[test]
fn host_10_set_host_tools_goes_as_the_extensions_command_and_its_answer_is_the_calls() {
    let mut h = pi_with_extension();
    let id = h.request(Call::SetHostTools(vec![tool()])).unwrap();
    let (written, _) = h.split();
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["type"], "prompt");
    assert_eq!(written[0]["id"], Value::String(id.wire()));
    let message = written[0]["message"].as_str().unwrap();
    let json = message
        .strip_prefix("/musewire-host-tools ")
        .expect(message);
    assert_eq!(
        serde_json::from_str::<Value>(json).unwrap(),
        json!([{"name": "lookup", "description": "Looks up", "parameters": {"type": "object"}}])
    );
    // pi 1.6 answers the command's prompt `handled`; the host sees its set_host_tools answered.
    h.agent(&format!(
        r#"{{"id":"{}","type":"response","command":"prompt","success":true,"data":{{"disposition":"handled"}}}}"#,
        id.wire()
    ));
    let (_, events) = h.split();
    assert!(
        matches!(&events[..], [ClientEvent::Response { request, command, outcome: Ok(_) }] if *request == id && command == "set_host_tools"),
        "{events:?}"
    );
}

#[test]
fn host_10_a_call_held_before_the_session_is_ready_takes_the_route_the_announcement_settles() {
    // Held before pi wrote anything; pi then announces the extension first.
    let mut h = Harness::new(ClientConfig::default());
    h.drain();
    h.request(Call::SetHostTools(vec![tool()])).unwrap();
    let (written, _) = h.split();
    assert!(
        written.is_empty(),
        "held until the agent is known: {written:?}"
    );
    h.agent(ANNOUNCE);
    let (written, events) = h.split();
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0]["type"], "prompt");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ClientEvent::UiRequest(_))),
        "the announcement is not the host's: {events:?}"
    );

    // An agent that starts without it (omp, a pi without the extension) gets the command.
    let mut h = Harness::new(ClientConfig::default());
    h.drain();
    h.request(Call::SetHostTools(vec![tool()])).unwrap();
    h.agent(PROBE_ANSWER);
    let (written, _) = h.split();
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0]["type"], "set_host_tools");
}

#[test]
fn host_10_a_call_dialog_is_a_host_tool_call_and_its_result_is_the_dialogs_value() {
    let mut h = pi_with_extension();
    h.agent(&call_dialog("d1", "tc1"));
    let (written, events) = h.split();
    assert!(written.is_empty());
    assert_eq!(
        events,
        vec![ClientEvent::HostToolCall(HostToolCall {
            id: "d1".into(),
            tool_call_id: "tc1".into(),
            tool_name: "lookup".into(),
            arguments: json!({"q": "x"}),
            ..Default::default()
        })]
    );
    // A partial result has no way to pi: accepted, nothing written.
    assert!(h.answer(Call::HostToolUpdate(
        "d1".into(),
        wire(json!({"content": [{"type": "text", "text": "partial"}]}))
    )));
    assert!(h.split().0.is_empty());
    assert!(h.answer(Call::HostToolResult {
        id: "d1".into(),
        result: wire(json!({"content": [{"type": "text", "text": "found"}], "details": {"n": 1}})),
        is_error: false
    }));
    let (written, _) = h.split();
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0]["type"], "extension_ui_response");
    assert_eq!(written[0]["id"], "d1");
    let value: Value = serde_json::from_str(written[0]["value"].as_str().unwrap()).unwrap();
    assert_eq!(
        value,
        json!({"content": [{"type": "text", "text": "found"}], "details": {"n": 1}})
    );
    // Answered once.
    assert!(!h.answer(Call::HostToolResult {
        id: "d1".into(),
        result: wire(json!({"content": []})),
        is_error: false
    }));

    // An error result says so in the value.
    h.agent(&call_dialog("d2", "tc2"));
    h.drain();
    assert!(h.answer(Call::HostToolResult {
        id: "d2".into(),
        result: wire(json!({"content": [{"type": "text", "text": "no"}]})),
        is_error: true
    }));
    let (written, _) = h.split();
    let value: Value = serde_json::from_str(written[0]["value"].as_str().unwrap()).unwrap();
    assert_eq!(value["isError"], true);
}

#[test]
fn host_10_an_aborted_call_is_cancelled_and_its_late_result_dropped() {
    let mut h = pi_with_extension();
    h.agent(&call_dialog("d1", "tc1"));
    h.drain();
    h.agent(r#"{"type":"extension_ui_request","id":"u9","method":"setStatus","statusKey":"musewire:host_tool_cancel","statusText":"tc1"}"#);
    let (written, events) = h.split();
    assert!(written.is_empty());
    assert_eq!(
        events,
        vec![ClientEvent::HostToolCancelled { id: "d1".into() }]
    );
    assert!(!h.answer(Call::HostToolResult {
        id: "d1".into(),
        result: wire(json!({"content": []})),
        is_error: false
    }));
    assert!(h.split().0.is_empty());
    // A cancel for no open call says nothing.
    h.agent(r#"{"type":"extension_ui_request","id":"u10","method":"setStatus","statusKey":"musewire:host_tool_cancel","statusText":"tc1"}"#);
    assert_eq!(h.split(), (vec![], vec![]));
}

#[test]
fn host_10_a_call_dialog_that_is_no_call_is_answered_cancelled_and_the_host_sees_nothing() {
    let mut h = pi_with_extension();
    h.agent(r#"{"type":"extension_ui_request","id":"d1","method":"input","title":"musewire:host_tool_call","placeholder":"not json"}"#);
    let (written, events) = h.split();
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(
        written,
        vec![json!({"type": "extension_ui_response", "id": "d1", "cancelled": true})]
    );
}

#[test]
fn host_10_without_the_announcement_the_frames_are_ordinary_ui_requests() {
    let mut h = Harness::new(ClientConfig::default());
    h.agent(PROBE_ANSWER);
    h.drain();
    h.agent(&call_dialog("d1", "tc1"));
    let (_, events) = h.split();
    assert!(
        matches!(&events[..], [ClientEvent::UiRequest(_)]),
        "{events:?}"
    );
    h.request(Call::SetHostTools(vec![tool()])).unwrap();
    let (written, _) = h.split();
    assert_eq!(written[0]["type"], "set_host_tools");
}

#[test]
fn host_10_a_restart_forgets_the_route_until_the_new_agent_announces_it() {
    let mut h = pi_with_extension();
    let now = h.now;
    h.client.handle(now, Input::Call(Call::Restart));
    h.agent(PROBE_ANSWER);
    h.drain();
    h.request(Call::SetHostTools(vec![tool()])).unwrap();
    let (written, _) = h.split();
    assert_eq!(written.last().unwrap()["type"], "set_host_tools");
}

#[test]
fn host_10_pi_is_told_from_omp_by_its_command() {
    let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
    let command_is_pi = |w: &[String]| AgentKind::from_command(w) == AgentKind::Pi;
    assert!(command_is_pi(&words("pi --mode rpc")));
    assert!(command_is_pi(&words("/usr/local/bin/pi --mode rpc")));
    assert!(command_is_pi(&words(
        "node /x/node_modules/@mariozechner/pi-coding-agent/dist/cli.js --mode rpc"
    )));
    assert!(command_is_pi(&words(
        "bun /x/@earendil-works/pi-coding-agent/dist/bundle/cli.js --mode rpc"
    )));
    assert!(!command_is_pi(&words("omp --mode rpc")));
    assert!(!command_is_pi(&words(
        "bun /x/node_modules/@oh-my-pi/pi-coding-agent/src/cli.ts --mode rpc"
    )));
    assert!(!command_is_pi(&words("musewire agent --mode rpc")));
    assert!(!command_is_pi(&[]));
    assert_eq!(
        with_extension(&words("pi --mode rpc"), std::path::Path::new("/p/x.js")),
        words("pi --mode rpc -e /p/x.js")
    );
}
