//! How the bridge stops its agents (ACP-12, ours): nothing outlives the bridge. A session's
//! agent is stopped by closing its stdin ([`Action::CloseAgentStdin`]), which gives it
//! [`STOP_GRACE`] to end its own children (the bundled agent kills its shells then,
//! AGENT-02); then its whole process group is killed ([`Action::StopAgent`]). An agent that
//! exits, stopped or not, has what is left of its group killed at once. Once the editor's
//! input ends or the bridge is told to end, every agent is stopped, and the bridge is finished
//! when all have exited, or [`SHUTDOWN_BUDGET`] after it began, whichever comes first.

use std::time::{Duration, Instant};

use super::outbox::{Drain, Outbox};
use super::{Action, AgentKey};

/// How long an agent whose stdin was closed has to end its own children before its process
/// group is killed (ACP-12).
pub const STOP_GRACE: Duration = Duration::from_secs(1);

/// The longest the bridge waits for its agents once its shutdown began (ACP-12): then it is
/// finished, whatever has not reported its exit.
pub const SHUTDOWN_BUDGET: Duration = Duration::from_secs(3);

/// Where one session's agent is in being stopped.
#[derive(Debug, Default)]
pub(crate) struct Stop {
    /// Its stdin was closed: its group is killed at this time unless it exits first.
    kill_at: Option<Instant>,
    /// Its group was killed (after the grace, or at its exit).
    killed: bool,
}

impl Stop {
    /// Stops the agent: its stdin closed now, the kill due after [`STOP_GRACE`]. Nothing when
    /// it is already being stopped, or has exited (its group was killed then).
    pub(crate) fn begin(&mut self, now: Instant, session: AgentKey) -> Option<Action> {
        if self.kill_at.is_some() || self.killed {
            return None;
        }
        self.kill_at = Some(now + STOP_GRACE);
        Some(Action::CloseAgentStdin { session })
    }

    /// The agent exited: what is left of its group is killed, once.
    pub(crate) fn exited(&mut self, session: AgentKey) -> Option<Action> {
        self.kill(session)
    }

    /// The grace is over: the group is killed, once.
    pub(crate) fn due(&mut self, now: Instant, session: AgentKey) -> Option<Action> {
        match self.kill_at {
            Some(at) if at <= now => self.kill(session),
            _ => None,
        }
    }

    /// When [`Stop::due`] has work.
    pub(crate) fn timeout(&self) -> Option<Instant> {
        self.kill_at.filter(|_| !self.killed)
    }

    fn kill(&mut self, session: AgentKey) -> Option<Action> {
        if self.killed {
            return None;
        }
        self.killed = true;
        Some(Action::StopAgent { session })
    }
}

/// The bridge's own end: begun when the editor's input ends or the bridge is told to end.
#[derive(Debug, Default)]
pub(crate) struct Shutdown {
    /// When the bridge is finished at the latest.
    by: Option<Instant>,
    /// [`Shutdown::by`] has passed.
    over: bool,
}

impl Shutdown {
    /// Begins the shutdown (once); false when it had begun already.
    pub(crate) fn begin(&mut self, now: Instant) -> bool {
        if self.by.is_some() {
            return false;
        }
        self.by = Some(now + SHUTDOWN_BUDGET);
        true
    }

    /// A timer input: the budget may be over.
    pub(crate) fn tick(&mut self, now: Instant) {
        if self.by.is_some_and(|by| by <= now) {
            self.over = true;
        }
    }

    /// Whether the budget is over: the bridge is finished whatever is left.
    pub(crate) fn is_over(&self) -> bool {
        self.over
    }

    /// When [`Shutdown::tick`] has work.
    pub(crate) fn timeout(&self) -> Option<Instant> {
        self.by.filter(|_| !self.over)
    }
}
impl super::AcpSession {
    /// ACP-12: the agent is stopped: its stdin closed now, its group killed after the grace
    /// (or at its exit). Idempotent.
    pub(super) fn stop_agent(&mut self, now: Instant, out: &mut Outbox<'_>) -> Drain {
        if let Some(close) = self.stop.begin(now, self.key) {
            out.push(close);
        }
        Drain::NotNeeded
    }

    /// The agent's process exited: ACP-20, what it did not take is dropped with its stdin;
    /// ACP-12, what is left of its process group goes with it.
    pub(super) fn agent_exited(&mut self, out: &mut Outbox<'_>) -> Drain {
        self.exited = true;
        self.stdin_waiting = 0;
        if let Some(kill) = self.stop.exited(self.key) {
            out.push(kill);
        }
        Drain::NotNeeded
    }
}
