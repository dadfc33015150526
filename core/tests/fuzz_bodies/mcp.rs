//! The MCP client's fuzz body (feature `fuzzing`) on fixed and random seeds, so `cargo test`
//! keeps it compiling and passing between fuzz runs: MCP-05 and MCP-06 (every call answered
//! once, a cancelled one never, nothing left waiting at the stop), MCP-03 (registered names),
//! under arbitrary server output. The scripted seeds are also the fuzz target's corpus,
//! `fuzz/seeds/mcp_client/`.
#![cfg(feature = "fuzzing")]

use std::path::PathBuf;

use musewire_core::mcp::fuzzing;

use crate::seeds;

/// Scripted inputs: a whole session (initialize, a paged listing, calls answered, cancelled,
/// timed out, a changed list), then garbage mid-call, then an exit mid-call.
fn scripted() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        // answer initialize; answer the listing (two pages); call; answer; call; cancel;
        // call; 60 s pass; list_changed; answer it; ping.
        (
            "mcp-02-05-session",
            vec![
                1, 0, 0, 1, 0, 1, 1, 0, 0, 2, 0, 1, 0, 0, 2, 1, 3, 1, 2, 2, 4, 61, 5, 1, 0, 0, 6,
            ],
        ),
        (
            "mcp-06-garbage-mid-call",
            vec![1, 0, 0, 1, 0, 0, 2, 0, 0, 3, b'x', b'y', b'\n', 0],
        ),
        ("mcp-06-exit-mid-call", vec![1, 0, 0, 1, 0, 0, 2, 0, 8]),
        ("mcp-06-silent-start", vec![4, 11, 2, 0]),
        (
            "mcp-05-errors",
            vec![1, 0, 0, 1, 0, 3, 2, 0, 1, 0, 3, 2, 1, 1, 0, 2],
        ),
    ]
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// MCP-05, MCP-06: the scripted sessions hold the invariants, and the fuzz corpus holds them
/// (MUSEWIRE_BLESS_SEEDS=1 writes it).
#[test]
fn mcp_05_06_scripted_sessions_and_the_seed_corpus() {
    let dir = repo().join("fuzz/seeds/mcp_client");
    for (name, input) in scripted() {
        fuzzing::mcp_client(&input);
        let path = dir.join(name);
        if std::env::var_os("MUSEWIRE_BLESS_SEEDS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &input).unwrap();
        }
        let stored = std::fs::read(&path).unwrap_or_default();
        assert_eq!(
            stored, input,
            "fuzz/seeds/mcp_client/{name} is stale: run with MUSEWIRE_BLESS_SEEDS=1"
        );
    }
}

/// MCP-05, MCP-06: random inputs never panic and every call is answered once.
#[test]
fn mcp_06_client_fuzz_body_on_random_seeds() {
    for input in seeds::seeds(0x9e37_79b9_7f4a_7c15, 500, 400) {
        fuzzing::mcp_client(&input);
    }
}

/// MCP-10/11/14: scripted HTTP sessions through the HTTP fuzz body: streamable HTTP
/// (initialize as JSON, `initialized` accepted, the listing, a call answered on an event
/// stream split in three) and
/// HTTP+SSE (the endpoint, then the same over the stream).
#[test]
fn mcp_10_11_14_scripted_http_sessions() {
    let streamable = [
        0, 1, 0, 0, 0, 0, 0, 5, 0, 2, 1, 0, 0, 0, 0, 0, 2, 0, 0, 1, 1, 0x10, 5, 9, 40,
    ];
    let log = fuzzing::http_client_actions(&streamable);
    assert!(
        log.iter()
            .any(|a| a.contains("Tools([HostToolDefinition { name: \"mcp__fuzz_srv__a\"")),
        "{log:#?}"
    );
    assert!(
        log.iter()
            .any(|a| a.starts_with("Result { id: \"h0\"") && a.contains("is_error: false")),
        "{log:#?}"
    );
    // HTTP+SSE: the stream (exchange 0) names the endpoint; initialize is POSTed (exchange
    // 1) to it; its answer, the listing's and the call's come on the stream. (The log shows
    // URLs as MCP-15 redacts them, without the endpoint's query.)
    let sse = [1, 5, 0, 1, 9, 0, 1, 1, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0];
    let log = fuzzing::http_client_actions(&sse);
    assert!(
        log.iter()
            .any(|a| a.contains("url: \"https://fuzz.example/messages\"") && a.contains("Post")),
        "{log:#?}"
    );
}
