//! The whole-history read (PAGE-07): drain `get_messages_page` with limit 256 after v2 is
//! negotiated, checking that `totalMessages` stays constant and no cursor repeats; on
//! `session_busy` or `stale_cursor` discard the pages and fall back to `get_messages`; on a
//! v1-only agent use `get_messages` directly. The walk ends with an error as soon as the pages
//! hold more messages than the total, or a page brings none and goes on (PAGE-09, ours), so
//! an agent that pages forever cannot make it grow without bound.

use serde_json::Value;

use super::action::CommandFailure;
use crate::frame::{is_safe_integer, non_negative_safe_integer};
use crate::paging::PageError;
use crate::wire::{
    AgentMessage, Command, ErrorCode, GetMessages, GetMessagesPage, MessagesPageData, ResponseData,
};

/// PAGE-09 (ours): the pages hold more messages than `totalMessages` says there are.
const MORE_THAN_TOTAL: &str = "RPC message pagination returned more messages than its total";
/// PAGE-09 (ours), PAGE-02: a page with no message that still names a next cursor.
const EMPTY_PAGE: &str = "RPC message pagination returned an empty page before the end";
const INCONSISTENT_TOTAL: &str = "RPC message pagination returned an inconsistent total";

/// Where a walk stands.
#[derive(Debug, Clone, Default)]
pub(crate) struct Walk {
    limit: u64,
    messages: Vec<AgentMessage>,
    total: Option<u64>,
    seen: std::collections::BTreeSet<String>,
}

/// What the walk does next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Ask for the page at this cursor.
    Page(Command),
    /// Fall back to `get_messages`.
    Legacy,
    /// Done: these messages.
    Done(Vec<AgentMessage>),
    /// Failed.
    Failed(CommandFailure),
}

fn failure(error: &str) -> CommandFailure {
    CommandFailure::new(error)
}

/// The command for a page of `limit` messages.
pub(crate) fn page_command(cursor: Option<&str>, limit: u64) -> Command {
    Command::GetMessagesPage(GetMessagesPage {
        cursor: cursor.map(str::to_owned),
        limit: Some(limit),
        ..Default::default()
    })
}

impl Walk {
    /// A walk in pages of `limit` messages.
    pub(crate) fn new(limit: u64) -> Self {
        Walk {
            limit,
            ..Walk::default()
        }
    }

    /// The page size.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Messages read so far, and the total the agent advertises.
    pub(crate) fn progress(&self) -> (usize, Option<u64>) {
        (self.messages.len(), self.total)
    }

    /// Takes one page's outcome.
    pub(crate) fn page(&mut self, outcome: Result<ResponseData, CommandFailure>) -> Step {
        let data = match outcome {
            Ok(data) => data,
            Err(f) => {
                return if falls_back(&f) {
                    *self = Walk::new(self.limit);
                    Step::Legacy
                } else {
                    Step::Failed(f)
                };
            }
        };
        let page = match data {
            ResponseData::MessagesPage(page) => Some(page),
            // A page the wire model could not type as a whole: a message of a known role
            // with members of another shape, say. Read it as JSON reads it, each message
            // typed on its own (CALL-06); a total that is not a non-negative integer is not
            // a page this walk can trust.
            ResponseData::Other(data) => lenient_page(&data),
            _ => None,
        };
        let Some(page) = page.filter(|p| is_safe_integer(p.total_messages as f64)) else {
            return Step::Failed(failure(INCONSISTENT_TOTAL));
        };
        let total = page.total_messages;
        if self.total.is_some_and(|seen| seen != total) {
            return Step::Failed(failure(INCONSISTENT_TOTAL));
        }
        self.total = Some(total);
        let brought = page.messages.len();
        // PAGE-09 (ours): an agent that pages forever cannot grow the walk without bound.
        // Checked before the page is kept, so the walk never holds more than the total.
        if self.messages.len().saturating_add(brought) as u64 > total {
            return Step::Failed(failure(MORE_THAN_TOTAL));
        }
        self.messages.extend(page.messages);
        match page.next_cursor.filter(|c| !c.is_empty()) {
            // PAGE-02: a page holds at least one message; an empty one that goes on would
            // let the walk run forever within the total.
            Some(_) if brought == 0 => Step::Failed(failure(EMPTY_PAGE)),
            Some(cursor) => {
                let command = page_command(Some(&cursor), self.limit);
                if !self.seen.insert(cursor) {
                    return Step::Failed(failure("RPC message pagination repeated a cursor"));
                }
                Step::Page(command)
            }
            None if self.messages.len() as u64 != total => Step::Failed(failure(
                "RPC message pagination ended before the advertised total",
            )),
            None => Step::Done(std::mem::take(&mut self.messages)),
        }
    }
}

/// PAGE-07: whether a failed page falls back to `get_messages`: the session is changing
/// (`session_busy`), the cursor went stale (`stale_cursor`), by code or, from an agent that
/// sends no code, by the reference's text; or the agent does not page at all (`Unknown
/// command: get_messages_page`, as pi answers). The one rule for every history walk: the
/// client's whole-history read and the ACP bridge's load (ACP-06).
pub(crate) fn falls_back(failure: &CommandFailure) -> bool {
    matches!(
        failure.code,
        Some(ErrorCode::SessionBusy | ErrorCode::StaleCursor)
    ) || failure.error == PageError::SessionBusy.to_string()
        || failure.error == PageError::StaleCursor.to_string()
        || failure.error == UNKNOWN_PAGE_COMMAND
}

/// What an agent that does not page answers `get_messages_page` (CALL-02's id-less form).
const UNKNOWN_PAGE_COMMAND: &str = "Unknown command: get_messages_page";

/// The messages of a `get_messages` outcome.
pub(crate) fn legacy(
    outcome: Result<ResponseData, CommandFailure>,
) -> Result<Vec<AgentMessage>, CommandFailure> {
    match outcome? {
        ResponseData::Messages(data) => Ok(data.messages.into_vec()),
        ResponseData::Other(data) => {
            lenient_messages(&data).ok_or_else(|| failure("get_messages returned no messages"))
        }
        _ => Err(failure("get_messages returned no messages")),
    }
}

/// The `messages` of a payload the wire model could not type as a whole, each message typed
/// on its own: one of a known role with members of another shape is kept as
/// [`AgentMessage::Unknown`], as received (CALL-06).
fn lenient_messages(data: &Value) -> Option<Vec<AgentMessage>> {
    let messages = data.get("messages")?.as_array()?;
    Some(
        messages
            .iter()
            .map(|m| {
                serde_json::from_value(m.clone())
                    .unwrap_or_else(|_| AgentMessage::Unknown(m.clone()))
            })
            .collect(),
    )
}

/// A `get_messages_page` payload read as JSON reads it (see [`lenient_messages`]); `None`
/// when its total is not a non-negative integer.
fn lenient_page(data: &Value) -> Option<MessagesPageData> {
    let total = data
        .get("totalMessages")
        .and_then(non_negative_safe_integer)?;
    Some(MessagesPageData {
        messages: lenient_messages(data).unwrap_or_default().into(),
        next_cursor: data
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned),
        total_messages: total,
        ..MessagesPageData::default()
    })
}

/// The legacy command, `get_messages` (PAGE-07).
pub(crate) fn legacy_command() -> Command {
    Command::GetMessages(GetMessages::default())
}
