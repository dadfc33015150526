//! What a request is answered with, once it is answered: an [`Answered`], or its failure
//! ([`Answer`]). A host kit hands it to the caller that waited for it
//! ([`FromAnswer`](crate::wire::FromAnswer) types it by the command).

use super::CommandFailure;
use crate::wire::Answered;

/// A waiting caller's answer: what the request gave, or its failure.
pub type Answer = Result<Answered, CommandFailure>;
