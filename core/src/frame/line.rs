//! Splitting a byte stream into physical lines (FRAME-01, FRAME-02).

use memchr::memchr;

/// One item from the [`LineDecoder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// A line's bytes, without its LF and without one CR before the LF. Never blank.
    Text(&'a [u8]),
    /// A line longer than the limit (LF included) was dropped; the decoder has skipped, or is
    /// skipping, to the next LF (FRAME-02).
    TooLong,
}

/// Splits bytes on LF, in any split of reads, holding at most `max_line_bytes - 1` bytes.
///
/// Each byte is scanned once: the decoder remembers the partial line it holds and looks for
/// LF only in new input. A line longer than the limit is reported as soon as that is known
/// and the rest of it, up to the next LF, is discarded. Lines that are empty or only JSON
/// whitespace are skipped. At end of input, [`LineDecoder::finish`] hands up a last line
/// that has no LF (FRAME-01).
#[derive(Debug, Clone)]
pub struct LineDecoder {
    buf: Vec<u8>,
    max_line_bytes: usize,
    discarding: bool,
}

impl LineDecoder {
    /// A decoder for lines of at most `max_line_bytes`, LF included (at least 2).
    pub fn new(max_line_bytes: usize) -> Self {
        LineDecoder {
            buf: Vec::new(),
            max_line_bytes: max_line_bytes.max(2),
            discarding: false,
        }
    }

    /// Bytes held for a partial line.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Feeds bytes; `sink` gets each complete line (or too-long report) in order.
    pub fn push(&mut self, mut input: &[u8], sink: &mut dyn FnMut(Line<'_>)) {
        while !input.is_empty() {
            let Some(nl) = memchr(b'\n', input) else {
                if !self.discarding {
                    if self.buf.len() + input.len() >= self.max_line_bytes {
                        self.buf.clear();
                        self.discarding = true;
                        sink(Line::TooLong);
                    } else {
                        self.buf.extend_from_slice(input);
                    }
                }
                return;
            };
            let segment = &input[..nl];
            input = &input[nl + 1..];
            if self.discarding {
                self.discarding = false;
                continue;
            }
            if self.buf.len() + nl + 1 > self.max_line_bytes {
                self.buf.clear();
                sink(Line::TooLong);
            } else if self.buf.is_empty() {
                emit(segment, sink);
            } else {
                self.buf.extend_from_slice(segment);
                emit(&self.buf, sink);
                self.buf.clear();
            }
        }
    }

    /// Ends the input: hands up a last line without LF, if any, and resets the decoder.
    pub fn finish(&mut self, sink: &mut dyn FnMut(Line<'_>)) {
        if !self.discarding && !self.buf.is_empty() {
            emit(&self.buf, sink);
        }
        self.buf.clear();
        self.discarding = false;
    }
}

fn emit(line: &[u8], sink: &mut dyn FnMut(Line<'_>)) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line
        .iter()
        .all(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
    {
        return;
    }
    sink(Line::Text(line));
}
