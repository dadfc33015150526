//! The whole-history read (PAGE-07): drain `get_messages_page` with limit 256 after v2 is
//! negotiated, checking that `totalMessages` stays constant and no cursor repeats; on
//! `session_busy` or `stale_cursor` discard the pages and fall back to `get_messages`; on a
//! v1-only agent use `get_messages` directly.

use serde_json::{json, Value};

use super::action::CommandFailure;
use crate::frame::non_negative_safe_integer;

/// Page size of the walk (PAGE-07), and the most the agent serves (PAGE-01).
pub const HISTORY_PAGE_LIMIT: u64 = 256;

const BUSY: &str = "Cannot page messages while the session is changing";
const STALE: &str = "RPC message cursor is stale";

/// Where a walk stands.
#[derive(Debug, Clone, Default)]
pub(crate) struct Walk {
    limit: u64,
    messages: Vec<Value>,
    total: Option<u64>,
    seen: std::collections::BTreeSet<String>,
}

/// What the walk does next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Ask for the page at this cursor.
    Page(Value),
    /// Fall back to `get_messages`.
    Legacy,
    /// Done: these messages.
    Done(Vec<Value>),
    /// Failed.
    Failed(CommandFailure),
}

fn failure(error: &str) -> CommandFailure {
    CommandFailure {
        error: error.to_owned(),
        code: None,
    }
}

/// The command for a page of `limit` messages.
pub(crate) fn page_command(cursor: Option<&str>, limit: u64) -> Value {
    match cursor {
        Some(c) => json!({"type": "get_messages_page", "cursor": c, "limit": limit}),
        None => json!({"type": "get_messages_page", "limit": limit}),
    }
}

impl Walk {
    /// A walk in pages of `limit` messages.
    pub fn new(limit: u64) -> Self {
        Walk {
            limit,
            ..Walk::default()
        }
    }

    /// The page size.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Messages read so far, and the total the agent advertises.
    pub fn progress(&self) -> (usize, Option<u64>) {
        (self.messages.len(), self.total)
    }

    /// Takes one page's outcome.
    pub fn page(&mut self, outcome: Result<Value, CommandFailure>) -> Step {
        let data = match outcome {
            Ok(data) => data,
            Err(f) => {
                let fallback = matches!(f.code.as_deref(), Some("session_busy" | "stale_cursor"))
                    || f.error == BUSY
                    || f.error == STALE;
                return if fallback {
                    *self = Walk::new(self.limit);
                    Step::Legacy
                } else {
                    Step::Failed(f)
                };
            }
        };
        let total = data
            .get("totalMessages")
            .and_then(non_negative_safe_integer);
        let Some(total) = total.filter(|t| self.total.is_none_or(|seen| seen == *t)) else {
            return Step::Failed(failure(
                "RPC message pagination returned an inconsistent total",
            ));
        };
        self.total = Some(total);
        if let Some(messages) = data.get("messages").and_then(Value::as_array) {
            self.messages.extend(messages.iter().cloned());
        }
        match data
            .get("nextCursor")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
        {
            Some(cursor) => {
                if !self.seen.insert(cursor.to_owned()) {
                    return Step::Failed(failure("RPC message pagination repeated a cursor"));
                }
                Step::Page(page_command(Some(cursor), self.limit))
            }
            None if self.messages.len() as u64 != total => Step::Failed(failure(
                "RPC message pagination ended before the advertised total",
            )),
            None => Step::Done(std::mem::take(&mut self.messages)),
        }
    }
}

/// The messages of a `get_messages` outcome.
pub(crate) fn legacy(outcome: Result<Value, CommandFailure>) -> Result<Vec<Value>, CommandFailure> {
    let data = outcome?;
    data.get("messages")
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| failure("get_messages returned no messages"))
}

/// The legacy command.
pub(crate) fn legacy_command() -> Value {
    json!({"type": "get_messages"})
}
