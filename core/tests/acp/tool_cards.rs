//! ACP-17..19: tool cards with diffs (omp's edit details, pi's edit arguments, a write's
//! arguments), locations absolute against the session cwd, kinds, the final `rawOutput`, and
//! `pending` while the model streams a call's arguments.

use crate::support as acp_support;

use acp_support::{agent_end, update, Harness};
use musewire_core::acp::{MAX_SURFACE_BYTES, TRUNCATION_NOTICE};
use serde_json::{json, Value};

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"type": "toolCall", "id": id, "name": name, "arguments": args})
}

fn toolcall_start(id: &str, name: &str) -> Value {
    let partial =
        json!({"role": "assistant", "content": [call(id, name, json!({}))], "stopReason": "stop"});
    update(json!({"type": "toolcall_start", "contentIndex": 0, "partial": partial}))
}

fn toolcall_end(id: &str, name: &str, args: Value) -> Value {
    update(json!({"type": "toolcall_end", "contentIndex": 0, "toolCall": call(id, name, args)}))
}

fn start(id: &str, name: &str, args: Value) -> Value {
    json!({"type": "tool_execution_start", "toolCallId": id, "toolName": name, "args": args})
}

fn end(id: &str, name: &str, result: Value) -> Value {
    json!({"type": "tool_execution_end", "toolCallId": id, "toolName": name, "result": result})
}

fn last_of(h: &Harness, id: &str) -> Value {
    h.updates()
        .into_iter()
        .rfind(|u| u["toolCallId"] == id)
        .expect("an update of the card")
}

fn diffs(update: &Value) -> Vec<Value> {
    update["content"]
        .as_array()
        .map(|c| c.iter().filter(|c| c["type"] == "diff").cloned().collect())
        .unwrap_or_default()
}

#[test]
fn acp_17_omp_edit_per_file_results_give_diffs_and_locations() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "edit");
    let details = json!({"diff": "…", "perFileResults": [
        {"path": "src/a.rs", "diff": "…", "oldText": "a\n", "newText": "b\n", "firstChangedLine": 3},
        {"path": "/abs/new.rs", "diff": "…", "newText": "fresh\n"},
        {"path": "src/bad.rs", "diff": "", "isError": true, "oldText": "x", "newText": "y"},
    ]});
    h.agent_lines(
        &s,
        &[
            start("e1", "edit", json!({"path": "src/a.rs"})),
            end(
                "e1",
                "edit",
                json!({"content": [{"type": "text", "text": "edited"}], "details": details}),
            ),
        ],
    );
    let done = last_of(&h, "e1");
    assert_eq!(done["status"], "completed");
    assert_eq!(
        diffs(&done),
        [
            json!({"type": "diff", "path": "/tmp/src/a.rs", "oldText": "a\n", "newText": "b\n"}),
            json!({"type": "diff", "path": "/abs/new.rs", "newText": "fresh\n"}),
        ]
    );
    assert_eq!(
        done["content"].as_array().unwrap().last().unwrap()["content"]["text"],
        "edited"
    );
    assert_eq!(
        done["locations"],
        json!([{"path": "/tmp/src/a.rs", "line": 3}, {"path": "/abs/new.rs"}, {"path": "/tmp/src/bad.rs"}])
    );
    assert_eq!(
        done["rawOutput"]["details"]["perFileResults"][0]["path"],
        "src/a.rs"
    );
}

#[test]
fn acp_17_omp_single_file_edit_details_give_a_diff() {
    let mut h = Harness::new();
    let s = h.session();
    let details = json!({"diff": "…", "path": "/tmp/x.rs", "oldText": "1", "newText": "2", "firstChangedLine": 1});
    h.agent_lines(
        &s,
        &[end(
            "e1",
            "edit",
            json!({"content": [], "details": details}),
        )],
    );
    let done = last_of(&h, "e1");
    assert_eq!(
        diffs(&done),
        [json!({"type": "diff", "path": "/tmp/x.rs", "oldText": "1", "newText": "2"})]
    );
    assert_eq!(done["locations"], json!([{"path": "/tmp/x.rs", "line": 1}]));
}

#[test]
fn acp_17_pi_edit_arguments_give_diffs_pending_and_at_the_end() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "edit");
    let args = json!({"path": "lib.rs", "edits": [{"oldText": "foo", "newText": "bar"}, {"oldText": "x", "newText": "y"}]});
    h.agent_lines(&s, &[toolcall_end("p1", "edit", args.clone())]);
    let opened = last_of(&h, "p1");
    assert_eq!(opened["sessionUpdate"], "tool_call");
    assert_ne!(opened["status"], "in_progress");
    assert_eq!(opened["kind"], "edit");
    assert_eq!(
        diffs(&opened),
        [
            json!({"type": "diff", "path": "/tmp/lib.rs", "oldText": "foo", "newText": "bar"}),
            json!({"type": "diff", "path": "/tmp/lib.rs", "oldText": "x", "newText": "y"}),
        ]
    );
    assert_eq!(opened["locations"], json!([{"path": "/tmp/lib.rs"}]));
    h.agent_lines(&s, &[
        start("p1", "edit", args),
        end("p1", "edit", json!({"content": [{"type": "text", "text": "ok"}], "details": {"diff": "-foo\n+bar", "firstChangedLine": 7}})),
    ]);
    let done = last_of(&h, "p1");
    assert_eq!(diffs(&done).len(), 2, "{done}");
    assert_eq!(
        done["locations"],
        json!([{"path": "/tmp/lib.rs", "line": 7}])
    );
}

#[test]
fn acp_17_a_write_gives_a_diff_from_its_arguments_with_null_old_text() {
    let mut h = Harness::new();
    let s = h.session();
    h.agent_lines(
        &s,
        &[
            start(
                "w1",
                "write",
                json!({"path": "./dir/../new.txt", "content": "hello\n"}),
            ),
            end(
                "w1",
                "write",
                json!({"content": [{"type": "text", "text": "wrote"}]}),
            ),
        ],
    );
    let u = h.updates();
    // No old text: the schema leaves `oldText` (null, a new file) out.
    let expected = json!({"type": "diff", "path": "/tmp/new.txt", "newText": "hello\n"});
    assert_eq!(diffs(&u[0]), std::slice::from_ref(&expected));
    assert_eq!(u[0]["locations"], json!([{"path": "/tmp/new.txt"}]));
    assert_eq!(diffs(&last_of(&h, "w1")), [expected]);
}

#[test]
fn acp_17_a_failed_edit_gives_no_diff() {
    let mut h = Harness::new();
    let s = h.session();
    h.agent_lines(&s, &[
        start("e1", "write", json!({"path": "a", "content": "x"})),
        json!({"type": "tool_execution_end", "toolCallId": "e1", "toolName": "write", "isError": true,
            "result": {"content": [{"type": "text", "text": "denied"}]}}),
    ]);
    let done = last_of(&h, "e1");
    assert_eq!(done["status"], "failed");
    assert!(diffs(&done).is_empty(), "{done}");
}

#[test]
fn acp_17_diff_texts_are_bounded_with_the_notice() {
    let mut h = Harness::new();
    let s = h.session();
    let big = "y".repeat(100 * 1024);
    h.agent_lines(
        &s,
        &[start(
            "w1",
            "write",
            json!({"path": "/tmp/big", "content": big}),
        )],
    );
    let diff = &diffs(&h.updates()[0])[0];
    let text = diff["newText"].as_str().unwrap();
    assert_eq!(text.len(), MAX_SURFACE_BYTES);
    assert!(text.ends_with(TRUNCATION_NOTICE));
}

#[test]
fn acp_18_reads_give_locations_with_a_line() {
    let mut h = Harness::new();
    let s = h.session();
    h.agent_lines(
        &s,
        &[
            start("r1", "read", json!({"path": "src/main.rs:40-60"})),
            start(
                "r2",
                "read",
                json!({"path": "/etc/hosts", "offset": 5, "limit": 10}),
            ),
            start("r3", "read", json!({"path": "https://example.com/x"})),
            start("g1", "grep", json!({"pattern": "x", "path": "src"})),
        ],
    );
    let u = h.updates();
    assert_eq!(u[0]["kind"], "read");
    assert_eq!(
        u[0]["locations"],
        json!([{"path": "/tmp/src/main.rs", "line": 40}])
    );
    assert_eq!(
        u[1]["locations"],
        json!([{"path": "/etc/hosts", "line": 5}])
    );
    assert!(
        u[2].get("locations").is_none(),
        "a url is no location: {}",
        u[2]
    );
    assert_eq!(u[3]["kind"], "search");
    assert!(
        u[3].get("locations").is_none(),
        "a search names no file: {}",
        u[3]
    );
}

#[test]
fn acp_18_kinds_of_omp_tools_that_were_other() {
    let mut h = Harness::new();
    let s = h.session();
    let tools = [
        ("ast_grep", "search"),
        ("ast_edit", "edit"),
        ("glob", "search"),
        ("find", "search"),
        ("web_search", "fetch"),
        ("delete", "delete"),
        ("move", "move"),
        ("lsp", "read"),
        ("eval", "execute"),
        ("task", "other"),
    ];
    let frames: Vec<Value> = tools
        .iter()
        .enumerate()
        .map(|(i, (name, _))| start(&format!("t{i}"), name, json!({})))
        .collect();
    h.agent_lines(&s, &frames);
    let u = h.updates();
    for (i, (name, kind)) in tools.iter().enumerate() {
        // `other` is ACP's default kind: the schema leaves it out.
        let shown = u[i]["kind"].as_str().unwrap_or("other");
        assert_eq!(shown, *kind, "{name}");
    }
}

#[test]
fn acp_19_raw_output_is_bounded() {
    let mut h = Harness::new();
    let s = h.session();
    let big = "z".repeat(100 * 1024);
    h.agent_lines(
        &s,
        &[end(
            "b1",
            "bash",
            json!({"content": [{"type": "text", "text": big}]}),
        )],
    );
    let raw = last_of(&h, "b1")["rawOutput"].clone();
    let raw = raw.as_str().expect("cut to a string");
    assert_eq!(raw.len(), MAX_SURFACE_BYTES);
    assert!(raw.starts_with("{\"content\""));
    assert!(raw.ends_with(TRUNCATION_NOTICE));
}

#[test]
fn acp_19_raw_output_withholds_credential_uris() {
    let mut h = Harness::new();
    let s = h.session();
    let result = json!({"content": [{"type": "text", "text": "ok"}],
        "details": {"url": "https://b.s3.amazonaws.com/p?X-Amz-Signature=abc123secret"}});
    h.agent_lines(&s, &[end("f1", "fetch", result)]);
    let all = serde_json::to_string(&h.editor).unwrap();
    assert!(!all.contains("abc123secret"), "{all}");
}

#[test]
fn acp_19_pending_while_the_arguments_stream_then_in_progress() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "go");
    h.agent_lines(&s, &[toolcall_start("c1", "read")]);
    let u = h.updates();
    assert_eq!(u.len(), 1, "{u:#?}");
    assert_eq!(u[0]["sessionUpdate"], "tool_call");
    assert_eq!(u[0]["title"], "read");
    assert_eq!(u[0]["kind"], "read");
    assert_ne!(u[0]["status"], "in_progress");
    h.editor.clear();
    h.agent_lines(&s, &[toolcall_end("c1", "read", json!({"path": "a.txt"}))]);
    let u = h.updates();
    assert_eq!(u.len(), 1, "{u:#?}");
    assert_eq!(u[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(u[0]["title"], "a.txt");
    assert!(u[0].get("status").is_none(), "still pending: {}", u[0]);
    assert_eq!(u[0]["locations"], json!([{"path": "/tmp/a.txt"}]));
    assert_eq!(u[0]["rawInput"], json!({"path": "a.txt"}));
    h.editor.clear();
    h.agent_lines(&s, &[start("c1", "read", json!({"path": "a.txt"}))]);
    let u = h.updates();
    assert_eq!(u.len(), 1, "{u:#?}");
    assert_eq!(u[0]["status"], "in_progress");
}

#[test]
fn acp_19_pi_1_6_toolcall_start_names_the_call_itself() {
    let mut h = Harness::new();
    let s = h.session();
    h.agent_lines(&s, &[json!({"type": "message_update",
        "assistantMessageEvent": {"type": "toolcall_start", "contentIndex": 0, "id": "k1", "toolName": "bash"}})]);
    let u = h.updates();
    assert_eq!(u[0]["toolCallId"], "k1");
    assert_eq!(u[0]["kind"], "execute");
}

#[test]
fn acp_19_a_call_still_pending_when_the_run_ends_never_ran() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "go");
    h.agent_lines(&s, &[toolcall_start("c1", "bash"), agent_end("aborted")]);
    let done = last_of(&h, "c1");
    assert_eq!(done["sessionUpdate"], "tool_call_update");
    assert_eq!(done["status"], "failed");
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

fn partial(id: &str, name: &str, text: &str) -> Value {
    json!({"type": "tool_execution_update", "toolCallId": id, "toolName": name,
        "partialResult": text_result(text)})
}

/// A session of an editor that opted into terminal output (ACP-30), with a prompt running.
fn terminal_session() -> (Harness, String) {
    let mut h = Harness::new();
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"_meta": {"terminal_output": true}}}),
    );
    let s = h.open(2);
    h.prompt(&s, "bash echo one; sleep 2; echo two");
    h.editor.clear();
    (h, s)
}

#[test]
fn acp_29_titles_say_what_runs_with_no_prefix_to_cut_at() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "go");
    h.editor.clear();
    h.agent_lines(
        &s,
        &[
            start(
                "b",
                "bash",
                json!({"command": "echo one; sleep 2; echo two"}),
            ),
            start(
                "b2",
                "bash",
                json!({"command": "printf 'a:b'\nls", "intent": "x"}),
            ),
            start("r", "read", json!({"path": "src/a.rs:10-20"})),
            start("w", "write", json!({"path": "notes.txt", "content": "x"})),
            start("e", "edit", json!({"path": "/abs/b.rs", "edits": []})),
            start("g", "grep", json!({"pattern": "fn main"})),
            start("f", "fetch", json!({"url": "https://example.com/x"})),
            start("t", "todo", json!({})),
            start("d", "write", json!({"path": "xd://hub", "content": "{}"})),
        ],
    );
    let titles: Vec<(String, String)> = h
        .updates()
        .iter()
        .map(|u| {
            (
                u["title"].as_str().unwrap().to_owned(),
                u["kind"].as_str().unwrap_or("other").to_owned(),
            )
        })
        .collect();
    let expected = [
        ("echo one; sleep 2; echo two", "execute"),
        ("printf 'a:b' ls", "execute"),
        ("src/a.rs:10-20", "read"),
        ("notes.txt", "edit"),
        ("/abs/b.rs", "edit"),
        ("grep fn main", "search"),
        ("fetch https://example.com/x", "fetch"),
        ("todo", "think"),
        ("write xd://hub", "execute"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(t, k)| (t.to_string(), k.to_string()))
        .collect();
    assert_eq!(titles, expected);
}

#[test]
fn acp_29_omp_intent_labels_a_call_that_is_no_command_and_no_file() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "go");
    h.editor.clear();
    let with_intent = call("g", "grep", json!({"pattern": "x"}));
    let mut with_intent = with_intent;
    with_intent["intent"] = json!("Finding the callers");
    let bash = json!({"type": "toolCall", "id": "b", "name": "bash",
        "arguments": {"command": "ls"}, "intent": "Listing"});
    h.agent_lines(
        &s,
        &[
            update(json!({"type": "toolcall_end", "contentIndex": 0, "toolCall": with_intent})),
            update(json!({"type": "toolcall_end", "contentIndex": 1, "toolCall": bash})),
        ],
    );
    let u = h.updates();
    assert_eq!(u[0]["title"], "Finding the callers");
    assert_eq!(u[1]["title"], "ls", "a command's title is its command");
}

#[test]
fn acp_30_a_run_of_output_updates_in_one_read_is_one_update_of_the_last_tail() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "go");
    h.agent_lines(&s, &[start("c", "bash", json!({"command": "yes"}))]);
    h.editor.clear();
    let chatty: Vec<Value> = (1..=200)
        .map(|n| partial("c", "bash", &"y\n".repeat(n)))
        .collect();
    h.agent_lines(&s, &chatty);
    let u = h.updates();
    assert_eq!(u.len(), 1, "200 updates in one read: one to the editor");
    assert_eq!(u[0]["content"][0]["content"]["text"], "y\n".repeat(200));
    assert!(
        u[0].get("_meta").is_none(),
        "no terminal meta without the opt-in"
    );
    // The same tail again is not sent; a new one in a later read is.
    h.editor.clear();
    h.agent_lines(&s, &[partial("c", "bash", &"y\n".repeat(200))]);
    assert!(h.updates().is_empty());
    h.agent_lines(&s, &[partial("c", "bash", "z\n")]);
    assert_eq!(h.updates()[0]["content"][0]["content"]["text"], "z\n");
    // Held output goes before the next event of another kind, in order.
    h.editor.clear();
    h.agent_lines(
        &s,
        &[
            partial("c", "bash", "z\nw\n"),
            start("d", "read", json!({"path": "a.txt"})),
        ],
    );
    let u = h.updates();
    assert_eq!(u[0]["toolCallId"], "c");
    assert_eq!(u[0]["content"][0]["content"]["text"], "z\nw\n");
    assert_eq!(u[1]["toolCallId"], "d");
    // A long tail shows its end, the notice first.
    h.editor.clear();
    let long = format!("{}END\n", "x".repeat(MAX_SURFACE_BYTES));
    h.agent_lines(&s, &[partial("c", "bash", &long)]);
    let text = h.updates()[0]["content"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(text.len(), MAX_SURFACE_BYTES);
    assert!(text.starts_with(TRUNCATION_NOTICE.trim_start()));
    assert!(text.ends_with("END\n"));
}

#[test]
fn acp_30_an_editor_that_opted_in_gets_the_command_as_a_terminal() {
    let (mut h, s) = terminal_session();
    h.agent_lines(
        &s,
        &[start(
            "c",
            "bash",
            json!({"command": "echo one; sleep 2; echo two"}),
        )],
    );
    let opening = last_of(&h, "c");
    assert_eq!(opening["sessionUpdate"], "tool_call");
    assert_eq!(opening["title"], "echo one; sleep 2; echo two");
    assert_eq!(
        opening["content"],
        json!([{"type": "terminal", "terminalId": "c"}])
    );
    assert_eq!(
        opening["_meta"]["terminal_info"],
        json!({"terminal_id": "c", "cwd": "/tmp"})
    );
    // Each read's output: only the new bytes, in `_meta.terminal_output`, no content.
    h.editor.clear();
    h.agent_lines(&s, &[partial("c", "bash", "one\n")]);
    h.agent_lines(
        &s,
        &[
            partial("c", "bash", "one\n"),
            partial("c", "bash", "one\ntwo\n"),
        ],
    );
    let u = h.updates();
    assert_eq!(u.len(), 2);
    for (update, data) in u.iter().zip(["one\n", "two\n"]) {
        assert_eq!(
            update["_meta"],
            json!({"terminal_output": {"terminal_id": "c", "data": data}})
        );
        assert!(update.get("content").is_none());
        assert!(update.get("status").is_none());
    }
    // The end: the text not sent yet, the exit code from the details, the terminal kept.
    h.editor.clear();
    let result = json!({"content": [{"type": "text",
        "text": "one\ntwo\n\nCommand exited with code 2"}], "details": {"exitCode": 2}});
    h.agent_lines(
        &s,
        &[
            json!({"type": "tool_execution_end", "toolCallId": "c", "toolName": "bash",
            "result": result, "isError": true}),
        ],
    );
    let done = last_of(&h, "c");
    assert_eq!(done["status"], "failed");
    assert_eq!(
        done["content"],
        json!([{"type": "terminal", "terminalId": "c"}])
    );
    assert_eq!(
        done["_meta"]["terminal_output"],
        json!({"terminal_id": "c", "data": "\nCommand exited with code 2"})
    );
    assert_eq!(
        done["_meta"]["terminal_exit"],
        json!({"terminal_id": "c", "exit_code": 2, "signal": null})
    );
    assert_eq!(done["rawOutput"]["details"]["exitCode"], 2);
}

#[test]
fn acp_30_terminal_exit_codes_and_other_tools_stay_text() {
    let (mut h, s) = terminal_session();
    // Opened as the model streams its arguments: a terminal from the start.
    h.agent_lines(&s, &[toolcall_start("c", "bash")]);
    assert_eq!(
        last_of(&h, "c")["_meta"]["terminal_info"]["terminal_id"],
        "c"
    );
    h.agent_lines(
        &s,
        &[
            toolcall_end("c", "bash", json!({"command": "true"})),
            start("c", "bash", json!({"command": "true"})),
            end("c", "bash", text_result("(no output)")),
        ],
    );
    let done = last_of(&h, "c");
    assert_eq!(
        done["_meta"]["terminal_exit"]["exit_code"], 0,
        "success is 0"
    );
    assert_eq!(done["_meta"]["terminal_output"]["data"], "(no output)");
    // Aborted: no code in the details, none made up.
    h.agent_lines(
        &s,
        &[
            start("k", "bash", json!({"command": "sleep 9"})),
            json!({"type": "tool_execution_end", "toolCallId": "k", "toolName": "bash",
                "result": {"content": [{"type": "text", "text": "Command aborted"}],
                "details": {"exitCode": null, "cancelled": true}}, "isError": true}),
        ],
    );
    assert_eq!(
        last_of(&h, "k")["_meta"]["terminal_exit"],
        json!({"terminal_id": "k", "exit_code": null, "signal": null})
    );
    // A read is no terminal: text as ever.
    h.agent_lines(
        &s,
        &[
            start("r", "read", json!({"path": "a.txt"})),
            partial("r", "read", "partial"),
            end("r", "read", text_result("whole")),
        ],
    );
    let cards: Vec<Value> = h
        .updates()
        .into_iter()
        .filter(|u| u["toolCallId"] == "r")
        .collect();
    assert!(cards.iter().all(|u| u.get("_meta").is_none()));
    assert_eq!(cards[1]["content"][0]["content"]["text"], "partial");
}
