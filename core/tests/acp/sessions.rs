//! ACP-25: `session/close`, `session/resume`, and `session/load` of a session that is open.

use crate::support as acp_support;

use acp_support::{model, Harness};
use musewire_core::acp::{Bridge, BridgeConfig, Input, SessionFile};
use serde_json::{json, Value};

fn with_folder() -> Harness {
    let mut h = Harness::new();
    h.bridge = Bridge::new(BridgeConfig {
        session_dir: Some("/state/sessions".into()),
        ..BridgeConfig::default()
    });
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h
}

fn answer_last(h: &mut Harness, key: &str, command: &str, data: Value) {
    let asked = h
        .asked(command)
        .unwrap_or_else(|| panic!("{command} asked"));
    h.agent_lines(
        key,
        &[
            json!({"id": asked["id"], "type": "response", "command": command,
            "success": true, "data": data}),
        ],
    );
}

#[test]
fn acp_25_initialize_advertises_close_always_and_resume_with_a_session_folder() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    let caps = &h.answer(1).unwrap()["result"]["agentCapabilities"]["sessionCapabilities"];
    assert!(caps["close"].is_object(), "{caps}");
    assert!(caps.get("resume").is_none_or(Value::is_null), "{caps}");
    let mut h = with_folder();
    let caps = &h.answer(1).unwrap()["result"]["agentCapabilities"]["sessionCapabilities"];
    assert!(
        caps["close"].is_object() && caps["resume"].is_object(),
        "{caps}"
    );
    h.editor.clear();
}

#[test]
fn acp_25_close_ends_the_turn_stops_the_agent_and_forgets_the_session() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "long");
    h.request(20, "session/close", json!({"sessionId": s}));
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "cancelled");
    assert!(h.answer(20).unwrap()["result"].is_object());
    assert_eq!(
        h.closed,
        std::slice::from_ref(&s),
        "its agent's stdin is closed (ACP-12)"
    );
    // Later requests to it: a clear error.
    h.request(
        21,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "again"}]}),
    );
    assert_eq!(h.answer(21).unwrap()["error"]["code"], -32002);
    h.request(22, "session/close", json!({"sessionId": s}));
    assert_eq!(h.answer(22).unwrap()["error"]["code"], -32002);
    // Other sessions go on.
    let other = h.open(30);
    h.prompt(&other, "hi");
}

#[test]
fn acp_25_resume_switches_without_replay_and_answers_with_the_options() {
    let mut h = with_folder();
    h.request(
        2,
        "session/resume",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    let key = h.spawned[0].0.clone();
    assert_eq!(h.spawned[0].1, std::path::PathBuf::from("/work"));
    h.agent_lines(
        &key,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    let switch = h.asked("switch_session").expect("switched");
    assert_eq!(switch["sessionPath"], "/state/sessions/s-1.jsonl");
    answer_last(&mut h, &key, "switch_session", json!({"cancelled": false}));
    answer_last(
        &mut h,
        &key,
        "get_state",
        json!({"model": model("scripted"), "thinkingLevel": "low", "sessionName": "My work"}),
    );
    answer_last(
        &mut h,
        &key,
        "get_available_models",
        json!({"models": [model("scripted")]}),
    );
    let answer = h.answer(2).expect("resumed");
    let options = answer["result"]["configOptions"].as_array().unwrap();
    assert_eq!(options.len(), 2, "{answer}");
    // No history was read: no replay.
    assert!(h.asked("get_messages_page").is_none() && h.asked("get_messages").is_none());
    let titles: Vec<&Value> = h
        .editor
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "session_info_update")
        .collect();
    assert_eq!(titles[0]["params"]["update"]["title"], "My work");
    assert_eq!(titles[0]["params"]["sessionId"], "s-1");
    // The session is usable under its id, and a second resume is answered at once.
    h.prompt("s-1", "hi");
    h.request(
        3,
        "session/resume",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    assert_eq!(h.spawned.len(), 1);
    assert!(h.answer(3).unwrap()["result"]["configOptions"].is_array());
}

#[test]
fn acp_25_resume_refuses_what_load_refuses() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.request(
        2,
        "session/resume",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    assert_eq!(h.answer(2).unwrap()["error"]["code"], -32601);
    let mut h = with_folder();
    h.request(
        3,
        "session/resume",
        json!({"sessionId": "../etc/passwd", "cwd": "/work", "mcpServers": []}),
    );
    assert_eq!(h.answer(3).unwrap()["error"]["code"], -32002);
    h.request(
        4,
        "session/resume",
        json!({"sessionId": "s-1", "cwd": "relative", "mcpServers": []}),
    );
    assert_eq!(h.answer(4).unwrap()["error"]["code"], -32602);
    assert!(h.spawned.is_empty());
}

#[test]
fn acp_25_loading_an_open_session_loads_it_again_in_a_new_agent() {
    let mut h = with_folder();
    h.request(
        2,
        "session/resume",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    let first = h.spawned[0].0.clone();
    h.answer_opening_after_switch(&first);
    assert!(h.answer(2).unwrap()["result"].is_object());
    h.prompt("s-1", "running");
    h.request(
        5,
        "session/load",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    // The open one ends: its turn cancelled, its agent stopped; a new agent loads it.
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "cancelled");
    assert_eq!(h.closed, std::slice::from_ref(&first));
    assert_eq!(h.spawned.len(), 2);
    let second = h.spawned[1].0.clone();
    h.agent_lines(
        &second,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    let switch = h.asked("switch_session").unwrap();
    assert_eq!(switch["sessionPath"], "/state/sessions/s-1.jsonl");
    assert!(h.answer(5).is_none(), "the load goes on: no -32600");
}

fn session_file(name: &str, modified_ms: u64, cwd: &str, title: &str) -> SessionFile {
    SessionFile {
        name: name.into(),
        modified_ms: Some(modified_ms),
        head: format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"cwd\":\"{cwd}\",\"title\":\"{title}\"}}\n"
        )
        .into_bytes(),
        tail: Vec::new(),
    }
}

#[test]
fn acp_26_list_reads_the_folder_once_and_answers_every_waiting_list() {
    let mut h = with_folder();
    let caps = &h.answer(1).unwrap()["result"]["agentCapabilities"]["sessionCapabilities"];
    assert!(caps["list"].is_object(), "{caps}");
    h.request(2, "session/list", json!({}));
    h.request(3, "session/list", json!({"cwd": "/b"}));
    assert_eq!(
        h.folder_reads,
        [std::path::PathBuf::from("/state/sessions")],
        "one read for both"
    );
    assert!(h.answer(2).is_none());
    h.bridge.handle(
        h.now,
        Input::SessionFolder(Ok(vec![
            session_file("old.jsonl", 1_700_000_000_000, "/a", "Old work"),
            session_file("new.jsonl", 1_700_000_060_000, "/b", "New work"),
        ])),
    );
    h.drain();
    let all = &h.answer(2).unwrap()["result"]["sessions"];
    assert_eq!(all[0]["sessionId"], "new");
    assert_eq!(all[0]["cwd"], "/b");
    assert_eq!(all[0]["title"], "New work");
    assert_eq!(all[0]["updatedAt"], "2023-11-14T22:14:20.000Z");
    assert_eq!(all[1]["sessionId"], "old");
    let b = h.answer(3).unwrap()["result"]["sessions"].clone();
    assert_eq!(b.as_array().unwrap().len(), 1, "{b}");
    // A listed session loads by its id.
    h.request(
        4,
        "session/load",
        json!({"sessionId": "new", "cwd": "/b", "mcpServers": []}),
    );
    assert_eq!(h.spawned.len(), 1);
}

#[test]
fn acp_26_list_failures_are_typed() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.request(2, "session/list", json!({}));
    assert_eq!(h.answer(2).unwrap()["error"]["code"], -32601);
    let mut h = with_folder();
    h.request(3, "session/list", json!({"cwd": "relative"}));
    assert_eq!(h.answer(3).unwrap()["error"]["code"], -32602);
    h.request(4, "session/list", json!({"cursor": "not-ours"}));
    h.bridge.handle(h.now, Input::SessionFolder(Ok(Vec::new())));
    h.drain();
    assert_eq!(h.answer(4).unwrap()["error"]["code"], -32602);
    h.request(5, "session/list", json!({}));
    h.bridge
        .handle(h.now, Input::SessionFolder(Err("permission denied".into())));
    h.drain();
    let error = &h.answer(5).unwrap()["error"];
    assert_eq!(error["code"], -32603);
    assert!(error["data"]
        .as_str()
        .unwrap()
        .contains("permission denied"));
}
