//! Prompts while one runs: queued as a follow-up (ACP-27), and the prompt right after a cancel
//! as the next turn (ACP-28).

use super::*;

/// A `queue` or `cancel-next` run's log: the updates, the prompts sent and their answers, in
/// the order the client saw them.
struct Log<'a> {
    out: &'a Value,
    entries: &'a [Value],
}

impl<'a> Log<'a> {
    fn of(out: &'a Value) -> Log<'a> {
        let entries = out["log"].as_array().expect("a log");
        Log { out, entries }
    }

    /// Where the first entry `what` holds for is.
    fn at(&self, what: &dyn Fn(&Value) -> bool) -> usize {
        let out = self.out;
        self.entries
            .iter()
            .position(what)
            .unwrap_or_else(|| panic!("not in the log: {out:#}"))
    }

    /// Where the answer of prompt `name` is, and its stop reason.
    fn answer(&self, name: &str) -> (usize, &'a str) {
        let i = self.at(&|e| e["answer"] == name);
        (i, self.entries[i]["stopReason"].as_str().unwrap_or(""))
    }

    /// The agent's text between two entries.
    fn said_between(&self, from: usize, to: usize) -> String {
        self.entries[from..to]
            .iter()
            .filter(|e| e["update"] == "agent_message_chunk")
            .filter_map(|e| e["text"].as_str())
            .collect()
    }
}

/// Checks the `queue` scenario's log (ACP-27): the prompt sent while the long one ran is
/// shown queued in the running turn and answered after it, its reply (`queued_text`) between
/// the two answers; the one queued behind the cancelled turn is answered `cancelled` after
/// it; the turn after ends `end_turn`.
fn check_queue_log(out: &Value, queued_text: &str) {
    let log = Log::of(out);
    let note = log.at(&|e| {
        e["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Queued: this prompt runs when the current one ends."))
    });
    let (first, first_reason) = log.answer("first");
    let (queued, queued_reason) = log.answer("queued");
    assert!(note < first && first < queued, "{out:#}");
    assert_eq!(first_reason, "end_turn", "{out:#}");
    assert_eq!(queued_reason, "end_turn", "{out:#}");
    let reply = log.said_between(first, queued);
    assert!(reply.contains(queued_text), "{reply:?}: {out:#}");
    let (cancelled, cancelled_reason) = log.answer("cancelled");
    let (behind, behind_reason) = log.answer("behind");
    assert!(queued < cancelled && cancelled < behind, "{out:#}");
    assert_eq!(cancelled_reason, "cancelled", "{out:#}");
    assert_eq!(behind_reason, "cancelled", "{out:#}");
    let (_, after_reason) = log.answer("after");
    assert_eq!(after_reason, "end_turn", "{out:#}");
    assert_eq!(out["bridgeExit"], 0, "{out:#}");
}

/// ACP-27 with the bundled agent: a prompt while a `bash sleep 1` turn runs is queued as a
/// follow-up and answered after it; one behind a cancelled turn is cancelled with it.
#[test]
fn acp_27_a_prompt_while_one_runs_is_queued_bundled_agent() {
    let Some(out) = Sdk::new("queue")
        .env("ACP_QUEUE_LONG", "bash sleep 1")
        .run()
    else {
        return;
    };
    check_queue_log(&out, "hello queued");
    // The bundled agent drops what was queued at an abort: the turn after is its own.
    let after: String = out["log"]
        .as_array()
        .unwrap()
        .iter()
        .skip_while(|e| e["answer"] != "behind")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(!after.contains("never said"), "{after:?}");
}

/// ACP-27 over omp 18.2.3's RPC mode (scripted model): omp takes the follow-up after the
/// running turn, in the same run.
#[test]
fn acp_27_a_prompt_while_one_runs_is_queued_over_omp_rpc() {
    let Some(omp) = Live::omp("acp-omp-queue") else {
        return;
    };
    // The long turn's tool runs long enough for the next prompt to arrive while it runs, on
    // a loaded machine too.
    let out = Sdk::over("queue", &omp)
        .env("ACP_QUEUE_LONG", r#"[[tool bash {"command":"sleep 3"}]]"#)
        .env("ACP_QUEUE_TEXT", "[[text hello queued]]")
        .env("ACP_QUEUE_AFTER", "[[text still here]]")
        .run()
        .expect("the SDK is there");
    check_queue_log(&out, "hello queued");
}

/// Checks the `cancel-next` scenario's log (ACP-28): the next prompt, sent right after the
/// cancel and before the cancelled prompt's answer, is no follow-up (no `Queued` note); the
/// cancelled prompt is answered `cancelled`, then the next one runs as a turn of its own, its
/// reply (`next_text`) between the two answers, and ends `end_turn`; the turn after too.
fn check_cancel_next_log(out: &Value, next_text: &str) {
    let log = Log::of(out);
    let sent = log.at(&|e| e["sent"] == "next");
    let (cancelled, cancelled_reason) = log.answer("cancelled");
    let (next, next_reason) = log.answer("next");
    assert!(
        sent < cancelled,
        "sent before the cancelled answer: {out:#}"
    );
    assert!(cancelled < next, "{out:#}");
    assert_eq!(cancelled_reason, "cancelled", "{out:#}");
    assert_eq!(next_reason, "end_turn", "{out:#}");
    assert!(
        !log.entries
            .iter()
            .any(|e| e["text"].as_str().is_some_and(|t| t.contains("Queued:"))),
        "no Queued note: {out:#}"
    );
    let reply = log.said_between(cancelled, next);
    assert!(reply.contains(next_text), "{reply:?}: {out:#}");
    let (_, after_reason) = log.answer("after");
    assert_eq!(after_reason, "end_turn", "{out:#}");
    assert_eq!(out["bridgeExit"], 0, "{out:#}");
}

/// ACP-28 with the bundled agent, as codecompanion.nvim does it: a `bash sleep 5` turn is
/// cancelled and the next prompt sent at once; it runs as the next turn, `end_turn`.
#[test]
fn acp_28_a_prompt_right_after_a_cancel_is_the_next_turn_bundled_agent() {
    let Some(out) = Sdk::new("cancel-next")
        .env("ACP_LONG", "bash sleep 5")
        .env("ACP_NEXT", "hello next")
        .run()
    else {
        return;
    };
    check_cancel_next_log(&out, "hello next");
}

/// The `cancel-next` scenario over `live`'s agent and the scripted model server (ACP-28).
fn cancel_next_over(live: &Live) -> Value {
    Sdk::over("cancel-next", live)
        .env("ACP_LONG", r#"[[tool bash {"command":"sleep 5"}]]"#)
        .env("ACP_NEXT", "[[text hello next]]")
        .env("ACP_AFTER", "[[text still here]]")
        .run()
        .expect("the SDK is there")
}

/// ACP-28 over omp's RPC mode (scripted model): the prompt sent right after the cancel is
/// omp's next run, not a follow-up inside the aborted one.
#[test]
fn acp_28_a_prompt_right_after_a_cancel_is_the_next_turn_over_omp_rpc() {
    let Some(omp) = Live::omp("acp-omp-cancel-next") else {
        return;
    };
    check_cancel_next_log(&cancel_next_over(&omp), "hello next");
}

/// ACP-28 over each pinned `pi --mode rpc` (scripted model).
#[test]
fn acp_28_a_prompt_right_after_a_cancel_is_the_next_turn_over_each_pi_rpc() {
    each_at_once(&Pi::ALL, |&pi| {
        let Some(live) = Live::pi(pi, &format!("acp-{}-cancel-next", pi.name())) else {
            return;
        };
        check_cancel_next_log(&cancel_next_over(&live), "hello next");
    });
}
