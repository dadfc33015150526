//! Text bounds per surface (ACP-05): an assistant message's text, a thought, a tool card's
//! content each carry at most [`MAX_SURFACE_BYTES`], and say so when cut.

/// The most bytes of text one surface carries, its truncation notice included (ACP-05).
pub const MAX_SURFACE_BYTES: usize = 64 * 1024;

/// The notice a cut surface ends with (ACP-05).
pub const TRUNCATION_NOTICE: &str =
    "\n[… truncated: this text is over 64 KiB; the rest is not shown]";

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub fn cut_to_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A whole snapshot bounded: itself when it fits, else its head and the notice, together
/// [`MAX_SURFACE_BYTES`] at most.
pub fn bound_snapshot(text: &str) -> String {
    if text.len() <= MAX_SURFACE_BYTES {
        return text.to_owned();
    }
    let mut out = cut_to_bytes(text, MAX_SURFACE_BYTES - TRUNCATION_NOTICE.len()).to_owned();
    out.push_str(TRUNCATION_NOTICE);
    out
}

/// A streamed surface: deltas pass until the bound, then the notice once, then nothing.
#[derive(Debug, Default, Clone)]
pub(crate) struct Surface {
    sent: usize,
    cut: bool,
}

impl Surface {
    /// What of `delta` goes out, if anything.
    pub(crate) fn take(&mut self, delta: &str) -> Option<String> {
        if self.cut || delta.is_empty() {
            return None;
        }
        let room = MAX_SURFACE_BYTES - TRUNCATION_NOTICE.len();
        if self.sent + delta.len() <= room {
            self.sent += delta.len();
            return Some(delta.to_owned());
        }
        self.cut = true;
        let mut out = cut_to_bytes(delta, room - self.sent).to_owned();
        out.push_str(TRUNCATION_NOTICE);
        self.sent = MAX_SURFACE_BYTES;
        Some(out)
    }
}
