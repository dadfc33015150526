//! A validating JSON scanner that builds no tree.
//!
//! [`scan`] checks that a UTF-8 text is exactly one JSON value (RFC 8259, as `JSON.parse`
//! reads it) and reports the members of a top-level object as byte spans, so the framing
//! layer can read `type`, `id`, `command` and a chunk's envelope without parsing the rest.
//! Strings are skipped 64 bytes at a time by SIMD masks (`scan_simd`), with a scalar scanner
//! eight bytes at a time deciding whatever that fast path leaves.

/// What kind of JSON value starts at a position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Object,
    Array,
    String,
    Number,
    Literal,
}

/// One member of the top-level object.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Member<'a> {
    /// The key's raw contents, between the quotes.
    pub key: &'a [u8],
    /// Whether the key holds escapes (compare after [`unescape_utf16`]).
    pub key_escaped: bool,
    /// The kind of the value.
    pub kind: Kind,
    /// The value's raw text; for a string, its contents between the quotes.
    pub value: &'a [u8],
    /// For a string value, whether it holds escapes.
    pub value_escaped: bool,
}

impl Member<'_> {
    /// Whether the key is `name` (as JavaScript compares strings).
    pub(crate) fn key_is(&self, name: &str) -> bool {
        if self.key_escaped {
            unescape_utf16(self.key)
                .iter()
                .copied()
                .eq(name.encode_utf16())
        } else {
            self.key == name.as_bytes()
        }
    }

    /// Whether the value is the string `s` (as JavaScript compares strings).
    pub(crate) fn value_is_str(&self, s: &str) -> bool {
        self.kind == Kind::String
            && if self.value_escaped {
                unescape_utf16(self.value)
                    .iter()
                    .copied()
                    .eq(s.encode_utf16())
            } else {
                self.value == s.as_bytes()
            }
    }

    /// The string value, lone surrogates replaced by U+FFFD; `None` for other kinds.
    pub(crate) fn string_value(&self) -> Option<String> {
        (self.kind == Kind::String).then(|| unescape_string(self.value, self.value_escaped))
    }
}

/// The outcome of a successful scan.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scanned {
    /// The kind of the top-level value.
    pub top: Kind,
    /// Whether the text holds no insignificant whitespace (it is already compact).
    pub compact: bool,
    /// Whether a `\u` escape may be a surrogate's (its first digit is `d` or `D`): when
    /// false, the wire model's lone-surrogate mapping need not look for one.
    pub surrogate_escape: bool,
}

/// Why a text is not one JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScanError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// What was wrong.
    pub what: &'static str,
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}", self.what, self.offset)
    }
}

fn err<T>(offset: usize, what: &'static str) -> Result<T, ScanError> {
    Err(ScanError { offset, what })
}

#[inline]
fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

#[inline]
fn skip_ws(b: &[u8], i: &mut usize, compact: &mut bool) {
    while *i < b.len() && is_ws(b[*i]) {
        *i += 1;
        *compact = false;
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Index of the first byte at or after `i` that is `"`, `\` or a control character
/// (below 0x20), or `b.len()`.
#[inline]
pub(crate) fn find_string_special(b: &[u8], mut i: usize) -> usize {
    while i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        let m = special_mask(w);
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() {
        let c = b[i];
        if c == b'"' || c == b'\\' || c < 0x20 {
            return i;
        }
        i += 1;
    }
    i
}

/// High bit set in each byte lane that may be special; exact for the lowest lane.
#[inline]
fn special_mask(w: u64) -> u64 {
    let quote = w ^ (LO * b'"' as u64);
    let slash = w ^ (LO * b'\\' as u64);
    let zq = quote.wrapping_sub(LO) & !quote;
    let zs = slash.wrapping_sub(LO) & !slash;
    let ctl = w.wrapping_sub(LO * 0x20) & !w;
    (zq | zs | ctl) & HI
}

/// Skips a string starting at the quote at `*i`; returns whether it held escapes. Sets
/// `surrogate` when a `\u` escape may be a surrogate's (its first digit is `d` or `D`).
///
/// The SIMD fast path (the wire model's `scan_simd`) settles valid strings without surrogate escapes;
/// whatever it leaves (errors, surrogate escapes, the last bytes of the text) is decided by
/// [`scan_string_scalar`].
#[inline]
fn scan_string(b: &[u8], i: &mut usize, surrogate: &mut bool) -> Result<bool, ScanError> {
    if let Some((end, escaped)) = musewire_wire::__private::string_end(b, *i + 1) {
        *i = end;
        return Ok(escaped);
    }
    scan_string_scalar(b, i, surrogate)
}

/// The scalar string scanner: skips a string starting at the quote at `*i`, eight bytes at a
/// time; returns whether it held escapes, and sets `surrogate` as [`scan_string`] does. It
/// decides every string, errors included.
#[inline(never)]
pub(super) fn scan_string_scalar(
    b: &[u8],
    i: &mut usize,
    surrogate: &mut bool,
) -> Result<bool, ScanError> {
    let mut j = *i + 1;
    let mut escaped = false;
    loop {
        j = find_string_special(b, j);
        match b.get(j) {
            None => return err(*i, "unterminated string"),
            Some(b'"') => {
                *i = j + 1;
                return Ok(escaped);
            }
            Some(b'\\') => {
                escaped = true;
                match b.get(j + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => j += 2,
                    Some(b'u') => {
                        let hex = b.get(j + 2..j + 6).unwrap_or(&[]);
                        if hex.len() != 4 || !hex.iter().all(u8::is_ascii_hexdigit) {
                            return err(j, "invalid unicode escape");
                        }
                        *surrogate |= hex[0] | 0x20 == b'd';
                        j += 6;
                    }
                    _ => return err(j, "invalid escape"),
                }
            }
            Some(_) => return err(j, "control character in string"),
        }
    }
}

fn scan_digits(b: &[u8], i: &mut usize) -> usize {
    let start = *i;
    while *i < b.len() && b[*i].is_ascii_digit() {
        *i += 1;
    }
    *i - start
}

fn scan_number(b: &[u8], i: &mut usize) -> Result<(), ScanError> {
    let start = *i;
    if b[*i] == b'-' {
        *i += 1;
    }
    match b.get(*i) {
        Some(b'0') => *i += 1,
        Some(b'1'..=b'9') => {
            scan_digits(b, i);
        }
        _ => return err(start, "invalid number"),
    }
    if b.get(*i) == Some(&b'.') {
        *i += 1;
        if scan_digits(b, i) == 0 {
            return err(start, "invalid number");
        }
    }
    if matches!(b.get(*i), Some(b'e' | b'E')) {
        *i += 1;
        if matches!(b.get(*i), Some(b'+' | b'-')) {
            *i += 1;
        }
        if scan_digits(b, i) == 0 {
            return err(start, "invalid number");
        }
    }
    Ok(())
}

fn kind_of(c: u8) -> Kind {
    match c {
        b'{' => Kind::Object,
        b'[' => Kind::Array,
        b'"' => Kind::String,
        b't' | b'f' | b'n' => Kind::Literal,
        _ => Kind::Number,
    }
}

/// Reads an object key at `*i` (which must be a quote), then the colon after it.
fn scan_key<'a>(
    b: &'a [u8],
    i: &mut usize,
    compact: &mut bool,
    surrogate: &mut bool,
) -> Result<(&'a [u8], bool), ScanError> {
    if b.get(*i) != Some(&b'"') {
        return err(*i, "expected a string key");
    }
    let start = *i;
    let escaped = scan_string(b, i, surrogate)?;
    let key = &b[start + 1..*i - 1];
    skip_ws(b, i, compact);
    if b.get(*i) != Some(&b':') {
        return err(*i, "expected ':'");
    }
    *i += 1;
    Ok((key, escaped))
}

/// Checks that `b` is exactly one JSON value, reporting each member of a top-level object.
pub(crate) fn scan<'a>(
    b: &'a [u8],
    on_member: &mut dyn FnMut(Member<'a>),
) -> Result<Scanned, ScanError> {
    let mut i = 0usize;
    let mut compact = true;
    let mut stack: Vec<u8> = Vec::new();
    let mut top: Option<Kind> = None;
    let mut key: Option<(&'a [u8], bool)> = None;
    let mut member_start = 0usize;
    let mut member_kind = Kind::Literal;
    let mut string_escaped = false;
    let mut surrogate = false;
    'value: loop {
        skip_ws(b, &mut i, &mut compact);
        let Some(&c) = b.get(i) else {
            return err(i, "unexpected end of input");
        };
        let kind = kind_of(c);
        if stack.len() == 1 && stack[0] == b'{' {
            member_start = i;
            member_kind = kind;
        }
        top.get_or_insert(kind);
        match c {
            b'{' => {
                stack.push(b'{');
                i += 1;
                skip_ws(b, &mut i, &mut compact);
                if b.get(i) == Some(&b'}') {
                    i += 1;
                    stack.pop();
                } else {
                    let k = scan_key(b, &mut i, &mut compact, &mut surrogate)?;
                    if stack.len() == 1 {
                        key = Some(k);
                    }
                    continue 'value;
                }
            }
            b'[' => {
                stack.push(b'[');
                i += 1;
                skip_ws(b, &mut i, &mut compact);
                if b.get(i) == Some(&b']') {
                    i += 1;
                    stack.pop();
                } else {
                    continue 'value;
                }
            }
            b'"' => string_escaped = scan_string(b, &mut i, &mut surrogate)?,
            b'-' | b'0'..=b'9' => scan_number(b, &mut i)?,
            b't' | b'f' | b'n' => {
                let word: &[u8] = match c {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                if !b[i..].starts_with(word) {
                    return err(i, "invalid literal");
                }
                i += word.len();
            }
            _ => return err(i, "unexpected character"),
        }
        // A value ended at `i`: report a top-level member, then read separators and closers.
        loop {
            if stack.len() == 1 && stack[0] == b'{' {
                if let Some((k, key_escaped)) = key.take() {
                    let raw = &b[member_start..i];
                    let (value, value_escaped) = if member_kind == Kind::String {
                        (&raw[1..raw.len() - 1], string_escaped)
                    } else {
                        (raw, false)
                    };
                    on_member(Member {
                        key: k,
                        key_escaped,
                        kind: member_kind,
                        value,
                        value_escaped,
                    });
                }
            }
            skip_ws(b, &mut i, &mut compact);
            let Some(&open) = stack.last() else {
                if i != b.len() {
                    return err(i, "unexpected text after the JSON value");
                }
                return Ok(Scanned {
                    top: top.unwrap_or(Kind::Literal),
                    compact,
                    surrogate_escape: surrogate,
                });
            };
            match (open, b.get(i)) {
                (_, Some(b',')) => {
                    i += 1;
                    if open == b'{' {
                        skip_ws(b, &mut i, &mut compact);
                        let k = scan_key(b, &mut i, &mut compact, &mut surrogate)?;
                        if stack.len() == 1 {
                            key = Some(k);
                        }
                    }
                    continue 'value;
                }
                (b'{', Some(b'}')) | (b'[', Some(b']')) => {
                    i += 1;
                    stack.pop();
                }
                (_, None) => return err(i, "unexpected end of input"),
                _ => return err(i, "expected ',' or a closing bracket"),
            }
        }
    }
}

/// Decodes a string's raw contents (valid UTF-8, escapes already checked) into UTF-16
/// code units, exactly as JavaScript holds the string (lone surrogates kept).
pub(crate) fn unescape_utf16(raw: &[u8]) -> Vec<u16> {
    let text = String::from_utf8_lossy(raw);
    let mut out = Vec::with_capacity(raw.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u16; 2];
            out.extend_from_slice(c.encode_utf16(&mut buf));
            continue;
        }
        match chars.next() {
            Some('b') => out.push(0x08),
            Some('f') => out.push(0x0c),
            Some('n') => out.push(0x0a),
            Some('r') => out.push(0x0d),
            Some('t') => out.push(0x09),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                out.push(u16::from_str_radix(&hex, 16).unwrap_or(0xfffd));
            }
            Some(other) => out.push(other as u16),
            None => {}
        }
    }
    out
}

/// A string's value from its raw contents, lone surrogates replaced by U+FFFD.
pub(crate) fn unescape_string(raw: &[u8], escaped: bool) -> String {
    if escaped {
        String::from_utf16_lossy(&unescape_utf16(raw))
    } else {
        String::from_utf8_lossy(raw).into_owned()
    }
}

/// Appends `b` (one valid JSON text) to `out` without insignificant whitespace.
pub(crate) fn write_compact(b: &[u8], out: &mut Vec<u8>) {
    out.reserve(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' {
            let start = i;
            i += 1;
            loop {
                i = find_string_special(b, i);
                match b.get(i) {
                    Some(b'\\') => i += 2,
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                    None => break,
                }
            }
            out.extend_from_slice(&b[start..i.min(b.len())]);
        } else {
            if !is_ws(c) {
                out.push(c);
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use musewire_wire::__private::string_end;

    /// FRAME-10 (ours: fast path): on strings dense with escapes, quotes, control characters
    /// and surrogates, crossing block edges, every answer of the fast path is the scalar
    /// scanner's (same end, same "held escapes"), and it answers every valid one that holds
    /// no surrogate escape.
    #[test]
    fn frame_10_fast_path_agrees_with_the_scalar_scanner() {
        // Twelve common pieces, then four rare ones (surrogates, bad escapes, raw tabs).
        const PIECES: [&str; 16] = [
            "a",
            "bc",
            "défg",
            "東",
            "😀",
            r#"\""#,
            r"\\",
            r"\n",
            r"\t",
            r"\/",
            r"\u00e9",
            r"\u001b",
            r"\ud83d\ude00",
            r"\ud83d",
            r"\x",
            "\t",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut answered = 0;
        for _ in 0..20_000 {
            let mut surrogate = false;
            let mut text = String::from('"');
            let pieces = next() % 60;
            for _ in 0..pieces {
                // A rare piece one time in sixteen.
                let r = next();
                let k = if r % 16 == 0 {
                    r as usize / 16 % 16
                } else {
                    r as usize / 16 % 12
                };
                surrogate |= matches!(k, 12 | 13);
                text.push_str(PIECES[k]);
            }
            text.push('"');
            text.push_str(&"x".repeat((next() % 80) as usize));
            let b = text.as_bytes();
            let mut i = 0;
            let scalar = scan_string_scalar(b, &mut i, &mut false);
            match string_end(b, 1) {
                Some((end, escaped)) => {
                    answered += 1;
                    assert_eq!(scalar, Ok(escaped), "{text:?}");
                    assert_eq!(i, end, "{text:?}");
                }
                None => assert!(scalar.is_err() || surrogate, "not answered: {text:?}"),
            }
        }
        assert!(answered > 5_000, "answered only {answered}");
    }

    #[test]
    fn a_possible_surrogate_escape_is_noted_in_keys_and_values() {
        let flag = |text: &str| scan(text.as_bytes(), &mut |_| {}).unwrap().surrogate_escape;
        assert!(flag(r#"{"t":"\ud83d"}"#));
        assert!(flag(r#"{"t":["\uDC00"]}"#));
        assert!(flag(r#"{"\ud800":1}"#));
        assert!(flag(r#"{"a":{"b":1,"\uD83D\uDE00":2}}"#));
        // An escape that cannot be a surrogate's is not noted (the fast path settles it, or
        // the scalar scanner notes it as possible and the closer look clears it).
        assert!(!flag(r#"{"t":"\u0041 \u00e9 \\ud83d"}"#));
        assert!(!flag("{\"t\":\"plain \u{10F800}\"}"));
    }
}
