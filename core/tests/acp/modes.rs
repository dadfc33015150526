//! ACP-34, ACP-35: the approval policy as session modes, owned by the bridge: `Ask` asks the
//! editor, `Accept edits` approves file edits and asks for the rest, `Allow all` approves
//! everything and says so on the card; offered as `modes` + `session/set_mode` and as the
//! `mode` config option, kept in step, and kept across a load or resume.

use crate::support as acp_support;

use crate::pinned::approved_line;
use acp_support::{choose, set_mode, update, Harness};
use musewire_core::acp::{Bridge, BridgeConfig, Input, SessionFileDone};
use serde_json::{json, Value};

const ASK: &str = "default";
const ACCEPT_EDITS: &str = "acceptEdits";
const ALLOW_ALL: &str = "bypassPermissions";

fn tool_call_end(id: &str, name: &str, arguments: Value) -> Value {
    update(json!({"type": "toolcall_end", "contentIndex": 0,
        "toolCall": {"type": "toolCall", "id": id, "name": name, "arguments": arguments}}))
}

/// omp's approval `select` for a call of `tool` (ACP-08).
fn approval(id: &str, tool: &str) -> Value {
    json!({"type": "extension_ui_request", "id": id, "method": "select",
        "title": format!("Allow tool: {tool}\nMore: detail"), "options": ["Approve", "Deny"]})
}

/// The permission requests the bridge made of the editor, in order.
fn asked(h: &Harness) -> Vec<Value> {
    h.editor
        .iter()
        .filter(|m| m["method"] == "session/request_permission" && m.get("id").is_some())
        .cloned()
        .collect()
}

/// The agent's `extension_ui_response`s, in order: id and value.
fn answers(h: &Harness) -> Vec<(String, String)> {
    h.agent
        .iter()
        .filter(|m| m["type"] == "extension_ui_response")
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_owned(),
                m["value"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn set_option(h: &mut Harness, id: u64, s: &str, value: Value) {
    h.request(
        id,
        "session/set_config_option",
        json!({"sessionId": s, "configId": "mode", "value": value}),
    );
}

/// The option `id` of a list of options.
fn option<'a>(options: &'a Value, id: &str) -> &'a Value {
    options
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == id)
        .unwrap_or_else(|| panic!("no option {id}: {options}"))
}

/// The text of the first content block of a card update, if any.
fn first_text(update: &Value) -> Option<&str> {
    update["content"][0]["content"]["text"].as_str()
}

/// What a mode change sent the editor besides its answer: the `current_mode_update`'s mode
/// and the `config_option_update`'s mode option value.
fn announced(h: &Harness) -> (String, String) {
    let u = h.updates();
    let current = u
        .iter()
        .find(|u| u["sessionUpdate"] == "current_mode_update")
        .expect("a current_mode_update");
    let options = u
        .iter()
        .find(|u| u["sessionUpdate"] == "config_option_update")
        .expect("a config_option_update");
    (
        current["currentModeId"].as_str().unwrap().to_owned(),
        option(&options["configOptions"], "mode")["currentValue"]
            .as_str()
            .unwrap()
            .to_owned(),
    )
}

#[test]
fn acp_35_session_new_offers_the_modes_as_modes_and_as_the_first_option() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.open(2);
    let result = &h.answer(2).unwrap()["result"];
    let modes = &result["modes"];
    assert_eq!(modes["currentModeId"], ASK, "{result}");
    let ids: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [ASK, ACCEPT_EDITS, ALLOW_ALL]);
    let names: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Ask", "Accept edits", "Allow all"]);
    assert!(modes["availableModes"][0]["description"].is_string());
    let first = &result["configOptions"][0];
    assert_eq!(first["id"], "mode");
    assert_eq!(first["category"], "mode");
    assert_eq!(first["type"], "select");
    assert_eq!(first["currentValue"], ASK);
    let values: Vec<&str> = first["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ids);
    // The model and thinking options follow it (ACP-24).
    assert!(option(&result["configOptions"], "model").is_object());
}

#[test]
fn acp_34_ask_asks_the_editor_for_every_approval() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "edit then run");
    h.agent_lines(
        &s,
        &[
            tool_call_end("c1", "write", json!({"path": "a.txt", "content": "x"})),
            tool_call_end("c2", "bash", json!({"command": "echo hi"})),
            approval("u1", "write"),
            approval("u2", "bash"),
        ],
    );
    let requests = asked(&h);
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["params"]["toolCall"]["toolCallId"], "c1");
    assert_eq!(requests[1]["params"]["toolCall"]["toolCallId"], "c2");
    assert!(answers(&h).is_empty(), "nothing answered unasked");
}

#[test]
fn acp_34_accept_edits_approves_an_edit_and_still_asks_for_bash() {
    let mut h = Harness::new();
    let s = h.session();
    set_mode(&mut h, 3, &s, ACCEPT_EDITS);
    assert_eq!(h.answer(3).unwrap()["result"], json!({}));
    assert_eq!(
        announced(&h),
        (ACCEPT_EDITS.to_owned(), ACCEPT_EDITS.to_owned())
    );
    h.prompt(&s, "edit then run");
    h.agent_lines(
        &s,
        &[tool_call_end(
            "c1",
            "edit",
            json!({"path": "a.txt", "oldText": "a", "newText": "b"}),
        )],
    );
    h.editor.clear();
    h.agent_lines(&s, &[approval("u1", "edit")]);
    assert!(asked(&h).is_empty(), "an edit is not asked");
    assert_eq!(answers(&h), [("u1".to_owned(), "Approve".to_owned())]);
    // The card says so, its argument diff kept after the line.
    let u = h.updates();
    assert_eq!(u.len(), 1, "{u:#?}");
    assert_eq!(u[0]["toolCallId"], "c1");
    assert_eq!(
        first_text(&u[0]),
        Some(approved_line("Accept edits").as_str())
    );
    assert_eq!(u[0]["content"][1]["type"], "diff", "{:#}", u[0]);
    // A command still asks.
    h.agent_lines(
        &s,
        &[
            tool_call_end("c2", "bash", json!({"command": "echo hi"})),
            approval("u2", "bash"),
        ],
    );
    let requests = asked(&h);
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["params"]["toolCall"]["toolCallId"], "c2");
    choose(&mut h, &requests[0], "reject_once");
    assert_eq!(answers(&h)[1], ("u2".to_owned(), "Deny".to_owned()));
    // So does an edit the mode could not tie to a call: its kind is not known.
    h.agent_lines(&s, &[approval("u3", "edit")]);
    assert_eq!(asked(&h).len(), 2);
}

#[test]
fn acp_34_allow_all_approves_everything_and_the_card_says_so_to_its_end() {
    let mut h = Harness::new();
    let s = h.session();
    set_option(&mut h, 3, &s, json!(ALLOW_ALL));
    let options = &h.answer(3).unwrap()["result"]["configOptions"];
    assert_eq!(option(options, "mode")["currentValue"], ALLOW_ALL);
    assert_eq!(announced(&h), (ALLOW_ALL.to_owned(), ALLOW_ALL.to_owned()));
    h.prompt(&s, "run");
    h.agent_lines(
        &s,
        &[tool_call_end("c1", "bash", json!({"command": "echo hi"}))],
    );
    h.editor.clear();
    h.agent_lines(&s, &[approval("u1", "bash")]);
    assert!(asked(&h).is_empty());
    assert_eq!(answers(&h), [("u1".to_owned(), "Approve".to_owned())]);
    let line = approved_line("Allow all");
    let u = h.updates();
    assert_eq!(u.len(), 1, "{u:#?}");
    assert_eq!(first_text(&u[0]), Some(line.as_str()));
    // It runs: its output and its end keep the line first.
    h.agent_lines(
        &s,
        &[
            json!({"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash",
                "args": {"command": "echo hi"}}),
            json!({"type": "tool_execution_update", "toolCallId": "c1", "toolName": "bash",
                "args": {"command": "echo hi"},
                "partialResult": {"content": [{"type": "text", "text": "h"}]}}),
            json!({"type": "tool_execution_end", "toolCallId": "c1", "toolName": "bash",
                "result": {"content": [{"type": "text", "text": "hi"}]}, "isError": false}),
        ],
    );
    let u = h.updates();
    let with_content: Vec<&Value> = u[1..]
        .iter()
        .filter(|u| u.get("content").is_some_and(|c| !c.is_null()))
        .collect();
    assert_eq!(with_content.len(), 2, "{u:#?}");
    for update in &with_content {
        assert_eq!(first_text(update), Some(line.as_str()), "{update:#}");
    }
    assert_eq!(with_content[0]["content"][1]["content"]["text"], "h");
    assert_eq!(with_content[1]["status"], "completed");
    assert_eq!(with_content[1]["content"][1]["content"]["text"], "hi");
    // An approval tied to no call is approved too, and the turn says so.
    h.editor.clear();
    h.agent_lines(&s, &[approval("u2", "delete_everything")]);
    assert!(asked(&h).is_empty());
    assert_eq!(answers(&h)[1], ("u2".to_owned(), "Approve".to_owned()));
    let said: String = h
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        said.contains(
            "[approved without asking: \"Allow tool: delete_everything\": the session's mode is Allow all]"
        ),
        "{said}"
    );
}

#[test]
fn acp_34_dialogs_that_are_no_approval_are_asked_in_every_mode() {
    let mut h = Harness::new();
    let s = h.session();
    set_mode(&mut h, 3, &s, ALLOW_ALL);
    h.prompt(&s, "ask");
    h.agent_lines(
        &s,
        &[
            json!({"type": "extension_ui_request", "id": "u1", "method": "confirm",
            "title": "Are you sure?"}),
            json!({"type": "extension_ui_request", "id": "u2", "method": "select",
            "title": "Pick one", "options": ["red", "green"]}),
        ],
    );
    assert_eq!(asked(&h).len(), 2);
    assert!(answers(&h).is_empty());
}

#[test]
fn acp_34_an_always_answer_stands_before_the_mode() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "run");
    h.agent_lines(
        &s,
        &[
            tool_call_end("c1", "bash", json!({"command": "rm -rf x"})),
            approval("u1", "bash"),
        ],
    );
    let requests = asked(&h);
    choose(&mut h, &requests[0], "reject_always");
    set_mode(&mut h, 3, &s, ALLOW_ALL);
    h.agent_lines(
        &s,
        &[
            tool_call_end("c2", "bash", json!({"command": "rm -rf y"})),
            approval("u2", "bash"),
        ],
    );
    assert_eq!(asked(&h).len(), 1);
    assert_eq!(answers(&h)[1], ("u2".to_owned(), "Deny".to_owned()));
}

#[test]
fn acp_34_back_to_ask_asks_again() {
    let mut h = Harness::new();
    let s = h.session();
    set_mode(&mut h, 3, &s, ALLOW_ALL);
    h.prompt(&s, "run");
    h.agent_lines(
        &s,
        &[
            tool_call_end("c1", "bash", json!({"command": "echo one"})),
            approval("u1", "bash"),
        ],
    );
    assert!(asked(&h).is_empty());
    h.editor.clear();
    set_option(&mut h, 4, &s, json!(ASK));
    assert_eq!(announced(&h), (ASK.to_owned(), ASK.to_owned()));
    h.agent_lines(
        &s,
        &[
            tool_call_end("c2", "bash", json!({"command": "echo two"})),
            tool_call_end("c3", "write", json!({"path": "b", "content": "y"})),
            approval("u2", "bash"),
            approval("u3", "write"),
        ],
    );
    let requests = asked(&h);
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["params"]["toolCall"]["toolCallId"], "c2");
    // The card the user is asked about carries no mode's line.
    assert!(requests[0]["params"]["toolCall"].get("content").is_none());
    assert_eq!(answers(&h).len(), 1);
}

#[test]
fn acp_35_set_mode_and_the_option_stay_in_step_with_every_options_list() {
    let mut h = Harness::new();
    let s = h.session();
    set_mode(&mut h, 3, &s, ACCEPT_EDITS);
    h.editor.clear();
    // Setting another option answers with the mode as it is.
    h.request(
        4,
        "session/set_config_option",
        json!({"sessionId": s, "configId": "thought_level", "value": "high"}),
    );
    let asked = h.asked("set_thinking_level").unwrap();
    h.agent_lines(
        &s,
        &[
            json!({"id": asked["id"], "type": "response", "command": "set_thinking_level", "success": true}),
        ],
    );
    let state = h.asked("get_state").unwrap();
    h.agent_lines(
        &s,
        &[
            json!({"id": state["id"], "type": "response", "command": "get_state", "success": true,
            "data": {"thinkingLevel": "high"}}),
        ],
    );
    let options = &h.answer(4).unwrap()["result"]["configOptions"];
    assert_eq!(option(options, "mode")["currentValue"], ACCEPT_EDITS);
    // A change the agent makes itself (ACP-24) carries it too.
    h.agent_lines(
        &s,
        &[json!({"type": "thinking_level_changed", "thinkingLevel": "low"})],
    );
    let update = h
        .updates()
        .into_iter()
        .rfind(|u| u["sessionUpdate"] == "config_option_update")
        .expect("an update");
    assert_eq!(
        option(&update["configOptions"], "mode")["currentValue"],
        ACCEPT_EDITS
    );
    // `/status` shows it.
    h.request(
        11,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "/status"}]}),
    );
    let status: String = h
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        status.contains("requested mode: Accept edits (acceptEdits)"),
        "{status}"
    );
}

#[test]
fn acp_35_status_shows_ask_from_the_start() {
    let mut h = Harness::new();
    let s = h.session();
    h.request(
        11,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "/status"}]}),
    );
    let said = h.updates()[0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(said.contains("requested mode: Ask (default)"), "{said}");
}

#[test]
fn acp_35_an_unknown_mode_or_session_is_refused_and_nothing_changes() {
    let mut h = Harness::new();
    let s = h.session();
    set_mode(&mut h, 3, &s, "plan");
    assert_eq!(h.answer(3).unwrap()["error"]["code"], -32602);
    set_option(&mut h, 4, &s, json!("yolo"));
    assert_eq!(h.answer(4).unwrap()["error"]["code"], -32602);
    set_option(&mut h, 5, &s, json!(true));
    assert_eq!(h.answer(5).unwrap()["error"]["code"], -32602);
    set_mode(&mut h, 6, "no-such-session", ALLOW_ALL);
    assert_eq!(h.answer(6).unwrap()["error"]["code"], -32002);
    assert!(h.updates().is_empty(), "{:#?}", h.updates());
    h.prompt(&s, "run");
    h.agent_lines(
        &s,
        &[
            tool_call_end("c1", "bash", json!({"command": "echo hi"})),
            approval("u1", "bash"),
        ],
    );
    assert_eq!(asked(&h).len(), 1, "still asking");
}

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

/// Resumes stored session `id` (request `request`): its answer.
fn resume(h: &mut Harness, request: u64, id: &str) -> Value {
    h.request(
        request,
        "session/resume",
        json!({"sessionId": id, "cwd": "/work", "mcpServers": []}),
    );
    let key = h.spawned.last().unwrap().0.clone();
    h.answer_opening_after_switch(&key);
    h.answer(request).expect("resumed")
}

/// Loads stored session `id` (request `request`) from a v1 agent with no history: its answer.
fn load(h: &mut Harness, request: u64, id: &str) -> Value {
    h.request(
        request,
        "session/load",
        json!({"sessionId": id, "cwd": "/work", "mcpServers": []}),
    );
    let key = h.spawned.last().unwrap().0.clone();
    h.agent_lines(
        &key,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    answer_last(h, &key, "switch_session", json!({"cancelled": false}));
    answer_last(h, &key, "get_state", json!({"thinkingLevel": "off"}));
    answer_last(h, &key, "get_messages", json!({"messages": []}));
    answer_last(h, &key, "get_session_stats", json!({}));
    answer_last(h, &key, "get_available_models", json!({"models": []}));
    h.answer(request).expect("loaded")
}

fn current(answer: &Value) -> (&str, &str) {
    (
        answer["result"]["modes"]["currentModeId"].as_str().unwrap(),
        option(&answer["result"]["configOptions"], "mode")["currentValue"]
            .as_str()
            .unwrap(),
    )
}

#[test]
fn acp_35_the_mode_survives_load_resume_and_close_in_the_same_bridge() {
    let mut h = with_folder();
    let answer = resume(&mut h, 2, "s-1");
    assert_eq!(current(&answer), (ASK, ASK));
    set_mode(&mut h, 3, "s-1", ALLOW_ALL);
    // Loaded again while open: in a new agent, in its mode.
    let answer = load(&mut h, 4, "s-1");
    assert_eq!(current(&answer), (ALLOW_ALL, ALLOW_ALL), "{answer}");
    // Closed, then resumed: the same.
    h.request(5, "session/close", json!({"sessionId": "s-1"}));
    assert!(h.answer(5).unwrap()["result"].is_object());
    let answer = resume(&mut h, 6, "s-1");
    assert_eq!(current(&answer), (ALLOW_ALL, ALLOW_ALL), "{answer}");
    // And it still answers approvals itself.
    h.prompt("s-1", "run");
    let key = h.spawned.last().unwrap().0.clone();
    h.editor.clear();
    h.agent_lines(
        &key,
        &[
            tool_call_end("c1", "bash", json!({"command": "echo hi"})),
            approval("u1", "bash"),
        ],
    );
    assert!(asked(&h).is_empty());
    assert_eq!(answers(&h), [("u1".to_owned(), "Approve".to_owned())]);
    // Another session is not in it.
    let answer = resume(&mut h, 7, "s-2");
    assert_eq!(current(&answer), (ASK, ASK));
}

#[test]
fn acp_35_a_fork_takes_the_originals_mode_and_a_delete_forgets_it() {
    let mut h = with_folder();
    resume(&mut h, 2, "s-1");
    set_mode(&mut h, 3, "s-1", ACCEPT_EDITS);
    h.request(
        4,
        "session/fork",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    let (ticket, ..) = h.forks.pop().expect("a fork asked");
    h.bridge.handle(
        h.now,
        Input::SessionFile(
            ticket,
            Ok(SessionFileDone::Forked {
                name: "s-2.jsonl".into(),
            }),
        ),
    );
    h.drain();
    let key = h.spawned.last().unwrap().0.clone();
    h.answer_opening_after_switch(&key);
    let answer = h.answer(4).expect("forked");
    assert_eq!(current(&answer), (ACCEPT_EDITS, ACCEPT_EDITS), "{answer}");
    // Deleted, then made again under the same id by a new session: it asks.
    h.request(5, "session/delete", json!({"sessionId": "s-2"}));
    h.agent_exit(&key);
    let (ticket, ..) = h.deletes.pop().expect("a delete asked");
    h.bridge.handle(
        h.now,
        Input::SessionFile(ticket, Ok(SessionFileDone::Deleted)),
    );
    h.drain();
    assert_eq!(h.answer(5).unwrap()["result"], json!({}));
    h.request(6, "session/new", json!({"cwd": "/work", "mcpServers": []}));
    let key = h.spawned.last().unwrap().0.clone();
    h.agent_lines(
        &key,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    answer_last(
        &mut h,
        &key,
        "get_state",
        json!({"sessionFile": "/state/sessions/s-2.jsonl"}),
    );
    answer_last(&mut h, &key, "get_available_models", json!({"models": []}));
    let answer = h.answer(6).expect("opened");
    assert_eq!(answer["result"]["sessionId"], "s-2");
    assert_eq!(current(&answer), (ASK, ASK));
}
