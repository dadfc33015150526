//! ACP-20 (ours): backpressure from the editor to the agents. The editor's stdout is a
//! bounded queue: the bridge counts the bytes of the [`Action::Editor`](super::Action::Editor)
//! lines it gave the driver and the driver says how many it has written
//! ([`Input::EditorWritten`](super::Input::EditorWritten)). While more than
//! [`EDITOR_HIGH_WATER`] bytes wait, the agents' stdout is not read (their pipes fill and
//! they block in their writes): whatever an agent says could only join the queue. The
//! editor itself is still read, its requests answered and passed on (a `session/cancel`
//! reaches the agent), until [`EDITOR_READ_LIMIT`] bytes wait. Reading goes on as the
//! editor reads again. A session's silence budgets do not run while its agent is not read
//! (ACP-21).
//!
//! Each agent's stdin is a bounded queue the same way: the bridge counts the bytes of the
//! [`Action::Agent`](super::Action::Agent) lines it gave the driver and the driver says how
//! many it has written ([`Input::AgentWritten`](super::Input::AgentWritten)). While more than
//! 4 MiB wait for any one agent (it does not read its stdin), the
//! editor is not read: its requests could only join that queue. What an agent that exited
//! did not take is dropped.

use std::time::Instant;

use agent_client_protocol_schema::v1::Error;
use serde_json::json;

use super::start::StartBudget;
use super::{AgentKey, Bridge};

/// The editor bytes waiting to be written past which the agents' stdout is no longer read
/// (ACP-20): 1 MiB.
pub const EDITOR_HIGH_WATER: usize = 1 << 20;

/// The editor bytes waiting to be written past which the editor's own input is no longer
/// read either (ACP-20): 16 MiB. Only an editor that keeps writing requests while it reads
/// none of the answers gets there.
pub const EDITOR_READ_LIMIT: usize = 16 << 20;

/// The bytes waiting for one agent's stdin past which the editor's input is no longer read
/// (ACP-20): 4 MiB. A single larger line (a prompt with images) still goes; the editor is
/// read again once the agent has taken it.
pub const AGENT_STDIN_HIGH_WATER: usize = 4 << 20;

/// The most editor requests that may wait on one session's agent (ACP-23): past it, more
/// are refused at once, so neither the bridge's bookkeeping nor the agent's stdin queue
/// grows without bound while an agent does not read.
pub const MAX_WAITING_REQUESTS: usize = 64;

/// The bytes given to the driver for the editor and not yet written.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct EditorQueue {
    waiting: usize,
}

impl EditorQueue {
    /// An editor line was handed to the driver.
    pub(crate) fn queued(&mut self, bytes: usize) {
        self.waiting = self.waiting.saturating_add(bytes);
    }

    /// The driver wrote `bytes` of them; true when this lets the agents be read again.
    pub(crate) fn written(&mut self, bytes: usize) -> bool {
        let held = self.holds_agents();
        self.waiting = self.waiting.saturating_sub(bytes);
        held && !self.holds_agents()
    }

    /// The bytes waiting.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting
    }

    /// Whether the agents' stdout is not to be read.
    pub(crate) fn holds_agents(&self) -> bool {
        self.waiting >= EDITOR_HIGH_WATER
    }

    /// Whether the editor's input is not to be read.
    pub(crate) fn holds_editor(&self) -> bool {
        self.waiting >= EDITOR_READ_LIMIT
    }
}

impl Bridge {
    /// Whether the driver reads this session's agent's stdout now (ACP-20): not while more
    /// than 1 MiB for the editor wait to be written, since every
    /// agent's updates join that one queue. Its stderr is read whatever this says. The
    /// driver asks after draining [`Bridge::poll_action`], and again after each
    /// [`Input::EditorWritten`](super::Input::EditorWritten).
    pub fn reads_agent(&self, _key: AgentKey) -> bool {
        !self.editor_queue.holds_agents()
    }

    /// Whether the driver reads the editor's input now (ACP-20): not while more than
    /// 16 MiB for it wait to be written, nor while more than
    /// 4 MiB wait for one agent's stdin. The driver asks after
    /// draining [`Bridge::poll_action`].
    pub fn reads_editor(&self) -> bool {
        !self.editor_queue.holds_editor()
            && self
                .sessions
                .values()
                .all(|s| s.stdin_waiting < AGENT_STDIN_HIGH_WATER)
    }

    /// [`Input::AgentWritten`](super::Input::AgentWritten): the agent took `bytes` more.
    pub(super) fn agent_written(&mut self, key: AgentKey, bytes: usize) {
        if let Some(session) = self.sessions.get_mut(&key) {
            session.stdin_waiting = session.stdin_waiting.saturating_sub(bytes);
        }
    }

    /// The bytes of [`Action::Agent`](super::Action::Agent) lines given to the driver for
    /// `key`'s agent and not yet reported written (ACP-20).
    pub fn agent_stdin_waiting(&self, key: AgentKey) -> usize {
        self.sessions.get(&key).map_or(0, |s| s.stdin_waiting)
    }

    /// The bytes of [`Action::Editor`](super::Action::Editor) lines given to the driver and not yet reported
    /// written.
    pub fn editor_waiting(&self) -> usize {
        self.editor_queue.waiting()
    }

    /// [`Input::EditorWritten`](super::Input::EditorWritten): once the agents are read again, the silence of each starts
    /// over (ACP-13, ACP-21: an agent that was not read was not silent).
    pub(super) fn editor_written(&mut self, now: Instant, bytes: usize) {
        if !self.editor_queue.written(bytes) {
            return;
        }
        let ready_timeout = self.config.client.ready_timeout;
        for session in self.sessions.values_mut() {
            session.silence.restart(now);
            if session.start.timeout().is_some() {
                session.start = StartBudget::new(now, ready_timeout);
            }
        }
    }

    /// ACP-23: an error when [`MAX_WAITING_REQUESTS`] of the editor's requests already wait
    /// on the session's agent.
    pub(super) fn room_for_request(&self, key: AgentKey) -> Result<(), Error> {
        let waiting = self.sessions.get(&key).map_or(0, |s| {
            s.pending.values().filter(|p| p.editor().is_some()).count()
        });
        if waiting < MAX_WAITING_REQUESTS {
            return Ok(());
        }
        Err(Error::internal_error().data(json!(format!(
            "too many requests wait on this session's agent ({MAX_WAITING_REQUESTS}): \
             try again once it has answered"
        ))))
    }

    /// Whether the agents are held (ACP-20): their silence budgets do not run.
    pub(super) fn agents_held(&self) -> bool {
        self.editor_queue.holds_agents()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acp_20_agents_are_held_from_the_high_water_and_released_below_it() {
        let mut queue = EditorQueue::default();
        queue.queued(EDITOR_HIGH_WATER - 1);
        assert!(!queue.holds_agents());
        queue.queued(1);
        assert!(queue.holds_agents() && !queue.holds_editor());
        assert!(!queue.written(0));
        assert!(queue.written(1), "released once below the mark");
        assert!(!queue.written(10), "once");
        queue.queued(EDITOR_READ_LIMIT);
        assert!(queue.holds_editor());
        queue.written(usize::MAX);
        assert_eq!(queue.waiting(), 0);
    }
}
