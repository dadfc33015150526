//! ACP-13 (ours): the bridge knows within a bounded time whether a session's agent is alive.
//! An agent that writes nothing at all on its stdout (no ready frame, no answer to the
//! client's start-up probe, FRAME-03) within the start-up budget, the session's
//! [`ClientConfig::ready_timeout`](crate::client::ClientConfig::ready_timeout), fails the
//! editor's waiting requests with an error that says so (with the agent's stderr tail) and is
//! stopped; nothing the editor asked waits on it for ever.

use std::time::{Duration, Instant};

/// Whether a session's agent has said anything yet, and until when it may stay silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StartBudget {
    silent_until: Option<Instant>,
}

impl StartBudget {
    /// A budget for an agent started at `now`.
    pub(crate) fn new(now: Instant, budget: Duration) -> Self {
        StartBudget {
            silent_until: Some(now + budget),
        }
    }

    /// The agent wrote something: it is alive, the budget is spent no more.
    pub(crate) fn heard(&mut self) {
        self.silent_until = None;
    }

    /// When the budget runs out, while the agent is silent.
    pub(crate) fn timeout(&self) -> Option<Instant> {
        self.silent_until
    }

    /// Whether the agent stayed silent past its budget (once: it then counts as heard).
    pub(crate) fn expired(&mut self, now: Instant) -> bool {
        let expired = self.silent_until.is_some_and(|t| t <= now);
        if expired {
            self.silent_until = None;
        }
        expired
    }
}

/// The error text for an agent that said nothing within `budget` (ACP-13).
pub(crate) fn silent_agent_message(budget: Duration, stderr: &str) -> String {
    let mut message = format!(
        "the agent said nothing within {}s of starting (no ready frame, no answer): it was stopped",
        budget.as_secs()
    );
    if !stderr.is_empty() {
        message.push_str("; its stderr ends: ");
        message.push_str(stderr);
    }
    message
}
