//! ACP-37: omp's subagents on cards of their own: the subscription asked of omp only, each
//! subagent a card titled with its task that follows its progress (bounded) and ends
//! `completed` or `failed`.

use crate::support as acp_support;

use acp_support::Harness;
use musewire_core::acp::{Bridge, BridgeConfig, MAX_SURFACE_BYTES, TRUNCATION_NOTICE};
use musewire_core::client::AgentKind;
use serde_json::{json, Value};

fn harness(agent: AgentKind) -> Harness {
    let mut h = Harness::new();
    h.bridge = Bridge::new(BridgeConfig {
        agent,
        ..BridgeConfig::default()
    });
    h
}

fn cards(h: &Harness) -> Vec<Value> {
    h.updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" || u["sessionUpdate"] == "tool_call_update")
        .collect()
}

fn lifecycle(id: &str, status: &str, description: Option<&str>) -> Value {
    let mut payload = json!({"id": id, "agent": "explore", "agentSource": "bundled",
        "status": status, "index": 0, "parentToolCallId": "c1",
        "sessionFile": "/s/sub.jsonl"});
    if let Some(description) = description {
        payload["description"] = json!(description);
    }
    json!({"type": "subagent_lifecycle", "payload": payload})
}

fn progress(id: &str, status: &str, intent: &str, output: &[&str], tools: u64) -> Value {
    // omp's `task` is its prompt around the assignment, the task the model gave.
    let task = "Complete assignment thoroughly:\n\nFind every caller of foo\nand report the files";
    let assignment = "Find every caller of foo\nand report the files";
    json!({"type": "subagent_progress", "payload": {"index": 0, "agent": "explore",
        "agentSource": "bundled", "task": task, "assignment": assignment,
        "parentToolCallId": "c1", "progress": {"index": 0, "id": id, "agent": "explore",
        "agentSource": "bundled", "status": status, "task": task, "assignment": assignment,
        "lastIntent": intent,
        "currentTool": "grep", "recentTools": [], "recentOutput": output, "toolCount": tools,
        "requests": 1, "tokens": 100, "cost": 0, "durationMs": 1200}}})
}

#[test]
fn acp_37_omp_is_asked_for_subagent_progress_at_its_start_and_no_other_agent_is() {
    let mut h = harness(AgentKind::Omp);
    let s = h.session();
    let asked: Vec<&Value> = h
        .agent
        .iter()
        .filter(|m| m["type"] == "set_subagent_subscription")
        .collect();
    assert_eq!(asked.len(), 1, "{:#?}", h.agent);
    assert_eq!(asked[0]["level"], "progress");
    // Its answer, accepted or refused, shows nothing.
    h.agent_lines(
        &s,
        &[
            json!({"id": asked[0]["id"], "type": "response", "command": "set_subagent_subscription",
            "success": true, "data": {"level": "progress"}}),
        ],
    );
    assert!(h.editor.is_empty(), "{:#?}", h.editor);
    for agent in [AgentKind::Bundled, AgentKind::Pi, AgentKind::Other] {
        let mut h = harness(agent);
        h.session();
        assert!(
            !h.agent
                .iter()
                .any(|m| m["type"] == "set_subagent_subscription"),
            "{agent:?}: {:#?}",
            h.agent
        );
    }
}

#[test]
fn acp_37_a_subagent_card_follows_its_progress_and_ends_completed() {
    let mut h = harness(AgentKind::Omp);
    let s = h.session();
    h.prompt(&s, "delegate");
    h.editor.clear();
    h.agent_lines(
        &s,
        &[lifecycle(
            "0-Scout",
            "started",
            Some("Find the callers of foo"),
        )],
    );
    let u = cards(&h);
    assert_eq!(u.len(), 1, "{u:#?}");
    assert_eq!(u[0]["sessionUpdate"], "tool_call");
    assert_eq!(u[0]["toolCallId"], "subagent-1-0-Scout");
    assert_eq!(u[0]["title"], "Find the callers of foo");
    assert_eq!(u[0]["status"], "in_progress");
    // ACP's default kind, `other`, is left out on the wire.
    assert!(matches!(u[0].get("kind"), None | Some(Value::String(_))));
    assert_ne!(u[0]["kind"], "execute");
    h.editor.clear();
    let first = progress(
        "0-Scout",
        "running",
        "Searching for callers",
        &["src/b.rs:3 foo()", "src/a.rs:1 foo()"],
        2,
    );
    h.agent_lines(&s, std::slice::from_ref(&first));
    let u = cards(&h);
    assert_eq!(u.len(), 1, "{u:#?}");
    assert_eq!(u[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(u[0]["toolCallId"], "subagent-1-0-Scout");
    // The description the lifecycle gave stays the title.
    assert!(u[0].get("title").is_none(), "{:#}", u[0]);
    assert_eq!(
        u[0]["content"][0]["content"]["text"],
        "Searching for callers\nsrc/a.rs:1 foo()\nsrc/b.rs:3 foo()\n2 tool calls, 1 model request"
    );
    // The same progress again sends nothing.
    h.editor.clear();
    h.agent_lines(&s, &[first]);
    assert!(cards(&h).is_empty(), "{:#?}", cards(&h));
    h.agent_lines(
        &s,
        &[
            progress("0-Scout", "completed", "Done", &["2 callers"], 3),
            lifecycle("0-Scout", "completed", Some("Find the callers of foo")),
            // A late progress of an ended subagent opens nothing.
            progress("0-Scout", "running", "again", &[], 4),
        ],
    );
    let u = cards(&h);
    assert_eq!(u.len(), 1, "{u:#?}");
    assert_eq!(u[0]["status"], "completed");
    assert_eq!(
        u[0]["content"][0]["content"]["text"],
        "Done\n2 callers\n3 tool calls, 1 model request"
    );
}

#[test]
fn acp_37_a_failed_or_aborted_subagent_ends_failed_and_a_running_one_fails_with_its_agent() {
    let mut h = harness(AgentKind::Omp);
    let s = h.session();
    h.prompt(&s, "delegate");
    h.editor.clear();
    h.agent_lines(
        &s,
        &[
            lifecycle("a", "started", Some("First")),
            lifecycle("b", "started", Some("Second")),
            // No description: the task's first line is the title, with no `NAME: ` prefix.
            progress("c", "running", "Looking", &[], 0),
            lifecycle("a", "failed", None),
            lifecycle("b", "aborted", None),
        ],
    );
    let u = cards(&h);
    let opened: Vec<(&str, &str)> = u
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .map(|u| {
            (
                u["toolCallId"].as_str().unwrap(),
                u["title"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        opened,
        [
            ("subagent-1-a", "First"),
            ("subagent-2-b", "Second"),
            ("subagent-3-c", "Find every caller of foo"),
        ]
    );
    let closed: Vec<(&str, &str)> = u
        .iter()
        .filter(|u| u.get("status").is_some() && u["sessionUpdate"] == "tool_call_update")
        .map(|u| {
            (
                u["toolCallId"].as_str().unwrap(),
                u["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        closed,
        [("subagent-1-a", "failed"), ("subagent-2-b", "failed")]
    );
    // The agent exits: the subagent still running ends failed.
    h.editor.clear();
    h.agent_exit(&s);
    let u = cards(&h);
    assert_eq!(u.len(), 1, "{u:#?}");
    assert_eq!(u[0]["toolCallId"], "subagent-3-c");
    assert_eq!(u[0]["status"], "failed");
}

#[test]
fn acp_37_a_subagents_output_is_bounded_to_its_last_64_kib() {
    let mut h = harness(AgentKind::Omp);
    let s = h.session();
    h.prompt(&s, "delegate");
    h.editor.clear();
    let long = "x".repeat(40 * 1024);
    let newest = format!("last {long}");
    h.agent_lines(
        &s,
        &[progress(
            "big",
            "running",
            "Writing",
            &[&newest, &long, &long],
            1,
        )],
    );
    let u = cards(&h);
    let text = u[1]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(text.len() <= MAX_SURFACE_BYTES, "{}", text.len());
    assert!(
        text.starts_with(TRUNCATION_NOTICE.trim_start()),
        "{}",
        &text[..80]
    );
    assert!(
        text.ends_with("1 tool call, 1 model request"),
        "{}",
        &text[text.len() - 80..]
    );
}
