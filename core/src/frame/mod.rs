//! Transport framing (placeholder; being written).
#![allow(missing_docs)]
pub struct StreamDecoder;
pub enum DecodeEvent { Frame(Frame), Error(String) }
pub struct Frame;
impl Frame { pub fn frame_type(&self) -> Option<&str> { None } }
impl StreamDecoder { pub fn new() -> Self { Self } pub fn handle_bytes(&mut self, _b: &[u8]) {} pub fn handle_eof(&mut self) {} pub fn poll_event(&mut self) -> Option<DecodeEvent> { None } }
