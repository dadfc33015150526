//! ACP-21 (ours): the prompt budget. A session's agent that has spoken (past its start-up
//! budget, ACP-13) and then says nothing at all on its stdout while the editor waits on it
//! (a prompt running, a load, a read) is asked `get_state` once [`SilenceBudget`] / 2 into
//! the silence: an agent that is alive answers it whatever it is doing (a long tool, a slow
//! model), and any byte it writes starts the silence over. An agent silent for the whole
//! budget has stopped answering: what the editor waits for in its session fails with an
//! error that says so, and it is stopped (ACP-12). The budget is on silence, never on a
//! turn's length; it does not run while the agent is not read (ACP-20).

use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1::{Error, RequestId};
use serde_json::json;

use super::outbox::{Drain, Outbox};
use super::{rpc, AcpSession, Pending, TimerContext};
use crate::client::{self, Call};
use crate::wire::{Command, GetState};

/// The default prompt budget (ACP-21): 60 s of silence while the editor waits on the agent
/// (`musewire acp --silence-timeout SECS`).
pub const DEFAULT_SILENCE_BUDGET: Duration = Duration::from_secs(60);

/// How long a session's agent may say nothing while the editor waits on it (ACP-21).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SilenceBudget(pub Duration);

impl Default for SilenceBudget {
    fn default() -> Self {
        SilenceBudget(DEFAULT_SILENCE_BUDGET)
    }
}

/// What a session's silence calls for at a timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Due {
    /// Nothing yet.
    Nothing,
    /// Half the budget: ask the agent something it answers at once.
    Probe,
    /// The whole budget: the agent stopped answering.
    Expired,
}

/// One session's silence: since when its agent has said nothing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Silence {
    since: Instant,
    probed: bool,
}

impl Silence {
    /// A silence counted from `now`.
    pub(crate) fn new(now: Instant) -> Self {
        Silence {
            since: now,
            probed: false,
        }
    }

    /// The agent wrote something, or the editor began to wait on it, or it is read again
    /// after being held (ACP-20): the silence starts over at `now`.
    pub(crate) fn restart(&mut self, now: Instant) {
        *self = Silence::new(now);
    }

    /// When [`Silence::due`] has work next.
    pub(crate) fn timeout(&self, budget: SilenceBudget) -> Instant {
        if self.probed {
            self.since + budget.0
        } else {
            self.since + budget.0 / 2
        }
    }

    /// What is due at `now`; a probe is due once a silence.
    pub(crate) fn due(&mut self, now: Instant, budget: SilenceBudget) -> Due {
        if now >= self.since + budget.0 {
            Due::Expired
        } else if !self.probed && now >= self.since + budget.0 / 2 {
            self.probed = true;
            Due::Probe
        } else {
            Due::Nothing
        }
    }
}

/// The error text for an agent silent for `budget` while the editor waited on it (ACP-21).
pub(crate) fn stopped_answering_message(budget: SilenceBudget, stderr: &str) -> String {
    let mut message = format!(
        "the agent stopped answering: it said nothing for {}s while this request waited on it, \
         not even an answer to get_state: it was stopped",
        budget.0.as_secs()
    );
    if !stderr.is_empty() {
        message.push_str("; its stderr ends: ");
        message.push_str(stderr);
    }
    message
}

impl AcpSession {
    /// Whether the editor waits on this session's agent: a prompt running, or a request of
    /// the bridge's made for the editor (a probe is none).
    pub(super) fn is_waited_on(&self) -> bool {
        // ACP-41: a login waits on the user's browser, not on the agent.
        self.turn.is_some()
            || self
                .pending
                .values()
                .any(|p| !matches!(p, Pending::Probe | Pending::Login { .. }))
    }

    /// The editor begins to wait on the agent: when nothing waited, the silence is counted
    /// from now.
    pub(super) fn begin_waiting(&mut self, now: Instant) {
        if !self.is_waited_on() {
            self.silence.restart(now);
        }
    }

    /// The agent wrote to its stdout: it has started (ACP-13) and is not silent (ACP-21).
    pub(super) fn heard_from_agent(&mut self, now: Instant) -> Drain {
        self.start.heard();
        self.silence.restart(now);
        Drain::NotNeeded
    }

    /// Whether the prompt budget runs for this session now (ACP-21): the editor waits on an
    /// agent that is past its start-up budget (ACP-13), still running and read (ACP-20).
    pub(super) fn silence_counts(&self, context: TimerContext) -> bool {
        !context.agents_held
            && !self.exited
            && !self.client.is_closed()
            && self.start.timeout().is_none()
            && self.is_waited_on()
    }
}

impl AcpSession {
    /// ACP-21: a silent agent is probed at half its budget; one silent for the whole of it
    /// fails what the editor waits for in its session, and is stopped.
    pub(super) fn stopped_answering(
        &mut self,
        now: Instant,
        context: TimerContext,
        out: &mut Outbox<'_>,
    ) -> Drain {
        if !self.silence_counts(context) {
            return Drain::NotNeeded;
        }
        let budget = context.silence_budget;
        match self.silence.due(now, budget) {
            Due::Nothing => return Drain::NotNeeded,
            Due::Probe => {
                let sent = self.client.handle(
                    now,
                    client::Input::Call(Call::Send(Command::from(GetState::default()))),
                );
                if let Some(request) = sent.request() {
                    self.pending.insert(request, Pending::Probe);
                }
            }
            Due::Expired => {
                let message = stopped_answering_message(budget, &self.client.stderr_tail());
                let error = Error::internal_error().data(json!(message));
                let mut waiting: Vec<RequestId> = std::mem::take(&mut self.pending)
                    .into_values()
                    .filter_map(|p| p.editor().cloned())
                    .collect();
                waiting.extend(super::queue::take_prompts(self));
                for editor in waiting {
                    out.editor(rpc::error_line(&editor, &error));
                }
                self.client.handle(now, client::Input::Call(Call::Stop));
            }
        }
        Drain::Needed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acp_21_a_probe_at_half_the_budget_then_expiry_at_the_whole() {
        let t0 = Instant::now();
        let budget = SilenceBudget(Duration::from_secs(10));
        let mut silence = Silence::new(t0);
        assert_eq!(silence.timeout(budget), t0 + Duration::from_secs(5));
        assert_eq!(
            silence.due(t0 + Duration::from_secs(4), budget),
            Due::Nothing
        );
        assert_eq!(silence.due(t0 + Duration::from_secs(5), budget), Due::Probe);
        assert_eq!(
            silence.due(t0 + Duration::from_secs(6), budget),
            Due::Nothing
        );
        assert_eq!(silence.timeout(budget), t0 + Duration::from_secs(10));
        assert_eq!(
            silence.due(t0 + Duration::from_secs(10), budget),
            Due::Expired
        );
        silence.restart(t0 + Duration::from_secs(10));
        assert_eq!(silence.timeout(budget), t0 + Duration::from_secs(15));
    }
}
