//! Classifying a content array's blocks (BLOCK-01, BLOCK-02, BLOCK-03), once, for both copies.

use serde::Serialize;
use serde_json::Value;
use url::Url;

use super::credential::{credential_finding, CredentialFinding};
use super::label::{
    cut_chars, sanitize_label, LABEL_MAX_CHARS, SERVER_ID_MAX_CHARS, TYPE_MAX_CHARS,
};
use super::RawToolResult;

/// MCP's content block types: an array whose every element is one of these is content even
/// without [`RawToolResult::data_is_content`] (BLOCK-02).
const MCP_BLOCK_TYPES: [&str; 5] = ["text", "image", "audio", "resource", "resource_link"];

/// The longest uri a link's line shows, in characters. A longer uri gets the stub that says
/// why, with no uri: a cut uri is no handle on the link, and the cut could split a credential.
const URI_MAX_CHARS: usize = 4096;

/// The longest stub (a reference's, or one saying why a link isn't fetched), in characters.
pub(crate) const REFERENCE_STUB_MAX_CHARS: usize = 512;

/// Where a tool result came from: all the fetch check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source<'a> {
    /// No server delivered it: a module's, a script's or a direct caller's result.
    Local,
    /// A server the host doesn't know (any more).
    UnknownServer {
        /// The server's id as the result names it.
        id: &'a str,
    },
    /// A server the host knows.
    Server {
        /// The server's id.
        id: &'a str,
        /// The URL the host dials it at; `None` for a server with no address (stdio).
        address: Option<&'a str>,
    },
}

/// Why the host can't fetch a link's uri: the clause a stub ends with (never the remedy, and
/// never naming the uri's parts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Unfetchable {
    /// No server delivered the link (a module's link).
    NoServer,
    /// The server that delivered it isn't one the host knows.
    UnknownServer {
        /// The server's id, as a label.
        id: String,
    },
    /// The server has no address to fetch from (a stdio server).
    NoAddress {
        /// The server's id, as a label.
        id: String,
    },
    /// The uri isn't an absolute `http(s)` uri.
    Scheme,
    /// The uri is off the origin its server is dialed at.
    OffOrigin,
    /// An `http` uri from a server dialed over a secure connection.
    Insecure,
}

impl Unfetchable {
    /// The clause a stub ends with.
    pub(crate) fn clause(&self) -> String {
        match self {
            Self::NoServer => "no server delivered it".to_owned(),
            Self::UnknownServer { id } => format!("its server \"{id}\" isn't one this host knows"),
            Self::NoAddress { id } => format!("its server \"{id}\" has no address to fetch from"),
            Self::Scheme => "its scheme isn't one the fetcher accepts".to_owned(),
            Self::OffOrigin => "it isn't on its server's origin".to_owned(),
            Self::Insecure => {
                "it would be fetched without the secure connection its server is dialed over"
                    .to_owned()
            }
        }
    }
}

/// Why a link's line doesn't show its uri.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "withheld", rename_all = "snake_case")]
pub enum UriWithheld {
    /// The uri may carry a credential (BLOCK-04).
    Credential {
        /// What the check found.
        finding: CredentialFinding,
    },
    /// A `data:` uri holds its content rather than naming where it lies.
    Data,
    /// The uri is longer than 4096 characters.
    TooLong,
}

impl UriWithheld {
    fn clause(&self) -> &'static str {
        match self {
            Self::Credential { .. } => "its uri isn't shown, as it may carry a credential",
            Self::Data => "its uri isn't shown, as a data: uri holds its content",
            Self::TooLong => "its uri isn't shown, as it is too long",
        }
    }
}

/// Whether the host can fetch `uri` for a link from `source`: an absolute `http(s)` uri on the
/// origin of a server the host dials by URL, not `http` from a server dialed over `https`.
pub(crate) fn dial_check(uri: &str, source: &Source<'_>) -> Result<(), Unfetchable> {
    let (id, address) = match *source {
        Source::Local => return Err(Unfetchable::NoServer),
        Source::UnknownServer { id } => {
            return Err(Unfetchable::UnknownServer {
                id: sanitize_label(id, SERVER_ID_MAX_CHARS),
            })
        }
        Source::Server { id, address } => (id, address),
    };
    let no_address = || Unfetchable::NoAddress {
        id: sanitize_label(id, SERVER_ID_MAX_CHARS),
    };
    let server = address
        .and_then(|a| Url::parse(a).ok())
        .filter(|s| matches!(s.scheme(), "http" | "https") && s.host().is_some())
        .ok_or_else(no_address)?;
    let target = Url::parse(uri).map_err(|_| Unfetchable::Scheme)?;
    if !matches!(target.scheme(), "http" | "https") {
        return Err(Unfetchable::Scheme);
    }
    if target.origin() == server.origin() {
        return Ok(());
    }
    if server.scheme() == "https" && target.scheme() == "http" && target.host() == server.host() {
        return Err(Unfetchable::Insecure);
    }
    Err(Unfetchable::OffOrigin)
}

/// How one block of a content array is shown: the one classification both copies read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BlockClass {
    /// A text block, as itself.
    Text {
        /// The block's text.
        text: String,
    },
    /// An image with data and a media type: native in the live copy, its placeholder in the
    /// stored copy.
    Image {
        /// The base64 data, as sent.
        #[serde(skip)]
        data: String,
        /// The media type.
        mime_type: String,
        /// The stored copy's `[image: …]` placeholder.
        placeholder: String,
    },
    /// A link the host can fetch: a reference stub offering `fetch_reference`.
    Reference {
        /// The id `fetch_reference` takes (`ref-N`, counting the result's references from 1).
        ref_id: String,
        /// The uri to fetch, for the host; never in either copy (nor in this type's JSON).
        #[serde(skip)]
        uri: String,
        /// The stub both copies show.
        stub: String,
    },
    /// A link the host can't fetch whose uri can't carry a credential: its own line.
    Link {
        /// `[resource link "NAME": URI, TYPE; not fetched]`.
        line: String,
    },
    /// A link the host can't fetch whose uri isn't shown: the stub that says why.
    Stub {
        /// The stub both copies show.
        stub: String,
        /// Why it can't be fetched.
        unfetchable: Unfetchable,
        /// Why its uri isn't shown.
        uri: UriWithheld,
    },
    /// Inline data withheld for a contradiction (data beside a non-empty uri).
    Withheld {
        /// The line both copies show.
        line: String,
    },
    /// A block this host doesn't show: a marker saying what it was and why.
    Marker {
        /// The marker both copies show.
        marker: String,
    },
}

/// How a block counts against the cap in the live copy (BLOCK-06).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShownAs {
    /// Text, cut at the cap on its own.
    Text,
    /// A native image.
    Image,
    /// Sent whole: a reference's stub, a why-stub, a withheld line.
    Whole,
    /// A link's line or a marker: sent beside an image only while all of them fit the cap.
    Counted,
}

impl BlockClass {
    /// The block's text in the stored copy.
    pub fn stored_text(&self) -> &str {
        match self {
            Self::Text { text } => text,
            Self::Image { placeholder, .. } => placeholder,
            Self::Reference { stub, .. } | Self::Stub { stub, .. } => stub,
            Self::Link { line } | Self::Withheld { line } => line,
            Self::Marker { marker } => marker,
        }
    }

    /// How the block counts against the cap.
    pub(crate) fn shown_as(&self) -> ShownAs {
        match self {
            Self::Text { .. } => ShownAs::Text,
            Self::Image { .. } => ShownAs::Image,
            Self::Reference { .. } | Self::Stub { .. } | Self::Withheld { .. } => ShownAs::Whole,
            Self::Link { .. } | Self::Marker { .. } => ShownAs::Counted,
        }
    }
}

/// Whether `result` is a content array (BLOCK-02): any array when
/// [`RawToolResult::data_is_content`] (a protocol result's content field), else a non-empty
/// array whose every element is an object whose `type` is one of [`MCP_BLOCK_TYPES`].
pub(super) fn is_content_array(result: &RawToolResult) -> bool {
    let Some(items) = result.content.as_array() else {
        return false;
    };
    if result.data_is_content {
        return true;
    }
    !items.is_empty()
        && items.iter().all(|item| {
            item.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| MCP_BLOCK_TYPES.contains(&t))
        })
}

/// Classifies every block of a content array, in order, numbering references from `ref-1`.
pub(crate) fn tool_result_blocks(content: &[Value], source: &Source<'_>) -> Vec<BlockClass> {
    let mut refs = 0;
    content
        .iter()
        .map(|block| classify_block(block, source, &mut refs))
        .collect()
}

/// Classifies one block; `refs` counts the result's references so far (the next is
/// `ref-{refs + 1}`).
pub(crate) fn classify_block(block: &Value, source: &Source<'_>, refs: &mut usize) -> BlockClass {
    let Some(kind) = block.get("type").and_then(Value::as_str) else {
        return marker("[Content not shown: this host can't display a block with no type.]");
    };
    let data = non_empty_str(block, "data");
    let mime = non_empty_str(block, "mimeType");
    // An empty uri beside inline data is no link; any other uri contradicts it.
    let names_uri = block
        .get("uri")
        .is_some_and(|u| !matches!(u, Value::String(s) if s.is_empty()) && !u.is_null());
    match kind {
        "text" => match block.get("text").and_then(Value::as_str) {
            Some(text) => BlockClass::Text {
                text: text.to_owned(),
            },
            None => marker("[Content not shown: a \"text\" block with no text.]"),
        },
        "image" | "audio" if data.is_some() && names_uri => BlockClass::Withheld {
            line: format!(
                "[Inline data withheld: this \"{kind}\" block names a uri beside its data, so neither is shown.]"
            ),
        },
        "image" => match (data, mime) {
            (Some(data), Some(mime)) => {
                let mime_label = type_label(mime);
                BlockClass::Image {
                    placeholder: format!("[image: {mime_label}, {}]", approx_base64(data)),
                    data: data.to_owned(),
                    mime_type: mime.to_owned(),
                }
            }
            (Some(data), None) => marker(&format!(
                "[Image not shown: it came without a media type ({}).]",
                approx_base64(data)
            )),
            (None, _) => marker("[Image not shown: it came without data.]"),
        },
        "audio" => match data {
            Some(data) => marker(&format!(
                "[Audio not shown: this host's tool results carry only text and images ({}, {}).]",
                mime.map(type_label).unwrap_or_else(|| "unknown type".to_owned()),
                approx_base64(data)
            )),
            None => marker("[Audio not shown: it came without data.]"),
        },
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let mime = non_empty_str(resource, "mimeType")
                .map(type_label)
                .unwrap_or_else(|| "unknown type".to_owned());
            let size = if let Some(text) = resource.get("text").and_then(Value::as_str) {
                approx_size(text.len() as u64)
            } else if let Some(blob) = resource.get("blob").and_then(Value::as_str) {
                approx_base64(blob)
            } else {
                "no content".to_owned()
            };
            marker(&format!(
                "[Resource not shown: this host's tool results carry only text and images ({mime}, {size}).]"
            ))
        }
        "resource_link" => classify_link(block, source, refs),
        other => marker(&format!(
            "[Content not shown: this host can't display \"{}\" content.]",
            type_label(other)
        )),
    }
}

fn classify_link(block: &Value, source: &Source<'_>, refs: &mut usize) -> BlockClass {
    let Some(uri) = non_empty_str(block, "uri") else {
        return marker("[Content not shown: a \"resource_link\" block with no uri.]");
    };
    let name = block.get("name").and_then(Value::as_str).map(name_label);
    let name = match &name {
        Some(Some(name)) => format!(" \"{name}\""),
        Some(None) => " (name withheld)".to_owned(),
        None => String::new(),
    };
    let mime = non_empty_str(block, "mimeType").map(type_label);
    let size = ["size", "sizeBytes"]
        .iter()
        .find_map(|k| block.get(*k).and_then(Value::as_u64))
        .map(approx_size);
    let unfetchable = match dial_check(uri, source) {
        Ok(()) => {
            *refs += 1;
            let ref_id = format!("ref-{refs}");
            let facts: Vec<String> = mime.iter().cloned().chain(size).collect();
            let facts = if facts.is_empty() {
                String::new()
            } else {
                format!(": {}", facts.join(", "))
            };
            return BlockClass::Reference {
                stub: bound_stub(format!(
                    "[reference {ref_id}{name}{facts}; fetch it with fetch_reference]"
                )),
                ref_id,
                uri: uri.to_owned(),
            };
        }
        Err(unfetchable) => unfetchable,
    };
    let shown = sanitize_label(uri, usize::MAX);
    let withheld = if is_data_uri(uri) || is_data_uri(&shown) {
        Some(UriWithheld::Data)
    } else if uri.chars().count() > URI_MAX_CHARS {
        Some(UriWithheld::TooLong)
    } else {
        credential_finding(uri)
            .or_else(|| credential_finding(&shown))
            .map(|finding| UriWithheld::Credential { finding })
    };
    let mime_part = mime.as_ref().map(|m| format!(", {m}")).unwrap_or_default();
    match withheld {
        None => BlockClass::Link {
            line: format!("[resource link{name}: {shown}{mime_part}; not fetched]"),
        },
        Some(withheld) => BlockClass::Stub {
            stub: bound_stub(format!(
                "[resource link{name}{}; not fetched: {}; {}]",
                mime.map(|m| format!(": {m}")).unwrap_or_default(),
                unfetchable.clause(),
                withheld.clause()
            )),
            unfetchable,
            uri: withheld,
        },
    }
}

/// A link's name as a label, or `None` when, read as a uri, it may carry a credential.
fn name_label(raw: &str) -> Option<String> {
    let shown = sanitize_label(raw, LABEL_MAX_CHARS);
    if carries(raw) || carries(&sanitize_label(raw, usize::MAX)) {
        return None;
    }
    Some(shown)
}

/// A type or media type as a label, `(withheld)` when, read as a uri, it may carry one.
fn type_label(raw: &str) -> String {
    if carries(raw) || carries(&sanitize_label(raw, usize::MAX)) {
        return "(withheld)".to_owned();
    }
    sanitize_label(raw, TYPE_MAX_CHARS)
}

/// Whether a label, read as a uri (every text reads as at least a relative reference), may
/// carry a credential: a link's name is often its uri, or a path with its parameters.
fn carries(text: &str) -> bool {
    credential_finding(text).is_some()
}

fn is_data_uri(uri: &str) -> bool {
    let cleaned: String = uri
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .take(5)
        .collect();
    cleaned.eq_ignore_ascii_case("data:")
}

fn bound_stub(stub: String) -> String {
    if stub.chars().count() <= REFERENCE_STUB_MAX_CHARS {
        return stub;
    }
    let mut cut = cut_chars(stub.chars(), REFERENCE_STUB_MAX_CHARS - 1);
    cut.push(']');
    cut
}

fn marker(text: &str) -> BlockClass {
    BlockClass::Marker {
        marker: text.to_owned(),
    }
}

fn non_empty_str<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The approximate size of base64 data once decoded.
fn approx_base64(data: &str) -> String {
    let chars = data.bytes().filter(|b| !b.is_ascii_whitespace()).count() as u64;
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count() as u64;
    approx_size((chars * 3 / 4).saturating_sub(padding.min(2)))
}

/// A size as the markers write it: `~512 bytes`, `~3KB`, `~1.5MB`.
pub(crate) fn approx_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes < KIB {
        format!("~{bytes} bytes")
    } else if bytes < MIB {
        format!("~{}KB", (bytes + KIB / 2) / KIB)
    } else {
        format!("~{:.1}MB", bytes as f64 / MIB as f64)
    }
}
