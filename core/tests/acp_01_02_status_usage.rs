//! ACP-01 (`/status`, local and idle) and ACP-02 (`muse/usage` metadata, opt-in).

mod acp_support;

use acp_support::{update, Harness};
use serde_json::{json, Value};

fn assistant_end(model: &str, usage: Value) -> Value {
    json!({"type": "message_end", "message": {"role": "assistant", "content": [{"type": "text", "text": "x"}],
        "model": model, "provider": "fakeprov", "usage": usage, "stopReason": "stop"}})
}

#[test]
fn acp_01_status_is_advertised_beside_the_agents_commands() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.request(2, "session/new", json!({"cwd": "/tmp", "mcpServers": []}));
    let s = h.answer(2).unwrap()["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let first = h.updates().pop().unwrap();
    assert_eq!(first["sessionUpdate"], "available_commands_update");
    assert_eq!(first["availableCommands"][0]["name"], "status");
    h.agent_lines(&s, &[
        json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]}),
        json!({"type": "available_commands_update", "commands": [
            {"name": "compact", "description": "Compact"}, {"name": "status", "description": "theirs"}]}),
    ]);
    let last = h.updates().pop().unwrap();
    let names: Vec<&str> = last["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["status", "compact"]);
}

#[test]
fn acp_01_status_is_local_reports_unknowns_and_does_not_run_its_text() {
    let mut h = Harness::new();
    let s = h.session();
    let sent_before = h.agent.len();
    h.request(
        20,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "/status bash rm -rf /"}]}),
    );
    assert_eq!(
        h.agent.len(),
        sent_before,
        "nothing goes to the agent: {:?}",
        h.agent
    );
    assert_eq!(h.answer(20).unwrap()["result"]["stopReason"], "end_turn");
    let text = h.updates()[0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    for line in [
        "requested model: unknown",
        "last observed model: unknown",
        "approval policy: unknown",
        "root-session tokens: unknown",
        "context pressure: unknown",
        "plan size: unknown",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    assert!(!text.contains("rm -rf"));
}

#[test]
fn acp_01_status_shows_observed_model_tokens_effort_and_plan() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "x");
    h.agent_lines(&s, &[
        json!({"type": "thinking_level_changed", "thinkingLevel": "high"}),
        assistant_end("m1", json!({"input": 10, "output": 3, "totalTokens": 13})),
        json!({"type": "todo_reminder", "todos": [{"content": "a", "status": "pending"}, {"content": "b", "status": "pending"}]}),
        json!({"type": "agent_end", "messages": []}),
    ]);
    h.editor.clear();
    h.request(
        21,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "/status"}]}),
    );
    let text = h.updates()[0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("last observed model: m1"), "{text}");
    assert!(text.contains("last observed provider: fakeprov"), "{text}");
    assert!(text.contains("last observed effort: high"), "{text}");
    assert!(
        text.contains("root-session tokens: prompt 10, output 3, total 13"),
        "{text}"
    );
    assert!(text.contains("plan size: 2 entries"), "{text}");
}

#[test]
fn acp_02_no_opt_in_no_usage_metadata() {
    let mut h = Harness::new();
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"_meta": {"muse/usage": 2}}}),
    );
    assert!(
        h.answer(1).unwrap()["result"].get("_meta").is_none(),
        "{:?}",
        h.answer(1)
    );
    let s = h.session();
    h.prompt(&s, "x");
    h.agent_lines(
        &s,
        &[assistant_end(
            "m",
            json!({"input": 10, "output": 3, "totalTokens": 13}),
        )],
    );
    assert!(h
        .updates()
        .iter()
        .all(|u| u["sessionUpdate"] != "session_info_update"));
}

#[test]
fn acp_02_opt_in_announces_v1_and_sends_cumulative_replacements() {
    let mut h = Harness::new();
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"_meta": {"muse/usage": 1}}}),
    );
    assert_eq!(
        h.answer(1).unwrap()["result"]["_meta"]["muse/usage"]["version"],
        1
    );
    h.request(2, "session/new", json!({"cwd": "/tmp", "mcpServers": []}));
    let s = h.answer(2).unwrap()["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    h.agent_lines(
        &s,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    h.editor.clear();
    h.prompt(&s, "x");
    h.agent_lines(
        &s,
        &[
            update(json!({"type": "text_delta", "contentIndex": 0, "delta": "x"})),
            assistant_end("m", json!({"input": 10, "output": 3, "totalTokens": 13})),
            assistant_end(
                "m",
                json!({"input": 4, "output": 1, "cacheRead": 6, "totalTokens": 11}),
            ),
        ],
    );
    let infos: Vec<Value> = h
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "session_info_update")
        .collect();
    assert_eq!(infos.len(), 2);
    assert_eq!(
        infos[0]["_meta"]["muse/usage"],
        json!({"scope": "rootSession",
        "cumulative": {"promptTokens": 10, "outputTokens": 3, "totalTokens": 13},
        "lastModelCall": {"turnId": "turn-1", "promptTokens": 10, "outputTokens": 3, "totalTokens": 13}})
    );
    // Replacements: the second carries the totals, not the increment; the raw last call
    // keeps the agent's cache convention.
    assert_eq!(
        infos[1]["_meta"]["muse/usage"]["cumulative"],
        json!({"promptTokens": 20, "outputTokens": 4, "totalTokens": 24})
    );
    assert_eq!(
        infos[1]["_meta"]["muse/usage"]["lastModelCall"]["promptTokens"],
        4
    );
    assert_eq!(
        infos[1]["_meta"]["muse/usage"]["lastModelCall"]["cacheReadTokens"],
        6
    );
    // ACP-02: no window size is known, so no usage_update is invented.
    assert!(h
        .updates()
        .iter()
        .all(|u| u["sessionUpdate"] != "usage_update"));
}
