//! [`PageError`]: why a page cannot be given. Its own module so that the cursor codec and the
//! page builder both depend on it and the builder alone depends on the codec.

use thiserror::Error;

use crate::wire::ErrorCode;

/// Why a page cannot be given, with the reference's messages and codes.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PageError {
    /// A limit that is not an integer in 1..=256 (PAGE-01).
    #[error("RPC message page limit must be between 1 and 256")]
    LimitOutOfRange,
    /// A cursor that fails a check of PAGE-03.
    #[error("Invalid RPC message cursor")]
    InvalidCursor,
    /// A cursor from another snapshot: code `stale_cursor` (PAGE-04).
    #[error("RPC message cursor is stale")]
    StaleCursor,
    /// The session is streaming or compacting: code `session_busy` (PAGE-05).
    #[error("Cannot page messages while the session is changing")]
    SessionBusy,
}

impl PageError {
    /// The failure's `code` (CALL-08), for the two errors that carry one.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            PageError::StaleCursor => Some(ErrorCode::StaleCursor),
            PageError::SessionBusy => Some(ErrorCode::SessionBusy),
            _ => None,
        }
    }
}
