//! # musewire-transcript
//!
//! The conformance transcript format and its replayer: a transcript is JSONL, a header (the
//! role, the config, the rule IDs it covers) and then steps (an input at a time, what a call
//! returned, the actions expected); [`replay`] drives the host-side `Client`, the agent-side
//! `Agent` or the ACP `Bridge` of `musewire-core` through it, by the header's role, with a
//! virtual clock, and compares the actions exactly ([`diff`] abbreviates long strings as
//! transcripts store them). The recorders in the drivers write the same format, so a live session replays here.
#![warn(missing_docs)]

pub mod diff;
pub mod replay;
pub mod transcript;
