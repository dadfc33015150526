//! ACP-04: public reasoning becomes `agent_thought_chunk`; signatures and redacted thinking
//! never reach the editor.

use crate::support as acp_support;

use acp_support::{agent_end, update, Harness};
use serde_json::json;

fn thinking_partial() -> serde_json::Value {
    json!({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Weighing", "thinkingSignature": "SIG-SECRET-1"},
        {"type": "redactedThinking", "data": "ENCRYPTED-BLOB"}], "stopReason": "stop"})
}

#[test]
fn acp_04_thinking_deltas_become_thought_chunks_without_signatures() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "think Weighing");
    h.agent_lines(&s, &[
        update(json!({"type": "thinking_start", "contentIndex": 0, "partial": thinking_partial()})),
        update(json!({"type": "thinking_delta", "contentIndex": 0, "delta": "Weigh", "partial": thinking_partial()})),
        update(json!({"type": "thinking_delta", "contentIndex": 0, "delta": "ing", "partial": thinking_partial()})),
        update(json!({"type": "thinking_end", "contentIndex": 0, "content": "Weighing", "partial": thinking_partial()})),
        update(json!({"type": "text_delta", "contentIndex": 2, "delta": "Done"})),
        agent_end("stop"),
    ]);
    let updates = h.updates();
    let kinds: Vec<&str> = updates
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "agent_thought_chunk",
            "agent_thought_chunk",
            "agent_message_chunk"
        ]
    );
    assert_eq!(updates[0]["content"]["text"], "Weigh");
    assert_eq!(updates[1]["content"]["text"], "ing");
    let all = serde_json::to_string(&h.editor).unwrap();
    assert!(!all.contains("SIG-SECRET-1"));
    assert!(!all.contains("ENCRYPTED-BLOB"));
}

#[test]
fn acp_04_completion_only_summary_is_shown_once_in_part_order() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "x");
    h.agent_lines(
        &s,
        &[
            json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
            update(json!({"type": "thinking_start", "contentIndex": 0})),
            update(json!({"type": "thinking_end", "contentIndex": 0, "content": "summary one"})),
            update(json!({"type": "thinking_delta", "contentIndex": 1, "delta": "streamed"})),
            update(json!({"type": "thinking_end", "contentIndex": 1, "content": "streamed"})),
            agent_end("stop"),
        ],
    );
    let texts: Vec<String> = h
        .updates()
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(texts, ["summary one", "streamed"]);
}
