//! ACP-38, ACP-39: each file a `write` or `edit` changed goes to an editor that offers
//! `fs.writeTextFile` as `fs/write_text_file` after the call ends and before its card
//! completes; what is not sent, a refusal and a timeout are lines in the turn.

use crate::support as acp_support;

use std::path::PathBuf;

use crate::pinned::{
    EDITOR_WRITE_BUDGET, NOT_SENT_LABEL, REFUSED_LABEL, UNCONFIRMED_LABEL, WRITE_METHOD,
};
use acp_support::{agent_end, Harness};
use musewire_core::acp::{EditedFileFailure, Input, ReviewTicket, MAX_REVIEW_FILE_BYTES};
use serde_json::{json, Value};

/// initialize (offering `fs.writeTextFile` when `writes`) and a session in `/tmp`.
fn session(h: &mut Harness, writes: bool) -> String {
    let caps = json!({"fs": {"readTextFile": false, "writeTextFile": writes}});
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": caps}),
    );
    let id = h.open(2);
    h.editor.clear();
    id
}

fn start(id: &str, name: &str, args: Value) -> Value {
    json!({"type": "tool_execution_start", "toolCallId": id, "toolName": name, "args": args})
}

fn end(id: &str, name: &str, details: Value) -> Value {
    json!({"type": "tool_execution_end", "toolCallId": id, "toolName": name,
        "result": {"content": [{"type": "text", "text": "done"}], "details": details}})
}

/// The card's final update, if sent.
fn completed(h: &Harness, id: &str) -> Option<usize> {
    h.editor.iter().position(|m| {
        m["params"]["update"]["toolCallId"] == id && m["params"]["update"]["status"] == "completed"
    })
}

/// The `fs/write_text_file` requests sent, in order, with their place among the lines.
fn writes(h: &Harness) -> Vec<(usize, Value)> {
    h.editor
        .iter()
        .enumerate()
        .filter(|(_, m)| m["method"] == WRITE_METHOD)
        .map(|(i, m)| (i, m.clone()))
        .collect()
}

/// The turn's notice lines.
fn notices(h: &Harness) -> String {
    h.updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect()
}

/// What the driver hands back for an edited file.
type Read = Result<Vec<u8>, EditedFileFailure>;

fn read(h: &mut Harness, ticket: ReviewTicket, outcome: Read) {
    h.bridge.handle(h.now, Input::EditedFile(ticket, outcome));
    h.drain();
}

/// A `write` of `path` (pi's, the bundled agent's: the path in its arguments) ended.
fn pi_write(h: &mut Harness, s: &str, id: &str, path: &str) {
    h.agent_lines(
        s,
        &[
            start(id, "write", json!({"path": path, "content": "x"})),
            json!({"type": "tool_execution_end", "toolCallId": id, "toolName": "write",
                "result": {"content": [{"type": "text", "text": "ok"}]}}),
        ],
    );
}

#[test]
fn acp_38_a_write_reaches_the_editor_before_its_card_completes() {
    let mut h = Harness::new();
    let s = session(&mut h, true);
    h.prompt(&s, "write");
    pi_write(&mut h, &s, "w1", "notes/a.txt");
    let (ticket, cwd, path) = h.edited_reads.last().cloned().expect("the file is read");
    assert_eq!(
        (cwd, path),
        (PathBuf::from("/tmp"), PathBuf::from("/tmp/notes/a.txt"))
    );
    assert_eq!(completed(&h, "w1"), None, "held while the file goes");
    read(&mut h, ticket, Ok(b"hello\n".to_vec()));
    let sent = writes(&h);
    assert_eq!(sent.len(), 1);
    let (at, request) = &sent[0];
    assert_eq!(
        request["params"],
        json!({"sessionId": s, "path": "/tmp/notes/a.txt", "content": "hello\n"})
    );
    assert_eq!(completed(&h, "w1"), None, "held until the editor answers");
    h.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": null}));
    let done = completed(&h, "w1").expect("completed once answered");
    assert!(done > *at);
    assert_eq!(notices(&h), "", "nothing to say");
}

#[test]
fn acp_38_omps_write_and_edit_name_their_files_in_the_details() {
    let mut h = Harness::new();
    let s = session(&mut h, true);
    h.prompt(&s, "edit");
    h.agent_lines(
        &s,
        &[
            start("w1", "write", json!({"path": "new.txt", "content": "x"})),
            end("w1", "write", json!({"resolvedPath": "/tmp/new.txt"})),
            start("e1", "edit", json!({"path": "old.txt"})),
            end(
                "e1",
                "edit",
                json!({"path": "/tmp/old.txt", "diff": "…", "oldText": "a", "newText": "b"}),
            ),
        ],
    );
    let paths: Vec<PathBuf> = h.edited_reads.iter().map(|r| r.2.clone()).collect();
    assert_eq!(
        paths,
        [PathBuf::from("/tmp/new.txt"), PathBuf::from("/tmp/old.txt")]
    );
}

#[test]
fn acp_38_a_multi_file_edit_completes_once_every_file_is_answered() {
    let mut h = Harness::new();
    let s = session(&mut h, true);
    h.prompt(&s, "edit");
    let details = json!({"diff": "…", "perFileResults": [
        {"path": "/tmp/src/a.rs", "diff": "…"},
        {"path": "/tmp/src/b.rs", "diff": "…", "op": "create"},
        {"path": "/tmp/src/gone.rs", "diff": "…", "op": "delete"},
        {"path": "/tmp/src/bad.rs", "diff": "", "isError": true},
    ]});
    h.agent_lines(
        &s,
        &[
            start("e1", "edit", json!({"input": "…"})),
            end("e1", "edit", details),
        ],
    );
    let reads = h.edited_reads.clone();
    let paths: Vec<&PathBuf> = reads.iter().map(|r| &r.2).collect();
    assert_eq!(
        paths,
        [
            &PathBuf::from("/tmp/src/a.rs"),
            &PathBuf::from("/tmp/src/b.rs")
        ]
    );
    read(&mut h, reads[0].0, Ok(b"a\n".to_vec()));
    read(&mut h, reads[1].0, Ok(b"b\n".to_vec()));
    let sent = writes(&h);
    assert_eq!(sent.len(), 2);
    h.send(json!({"jsonrpc": "2.0", "id": sent[1].1["id"], "result": {}}));
    assert_eq!(completed(&h, "e1"), None, "one file still waits");
    h.send(json!({"jsonrpc": "2.0", "id": sent[0].1["id"], "result": {}}));
    assert!(completed(&h, "e1").is_some());
}

#[test]
fn acp_39_a_refused_write_is_said_and_the_card_completes() {
    let mut h = Harness::new();
    let s = session(&mut h, true);
    h.prompt(&s, "write");
    pi_write(&mut h, &s, "w1", "a.txt");
    let ticket = h.edited_reads[0].0;
    read(&mut h, ticket, Ok(b"text\n".to_vec()));
    let id = writes(&h)[0].1["id"].clone();
    h.send(json!({"jsonrpc": "2.0", "id": id,
        "error": {"code": -32603, "message": "Internal error", "data": {"details": "buffer is read-only"}}}));
    assert!(completed(&h, "w1").is_some());
    assert_eq!(
        notices(&h),
        format!(
            "[{REFUSED_LABEL}: /tmp/a.txt: Internal error (buffer is read-only); the file on disk is as the agent wrote it]\n"
        )
    );
}

#[test]
fn acp_39_an_unanswered_write_times_out_and_a_late_answer_is_dropped() {
    let mut h = Harness::new();
    let s = session(&mut h, true);
    h.prompt(&s, "write");
    pi_write(&mut h, &s, "w1", "a.txt");
    let ticket = h.edited_reads[0].0;
    read(&mut h, ticket, Ok(b"text\n".to_vec()));
    let id = writes(&h)[0].1["id"].clone();
    h.timeout(EDITOR_WRITE_BUDGET / 2);
    assert_eq!(completed(&h, "w1"), None);
    h.timeout(EDITOR_WRITE_BUDGET / 2);
    assert!(completed(&h, "w1").is_some());
    let said = notices(&h);
    assert_eq!(
        said,
        format!(
            "[{UNCONFIRMED_LABEL}: /tmp/a.txt: no answer within 10 s; the file on disk is as the agent wrote it]\n"
        )
    );
    let lines = h.editor.len();
    h.send(json!({"jsonrpc": "2.0", "id": id, "result": null}));
    assert_eq!(h.editor.len(), lines, "a late answer finds nothing");
}

#[test]
fn acp_39_large_binary_symlinked_and_missing_files_are_not_sent() {
    let mut h = Harness::new();
    let s = session(&mut h, true);
    h.prompt(&s, "write");
    let cases: [(&str, Read, &str); 6] = [
        (
            "big.txt",
            Err(EditedFileFailure::TooLarge {
                size: MAX_REVIEW_FILE_BYTES + 1,
            }),
            "it is over 1024 KiB",
        ),
        (
            "big2.txt",
            Ok(vec![b'a'; MAX_REVIEW_FILE_BYTES as usize + 1]),
            "it is over 1024 KiB",
        ),
        (
            "nul.bin",
            Ok(b"a\0b".to_vec()),
            "it is not text (it holds a NUL byte)",
        ),
        (
            "latin1.txt",
            Ok(vec![0xe9, b'\n']),
            "it is not text (it is not UTF-8)",
        ),
        (
            "link.txt",
            Err(EditedFileFailure::Symlink),
            "it is a symlink or reached through one",
        ),
        (
            "gone.txt",
            Err(EditedFileFailure::NotFound),
            "it is no longer there",
        ),
    ];
    let mut expected = String::new();
    for (n, (name, outcome, why)) in cases.into_iter().enumerate() {
        let id = format!("w{n}");
        pi_write(&mut h, &s, &id, name);
        let ticket = h.edited_reads.last().unwrap().0;
        read(&mut h, ticket, outcome);
        assert!(completed(&h, &id).is_some(), "{name}: the card completes");
        expected.push_str(&format!("[{NOT_SENT_LABEL}: /tmp/{name}: {why}]\n"));
    }
    assert!(writes(&h).is_empty(), "none of them went to the editor");
    assert_eq!(notices(&h), expected);
}

#[test]
fn acp_39_a_file_outside_the_cwd_is_neither_read_nor_sent() {
    let mut h = Harness::new();
    let s = session(&mut h, true);
    h.prompt(&s, "write");
    for (id, path) in [
        ("w1", "/etc/hosts"),
        ("w2", "../elsewhere.txt"),
        ("w3", "sub/../../x"),
    ] {
        pi_write(&mut h, &s, id, path);
        assert!(completed(&h, id).is_some(), "{path}: completed at once");
    }
    assert!(h.edited_reads.is_empty(), "never read");
    assert_eq!(
        notices(&h),
        format!(
            "[{NOT_SENT_LABEL}: /etc/hosts: it is outside the session's folder]\n\
             [{NOT_SENT_LABEL}: /elsewhere.txt: it is outside the session's folder]\n\
             [{NOT_SENT_LABEL}: /x: it is outside the session's folder]\n"
        )
    );
}

#[test]
fn acp_38_nothing_goes_without_the_editors_offer_nor_for_a_failed_call_or_a_uri() {
    let mut h = Harness::new();
    let s = session(&mut h, false);
    h.prompt(&s, "write");
    pi_write(&mut h, &s, "w1", "a.txt");
    assert!(completed(&h, "w1").is_some());
    let mut h = Harness::new();
    let s = session(&mut h, true);
    h.prompt(&s, "write");
    h.agent_lines(
        &s,
        &[
            start("w1", "write", json!({"path": "a.txt", "content": "x"})),
            json!({"type": "tool_execution_end", "toolCallId": "w1", "toolName": "write",
                "isError": true, "result": {"content": [{"type": "text", "text": "denied"}]}}),
            start(
                "w2",
                "write",
                json!({"path": "local://PLAN.md", "content": "x"}),
            ),
            end("w2", "write", json!({"resolvedPath": "/tmp/.omp/PLAN.md"})),
            start("b1", "bash", json!({"command": "echo > a.txt"})),
            end("b1", "bash", json!({})),
        ],
    );
    assert!(h.edited_reads.is_empty());
    assert!(writes(&h).is_empty());
    assert_eq!(notices(&h), "");
}

#[test]
fn acp_38_the_prompt_is_answered_after_the_held_cards() {
    let mut h = Harness::new();
    let s = session(&mut h, true);
    h.prompt(&s, "write");
    pi_write(&mut h, &s, "w1", "a.txt");
    h.agent_lines(&s, &[agent_end("stop")]);
    assert!(
        h.asked("get_session_stats").is_none(),
        "the turn's end waits for the card"
    );
    let ticket = h.edited_reads[0].0;
    read(&mut h, ticket, Ok(b"x".to_vec()));
    let id = writes(&h)[0].1["id"].clone();
    h.send(json!({"jsonrpc": "2.0", "id": id, "result": null}));
    let card = completed(&h, "w1").expect("completed");
    h.answer_stats(&s, None);
    let answer = h
        .editor
        .iter()
        .position(|m| m["id"] == json!(10))
        .expect("the prompt is answered");
    assert!(answer > card);
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "end_turn");
}

#[test]
fn acp_38_an_agent_that_exits_completes_the_held_cards() {
    let mut h = Harness::new();
    let s = session(&mut h, true);
    h.prompt(&s, "write");
    pi_write(&mut h, &s, "w1", "a.txt");
    h.agent_exit(&s);
    let card = completed(&h, "w1").expect("completed as the agent went");
    let error = h
        .editor
        .iter()
        .position(|m| m["id"] == json!(10))
        .expect("the prompt failed");
    assert!(card < error);
    let ticket = h.edited_reads[0].0;
    let lines = h.editor.len();
    read(&mut h, ticket, Ok(b"x".to_vec()));
    assert_eq!(h.editor.len(), lines, "a late read finds nothing");
}
