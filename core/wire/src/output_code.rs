//! A failed read's code, typed: what the agent writes as the failure's `code` (OUT-10, ours),
//! one per [`OutputError`](crate::output::OutputError) variant (its serde tag).

use serde::{Deserialize, Serialize};

/// The `code` of a failed `read_output` (OUT-10's list of codes):
/// [`OutputError`](crate::output::OutputError)'s tag, without the details (the failure's `error` text
/// carries them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputErrorCode {
    /// `invalid_params` (OUT-03).
    InvalidParams,
    /// `path_not_reference` (OUT-07).
    PathNotReference,
    /// `uri_not_reference` (OUT-07).
    UriNotReference,
    /// `unknown` (OUT-07).
    Unknown,
    /// `foreign` (OUT-07).
    Foreign,
    /// `expired` (OUT-07).
    Expired,
    /// `unavailable` (OUT-07).
    Unavailable,
    /// `offset_out_of_range` (OUT-07).
    OffsetOutOfRange,
    /// `offset_inside_character` (OUT-05).
    OffsetInsideCharacter,
    /// `length_inside_character` (OUT-05).
    LengthInsideCharacter,
    /// `bad_read` (the agent's store read other bytes than asked).
    BadRead,
    /// `read_timed_out` (the read took longer than its 20 s budget, OUT-07).
    ReadTimedOut,
}

impl OutputErrorCode {
    /// Every code, in the contract's order.
    pub const ALL: [OutputErrorCode; 12] = [
        OutputErrorCode::InvalidParams,
        OutputErrorCode::PathNotReference,
        OutputErrorCode::UriNotReference,
        OutputErrorCode::Unknown,
        OutputErrorCode::Foreign,
        OutputErrorCode::Expired,
        OutputErrorCode::Unavailable,
        OutputErrorCode::OffsetOutOfRange,
        OutputErrorCode::OffsetInsideCharacter,
        OutputErrorCode::LengthInsideCharacter,
        OutputErrorCode::BadRead,
        OutputErrorCode::ReadTimedOut,
    ];

    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputErrorCode::InvalidParams => "invalid_params",
            OutputErrorCode::PathNotReference => "path_not_reference",
            OutputErrorCode::UriNotReference => "uri_not_reference",
            OutputErrorCode::Unknown => "unknown",
            OutputErrorCode::Foreign => "foreign",
            OutputErrorCode::Expired => "expired",
            OutputErrorCode::Unavailable => "unavailable",
            OutputErrorCode::OffsetOutOfRange => "offset_out_of_range",
            OutputErrorCode::OffsetInsideCharacter => "offset_inside_character",
            OutputErrorCode::LengthInsideCharacter => "length_inside_character",
            OutputErrorCode::BadRead => "bad_read",
            OutputErrorCode::ReadTimedOut => "read_timed_out",
        }
    }

    /// From the wire string; `None` for a code that is not a read failure's.
    pub fn from_wire(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == code)
    }
}

impl std::fmt::Display for OutputErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
