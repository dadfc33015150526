//! The typed wire model: every frame of the coding-agent RPC protocol, as oh-my-pi
//! (`@oh-my-pi/pi-coding-agent` 18.2.3) and the v1-only pi (0.73.1) define it.
//!
//! - [`AgentFrame`]: everything an agent writes on stdout (ready, responses, session
//!   events, extension UI requests, host tool and URI requests, …).
//! - [`Command`]: everything a host asks of the agent; [`HostFrame`]: everything else a
//!   host writes (UI answers, host tool results, host URI results).
//!
//! Forward compatibility (CALL-06) is built in: a frame, message, content block, event or
//! UI request of an unknown type parses as an `Unknown(Value)` variant holding it as
//! received, and every struct keeps the members it does not know in `extra`, so that
//! serialising a parsed frame gives back the same JSON value. A newer agent never breaks
//! an older musewire.
//!
//! Deep, open-ended payloads (tool arguments and details, JSON Schemas, provider metadata)
//! stay [`serde_json::Value`]. The message so far that each `message_update` repeats is a
//! [`Lazy`]: kept as its text and typed when asked.
//!
//! Every text `JSON.parse` accepts is typed, lone surrogate escapes (`"\ud83d"`) included:
//! the model holds each as a stand-in character and writes it back as the same escape (see
//! [Lone surrogates](#lone-surrogates) below). Read frames with the
//! model's `from_slice*` functions (or [`parse_value`]) and write them with its `to_vec*`
//! functions (or [`to_vec`]), which keep that mapping.
//!
//! # Lone surrogates
//!
//! A JavaScript string may hold a lone surrogate code unit, a Rust `String` may not. The
//! model maps each lone surrogate `U` to the private-use character `U+10F800 + (U - 0xD800)`
//! when it reads JSON text, and back to the escape `\uXXXX` (lowercase, as
//! `JSON.stringify` writes it) when it writes; a real character of that range is held
//! behind [`ESCAPE_MARK`] so the mapping stays one-to-one. [`display_text`] shows a text
//! with each lone surrogate as U+FFFD; [`lone_surrogate`] and [`stand_in`] convert between
//! a stand-in and its code unit. Reached this way, `String` fields, `extra` members, names
//! and [`serde_json::Value`] payloads all hold lone surrogates, with no type of their own.
//!
//! ```
//! use musewire_wire::{AgentFrame, SessionEvent, Command, ErrorCode};
//!
//! let frame = AgentFrame::from_slice(br#"{"type":"agent_end","messages":[],"isTerminal":false}"#).unwrap();
//! let AgentFrame::Event(SessionEvent::AgentEnd(end)) = &frame else { panic!() };
//! assert!(!end.is_terminal());
//!
//! let failure = AgentFrame::from_slice(
//!     br#"{"id":"7","type":"response","command":"get_messages_page","success":false,"error":"RPC message cursor is stale","code":"stale_cursor"}"#,
//! ).unwrap();
//! let AgentFrame::Response(response) = &failure else { panic!() };
//! assert_eq!(response.error_code(), Some(&ErrorCode::StaleCursor));
//!
//! let line = Command::GetState(Default::default()).to_vec_with_id(Some("req-1"));
//! assert_eq!(line, br#"{"id":"req-1","type":"get_state"}"#);
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod answer;
pub(crate) mod codec;
mod command;
#[cfg(test)]
mod command_table_tests;
mod event;
mod frame;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod host;
mod lazy;
mod message;
pub mod output;
mod output_code;
pub(crate) mod reader;
mod response;
mod scan_simd;
mod session;
pub(crate) mod surrogate;
mod ui;

pub use answer::{Answered, FromAnswer, TypedCommand};
pub use command::*;
pub use event::*;
pub use frame::*;
pub use host::*;
pub use lazy::{Lazy, MessageList, Messages};
pub use message::*;
pub use response::*;
pub use session::*;
pub use surrogate::{display_text, lone_surrogate, parse_value, stand_in, to_vec, ESCAPE_MARK};
pub use ui::*;

/// What musewire-core's framing layer uses of this crate's reader, not an API: it may change
/// in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::reader::from_slice;
    pub use crate::scan_simd::string_end;
    pub use crate::surrogate::{protect_scanned, restore};
}
