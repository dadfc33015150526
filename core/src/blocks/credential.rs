//! The credential check (BLOCK-04): may a uri carry a bearer credential?
//!
//! A uri may carry one when, read as the seed describes:
//!
//! * it has userinfo (`https://user@host/`, `https://user:pw@host/`);
//! * a query or fragment parameter with a non-empty value has a name on
//!   [`CREDENTIAL_PARAMETERS`](super::CREDENTIAL_PARAMETERS) (compared by letters and digits),
//!   or a name made of credential words (`auth_token`, `apiSecret`, `signing_key`, `sid`;
//!   BLOCK-07);
//!   a fragment is read as a query is, and `?` and `;` inside either are read both as
//!   separators and not (`#/reset?token=…`, `?x=;token=…`); so are `;` parameters of the path
//!   (`/app;jsessionid=…`);
//! * a parameter's value (or a path segment) that is itself a uri (absolute, protocol-relative,
//!   or relative with a query or fragment) is read the same way, as found and after each
//!   percent-decoding that changes it. Each read and each decode is a level; the link's own uri
//!   is read at level 1, and a uri reached past level [`MAX_LEVELS`] counts as carrying one;
//! * it doesn't parse, even as a relative reference;
//! * reading it would take more than [`MAX_READS`] reads, or a value still changes after
//!   [`MAX_DECODES`] decodes (both only reachable by inputs built to exhaust the check).
//!
//! Ordinary links with a query still pass: `watch?v=…`, `?usp=sharing`, a bare `#token`
//! anchor, `?next=/dashboard`, and `?code=…` (see [`params`](super::params) for why `code` is
//! not listed).
//!
//! ```
//! use musewire_core::blocks::uri_may_carry_credential;
//!
//! assert!(uri_may_carry_credential("https://b.s3.amazonaws.com/k?X-Amz-Signature=abc"));
//! assert!(uri_may_carry_credential("https://app.example/#/reset?token=abc"));
//! assert!(!uri_may_carry_credential("https://www.youtube.com/watch?v=dQw4w9WgXcQ"));
//! assert!(!uri_may_carry_credential("https://docs.example/page#token"));
//! ```

use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;

use serde::Serialize;
use url::Url;

use super::params::{is_credential_parameter, normalize_name};

/// The deepest level read: the link's uri is level 1, and each read of a nested uri and each
/// percent-decoding of a value adds one. A uri reached deeper counts as carrying a credential.
pub(crate) const MAX_LEVELS: u32 = 4;

/// The most uris one check reads before it gives up and counts the uri as carrying a credential.
const MAX_READS: usize = 256;

/// The most percent-decodings of one value before a value that still changes counts as
/// carrying a credential.
const MAX_DECODES: u32 = 16;

/// Why a uri may carry a credential. Names no part of the uri but a credential parameter's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "finding", rename_all = "snake_case")]
pub enum CredentialFinding {
    /// A uri read at `level` has userinfo.
    Userinfo {
        /// The level of the read that found it.
        level: u32,
    },
    /// A uri read at `level` has a credential parameter (listed, or matched by its words)
    /// with a value.
    Parameter {
        /// The parameter's name reduced to letters and digits (the form listed names take).
        name: String,
        /// The level of the read that found it.
        level: u32,
    },
    /// A uri was reached past level 4 (the link's uri is level 1, each nested uri or
    /// percent-decoding one more).
    TooDeep {
        /// The level it would have been read at.
        level: u32,
    },
    /// A uri read at `level` doesn't parse, even as a relative reference.
    Unparseable {
        /// The level of the failed read.
        level: u32,
    },
    /// The check ran past 256 reads or 16 decodes.
    TooComplex,
}

impl fmt::Display for CredentialFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Userinfo { level } => write!(f, "userinfo at level {level}"),
            Self::Parameter { name, level } => {
                write!(f, "credential parameter \"{name}\" at level {level}")
            }
            Self::TooDeep { level } => write!(f, "a uri nested past level {MAX_LEVELS} ({level})"),
            Self::Unparseable { level } => write!(f, "a uri that doesn't parse at level {level}"),
            Self::TooComplex => f.write_str("a uri too complex to read within bounds"),
        }
    }
}

/// Whether `uri` may carry a credential (BLOCK-04). See the module docs for the rule.
pub fn uri_may_carry_credential(uri: &str) -> bool {
    credential_finding(uri).is_some()
}

/// The first reason found for which `uri` may carry a credential, or `None` when it can't.
pub(crate) fn credential_finding(uri: &str) -> Option<CredentialFinding> {
    let mut check = Check::default();
    check.explore(uri, 0, true)
}

#[derive(Default)]
struct Check {
    reads: usize,
    seen: HashSet<(String, u32)>,
}

impl Check {
    /// Reads `text` (if it looks like a uri, or `force`) and each of its percent-decodings, the
    /// raw form at `level + 1`, the n-th decoding at `level + n + 1`.
    fn explore(&mut self, text: &str, level: u32, force: bool) -> Option<CredentialFinding> {
        let mut stage = text.to_owned();
        let mut at = level;
        let mut decodes = 0;
        loop {
            if force || looks_like_uri(&stage) {
                if let Some(finding) = self.read(&stage, at + 1) {
                    return Some(finding);
                }
            }
            let decoded = percent_decode(&stage);
            if decoded == stage {
                return None;
            }
            decodes += 1;
            if decodes > MAX_DECODES {
                return Some(CredentialFinding::TooComplex);
            }
            stage = decoded;
            at += 1;
        }
    }

    fn read(&mut self, text: &str, level: u32) -> Option<CredentialFinding> {
        if level > MAX_LEVELS {
            return Some(CredentialFinding::TooDeep { level });
        }
        if !self.seen.insert((text.to_owned(), level)) {
            return None;
        }
        self.reads += 1;
        if self.reads > MAX_READS {
            return Some(CredentialFinding::TooComplex);
        }
        let Some(url) = parse_reference(text) else {
            return Some(CredentialFinding::Unparseable { level });
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Some(CredentialFinding::Userinfo { level });
        }
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for part in [url.query(), url.fragment()].into_iter().flatten() {
            push_pairs(part, &['&'], &mut pairs);
            push_pairs(part, &['&', '?', ';'], &mut pairs);
        }
        let path = url.path();
        for segment in path.split('/') {
            if let Some((_, params)) = segment.split_once(';') {
                push_pairs(params, &['&', ';'], &mut pairs);
            }
        }
        let mut unique = HashSet::new();
        pairs.retain(|pair| unique.insert(*pair));
        for (name, value) in &pairs {
            if !value.is_empty() && is_credential_parameter(&percent_decode(name)) {
                return Some(CredentialFinding::Parameter {
                    name: normalize_name(&percent_decode(name)),
                    level,
                });
            }
        }
        for (_, value) in &pairs {
            if !value.is_empty() {
                if let Some(finding) = self.explore(value, level, false) {
                    return Some(finding);
                }
            }
        }
        if !url.cannot_be_a_base() {
            for segment in path.split('/') {
                if segment.contains('%') {
                    if let Some(finding) = self.explore(segment, level, false) {
                        return Some(finding);
                    }
                }
            }
        }
        None
    }
}

fn push_pairs<'a>(part: &'a str, separators: &[char], pairs: &mut Vec<(&'a str, &'a str)>) {
    for piece in part.split(separators) {
        if piece.is_empty() {
            continue;
        }
        pairs.push(piece.split_once('=').unwrap_or((piece, "")));
    }
}

fn base() -> &'static Url {
    static BASE: OnceLock<Url> = OnceLock::new();
    BASE.get_or_init(|| Url::parse("https://base.invalid/").expect("a valid base"))
}

/// Parses `text` as an absolute uri, or else as a relative reference (against a placeholder
/// `https` base, so `//host` is protocol-relative and `\` reads as `/`, as a browser reads it).
fn parse_reference(text: &str) -> Option<Url> {
    match Url::parse(text) {
        Ok(url) => Some(url),
        Err(url::ParseError::RelativeUrlWithoutBase) => base().join(text).ok(),
        Err(_) => None,
    }
}

/// Whether a value reads as a uri: absolute (`scheme:`), protocol-relative (`//`, either slash
/// kind, after the C0 controls and spaces a parser trims), or with a query or fragment.
pub(crate) fn looks_like_uri(text: &str) -> bool {
    let trimmed: String = text
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let mut chars = trimmed.chars();
    let first_two = (chars.next(), chars.next());
    if matches!(first_two, (Some('/' | '\\'), Some('/' | '\\'))) {
        return true;
    }
    if trimmed.contains(['?', '#']) {
        return true;
    }
    let mut chars = trimmed.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    for c in chars {
        match c {
            ':' => return true,
            c if c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.') => {}
            _ => return false,
        }
    }
    false
}

/// Decodes every `%XX` once (no `+` to space), invalid UTF-8 becoming U+FFFD.
pub(crate) fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(byte: u8) -> Option<u8> {
    (byte as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_once() {
        assert_eq!(percent_decode("a%2Fb%252F%"), "a/b%2F%");
        assert_eq!(percent_decode("%4"), "%4");
        assert_eq!(percent_decode("%41"), "A");
    }

    #[test]
    fn uri_likeness() {
        assert!(looks_like_uri("https://x"));
        assert!(looks_like_uri("\t//x"));
        assert!(looks_like_uri("/reset?token=a"));
        assert!(!looks_like_uri("/dashboard"));
        assert!(!looks_like_uri("640"));
        assert!(!looks_like_uri("https%3A%2F%2Fx"));
    }
}
