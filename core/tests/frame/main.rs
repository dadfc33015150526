//! Framing (`musewire_core::frame`): decoding, encoding and their properties, over one harness (`common`).

mod common;
mod corpus;
mod decode;
mod encode;
mod props;
