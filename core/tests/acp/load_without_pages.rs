//! ACP-06 with PAGE-07's fallback: a `session/load` from an agent that does not page (pi:
//! v1-only, `Unknown command: get_messages_page`) or refuses a page (`stale_cursor`) replays
//! its history through `get_messages`, each message once.

use crate::support as acp_support;

use acp_support::Harness;
use musewire_core::acp::{Bridge, BridgeConfig};
use serde_json::{json, Value};

fn loading_bridge() -> Harness {
    let mut h = Harness::new();
    h.bridge = Bridge::new(BridgeConfig {
        session_dir: Some("/state/sessions".into()),
        ..BridgeConfig::default()
    });
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.request(
        2,
        "session/load",
        json!({"sessionId": "s1", "cwd": "/tmp", "mcpServers": []}),
    );
    h
}

/// The agent key of the one spawned agent.
fn key(h: &Harness) -> String {
    h.spawned[0].0.clone()
}

/// Answers the bridge's last command of this type.
fn answer(h: &mut Harness, kind: &str, outcome: Result<Value, &str>) {
    let asked = h
        .agent
        .iter()
        .rev()
        .find(|m| m["type"] == kind)
        .unwrap_or_else(|| panic!("the bridge sent no {kind}: {:?}", h.agent))
        .clone();
    let frame = match outcome {
        Ok(data) => {
            json!({"id": asked["id"], "type": "response", "command": kind, "success": true, "data": data})
        }
        // Id-less, as omp and pi answer an unknown command (CALL-02).
        Err(error) => {
            json!({"type": "response", "command": kind, "success": false, "error": error})
        }
    };
    let session = key(h);
    h.agent_lines(&session, &[frame]);
}

fn history() -> Value {
    json!([
        {"role": "user", "content": [{"type": "text", "text": "list the files"}], "timestamp": 1},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Looking."},
            {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}],
         "stopReason": "toolUse", "usage": {"input": 10, "output": 4}},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
         "content": [{"type": "text", "text": "a.txt"}], "isError": false},
        {"role": "assistant", "content": [{"type": "text", "text": "One file."}],
         "stopReason": "stop", "usage": {"input": 20, "output": 3}}
    ])
}

fn kinds(h: &Harness) -> Vec<String> {
    h.updates()
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn acp_06_page_07_a_v1_agent_is_loaded_through_get_messages() {
    let mut h = loading_bridge();
    // pi: no ready frame; its answer to the start-up probe makes the session v1 (FRAME-03).
    answer(&mut h, "get_state", Ok(json!({"isStreaming": false})));
    answer(&mut h, "switch_session", Ok(json!({"cancelled": false})));
    answer(&mut h, "get_state", Ok(json!({"sessionName": "files"})));
    assert!(
        !h.agent.iter().any(|m| m["type"] == "get_messages_page"),
        "a v1 agent is not asked for pages: {:?}",
        h.agent
    );
    answer(&mut h, "get_messages", Ok(json!({"messages": history()})));
    answer(&mut h, "get_session_stats", Err("no stats"));
    let answered = h.answer(2).expect("the load is answered");
    assert!(answered.get("result").is_some(), "{answered}");
    assert_eq!(
        kinds(&h),
        [
            "plan",
            "session_info_update",
            "user_message_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk",
            "available_commands_update",
        ]
    );
    let updates = h.updates();
    let texts: Vec<&str> = updates
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(texts.contains(&"list the files"), "{texts:?}");
    assert!(texts.contains(&"One file."), "{texts:?}");
    let result = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update")
        .unwrap();
    assert_eq!(result["toolCallId"], "c1");
    assert_eq!(result["status"], "completed");
}

/// A v2 agent: ready, negotiation, the switch and the title.
fn opened_v2(h: &mut Harness) {
    let session = key(h);
    h.agent_lines(
        &session,
        &[
            json!({"type": "ready", "protocolVersion": 1, "supportedProtocolVersions": [1, 2],
            "maxFrameBytes": 1048576, "maxReassembledFrameBytes": 67108864}),
        ],
    );
    answer(h, "negotiate_protocol", Ok(json!({"protocolVersion": 2})));
    answer(h, "switch_session", Ok(json!({"cancelled": false})));
    answer(h, "get_state", Ok(json!({})));
}

#[test]
fn acp_06_page_07_paging_not_offered_falls_back_to_get_messages() {
    let mut h = loading_bridge();
    opened_v2(&mut h);
    answer(
        &mut h,
        "get_messages_page",
        Err("Unknown command: get_messages_page"),
    );
    answer(&mut h, "get_messages", Ok(json!({"messages": history()})));
    answer(&mut h, "get_session_stats", Err("no stats"));
    assert!(h.answer(2).unwrap().get("result").is_some());
    assert_eq!(
        kinds(&h)
            .iter()
            .filter(|k| k.ends_with("message_chunk"))
            .count(),
        3
    );
}

#[test]
fn acp_06_page_07_a_stale_cursor_falls_back_and_replays_each_message_once() {
    let mut h = loading_bridge();
    opened_v2(&mut h);
    let all = history();
    answer(
        &mut h,
        "get_messages_page",
        Ok(json!({"messages": [all[0], all[1]], "nextCursor": "c2", "totalMessages": 4})),
    );
    let stale = h
        .agent
        .iter()
        .rev()
        .find(|m| m["type"] == "get_messages_page")
        .unwrap()
        .clone();
    assert_eq!(stale["cursor"], "c2");
    let session = key(&h);
    h.agent_lines(
        &session,
        &[
            json!({"id": stale["id"], "type": "response", "command": "get_messages_page",
            "success": false, "error": "RPC message cursor is stale", "code": "stale_cursor"}),
        ],
    );
    answer(&mut h, "get_messages", Ok(json!({"messages": all})));
    answer(&mut h, "get_session_stats", Err("no stats"));
    assert!(h.answer(2).unwrap().get("result").is_some());
    let texts: Vec<String> = h
        .updates()
        .iter()
        .filter_map(|u| u["content"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(texts, ["list the files", "Looking.", "One file."]);
}

#[test]
fn acp_06_a_page_failure_that_does_not_fall_back_leaves_the_history_unread() {
    let mut h = loading_bridge();
    opened_v2(&mut h);
    answer(&mut h, "get_messages_page", Err("the disk is on fire"));
    assert!(!h.agent.iter().any(|m| m["type"] == "get_messages"));
    answer(&mut h, "get_session_stats", Err("no stats"));
    assert!(h.answer(2).unwrap().get("result").is_some());
}
