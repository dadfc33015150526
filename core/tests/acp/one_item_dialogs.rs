//! ACP-36: a dialog tied to no tool shows once. With form elicitation offered, a `confirm`
//! and a `select` are one `elicitation/create` each (a titled one-of); without it, one
//! `session/request_permission` whose tool call no card announces before it and none updates
//! after it. An approval of a call stays a permission request about that call (ACP-08).

use crate::support as acp_support;

use acp_support::{answers, asked, update, Harness};
use serde_json::{json, Value};

/// Every tool card update the editor saw (`tool_call`, `tool_call_update`).
fn cards(h: &Harness) -> Vec<Value> {
    h.updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" || u["sessionUpdate"] == "tool_call_update")
        .collect()
}

fn reply(h: &mut Harness, request: &Value, result: Value) {
    h.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}));
}

fn confirm(id: &str, title: &str) -> Value {
    json!({"type": "extension_ui_request", "id": id, "method": "confirm", "title": title})
}

/// A session of an editor that offers form elicitation, in a turn.
fn with_forms(h: &mut Harness) -> String {
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"elicitation": {"form": {}}}}),
    );
    let s = h.open(2);
    h.prompt(&s, "ask");
    h.editor.clear();
    s
}

#[test]
fn acp_36_without_forms_a_confirm_is_one_permission_request_and_no_card() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "ask");
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "q1", "method": "confirm",
                "title": "Are you sure?", "message": "This deletes the branch."}),
        ],
    );
    assert!(asked(&h, "elicitation/create").is_empty());
    let requests = asked(&h, "session/request_permission");
    assert_eq!(requests.len(), 1, "{:#?}", h.editor);
    let call = &requests[0]["params"]["toolCall"];
    assert_eq!(call["toolCallId"], "dialog-q1");
    assert_eq!(call["title"], "Are you sure?");
    assert_eq!(call["kind"], "other");
    assert_eq!(
        call["content"][0]["content"]["text"],
        "This deletes the branch."
    );
    // Nothing announced the call before the request.
    assert!(cards(&h).is_empty(), "{:#?}", cards(&h));
    reply(
        &mut h,
        &requests[0],
        json!({"outcome": {"outcome": "selected", "optionId": "yes"}}),
    );
    assert_eq!(
        answers(&h),
        [json!({"type": "extension_ui_response", "id": "q1", "confirmed": true})]
    );
    // Nothing updates it after the answer either, nor at the run's end.
    h.agent_lines(&s, &[acp_support::agent_end("stop")]);
    assert!(cards(&h).is_empty(), "{:#?}", cards(&h));
}

#[test]
fn acp_36_without_forms_a_select_and_a_cancelled_dialog_leave_no_card() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "ask");
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "s1", "method": "select",
                "title": "Pick", "options": ["red", "green"]}),
            confirm("q2", "Again?"),
        ],
    );
    let requests = asked(&h, "session/request_permission");
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["params"]["toolCall"]["toolCallId"], "dialog-s1");
    reply(
        &mut h,
        &requests[0],
        json!({"outcome": {"outcome": "selected", "optionId": "choice-1"}}),
    );
    assert_eq!(answers(&h)[0]["value"], "green");
    // A cancelled outcome cancels the turn (ACP-09), still with no card.
    reply(
        &mut h,
        &requests[1],
        json!({"outcome": {"outcome": "cancelled"}}),
    );
    assert_eq!(answers(&h)[1]["cancelled"], true);
    assert!(h.agent.iter().any(|m| m["type"] == "abort"));
    assert!(cards(&h).is_empty(), "{:#?}", cards(&h));
}

#[test]
fn acp_36_with_forms_a_confirm_is_one_elicitation_answered_by_accept_decline_and_cancel() {
    let mut h = Harness::new();
    let s = with_forms(&mut h);
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "q1", "method": "confirm",
                "title": "Are you sure?", "message": "This deletes the branch."}),
        ],
    );
    assert!(asked(&h, "session/request_permission").is_empty());
    let forms = asked(&h, "elicitation/create");
    assert_eq!(forms.len(), 1, "{:#?}", h.editor);
    let params = &forms[0]["params"];
    assert_eq!(params["mode"], "form");
    assert_eq!(params["sessionId"], s.as_str());
    assert!(params.get("toolCallId").is_none(), "{params:#}");
    assert_eq!(
        params["message"],
        "Are you sure?\n\nThis deletes the branch."
    );
    let field = &params["requestedSchema"]["properties"]["value"];
    assert_eq!(field["type"], "string");
    assert_eq!(field["title"], "Are you sure?");
    assert_eq!(
        field["oneOf"],
        json!([{"const": "yes", "title": "Yes"}, {"const": "no", "title": "No"}])
    );
    assert_eq!(params["requestedSchema"]["required"], json!(["value"]));
    reply(
        &mut h,
        &forms[0],
        json!({"action": "accept", "content": {"value": "yes"}}),
    );
    // Accept "no", decline and cancel: no, no, cancelled; the turn goes on.
    for (id, result) in [
        (
            "q2",
            json!({"action": "accept", "content": {"value": "no"}}),
        ),
        ("q3", json!({"action": "decline"})),
        ("q4", json!({"action": "cancel"})),
        (
            "q5",
            json!({"action": "accept", "content": {"value": "maybe"}}),
        ),
    ] {
        h.agent_lines(&s, &[confirm(id, "Again?")]);
        let form = asked(&h, "elicitation/create").pop().unwrap();
        reply(&mut h, &form, result);
    }
    let got: Vec<Value> = answers(&h)
        .into_iter()
        .map(|a| json!([a["confirmed"], a["cancelled"]]))
        .collect();
    assert_eq!(
        got,
        [
            json!([true, null]),
            json!([false, null]),
            json!([false, null]),
            json!([null, true]),
            json!([null, true]),
        ]
    );
    assert!(!h.agent.iter().any(|m| m["type"] == "abort"));
    assert!(cards(&h).is_empty(), "{:#?}", cards(&h));
}

#[test]
fn acp_36_with_forms_a_select_is_a_titled_one_of_of_its_options() {
    let mut h = Harness::new();
    let s = with_forms(&mut h);
    let select = |id: &str| {
        json!({"type": "extension_ui_request", "id": id, "method": "select",
            "title": "Pick a colour", "options": ["red", "green", "blue"]})
    };
    h.agent_lines(&s, &[select("s1")]);
    let form = asked(&h, "elicitation/create").pop().unwrap();
    let field = &form["params"]["requestedSchema"]["properties"]["value"];
    assert_eq!(
        field["oneOf"],
        json!([{"const": "choice-0", "title": "red"}, {"const": "choice-1", "title": "green"},
            {"const": "choice-2", "title": "blue"}])
    );
    reply(
        &mut h,
        &form,
        json!({"action": "accept", "content": {"value": "choice-2"}}),
    );
    for (id, result) in [
        (
            "s2",
            json!({"action": "accept", "content": {"value": "choice-9"}}),
        ),
        ("s3", json!({"action": "decline"})),
    ] {
        h.agent_lines(&s, &[select(id)]);
        let form = asked(&h, "elicitation/create").pop().unwrap();
        reply(&mut h, &form, result);
    }
    let got = answers(&h);
    assert_eq!(got[0]["value"], "blue");
    assert_eq!(got[1]["cancelled"], true);
    assert_eq!(got[2]["cancelled"], true);
    assert!(asked(&h, "session/request_permission").is_empty());
    assert!(cards(&h).is_empty(), "{:#?}", cards(&h));
}

#[test]
fn acp_36_with_forms_an_approval_of_a_call_stays_a_permission_request_about_it() {
    let mut h = Harness::new();
    let s = with_forms(&mut h);
    h.agent_lines(
        &s,
        &[
            update(json!({"type": "toolcall_end", "contentIndex": 0,
            "toolCall": {"type": "toolCall", "id": "c1", "name": "bash",
                "arguments": {"command": "echo hi"}}})),
            json!({"type": "extension_ui_request", "id": "u1", "method": "select",
                "title": "Allow tool: bash\nCommand: echo hi", "options": ["Approve", "Deny"]}),
            // Tied to no call (none named `edit`): a choice, so a form.
            json!({"type": "extension_ui_request", "id": "u2", "method": "select",
                "title": "Allow tool: edit", "options": ["Approve", "Deny"]}),
        ],
    );
    let requests = asked(&h, "session/request_permission");
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["params"]["toolCall"]["toolCallId"], "c1");
    let forms = asked(&h, "elicitation/create");
    assert_eq!(forms.len(), 1);
    reply(&mut h, &forms[0], json!({"action": "cancel"}));
    assert_eq!(
        answers(&h),
        [json!({"type": "extension_ui_response", "id": "u2", "cancelled": true})]
    );
}

#[test]
fn acp_36_session_cancel_withdraws_an_open_form_and_its_late_answer_finds_nothing() {
    let mut h = Harness::new();
    let s = with_forms(&mut h);
    h.agent_lines(&s, &[confirm("q1", "Proceed?")]);
    let form = asked(&h, "elicitation/create").pop().unwrap();
    h.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": s}}));
    let withdrawn: Vec<&Value> = h
        .editor
        .iter()
        .filter(|m| m["method"] == "$/cancel_request")
        .collect();
    assert_eq!(withdrawn.len(), 1, "{:#?}", h.editor);
    assert_eq!(withdrawn[0]["params"]["requestId"], form["id"]);
    assert_eq!(
        answers(&h),
        [json!({"type": "extension_ui_response", "id": "q1", "cancelled": true})]
    );
    let sent = h.agent.len();
    reply(
        &mut h,
        &form,
        json!({"action": "accept", "content": {"value": "yes"}}),
    );
    assert_eq!(h.agent.len(), sent, "the late answer sends nothing");
}

#[test]
fn acp_36_an_editor_that_refuses_a_form_is_asked_by_permission_request_after() {
    let mut h = Harness::new();
    let s = with_forms(&mut h);
    h.agent_lines(&s, &[confirm("q1", "Proceed?")]);
    let form = asked(&h, "elicitation/create").pop().unwrap();
    // As a Zed build without its ACP beta flag answers although it advertised forms.
    h.send(json!({"jsonrpc": "2.0", "id": form["id"],
        "error": {"code": -32602, "message": "elicitation support requires the ACP beta flag"}}));
    let requests = asked(&h, "session/request_permission");
    assert_eq!(requests.len(), 1, "{:#?}", h.editor);
    assert_eq!(requests[0]["params"]["toolCall"]["toolCallId"], "dialog-q1");
    reply(
        &mut h,
        &requests[0],
        json!({"outcome": {"outcome": "selected", "optionId": "yes"}}),
    );
    assert_eq!(answers(&h)[0]["confirmed"], true);
    // Later dialogs are not asked as forms; text is answered cancelled and said.
    h.agent_lines(
        &s,
        &[
            confirm("q2", "Again?"),
            json!({"type": "extension_ui_request", "id": "i1", "method": "input", "title": "Name"}),
        ],
    );
    assert_eq!(asked(&h, "elicitation/create").len(), 1);
    assert_eq!(asked(&h, "session/request_permission").len(), 2);
    assert_eq!(answers(&h)[1]["cancelled"], true);
    let said: String = h
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        said.contains(
            "[dialog answered as cancelled: \"Name\": the editor refused a form elicitation]"
        ),
        "{said}"
    );
    assert!(cards(&h).is_empty(), "{:#?}", cards(&h));
}
