//! What a driver's blocking or async call gives back: the typed payload of the answer, or a
//! [`CallError`]. Written once for every driver: [`FromAnswer`] picks the payload a command's
//! response carries out of an [`Answered`]: for each answer type, the command table
//! (`wire/command.rs`) writes it from the row that reads into its [`ResponseData`] variant; the
//! ones below are those written by hand.

use std::time::Duration;

use thiserror::Error;

use super::{Answered, ClientError, CommandFailure};
use crate::output::OutputErrorCode;
use crate::wire::{AgentMessage, Command, PromptData, ResponseData};

/// Why a driver's call gave no answer.
#[derive(Debug, Error)]
pub enum CallError {
    /// The client refused the call; nothing was sent.
    #[error(transparent)]
    Refused(#[from] ClientError),
    /// The agent answered with a failure (CALL-08: match on its `code`).
    #[error("{0}")]
    Failed(CommandFailure),
    /// No answer within the time given.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The session ended before the answer (the `Closed` event says why).
    #[error("the session has ended")]
    Ended,
    /// The agent answered with data of another shape than the command's.
    #[error("unexpected answer: {0}")]
    Unexpected(String),
}

impl CallError {
    /// The typed code of a failed `read_output` (OUT-10): see
    /// [`CommandFailure::output_code`].
    pub fn output_code(&self) -> Option<OutputErrorCode> {
        match self {
            CallError::Failed(failure) => failure.output_code(),
            _ => None,
        }
    }

    /// [`CallError::Unexpected`] for an answer of another shape than the command's (the
    /// command table's `FromAnswer` impls give it too).
    pub(crate) fn unexpected(answered: &Answered) -> Self {
        CallError::Unexpected(match answered {
            Answered::Data(data) => serde_json::to_string(data).unwrap_or_default(),
            Answered::History(messages) => format!("a history of {} messages", messages.len()),
        })
    }
}

impl From<CommandFailure> for CallError {
    fn from(failure: CommandFailure) -> Self {
        CallError::Failed(failure)
    }
}

/// A command with the type its answer is read as: each command's own type
/// ([`GetState`](crate::wire::GetState), …, one per command, from the command table), and a
/// [`Command`] itself (its answer's [`ResponseData`]). What the drivers' generic `call`
/// takes.
pub trait TypedCommand {
    /// What the answer is read as.
    type Answer: FromAnswer;

    /// The command to send.
    fn into_command(self) -> Command;
}

impl TypedCommand for Command {
    type Answer = ResponseData;

    fn into_command(self) -> Command {
        self
    }
}

/// A payload a call's answer can be read as.
pub trait FromAnswer: Sized {
    /// Reads `answered` as `Self`, or says what came instead.
    fn from_answer(answered: Answered) -> Result<Self, CallError>;
}

impl FromAnswer for Answered {
    fn from_answer(answered: Answered) -> Result<Self, CallError> {
        Ok(answered)
    }
}

impl FromAnswer for ResponseData {
    fn from_answer(answered: Answered) -> Result<Self, CallError> {
        match answered {
            Answered::Data(data) => Ok(data),
            other => Err(CallError::unexpected(&other)),
        }
    }
}

impl FromAnswer for Vec<AgentMessage> {
    fn from_answer(answered: Answered) -> Result<Self, CallError> {
        match answered {
            Answered::History(messages) => Ok(messages),
            other => Err(CallError::unexpected(&other)),
        }
    }
}

impl FromAnswer for PromptData {
    /// An agent may acknowledge a prompt with no data (omp does): it was accepted and the
    /// agent runs (CALL-03).
    fn from_answer(answered: Answered) -> Result<Self, CallError> {
        match answered {
            Answered::Data(ResponseData::Prompt(data)) => Ok(data),
            Answered::Data(ResponseData::Other(serde_json::Value::Null)) => {
                Ok(PromptData::default())
            }
            other => Err(CallError::unexpected(&other)),
        }
    }
}
