//! The reference agent's shell commands and history, driven in memory by a `Client`: the RPC
//! `bash` answered after later commands (CALL-01) and aborted (CALL-05), its output kept
//! whole and chunked over 1 MiB (FRAME-11), the history paged exactly (PAGE-01..06) and read
//! whole by the client (PAGE-07), and `new_session` making old cursors stale (PAGE-04).

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::Pair;
use musewire_core::client::{ClientEvent, HistorySource};
use serde_json::{json, Value};

/// A file a test's shell command touches once it has printed what comes before it, so the
/// test waits for that instead of guessing how long the shell takes to get there.
fn marker(name: &str) -> PathBuf {
    let file = format!("musewire-agent-bash-{}-{name}", std::process::id());
    std::env::temp_dir().join(file)
}

/// Waits (a minute at most, for a busy machine) until the shell touched `marker`.
fn reached(marker: &Path) {
    let started = Instant::now();
    while !marker.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the shell did not reach {}",
            marker.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = std::fs::remove_file(marker);
}

#[test]
fn call_01_05_bash_is_answered_after_later_commands_and_abort_bash_cancels_it() {
    let mut pair = Pair::new();
    let marker = marker("started");
    let command = format!(
        "echo started; touch '{}'; sleep 30; echo never",
        marker.display()
    );
    let bash = pair.send(json!({"type": "bash", "command": command}));
    // A later command is answered first (CALL-01).
    let state = pair.call(json!({"type": "get_state"})).unwrap();
    assert_eq!(state["messageCount"], 0);
    assert!(common::response(&pair.events, bash).is_none());
    // abort_bash goes out at once and kills the whole process group (CALL-05); sent once the
    // shell has said "started", in the sleep.
    reached(&marker);
    let started = Instant::now();
    pair.call(json!({"type": "abort_bash"})).unwrap();
    let data = pair.answer(bash).unwrap();
    // Well before the 30 s sleep would have ended by itself.
    assert!(started.elapsed().as_secs() < 25, "the sleep was killed");
    assert_eq!(data["cancelled"], true);
    assert_eq!(data["exitCode"], Value::Null);
    assert_eq!(data["output"], "started\n");
    let messages = pair.call(json!({"type": "get_messages"})).unwrap();
    let message = &messages["messages"][0];
    assert_eq!(message["role"], "bashExecution");
    assert_eq!(message["command"], command);
    assert_eq!(message["cancelled"], true);
}

#[test]
fn frame_11_a_bash_output_over_1_mib_is_kept_whole_and_read_back_chunked() {
    let mut pair = Pair::new();
    let command = "head -c 1500000 /dev/zero | tr '\\0' x; echo; echo done";
    let data = pair
        .call(json!({"type": "bash", "command": command}))
        .unwrap();
    let output = data["output"].as_str().unwrap();
    assert_eq!(output.len(), 1_500_000 + 6);
    assert_eq!(data["exitCode"], 0);
    assert!(
        pair.chunk_lines >= 6,
        "the response went out as rpc_chunk lines"
    );
    let (source, messages) = pair.history();
    assert_eq!(source, HistorySource::Pages);
    assert_eq!(messages.len(), 1);
    assert_eq!(
        messages[0]["output"].as_str().unwrap(),
        output,
        "kept whole"
    );
}

#[test]
fn abort_kills_the_models_bash_tool_and_ends_the_run() {
    let mut pair = Pair::new();
    pair.events.clear();
    pair.send(json!({"type": "prompt", "message": "bash sleep 30"}));
    assert_eq!(pair.app.running_jobs(), 1);
    pair.call(json!({"type": "abort"})).unwrap();
    assert!(pair.events.contains(&ClientEvent::TurnFinished));
    let frames = pair.frames();
    let end = frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["isError"], true);
    assert_eq!(
        end["result"]["content"][0]["text"],
        "Tool execution was aborted"
    );
    // The killed job finishes and is dropped; the session goes on.
    pair.drive_until(|_| true);
    let frames = pair.turn("still here");
    assert_eq!(frames.last().unwrap()["type"], "agent_end");
}

#[test]
fn abort_bash_also_stops_the_models_bash_tool_which_reports_it() {
    let mut pair = Pair::new();
    pair.events.clear();
    let marker = marker("part");
    let message = format!("bash echo part; touch '{}'; sleep 30", marker.display());
    pair.send(json!({"type": "prompt", "message": message}));
    reached(&marker);
    pair.call(json!({"type": "abort_bash"})).unwrap();
    pair.drive_until(|e| e.contains(&ClientEvent::TurnFinished));
    let text = pair
        .call(json!({"type": "get_last_assistant_text"}))
        .unwrap();
    assert_eq!(text["text"], "bash failed: part\n\n\nCommand aborted");
}

/// A history of `turns` echo runs and a few large bash outputs.
fn long_history(pair: &mut Pair) {
    for i in 0..150 {
        pair.turn(&format!("message number {i} {}", "w ".repeat(i * 7 % 300)));
    }
    for size in [400_000, 900_000] {
        let command = format!("head -c {size} /dev/zero | tr '\\0' y");
        pair.call(json!({"type": "bash", "command": command}))
            .unwrap();
    }
}

#[test]
fn page_01_02_06_07_pages_walk_the_history_exactly_as_get_messages_gives_it() {
    let mut pair = Pair::new();
    long_history(&mut pair);
    let whole = pair.call(json!({"type": "get_messages"})).unwrap()["messages"].clone();
    let whole = whole.as_array().unwrap().clone();
    assert_eq!(whole.len(), 302);
    // By hand, limit 7: every page within the limit, nextCursor absent on the last.
    let mut cursor: Option<String> = None;
    let mut walked = Vec::new();
    let mut pages = 0;
    loop {
        let mut command = json!({"type": "get_messages_page", "limit": 7});
        if let Some(c) = &cursor {
            command["cursor"] = json!(c);
        }
        let page = pair.call(command).unwrap();
        pages += 1;
        assert_eq!(page["totalMessages"], 302);
        let messages = page["messages"].as_array().unwrap();
        assert!(!messages.is_empty() && messages.len() <= 7);
        walked.extend(messages.iter().cloned());
        match page.get("nextCursor") {
            Some(next) => cursor = Some(next.as_str().unwrap().to_owned()),
            None => break,
        }
    }
    assert!(walked == whole, "the pages join to get_messages");
    assert!(pages >= 302 / 7);
    // The client's walk (limit 256, 768 KiB budget).
    let (source, messages) = pair.history();
    assert_eq!(source, HistorySource::Pages);
    assert!(messages == whole);
    // PAGE-01: the limit is checked.
    let (error, _) = pair
        .call(json!({"type": "get_messages_page", "limit": 0}))
        .unwrap_err();
    assert_eq!(error, "RPC message page limit must be between 1 and 256");
}

#[test]
fn page_03_04_new_session_makes_old_cursors_stale_and_starts_empty() {
    let mut pair = Pair::new();
    for i in 0..3 {
        pair.turn(&format!("hello {i}"));
    }
    let page = pair
        .call(json!({"type": "get_messages_page", "limit": 2}))
        .unwrap();
    let cursor = page["nextCursor"].as_str().unwrap().to_owned();
    // A new message makes it stale too.
    pair.turn("one more");
    let (error, code) = pair
        .call(json!({"type": "get_messages_page", "cursor": cursor}))
        .unwrap_err();
    assert_eq!(
        (error.as_str(), code.as_deref()),
        ("RPC message cursor is stale", Some("stale_cursor"))
    );
    let page = pair
        .call(json!({"type": "get_messages_page", "limit": 2}))
        .unwrap();
    let cursor = page["nextCursor"].as_str().unwrap().to_owned();
    let answer = pair.call(json!({"type": "new_session"})).unwrap();
    assert_eq!(answer, json!({"cancelled": false}));
    let (_, code) = pair
        .call(json!({"type": "get_messages_page", "cursor": cursor}))
        .unwrap_err();
    assert_eq!(code.as_deref(), Some("stale_cursor"));
    let state = pair.call(json!({"type": "get_state"})).unwrap();
    assert_eq!(
        (state["sessionId"].as_str(), state["messageCount"].as_u64()),
        (Some("session-2"), Some(0))
    );
    let page = pair.call(json!({"type": "get_messages_page"})).unwrap();
    assert_eq!(page, json!({"messages": [], "totalMessages": 0}));
    let (error, _) = pair
        .call(json!({"type": "get_messages_page", "cursor": "not a cursor"}))
        .unwrap_err();
    assert_eq!(error, "Invalid RPC message cursor");
}
