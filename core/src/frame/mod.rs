//! Transport framing, both directions: rules FRAME-01..13 of `conformance/RULES.md`.
//!
//! Inbound, a [`StreamDecoder`] turns an agent's stdout into logical [`Frame`]s: it splits
//! lines ([`LineDecoder`], FRAME-01, 02), reassembles v2 `rpc_chunk` sequences with every
//! check of FRAME-07..10, and reads each frame's `type`, `id` and `command` without parsing
//! the rest. Outbound, a [`FrameEncoder`] writes logical frames as an agent does: v2 chunks
//! one line at a time (FRAME-11), or the v1 over-limit transforms (FRAME-12).

mod decoder;
mod encoder;
mod envelope;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod limits;
mod line;
mod logical;
mod reassembly;
mod scan;
mod shrink;

pub use decoder::{DecodeEvent, DecoderConfig, DecoderStats, Negotiation, StreamDecoder};
pub use encoder::{EncodedFrame, FrameEncoder};
pub use error::{FrameError, UnsupportedVersion};
pub(crate) use limits::{is_safe_integer, non_negative_safe_integer, MAX_REASSEMBLED_FRAME_BYTES};
pub use limits::{ProtocolVersion, CHUNK_PAYLOAD_BYTES, MAX_FRAME_BYTES, MAX_SAFE_INTEGER};
pub use line::{Line, LineDecoder};
pub use logical::Frame;
