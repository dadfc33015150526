//! # musewire-core
//!
//! The sans-IO core of musewire: everything the coding-agent RPC protocol
//! (`<agent> --mode rpc`, newline-delimited JSON over stdio, v2 chunking of
//! large frames) requires, with no I/O, no clock reads, no threads and no
//! randomness of its own.
//!
//! ## The run-loop contract
//!
//! Every state machine of this crate has the same shape. Input goes in through
//! `handle_*` methods (bytes read, end of input, a timer), each given the
//! current time when time matters; work comes out of `poll_*` methods. After
//! every input the driver drains the poll method to `None` and performs each
//! item in order (write these bytes, print this frame), then waits for the
//! next input. The same inputs always give the same outputs, byte for byte.
//!
//! The framing layer ([`frame`]) already follows it:
//!
//! ```
//! use musewire_core::frame::{StreamDecoder, DecodeEvent};
//!
//! let mut decoder = StreamDecoder::new();
//! let mut frames = Vec::new();
//! // The driver reads bytes from the agent's stdout, in any split…
//! for read in [&b"{\"type\":\"ready\",\"protocolVersion\":1}\n{\"type\":\"agent_"[..], b"start\"}\n"] {
//!     decoder.handle_bytes(read);
//!     // …and drains every event before reading again.
//!     while let Some(event) = decoder.poll_event() {
//!         match event {
//!             DecodeEvent::Frame(frame) => frames.push(frame.frame_type().unwrap_or("").to_owned()),
//!             DecodeEvent::Error(error) => panic!("{error}"),
//!         }
//!     }
//! }
//! decoder.handle_eof();
//! assert!(decoder.poll_event().is_none());
//! assert_eq!(frames, ["ready", "agent_start"]);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod blocks;
pub mod client;
pub mod frame;
mod outcome;
pub mod output;
pub mod paging;
pub mod spill;
pub mod wire;
