//! What a request is answered with, once it is answered: [`Answered`], or its failure
//! ([`Answer`]). A host kit hands it to the caller that waited for it
//! ([`FromAnswer`](super::FromAnswer) types it by the command).

use super::CommandFailure;
use crate::wire::{AgentMessage, ResponseData};

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

/// A waiting caller's answer: what the request gave, or its failure.
pub type Answer = Result<Answered, CommandFailure>;
