//! Fuzz bodies for `fuzz/fuzz_targets/credential_uri.rs` and `classify_blocks.rs`.

use super::{
    credential_finding, sanitize_label, show_tool_result, Source, ToolResult, CREDENTIAL_PARAMETERS,
};

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

/// Shows an arbitrary tool result's JSON from each kind of source: never panics, both copies
/// come out, and no stub passes its bound.
pub fn fuzz_classify_blocks(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(result) = ToolResult::from_json(&text) else {
        return;
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
        let shown = show_tool_result(&result, &source, 1_000);
        for block in &shown.blocks {
            if let super::BlockClass::Reference { stub, .. }
            | super::BlockClass::Stub { stub, .. } = block
            {
                assert!(stub.chars().count() <= super::REFERENCE_STUB_MAX_CHARS);
            }
        }
    }
}
