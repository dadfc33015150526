//! ACP-08..11: the agent's dialogs asked of the editor (approvals tied to their call, other
//! choices, text by form elicitation), notices and titles, local-only prompts, errors.

use crate::support as acp_support;

use acp_support::{answers, asked, assistant, choose, update, Harness};
use serde_json::{json, Value};

const APPROVAL_TITLE: &str = "Allow tool: bash\nCommand: echo hi";

fn tool_call_end(id: &str, name: &str, arguments: Value) -> Value {
    update(json!({"type": "toolcall_end", "contentIndex": 0,
        "toolCall": {"type": "toolCall", "id": id, "name": name, "arguments": arguments}}))
}

fn approval(id: &str) -> Value {
    json!({"type": "extension_ui_request", "id": id, "method": "select",
        "title": APPROVAL_TITLE, "options": ["Approve", "Deny"]})
}

fn cancelled(h: &mut Harness, request: &Value) {
    h.send(json!({"jsonrpc": "2.0", "id": request["id"],
        "result": {"outcome": {"outcome": "cancelled"}}}));
}

fn texts(h: &Harness) -> String {
    h.updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect()
}

/// A session in a turn whose assistant message has a `bash` call `c1`: its card opened
/// `pending` when its arguments were complete (ACP-19); what the editor saw is cleared.
fn turn_with_call(h: &mut Harness) -> String {
    let s = h.session();
    h.prompt(&s, "run it");
    h.agent_lines(
        &s,
        &[tool_call_end("c1", "bash", json!({"command": "echo hi"}))],
    );
    let u = h.updates();
    assert_eq!(u.len(), 1, "{u:#?}");
    assert_eq!(u[0]["sessionUpdate"], "tool_call");
    assert_eq!(u[0]["toolCallId"], "c1");
    // ACP's default status is pending: the schema leaves it out.
    assert!(matches!(u[0].get("status"), None | Some(Value::String(_))));
    assert_ne!(u[0]["status"], "in_progress");
    assert_eq!(u[0]["kind"], "execute");
    assert_eq!(u[0]["title"], "echo hi");
    h.editor.clear();
    s
}

#[test]
fn acp_08_an_approval_asks_about_its_call_opened_pending_and_allow_once_approves() {
    let mut h = Harness::new();
    let s = turn_with_call(&mut h);
    h.agent_lines(&s, &[approval("u1")]);
    let u = h.updates();
    assert!(u.is_empty(), "the pending card is open already: {u:#?}");
    let requests = asked(&h, "session/request_permission");
    assert_eq!(requests.len(), 1);
    let params = &requests[0]["params"];
    assert_eq!(params["sessionId"], s.as_str());
    assert_eq!(params["toolCall"]["toolCallId"], "c1");
    assert_eq!(params["toolCall"]["title"], "echo hi");
    assert_eq!(params["toolCall"]["kind"], "execute");
    assert_eq!(params["toolCall"]["status"], "pending");
    assert_eq!(
        params["toolCall"]["rawInput"],
        json!({"command": "echo hi"})
    );
    let options: Vec<(&str, &str)> = params["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap(), o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        options,
        [
            ("allow_once", "allow_once"),
            ("allow_always", "allow_always"),
            ("reject_once", "reject_once"),
            ("reject_always", "reject_always")
        ]
    );
    assert!(
        answers(&h).is_empty(),
        "nothing is answered before the editor"
    );
    choose(&mut h, &requests[0], "allow_once");
    assert_eq!(
        answers(&h),
        [json!({"type": "extension_ui_response", "id": "u1", "value": "Approve"})]
    );
    // The card that waited runs now.
    h.editor.clear();
    h.agent_lines(
        &s,
        &[json!({"type": "tool_execution_start", "toolCallId": "c1",
        "toolName": "bash", "args": {"command": "echo hi"}})],
    );
    let u = h.updates();
    assert_eq!(u.len(), 1, "{u:#?}");
    assert_eq!(u[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(u[0]["status"], "in_progress");
}

#[test]
fn acp_08_an_approval_after_the_card_opened_names_it_without_reopening() {
    let mut h = Harness::new();
    let s = turn_with_call(&mut h);
    h.agent_lines(
        &s,
        &[json!({"type": "tool_execution_start", "toolCallId": "c1",
        "toolName": "bash", "args": {"command": "echo hi"}})],
    );
    h.editor.clear();
    h.agent_lines(&s, &[approval("u1")]);
    assert!(h.updates().is_empty(), "{:#?}", h.updates());
    let requests = asked(&h, "session/request_permission");
    assert_eq!(requests[0]["params"]["toolCall"]["toolCallId"], "c1");
    assert!(requests[0]["params"]["toolCall"].get("status").is_none());
    choose(&mut h, &requests[0], "reject_once");
    assert_eq!(answers(&h)[0]["value"], "Deny");
}

#[test]
fn acp_08_always_is_remembered_for_the_tool_in_the_session() {
    for (option, value) in [("allow_always", "Approve"), ("reject_always", "Deny")] {
        let mut h = Harness::new();
        let s = turn_with_call(&mut h);
        h.agent_lines(&s, &[approval("u1")]);
        let requests = asked(&h, "session/request_permission");
        choose(&mut h, &requests[0], option);
        // A later call of the same tool is answered without asking.
        h.agent_lines(
            &s,
            &[
                tool_call_end("c2", "bash", json!({"command": "echo again"})),
                approval("u2"),
            ],
        );
        assert_eq!(asked(&h, "session/request_permission").len(), 1, "{option}");
        let got: Vec<Value> = answers(&h).iter().map(|a| a["value"].clone()).collect();
        assert_eq!(got, [value, value], "{option}");
        // Another tool is still asked.
        h.agent_lines(
            &s,
            &[
                tool_call_end("c3", "edit", json!({"path": "a"})),
                json!({"type": "extension_ui_request", "id": "u3", "method": "select",
                    "title": "Allow tool: edit", "options": ["Approve", "Deny"]}),
            ],
        );
        assert_eq!(asked(&h, "session/request_permission").len(), 2, "{option}");
    }
}

#[test]
fn acp_08_a_cancelled_outcome_denies_and_cancels_the_turn() {
    let mut h = Harness::new();
    let s = turn_with_call(&mut h);
    h.agent_lines(&s, &[approval("u1")]);
    let requests = asked(&h, "session/request_permission");
    cancelled(&mut h, &requests[0]);
    assert_eq!(answers(&h)[0]["value"], "Deny");
    assert!(
        h.agent.iter().any(|m| m["type"] == "abort"),
        "{:#?}",
        h.agent
    );
}

#[test]
fn acp_08_session_cancel_while_waiting_denies_and_the_late_answer_finds_nothing() {
    let mut h = Harness::new();
    let s = turn_with_call(&mut h);
    h.agent_lines(&s, &[approval("u1")]);
    let requests = asked(&h, "session/request_permission");
    h.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": s}}));
    assert_eq!(
        answers(&h),
        [json!({"type": "extension_ui_response", "id": "u1", "value": "Deny"})]
    );
    assert_eq!(h.agent.iter().filter(|m| m["type"] == "abort").count(), 1);
    let sent = h.agent.len();
    cancelled(&mut h, &requests[0]);
    assert_eq!(h.agent.len(), sent, "the late answer sends nothing");
}

#[test]
fn acp_08_an_approval_tied_to_no_call_is_a_plain_select() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "run it");
    h.agent_lines(&s, &[approval("u1")]);
    let requests = asked(&h, "session/request_permission");
    let params = &requests[0]["params"];
    assert_eq!(params["toolCall"]["toolCallId"], "dialog-u1");
    let ids: Vec<&str> = params["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["choice-0", "choice-1"]);
    choose(&mut h, &requests[0], "choice-1");
    assert_eq!(answers(&h)[0]["value"], "Deny");
    // ACP-36: the request is the dialog's one item: no card announced before it, none
    // updated after it.
    assert!(
        !h.updates().iter().any(|u| u["toolCallId"] == "dialog-u1"),
        "{:#?}",
        h.updates()
    );
}

#[test]
fn acp_08_an_option_not_offered_or_an_error_denies_and_an_unknown_id_is_ignored() {
    let mut h = Harness::new();
    let s = turn_with_call(&mut h);
    // A response for no request of ours: nothing happens.
    h.send(json!({"jsonrpc": "2.0", "id": "musewire-dialog-99", "result": {}}));
    h.send(json!({"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "cancelled"}}}));
    h.send(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -1, "message": "x"}}));
    assert!(h.editor.is_empty(), "{:#?}", h.editor);
    h.agent_lines(&s, &[approval("u1")]);
    let requests = asked(&h, "session/request_permission");
    choose(&mut h, &requests[0], "allow_forever");
    assert_eq!(answers(&h)[0]["value"], "Deny");
    assert!(!h.agent.iter().any(|m| m["type"] == "abort"));
    // An error answer denies too.
    h.agent_lines(
        &s,
        &[
            tool_call_end("c2", "bash", json!({"command": "x"})),
            approval("u2"),
        ],
    );
    let requests = asked(&h, "session/request_permission");
    h.send(json!({"jsonrpc": "2.0", "id": requests[1]["id"],
        "error": {"code": -32601, "message": "Method not found"}}));
    assert_eq!(answers(&h)[1]["value"], "Deny");
    // A result that does not read denies.
    h.agent_lines(
        &s,
        &[
            tool_call_end("c3", "bash", json!({"command": "y"})),
            approval("u3"),
        ],
    );
    let requests = asked(&h, "session/request_permission");
    h.send(json!({"jsonrpc": "2.0", "id": requests[2]["id"], "result": {"outcome": 5}}));
    assert_eq!(answers(&h)[2]["value"], "Deny");
}

#[test]
fn acp_09_confirm_is_yes_or_no_and_select_gives_its_choice() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "ask");
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "q1", "method": "confirm",
        "title": "Proceed?", "message": "Proceed?", "timeout": 60000}),
        ],
    );
    let requests = asked(&h, "session/request_permission");
    let options = &requests[0]["params"]["options"];
    assert_eq!(options[0]["optionId"], "yes");
    assert_eq!(options[0]["kind"], "allow_once");
    assert_eq!(options[1]["optionId"], "no");
    assert_eq!(options[1]["kind"], "reject_once");
    assert_eq!(requests[0]["params"]["toolCall"]["title"], "Proceed?");
    choose(&mut h, &requests[0], "yes");
    assert_eq!(
        answers(&h),
        [json!({"type": "extension_ui_response", "id": "q1", "confirmed": true})]
    );
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "q2", "method": "select",
        "title": "Pick", "options": ["a", "b", "c"]}),
        ],
    );
    let requests = asked(&h, "session/request_permission");
    let names: Vec<&str> = requests[1]["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    choose(&mut h, &requests[1], "choice-2");
    assert_eq!(answers(&h)[1]["value"], "c");
    // `choice-02` is not an option offered: cancelled.
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "q3", "method": "select",
        "title": "Pick", "options": ["a", "b", "c"]}),
        ],
    );
    let requests = asked(&h, "session/request_permission");
    choose(&mut h, &requests[2], "choice-02");
    assert_eq!(answers(&h)[2]["cancelled"], true);
    // A confirm's cancelled outcome cancels the turn.
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "q4", "method": "confirm",
        "title": "Sure?"}),
        ],
    );
    let requests = asked(&h, "session/request_permission");
    cancelled(&mut h, &requests[3]);
    assert_eq!(answers(&h)[3]["cancelled"], true);
    assert!(h.agent.iter().any(|m| m["type"] == "abort"));
}

#[test]
fn acp_09_input_without_form_elicitation_is_cancelled_at_once_and_said() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "ask");
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "i1", "method": "input",
        "title": "Your name"}),
        ],
    );
    assert!(asked(&h, "elicitation/create").is_empty());
    assert_eq!(
        answers(&h),
        [json!({"type": "extension_ui_response", "id": "i1", "cancelled": true})]
    );
    let said = texts(&h);
    assert!(
        said.contains(
            "[dialog answered as cancelled: \"Your name\": the editor offers no form elicitation]"
        ),
        "{said}"
    );
}

#[test]
fn acp_09_input_and_editor_with_form_elicitation_take_the_text() {
    let mut h = Harness::new();
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"elicitation": {"form": {}}}}),
    );
    let s = h.open(2);
    h.agent_lines(
        &s,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    h.prompt(&s, "ask");
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "e1", "method": "editor",
        "title": "Message", "prefill": "draft"}),
        ],
    );
    let requests = asked(&h, "elicitation/create");
    let params = &requests[0]["params"];
    assert_eq!(params["mode"], "form");
    assert_eq!(params["sessionId"], s.as_str());
    assert_eq!(params["message"], "Message");
    assert_eq!(
        params["requestedSchema"]["properties"]["value"]["type"],
        "string"
    );
    assert_eq!(
        params["requestedSchema"]["properties"]["value"]["default"],
        "draft"
    );
    assert_eq!(params["requestedSchema"]["required"], json!(["value"]));
    h.send(json!({"jsonrpc": "2.0", "id": requests[0]["id"],
        "result": {"action": "accept", "content": {"value": "final text"}}}));
    assert_eq!(
        answers(&h),
        [json!({"type": "extension_ui_response", "id": "e1", "value": "final text"})]
    );
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "i2", "method": "input",
        "title": "Name"}),
        ],
    );
    let requests = asked(&h, "elicitation/create");
    h.send(json!({"jsonrpc": "2.0", "id": requests[1]["id"], "result": {"action": "decline"}}));
    assert_eq!(answers(&h)[1]["cancelled"], true);
}

#[test]
fn acp_09_a_dialog_past_its_timeout_is_withdrawn_from_the_editor() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "ask");
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "q1", "method": "confirm",
        "title": "Proceed?", "timeout": 1000}),
        ],
    );
    let requests = asked(&h, "session/request_permission");
    h.timeout(std::time::Duration::from_millis(1500));
    let withdrawn: Vec<&Value> = h
        .editor
        .iter()
        .filter(|m| m["method"] == "$/cancel_request")
        .collect();
    assert_eq!(withdrawn.len(), 1, "{:#?}", h.editor);
    assert_eq!(withdrawn[0]["params"]["requestId"], requests[0]["id"]);
    assert!(texts(&h).contains("[dialog timed out: Proceed?]"));
    // ACP-36: no card of the dialog's, closed or open.
    assert!(!h.updates().iter().any(|u| u["toolCallId"] == "dialog-q1"));
    // The agent took its default; a late answer sends nothing.
    let sent = h.agent.len();
    choose(&mut h, &requests[0], "yes");
    assert_eq!(h.agent.len(), sent);
    // The agent's own cancel withdraws too.
    h.agent_lines(&s, &[json!({"type": "extension_ui_request", "id": "q2", "method": "confirm",
        "title": "Again?"}),
        json!({"type": "extension_ui_request", "id": "c", "method": "cancel", "targetId": "q2"})]);
    assert_eq!(
        h.editor
            .iter()
            .filter(|m| m["method"] == "$/cancel_request")
            .count(),
        2
    );
}

#[test]
fn acp_09_notify_and_set_title_are_shown_and_status_lines_are_not() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "x");
    h.agent_lines(&s, &[
        json!({"type": "extension_ui_request", "id": "n1", "method": "notify", "message": "saved", "notifyType": "info"}),
        json!({"type": "extension_ui_request", "id": "n2", "method": "setStatus", "statusKey": "k", "statusText": "busy"}),
        json!({"type": "extension_ui_request", "id": "n3", "method": "setWidget", "widgetKey": "w", "widgetLines": ["a"]}),
        json!({"type": "extension_ui_request", "id": "n4", "method": "setTitle", "title": "My session"}),
    ]);
    let u = h.updates();
    assert_eq!(u.len(), 2, "{u:#?}");
    assert_eq!(u[0]["sessionUpdate"], "agent_message_chunk");
    assert_eq!(u[0]["content"]["text"], "[info: saved]\n");
    assert_eq!(u[1]["sessionUpdate"], "session_info_update");
    assert_eq!(u[1]["title"], "My session");
    assert!(answers(&h).is_empty());
}

#[test]
fn acp_10_a_local_only_prompt_ends_the_turn_and_the_next_prompt_runs() {
    for late in [false, true] {
        let mut h = Harness::new();
        let s = h.session();
        h.request(
            10,
            "session/prompt",
            json!({"sessionId": s, "prompt": [{"type": "text", "text": "/session"}]}),
        );
        let id = h.agent.last().unwrap()["id"].clone();
        if late {
            h.agent_lines(
                &s,
                &[
                    json!({"id": id, "type": "response", "command": "prompt", "success": true}),
                    json!({"type": "command_output", "text": "session info"}),
                    json!({"type": "prompt_result", "id": id, "agentInvoked": false}),
                ],
            );
        } else {
            h.agent_lines(
                &s,
                &[
                    json!({"type": "command_output", "text": "session info"}),
                    json!({"id": id, "type": "response", "command": "prompt", "success": true,
                    "data": {"agentInvoked": false}}),
                ],
            );
        }
        assert_eq!(
            h.answer(10).unwrap()["result"]["stopReason"],
            "end_turn",
            "late {late}"
        );
        assert_eq!(texts(&h), "session info\n");
        h.editor.clear();
        h.request(
            11,
            "session/prompt",
            json!({"sessionId": s, "prompt": [{"type": "text", "text": "hello"}]}),
        );
        assert!(h.answer(11).is_none(), "{:#?}", h.editor);
        assert_eq!(h.agent.last().unwrap()["message"], "hello");
    }
}

#[test]
fn acp_10_titles_and_config_changes_are_shown() {
    let mut h = Harness::new();
    let s = h.session();
    h.agent_lines(&s, &[
        json!({"type": "session_info_update", "title": "Fixing bugs", "sessionId": "x"}),
        json!({"type": "config_update", "model": {"provider": "fake", "id": "m1"}, "thinkingLevel": "high"}),
    ]);
    let u = h.updates();
    assert_eq!(u[0]["sessionUpdate"], "session_info_update");
    assert_eq!(u[0]["title"], "Fixing bugs");
    assert_eq!(
        u[1]["content"]["text"],
        "[config: model fake/m1, thinking level high]\n"
    );
}

#[test]
fn acp_11_a_failed_message_shows_its_error_and_ends_the_turn() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "x");
    let mut failed = assistant("", "error");
    failed["errorMessage"] = json!("HTTP 400 model_not_supported");
    h.agent_lines(&s, &[
        json!({"type": "message_update", "message": assistant("", "stop"),
            "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "partial"}}),
        json!({"type": "message_end", "message": failed.clone()}),
        json!({"type": "agent_end", "messages": [failed]}),
    ]);
    h.answer_stats(&s, None);
    assert_eq!(
        texts(&h),
        "partial\n[error: HTTP 400 model_not_supported]\n"
    );
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "end_turn");
}

#[test]
fn acp_11_an_error_seen_only_at_the_end_is_shown_once_and_a_refusal_says_so() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "x");
    let mut failed = assistant("", "error");
    failed["errorMessage"] = json!("blocked by content_filter");
    h.agent_lines(&s, &[json!({"type": "agent_end", "messages": [failed]})]);
    h.answer_stats(&s, None);
    assert_eq!(texts(&h), "[error: blocked by content_filter]\n");
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "refusal");
}

#[test]
fn acp_11_retries_compactions_notices_and_extension_errors_are_short_lines() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "x");
    h.agent_lines(&s, &[
        json!({"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000, "errorMessage": "overloaded"}),
        json!({"type": "auto_retry_end", "success": true, "attempt": 1}),
        json!({"type": "auto_compaction_start", "reason": "threshold"}),
        json!({"type": "auto_compaction_end", "action": "context-full"}),
        json!({"type": "notice", "level": "warning", "message": "could not save"}),
        json!({"type": "extension_error", "extensionPath": "ext.ts", "event": "tool_call", "error": "boom"}),
    ]);
    assert_eq!(
        texts(&h),
        "[retrying: attempt 1 of 3 in 2.0s after: overloaded]\n[retry succeeded]\n\
         [compacting context: threshold]\n[context compacted]\n[warning: could not save]\n\
         [extension error: ext.ts (tool_call): boom]\n"
    );
}

#[test]
fn acp_08_a_cancelled_outcome_denies_every_other_waiting_dialog_of_the_session() {
    let mut h = Harness::new();
    let s = turn_with_call(&mut h);
    h.agent_lines(&s, &[
        approval("u1"),
        json!({"type": "extension_ui_request", "id": "q2", "method": "confirm", "title": "Also?"}),
    ]);
    let requests = asked(&h, "session/request_permission");
    assert_eq!(requests.len(), 2);
    cancelled(&mut h, &requests[0]);
    let got = answers(&h);
    assert_eq!(got.len(), 2, "{got:#?}");
    assert_eq!(
        got[0],
        json!({"type": "extension_ui_response", "id": "u1", "value": "Deny"})
    );
    assert_eq!(
        got[1],
        json!({"type": "extension_ui_response", "id": "q2", "cancelled": true})
    );
}

#[test]
fn acp_09_the_agents_exit_withdraws_its_open_requests() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "ask");
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "q1", "method": "confirm",
        "title": "Proceed?"}),
        ],
    );
    let requests = asked(&h, "session/request_permission");
    h.agent_exit(&s);
    let withdrawn: Vec<&Value> = h
        .editor
        .iter()
        .filter(|m| m["method"] == "$/cancel_request")
        .collect();
    assert_eq!(withdrawn.len(), 1, "{:#?}", h.editor);
    assert_eq!(withdrawn[0]["params"]["requestId"], requests[0]["id"]);
    // The late answer is dropped: nothing is written to the agent, nothing panics.
    let sent = h.agent.len();
    choose(&mut h, &requests[0], "yes");
    assert_eq!(h.agent.len(), sent);
}

#[test]
fn acp_09_past_64_open_requests_a_dialog_is_answered_at_once_and_said() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "ask");
    let frames: Vec<Value> = (0..65)
        .map(|i| {
            json!({"type": "extension_ui_request", "id": format!("q{i}"), "method": "confirm",
            "title": format!("Question {i}")})
        })
        .collect();
    h.agent_lines(&s, &frames);
    assert_eq!(asked(&h, "session/request_permission").len(), 64);
    assert_eq!(
        answers(&h),
        [json!({"type": "extension_ui_response", "id": "q64", "cancelled": true})]
    );
    assert!(texts(&h).contains("[dialog answered as cancelled: \"Question 64\": too many questions are open with the editor]"));
}

#[test]
fn acp_09_a_credential_uri_in_a_dialog_never_reaches_the_editor() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "ask");
    let secret = "https://b.s3.amazonaws.com/p?X-Amz-Signature=abc123secret";
    h.agent_lines(&s, &[
        json!({"type": "extension_ui_request", "id": "q1", "method": "confirm",
            "title": format!("Open {secret}?"), "message": format!("Fetch {secret} now")}),
        json!({"type": "extension_ui_request", "id": "n1", "method": "notify", "message": format!("see {secret}")}),
    ]);
    let all = serde_json::to_string(&h.editor).unwrap();
    assert!(!all.contains("abc123secret"), "{all}");
    assert!(all.contains("[uri withheld]"), "{all}");
}

#[test]
fn acp_08_09_answers_of_any_shape_answer_the_dialog_and_never_panic() {
    let shapes = [
        json!(null),
        json!("allow_once"),
        json!([1, 2]),
        json!({"outcome": null}),
        json!({"outcome": {"outcome": "selected"}}),
        json!({"outcome": {"outcome": "selected", "optionId": 3}}),
        json!({"outcome": {"outcome": "granted", "optionId": "allow_once"}}),
        json!({"action": "accept", "content": {"value": 5}}),
        json!({"action": "accept"}),
    ];
    for (i, shape) in shapes.iter().enumerate() {
        let mut h = Harness::new();
        let s = turn_with_call(&mut h);
        h.agent_lines(&s, &[
            approval("u1"),
            json!({"type": "extension_ui_request", "id": "q1", "method": "select", "title": "Pick", "options": ["a"]}),
            json!({"type": "extension_ui_request", "id": "q2", "method": "confirm", "title": "Sure?"}),
        ]);
        for request in asked(&h, "session/request_permission") {
            h.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": shape}));
        }
        let got = answers(&h);
        assert_eq!(got.len(), 3, "shape {i}: {got:#?}");
        assert_eq!(got[0]["value"], "Deny", "shape {i}");
        assert_eq!(got[1]["cancelled"], true, "shape {i}");
        assert_eq!(got[2]["cancelled"], true, "shape {i}");
    }
}
