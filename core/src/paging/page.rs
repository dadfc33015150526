//! The page builder (PAGE-01, 02, 04..06).

use std::ops::Range;

use serde::Serialize;
use serde_json::{Map, Value};

use super::cursor::Cursor;
use super::error::PageError;
use crate::frame::non_negative_safe_integer;

/// Messages per page when the request gives no limit (PAGE-01).
pub(crate) const DEFAULT_PAGE_LIMIT: u64 = 100;
/// The most messages one `get_messages_page` serves: the largest limit a request may give
/// (PAGE-01), and the page size of the client's history walk (PAGE-07,
/// [`ClientConfig::history_page_limit`](crate::client::ClientConfig::history_page_limit)).
pub const MAX_PAGE_MESSAGES: u64 = 256;
/// Most bytes of serialised messages a page holds, counted as the JSON array `[m1,m2,…]`
/// (PAGE-02); a page always holds at least one message.
pub const MAX_PAGE_BYTES: usize = 768 * 1024;

/// The request's `cursor` and `limit`, as received: they are checked when the page is built,
/// after the busy check, in the reference's order (limit, then cursor).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageOptions {
    /// `cursor`: absent for the first page; anything but a string is an invalid cursor.
    pub cursor: Option<Value>,
    /// `limit`: absent or null for the default (100); else a number that JavaScript reads as
    /// an integer in 1..=256 (`5`, `5.0`).
    pub limit: Option<Value>,
}

impl PageOptions {
    /// The options of a `get_messages_page` command's members.
    pub(crate) fn from_command(fields: &Map<String, Value>) -> Self {
        PageOptions {
            cursor: fields.get("cursor").cloned(),
            limit: fields.get("limit").cloned(),
        }
    }

    /// The limit in force (PAGE-01).
    pub fn limit(&self) -> Result<usize, PageError> {
        match &self.limit {
            None | Some(Value::Null) => Ok(DEFAULT_PAGE_LIMIT as usize),
            Some(value) => non_negative_safe_integer(value)
                .filter(|n| (1..=MAX_PAGE_MESSAGES).contains(n))
                .map(|n| n as usize)
                .ok_or(PageError::LimitOutOfRange),
        }
    }

    /// The decoded cursor, when one was given (PAGE-03).
    pub fn cursor(&self) -> Result<Option<Cursor>, PageError> {
        match &self.cursor {
            None => Ok(None),
            Some(Value::String(text)) => Cursor::decode(text).map(Some),
            Some(_) => Err(PageError::InvalidCursor),
        }
    }
}

/// What a cursor is bound to besides the message count (PAGE-04).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot<'a> {
    /// The session's id.
    pub session_id: &'a str,
    /// The current leaf of the session tree (`None` for an empty session).
    pub leaf_id: Option<&'a str>,
}

/// One page: which messages, and the cursor of the next page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Index of the first message of the page.
    pub start: usize,
    /// One past the last message of the page.
    pub end: usize,
    /// The next page's cursor; `None` on the last page (PAGE-06).
    pub next_cursor: Option<String>,
    /// Messages in the snapshot.
    pub total_messages: usize,
}

impl Page {
    /// The indices of the page's messages.
    pub fn range(&self) -> Range<usize> {
        self.start..self.end
    }
}

/// Counts the bytes a value serialises to, without keeping them: as written on the wire, a
/// lone surrogate's stand-in as its six-byte escape ([`musewire_wire::display_text`]).
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // serde_json writes a string in runs cut only at ASCII escapes, so a stand-in and the
        // mark before a real reserved character are never split between two writes.
        self.0 += if memchr::memchr(0xF4, buf).is_some() {
            musewire_wire::__private::restore(buf.to_vec()).len()
        } else {
            buf.len()
        };
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The length of `message`'s compact JSON, counted without building it.
pub(crate) fn json_len<M: Serialize>(message: &M) -> usize {
    let mut counter = Counter(0);
    serde_json::to_writer(&mut counter, message).expect("a message serialises");
    counter.0
}

/// Cuts one page from `messages` as rpc-messages.ts does (PAGE-01..04, 06): the limit, then
/// the cursor (decoded and bound to `snapshot` and `messages.len()`), then as many messages
/// from the cursor's offset as fit the limit and 768 KiB of compact JSON, at least one.
/// Only the page's messages are serialised (to measure them). The busy check (PAGE-05) is
/// the caller's, first.
pub fn build_page<M: Serialize>(
    messages: &[M],
    snapshot: &Snapshot<'_>,
    options: &PageOptions,
) -> Result<Page, PageError> {
    let limit = options.limit()?;
    let total = messages.len();
    let start = match options.cursor()? {
        None => 0,
        Some(cursor) => {
            if cursor.session_id != snapshot.session_id
                || cursor.leaf_id.as_deref() != snapshot.leaf_id
                || cursor.message_count != total as u64
            {
                return Err(PageError::StaleCursor);
            }
            cursor.offset as usize
        }
    };
    let mut end = start;
    let mut bytes = 2; // "[]"
    while end < total && end - start < limit {
        let first = end == start;
        let size = json_len(&messages[end]) + usize::from(!first);
        if !first && bytes + size > MAX_PAGE_BYTES {
            break;
        }
        bytes += size;
        end += 1;
    }
    let next_cursor = (end < total).then(|| {
        Cursor {
            session_id: snapshot.session_id.to_owned(),
            leaf_id: snapshot.leaf_id.map(str::to_owned),
            message_count: total as u64,
            offset: end as u64,
        }
        .encode()
    });
    Ok(Page {
        start,
        end,
        next_cursor,
        total_messages: total,
    })
}

/// The response data of a page: `{messages, nextCursor?, totalMessages}` (PAGE-06).
pub(crate) fn page_data<M: Serialize>(page: &Page, messages: &[M]) -> Value {
    let list: Vec<Value> = messages[page.range()]
        .iter()
        .map(|m| serde_json::to_value(m).expect("a message serialises"))
        .collect();
    let mut data = Map::new();
    data.insert("messages".into(), Value::Array(list));
    if let Some(cursor) = &page.next_cursor {
        data.insert("nextCursor".into(), Value::String(cursor.clone()));
    }
    data.insert("totalMessages".into(), Value::from(page.total_messages));
    Value::Object(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn page_02_lone_surrogates_count_as_their_escapes() {
        let lone = crate::wire::stand_in(0xD83D).unwrap();
        for message in [
            json!({"role": "user", "content": format!("cut {lone}")}),
            json!({"role": "user", "content": format!("\u{10F7FF}\u{10F800} {lone}{lone}")}),
            json!({"role": "user", "content": "plain \u{1F600}"}),
        ] {
            let written = crate::wire::to_vec(&message).unwrap();
            assert_eq!(json_len(&message), written.len(), "{message}");
        }
    }
}
