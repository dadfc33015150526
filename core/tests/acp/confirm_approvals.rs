//! ACP-43: a `confirm` that arrives while exactly one call has started, not finished, has no
//! approval tied and has shown no output (a pi extension's `tool_call` gate) is that call's
//! approval: answered by an "always" or the session's mode, else asked about its card; any
//! other `confirm` stays a dialog of its own (ACP-09), asked in every mode.

use crate::support as acp_support;

use crate::pinned::approved_line;
use acp_support::{choose, set_mode, update, Harness};
use serde_json::{json, Value};

const ACCEPT_EDITS: &str = "acceptEdits";
const ALLOW_ALL: &str = "bypassPermissions";

/// The assistant message's call block and pi's `tool_execution_start` of it.
fn started(id: &str, name: &str, arguments: Value) -> [Value; 2] {
    [
        update(json!({"type": "toolcall_end", "contentIndex": 0,
            "toolCall": {"type": "toolCall", "id": id, "name": name, "arguments": arguments}})),
        json!({"type": "tool_execution_start", "toolCallId": id, "toolName": name,
            "args": arguments}),
    ]
}

/// A pi extension's `ctx.ui.confirm(title, message)`.
fn confirm(id: &str) -> Value {
    json!({"type": "extension_ui_request", "id": id, "method": "confirm",
        "title": "Run this tool?", "message": "the extension asks"})
}

fn asked(h: &Harness) -> Vec<Value> {
    h.editor
        .iter()
        .filter(|m| m["method"] == "session/request_permission" && m.get("id").is_some())
        .cloned()
        .collect()
}

/// The agent's `extension_ui_response`s: id and `confirmed`.
fn confirmed(h: &Harness) -> Vec<(String, Option<bool>)> {
    h.agent
        .iter()
        .filter(|m| m["type"] == "extension_ui_response")
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_owned(),
                m["confirmed"].as_bool(),
            )
        })
        .collect()
}

fn option_ids(request: &Value) -> Vec<&str> {
    request["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect()
}

#[test]
fn acp_43_a_confirm_after_the_one_started_call_is_asked_as_its_approval() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "run");
    h.agent_lines(&s, &started("c1", "bash", json!({"command": "echo hi"})));
    h.agent_lines(&s, &[confirm("u1")]);
    let requests = asked(&h);
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["params"]["toolCall"]["toolCallId"], "c1");
    assert_eq!(
        option_ids(&requests[0]),
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    let cards: Vec<Value> = h
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .collect();
    assert!(
        cards.iter().all(|c| c["toolCallId"] == "c1"),
        "no dialog card of its own: {cards:#?}"
    );
    choose(&mut h, &requests[0], "allow_once");
    assert_eq!(confirmed(&h), [("u1".to_owned(), Some(true))]);
    // Its next confirm is no approval any more: one is tied to it.
    h.agent_lines(&s, &[confirm("u2")]);
    let requests = asked(&h);
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1]["params"]["toolCall"]["toolCallId"], "dialog-u2");
    choose(&mut h, &requests[1], "no");
    assert_eq!(confirmed(&h)[1], ("u2".to_owned(), Some(false)));
}

#[test]
fn acp_43_accept_edits_answers_a_tied_confirm_of_an_edit_and_asks_for_bash() {
    let mut h = Harness::new();
    let s = h.session();
    set_mode(&mut h, 3, &s, ACCEPT_EDITS);
    h.prompt(&s, "write then run");
    h.agent_lines(
        &s,
        &started("c1", "write", json!({"path": "a.txt", "content": "x"})),
    );
    h.editor.clear();
    h.agent_lines(&s, &[confirm("u1")]);
    assert!(asked(&h).is_empty(), "an edit is not asked");
    assert_eq!(confirmed(&h), [("u1".to_owned(), Some(true))]);
    let line = approved_line("Accept edits");
    let u = h.updates();
    assert!(
        u.iter().any(|u| u["toolCallId"] == "c1"
            && u["content"][0]["content"]["text"] == line.as_str()),
        "the card says so: {u:#?}"
    );
    h.agent_lines(
        &s,
        &[
            json!({"type": "tool_execution_end", "toolCallId": "c1", "toolName": "write",
            "result": {"content": [{"type": "text", "text": "ok"}]}, "isError": false}),
        ],
    );
    h.agent_lines(&s, &[update(json!({"type": "start"}))]);
    h.agent_lines(&s, &started("c2", "bash", json!({"command": "echo hi"})));
    h.agent_lines(&s, &[confirm("u2")]);
    let requests = asked(&h);
    assert_eq!(requests.len(), 1, "bash still asks");
    assert_eq!(requests[0]["params"]["toolCall"]["toolCallId"], "c2");
    choose(&mut h, &requests[0], "reject_once");
    assert_eq!(confirmed(&h)[1], ("u2".to_owned(), Some(false)));
}

#[test]
fn acp_43_allow_all_answers_any_tied_confirm_and_an_always_stands_before_it() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "run");
    h.agent_lines(&s, &started("c1", "bash", json!({"command": "rm x"})));
    h.agent_lines(&s, &[confirm("u1")]);
    let requests = asked(&h);
    choose(&mut h, &requests[0], "reject_always");
    assert_eq!(confirmed(&h), [("u1".to_owned(), Some(false))]);
    set_mode(&mut h, 3, &s, ALLOW_ALL);
    h.agent_lines(
        &s,
        &[
            json!({"type": "tool_execution_end", "toolCallId": "c1", "toolName": "bash",
            "result": {"content": [{"type": "text", "text": "blocked"}]}, "isError": true}),
        ],
    );
    // The "always" of bash stands in Allow all.
    h.agent_lines(&s, &started("c2", "bash", json!({"command": "rm y"})));
    h.agent_lines(&s, &[confirm("u2")]);
    assert_eq!(asked(&h).len(), 1);
    assert_eq!(confirmed(&h)[1], ("u2".to_owned(), Some(false)));
    // Another tool is answered by the mode.
    h.agent_lines(
        &s,
        &[
            json!({"type": "tool_execution_end", "toolCallId": "c2", "toolName": "bash",
            "result": {"content": [{"type": "text", "text": "blocked"}]}, "isError": true}),
        ],
    );
    h.agent_lines(&s, &started("c3", "grep", json!({"pattern": "x"})));
    h.agent_lines(&s, &[confirm("u3")]);
    assert_eq!(asked(&h).len(), 1);
    assert_eq!(confirmed(&h)[2], ("u3".to_owned(), Some(true)));
}

#[test]
fn acp_43_a_confirm_no_single_call_fits_stays_a_dialog_in_every_mode() {
    let mut h = Harness::new();
    let s = h.session();
    set_mode(&mut h, 3, &s, ALLOW_ALL);
    h.prompt(&s, "run");
    // No call at all.
    h.agent_lines(&s, &[confirm("u1")]);
    // Two calls started, neither asked about.
    h.agent_lines(&s, &started("c1", "bash", json!({"command": "a"})));
    h.agent_lines(&s, &started("c2", "bash", json!({"command": "b"})));
    h.agent_lines(&s, &[confirm("u2")]);
    // One call that has shown output already.
    h.agent_lines(
        &s,
        &[
            json!({"type": "tool_execution_end", "toolCallId": "c1", "toolName": "bash",
                "result": {"content": [{"type": "text", "text": "a"}]}, "isError": false}),
            json!({"type": "tool_execution_update", "toolCallId": "c2", "toolName": "bash",
                "args": {"command": "b"},
                "partialResult": {"content": [{"type": "text", "text": "out"}]}}),
        ],
    );
    h.agent_lines(&s, &[confirm("u3")]);
    // An `ask`: its confirm is its question.
    h.agent_lines(
        &s,
        &[
            json!({"type": "tool_execution_end", "toolCallId": "c2", "toolName": "bash",
            "result": {"content": [{"type": "text", "text": "out"}]}, "isError": false}),
        ],
    );
    h.agent_lines(&s, &started("c3", "ask", json!({"question": "Q"})));
    h.agent_lines(&s, &[confirm("u4")]);
    let requests = asked(&h);
    let cards: Vec<&Value> = requests
        .iter()
        .map(|r| &r["params"]["toolCall"]["toolCallId"])
        .collect();
    assert_eq!(cards, ["dialog-u1", "dialog-u2", "dialog-u3", "dialog-u4"]);
    assert!(confirmed(&h).is_empty(), "nothing answered unasked");
}
