//! What one session's handlers give the driver ([`Outbox`]): a session's own methods take
//! `&mut self` on its [`AcpSession`](super::AcpSession) and an outbox, never the whole
//! bridge, so what a handler can touch is its session and the action queue, nothing else.

use std::collections::VecDeque;
use std::time::Instant;

use agent_client_protocol_schema::v1::{SessionNotification, SessionUpdate};

use super::{rpc, AcpSession, Action, AgentKey, Bridge};

/// The bridge's action queue, lent to one session's handler: lines for the editor, in order
/// with everything else the bridge queues.
pub(super) struct Outbox<'a> {
    actions: &'a mut VecDeque<Action>,
}

impl<'a> Outbox<'a> {
    /// An outbox onto the bridge's queue.
    pub(super) fn new(actions: &'a mut VecDeque<Action>) -> Self {
        Outbox { actions }
    }

    /// A line for the editor.
    pub(super) fn editor(&mut self, bytes: Vec<u8>) {
        self.actions.push_back(Action::Editor { bytes });
    }

    /// An action for the driver.
    pub(super) fn push(&mut self, action: Action) {
        self.actions.push_back(action);
    }

    /// A `session/update` for the session `session`.
    pub(super) fn update(&mut self, session: &AcpSession, update: SessionUpdate) {
        let notification = SessionNotification::new(session.acp_id.clone(), update);
        self.editor(rpc::update_line(&notification));
    }
}

/// Whether a session's handler gave its client an input, whose actions the bridge then
/// drains (`Bridge::drain`: the client's writes, events and answers mapped).
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Drain {
    Needed,
    NotNeeded,
}

impl Bridge {
    /// Routes to session `key`'s handler (nothing for a session gone), with the outbox; the
    /// session's client is drained after when the handler says so.
    pub(super) fn on_session(
        &mut self,
        now: Instant,
        key: AgentKey,
        handler: impl FnOnce(&mut AcpSession, &mut Outbox<'_>) -> Drain,
    ) {
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        if handler(session, &mut Outbox::new(&mut self.actions)) == Drain::Needed {
            self.drain(now, key);
        }
    }

    /// Session `key` and the outbox its handlers write to; `None` for a session gone.
    pub(super) fn session_out(&mut self, key: AgentKey) -> Option<(&mut AcpSession, Outbox<'_>)> {
        let session = self.sessions.get_mut(&key)?;
        Some((
            session,
            Outbox {
                actions: &mut self.actions,
            },
        ))
    }
}
