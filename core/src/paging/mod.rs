//! Message paging, the agent side of `get_messages_page` (PAGE-01..06, rpc-messages.ts): the
//! cursor codec ([`Cursor`]) and the page builder ([`build_page`]), pure functions that the
//! [`Agent`](crate::agent::Agent) and tests share.
//!
//! A page is cut from one stable snapshot of the history: the session id, the leaf id and the
//! message count are bound into the cursor, so a cursor issued before the history changed is
//! refused as stale rather than silently skipping or repeating messages.
//!
//! ```
//! use musewire_core::paging::{build_page, PageOptions, Snapshot};
//! use serde_json::json;
//!
//! let messages: Vec<_> = (0..5).map(|i| json!({"role": "user", "content": i})).collect();
//! let snapshot = Snapshot { session_id: "s1", leaf_id: Some("leaf") };
//! let mut options = PageOptions { limit: Some(json!(2)), ..PageOptions::default() };
//! let mut seen = Vec::new();
//! loop {
//!     let page = build_page(&messages, &snapshot, &options).unwrap();
//!     seen.extend(page.range());
//!     match page.next_cursor {
//!         Some(cursor) => options.cursor = Some(json!(cursor)),
//!         None => break,
//!     }
//! }
//! assert_eq!(seen, [0, 1, 2, 3, 4]);
//! ```

mod cursor;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod page;

pub use cursor::Cursor;

pub use error::PageError;
pub(crate) use page::json_len;
pub(crate) use page::page_data;
pub use page::{build_page, Page, PageOptions, Snapshot, MAX_PAGE_BYTES, MAX_PAGE_MESSAGES};
