//! What a driver's blocking or async call gives back: the typed payload of the answer
//! ([`FromAnswer`] picks it out of an [`Answered`]), or a [`CallError`]. Written once for
//! every driver.

use std::time::Duration;

use thiserror::Error;

use super::{ClientError, CommandFailure};
use crate::output::OutputErrorCode;
use crate::wire::{Answered, FromAnswer};

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

    /// `answered` read as `T`, or [`CallError::Unexpected`] when it is of another shape
    /// than the command's.
    pub fn read<T: FromAnswer>(answered: Answered) -> Result<T, CallError> {
        T::from_answer(answered).map_err(|other| CallError::unexpected(&other))
    }

    /// [`CallError::Unexpected`] for an answer of another shape than the command's.
    fn unexpected(answered: &Answered) -> Self {
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
