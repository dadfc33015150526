//! A program that *is* an agent, as every driver's agent-side stdio loop drives it: its
//! [`Agent`] and what answers the agent's events. Written once here, so that
//! the mio loop (`musewire_mio::agent_stdio`) and the smol loop (`musewire_smol::agent_stdio`)
//! run the same programs and keep only how they read, write and wait.
//!
//! A loop drains the agent's lines with [`AgentProgram::next_line`] only while its stdout
//! takes them, and reads stdin only once the last line is out: the events go to the program
//! on the way, so a host that stops reading stops the whole program (backpressure).

use std::time::Instant;

use super::{Agent, AgentAction, AgentEvent, Input, ReadId, SpillId};
use crate::output::OutputRead;
use crate::spill::SpillWrite;

/// A program that is an agent: its [`Agent`] and what answers the agent's events. Only
/// [`AgentProgram::agent`] and [`AgentProgram::on_event`] are required; [`on_event`] makes
/// one of an agent and a function.
pub trait AgentProgram {
    /// The program's agent.
    fn agent(&mut self) -> &mut Agent;

    /// An event of the agent (a command to answer, a host's answer, the end of stdin…): the
    /// program answers through its agent ([`Agent::handle`] with an
    /// [`Input::Call`](super::Input::Call)). Called as the loop drains the agent's actions.
    fn on_event(&mut self, now: Instant, event: AgentEvent);

    /// The agent asks for a spill write (SPILL-03, SPILL-06): the program saves `write` with
    /// its store and answers through its agent with [`Input::SpillDone`] and `id`. Called as
    /// the loop drains the agent's actions, so the store's I/O is done in the loop. Default:
    /// no store, the save fails at once (SPILL-05: the original result goes on).
    fn spill_write(&mut self, now: Instant, id: SpillId, write: SpillWrite) {
        let _ = write;
        self.agent().handle(now, Input::spill_without_store(id));
    }

    /// The agent asks for a positioned read of a stored output (OUT-04, OUT-10): the program
    /// reads `read.request`'s range with its store and answers through its agent with
    /// [`Input::ReadDone`] and `id`. Default: no store, the output is unavailable.
    fn output_read(&mut self, now: Instant, id: ReadId, read: OutputRead) {
        let _ = read;
        self.agent().handle(now, Input::read_without_store(id));
    }

    /// The program's own next timer, besides the agent's. Default: none.
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    /// The program's own timer is due. Default: nothing.
    fn handle_timeout(&mut self, now: Instant) {
        let _ = now;
    }

    /// Called at each turn of the loop, after a wake through the loop's waker among others:
    /// the program takes what other threads or tasks finished. Default: nothing.
    fn handle_wake(&mut self, now: Instant) {
        let _ = now;
    }

    /// Whether the program has nothing left to do once stdin has ended (no run, no child).
    /// Default: true.
    fn is_finished(&self) -> bool {
        true
    }

    /// A terminating signal arrived: stop what the program started (its child processes);
    /// nothing more is written. Default: nothing.
    fn terminate(&mut self) {}

    /// The agent's next stdout line; its events go to [`AgentProgram::on_event`] and its I/O
    /// to [`AgentProgram::spill_write`] and [`AgentProgram::output_read`] on the way.
    /// A loop asks only while stdout accepts lines, which applies backpressure to the whole
    /// program.
    fn next_line(&mut self, now: Instant) -> Option<Vec<u8>> {
        loop {
            match self.agent().poll_action()? {
                AgentAction::Write(line) => return Some(line),
                AgentAction::Event(event) => self.on_event(now, event),
                AgentAction::SpillWrite { id, write } => self.spill_write(now, id, write),
                AgentAction::OutputRead { id, read } => self.output_read(now, id, read),
            }
        }
    }

    /// A turn of the loop at `now`: what other threads or tasks finished
    /// ([`AgentProgram::handle_wake`]), then the agent's and the program's timers when due.
    fn handle_turn(&mut self, now: Instant) {
        self.handle_wake(now);
        if self.agent().poll_timeout().is_some_and(|t| t <= now) {
            self.agent().handle(now, Input::Timeout);
        }
        if self.poll_timeout().is_some_and(|t| t <= now) {
            self.handle_timeout(now);
        }
    }

    /// When the loop is to wake next: the earlier of the agent's and the program's timers.
    fn next_timeout(&mut self) -> Option<Instant> {
        let program = self.poll_timeout();
        [self.agent().poll_timeout(), program]
            .into_iter()
            .flatten()
            .min()
    }

    /// Whether the loop is done: stdin has ended (`stdin_closed`), the agent has seen it, and
    /// the program [is finished](AgentProgram::is_finished) (AGENT-01). The loop asks once it
    /// has no line left to write.
    fn is_done(&mut self, stdin_closed: bool) -> bool {
        stdin_closed && self.agent().is_input_closed() && self.is_finished()
    }
}

/// How a driver's agent-side stdio loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Stdin ended (or the host stopped reading) and everything owed was written.
    Done,
    /// A terminating signal arrived; [`AgentProgram::terminate`] was called.
    Signal(i32),
}

/// A program made of an agent and a function answering its events (see [`on_event`]).
#[derive(Debug)]
pub struct OnEvent<F> {
    /// The agent the loop feeds and drains; `answer` gets each of its events with it, to
    /// respond on.
    pub agent: Agent,
    answer: F,
}

/// The program whose events `answer` handles, for an agent with no timers or state of its
/// own beyond its [`Agent`].
pub fn on_event<F>(agent: Agent, answer: F) -> OnEvent<F>
where
    F: FnMut(&mut Agent, Instant, AgentEvent),
{
    OnEvent { agent, answer }
}

impl<F> AgentProgram for OnEvent<F>
where
    F: FnMut(&mut Agent, Instant, AgentEvent),
{
    fn agent(&mut self) -> &mut Agent {
        &mut self.agent
    }

    fn on_event(&mut self, now: Instant, event: AgentEvent) {
        (self.answer)(&mut self.agent, now, event);
    }
}
