//! ACP-27 (ours): a prompt while one runs is queued as the agent's follow-up, shown in the
//! running turn, and answered after the running one.

use crate::support as acp_support;

use crate::pinned::MAX_QUEUED_PROMPTS;
use acp_support::{agent_end, assistant, Harness};
use serde_json::{json, Value};

/// A user message's `message_start`, as omp and pi stream it.
fn user_starts(text: &str) -> Value {
    json!({"type": "message_start",
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}})
}

/// An assistant message streamed whole: start, end.
fn says(text: &str) -> [Value; 2] {
    [
        json!({"type": "message_start", "message": assistant("", "stop")}),
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

/// The agent's request id of the last `prompt` the bridge sent.
fn last_prompt(h: &Harness) -> Value {
    h.agent
        .iter()
        .rev()
        .find(|m| m["type"] == "prompt")
        .cloned()
        .expect("a prompt was sent")
}

/// The agent accepts prompt `sent`.
fn accept(h: &mut Harness, session: &str, sent: &Value) {
    h.agent_lines(
        session,
        &[json!({"id": sent["id"], "type": "response", "command": "prompt", "success": true})],
    );
}

/// The text of the `agent_message_chunk`s sent so far.
fn chunks(h: &Harness) -> String {
    h.updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

/// A session with prompt 10 ("first") running: its user message seen.
fn running() -> (Harness, String) {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "first");
    h.agent_lines(&s, &[user_starts("first")]);
    (h, s)
}

#[test]
fn acp_27_a_prompt_while_one_runs_is_a_follow_up_answered_after_it() {
    let (mut h, s) = running();
    prompt(&mut h, &s, 11, "second");
    // Sent at once, as a follow-up; the running turn says it is queued; nothing answered.
    let sent = last_prompt(&h);
    assert_eq!(sent["message"], "second");
    assert_eq!(sent["streamingBehavior"], "followUp", "{sent}");
    assert!(
        chunks(&h).contains("Queued: this prompt runs when the current one ends."),
        "{}",
        chunks(&h)
    );
    assert!(h.answer(10).is_none() && h.answer(11).is_none());
    accept(&mut h, &s, &sent);
    assert!(h.answer(11).is_none(), "accepted is not answered");
    // The run answers the first, then goes on with the follow-up: the first is answered.
    h.agent_lines(&s, &says("one"));
    h.agent_lines(&s, &[user_starts("second")]);
    let first = h.answer(10).expect("the first prompt is answered");
    assert_eq!(first["result"]["stopReason"], "end_turn", "{first}");
    assert!(h.answer(11).is_none());
    // The follow-up's reply belongs to its turn; the run's end answers it.
    h.editor.clear();
    h.agent_lines(&s, &says("two"));
    h.agent_lines(&s, &[agent_end("stop")]);
    h.answer_stats(&s, None);
    let second = h.answer(11).expect("the queued prompt is answered");
    assert_eq!(second["result"]["stopReason"], "end_turn", "{second}");
    // The session goes on.
    h.editor.clear();
    prompt(&mut h, &s, 12, "third");
    assert!(last_prompt(&h).get("streamingBehavior").is_none());
}

#[test]
fn acp_27_a_follow_up_the_agent_runs_on_its_own_is_answered_after_its_run() {
    let (mut h, s) = running();
    prompt(&mut h, &s, 11, "second");
    let sent = last_prompt(&h);
    accept(&mut h, &s, &sent);
    // The run ends before the agent took the follow-up: the first is answered at its end.
    h.agent_lines(&s, &[agent_end("stop")]);
    let first = h
        .answer(10)
        .expect("the first prompt is answered at its run's end");
    assert_eq!(first["result"]["stopReason"], "end_turn", "{first}");
    assert!(h.answer(11).is_none());
    // Its own run follows.
    h.agent_lines(&s, &[json!({"type": "agent_start"}), user_starts("second")]);
    h.agent_lines(&s, &says("two"));
    h.agent_lines(&s, &[agent_end("stop")]);
    h.answer_stats(&s, None);
    let second = h.answer(11).expect("the queued prompt is answered");
    assert_eq!(second["result"]["stopReason"], "end_turn", "{second}");
}

#[test]
fn acp_27_a_cancel_answers_the_running_and_the_queued_prompts_cancelled() {
    let (mut h, s) = running();
    prompt(&mut h, &s, 11, "second");
    prompt(&mut h, &s, 12, "third");
    h.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": s}}));
    let abort_count = h.agent.iter().filter(|m| m["type"] == "abort").count();
    assert_eq!(abort_count, 1, "one abort for the run");
    // Even if the agent goes on with a follow-up before the abort lands.
    h.agent_lines(&s, &[user_starts("second")]);
    assert!(h.answer(10).is_none());
    h.agent_lines(&s, &[agent_end("aborted")]);
    h.answer_stats(&s, None);
    let order: Vec<u64> = h
        .editor
        .iter()
        .filter(|m| m.get("method").is_none())
        .filter_map(|m| m["id"].as_u64())
        .collect();
    assert_eq!(order, vec![10, 11, 12], "the running one first");
    for id in [10, 11, 12] {
        let answer = h.answer(id).unwrap();
        assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    }
}

#[test]
fn acp_27_a_queued_prompt_the_agent_refuses_fails_alone() {
    let (mut h, s) = running();
    prompt(&mut h, &s, 11, "second");
    let sent = last_prompt(&h);
    h.agent_lines(
        &s,
        &[
            json!({"id": sent["id"], "type": "response", "command": "prompt",
            "success": false, "error": "queue is full"}),
        ],
    );
    let refused = h.answer(11).expect("the refusal is answered");
    assert!(
        refused["error"]["data"]
            .as_str()
            .is_some_and(|d| d.contains("queue is full")),
        "{refused}"
    );
    assert!(h.answer(10).is_none(), "the running prompt is unharmed");
    h.agent_lines(&s, &[agent_end("stop")]);
    h.answer_stats(&s, None);
    let first = h.answer(10).expect("the first prompt is answered");
    assert_eq!(first["result"]["stopReason"], "end_turn");
}

#[test]
fn acp_27_a_queued_builtin_the_agent_answers_itself_ends_at_once() {
    let (mut h, s) = running();
    prompt(&mut h, &s, 11, "/session");
    let sent = last_prompt(&h);
    h.agent_lines(
        &s,
        &[
            json!({"id": sent["id"], "type": "response", "command": "prompt",
            "success": true, "data": {"agentInvoked": false}}),
        ],
    );
    let local = h.answer(11).expect("the builtin is answered");
    assert_eq!(local["result"]["stopReason"], "end_turn", "{local}");
    assert!(h.answer(10).is_none(), "the running prompt goes on");
    h.agent_lines(&s, &[agent_end("stop")]);
    h.answer_stats(&s, None);
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "end_turn");
}

#[test]
fn acp_27_at_most_the_bound_of_prompts_wait_behind_the_running_one() {
    let (mut h, s) = running();
    for n in 0..MAX_QUEUED_PROMPTS as u64 {
        prompt(&mut h, &s, 100 + n, "more");
    }
    let sent = h.agent.iter().filter(|m| m["type"] == "prompt").count();
    assert_eq!(sent, 1 + MAX_QUEUED_PROMPTS);
    prompt(&mut h, &s, 200, "one too many");
    let refused = h.answer(200).expect("refused at once");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let sent = h.agent.iter().filter(|m| m["type"] == "prompt").count();
    assert_eq!(sent, 1 + MAX_QUEUED_PROMPTS, "nothing sent for it");
    // /status is answered at once, queued or not (ACP-01).
    prompt(&mut h, &s, 201, "/status");
    assert_eq!(h.answer(201).unwrap()["result"]["stopReason"], "end_turn");
}

#[test]
fn acp_27_closing_the_session_cancels_the_queued_prompts_and_an_exit_fails_them() {
    let (mut h, s) = running();
    prompt(&mut h, &s, 11, "second");
    h.request(20, "session/close", json!({"sessionId": s}));
    for id in [10, 11] {
        let answer = h.answer(id).expect("answered at the close");
        assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    }

    let (mut h, s) = running();
    prompt(&mut h, &s, 11, "second");
    h.agent_exit(&s);
    for id in [10, 11] {
        let answer = h.answer(id).expect("answered at the exit");
        assert!(answer.get("error").is_some(), "{answer}");
    }
}
