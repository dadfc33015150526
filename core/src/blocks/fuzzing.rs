//! Fuzz bodies for `fuzz/fuzz_targets/credential_uri.rs` and `classify_blocks.rs`.

use arbitrary::Unstructured;
use serde_json::{json, Value};

use super::classify::REFERENCE_STUB_MAX_CHARS;
use super::credential::credential_finding;
use super::label::sanitize_label;
use super::params::CREDENTIAL_PARAMETERS;
use super::{show_tool_result, BlockClass, RawToolResult, Source};

/// Checks an arbitrary uri: the check terminates within its bounds, agrees with itself, and a
/// uri given a listed parameter with a value always counts.
pub fn fuzz_credential_uri(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let finding = credential_finding(&text);
    assert_eq!(finding, credential_finding(&text));
    let _ = sanitize_label(&text, 64);
    if let Some(param) = CREDENTIAL_PARAMETERS
        .get(data.first().map_or(0, |b| *b as usize) % CREDENTIAL_PARAMETERS.len())
    {
        let with = format!(
            "https://h.example/?{}=v&{}",
            param.name,
            text.replace('#', "")
        );
        assert!(credential_finding(&with).is_some(), "{with}");
    }
}

/// Shows a tool result from each kind of source: never panics, no stub passes its bound, and
/// the live copy is the stored text or the blocks' own texts. Input that is a tool result's
/// JSON is read as such; any other input is turned into a content array of MCP-shaped blocks
/// (type, uri, name, data, mimeType drawn from the bytes), so most inputs reach the classifier.
pub fn fuzz_classify_blocks(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let result = match RawToolResult::from_json(&text) {
        Ok(result) => result,
        Err(_) => RawToolResult {
            content: blocks_from_bytes(data),
            is_error: false,
            data_is_content: data.first().is_some_and(|b| b & 1 == 0),
        },
    };
    for source in [
        Source::Local,
        Source::UnknownServer { id: "s" },
        Source::Server {
            id: "s",
            address: None,
        },
        Source::Server {
            id: "s",
            address: Some("https://h.example/mcp"),
        },
    ] {
        let shown = show_tool_result(&result, &source, 200);
        for block in &shown.blocks {
            if let BlockClass::Reference { stub, .. } | BlockClass::Stub { stub, .. } = block {
                assert!(stub.chars().count() <= REFERENCE_STUB_MAX_CHARS);
            }
        }
        if !shown.copies.native {
            assert_eq!(shown.copies.live.len(), 1);
        }
    }
}

fn blocks_from_bytes(data: &[u8]) -> Value {
    const TYPES: [&str; 7] = [
        "text",
        "image",
        "audio",
        "resource",
        "resource_link",
        "video",
        "",
    ];
    const URIS: [&str; 6] = [
        "https://h.example/",
        "http://h.example/",
        "https://b.s3.amazonaws.com/k?X-Amz-Signature=",
        "https://site.example/_next/image?url=",
        "data:,",
        "",
    ];
    let mut u = Unstructured::new(data);
    let mut blocks = Vec::new();
    while !u.is_empty() && blocks.len() < 16 {
        let kind = TYPES[u.choose_index(TYPES.len()).unwrap_or(0)];
        let prefix = URIS[u.choose_index(URIS.len()).unwrap_or(0)];
        let tail: String = u.arbitrary().unwrap_or_default();
        let name: String = u.arbitrary().unwrap_or_default();
        let payload: String = u.arbitrary().unwrap_or_default();
        let mime: String = u.arbitrary().unwrap_or_default();
        let mut block = json!({"type": kind, "name": name, "mimeType": mime});
        if u.arbitrary().unwrap_or(false) {
            block["uri"] = Value::String(format!("{prefix}{tail}"));
        }
        if u.arbitrary().unwrap_or(false) {
            block["data"] = Value::String(payload.clone());
            block["text"] = Value::String(payload);
        }
        blocks.push(block);
    }
    Value::Array(blocks)
}
