//! Lone surrogates in the typed model: every frame `JSON.parse` accepts is typed, and writes
//! back unchanged (CALL-06).
//!
//! # The problem
//!
//! JavaScript strings are UTF-16 and may hold a lone surrogate code unit: `JSON.stringify`
//! writes one as an escape (`"\ud83d"`, what a cut emoji becomes), and `JSON.parse` takes
//! it back. A Rust `String` (and so serde, serde_json and [`serde_json::Value`]) holds only
//! Unicode scalar values, so such a frame failed every typed parse, and an agent could not
//! even say which command it was refusing.
//!
//! # The design: stand-in characters, mapped at the text boundary
//!
//! A reversible mapping is applied to the JSON text before serde reads it and undone on the
//! bytes serde writes, so that every type of the model (its `String` fields, its
//! [`serde_json::Value`] payloads, member names, `extra`) holds lone surrogates with no
//! change to its API:
//!
//! - A lone surrogate `U` (`0xD800..=0xDFFF`, high or low, escaped in the text) is held as
//!   the stand-in character `U+10F800 + (U - 0xD800)`, one of the last 2,048 code points of
//!   plane 16 (Supplementary Private Use Area-B, which no encoder assigns a meaning to).
//! - So that the mapping stays one-to-one, a real character of that range, or the mark
//!   [`ESCAPE_MARK`] (`U+10F7FF`) itself, is held preceded by the mark.
//! - Writing ([`to_vec`], and every `to_vec*` of the model and the frame encoder) turns a
//!   stand-in back into its escape, lowercase as `JSON.stringify` writes it (`\ud83d`), and
//!   drops the mark before a real character.
//!
//! A frame therefore writes back exactly as `JSON.stringify(JSON.parse(text))` would: a
//! lone surrogate as its escape, a reversed pair (`"\udc00\ud800"`) as two escapes, a pair
//! split across two members as one escape in each.
//!
//! The alternatives were weighed: a string type of our own (WTF-8, or serde_json's byte
//! strings) would change every `String` field of the model and still could not reach the
//! open-ended [`serde_json::Value`] payloads (tool arguments, `extra`), where lone
//! surrogates occur just as often; a mapping at the boundary reaches all of them.
//!
//! # What a host sees
//!
//! Text read from the model is a `&str` as before. It holds a stand-in where the agent sent
//! a lone surrogate; [`display_text`] gives the text to show a person (each lone surrogate
//! as U+FFFD, as `TextDecoder` would show it), and [`lone_surrogate`] tells a stand-in
//! apart. A host building text with a lone surrogate in it uses [`stand_in`].
//!
//! The model form is kept by [`parse_value`] and the model's `from_slice*` functions on the
//! way in, and by [`to_vec`] and the model's `to_vec*` functions on the way out; `to_value`
//! and `from_value` stay in the model form. Serialising a model type with
//! `serde_json::to_vec` directly writes the stand-ins as characters: use [`to_vec`].
//!
//! Cost: a text with no `\u` escape of a surrogate and no byte `0xF4` (a plane-16
//! character) is neither copied nor walked; the check is one SIMD search for each (`\u`
//! and `0xF4`). Writing, a text with no byte `0xF4` is returned as serialised.

use std::borrow::Cow;

use memchr::{memchr, memchr2, memmem};
use serde::Serialize;
use serde_json::Value;

/// The mark that precedes a real character of the reserved range (`U+10F7FF..=U+10FFFF`)
/// in the model form.
pub const ESCAPE_MARK: char = '\u{10F7FF}';

/// The first stand-in: the character holding the lone surrogate `0xD800`.
const STAND_IN_BASE: u32 = 0x10F800;

/// The first code point held behind the mark.
const RESERVED_START: u32 = ESCAPE_MARK as u32;

/// The stand-in character for the lone surrogate code unit `unit`; `None` when `unit` is
/// not a surrogate (`0xD800..=0xDFFF`).
pub fn stand_in(unit: u16) -> Option<char> {
    if (0xD800..=0xDFFF).contains(&unit) {
        char::from_u32(STAND_IN_BASE + u32::from(unit - 0xD800))
    } else {
        None
    }
}

/// The lone surrogate code unit a stand-in character holds; `None` for any other
/// character.
pub fn lone_surrogate(c: char) -> Option<u16> {
    let c = c as u32;
    if c >= STAND_IN_BASE {
        // The range is 2,048 code points wide, so the result fits.
        Some(0xD800 + (c - STAND_IN_BASE) as u16)
    } else {
        None
    }
}

/// Text of the model made fit to show: each lone surrogate as U+FFFD, and a marked real
/// character as itself. Borrowed when the text holds neither.
pub fn display_text(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c as u32 >= RESERVED_START) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ESCAPE_MARK {
            if let Some(&next) = chars.peek() {
                if next as u32 >= RESERVED_START {
                    out.push(next);
                    chars.next();
                    continue;
                }
            }
            out.push(c);
        } else if lone_surrogate(c).is_some() {
            out.push(char::REPLACEMENT_CHARACTER);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Parses JSON text into a [`Value`] in the model form: lone surrogate escapes held as
/// stand-ins, so that every text `JSON.parse` accepts is read.
pub fn parse_value(json: &[u8]) -> serde_json::Result<Value> {
    let protected = protect(json);
    super::reader::from_slice(protected.as_deref().unwrap_or(json))
}

/// Compact JSON of a value of the model, stand-ins written back as the escapes they hold.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(value).map(restore)
}

/// The JSON text in the model form: `None` when it needs no change (the common case).
///
/// Each `\uXXXX` escape of a lone surrogate becomes its stand-in (raw UTF-8), and each real
/// character of the reserved range (raw, or escaped as a pair) is written raw behind the
/// mark. Everything else is copied, so that serde_json reports any syntax error as it
/// would have.
pub(crate) fn protect(json: &[u8]) -> Option<Vec<u8>> {
    // The fast check, two SIMD passes: a surrogate escape starts `\ud` or `\uD`, a plane-16
    // character with the byte 0xF4. A hit (`\\ud…` too) only means a closer look.
    let surrogate_escape =
        memmem::find_iter(json, b"\\u").any(|at| matches!(json.get(at + 2), Some(b'd' | b'D')));
    protect_scanned(json, surrogate_escape)
}

/// `protect` for a text whose `\u` escapes were already looked at (by the framing layer's
/// scanner): `surrogate_escape` is false only when none starts `\ud` or `\uD`.
pub fn protect_scanned(json: &[u8], surrogate_escape: bool) -> Option<Vec<u8>> {
    if !surrogate_escape && memchr(0xF4, json).is_none() {
        return None;
    }
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0; // json[..copied] is in `out` (when there is one)
    let mut pos = 0;
    while let Some(found) = memchr2(b'\\', 0xF4, &json[pos..]) {
        let at = pos + found;
        if json[at] == 0xF4 {
            // A raw character U+100000 and up; the reserved ones start F4 8F 9F BF.
            pos = at + 1;
            if let Some(c) = raw_char(json, at) {
                if c as u32 >= RESERVED_START {
                    let out = out.get_or_insert_with(|| Vec::with_capacity(json.len() + 16));
                    out.extend_from_slice(&json[copied..at]);
                    push_char(out, ESCAPE_MARK);
                    push_char(out, c);
                    copied = at + 4;
                    pos = at + 4;
                }
            }
            continue;
        }
        // A backslash: an escape of two bytes, or of six for `\u`.
        let Some(unit) = hex_escape(json, at) else {
            // (A backslash ending the text is left for serde_json to report.)
            pos = (at + 2).min(json.len());
            continue;
        };
        pos = at + 6;
        let replacement = match unit {
            0xD800..=0xDBFF => match hex_escape(json, at + 6) {
                Some(low @ 0xDC00..=0xDFFF) => {
                    let c =
                        0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                    pos = at + 12;
                    if c < RESERVED_START {
                        continue;
                    }
                    // A real reserved character: raw, behind the mark.
                    let c = char::from_u32(c).expect("a surrogate pair gives a scalar value");
                    [Some(ESCAPE_MARK), Some(c)]
                }
                _ => [stand_in(unit), None],
            },
            0xDC00..=0xDFFF => [stand_in(unit), None],
            _ => continue,
        };
        let out = out.get_or_insert_with(|| Vec::with_capacity(json.len() + 16));
        out.extend_from_slice(&json[copied..at]);
        for c in replacement.into_iter().flatten() {
            push_char(out, c);
        }
        copied = pos;
    }
    let mut out = out?;
    out.extend_from_slice(&json[copied..]);
    Some(out)
}

/// Serialised JSON back from the model form: each stand-in as its escape, the mark before
/// a real reserved character dropped. Serde writes every non-ASCII character raw, and only
/// inside strings, so the bytes can be rewritten without reading the JSON structure.
pub fn restore(json: Vec<u8>) -> Vec<u8> {
    let Some(first) = memchr(0xF4, &json) else {
        return json;
    };
    let mut out = Vec::with_capacity(json.len() + 16);
    out.extend_from_slice(&json[..first]);
    let mut pos = first;
    loop {
        match raw_char(&json, pos) {
            Some(ESCAPE_MARK) => match raw_char(&json, pos + 4) {
                Some(next) if next as u32 >= RESERVED_START => {
                    out.extend_from_slice(&json[pos + 4..pos + 8]);
                    pos += 8;
                }
                _ => {
                    out.extend_from_slice(&json[pos..pos + 4]);
                    pos += 4;
                }
            },
            Some(c) => match lone_surrogate(c) {
                Some(unit) => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    out.extend_from_slice(b"\\u");
                    for shift in [12, 8, 4, 0] {
                        out.push(HEX[usize::from((unit >> shift) & 0xF)]);
                    }
                    pos += 4;
                }
                None => {
                    out.extend_from_slice(&json[pos..pos + 4]);
                    pos += 4;
                }
            },
            None => {
                out.push(json[pos]);
                pos += 1;
            }
        }
        match memchr(0xF4, &json[pos..]) {
            Some(next) => {
                out.extend_from_slice(&json[pos..pos + next]);
                pos += next;
            }
            None => {
                out.extend_from_slice(&json[pos..]);
                return out;
            }
        }
    }
}

/// The four-byte UTF-8 character starting with `0xF4` at `at`, if well-formed.
fn raw_char(json: &[u8], at: usize) -> Option<char> {
    let bytes = json.get(at..at + 4)?;
    if bytes[0] != 0xF4 {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.chars().next()
}

/// The code unit of a `\uXXXX` escape at `at`, if there is one.
fn hex_escape(json: &[u8], at: usize) -> Option<u16> {
    let bytes = json.get(at..at + 6)?;
    if bytes[0] != b'\\' || bytes[1] != b'u' {
        return None;
    }
    let mut unit = 0u16;
    for &b in &bytes[2..] {
        let digit = (b as char).to_digit(16)?;
        unit = unit << 4 | digit as u16;
    }
    Some(unit)
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(json: &str) -> String {
        let value = parse_value(json.as_bytes()).unwrap();
        String::from_utf8(to_vec(&value).unwrap()).unwrap()
    }

    #[test]
    fn lone_surrogates_map_to_stand_ins_and_back() {
        assert_eq!(round(r#""\ud83d""#), r#""\ud83d""#);
        assert_eq!(round(r#""\uDC00x""#), r#""\udc00x""#);
        assert_eq!(round(r#""\udc00\ud800""#), r#""\udc00\ud800""#);
        assert_eq!(
            round(r#"{"\ud800":"\ud83d\ude00"}"#),
            "{\"\\ud800\":\"\u{1F600}\"}"
        );
        let value = parse_value(br#""a\ud83db""#).unwrap();
        let text = value.as_str().unwrap();
        assert_eq!(display_text(text), "a\u{FFFD}b");
        assert_eq!(text.chars().nth(1).and_then(lone_surrogate), Some(0xD83D));
    }

    #[test]
    fn real_reserved_characters_survive() {
        for c in ['\u{10F7FF}', '\u{10F800}', '\u{10FFFF}'] {
            let json = format!("\"{c}\"");
            assert_eq!(round(&json), json);
            let value = parse_value(json.as_bytes()).unwrap();
            assert_eq!(display_text(value.as_str().unwrap()), c.to_string());
        }
        // Escaped as a pair: written raw, as JSON.stringify would.
        assert_eq!(round(r#""\udbff\udfff""#), "\"\u{10FFFF}\"");
        // Other plane-16 characters are not touched.
        assert_eq!(
            round("\"\u{100000}\u{10F7FE}\""),
            "\"\u{100000}\u{10F7FE}\""
        );
    }

    #[test]
    fn escapes_that_are_not_surrogates_are_left_alone() {
        assert!(protect(br#""\\ud83d \n \u0041 \u00e9""#).is_none());
        assert!(protect(br#"{"a":"\ud83d\ude00"}"#).is_none());
        // A truncated escape is left for serde_json to report.
        assert!(parse_value(br#""\ud8"#).is_err());
        assert!(parse_value(br#""\ud83d\"#).is_err());
        assert!(parse_value(b"\\").is_err());
    }
}
