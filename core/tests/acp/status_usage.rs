//! ACP-01 (`/status`, local and idle) and ACP-02 (`muse/usage` metadata, opt-in).

use crate::support as acp_support;

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
    let s = h.open(2);
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
        // ACP-24: what the session is set to, from get_state.
        "requested model: scripted",
        "requested provider: musewire",
        "requested effort: off",
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
    // ACP-02: the agent failed get_session_stats, so the bridge's own sum stands.
    h.answer_stats(&s, None);
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "end_turn");
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
    let s = h.open(2);
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

fn usage_session(h: &mut Harness) -> String {
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"_meta": {"muse/usage": 1}}}),
    );
    let s = h.open(2);
    h.agent_lines(
        &s,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    h.editor.clear();
    s
}

#[test]
fn acp_02_turn_end_takes_get_session_stats_totals_as_replacements_before_the_answer() {
    let mut h = Harness::new();
    let s = usage_session(&mut h);
    h.prompt(&s, "x");
    h.agent_lines(
        &s,
        &[
            assistant_end("m", json!({"input": 10, "output": 3, "totalTokens": 13})),
            json!({"type": "agent_end", "messages": []}),
        ],
    );
    // The prompt waits for the agent's totals.
    assert!(h.answer(10).is_none());
    assert_eq!(h.agent.last().unwrap()["type"], "get_session_stats");
    h.answer_stats(
        &s,
        Some(
            json!({"sessionId": "x", "userMessages": 1, "assistantMessages": 1,
            "tokens": {"input": 500, "output": 40, "reasoning": 0, "cacheRead": 100,
                "cacheWrite": 7, "total": 647}, "cost": 0}),
        ),
    );
    let infos: Vec<Value> = h
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "session_info_update")
        .collect();
    assert_eq!(infos.len(), 2, "{infos:?}");
    // The agent's totals replace the bridge's sum (ACP-02).
    assert_eq!(
        infos[1]["_meta"]["muse/usage"]["cumulative"],
        json!({"promptTokens": 607, "outputTokens": 40, "totalTokens": 647})
    );
    // No window was reported: no usage_update.
    assert!(h
        .updates()
        .iter()
        .all(|u| u["sessionUpdate"] != "usage_update"));
    // The updates come before the prompt's answer.
    let answer_at = h.editor.iter().position(|m| m["id"] == json!(10)).unwrap();
    let info_at = h
        .editor
        .iter()
        .rposition(|m| m["params"]["update"]["sessionUpdate"] == "session_info_update")
        .unwrap();
    assert!(info_at < answer_at);
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
    assert!(
        text.contains("root-session tokens: prompt 607, output 40, total 647"),
        "{text}"
    );
    assert!(
        text.contains("context pressure: unknown (no context window size reported)"),
        "{text}"
    );
}

#[test]
fn acp_02_known_window_gives_usage_update_at_turn_end_and_status_pressure() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "x");
    h.agent_lines(
        &s,
        &[
            assistant_end("m", json!({"input": 9, "output": 3, "totalTokens": 12})),
            assistant_end(
                "m",
                json!({"input": 1000, "output": 50, "cacheRead": 4000, "cacheWrite": 250, "totalTokens": 5300}),
            ),
            json!({"type": "agent_end", "messages": []}),
        ],
    );
    h.answer_stats(
        &s,
        Some(json!({"tokens": {"input": 1009, "output": 53, "cacheRead": 4000, "cacheWrite": 250, "total": 5312},
            "contextUsage": {"tokens": 5400, "contextWindow": 200000, "percent": 2.7}})),
    );
    let usage: Vec<Value> = h
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "usage_update")
        .collect();
    // used: the last call's input + cacheRead + cacheWrite; no cost (ACP-02).
    assert_eq!(
        usage,
        [json!({"sessionUpdate": "usage_update", "used": 5250, "size": 200000})]
    );
    // Not opted into muse/usage: no metadata.
    assert!(h
        .updates()
        .iter()
        .all(|u| u["sessionUpdate"] != "session_info_update"));
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "end_turn");
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
    assert!(
        text.contains("context pressure: 5250 of 200000 tokens (2.6%)"),
        "{text}"
    );
}

#[test]
fn acp_02_an_unanswered_get_session_stats_does_not_hold_the_prompt() {
    let mut h = Harness::new();
    let s = usage_session(&mut h);
    h.prompt(&s, "x");
    h.agent_lines(
        &s,
        &[
            assistant_end("m", json!({"input": 10, "output": 3, "totalTokens": 13})),
            json!({"type": "agent_end", "messages": []}),
        ],
    );
    assert!(h.answer(10).is_none());
    let due = h.bridge.poll_timeout().expect("the stats have a deadline");
    assert_eq!(due - h.now, crate::pinned::STATS_BUDGET);
    h.timeout(std::time::Duration::from_secs(4));
    assert!(h.answer(10).is_none());
    h.timeout(std::time::Duration::from_secs(1));
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "end_turn");
    // The bridge's own sum stands; a late answer is dropped.
    let last = h
        .updates()
        .into_iter()
        .rfind(|u| u["sessionUpdate"] == "session_info_update")
        .unwrap();
    assert_eq!(
        last["_meta"]["muse/usage"]["cumulative"],
        json!({"promptTokens": 10, "outputTokens": 3, "totalTokens": 13})
    );
    let before = h.editor.len();
    h.answer_stats(
        &s,
        Some(json!({"tokens": {"input": 1, "output": 1, "total": 2}})),
    );
    assert_eq!(h.editor.len(), before);
}
