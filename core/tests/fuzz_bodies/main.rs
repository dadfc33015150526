//! The fuzz bodies of every machine (behind the `fuzzing` feature), run on their seeds (`seeds`)
//! under cargo test; the fuzz/ targets are thin wrappers over the same bodies.

#![cfg(feature = "fuzzing")]

#[cfg(feature = "acp")]
mod acp;
mod agent;
mod client;
mod content_blocks;
mod frame;
#[cfg(feature = "mcp")]
mod mcp;
mod seeds;
mod spill_output;
