//! Text bounds per surface (ACP-05): a tool card's content (live or replayed), a builtin
//! command's output and an unknown item's text each carry at most [`MAX_SURFACE_BYTES`], and
//! say so when cut. What the agent says to its user, its streamed answer and thoughts (live or
//! replayed), is not a bounded surface: it reaches the editor whole ([`whole`]).

/// The most bytes of text one surface carries, its truncation notice included (ACP-05).
pub const MAX_SURFACE_BYTES: usize = 64 * 1024;

/// The notice a cut surface ends with (ACP-05).
pub const TRUNCATION_NOTICE: &str =
    "\n[… truncated: this text is over 64 KiB; the rest is not shown]";

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub(crate) fn cut_to_bytes(text: &str, max: usize) -> &str {
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
pub(crate) fn bound_snapshot(text: &str) -> String {
    if text.len() <= MAX_SURFACE_BYTES {
        return text.to_owned();
    }
    let mut out = cut_to_bytes(text, MAX_SURFACE_BYTES - TRUNCATION_NOTICE.len()).to_owned();
    out.push_str(TRUNCATION_NOTICE);
    out
}

/// A streamed delta of the assistant's answer or thoughts as it goes out: all of it, however
/// long the message grows (ACP-05 bounds tool output, not what the agent says to its user);
/// nothing for an empty one.
pub(crate) fn whole(delta: &str) -> Option<String> {
    (!delta.is_empty()).then(|| delta.to_owned())
}

/// A running output's tail bounded (ACP-30): itself when it fits, else the truncation notice
/// on a line of its own and the last bytes, together [`MAX_SURFACE_BYTES`] at most: what a
/// command printed last is what its card shows.
pub(crate) fn bound_tail(text: &str) -> String {
    if text.len() <= MAX_SURFACE_BYTES {
        return text.to_owned();
    }
    let notice = TRUNCATION_NOTICE.trim_start();
    let keep = MAX_SURFACE_BYTES - notice.len() - 1;
    let mut start = text.len() - keep;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("{notice}\n{}", &text[start..])
}
