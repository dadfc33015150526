//! The agent's inputs as one enum: what the driver reads (stdin's bytes and
//! its end), the passing of time, and the application's calls, handed in through one method,
//! [`Agent::handle`], the agent's only way in.

use std::time::Instant;

use super::{Agent, AgentCall, AgentCallResult, CommandId, PageSource, ReadId, SpillId};
use crate::output::{OutputError, ReadBytes};
use crate::spill::{SaveFailure, Saved};
use crate::wire::AgentMessage;

/// One input of an [`Agent`].
#[derive(Debug, Clone, PartialEq)]
pub enum Input<'a> {
    /// Bytes read from stdin, in any split.
    Stdin(&'a [u8]),
    /// The end of stdin (HOST-07: what is pending with the host is rejected).
    StdinEnd,
    /// The passing of time: due when [`Agent::poll_timeout`] says (dialog timeouts).
    Timeout,
    /// A call of the application ([`AgentCall`]).
    Call(AgentCall),
    /// The application's answer to a `get_messages_page` command from its typed history, as
    /// [`AgentCall::RespondMessagesPage`] answers from JSON messages (PAGE-01..06); only the
    /// page's messages are serialised. Its result is returned as a call's.
    MessagesPage(CommandId, PageSource<'a, AgentMessage>),
    /// The driver's answer to an [`AgentAction::SpillWrite`](super::AgentAction::SpillWrite)
    /// (SPILL-03, SPILL-05): what the store saved, or why it could not.
    SpillDone(SpillId, Result<Saved, SaveFailure>),
    /// The driver's answer to an [`AgentAction::OutputRead`](super::AgentAction::OutputRead)
    /// (OUT-04, OUT-10): the bytes read and the output's length, or the store's error. An
    /// answer to a read that timed out (or was never asked) is dropped.
    ReadDone(ReadId, Result<ReadBytes, OutputError>),
}

impl Input<'_> {
    /// The answer of a driver with no spill store to spill write `id`: the save failed
    /// (SPILL-05: the original result goes on).
    pub(crate) fn spill_without_store(id: SpillId) -> Self {
        Input::SpillDone(id, Err(SaveFailure::no_store()))
    }

    /// The answer of a driver with no store to output read `id`: the output is unavailable
    /// (OUT-07).
    pub(crate) fn read_without_store(id: ReadId) -> Self {
        Input::ReadDone(id, Err(OutputError::Unavailable))
    }
}

impl Agent {
    /// Hands in one input at `now`. A call's result is returned (and a
    /// [`Input::MessagesPage`]'s; `None` for the other inputs); the outputs are then drained with [`Agent::poll_action`], and the next timer
    /// read from [`Agent::poll_timeout`].
    pub fn handle(&mut self, now: Instant, input: Input<'_>) -> Option<AgentCallResult> {
        match input {
            Input::Stdin(bytes) => self.handle_stdin(now, bytes),
            Input::StdinEnd => self.handle_stdin_eof(now),
            Input::Timeout => self.handle_timeout(now),
            Input::Call(call) => return Some(self.call(now, call)),
            Input::MessagesPage(request, source) => {
                let answered = self.respond_messages_page(request, source);
                return Some(AgentCallResult::Done(answered));
            }
            Input::SpillDone(id, saved) => self.spill_done(id, saved),
            Input::ReadDone(id, read) => self.read_done(now, id, read),
        }
        None
    }
}
