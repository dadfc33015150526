//! ACP-24: the model and thinking level as config options: offered at `session/new`, set
//! through `session/set_config_option`, followed when the agent changes them itself.

use crate::support as acp_support;

use std::time::Duration;

use acp_support::{model, Harness};
use serde_json::{json, Value};

fn option<'a>(options: &'a Value, id: &str) -> Option<&'a Value> {
    options.as_array()?.iter().find(|o| o["id"] == id)
}

fn values(option: &Value) -> Vec<String> {
    option["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap().to_owned())
        .collect()
}

/// A session open, with the editor's messages cleared; its options as `session/new` gave them.
fn opened(h: &mut Harness) -> (String, Value) {
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    let s = h.open(2);
    let options = h.answer(2).unwrap()["result"]["configOptions"].clone();
    h.editor.clear();
    (s, options)
}

fn set(h: &mut Harness, id: u64, s: &str, config: &str, value: Value) {
    h.request(
        id,
        "session/set_config_option",
        json!({"sessionId": s, "configId": config, "value": value}),
    );
}

#[test]
fn acp_24_session_new_offers_the_model_and_thinking_level_selects() {
    let mut h = Harness::new();
    let (_, options) = opened(&mut h);
    let model = option(&options, "model").expect("a model option");
    assert_eq!(model["type"], "select");
    assert_eq!(model["category"], "model");
    assert_eq!(model["currentValue"], "musewire/scripted");
    assert_eq!(
        values(model),
        ["musewire/scripted", "musewire/scripted-large"]
    );
    let thought = option(&options, "thought_level").expect("a thinking option");
    assert_eq!(thought["category"], "thought_level");
    assert_eq!(thought["currentValue"], "off");
    // A v1 agent (pi): pi's levels.
    assert_eq!(
        values(thought),
        ["off", "minimal", "low", "medium", "high", "xhigh"]
    );
}

#[test]
fn acp_24_set_model_goes_to_the_agent_and_answers_with_what_took_effect() {
    let mut h = Harness::new();
    let (s, _) = opened(&mut h);
    set(&mut h, 5, &s, "model", json!("musewire/scripted-large"));
    let asked = h.asked("set_model").expect("set_model sent");
    assert_eq!(asked["provider"], "musewire");
    assert_eq!(asked["modelId"], "scripted-large");
    assert!(h.answer(5).is_none(), "answered once the agent has");
    h.agent_lines(
        &s,
        &[
            json!({"id": asked["id"], "type": "response", "command": "set_model",
            "success": true, "data": model("scripted-large")}),
        ],
    );
    // What the change left in effect is asked for.
    let state = h.asked("get_state").unwrap();
    assert_ne!(state["id"], asked["id"]);
    h.agent_lines(
        &s,
        &[
            json!({"id": state["id"], "type": "response", "command": "get_state",
            "success": true, "data": {"model": model("scripted-large"), "thinkingLevel": "low"}}),
        ],
    );
    let options = h.answer(5).unwrap()["result"]["configOptions"].clone();
    assert_eq!(
        option(&options, "model").unwrap()["currentValue"],
        "musewire/scripted-large"
    );
    assert_eq!(
        option(&options, "thought_level").unwrap()["currentValue"],
        "low"
    );
    // ACP-01: /status shows what the session is set to.
    h.request(
        6,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "/status"}]}),
    );
    let text = h.updates().last().unwrap()["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("requested model: scripted-large"), "{text}");
    assert!(text.contains("requested effort: low"), "{text}");
}

#[test]
fn acp_24_set_thinking_level_sends_the_level() {
    let mut h = Harness::new();
    let (s, _) = opened(&mut h);
    set(&mut h, 5, &s, "thought_level", json!("high"));
    let asked = h
        .asked("set_thinking_level")
        .expect("set_thinking_level sent");
    assert_eq!(asked["level"], "high");
}

#[test]
fn acp_24_bad_choices_are_invalid_params_and_nothing_is_sent() {
    let mut h = Harness::new();
    let (s, _) = opened(&mut h);
    let sent = h.agent.len();
    set(&mut h, 5, &s, "model", json!("musewire/not-offered"));
    set(&mut h, 6, &s, "thought_level", json!("max")); // not a v1 level
    set(&mut h, 7, &s, "mode", json!("x"));
    set(&mut h, 8, &s, "model", json!(true));
    h.request(
        9,
        "session/set_config_option",
        json!({"sessionId": s, "configId": "model", "type": "boolean", "value": true}),
    );
    for id in 5..=9 {
        assert_eq!(
            h.answer(id).unwrap()["error"]["code"],
            -32602,
            "request {id}"
        );
    }
    set(&mut h, 10, "nope", "model", json!("musewire/scripted"));
    assert_eq!(h.answer(10).unwrap()["error"]["code"], -32002);
    assert_eq!(h.agent.len(), sent, "{:?}", &h.agent[sent..]);
    // The session goes on.
    h.prompt(&s, "hi");
}

#[test]
fn acp_24_a_refused_change_is_an_error_with_the_agents_words() {
    let mut h = Harness::new();
    let (s, _) = opened(&mut h);
    set(&mut h, 5, &s, "model", json!("musewire/scripted-large"));
    let asked = h.asked("set_model").unwrap();
    h.agent_lines(
        &s,
        &[
            json!({"id": asked["id"], "type": "response", "command": "set_model",
            "success": false, "error": "No API key for musewire"}),
        ],
    );
    let answer = h.answer(5).unwrap();
    assert_eq!(answer["error"]["data"], "No API key for musewire");
}

#[test]
fn acp_24_changes_the_agent_makes_move_the_options() {
    let mut h = Harness::new();
    let (s, _) = opened(&mut h);
    h.agent_lines(
        &s,
        &[json!({"type": "config_update", "model": model("scripted-large"), "thinkingLevel": "medium"})],
    );
    let updates = h.updates();
    let update = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "config_option_update")
        .expect("a config_option_update");
    let options = &update["configOptions"];
    assert_eq!(
        option(options, "model").unwrap()["currentValue"],
        "musewire/scripted-large"
    );
    assert_eq!(
        option(options, "thought_level").unwrap()["currentValue"],
        "medium"
    );
    // ACP-10: the change is still shown as a notice.
    assert!(updates
        .iter()
        .any(|u| u["sessionUpdate"] == "agent_message_chunk"));
    h.editor.clear();
    // The same again changes nothing: no update.
    h.agent_lines(
        &s,
        &[json!({"type": "config_update", "model": model("scripted-large"), "thinkingLevel": "medium"})],
    );
    assert!(h
        .updates()
        .iter()
        .all(|u| u["sessionUpdate"] != "config_option_update"));
    h.agent_lines(
        &s,
        &[json!({"type": "thinking_level_changed", "level": "high"})],
    );
    let update = h.updates().pop().unwrap();
    assert_eq!(update["sessionUpdate"], "config_option_update");
    assert_eq!(
        option(&update["configOptions"], "thought_level").unwrap()["currentValue"],
        "high"
    );
}

#[test]
fn acp_24_an_agent_without_a_model_list_gets_no_model_option() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.request(2, "session/new", json!({"cwd": "/tmp", "mcpServers": []}));
    let key = h.spawned[0].0.clone();
    h.agent_lines(
        &key,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    let state = h.asked("get_state").unwrap();
    h.agent_lines(
        &key,
        &[
            json!({"id": state["id"], "type": "response", "command": "get_state",
            "success": true, "data": {"thinkingLevel": "off"}}),
        ],
    );
    let models = h.asked("get_available_models").unwrap();
    h.agent_lines(
        &key,
        &[
            json!({"id": models["id"], "type": "response", "command": "get_available_models",
            "success": false, "error": "Unknown command: get_available_models"}),
        ],
    );
    let options = h.answer(2).unwrap()["result"]["configOptions"].clone();
    assert!(option(&options, "model").is_none(), "{options}");
    assert!(option(&options, "thought_level").is_some());
}

#[test]
fn acp_24_a_slow_model_list_opens_the_session_without_it_then_updates() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.request(2, "session/new", json!({"cwd": "/tmp", "mcpServers": []}));
    let key = h.spawned[0].0.clone();
    h.agent_lines(
        &key,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    let state = h.asked("get_state").unwrap();
    h.agent_lines(
        &key,
        &[
            json!({"id": state["id"], "type": "response", "command": "get_state",
            "success": true, "data": {"model": model("scripted"), "thinkingLevel": "off"}}),
        ],
    );
    let models = h.asked("get_available_models").unwrap();
    h.timeout(Duration::from_secs(5) - Duration::from_millis(1));
    assert!(h.answer(2).is_none());
    h.timeout(Duration::from_millis(1));
    let options = h.answer(2).expect("opened at the budget")["result"]["configOptions"].clone();
    assert!(option(&options, "model").is_none());
    h.editor.clear();
    h.agent_lines(
        &key,
        &[
            json!({"id": models["id"], "type": "response", "command": "get_available_models",
            "success": true, "data": {"models": [model("scripted")]}}),
        ],
    );
    let update = h.updates().pop().expect("an update");
    assert_eq!(update["sessionUpdate"], "config_option_update");
    assert!(option(&update["configOptions"], "model").is_some());
}
