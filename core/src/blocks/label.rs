//! Labels (BLOCK-05): the names, types and ids a stub or a marker shows.
//!
//! A label loses every control character (C0, DEL, C1), the line and paragraph separators
//! U+2028 and U+2029, and the bidirectional formatting controls (U+061C, U+200E, U+200F,
//! U+202A–U+202E, U+2066–U+2069), so none starts a line of its own or reorders what follows it;
//! it is made well-formed (a lone surrogate, or a lone surrogate escape in JSON text, becomes
//! U+FFFD); and it is cut to a bound, ending in `…` when cut.

use std::borrow::Cow;

/// The bound of a name in a stub, a link's line or a marker, in characters.
pub(crate) const LABEL_MAX_CHARS: usize = 120;

/// The bound of a media type or a block's type in a stub or a marker, in characters.
pub(crate) const TYPE_MAX_CHARS: usize = 80;

/// The bound of a server's id in a stub, in characters.
pub(crate) const SERVER_ID_MAX_CHARS: usize = 64;

/// Whether a label drops `c`: a control character, U+2028/U+2029, or a bidi control.
pub(crate) fn is_dropped_from_label(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// Removes what a label drops and cuts it to `max_chars` characters (the last one `…` when
/// cut). A `max_chars` of 0 gives the empty string.
pub(crate) fn sanitize_label(text: &str, max_chars: usize) -> String {
    cut_chars(
        text.chars().filter(|c| !is_dropped_from_label(*c)),
        max_chars,
    )
}

/// Cuts to `max_chars` characters, the last one `…` when anything was cut.
pub(crate) fn cut_chars(chars: impl Iterator<Item = char>, max_chars: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    let mut chars = chars.peekable();
    while let Some(c) = chars.next() {
        if count + 1 == max_chars && chars.peek().is_some() {
            out.push('…');
            return out;
        }
        if count == max_chars {
            return out;
        }
        out.push(c);
        count += 1;
    }
    out
}

/// Makes JSON text well-formed before it is parsed: each `\uXXXX` escape of a lone surrogate
/// (a high one not followed by a low one, or a low one on its own) becomes `\uFFFD`. JSON
/// allows such escapes, but a Rust string can't hold them, so a tool result carrying one in a
/// label would otherwise fail to parse. Text with no such escape is returned as it is.
pub(crate) fn well_formed_json(text: &str) -> Cow<'_, str> {
    if !text.contains("\\u") && !text.contains("\\U") {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut last = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        // Every backslash in JSON text is inside a string and starts an escape.
        if bytes.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let Some(unit) = escape_at(bytes, i) else {
            i += 2;
            continue;
        };
        match unit {
            0xD800..=0xDBFF => {
                if matches!(escape_at(bytes, i + 6), Some(0xDC00..=0xDFFF)) {
                    i += 12;
                } else {
                    out.push_str(&text[last..i]);
                    out.push_str("\\uFFFD");
                    changed = true;
                    i += 6;
                    last = i;
                }
            }
            0xDC00..=0xDFFF => {
                out.push_str(&text[last..i]);
                out.push_str("\\uFFFD");
                changed = true;
                i += 6;
                last = i;
            }
            _ => i += 6,
        }
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

fn escape_at(bytes: &[u8], i: usize) -> Option<u32> {
    if bytes.get(i) != Some(&b'\\') || bytes.get(i + 1) != Some(&b'u') {
        return None;
    }
    let hex = bytes.get(i + 2..i + 6)?;
    let hex = std::str::from_utf8(hex).ok()?;
    u32::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module's example, once a doctest (BLOCK-05).
    #[test]
    fn block_05_a_label_loses_separators_and_bidi_controls_and_a_cut_ends_in_an_ellipsis() {
        assert_eq!(
            sanitize_label("report\u{2028}.csv\u{202E}", 40),
            "report.csv"
        );
        assert_eq!(sanitize_label("abcdef", 4), "abc…");
    }

    #[test]
    fn block_05_cut() {
        assert_eq!(sanitize_label("abc", 3), "abc");
        assert_eq!(sanitize_label("abcd", 3), "ab…");
        assert_eq!(sanitize_label("abcd", 0), "");
        assert_eq!(sanitize_label("a\u{0}b\u{85}c\u{7f}", 10), "abc");
    }

    #[test]
    fn block_05_lone_surrogates() {
        assert_eq!(
            well_formed_json(r#"{"a":"x\ud800y","b":"\ud83d\ude00","c":"\\ud800","d":"\udc00"}"#),
            r#"{"a":"x\uFFFDy","b":"\ud83d\ude00","c":"\\ud800","d":"\uFFFD"}"#
        );
        assert!(matches!(
            well_formed_json(r#"{"a":"\u00e9"}"#),
            Cow::Borrowed(_)
        ));
    }
}
