//! AGENT-07: `--approval-mode always-ask` gates the `bash`, `write` and `edit` tools with
//! omp 18.2.3's approval `select`, asked before the tool starts; `write` gates `bash` only;
//! without it nothing asks.

mod common;

use std::path::PathBuf;

use common::{types, Pair};
use musewire_agent::{ApprovalMode, Options};
use musewire_core::client::{Call, ClientEvent};
use musewire_wire::{UiRequest, UiResponse};
use serde_json::{json, Value};

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "musewire-agent-approval-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn asking() -> Pair {
    with_mode(ApprovalMode::AskBeforeChanges)
}

fn with_mode(approval_mode: ApprovalMode) -> Pair {
    Pair::with_options(Options {
        approval_mode,
        ..Options::default()
    })
}

/// The script line that calls `write` on `path` with `content` (JSON-escaped).
fn write_call(path: &std::path::Path, content: &str) -> String {
    let arguments = json!({"path": path.to_str().unwrap(), "content": content});
    format!("call write {arguments}")
}

/// The script line that calls `edit` on `path`, replacing `old` with `new`.
fn edit_call(path: &std::path::Path, old: &str, new: &str) -> String {
    let arguments = json!({"path": path.to_str().unwrap(), "oldText": old, "newText": new});
    format!("call edit {arguments}")
}

/// Prompts `message` and drives until the agent asks; returns the select it sent.
fn asked(pair: &mut Pair, message: &str) -> (String, String, Vec<String>) {
    pair.events.clear();
    pair.send(json!({"type": "prompt", "message": message}));
    pair.drive();
    let request = pair.events.iter().find_map(|e| match e {
        ClientEvent::UiRequest(UiRequest::Select(select)) => Some(select.clone()),
        _ => None,
    });
    let select = request.expect("the agent asks with a select");
    assert!(select.timeout.is_none(), "omp's approval has no timeout");
    (select.id, select.title, select.options)
}

/// Answers dialog `id` with `value` and waits for the run's end; the frames of the run.
fn answer(pair: &mut Pair, id: &str, value: &str) -> Vec<Value> {
    let response = UiResponse::value(id.to_owned(), value.to_owned());
    assert!(pair.reply(Call::UiRespond(id.to_owned(), response)));
    pair.drive_until(|events| events.contains(&ClientEvent::TurnFinished));
    pair.frames()
}

fn tool_end(frames: &[Value]) -> &Value {
    frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .expect("the call ends")
}

#[test]
fn agent_07_bash_asks_omps_select_before_it_starts_and_runs_when_approved() {
    let mut pair = asking();
    let (id, title, options) = asked(&mut pair, "bash printf ok");
    assert_eq!(title, "Allow tool: bash\nCommand: printf ok");
    assert_eq!(options, ["Approve", "Deny"]);
    let before = types(&pair.frames()).join(" ");
    assert!(
        before.contains("message_end") && !before.contains("tool_execution_start"),
        "asked after the call is streamed, before it starts: {before}"
    );
    let frames = answer(&mut pair, &id, "Approve");
    let end = tool_end(&frames);
    assert_eq!(end["isError"], false);
    assert_eq!(end["result"]["content"][0]["text"], "ok");
}

#[test]
fn agent_07_a_denied_bash_does_not_run_and_says_it_was_denied() {
    let dir = scratch("denied");
    let marker = dir.join("ran");
    let mut pair = asking();
    let command = format!("touch {}", marker.display());
    let (id, _, _) = asked(&mut pair, &format!("bash {command}"));
    let frames = answer(&mut pair, &id, "Deny");
    let kinds = types(&frames);
    let at = |t: &str| kinds.iter().position(|k| *k == t).unwrap();
    assert!(at("tool_execution_start") < at("tool_execution_end"));
    let end = tool_end(&frames);
    assert_eq!(end["isError"], true);
    assert_eq!(
        end["result"]["content"][0]["text"],
        "Tool call denied by user: bash"
    );
    assert!(!marker.exists(), "a denied command does not run");
    let text = pair
        .call(json!({"type": "get_last_assistant_text"}))
        .unwrap();
    assert_eq!(text["text"], "bash failed: Tool call denied by user: bash");
}

#[test]
fn agent_07_a_long_command_is_cut_in_the_title_as_omp_cuts_it() {
    let mut pair = asking();
    let long = "x".repeat(2_005);
    let (id, title, _) = asked(&mut pair, &format!("bash echo {long}"));
    let command = format!("echo {long}");
    let shown: String = command.chars().take(2_000).collect();
    assert_eq!(
        title,
        format!("Allow tool: bash\nCommand: {shown}[…10ch elided…]")
    );
    pair.call(json!({"type": "abort"})).unwrap();
    assert!(pair
        .events
        .iter()
        .any(|e| matches!(e, ClientEvent::UiWithdrawn { id: w, .. } if *w == id)));
    assert_eq!(tool_end(&pair.frames())["isError"], true);
}

#[test]
fn agent_07_read_todo_and_the_rpc_bash_command_do_not_ask() {
    let dir = scratch("unasked");
    let file = dir.join("f.txt");
    std::fs::write(&file, "hello").unwrap();
    let mut pair = asking();
    let frames = pair.turn(&format!("read {}", file.display()));
    assert_eq!(tool_end(&frames)["isError"], false);
    let frames = pair.turn("todo a; b");
    assert_eq!(tool_end(&frames)["isError"], false);
    let asked_any = pair
        .events
        .iter()
        .any(|e| matches!(e, ClientEvent::UiRequest(_)));
    assert!(!asked_any);
    let result = pair
        .call(json!({"type": "bash", "command": "printf rpc"}))
        .unwrap();
    assert_eq!(result["output"], "rpc");
}

#[test]
fn agent_07_without_the_flag_bash_runs_unasked() {
    let mut pair = Pair::new();
    let frames = pair.turn("bash printf ok");
    assert_eq!(tool_end(&frames)["result"]["content"][0]["text"], "ok");
    assert!(!pair
        .events
        .iter()
        .any(|e| matches!(e, ClientEvent::UiRequest(_))));
    assert_eq!(
        ApprovalMode::from_flag("always-ask"),
        Some(ApprovalMode::AskBeforeChanges)
    );
    assert_eq!(
        ApprovalMode::from_flag("write"),
        Some(ApprovalMode::AskBeforeBash)
    );
    assert_eq!(ApprovalMode::from_flag("yolo"), Some(ApprovalMode::Unasked));
    assert_eq!(ApprovalMode::from_flag("never"), None);
}

#[test]
fn agent_07_write_asks_with_omps_path_and_content_lines_and_writes_when_approved() {
    let dir = scratch("write-approved");
    let file = dir.join("new.txt");
    let mut pair = asking();
    let (id, title, options) = asked(&mut pair, &write_call(&file, "one\ntwo\n"));
    assert_eq!(
        title,
        format!(
            "Allow tool: write\nPath: {}\nContent:\none\ntwo\n",
            file.display()
        )
    );
    assert_eq!(options, ["Approve", "Deny"]);
    assert!(!file.exists(), "nothing is written while asked");
    let before = types(&pair.frames()).join(" ");
    assert!(!before.contains("tool_execution_start"), "{before}");
    let frames = answer(&mut pair, &id, "Approve");
    assert_eq!(tool_end(&frames)["isError"], false);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\ntwo\n");
}

#[test]
fn agent_07_edit_asks_with_omps_file_line_and_edits_when_approved() {
    let dir = scratch("edit-approved");
    let file = dir.join("old.txt");
    std::fs::write(&file, "alpha\nbeta\n").unwrap();
    let mut pair = asking();
    let (id, title, _) = asked(&mut pair, &edit_call(&file, "beta", "gamma"));
    assert_eq!(title, format!("Allow tool: edit\nFile: {}", file.display()));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "alpha\nbeta\n");
    let frames = answer(&mut pair, &id, "Approve");
    assert_eq!(tool_end(&frames)["isError"], false);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "alpha\ngamma\n");
}

#[test]
fn agent_07_a_denied_write_or_edit_changes_no_file_and_says_it_was_denied() {
    let dir = scratch("write-denied");
    let new = dir.join("new.txt");
    let old = dir.join("old.txt");
    std::fs::write(&old, "alpha\n").unwrap();
    let mut pair = asking();
    for (name, call) in [
        ("write", write_call(&new, "fresh\n")),
        ("edit", edit_call(&old, "alpha", "omega")),
    ] {
        let (id, _, _) = asked(&mut pair, &call);
        let frames = answer(&mut pair, &id, "Deny");
        let kinds = types(&frames);
        let at = |t: &str| kinds.iter().position(|k| *k == t).unwrap();
        assert!(at("tool_execution_start") < at("tool_execution_end"));
        let end = tool_end(&frames);
        assert_eq!(end["isError"], true);
        assert_eq!(
            end["result"]["content"][0]["text"],
            format!("Tool call denied by user: {name}")
        );
    }
    assert!(!new.exists(), "a denied write writes nothing");
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "alpha\n");
}

#[test]
fn agent_07_write_and_edit_details_say_what_is_missing_and_cut_long_values_as_omp() {
    let mut pair = asking();
    let (id, title, _) = asked(&mut pair, "call write {}");
    assert_eq!(title, "Allow tool: write\nPath: (missing)\nContent:\n");
    answer(&mut pair, &id, "Deny");
    let (id, title, _) = asked(&mut pair, "call edit {}");
    assert_eq!(title, "Allow tool: edit\nFile: (unknown)");
    answer(&mut pair, &id, "Deny");
    let long = "y".repeat(2_003);
    let dir = scratch("write-long");
    let file = dir.join("long.txt");
    let (id, title, _) = asked(&mut pair, &write_call(&file, &long));
    let shown: String = long.chars().take(2_000).collect();
    assert!(
        title.ends_with(&format!("\nContent:\n{shown}[…3ch elided…]")),
        "{title}"
    );
    answer(&mut pair, &id, "Deny");
}

#[test]
fn agent_07_under_write_mode_write_and_edit_run_unasked_and_bash_asks() {
    let dir = scratch("write-mode");
    let file = dir.join("f.txt");
    let mut pair = with_mode(ApprovalMode::AskBeforeBash);
    let frames = pair.turn(&write_call(&file, "alpha\n"));
    assert_eq!(tool_end(&frames)["isError"], false);
    let frames = pair.turn(&edit_call(&file, "alpha", "beta"));
    assert_eq!(tool_end(&frames)["isError"], false);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "beta\n");
    assert!(!pair
        .events
        .iter()
        .any(|e| matches!(e, ClientEvent::UiRequest(_))));
    let (id, title, _) = asked(&mut pair, "bash printf ok");
    assert_eq!(title, "Allow tool: bash\nCommand: printf ok");
    answer(&mut pair, &id, "Approve");
}
