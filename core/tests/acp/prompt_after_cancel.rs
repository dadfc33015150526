//! ACP-28 (ours): a prompt that comes after `session/cancel`, before the cancelled prompt is
//! answered (codecompanion.nvim sends both at once), is the next turn: held, not queued as a
//! follow-up, sent as a prompt of its own once the cancelled run has ended and its prompt is
//! answered `cancelled`, and answered with its own stop reason.

use crate::support as acp_support;

use crate::pinned::MAX_QUEUED_PROMPTS;
use acp_support::{agent_end, assistant, Harness};
use serde_json::{json, Value};

/// A user message's `message_start`, as omp and pi stream it.
fn user_starts(text: &str) -> Value {
    json!({"type": "message_start",
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}})
}

/// An assistant message streamed: start, a text delta, end.
fn says(text: &str) -> [Value; 3] {
    [
        json!({"type": "message_start", "message": assistant("", "stop")}),
        acp_support::update(json!({"type": "text_delta", "contentIndex": 0, "delta": text})),
        json!({"type": "message_end", "message": assistant(text, "stop")}),
    ]
}

/// The editor's prompt `id` with this text.
fn prompt(h: &mut Harness, session: &str, id: u64, text: &str) {
    h.request(
        id,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    );
}

fn cancel(h: &mut Harness, session: &str) {
    h.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}));
}

/// The `prompt` commands the bridge sent, in order.
fn prompts_sent(h: &Harness) -> Vec<Value> {
    h.agent
        .iter()
        .filter(|m| m["type"] == "prompt")
        .cloned()
        .collect()
}

/// The text of the `agent_message_chunk`s sent so far.
fn chunks(h: &Harness) -> String {
    h.updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

/// The ids of the editor's requests answered so far, in order.
fn answered(h: &Harness) -> Vec<u64> {
    h.editor
        .iter()
        .filter(|m| m.get("method").is_none())
        .filter_map(|m| m["id"].as_u64())
        .collect()
}

fn stop_reason(h: &Harness, id: u64) -> Value {
    let answer = h
        .answer(id)
        .unwrap_or_else(|| panic!("prompt {id} answered"));
    answer["result"]["stopReason"].clone()
}

/// A session with prompt 10 ("first") running (its user message seen), then cancelled, and
/// prompt 11 ("second") sent right after the cancel.
fn cancelled_then_prompted() -> (Harness, String) {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "first");
    h.agent_lines(&s, &[user_starts("first")]);
    cancel(&mut h, &s);
    prompt(&mut h, &s, 11, "second");
    (h, s)
}

/// The cancelled run ends as omp and pi end it (`agent_end`, the last message aborted) and
/// its usage is asked (ACP-02; failed here: the bridge's own sum).
fn cancelled_run_ends(h: &mut Harness, s: &str) {
    h.agent_lines(s, &[agent_end("aborted")]);
    h.answer_stats(s, None);
}

/// The agent accepts the last prompt the bridge sent and runs it to its end, saying `text`.
fn runs_last_prompt(h: &mut Harness, s: &str, text: &str) {
    let sent = prompts_sent(h).pop().expect("a prompt was sent");
    h.agent_lines(
        s,
        &[
            json!({"id": sent["id"], "type": "response", "command": "prompt", "success": true}),
            json!({"type": "agent_start"}),
            user_starts(sent["message"].as_str().unwrap()),
        ],
    );
    h.agent_lines(s, &says(text));
    h.agent_lines(s, &[agent_end("stop")]);
    h.answer_stats(s, None);
}

#[test]
fn acp_28_a_prompt_right_after_a_cancel_is_the_next_turn_not_a_follow_up() {
    let (mut h, s) = cancelled_then_prompted();
    // One abort; the prompt is held: nothing sent for it, no "Queued" note, nothing answered.
    assert_eq!(h.agent.iter().filter(|m| m["type"] == "abort").count(), 1);
    assert_eq!(prompts_sent(&h).len(), 1, "only the first prompt was sent");
    assert!(!chunks(&h).contains("Queued"), "{}", chunks(&h));
    assert!(answered(&h).is_empty());
    // The run ends; until its usage is known the first is not answered, the second not sent.
    h.agent_lines(&s, &[agent_end("aborted")]);
    assert_eq!(prompts_sent(&h).len(), 1);
    h.answer_stats(&s, None);
    assert_eq!(stop_reason(&h, 10), "cancelled");
    assert!(h.answer(11).is_none());
    // Then the second goes as a prompt of its own, no follow-up.
    let sent = prompts_sent(&h);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1]["message"], "second");
    assert!(sent[1].get("streamingBehavior").is_none(), "{}", sent[1]);
    // It is the turn: its reply is its own and it ends with its own stop reason.
    h.editor.clear();
    runs_last_prompt(&mut h, &s, "two");
    assert_eq!(chunks(&h), "two");
    assert_eq!(stop_reason(&h, 11), "end_turn");
    assert_eq!(answered(&h), vec![11]);
    // The session goes on: a prompt now is a turn of its own, sent at once.
    prompt(&mut h, &s, 12, "third");
    assert_eq!(prompts_sent(&h).len(), 3);
    assert!(prompts_sent(&h)[2].get("streamingBehavior").is_none());
}

#[test]
fn acp_28_prompts_after_a_cancel_run_in_order_each_a_turn_of_its_own() {
    let (mut h, s) = cancelled_then_prompted();
    prompt(&mut h, &s, 12, "third");
    cancelled_run_ends(&mut h, &s);
    assert_eq!(stop_reason(&h, 10), "cancelled");
    // One at a time: the second is the turn, the third waits for it (no follow-up).
    let sent: Vec<Value> = prompts_sent(&h)
        .iter()
        .map(|p| p["message"].clone())
        .collect();
    assert_eq!(sent, ["first", "second"]);
    // A prompt while they wait waits behind them, in order.
    prompt(&mut h, &s, 13, "fourth");
    assert_eq!(prompts_sent(&h).len(), 2);
    runs_last_prompt(&mut h, &s, "two");
    assert_eq!(stop_reason(&h, 11), "end_turn");
    assert_eq!(prompts_sent(&h).last().unwrap()["message"], "third");
    runs_last_prompt(&mut h, &s, "three");
    assert_eq!(stop_reason(&h, 12), "end_turn");
    assert_eq!(prompts_sent(&h).last().unwrap()["message"], "fourth");
    runs_last_prompt(&mut h, &s, "four");
    assert_eq!(answered(&h), vec![10, 11, 12, 13]);
    for id in [11, 12, 13] {
        assert_eq!(stop_reason(&h, id), "end_turn");
    }
    assert!(prompts_sent(&h)
        .iter()
        .all(|p| p.get("streamingBehavior").is_none()));
}

#[test]
fn acp_27_28_a_follow_up_queued_before_the_cancel_is_cancelled_the_prompt_after_it_runs() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "first");
    h.agent_lines(&s, &[user_starts("first")]);
    // ACP-27: queued behind the running turn, before any cancel.
    prompt(&mut h, &s, 11, "queued");
    assert_eq!(prompts_sent(&h)[1]["streamingBehavior"], "followUp");
    cancel(&mut h, &s);
    prompt(&mut h, &s, 12, "after the cancel");
    assert_eq!(
        prompts_sent(&h).len(),
        2,
        "the prompt after the cancel is held"
    );
    cancelled_run_ends(&mut h, &s);
    assert_eq!(answered(&h), vec![10, 11], "the cancelled run's prompts");
    assert_eq!(stop_reason(&h, 10), "cancelled");
    assert_eq!(stop_reason(&h, 11), "cancelled");
    let last = prompts_sent(&h).pop().unwrap();
    assert_eq!(last["message"], "after the cancel");
    assert!(last.get("streamingBehavior").is_none());
    runs_last_prompt(&mut h, &s, "done");
    assert_eq!(stop_reason(&h, 12), "end_turn");
}

#[test]
fn acp_28_a_prompt_after_a_cancel_while_the_turn_waits_for_its_usage_is_held_too() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "first");
    // The run ended; the turn waits for its usage (ACP-02) when the cancel and prompt come.
    h.agent_lines(&s, &[agent_end("stop")]);
    cancel(&mut h, &s);
    prompt(&mut h, &s, 11, "second");
    assert_eq!(prompts_sent(&h).len(), 1);
    h.answer_stats(&s, None);
    assert_eq!(stop_reason(&h, 10), "cancelled");
    assert_eq!(prompts_sent(&h)[1]["message"], "second");
    runs_last_prompt(&mut h, &s, "two");
    assert_eq!(stop_reason(&h, 11), "end_turn");
}

#[test]
fn acp_28_another_cancel_cancels_the_held_prompt_at_once() {
    let (mut h, s) = cancelled_then_prompted();
    cancel(&mut h, &s);
    assert_eq!(stop_reason(&h, 11), "cancelled");
    assert_eq!(h.agent.iter().filter(|m| m["type"] == "abort").count(), 1);
    cancelled_run_ends(&mut h, &s);
    assert_eq!(stop_reason(&h, 10), "cancelled");
    assert_eq!(
        prompts_sent(&h).len(),
        1,
        "nothing sent for the cancelled prompt"
    );
}

#[test]
fn acp_28_at_most_the_bound_of_prompts_wait_and_a_held_id_is_not_reused() {
    let (mut h, s) = cancelled_then_prompted();
    // ACP-07: a prompt of a held prompt's id is refused.
    prompt(&mut h, &s, 11, "again");
    assert_eq!(h.answer(11).unwrap()["error"]["code"], -32600);
    h.editor.clear();
    for n in 1..MAX_QUEUED_PROMPTS as u64 {
        prompt(&mut h, &s, 100 + n, "more");
    }
    assert!(answered(&h).is_empty());
    prompt(&mut h, &s, 200, "one too many");
    let refused = h.answer(200).expect("refused at once");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(
        prompts_sent(&h).len(),
        1,
        "nothing sent while the cancelled run ends"
    );
    // /status is answered at once (ACP-01).
    prompt(&mut h, &s, 201, "/status");
    assert_eq!(stop_reason(&h, 201), "end_turn");
}

#[test]
fn acp_28_an_agent_that_ends_fails_the_held_prompt_and_a_close_cancels_it() {
    let (mut h, s) = cancelled_then_prompted();
    h.agent_exit(&s);
    for id in [10, 11] {
        let answer = h.answer(id).expect("answered at the exit");
        assert!(answer.get("error").is_some(), "{answer}");
    }
    assert_eq!(prompts_sent(&h).len(), 1);

    let (mut h, s) = cancelled_then_prompted();
    h.request(20, "session/close", json!({"sessionId": s}));
    for id in [10, 11] {
        assert_eq!(stop_reason(&h, id), "cancelled");
    }
    assert_eq!(prompts_sent(&h).len(), 1);
}

#[test]
fn acp_28_a_held_prompt_the_agent_refuses_fails_alone_and_the_session_goes_on() {
    let (mut h, s) = cancelled_then_prompted();
    cancelled_run_ends(&mut h, &s);
    let sent = prompts_sent(&h).pop().unwrap();
    h.agent_lines(
        &s,
        &[
            json!({"id": sent["id"], "type": "response", "command": "prompt",
            "success": false, "error": "no model"}),
        ],
    );
    let refused = h.answer(11).expect("the refusal is answered");
    assert!(refused["error"]["data"]
        .as_str()
        .is_some_and(|d| d.contains("no model")));
    prompt(&mut h, &s, 12, "third");
    assert!(prompts_sent(&h)[2].get("streamingBehavior").is_none());
}

/// ACP-28 with ACP-02's budget: the cancelled run's usage never comes; when its budget runs
/// out the cancelled prompt is answered and the held one starts then, with no other input.
#[test]
fn acp_28_the_held_prompt_starts_when_the_cancelled_turns_usage_times_out() {
    let (mut h, s) = cancelled_then_prompted();
    h.agent_lines(&s, &[agent_end("aborted")]);
    assert_eq!(prompts_sent(&h).len(), 1);
    h.timeout(crate::pinned::STATS_BUDGET);
    assert_eq!(stop_reason(&h, 10), "cancelled");
    let sent = prompts_sent(&h);
    assert_eq!(sent.len(), 2, "the held prompt went at the budget's end");
    assert_eq!(sent[1]["message"], "second");
}
