//! The other half of a session's timer table ([`Timer`], whose deadlines
//! [`AcpSession::deadline`] reads): what each timer does when it is due. Those that touch
//! only their session are [`AcpSession`] methods writing to an [`Outbox`]; the bridge then
//! drains the session's client when one says so ([`Drain`]).

use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1::{Error, RequestId};
use serde_json::json;

use super::outbox::{Drain, Outbox};
use super::session::{AcpSession, Pending, Timer, TimerContext};
use super::{output, queue, rpc, start, turn, AgentKey, Bridge};
use crate::client::{self, Call};
use crate::output::{OutputErrorCode, READ_BUDGET};

impl Bridge {
    /// Session `key`'s `timer` is due: its expiry, one per kind.
    pub(super) fn expire(&mut self, now: Instant, key: AgentKey, timer: Timer) {
        let context = self.timer_context();
        let ready_timeout = self.config.client.ready_timeout;
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        let mut out = Outbox::new(&mut self.actions);
        let drain = match timer {
            Timer::Start => session.silent_agent(now, context, ready_timeout, &mut out),
            Timer::Silence => session.stopped_answering(now, context, &mut out),
            Timer::Stop => session.stop_due(now, &mut out),
            Timer::Stats => session.expire_stats(now, &mut out),
            Timer::Read => session.expire_reads(now, &mut out),
            Timer::Client => {
                session.client.handle(now, client::Input::Timeout);
                Drain::Needed
            }
            Timer::Models => return self.expire_models(now, key),
            Timer::Review => return self.expire_review(now, key),
            Timer::Mcp => return self.on_session_mcp(now, key, |s| s.mcp_timeout(now)),
        };
        if drain == Drain::Needed {
            self.drain(now, key);
        }
    }
}

impl AcpSession {
    /// ACP-13: an agent silent past its start-up budget (`ready_timeout`) fails what the
    /// editor waits for in its session, and is stopped.
    fn silent_agent(
        &mut self,
        now: Instant,
        context: TimerContext,
        ready_timeout: Duration,
        out: &mut Outbox<'_>,
    ) -> Drain {
        // ACP-20: an agent that is not read is not silent.
        if context.agents_held || self.exited || !self.start.expired(now) {
            return Drain::NotNeeded;
        }
        let message = start::silent_agent_message(ready_timeout, &self.client.stderr_tail());
        let error = Error::internal_error().data(json!(message));
        let mut waiting: Vec<RequestId> = std::mem::take(&mut self.pending)
            .into_values()
            .filter_map(|p| p.editor().cloned())
            .collect();
        waiting.extend(queue::take_prompts(self));
        for editor in waiting {
            out.editor(rpc::error_line(&editor, &error));
        }
        self.client.handle(now, client::Input::Call(Call::Stop));
        Drain::Needed
    }

    /// ACP-12: a stop's grace is over: the agent's group is killed.
    fn stop_due(&mut self, now: Instant, out: &mut Outbox<'_>) -> Drain {
        if let Some(kill) = self.stop.due(now, self.key) {
            out.push(kill);
        }
        Drain::NotNeeded
    }

    /// ACP-02: a turn's `get_session_stats` past its budget leaves the bridge's own sum and
    /// the prompt is answered; a late answer is dropped. ACP-28: a prompt held behind the
    /// turn starts then (the drain).
    fn expire_stats(&mut self, now: Instant, out: &mut Outbox<'_>) -> Drain {
        let late = self.past_due(now, |p| matches!(p, Pending::TurnStats { .. }));
        if late.is_empty() {
            return Drain::NotNeeded;
        }
        for request in late {
            self.pending.remove(&request);
        }
        let mut lines = Vec::new();
        turn::end_turn(self, None, &mut lines);
        for bytes in lines {
            out.editor(bytes);
        }
        Drain::Needed
    }

    /// OUT-07: a read past its [`READ_BUDGET`] fails as `read_timed_out`. A late answer is
    /// dropped.
    fn expire_reads(&mut self, now: Instant, out: &mut Outbox<'_>) -> Drain {
        let late = self.past_due(now, |p| matches!(p, Pending::Read { .. }));
        for request in late {
            if let Some(editor) = self
                .pending
                .remove(&request)
                .and_then(|p| p.editor().cloned())
            {
                let error = output::typed_error(
                    OutputErrorCode::ReadTimedOut.as_str(),
                    &format!(
                        "the stored output was not read within the {}-second read budget",
                        READ_BUDGET.as_secs()
                    ),
                );
                out.editor(rpc::error_line(&editor, &error));
            }
        }
        Drain::NotNeeded
    }
}
