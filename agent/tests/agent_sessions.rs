//! Sessions on disk (AGENT-05, ours): `--session-dir DIR` keeps each session
//! in `DIR/<sessionId>.jsonl`, written as it grows; `new_session` starts a new file,
//! `switch_session` loads one back (after a restart too: the history that OUT-08's
//! stored-output metadata rides on survives), and anything that is not a session file of
//! the folder is refused. Also the I/O seam: the App's file work is handed
//! out, never done by the App. The agent restarted as a process is in
//! `drivers/cli/tests/agent_sessions.rs`.

mod common;

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use common::Pair;
use musewire_agent::disk::Disk;
use musewire_agent::io::{IoOutcome, IoWork};
use musewire_agent::Options;
use serde_json::{json, Value};

/// A fresh scratch folder for one test (its session folder is `sessions` below it, not made).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "musewire-agent-sessions-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An agent (the App, in memory) keeping its sessions in `dir`.
fn agent(dir: &Path) -> Pair {
    Pair::with_options(Options {
        session_dir: Some(dir.to_owned()),
        ..Options::default()
    })
}

fn state(pair: &mut Pair) -> Value {
    pair.call(json!({"type": "get_state"})).unwrap()
}

fn messages(pair: &mut Pair) -> Value {
    pair.call(json!({"type": "get_messages"})).unwrap()["messages"].clone()
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

/// The entries of a session file, parsed.
fn entries(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn switch(pair: &mut Pair, path: &Path) -> Result<Value, (String, Option<String>)> {
    pair.call(json!({"type": "switch_session", "sessionPath": path.to_str().unwrap()}))
}

#[test]
fn agent_05_get_state_names_the_session_file_and_new_session_makes_a_second() {
    let dir = scratch("new").join("sessions");
    let mut pair = agent(&dir);
    let first = dir.join("session-1.jsonl");
    let state1 = state(&mut pair);
    assert_eq!(state1["sessionId"], "session-1");
    assert_eq!(state1["sessionFile"], first.to_str().unwrap());
    // The folder was made 0700, the file 0600.
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&first), 0o600);
    pair.turn("hello there");
    let answer = pair.call(json!({"type": "new_session"})).unwrap();
    assert_eq!(answer, json!({"cancelled": false}));
    let second = dir.join("session-2.jsonl");
    let state2 = state(&mut pair);
    assert_eq!(state2["sessionId"], "session-2");
    assert_eq!(state2["sessionFile"], second.to_str().unwrap());
    assert_eq!(mode(&second), 0o600);
    // The first file holds its header and one entry per message, chained.
    let lines = entries(&first);
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["version"], 3);
    assert_eq!(lines[0]["id"], "session-1");
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1]["type"], "message");
    assert_eq!(lines[1]["parentId"], Value::Null);
    assert_eq!(lines[1]["message"]["role"], "user");
    assert_eq!(lines[2]["parentId"], lines[1]["id"]);
    assert_eq!(lines[2]["message"]["role"], "assistant");
    // The second holds its header only.
    assert_eq!(entries(&second).len(), 1);
}

#[test]
fn agent_05_no_session_dir_or_no_session_writes_nothing_and_names_no_file() {
    let mut pair = Pair::new();
    assert_eq!(state(&mut pair).get("sessionFile"), None);
    let dir = scratch("none").join("sessions");
    let mut pair = Pair::with_options(Options {
        session_dir: Some(dir.clone()),
        no_session: true,
        ..Options::default()
    });
    pair.turn("hello");
    let state = state(&mut pair);
    assert_eq!(state.get("sessionFile"), None);
    assert!(!dir.exists());
    let refused = switch(&mut pair, &dir.join("session-1.jsonl")).unwrap_err();
    assert!(refused.0.contains("keeps no session files"), "{refused:?}");
}

/// The history half of OUT-08: a tool result's `details` (where stored-output metadata
/// rides) come back exactly; serving the stored outputs again is branch A's.
#[test]
fn agent_05_switch_session_back_after_a_restart_restores_the_history_and_tool_details_exactly() {
    let dir = scratch("restart").join("sessions");
    let mut first = agent(&dir);
    first.turn("hello there");
    first.turn("todo write tests; merge");
    first.turn("bash printf 'out put'");
    let history = messages(&mut first);
    let bash = history
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "toolResult" && m["toolName"] == "bash")
        .unwrap();
    assert_eq!(bash["details"]["exitCode"], 0);
    let state = state(&mut first);
    let file = PathBuf::from(state["sessionFile"].as_str().unwrap());
    let todos = state["todoPhases"].clone();
    assert_eq!(todos[0]["tasks"][0]["content"], "write tests");
    drop(first);

    // Restarted on the same folder: a new id (session-1's file exists), then back.
    let mut second = agent(&dir);
    assert_eq!(self::state(&mut second)["sessionId"], "session-2");
    assert_eq!(switch(&mut second, &file), Ok(json!({"cancelled": false})));
    assert_eq!(messages(&mut second), history);
    let restored = self::state(&mut second);
    assert_eq!(restored["sessionId"], "session-1");
    assert_eq!(restored["sessionFile"], file.to_str().unwrap());
    assert_eq!(restored["todoPhases"], todos);
    assert_eq!(restored["messageCount"], history.as_array().unwrap().len());
    // The paged history reads the same (PAGE-07).
    let (_, paged) = second.history();
    assert_eq!(Value::Array(paged), history);
    // The session grows on in its file, its entries chained on from the last.
    second.turn("more");
    let grown = messages(&mut second);
    assert_eq!(
        grown.as_array().unwrap().len(),
        history.as_array().unwrap().len() + 2
    );
    let lines = entries(&file);
    let ids: Vec<&Value> = lines.iter().skip(1).map(|e| &e["id"]).collect();
    for (entry, parent) in lines.iter().skip(2).zip(&ids) {
        assert_eq!(&&entry["parentId"], parent);
    }
    let unique: std::collections::BTreeSet<_> = ids.iter().map(|id| id.to_string()).collect();
    assert_eq!(unique.len(), ids.len(), "entry ids stay unique in a file");
    drop(second);

    // A third start takes session-3, and reads the grown session back whole.
    let mut third = agent(&dir);
    assert_eq!(self::state(&mut third)["sessionId"], "session-3");
    switch(&mut third, &file).unwrap();
    assert_eq!(messages(&mut third), grown);
}

#[test]
fn agent_05_ids_skip_every_taken_name_and_depend_only_on_the_folder() {
    let dir = scratch("ids").join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    for taken in ["session-1.jsonl", "session-2.jsonl", "session-4.jsonl"] {
        std::fs::write(dir.join(taken), "").unwrap();
    }
    let mut pair = agent(&dir);
    assert_eq!(state(&mut pair)["sessionId"], "session-3");
    pair.call(json!({"type": "new_session"})).unwrap();
    assert_eq!(state(&mut pair)["sessionId"], "session-5");
    // The files that were there are untouched.
    assert_eq!(std::fs::read(dir.join("session-4.jsonl")).unwrap(), b"");
}

#[test]
fn agent_05_switch_session_refuses_anything_but_a_session_file_of_the_folder() {
    let root = scratch("refuse");
    let dir = root.join("sessions");
    let mut pair = agent(&dir);
    pair.turn("keep me");
    let before = messages(&mut pair);
    let id = state(&mut pair)["sessionId"].clone();

    // A good session file elsewhere, and one linked into the folder.
    let elsewhere = root.join("other");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let mut other = agent(&elsewhere);
    other.turn("foreign");
    let foreign = elsewhere.join("session-1.jsonl");
    symlink(&foreign, dir.join("linked.jsonl")).unwrap();
    // A corrupt file, one whose header names another session, and a directory.
    std::fs::write(
        dir.join("corrupt.jsonl"),
        "{\"type\":\"session\",\"version\":3,\"id\":\"corrupt\",\"timestamp\":\"\",\"cwd\":\"\"}\nnot json\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("renamed.jsonl"),
        "{\"type\":\"session\",\"version\":3,\"id\":\"session-1\",\"timestamp\":\"\",\"cwd\":\"\"}\n",
    )
    .unwrap();
    std::fs::create_dir(dir.join("folder.jsonl")).unwrap();

    for (path, why) in [
        (foreign.clone(), "is not in the session folder"),
        (
            dir.join("..").join("other").join("session-1.jsonl"),
            "has . or ..",
        ),
        (
            PathBuf::from("sessions/session-1.jsonl"),
            "not an absolute path",
        ),
        (dir.join("session-1.txt"), "is not a session file"),
        (dir.join("missing.jsonl"), "does not exist"),
        (dir.join("linked.jsonl"), "is a symlink"),
        (dir.join("corrupt.jsonl"), "line 2 is not a session entry"),
        (dir.join("renamed.jsonl"), "names session \"session-1\""),
        (dir.join("folder.jsonl"), "is not a regular file"),
    ] {
        let (error, _) = switch(&mut pair, &path).unwrap_err();
        assert!(error.contains(why), "{}: {error}", path.display());
    }
    // Nothing changed.
    assert_eq!(messages(&mut pair), before);
    assert_eq!(state(&mut pair)["sessionId"], id);
}

#[test]
fn agent_05_a_torn_last_line_is_dropped_and_cut_back_before_the_session_grows() {
    let dir = scratch("torn").join("sessions");
    let mut first = agent(&dir);
    first.turn("whole");
    let history = messages(&mut first);
    drop(first);
    let file = dir.join("session-1.jsonl");
    let whole = std::fs::read(&file).unwrap();
    let mut torn = whole.clone();
    torn.extend_from_slice(br#"{"type":"message","id":"entry-9","parentId":"#);
    std::fs::write(&file, &torn).unwrap();

    let mut second = agent(&dir);
    switch(&mut second, &file).unwrap();
    assert_eq!(messages(&mut second), history);
    assert_eq!(std::fs::read(&file).unwrap(), whole, "cut back");
    second.turn("after");
    let grown = messages(&mut second);
    let mut third = agent(&dir);
    switch(&mut third, &file).unwrap();
    assert_eq!(messages(&mut third), grown);
}

#[test]
fn agent_05_a_symlink_planted_at_a_session_file_is_never_written_through() {
    let root = scratch("leaf");
    let dir = root.join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let target = root.join("target");
    std::fs::write(&target, "precious").unwrap();
    // Planted where the first session's file would go: that name is taken, not followed.
    symlink(&target, dir.join("session-1.jsonl")).unwrap();
    let mut pair = agent(&dir);
    assert_eq!(state(&mut pair)["sessionId"], "session-2");
    pair.turn("hello");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    // Swapped in for the open session's file: the append fails, and the agent stops
    // writing it (get_state no longer names it) rather than follow the link.
    let file = dir.join("session-2.jsonl");
    std::fs::remove_file(&file).unwrap();
    symlink(&target, &file).unwrap();
    pair.turn("again");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    assert_eq!(state(&mut pair).get("sessionFile"), None);
    pair.turn("and again");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
}

#[test]
fn agent_05_a_symlink_planted_at_the_folder_is_refused_and_never_followed() {
    let root = scratch("folder");
    let real = root.join("real");
    std::fs::create_dir_all(&real).unwrap();
    let link = root.join("link");
    symlink(&real, &link).unwrap();
    let error = Disk::new(Some(&link)).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("is a symlink or not a directory"),
        "{error}"
    );
    // A folder swapped for a symlink once open: the work goes on in the folder first
    // opened, nothing reaches the link's target.
    let dir = root.join("sessions");
    let mut pair = agent(&dir);
    let moved = root.join("moved");
    std::fs::rename(&dir, &moved).unwrap();
    symlink(&real, &dir).unwrap();
    pair.turn("hello");
    assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0);
    assert_eq!(entries(&moved.join("session-1.jsonl")).len(), 3);
}

#[test]
fn agent_05_the_app_hands_its_file_work_out_and_does_none_itself() {
    let dir = scratch("seam").join("sessions");
    let mut pair = Pair::with_options(Options {
        session_dir: Some(dir.clone()),
        ..Options::default()
    });
    pair.manual_io = true;
    // The session file was made by the pair's first drive; from now on the test answers
    // the App's file work.
    pair.events.clear();
    let request = pair
        .request(musewire_core::client::Call::Send(common::cmd(
            json!({"type": "prompt", "message": "read /no/such/file"}),
        )))
        .unwrap();
    pair.drive();
    let mut work = Vec::new();
    while let Some(io) = pair.app.poll_io() {
        work.push(io);
    }
    let read = work
        .iter()
        .find(|io| matches!(io.work, IoWork::ReadFile { .. }))
        .expect("the read is handed out");
    assert!(
        matches!(&read.work, IoWork::ReadFile { path, .. } if path == Path::new("/no/such/file"))
    );
    assert!(work.iter().any(
        |io| matches!(&io.work, IoWork::AppendSession { name, .. } if name == "session-1.jsonl")
    ));
    // The test answers the read; the run goes on with that answer.
    pair.app.handle_io(
        pair.now,
        read.id,
        IoOutcome::Failed("answered by the test".into()),
    );
    pair.drive_until(|events| events.contains(&musewire_core::client::ClientEvent::TurnFinished));
    assert_eq!(
        common::response(&pair.events, request),
        Some(Ok(Value::Null))
    );
    let end = pair
        .frames()
        .into_iter()
        .find(|f| f["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["isError"], true);
    assert_eq!(end["result"]["content"][0]["text"], "answered by the test");
}

#[test]
fn read_offset_and_limit_read_lines_as_omp_s_read_does() {
    let dir = scratch("read");
    let file = dir.join("lines.txt");
    std::fs::write(&file, "one\ntwo\nthree\nfour\nfive\n").unwrap();
    let mut pair = Pair::new();
    let tool = |pair: &mut Pair, args: Value| {
        let frames = pair.turn(&format!("call read {args}"));
        let end = frames
            .into_iter()
            .find(|f| f["type"] == "tool_execution_end")
            .unwrap();
        end["result"].clone()
    };
    let path = file.to_str().unwrap();
    let result = tool(&mut pair, json!({"path": path, "offset": 2, "limit": 2}));
    assert_eq!(
        result["content"][0]["text"],
        "two\nthree\n\n\n[2 more lines in file. Use offset=4 to continue.]"
    );
    assert_eq!(result["details"]["offset"], 2);
    assert_eq!(result["details"]["lines"], 2);
    assert_eq!(result["details"]["totalLines"], 5);
    let result = tool(&mut pair, json!({"path": path, "offset": 4}));
    assert_eq!(result["content"][0]["text"], "four\nfive\n");
    let result = tool(&mut pair, json!({"path": path, "limit": 1}));
    assert_eq!(
        result["content"][0]["text"],
        "one\n\n\n[4 more lines in file. Use offset=2 to continue.]"
    );
    // Past the end, and a bad offset, are errors.
    let frames = pair.turn(&format!("call read {}", json!({"path": path, "offset": 9})));
    let end = frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["isError"], true);
    assert_eq!(
        end["result"]["content"][0]["text"],
        "Offset 9 is beyond end of file (5 lines total)"
    );
    let frames = pair.turn(&format!(
        "call read {}",
        json!({"path": path, "offset": -1})
    ));
    let end = frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["isError"], true);
    assert_eq!(
        end["result"]["content"][0]["text"],
        "read: \"offset\" must be a non-negative integer"
    );
}
