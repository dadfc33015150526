//! ACP-05: tool executions as `tool_call` and `tool_call_update` on the same call id,
//! their text bounded (the assistant's answer and thoughts whole), credential-bearing uris withheld (through `core::blocks`).

use crate::support as acp_support;

use acp_support::{update, Harness};
use musewire_core::acp::{MAX_SURFACE_BYTES, TRUNCATION_NOTICE};
use serde_json::{json, Value};

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

#[test]
fn acp_05_deltas_update_the_call_and_the_final_snapshot_replaces() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "bash echo hi");
    h.agent_lines(&s, &[
        json!({"type": "tool_execution_start", "toolCallId": "call-1", "toolName": "bash", "args": {"command": "echo hi"}}),
        json!({"type": "tool_execution_update", "toolCallId": "call-1", "toolName": "bash", "partialResult": text_result("h")}),
        json!({"type": "tool_execution_end", "toolCallId": "call-1", "toolName": "bash", "result": text_result("hi\n")}),
    ]);
    let u = h.updates();
    assert_eq!(u.len(), 3);
    assert_eq!(u[0]["sessionUpdate"], "tool_call");
    assert_eq!(u[0]["toolCallId"], "call-1");
    assert_eq!(u[0]["kind"], "execute");
    assert_eq!(u[0]["status"], "in_progress");
    assert_eq!(u[0]["title"], "echo hi");
    assert_eq!(u[1]["sessionUpdate"], "tool_call_update");
    assert_eq!(u[1]["toolCallId"], "call-1");
    assert_eq!(u[1]["content"][0]["content"]["text"], "h");
    assert_eq!(u[2]["toolCallId"], "call-1");
    assert_eq!(u[2]["status"], "completed");
    assert_eq!(
        u[2]["content"],
        json!([{"type": "content", "content": {"type": "text", "text": "hi\n"}}])
    );
}

#[test]
fn acp_05_absent_final_text_keeps_what_was_seen() {
    let mut h = Harness::new();
    let s = h.session();
    h.agent_lines(&s, &[
        json!({"type": "tool_execution_start", "toolCallId": "c", "toolName": "bash"}),
        json!({"type": "tool_execution_update", "toolCallId": "c", "toolName": "bash", "partialResult": text_result("seen")}),
        json!({"type": "tool_execution_end", "toolCallId": "c", "toolName": "bash", "isError": true, "result": {"content": []}}),
    ]);
    let last = h.updates().pop().unwrap();
    assert_eq!(last["status"], "failed");
    assert!(last.get("content").is_none(), "{last}");
}

#[test]
fn acp_05_update_without_start_opens_the_card_first() {
    let mut h = Harness::new();
    let s = h.session();
    h.agent_lines(&s, &[json!({"type": "tool_execution_end", "toolCallId": "z", "toolName": "read", "result": text_result("x")})]);
    let u = h.updates();
    assert_eq!(u[0]["sessionUpdate"], "tool_call");
    assert_eq!(u[0]["kind"], "read");
    assert_eq!(u[1]["toolCallId"], "z");
}

#[test]
fn acp_05_credential_uri_in_a_result_never_reaches_the_editor() {
    let mut h = Harness::new();
    let s = h.session();
    let result = json!({"content": [
        {"type": "text", "text": "see link"},
        {"type": "resource_link", "name": "photo", "uri": "https://b.s3.amazonaws.com/p?X-Amz-Signature=abc123secret"}]});
    h.agent_lines(&s, &[json!({"type": "tool_execution_end", "toolCallId": "c", "toolName": "fetch", "result": result})]);
    let all = serde_json::to_string(&h.editor).unwrap();
    assert!(!all.contains("abc123secret"), "{all}");
    assert!(all.contains("resource link \\\"photo\\\""), "{all}");
}

#[test]
fn acp_05_credential_uri_in_a_tool_title_and_raw_input_is_withheld() {
    let mut h = Harness::new();
    let s = h.session();
    h.agent_lines(&s, &[json!({"type": "tool_execution_start", "toolCallId": "c", "toolName": "bash",
        "args": {"command": "curl https://b.s3.amazonaws.com/p?X-Amz-Signature=abc123secret -o x"}})]);
    let title = h.updates()[0]["title"].as_str().unwrap().to_owned();
    assert_eq!(title, "curl [uri withheld] -o x");
    assert_eq!(
        h.updates()[0]["rawInput"]["command"],
        "curl [uri withheld] -o x"
    );
    assert!(!serde_json::to_string(&h.editor)
        .unwrap()
        .contains("abc123secret"));
}

#[test]
fn acp_05_tool_text_bounded_to_64_kib_with_a_notice() {
    let mut h = Harness::new();
    let s = h.session();
    let big = "x".repeat(200_000);
    h.agent_lines(&s, &[json!({"type": "tool_execution_end", "toolCallId": "c", "toolName": "bash", "result": text_result(&big)})]);
    let text = h.updates()[1]["content"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.len() <= MAX_SURFACE_BYTES);
    assert!(text.ends_with(TRUNCATION_NOTICE));
}

#[test]
fn acp_05_a_100_kb_answer_and_thought_arrive_whole_while_a_100_kb_tool_output_is_cut() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "say a lot");
    // What the agent says to its user is no bounded surface: a 100 KB thought and a 100 KB
    // answer, streamed as the agents stream them (many deltas) and as one delta, arrive whole.
    let piece = "word ".repeat(2_000); // 10 KB
    let mut frames =
        vec![json!({"type": "message_start", "message": {"role": "assistant", "content": []}})];
    for _ in 0..10 {
        frames.push(update(
            json!({"type": "thinking_delta", "contentIndex": 0, "delta": piece}),
        ));
    }
    for _ in 0..10 {
        frames.push(update(
            json!({"type": "text_delta", "contentIndex": 1, "delta": piece}),
        ));
    }
    let one = "z".repeat(100_000);
    frames.push(update(
        json!({"type": "text_delta", "contentIndex": 1, "delta": one}),
    ));
    h.agent_lines(&s, &frames);
    let text_of = |kind: &str| -> String {
        h.updates()
            .iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
            .collect()
    };
    let thought = text_of("agent_thought_chunk");
    assert_eq!(thought.len(), 100_000);
    assert_eq!(thought, piece.repeat(10), "the thought, whole");
    let answer = text_of("agent_message_chunk");
    assert_eq!(answer.len(), 200_000);
    assert_eq!(answer, piece.repeat(10) + &one, "the answer, whole");
    assert!(!answer.contains(TRUNCATION_NOTICE) && !thought.contains(TRUNCATION_NOTICE));
    // A completion-only thought (no deltas) is whole too.
    h.editor.clear();
    h.agent_lines(
        &s,
        &[update(
            json!({"type": "thinking_end", "contentIndex": 2, "content": one}),
        )],
    );
    assert_eq!(h.updates()[0]["content"]["text"], one.as_str());
    // A tool's 100 KB output is still cut to 64 KiB, with the notice, live and at its end:
    // live its tail shows, the notice first (ACP-30), at its end its head, the notice last.
    h.editor.clear();
    h.agent_lines(&s, &[
        json!({"type": "tool_execution_update", "toolCallId": "c", "toolName": "bash", "partialResult": text_result(&one)}),
        json!({"type": "tool_execution_end", "toolCallId": "c", "toolName": "bash", "result": text_result(&one)}),
    ]);
    let cards = h.updates();
    for card in &cards[1..] {
        let text = card["content"][0]["content"]["text"].as_str().unwrap();
        assert_eq!(
            text.len(),
            MAX_SURFACE_BYTES,
            "{}",
            &text[text.len() - 80..]
        );
        let live = card.get("status").is_none();
        if live {
            assert!(text.starts_with(TRUNCATION_NOTICE.trim_start()));
        } else {
            assert!(text.ends_with(TRUNCATION_NOTICE));
        }
    }
    assert_eq!(cards.len(), 3, "the opening, the live tail, the end");
}
