//! The fast path of the string scanner: finds where a JSON string ends with SIMD masks,
//! 64 bytes at a time (in the manner of simdjson's stage 1), for the text the framing layer
//! checks on every frame (FRAME-10: each reassembled byte is scanned as one JSON value).
//!
//! Each 64-byte block is classified into bitmasks of quotes, backslashes and control
//! characters (`wide` compiles this to SSE2 compares and movemasks on x86-64, safely). The
//! bytes escaped by a backslash come from the backslash mask alone, with carries between
//! blocks, so the closing quote is the first quote not escaped. What is left to look at one by
//! one is only the escapes other than `\"` and `\\`: their letter, and a `\u`'s hex digits.
//!
//! This path only ever says "the string is valid and ends here". Anything unusual (a control
//! character, a bad or surrogate `\u` escape, an unterminated string, or fewer than 64 bytes
//! left) makes it return `None`, and the scalar scanner in `scan.rs` decides from the string's
//! start, so the two accept exactly the same strings and report the same errors.

use wide::u8x16;

/// The result of a fast scan: the index just past the closing quote, and whether the
/// string held escapes.
pub type StringEnd = (usize, bool);

/// Where the string whose contents start at `start` (just after its opening quote) ends, when
/// the fast path can tell; see the module documentation.
#[inline]
pub fn string_end(b: &[u8], start: usize) -> Option<StringEnd> {
    // Most strings are short keys and values: one 16-byte look settles them.
    let head = block16(b, start)?;
    if head.quote != 0 {
        let before = lowest_bit(head.quote) - 1;
        if (head.backslash | head.ctrl) & before == 0 {
            return Some((start + head.quote.trailing_zeros() as usize + 1, false));
        }
    }
    long_string_end(b, start)
}

/// Bitmasks of one block: bit `k` stands for the byte at offset `k`.
#[derive(Clone, Copy)]
struct Masks {
    quote: u64,
    backslash: u64,
    ctrl: u64,
}

const QUOTE: u8x16 = u8x16::new([b'"'; 16]);
const BACKSLASH: u8x16 = u8x16::new([b'\\'; 16]);
const CTRL_MAX: u8x16 = u8x16::new([0x1f; 16]);

/// The masks of the 16 bytes at `at`; see [`padded`] for the last bytes of the text.
#[inline]
fn block16(b: &[u8], at: usize) -> Option<Masks> {
    Some(masks16(padded(b, at)?))
}

/// The `N` bytes at `at`; when fewer are left (but at least one), those bytes followed by
/// NULs, which read as control characters, so a string that runs into them is never
/// settled by the fast path. `None` when no byte is left.
#[inline]
fn padded<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    match b.get(at..at.saturating_add(N)) {
        Some(bytes) => bytes.try_into().ok(),
        None => {
            let rest = b.get(at..).filter(|rest| !rest.is_empty())?;
            let mut bytes = [0u8; N];
            bytes[..rest.len()].copy_from_slice(rest);
            Some(bytes)
        }
    }
}

#[inline]
fn masks16(bytes: [u8; 16]) -> Masks {
    let v = u8x16::new(bytes);
    // `move_mask` gives one bit per byte, from the high bit of each comparison lane.
    let bits = |m: u8x16| u64::from(m.move_mask() as u16);
    Masks {
        quote: bits(v.cmp_eq(QUOTE)),
        backslash: bits(v.cmp_eq(BACKSLASH)),
        // A byte is at most 0x1f exactly when max(byte, 0x1f) is 0x1f.
        ctrl: bits(v.max(CTRL_MAX).cmp_eq(CTRL_MAX)),
    }
}

/// The masks of the 64 bytes at `at`; see [`padded`] for the last bytes of the text.
#[inline]
fn block64(b: &[u8], at: usize) -> Option<Masks> {
    match b.get(at..at.saturating_add(64)) {
        Some(block) => Some(masks64(block.try_into().ok()?)),
        None => Some(masks64(&padded::<64>(b, at)?)),
    }
}

/// The masks of a 64-byte block.
#[inline]
fn masks64(block: &[u8; 64]) -> Masks {
    let mut m = Masks {
        quote: 0,
        backslash: 0,
        ctrl: 0,
    };
    for (k, part) in block.chunks_exact(16).enumerate() {
        let part: [u8; 16] = part.try_into().unwrap_or([0; 16]);
        let p = masks16(part);
        let shift = 16 * k as u32;
        m.quote |= p.quote << shift;
        m.backslash |= p.backslash << shift;
        m.ctrl |= p.ctrl << shift;
    }
    m
}

/// The bytes that end a run of plain string content among the 16 bytes at `at`: bit `k`
/// set when the byte at `at + k` is a quote, a backslash or a control character (the
/// NULs [`padded`] adds past the end of the text read as control characters). `None` when
/// no byte is left. For the wire model's reader, which decodes a string run by run.
#[inline]
pub(crate) fn specials16(b: &[u8], at: usize) -> Option<u64> {
    let m = block16(b, at)?;
    Some(m.quote | m.backslash | m.ctrl)
}

/// [`specials16`] for the 64 bytes at `at`.
#[inline]
pub(crate) fn specials64(b: &[u8], at: usize) -> Option<u64> {
    let m = block64(b, at)?;
    Some(m.quote | m.backslash | m.ctrl)
}

#[inline]
fn lowest_bit(x: u64) -> u64 {
    x & x.wrapping_neg()
}

const ODD_BITS: u64 = 0xaaaa_aaaa_aaaa_aaaa;

/// Escape state carried from one block to the next.
#[derive(Default)]
struct Escapes {
    /// Whether the first byte of the next block is escaped (a block ended on the backslash
    /// of an escape).
    next_is_escaped: u64,
}

impl Escapes {
    /// The bytes of this block that a backslash escapes, given its backslash mask. In a run
    /// of backslashes, every other one escapes the next byte; a run starting at an even
    /// offset is told from one at an odd offset by a subtraction's carry (simdjson's method).
    #[inline]
    fn escaped(&mut self, backslash: u64) -> u64 {
        let potential_escape = backslash & !self.next_is_escaped;
        let maybe_escaped = potential_escape << 1;
        let maybe_escaped_and_odd_bits = maybe_escaped | ODD_BITS;
        let even_series_codes_and_odd_bits =
            maybe_escaped_and_odd_bits.wrapping_sub(potential_escape);
        let escape_and_terminal_code = even_series_codes_and_odd_bits ^ ODD_BITS;
        let escaped = escape_and_terminal_code ^ (backslash | self.next_is_escaped);
        let escape = escape_and_terminal_code & backslash;
        self.next_is_escaped = escape >> 63;
        escaped
    }
}

/// What may follow a backslash: 1 for a one-letter escape, 2 for `u`, 0 for anything else.
/// (`"` and `\` never reach the table: they are told apart by the masks.)
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = 1;
    t[b'\\' as usize] = 1;
    t[b'/' as usize] = 1;
    t[b'b' as usize] = 1;
    t[b'f' as usize] = 1;
    t[b'n' as usize] = 1;
    t[b'r' as usize] = 1;
    t[b't' as usize] = 1;
    t[b'u' as usize] = 2;
    t
};

/// Whether the four bytes at `at` are the hex digits of a `\u` escape that is not a
/// surrogate (surrogate escapes, lone or paired, are left to the scalar scanner).
#[inline]
fn plain_unicode_escape(b: &[u8], at: usize) -> bool {
    let Some(hex) = b.get(at..at + 4) else {
        return false;
    };
    if !hex.iter().all(u8::is_ascii_hexdigit) {
        return false;
    }
    // D800..DFFF: first digit d/D and second 8..f.
    !(matches!(hex[0], b'd' | b'D') && matches!(hex[1], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
}

/// The 64-byte block loop of [`string_end`].
#[inline(never)]
fn long_string_end(b: &[u8], start: usize) -> Option<StringEnd> {
    let mut at = start;
    let mut escapes = Escapes::default();
    let mut any_escape = false;
    loop {
        let m = block64(b, at)?;
        let escaped = escapes.escaped(m.backslash);
        let quotes = m.quote & !escaped;
        // The bytes before the closing quote (all 64 when it is not in this block).
        let inside = if quotes == 0 {
            u64::MAX
        } else {
            lowest_bit(quotes) - 1
        };
        if m.ctrl & inside != 0 {
            return None;
        }
        any_escape |= m.backslash & inside != 0;
        // Escaped letters other than `"` and `\`: check each against the table.
        let mut letters = escaped & !(m.quote | m.backslash) & inside;
        while letters != 0 {
            let k = at + letters.trailing_zeros() as usize;
            match ESCAPE[usize::from(b[k])] {
                1 => {}
                2 if plain_unicode_escape(b, k + 1) => {}
                _ => return None,
            }
            letters &= letters - 1;
        }
        if quotes != 0 {
            return Some((at + quotes.trailing_zeros() as usize + 1, any_escape));
        }
        at += 64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The escaped bytes of `b`, one at a time: those after an odd run of backslashes.
    fn escaped_reference(b: &[u8]) -> Vec<bool> {
        let mut out = Vec::with_capacity(b.len());
        let mut run = 0usize;
        for &c in b {
            out.push(run % 2 == 1);
            run = if c == b'\\' { run + 1 } else { 0 };
        }
        out
    }

    /// FRAME-10 (ours: fast path): the block-wise escape masks, carried across blocks, mark
    /// exactly the bytes a one-byte-at-a-time reading marks.
    #[test]
    fn frame_10_escape_masks_match_a_byte_at_a_time_reading() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for round in 0..2000 {
            let len = 64 * (1 + round % 4);
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // Mostly backslashes, so long runs cross block edges.
                    if seed % 5 < 3 {
                        b'\\'
                    } else {
                        b'a'
                    }
                })
                .collect();
            let want = escaped_reference(&bytes);
            let mut escapes = Escapes::default();
            for (blk, chunk) in bytes.chunks_exact(64).enumerate() {
                let bs = chunk
                    .iter()
                    .enumerate()
                    .fold(0u64, |m, (k, &c)| m | (u64::from(c == b'\\') << k));
                let got = escapes.escaped(bs);
                for k in 0..64 {
                    assert_eq!(
                        got >> k & 1 == 1,
                        want[blk * 64 + k],
                        "round {round} byte {}",
                        blk * 64 + k
                    );
                }
            }
        }
    }

    /// FRAME-10 (ours: fast path): the masks of a block name the quotes, backslashes and
    /// control characters at their offsets.
    #[test]
    fn frame_10_block_masks_name_each_special_byte() {
        let mut block = [b'x'; 64];
        block[0] = b'"';
        block[17] = b'\\';
        block[33] = 0x1f;
        block[34] = 0x20;
        block[48] = 0x00;
        block[63] = b'"';
        block[40] = 0xff;
        let m = block64(&block, 0).unwrap();
        assert_eq!(m.quote, 1 | 1 << 63);
        assert_eq!(m.backslash, 1 << 17);
        assert_eq!(m.ctrl, 1 << 33 | 1 << 48);
        // The last bytes of a text are padded with NULs.
        let m = block64(&block[60..], 0).unwrap();
        assert_eq!(m.quote, 1 << 3);
        assert_eq!(m.ctrl, !0b1111);
        assert!(block64(&block, 64).is_none());
    }

    /// FRAME-10 (ours: fast path): where the fast path answers, it agrees with the scalar
    /// scanner; surrogate escapes, bad escapes and control characters are left to it.
    #[test]
    fn frame_10_fast_string_end_answers_only_what_it_is_sure_of() {
        let pad = "p".repeat(80);
        let end = |s: &str| string_end(s.as_bytes(), 1);
        assert_eq!(end(&format!("\"abc\"{pad}")), Some((5, false)));
        assert_eq!(
            end(&format!("\"{pad}\"{pad}")),
            Some((pad.len() + 2, false))
        );
        let s = format!("\"a\\n\\\"\\\\\\u00e9{pad}\"{pad}");
        assert_eq!(end(&s), Some((s.len() - pad.len(), true)));
        let s = format!("\"{}\\\\\"{pad}", "q".repeat(62));
        assert_eq!(end(&s), Some((s.len() - pad.len(), true)));
        let s = format!("\"{}\\\"\"{pad}", "q".repeat(63));
        assert_eq!(end(&s), Some((s.len() - pad.len(), true)));
        for bad in ["\\x", "\\u00g9", "\\ud83d", "\\uDC00", "\t", "\\\u{1}"] {
            assert_eq!(end(&format!("\"a{bad}b\"{pad}")), None, "{bad:?}");
        }
        // At the end of the text.
        assert_eq!(end("\"abc\""), Some((5, false)));
        assert_eq!(end(&format!("\"{pad}\"")), Some((pad.len() + 2, false)));
        assert_eq!(end(&format!("\"{pad}\\n\"")), Some((pad.len() + 4, true)));
        assert_eq!(end(&format!("\"{pad}")), None);
        assert_eq!(end(&format!("\"{pad}\\u00e")), None);
        assert_eq!(end("\""), None);
    }
}
