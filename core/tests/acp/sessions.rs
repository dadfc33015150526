//! ACP-25: `session/close`, `session/resume`, and `session/load` of a session that is open.

use crate::support as acp_support;

use crate::pinned::MAX_LIST_TITLE_CHARS;
use acp_support::{model, Harness};
use musewire_core::acp::{
    Bridge, BridgeConfig, Input, SessionFile, SessionFolderError, SESSION_FILE_HEAD_BYTES,
    SESSION_FILE_TAIL_BYTES,
};
use serde_json::{json, Value};

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

#[test]
fn acp_25_initialize_advertises_close_always_and_resume_with_a_session_folder() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    let caps = &h.answer(1).unwrap()["result"]["agentCapabilities"]["sessionCapabilities"];
    assert!(caps["close"].is_object(), "{caps}");
    assert!(caps.get("resume").is_none_or(Value::is_null), "{caps}");
    let mut h = with_folder();
    let caps = &h.answer(1).unwrap()["result"]["agentCapabilities"]["sessionCapabilities"];
    assert!(
        caps["close"].is_object() && caps["resume"].is_object(),
        "{caps}"
    );
    h.editor.clear();
}

#[test]
fn acp_25_close_ends_the_turn_stops_the_agent_and_forgets_the_session() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "long");
    h.request(20, "session/close", json!({"sessionId": s}));
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "cancelled");
    assert!(h.answer(20).unwrap()["result"].is_object());
    assert_eq!(
        h.closed,
        std::slice::from_ref(&s),
        "its agent's stdin is closed (ACP-12)"
    );
    // Later requests to it: a clear error.
    h.request(
        21,
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "again"}]}),
    );
    assert_eq!(h.answer(21).unwrap()["error"]["code"], -32002);
    h.request(22, "session/close", json!({"sessionId": s}));
    assert_eq!(h.answer(22).unwrap()["error"]["code"], -32002);
    // Other sessions go on.
    let other = h.open(30);
    h.prompt(&other, "hi");
}

#[test]
fn acp_25_resume_switches_without_replay_and_answers_with_the_options() {
    let mut h = with_folder();
    h.request(
        2,
        "session/resume",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    let key = h.spawned[0].0.clone();
    assert_eq!(h.spawned[0].1, std::path::PathBuf::from("/work"));
    h.agent_lines(
        &key,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    let switch = h.asked("switch_session").expect("switched");
    assert_eq!(switch["sessionPath"], "/state/sessions/s-1.jsonl");
    answer_last(&mut h, &key, "switch_session", json!({"cancelled": false}));
    answer_last(
        &mut h,
        &key,
        "get_state",
        json!({"model": model("scripted"), "thinkingLevel": "low", "sessionName": "My work"}),
    );
    answer_last(
        &mut h,
        &key,
        "get_available_models",
        json!({"models": [model("scripted")]}),
    );
    let answer = h.answer(2).expect("resumed");
    let options = answer["result"]["configOptions"].as_array().unwrap();
    // ACP-35: the mode, then the model and the thinking level.
    assert_eq!(options.len(), 3, "{answer}");
    // No history was read: no replay.
    assert!(h.asked("get_messages_page").is_none() && h.asked("get_messages").is_none());
    let titles: Vec<&Value> = h
        .editor
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "session_info_update")
        .collect();
    assert_eq!(titles[0]["params"]["update"]["title"], "My work");
    assert_eq!(titles[0]["params"]["sessionId"], "s-1");
    // The session is usable under its id, and a second resume is answered at once.
    h.prompt("s-1", "hi");
    h.request(
        3,
        "session/resume",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    assert_eq!(h.spawned.len(), 1);
    assert!(h.answer(3).unwrap()["result"]["configOptions"].is_array());
}

#[test]
fn acp_25_resume_refuses_what_load_refuses() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.request(
        2,
        "session/resume",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    assert_eq!(h.answer(2).unwrap()["error"]["code"], -32601);
    let mut h = with_folder();
    h.request(
        3,
        "session/resume",
        json!({"sessionId": "../etc/passwd", "cwd": "/work", "mcpServers": []}),
    );
    assert_eq!(h.answer(3).unwrap()["error"]["code"], -32002);
    h.request(
        4,
        "session/resume",
        json!({"sessionId": "s-1", "cwd": "relative", "mcpServers": []}),
    );
    assert_eq!(h.answer(4).unwrap()["error"]["code"], -32602);
    assert!(h.spawned.is_empty());
}

#[test]
fn acp_25_loading_an_open_session_loads_it_again_in_a_new_agent() {
    let mut h = with_folder();
    h.request(
        2,
        "session/resume",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    let first = h.spawned[0].0.clone();
    h.answer_opening_after_switch(&first);
    assert!(h.answer(2).unwrap()["result"].is_object());
    h.prompt("s-1", "running");
    h.request(
        5,
        "session/load",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    // The open one ends: its turn cancelled, its agent stopped; a new agent loads it.
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "cancelled");
    assert_eq!(h.closed, std::slice::from_ref(&first));
    assert_eq!(h.spawned.len(), 2);
    let second = h.spawned[1].0.clone();
    h.agent_lines(
        &second,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    let switch = h.asked("switch_session").unwrap();
    assert_eq!(switch["sessionPath"], "/state/sessions/s-1.jsonl");
    assert!(h.answer(5).is_none(), "the load goes on: no -32600");
}

fn session_file(name: &str, modified_ms: u64, cwd: &str, title: &str) -> SessionFile {
    SessionFile {
        name: name.into(),
        modified_ms: Some(modified_ms),
        head: format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"cwd\":\"{cwd}\",\"title\":\"{title}\"}}\n{}\n",
            user_line("m1", None, "hello")
        )
        .into_bytes(),
        tail: Vec::new(),
    }
}

/// A `message` entry of a user's text, as omp, pi and the bundled agent write it.
fn user_line(id: &str, parent: Option<&str>, text: &str) -> String {
    json!({"type": "message", "id": id, "parentId": parent,
        "timestamp": "2026-12-01T10:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}],
            "timestamp": 1_796_119_201_000u64}})
    .to_string()
}

/// A user's message as omp 18.2.3 writes it: with `attribution: "user"`.
fn omp_user_line(id: &str, parent: &str, text: &str) -> String {
    let mut line: Value = serde_json::from_str(&user_line(id, Some(parent), text)).unwrap();
    line["message"]["attribution"] = json!("user");
    line.to_string()
}

fn assistant_line(id: &str, parent: &str, text: &str) -> String {
    json!({"type": "message", "id": id, "parentId": parent,
        "timestamp": "2026-12-01T10:00:02.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}],
            "api": "openai-completions", "provider": "fake", "model": "fake-model",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": 1_796_119_202_000u64}})
    .to_string()
}

/// omp 18's fixed-width first line (256 bytes): the session's title, empty when it has none.
fn omp_title_slot(title: &str) -> String {
    let line = json!({"type": "title", "v": 1, "title": title, "source": "auto",
        "updatedAt": "2026-12-01T10:00:03.000Z", "pad": ""})
    .to_string();
    let pad = " ".repeat(255usize.saturating_sub(line.len()));
    line.replace("\"pad\":\"\"", &format!("\"pad\":\"{pad}\""))
}

/// omp 18.2.3's file (as `musewire acp --session-dir DIR -- omp --mode rpc` leaves it): the
/// title slot, the header, the model and thinking level, then the conversation (omp writes
/// the file at its first assistant message).
fn omp_file(id: &str, title: &str, messages: &[String]) -> String {
    let mut lines = vec![
        omp_title_slot(title),
        json!({"type": "session", "version": 3, "id": id,
            "timestamp": "2026-12-01T10:00:00.000Z", "cwd": "/w"})
        .to_string(),
        json!({"type": "model_change", "id": "a0000001", "parentId": null,
            "timestamp": "2026-12-01T10:00:00.100Z", "model": "fake/fake-model",
            "resolvedModelIsFallback": false})
        .to_string(),
        json!({"type": "thinking_level_change", "id": "a0000002", "parentId": "a0000001",
            "timestamp": "2026-12-01T10:00:00.200Z", "thinkingLevel": null, "configured": null})
        .to_string(),
    ];
    lines.extend(messages.iter().cloned());
    lines.join("\n") + "\n"
}

/// pi's file (0.73.1 and 1.6.0 alike): the header, the model and thinking level, the
/// conversation, and `session_info` entries when the session is named.
fn pi_file(id: &str, rest: &[String]) -> String {
    let mut lines = vec![
        json!({"type": "session", "version": 3, "id": id,
            "timestamp": "2026-12-01T10:00:00.000Z", "cwd": "/w"})
        .to_string(),
        json!({"type": "model_change", "id": "b0000001", "parentId": null,
            "timestamp": "2026-12-01T10:00:00.100Z", "provider": "fake", "modelId": "fake-model"})
        .to_string(),
        json!({"type": "thinking_level_change", "id": "b0000002", "parentId": "b0000001",
            "timestamp": "2026-12-01T10:00:00.200Z", "thinkingLevel": "off"})
        .to_string(),
    ];
    lines.extend(rest.iter().cloned());
    lines.join("\n") + "\n"
}

fn pi_name(id: &str, parent: &str, name: &str) -> String {
    json!({"type": "session_info", "id": id, "parentId": parent,
        "timestamp": "2026-12-01T10:00:04.000Z", "name": name})
    .to_string()
}

/// The bundled agent's file (`musewire agent --session-dir`): made with its header when the
/// session starts, a `message` entry per history message.
fn bundled_file(id: &str, messages: &[String]) -> String {
    let mut lines = vec![json!({"type": "session", "version": 3, "id": id,
        "timestamp": "2026-12-01T10:00:00.000Z", "cwd": "/w"})
    .to_string()];
    lines.extend(messages.iter().cloned());
    lines.join("\n") + "\n"
}

/// A file as the driver reads it: its head, and its tail when it is longer.
fn read_as_driver(name: &str, modified_ms: u64, text: &str) -> SessionFile {
    let bytes = text.as_bytes();
    let head = bytes[..bytes.len().min(SESSION_FILE_HEAD_BYTES)].to_vec();
    let tail = if bytes.len() > SESSION_FILE_HEAD_BYTES {
        let from = bytes
            .len()
            .saturating_sub(SESSION_FILE_TAIL_BYTES)
            .max(SESSION_FILE_HEAD_BYTES);
        bytes[from..].to_vec()
    } else {
        Vec::new()
    };
    SessionFile {
        name: name.into(),
        modified_ms: Some(modified_ms),
        head,
        tail,
    }
}

/// The folder listed: each session's id and title, newest first.
fn listed(files: Vec<SessionFile>) -> Vec<(String, Option<String>)> {
    let mut h = with_folder();
    h.request(2, "session/list", json!({}));
    h.bridge.handle(h.now, Input::SessionFolder(Ok(files)));
    h.drain();
    let answer = h.answer(2).unwrap();
    answer["result"]["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .map(|s| {
            (
                s["sessionId"].as_str().unwrap().to_owned(),
                s["title"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

fn titled(id: &str, title: &str) -> (String, Option<String>) {
    (id.to_owned(), Some(title.to_owned()))
}

#[test]
fn acp_26_list_titles_omp_sessions_by_name_else_first_user_message() {
    let turn = |text: &str| {
        [
            omp_user_line("c0000001", "a0000002", text),
            assistant_line("c0000002", "c0000001", "done"),
        ]
    };
    let renamed = {
        let mut lines = turn("rename me").to_vec();
        lines.push(
            json!({"type": "title_change", "id": "c0000003", "parentId": "c0000002",
                "timestamp": "2026-12-01T10:00:05.000Z", "title": "Renamed later"})
            .to_string(),
        );
        lines
    };
    let files = vec![
        read_as_driver(
            "named.jsonl",
            5,
            &omp_file("named", "Parser fix", &turn("fix it")),
        ),
        read_as_driver(
            "unnamed.jsonl",
            4,
            &omp_file("unnamed", "", &turn("Why is the build red?")),
        ),
        read_as_driver("renamed.jsonl", 3, &omp_file("renamed", "", &renamed)),
        // omp writes no file before its first assistant message; a file with its header only
        // is not a session anyone talked to.
        read_as_driver("empty.jsonl", 6, &omp_file("empty", "", &[])),
    ];
    assert_eq!(
        listed(files),
        [
            titled("named", "Parser fix"),
            titled("unnamed", "Why is the build red?"),
            titled("renamed", "Renamed later"),
        ]
    );
}

#[test]
fn acp_26_list_titles_pi_sessions_by_session_info_name_else_first_user_message() {
    let turn = [
        user_line("d0000001", Some("b0000002"), "Summarise   the\n\nREADME"),
        assistant_line("d0000002", "d0000001", "ok"),
    ];
    let named = [
        turn.to_vec(),
        vec![pi_name("d0000003", "d0000002", "Docs pass")],
    ]
    .concat();
    // pi 1.6: an empty name clears the session's name.
    let cleared = [named.clone(), vec![pi_name("d0000004", "d0000003", "")]].concat();
    let files = vec![
        read_as_driver("p-named.jsonl", 3, &pi_file("p-named", &named)),
        read_as_driver("p-unnamed.jsonl", 2, &pi_file("p-unnamed", &turn)),
        read_as_driver("p-cleared.jsonl", 1, &pi_file("p-cleared", &cleared)),
    ];
    assert_eq!(
        listed(files),
        [
            titled("p-named", "Docs pass"),
            titled("p-unnamed", "Summarise the README"),
            titled("p-cleared", "Summarise the README"),
        ]
    );
}

#[test]
fn acp_26_list_leaves_out_a_bundled_session_never_prompted() {
    let files = vec![
        read_as_driver(
            "session-1.jsonl",
            1,
            &bundled_file(
                "session-1",
                &[
                    user_line("entry-1", None, "hello from a"),
                    assistant_line("entry-2", "entry-1", "hello from a"),
                ],
            ),
        ),
        read_as_driver("session-2.jsonl", 2, &bundled_file("session-2", &[])),
    ];
    assert_eq!(listed(files), [titled("session-1", "hello from a")]);
}

#[test]
fn acp_26_list_titles_are_one_bounded_line_without_credentials() {
    let long = format!("Refactor {}the end", "the session listing code ".repeat(20));
    let files = vec![
        read_as_driver(
            "long.jsonl",
            3,
            &bundled_file("long", &[user_line("entry-1", None, &long)]),
        ),
        read_as_driver(
            "secret.jsonl",
            2,
            &bundled_file(
                "secret",
                &[user_line(
                    "entry-1",
                    None,
                    "clone https://bob:hunter2@git.example.com/r.git\nthen build",
                )],
            ),
        ),
        // An image only, then text: the first user text names the session.
        read_as_driver(
            "image.jsonl",
            1,
            &bundled_file(
                "image",
                &[
                    json!({"type": "message", "id": "entry-1", "parentId": null,
                        "timestamp": "2026-12-01T10:00:01.000Z",
                        "message": {"role": "user", "content": [
                            {"type": "image", "data": "aGk=", "mimeType": "image/png"}]}})
                    .to_string(),
                    user_line("entry-2", Some("entry-1"), "what is in it?"),
                ],
            ),
        ),
    ];
    let got = listed(files);
    let title = got[0].1.clone().unwrap();
    assert!(title.chars().count() <= MAX_LIST_TITLE_CHARS, "{title}");
    assert!(
        title.starts_with("Refactor the session listing code the"),
        "{title}"
    );
    assert!(title.ends_with('…'), "{title}");
    assert_eq!(got[1], titled("secret", "clone [uri withheld] then build"));
    assert_eq!(got[2], titled("image", "what is in it?"));
}

#[test]
fn acp_26_list_reads_a_first_message_cut_at_the_head_up_to_the_cut() {
    // A first message longer than the head: its text is read up to the head's bound, the
    // session listed and titled from it.
    let huge = format!("Review this log {}", "x".repeat(SESSION_FILE_HEAD_BYTES));
    let pasted = pi_file(
        "pasted",
        &[
            user_line("d0000001", Some("b0000002"), &huge),
            assistant_line("d0000002", "d0000001", "ok"),
        ],
    );
    // A session whose lines before its first message fill the head: listed, untitled.
    let filler = json!({"type": "custom", "id": "e0000001", "parentId": "b0000002",
        "timestamp": "2026-12-01T10:00:00.300Z", "customType": "big",
        "data": {"keys": "k".repeat(SESSION_FILE_HEAD_BYTES)}})
    .to_string();
    let late = pi_file(
        "late",
        &[
            filler,
            user_line("d0000001", Some("e0000001"), "named late"),
        ],
    );
    let files = vec![
        read_as_driver("pasted.jsonl", 2, &pasted),
        read_as_driver("late.jsonl", 1, &late),
    ];
    assert!(files[0].head.len() == SESSION_FILE_HEAD_BYTES && !files[0].tail.is_empty());
    assert_eq!(
        listed(files),
        [
            titled("pasted", "Review this log"),
            ("late".to_owned(), None)
        ]
    );
}

#[test]
fn acp_26_list_reads_the_folder_once_and_answers_every_waiting_list() {
    let mut h = with_folder();
    let caps = &h.answer(1).unwrap()["result"]["agentCapabilities"]["sessionCapabilities"];
    assert!(caps["list"].is_object(), "{caps}");
    h.request(2, "session/list", json!({}));
    h.request(3, "session/list", json!({"cwd": "/b"}));
    assert_eq!(
        h.folder_reads,
        [std::path::PathBuf::from("/state/sessions")],
        "one read for both"
    );
    assert!(h.answer(2).is_none());
    h.bridge.handle(
        h.now,
        Input::SessionFolder(Ok(vec![
            session_file("old.jsonl", 1_700_000_000_000, "/a", "Old work"),
            session_file("new.jsonl", 1_700_000_060_000, "/b", "New work"),
        ])),
    );
    h.drain();
    let all = &h.answer(2).unwrap()["result"]["sessions"];
    assert_eq!(all[0]["sessionId"], "new");
    assert_eq!(all[0]["cwd"], "/b");
    assert_eq!(all[0]["title"], "New work");
    assert_eq!(all[0]["updatedAt"], "2023-11-14T22:14:20.000Z");
    assert_eq!(all[1]["sessionId"], "old");
    let b = h.answer(3).unwrap()["result"]["sessions"].clone();
    assert_eq!(b.as_array().unwrap().len(), 1, "{b}");
    // A listed session loads by its id.
    h.request(
        4,
        "session/load",
        json!({"sessionId": "new", "cwd": "/b", "mcpServers": []}),
    );
    assert_eq!(h.spawned.len(), 1);
}

#[test]
fn acp_26_list_failures_are_typed() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.request(2, "session/list", json!({}));
    assert_eq!(h.answer(2).unwrap()["error"]["code"], -32601);
    let mut h = with_folder();
    h.request(3, "session/list", json!({"cwd": "relative"}));
    assert_eq!(h.answer(3).unwrap()["error"]["code"], -32602);
    h.request(4, "session/list", json!({"cursor": "not-ours"}));
    h.bridge.handle(h.now, Input::SessionFolder(Ok(Vec::new())));
    h.drain();
    assert_eq!(h.answer(4).unwrap()["error"]["code"], -32602);
    h.request(5, "session/list", json!({}));
    let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
    let error = SessionFolderError::io(std::path::Path::new("/sessions"), &denied);
    h.bridge.handle(h.now, Input::SessionFolder(Err(error)));
    h.drain();
    let error = &h.answer(5).unwrap()["error"];
    assert_eq!(error["code"], -32603);
    assert!(error["data"]
        .as_str()
        .unwrap()
        .contains("permission denied"));
}
