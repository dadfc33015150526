//! Tool-result content blocks and credential-bearing uris (BLOCK-01 … BLOCK-06, seed
//! `004_faaa1b60b005099a.txt`).
//!
//! A tool result's content array reaches the model block by block, never as the array's JSON:
//!
//! * text as itself; an image with data and a media type natively (its `[image: …]`
//!   placeholder in the stored copy);
//! * a `resource_link` the host can fetch as a reference stub offering `fetch_reference`; one
//!   it can't fetch as its own line, `[resource link "NAME": URI, TYPE; not fetched]`, unless
//!   its uri may carry a credential ([`uri_may_carry_credential`]), is a `data:` uri or is
//!   longer than 4096 characters: then a stub that says why, with no uri;
//! * inline data beside a non-empty uri as a withheld line;
//! * everything else (inline audio, an image without data or media type, an embedded
//!   resource, an unknown type) as a marker saying what it was and why it isn't shown.
//!
//! Each block is classified once, and both copies are made from that
//! one classification (BLOCK-06): the text history stores, and the content the model reads.
//! [`show_tool_result`] does both for a whole result, including one whose data isn't a
//! content array (BLOCK-02), which is written as JSON with every `resource_link` in it shown
//! as its block would be.
//!
//! The module is pure: the caller says where the result came from ([`Source`]), and gets the
//! uri of every fetchable link back in its [`BlockClass::Reference`] to resolve `ref-N` later.
//!
//! ```
//! use musewire_core::blocks::{show_tool_result, Source, RawToolResult};
//!
//! let result = RawToolResult::from_json(r#"{"content":[
//!     {"type":"text","text":"done"},
//!     {"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},
//!     {"type":"resource_link","name":"report.csv","uri":"file:///tmp/report.csv","mimeType":"text/csv"},
//!     {"type":"resource_link","name":"photo","uri":"https://b.s3.amazonaws.com/p?X-Amz-Signature=abc"}
//! ]}"#).unwrap();
//! let shown = show_tool_result(&result, &Source::Local, 50_000);
//! assert_eq!(shown.copies.stored, "done\n\
//!     [Audio not shown: this host's tool results carry only text and images (audio/wav, ~4 bytes).]\n\
//!     [resource link \"report.csv\": file:///tmp/report.csv, text/csv; not fetched]\n\
//!     [resource link \"photo\"; not fetched: no server delivered it; its uri isn't shown, as it may carry a credential]");
//! ```

pub(crate) mod classify;
pub(crate) mod credential;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub(crate) mod label;
pub(crate) mod params;
pub(crate) mod render;

use serde::Serialize;
use serde_json::Value;

pub(crate) use classify::tool_result_blocks;
pub use classify::{BlockClass, Source, Unfetchable, UriWithheld};

pub(crate) use classify::classify_block;
pub use credential::{uri_may_carry_credential, CredentialFinding};
pub(crate) use label::well_formed_json;
pub(crate) use render::cut_at_cap;
pub(crate) use render::render;
pub use render::{Copies, LiveBlock, DEFAULT_CAP_CHARS};

/// A tool result as untyped JSON, as the blocks lane reads it before classifying it: a
/// protocol result's content or a module's data (the wire's typed result is
/// [`musewire_wire::ToolResult`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RawToolResult {
    /// The result's content field, or a module's data.
    pub content: Value,
    /// Whether the tool reported an error.
    pub is_error: bool,
    /// Whether `content` is content whatever its elements are: set for a protocol result's
    /// content field (BLOCK-02).
    pub data_is_content: bool,
}

/// Why a tool result's JSON couldn't be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The text isn't JSON.
    #[error("the tool result isn't JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The JSON isn't an object with `content` or `data`.
    #[error("the tool result is not an object with a \"content\" or \"data\" field")]
    Shape,
}

impl RawToolResult {
    /// Reads a tool result from JSON text: a protocol result, `{"content":[…],"isError":…}`
    /// (content whatever its blocks), or a module's, `{"data":…,"dataIsContent":…}`. Lone
    /// surrogate escapes (a `\ud800` with no pair) are made U+FFFD first.
    pub fn from_json(text: &str) -> Result<Self, ReadError> {
        let value: Value = serde_json::from_str(&well_formed_json(text))?;
        let is_error = value.get("isError").and_then(Value::as_bool) == Some(true);
        if let Some(content) = value.get("content") {
            return Ok(Self {
                content: content.clone(),
                is_error,
                data_is_content: true,
            });
        }
        if let Some(data) = value.get("data") {
            return Ok(Self {
                content: data.clone(),
                is_error,
                data_is_content: value.get("dataIsContent").and_then(Value::as_bool) == Some(true),
            });
        }
        Err(ReadError::Shape)
    }

    /// Whether the result is read as a content array (BLOCK-02): any array when
    /// [`RawToolResult::data_is_content`], else a non-empty array whose every element is an
    /// object whose `type` is one of `text`, `image`, `audio`, `resource`, `resource_link`.
    pub fn is_content_array(&self) -> bool {
        classify::is_content_array(self)
    }
}

/// A result as shown: its classification and both copies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shown {
    /// Whether the tool reported an error.
    pub is_error: bool,
    /// Whether the result was read as a content array (BLOCK-02).
    pub is_content: bool,
    /// The classification: one per block of a content array, or, for data, one per
    /// `resource_link` found in it, in the order written.
    pub blocks: Vec<BlockClass>,
    /// Both copies.
    pub copies: Copies,
}

/// Classifies a result once and makes both copies from that classification.
pub fn show_tool_result(result: &RawToolResult, source: &Source<'_>, cap: usize) -> Shown {
    if result.is_content_array() {
        let items = result.content.as_array().map(Vec::as_slice).unwrap_or(&[]);
        let blocks = tool_result_blocks(items, source);
        let copies = render(&blocks, cap);
        return Shown {
            is_error: result.is_error,
            is_content: true,
            blocks,
            copies,
        };
    }
    let mut blocks = Vec::new();
    let mut refs = 0;
    let shown = links_shown(&result.content, source, &mut refs, &mut blocks);
    let stored = match shown {
        Value::String(text) => text,
        other => other.to_string(),
    };
    let live = vec![LiveBlock::Text {
        text: cut_at_cap(&stored, cap),
    }];
    Shown {
        is_error: result.is_error,
        is_content: false,
        blocks,
        copies: Copies {
            stored,
            live,
            native: false,
        },
    }
}

/// Data with every `resource_link` that names a non-empty string uri, at any depth, replaced
/// by its block's stored text.
fn links_shown(
    value: &Value,
    source: &Source<'_>,
    refs: &mut usize,
    found: &mut Vec<BlockClass>,
) -> Value {
    match value {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| links_shown(item, source, refs, found))
                .collect(),
        ),
        Value::Object(map) => {
            let is_link = map.get("type").and_then(Value::as_str) == Some("resource_link")
                && map
                    .get("uri")
                    .and_then(Value::as_str)
                    .is_some_and(|u| !u.is_empty());
            if is_link {
                let class = classify_block(value, source, refs);
                let text = class.stored_text().to_owned();
                found.push(class);
                return Value::String(text);
            }
            Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), links_shown(v, source, refs, found)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests;
