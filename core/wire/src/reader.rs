//! The wire model's JSON reader: the same values serde_json gives, read faster (for the typed
//! decode path).
//!
//! Almost all of a frame's bytes are string contents (tool output, message text), and most
//! of those strings hold escapes (`\n`, `\t`, `\"`). serde_json copies such a string piece
//! by piece into a scratch buffer and then copies the scratch into the `String` the model
//! keeps. This reader also decodes into a scratch buffer, but in one pass over the string:
//! each run up to the next quote, backslash or control character is found eight bytes at a
//! step and copied whole, the escape behind it decoded, and the string ends at the first
//! quote no escape took. (Finding the end first with a SIMD search for `"` costs a restart
//! at every `\"`, which tool output is full of.) The scratch is copied once into a
//! `String` of exactly its length, handed to the visitor by value (`visit_string`).
//!
//! # The same values, by construction
//!
//! [`from_str`] is a serde [`Deserializer`] over JSON text with the same visitor calls as
//! serde_json's for every text it reads: `visit_borrowed_str` for a string without
//! escapes, `visit_u64` for a plain non-negative integer, and every other number handed to
//! serde_json itself (so `-0`, floats with `float_roundtrip`, out-of-range numbers are
//! exactly serde_json's). It is at least as strict as serde_json: when it cannot read a
//! text, or meets anything it does not mimic (a nesting deeper than [`MAX_DEPTH`], an
//! externally tagged enum written as an object, byte buffers, serde_json's other private
//! tokens), it gives up, and [`from_str`] parses the text again with serde_json,
//! whose result (value or error, with its line and column) is then the answer. So a text
//! this reader accepts gives the same value as `serde_json::from_str`, and a text it
//! refuses gives serde_json's own result.
//!
//! A raw value (serde_json's `RawValue`, which [`Lazy`](super::Lazy) holds) is the value's
//! text from its first byte to its last, as serde_json gives it, checked as a skipped value
//! is; a skipped string is checked without being decoded.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess};
use serde::Deserialize;

use crate::scan_simd::{specials16, specials64};

/// Containers nested deeper than this are left to serde_json (whose own limit is 127).
pub(crate) const MAX_DEPTH: u32 = 100;

/// Parses `text` as serde_json would (see the module doc): the fast reader first, serde_json
/// when it gives up.
pub(crate) fn from_str<'a, T: Deserialize<'a>>(text: &'a str) -> serde_json::Result<T> {
    match read(text) {
        Ok(value) => Ok(value),
        Err(GaveUp) => serde_json::from_str(text),
    }
}

/// `from_str` for bytes: text that is not UTF-8 gets serde_json's error.
pub fn from_slice<'a, T: Deserialize<'a>>(json: &'a [u8]) -> serde_json::Result<T> {
    match simdutf8::basic::from_utf8(json) {
        Ok(text) => from_str(text),
        Err(_) => serde_json::from_slice(json),
    }
}

/// The fast read alone: `Err(GaveUp)` when the text is not JSON or holds anything it does
/// not read exactly as serde_json does.
fn read<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, GaveUp> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
        scratch: String::new(),
    };
    let value = T::deserialize(&mut reader)?;
    reader.skip_whitespace();
    if reader.pos == reader.bytes.len() {
        Ok(value)
    } else {
        Err(GaveUp)
    }
}

/// The reader gave up on a text (not JSON, or not read exactly as serde_json would); the
/// caller parses it with serde_json instead, which gives the error with its position.
#[derive(Debug)]
pub(crate) struct GaveUp;

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the fast JSON reader gave up")
    }
}

impl std::error::Error for GaveUp {}

impl de::Error for GaveUp {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        GaveUp
    }
}

impl From<serde_json::Error> for GaveUp {
    fn from(_: serde_json::Error) -> Self {
        GaveUp
    }
}

struct Reader<'de> {
    text: &'de str,
    bytes: &'de [u8],
    pos: usize,
    depth: u32,
    /// Where an escaped string is decoded before it is copied out at its final size.
    scratch: String,
}

/// A string read: borrowed from the text when it holds no escape.
enum Text<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl<'de> Text<'de> {
    fn visit<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        match self {
            Text::Borrowed(s) => visitor.visit_borrowed_str(s),
            Text::Owned(s) => visitor.visit_string(s),
        }
    }
}

/// What each single-character escape (`\\n`, …) stands for; 0 for `u` and for the bytes
/// that may not follow a backslash.
const ESCAPED: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'/' as usize] = b'/';
    table[b'b' as usize] = 0x08;
    table[b'f' as usize] = 0x0C;
    table[b'n' as usize] = b'\n';
    table[b'r' as usize] = b'\r';
    table[b't' as usize] = b'\t';
    table
};

/// The first byte at or after `from` that `test` flags (see [`special_bytes`]), eight
/// bytes at a step.
#[inline(always)]
fn next_special(bytes: &[u8], mut from: usize, test: fn(u64) -> u64) -> Option<usize> {
    while let Some(word) = bytes.get(from..from + 8) {
        let found = test(u64::from_le_bytes(word.try_into().expect("eight bytes")));
        if found != 0 {
            return Some(from + (found.trailing_zeros() / 8) as usize);
        }
        from += 8;
    }
    let mut tail = [b' '; 8];
    let rest = bytes.get(from..)?;
    tail[..rest.len()].copy_from_slice(rest);
    let found = test(u64::from_le_bytes(tail));
    (found != 0).then(|| from + (found.trailing_zeros() / 8) as usize)
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The zero bytes of `x` have their high bit set (and maybe bytes above a zero byte).
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x
}

/// The bytes of `word` (eight bytes of a string, little-endian) that end a run of plain
/// string content: a quote, a backslash, or a control character (which JSON does not allow
/// raw). Each such byte has its high bit set in the result; the lowest set bit is always
/// exact (the carries of this test only mark bytes above a true one), which is all the
/// caller reads.
fn special_bytes(word: u64) -> u64 {
    let quote = zero_bytes(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_bytes(word ^ (ONES * u64::from(b'\\')));
    (quote | backslash | (word.wrapping_sub(ONES * 0x20) & !word)) & HIGH
}

/// A cursor over the bytes that end a run of plain string content: quotes, backslashes and
/// control characters, found by SIMD masks (`scan_simd`), 16 bytes for the first
/// look (most strings are short) and 64 at a time after that. Each block is classified
/// once, however many escapes it holds; the runs between them are found by its mask.
struct Specials {
    /// Where the block `mask` describes starts.
    base: usize,
    /// Bit `k`: the byte at `base + k` is special.
    mask: u64,
    /// How many bytes the block covers (16 or 64).
    width: usize,
}

impl Specials {
    /// The cursor of a string whose contents start at `at`; `None` when no byte is left.
    #[inline(always)]
    fn new(bytes: &[u8], at: usize) -> Option<Self> {
        Some(Specials {
            base: at,
            mask: specials16(bytes, at)?,
            width: 16,
        })
    }

    /// The first special byte at or after `from` (which is never before the block), or
    /// `None` when the text ends first (past its end the masks read NULs, which flag as
    /// control characters).
    #[inline(always)]
    fn find(&mut self, bytes: &[u8], mut from: usize) -> Option<usize> {
        loop {
            let offset = from - self.base;
            if offset < self.width {
                let rest = self.mask >> offset;
                if rest != 0 {
                    let at = from + rest.trailing_zeros() as usize;
                    return (at < bytes.len()).then_some(at);
                }
                from = self.base + self.width;
            }
            self.base = from;
            self.width = 64;
            self.mask = specials64(bytes, from)?;
        }
    }
}

fn hex4(bytes: &[u8]) -> Option<u16> {
    let mut unit = 0u16;
    for &b in bytes.get(..4)? {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        unit = unit << 4 | u16::from(digit);
    }
    Some(unit)
}

impl<'de> Reader<'de> {
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next byte after whitespace (not consumed).
    fn peek(&mut self) -> Result<u8, GaveUp> {
        self.skip_whitespace();
        self.bytes.get(self.pos).copied().ok_or(GaveUp)
    }

    fn expect(&mut self, byte: u8) -> Result<(), GaveUp> {
        if self.peek()? == byte {
            self.pos += 1;
            Ok(())
        } else {
            Err(GaveUp)
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), GaveUp> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(GaveUp)
        }
    }

    /// Reads a string; `self.pos` is at its opening quote.
    ///
    /// The run up to the first quote, backslash or control character is found eight bytes
    /// at a step; a string that ends there is borrowed. Otherwise the string is decoded in
    /// the same pass, run by run (each run up to the next quote, backslash or control
    /// character, found the same way), into the reader's scratch `String`, which is then
    /// copied once into a `String` of exactly its length.
    fn string(&mut self) -> Result<Text<'de>, GaveUp> {
        let start = self.pos + 1;
        let bytes = self.bytes;
        let mut at = next_special(bytes, start, special_bytes).ok_or(GaveUp)?;
        match bytes[at] {
            b'"' => {
                self.pos = at + 1;
                return Ok(Text::Borrowed(&self.text[start..at]));
            }
            b'\\' => {}
            _ => return Err(GaveUp),
        }
        let out = &mut self.scratch;
        out.clear();
        let mut run = start; // the unescaped run not yet copied starts here
        loop {
            // `at` is a backslash.
            out.push_str(&self.text[run..at]);
            let escaped = *bytes.get(at + 1).ok_or(GaveUp)?;
            let mut next = at + 2;
            let plain = ESCAPED[usize::from(escaped)];
            if plain != 0 {
                out.push(char::from(plain));
            } else if escaped == b'u' {
                let unit = hex4(&bytes[next..]).ok_or(GaveUp)?;
                next += 4;
                let c = match unit {
                    0xD800..=0xDBFF => {
                        // Only a pair makes a character; a lone surrogate (which the model
                        // maps beforehand) is left to serde_json.
                        let pair = &bytes[next..];
                        if pair.len() < 6 || pair[0] != b'\\' || pair[1] != b'u' {
                            return Err(GaveUp);
                        }
                        let low = hex4(&pair[2..]).ok_or(GaveUp)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(GaveUp);
                        }
                        next += 6;
                        let c = 0x10000
                            + ((u32::from(unit) - 0xD800) << 10)
                            + (u32::from(low) - 0xDC00);
                        char::from_u32(c).ok_or(GaveUp)?
                    }
                    0xDC00..=0xDFFF => return Err(GaveUp),
                    _ => char::from_u32(u32::from(unit)).ok_or(GaveUp)?,
                };
                out.push(c);
            } else {
                return Err(GaveUp);
            }
            run = next;
            at = next_special(bytes, next, special_bytes).ok_or(GaveUp)?;
            match bytes[at] {
                b'\\' => {}
                b'"' => break,
                _ => return Err(GaveUp),
            }
        }
        out.push_str(&self.text[run..at]);
        self.pos = at + 1;
        Ok(Text::Owned(out.as_str().to_owned()))
    }

    /// Steps over a string (`self.pos` at its opening quote) checked as [`Reader::string`]
    /// checks it (each escape well-formed, no raw control character), without decoding it.
    /// serde_json accepts every string this accepts: a lone surrogate escape too, as
    /// serde_json's own skip does.
    fn skip_string(&mut self) -> Result<(), GaveUp> {
        let bytes = self.bytes;
        let mut at = self.pos;
        let mut specials = Specials::new(bytes, at + 1).ok_or(GaveUp)?;
        loop {
            at = specials.find(bytes, at + 1).ok_or(GaveUp)?;
            match bytes[at] {
                b'"' => break,
                b'\\' => {}
                _ => return Err(GaveUp),
            }
            let escaped = *bytes.get(at + 1).ok_or(GaveUp)?;
            at += 1;
            if ESCAPED[usize::from(escaped)] == 0 {
                if escaped != b'u' {
                    return Err(GaveUp);
                }
                hex4(&bytes[at + 1..]).ok_or(GaveUp)?;
                at += 4;
            }
        }
        self.pos = at + 1;
        Ok(())
    }

    /// Reads a number (`self.pos` at its first byte): a plain non-negative integer of up to
    /// 19 digits directly, anything else through serde_json, so the visitor gets exactly
    /// the call serde_json makes.
    fn number<V: de::Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, GaveUp> {
        let start = self.pos;
        let len = self.bytes[start..]
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(self.bytes.len() - start);
        let digits = &self.bytes[start..start + len];
        self.pos = start + len;
        let plain = (1..=19).contains(&len)
            && digits.iter().all(u8::is_ascii_digit)
            && (digits[0] != b'0' || len == 1);
        if plain {
            let n = digits
                .iter()
                .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
            return visitor.visit_u64(n);
        }
        let mut json = serde_json::Deserializer::from_str(&self.text[start..start + len]);
        let value = serde::Deserializer::deserialize_any(&mut json, visitor)?;
        json.end()?;
        Ok(value)
    }

    fn enter(&mut self) -> Result<(), GaveUp> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(GaveUp);
        }
        self.pos += 1;
        Ok(())
    }

    fn seq<V: de::Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, GaveUp> {
        self.enter()?;
        let value = visitor.visit_seq(Items {
            reader: self,
            first: true,
        })?;
        // The visitor must have read every element (as serde_json requires).
        self.expect(b']')?;
        self.depth -= 1;
        Ok(value)
    }

    fn map<V: de::Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, GaveUp> {
        self.enter()?;
        let value = visitor.visit_map(Items {
            reader: self,
            first: true,
        })?;
        self.expect(b'}')?;
        self.depth -= 1;
        Ok(value)
    }
}

/// Everything not read exactly as serde_json reads it gives up (the caller re-parses).
macro_rules! give_up {
    ($($method:ident),*) => {$(
        fn $method<V: de::Visitor<'de>>(self, _visitor: V) -> Result<V::Value, GaveUp> {
            Err(GaveUp)
        }
    )*};
}

impl<'de> Deserializer<'de> for &mut Reader<'de> {
    type Error = GaveUp;

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        match self.peek()? {
            b'"' => self.string()?.visit(visitor),
            b'{' => self.map(visitor),
            b'[' => self.seq(visitor),
            b'-' | b'0'..=b'9' => self.number(visitor),
            b't' => {
                self.literal(b"true")?;
                visitor.visit_bool(true)
            }
            b'f' => {
                self.literal(b"false")?;
                visitor.visit_bool(false)
            }
            b'n' => {
                self.literal(b"null")?;
                visitor.visit_unit()
            }
            _ => Err(GaveUp),
        }
    }

    fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            visitor.visit_unit()
        } else {
            Err(GaveUp)
        }
    }

    fn deserialize_unit_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, GaveUp> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: de::Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, GaveUp> {
        if name == RAW_VALUE_TOKEN {
            // A raw value (`wire::Lazy`): the value's text, checked as a skipped value is,
            // handed over as serde_json hands it (a map of one member, the token).
            let start = {
                self.peek()?;
                self.pos
            };
            self.deserialize_ignored_any(de::IgnoredAny)?;
            return visitor.visit_map(RawText(Some(&self.text[start..self.pos])));
        }
        not_serde_json_token(name)?;
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        if self.peek()? == b'[' {
            self.seq(visitor)
        } else {
            Err(GaveUp)
        }
    }

    fn deserialize_tuple<V: de::Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, GaveUp> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, GaveUp> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        if self.peek()? == b'{' {
            self.map(visitor)
        } else {
            Err(GaveUp)
        }
    }

    fn deserialize_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, GaveUp> {
        // serde_json reads a struct from an object or an array.
        match self.peek()? {
            b'{' => self.map(visitor),
            b'[' => self.seq(visitor),
            _ => Err(GaveUp),
        }
    }

    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, GaveUp> {
        // A unit variant written as a string; the object form is left to serde_json.
        if self.peek()? != b'"' {
            return Err(GaveUp);
        }
        match self.string()? {
            Text::Borrowed(s) => visitor.visit_enum(de::value::BorrowedStrDeserializer::new(s)),
            Text::Owned(s) => visitor.visit_enum(s.into_deserializer()),
        }
    }

    fn deserialize_ignored_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        // Checked as strictly as a value read (serde_json checks a skipped value too); a
        // string is checked without being decoded.
        if self.peek()? == b'"' {
            self.skip_string()?;
        } else {
            self.deserialize_any(de::IgnoredAny)?;
        }
        visitor.visit_unit()
    }

    give_up!(deserialize_bytes, deserialize_byte_buf);

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string identifier
    }
}

/// The items of an array or an object, read one by one: where the reader is after its
/// opening bracket, and whether an item came yet.
struct Items<'a, 'de> {
    reader: &'a mut Reader<'de>,
    first: bool,
}

impl Items<'_, '_> {
    /// Steps over the comma before the next item of a container that `close` ends: `false`
    /// at its end. A missing comma or a trailing one is not JSON.
    fn next(&mut self, close: u8) -> Result<bool, GaveUp> {
        match self.reader.peek()? {
            c if c == close => return Ok(false),
            b',' if !self.first => {
                self.reader.pos += 1;
                if self.reader.peek()? == close {
                    return Err(GaveUp);
                }
            }
            _ if self.first => {}
            _ => return Err(GaveUp),
        }
        self.first = false;
        Ok(true)
    }
}

impl<'de> SeqAccess<'de> for Items<'_, 'de> {
    type Error = GaveUp;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, GaveUp> {
        if !self.next(b']')? {
            return Ok(None);
        }
        seed.deserialize(&mut *self.reader).map(Some)
    }
}

impl<'de> MapAccess<'de> for Items<'_, 'de> {
    type Error = GaveUp;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, GaveUp> {
        if !self.next(b'}')? {
            return Ok(None);
        }
        // A member name is a string.
        if self.reader.peek()? != b'"' {
            return Err(GaveUp);
        }
        let key = self.reader.string()?;
        seed.deserialize(Key(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, GaveUp> {
        self.reader.expect(b':')?;
        seed.deserialize(&mut *self.reader)
    }
}

/// The newtype name serde_json's `RawValue` asks for (its format, not its API: a map of one
/// member named the token, whose value is the raw text).
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A raw value's text, as the one member serde_json's `RawValue` reads.
struct RawText<'de>(Option<&'de str>);

impl<'de> MapAccess<'de> for RawText<'de> {
    type Error = GaveUp;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, GaveUp> {
        if self.0.is_none() {
            return Ok(None);
        }
        seed.deserialize(de::value::BorrowedStrDeserializer::new(RAW_VALUE_TOKEN))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, GaveUp> {
        let text = self.0.take().ok_or(GaveUp)?;
        seed.deserialize(de::value::BorrowedStrDeserializer::new(text))
    }
}

/// Gives up on a newtype that is one of serde_json's own tokens (raw values,
/// arbitrary-precision numbers): those are serde_json's to read.
fn not_serde_json_token(name: &str) -> Result<(), GaveUp> {
    if name.starts_with("$serde_json") {
        Err(GaveUp)
    } else {
        Ok(())
    }
}

/// A member name: always a string (as serde_json's map keys, but without their number
/// and bool readings, which give up).
struct Key<'de>(Text<'de>);

impl<'de> Deserializer<'de> for Key<'de> {
    type Error = GaveUp;

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        self.0.visit(visitor)
    }

    fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, GaveUp> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: de::Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, GaveUp> {
        not_serde_json_token(name)?;
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, GaveUp> {
        match self.0 {
            Text::Borrowed(s) => visitor.visit_enum(de::value::BorrowedStrDeserializer::new(s)),
            Text::Owned(s) => visitor.visit_enum(s.into_deserializer()),
        }
    }

    give_up!(
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_bytes,
        deserialize_byte_buf
    );

    serde::forward_to_deserialize_any! {
        char str string identifier ignored_any unit unit_struct seq tuple tuple_struct map
        struct
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Either both refuse, or the fast reader gives exactly serde_json's value (floats to
    /// the bit, member order kept).
    fn same(text: &str) {
        let fast = read::<Value>(text);
        let slow = serde_json::from_str::<Value>(text);
        if let Ok(fast) = fast {
            let slow = slow.unwrap_or_else(|e| panic!("{text:?}: fast read, serde_json: {e}"));
            assert_eq!(
                serde_json::to_string(&fast).unwrap(),
                serde_json::to_string(&slow).unwrap(),
                "{text:?}"
            );
            assert_eq!(fast, slow, "{text:?}");
        }
        assert_eq!(
            from_str::<Value>(text).map_err(|e| e.to_string()),
            serde_json::from_str::<Value>(text).map_err(|e| e.to_string()),
            "{text:?}"
        );
    }

    #[test]
    fn reads_what_serde_json_reads() {
        let texts = [
            r#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
            " { \"a\" : [ 1 , 2 ] , \"b\" :\t\"x\" }\r\n",
            r#""plain""#,
            r#""esc \" \\ \/ \b \f \n \r \t \u0041 \u00e9 \u2603 \ud83d\ude00 end""#,
            r#""\\""#,
            r#""\\\"""#,
            r#""a\\\\"  "#,
            r#"{"k\u0065y":"v","key":"w"}"#,
            r#"[0, -0, 1, -1, 12345678901234567890, 18446744073709551615, 18446744073709551616]"#,
            r#"[9223372036854775807, -9223372036854775808, -9223372036854775809]"#,
            r#"[1.5, -2.25e10, 1E-400, 0.1, 2.2250738585072011e-308, 1e5, 5e-1]"#,
            r#"[1234567890123456789, 9999999999999999999, 0.30000000000000004]"#,
            "{}",
            "[]",
            "[{}]",
            "{\"a\":{}}",
            "\"\"",
        ];
        for text in texts {
            assert!(read::<Value>(text).is_ok(), "{text:?}");
            same(text);
        }
    }

    #[test]
    fn refuses_what_serde_json_refuses() {
        let texts = [
            "",
            " ",
            "{",
            "}",
            "[1,]",
            "[,1]",
            "{\"a\":1,}",
            "{,}",
            "{\"a\" 1}",
            "{\"a\":}",
            "{1:2}",
            "[1 2]",
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "+1",
            "--1",
            "1-2",
            "tru",
            "nul",
            "truex",
            "[1]x",
            "\"abc",
            "\"a\\\"",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\u12g4\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"a\u{1}b\"",
            "\"\\n\u{1f}\"",
            "\"\t\"",
            "[\"a\" \"b\"]",
            "NaN",
            "Infinity",
            "1e400",
            "[-1e400]",
            "{\"a\":1}}",
            "[[]]]",
        ];
        for text in texts {
            assert!(read::<Value>(text).is_err(), "{text:?}");
            same(text);
        }
    }

    /// Escapes, raw control characters and the closing quote at every offset from the
    /// string's start (the runs between them are scanned eight bytes at a step when decoded,
    /// found by 16- and 64-byte masks when skipped), decoded and skipped.
    #[test]
    fn escaped_strings_read_the_same_at_every_offset() {
        let pieces = [
            "\\\"",
            "\\\\",
            "\\n",
            "\\u00e9",
            "\\ud83d\\ude00",
            "\\u001b",
            "é",
            "😀",
            "\u{1}",
            "\\",
            "\\x",
            "\\u12",
            "\\ud800",
            "\"",
        ];
        for pad in 0..17 {
            for a in pieces {
                for b in pieces {
                    let body = format!(
                        "{}{a}{}{b}{}",
                        "p".repeat(pad),
                        "q".repeat(pad % 9),
                        "r".repeat(pad % 5)
                    );
                    let text = format!("\"{body}\"");
                    same(&text);
                    // Everything serde_json reads but a lone surrogate is read fast.
                    if serde_json::from_str::<Value>(&text).is_ok() && !body.contains("\\ud800") {
                        assert!(read::<Value>(&text).is_ok(), "{text:?}");
                    }
                    same(&format!("\"{body}"));
                    same(&format!("[\"{body}\",1]"));
                    same(&format!("{{\"k{body}\":\"v{body}\"}}"));
                    let skipped = format!("{{\"a\":1,\"b\":[],\"mode\":\"one\",\"x\":\"{body}\"}}");
                    assert_eq!(
                        from_str::<Skips>(&skipped).map_err(|e| e.to_string()),
                        serde_json::from_str::<Skips>(&skipped).map_err(|e| e.to_string()),
                        "{skipped:?}"
                    );
                }
            }
        }
    }

    /// A struct that skips every member but `a`.
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Skips {
        a: u64,
    }

    /// A skipped string's special bytes are found in a 16-byte look and then 64-byte
    /// blocks: each piece at every offset across both block edges (and past them), and a
    /// string that runs to the end of the text, skip as serde_json's skip does, in a member
    /// nobody reads and in a raw value.
    #[test]
    fn skipped_strings_read_the_same_across_block_edges() {
        let pieces = [
            "\\\"", "\\\\", "\\n", "\\u00e9", "\\ud800", "é", "😀", "\u{1}", "\\x", "\\u12",
        ];
        for pad in (0..150).filter(|p| *p < 20 || (40..90).contains(p) || *p > 120) {
            for piece in pieces {
                for tail in [0, 1, 15, 16, 17, 63, 64, 65] {
                    let body = format!("{}{piece}{}", "p".repeat(pad), "q".repeat(tail));
                    for text in [
                        format!("{{\"a\":1,\"x\":\"{body}\"}}"),
                        format!("{{\"a\":1,\"x\":\"{body}"),
                        format!("{{\"a\":1,\"x\":[\"{body}\",\"{body}\"]}}"),
                    ] {
                        assert_eq!(
                            from_str::<Skips>(&text).map_err(|e| e.to_string()),
                            serde_json::from_str::<Skips>(&text).map_err(|e| e.to_string()),
                            "{text:?}"
                        );
                        let raw = from_str::<Box<serde_json::value::RawValue>>(&text);
                        let slow = serde_json::from_str::<Box<serde_json::value::RawValue>>(&text);
                        assert_eq!(
                            raw.map(|r| r.get().to_owned()).map_err(|e| e.to_string()),
                            slow.map(|r| r.get().to_owned()).map_err(|e| e.to_string()),
                            "{text:?}"
                        );
                    }
                }
            }
        }
    }

    /// Each escaped string starts from an empty scratch: reads after a short, a long and a
    /// refused string give serde_json's values.
    #[test]
    fn reads_after_reads_give_the_same_values() {
        let long = format!("\"{}\"", "ab\\n\\\"".repeat(4 << 10));
        let texts = [
            "[\"x\\ny\",\"z\"]".to_owned(),
            long.clone(),
            "\"q\\tr\"".to_owned(),
            "\"bad\\x\"".to_owned(),
            "\"a\\\"b\"".to_owned(),
            long,
            "{\"k\\n\":\"\\u00e9\"}".to_owned(),
        ];
        for _ in 0..2 {
            for text in &texts {
                same(text);
            }
        }
    }

    #[test]
    fn deep_nesting_is_left_to_serde_json() {
        for depth in [MAX_DEPTH as usize, MAX_DEPTH as usize + 1, 127, 128, 200] {
            let text = "[".repeat(depth) + &"]".repeat(depth);
            assert_eq!(read::<Value>(&text).is_ok(), depth <= MAX_DEPTH as usize);
            same(&text);
        }
    }

    #[test]
    fn typed_targets_read_the_same() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        #[serde(rename_all = "snake_case")]
        enum Mode {
            One,
            Two,
        }
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct S {
            a: Option<u64>,
            b: Vec<String>,
            mode: Mode,
            #[serde(default)]
            t: (i64, f64),
        }
        for text in [
            r#"{"a":null,"b":["x","y\n"],"mode":"two"}"#,
            r#"{"a":3,"b":[],"mode":"one","t":[-4,0.5],"unknown":[1,{"x":[]}]}"#,
            r#"[5,["z"],"one",[1,2]]"#,
        ] {
            assert_eq!(read::<S>(text).ok(), serde_json::from_str::<S>(text).ok());
            assert!(read::<S>(text).is_ok(), "{text}");
        }
        for text in [
            r#"{"a":-1,"b":[],"mode":"one"}"#,
            r#"{"a":1,"b":[],"mode":"three"}"#,
            r#"{"a":1,"b":[],"mode":{"one":null}}"#,
            r#"{"a":1,"b":[1],"mode":"one"}"#,
        ] {
            assert!(read::<S>(text).is_err(), "{text}");
            assert_eq!(
                from_str::<S>(text).map_err(|e| e.to_string()),
                serde_json::from_str::<S>(text).map_err(|e| e.to_string())
            );
        }
    }
}
