//! What a command is answered with, typed by the command: [`Answered`] is what a waiting caller
//! gets, [`FromAnswer`] picks the payload a command's answer carries out of it and
//! [`TypedCommand`] ties each command's type to its answer's. For each answer type the command
//! table (`command.rs`) writes its `FromAnswer` from the row that reads into its
//! [`ResponseData`] variant; the ones below are written by hand.

use crate::{AgentMessage, Command, PromptData, ResponseData};

/// What a waiting caller is answered with: a response's typed data, or a whole history.
#[derive(Debug, Clone, PartialEq)]
// Moved once to the waiting caller; not worth an allocation.
#[allow(clippy::large_enum_variant)]
pub enum Answered {
    /// The data of a command's response (CALL-01).
    Data(ResponseData),
    /// The messages of a whole-history read (PAGE-07).
    History(Vec<AgentMessage>),
}

/// A command with the type its answer is read as: each command's own type
/// ([`GetState`](crate::GetState), …, one per command, from the command table), and a
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
// The answer of another shape goes back once, on the failure path: not worth a box.
#[allow(clippy::result_large_err)]
pub trait FromAnswer: Sized {
    /// Reads `answered` as `Self`; an answer of another shape is given back as the error.
    fn from_answer(answered: Answered) -> Result<Self, Answered>;
}

impl FromAnswer for Answered {
    fn from_answer(answered: Answered) -> Result<Self, Answered> {
        Ok(answered)
    }
}

impl FromAnswer for ResponseData {
    fn from_answer(answered: Answered) -> Result<Self, Answered> {
        match answered {
            Answered::Data(data) => Ok(data),
            other => Err(other),
        }
    }
}

impl FromAnswer for Vec<AgentMessage> {
    fn from_answer(answered: Answered) -> Result<Self, Answered> {
        match answered {
            Answered::History(messages) => Ok(messages),
            other => Err(other),
        }
    }
}

impl FromAnswer for PromptData {
    /// An agent may acknowledge a prompt with no data (omp does): it was accepted and the
    /// agent runs (CALL-03).
    fn from_answer(answered: Answered) -> Result<Self, Answered> {
        match answered {
            Answered::Data(ResponseData::Prompt(data)) => Ok(data),
            Answered::Data(ResponseData::Other(serde_json::Value::Null)) => {
                Ok(PromptData::default())
            }
            other => Err(other),
        }
    }
}
