//! The bridge's fuzz body (feature `fuzzing`) on fixed seeds and on every ACP transcript, so
//! `cargo test` keeps it compiling and passing between fuzz runs: ACP-07 (every editor line
//! out is complete JSON-RPC, nothing panics on any input), ACP-12 (no spawn once ending, each
//! stdin closed and each group killed once, the bridge finished at the end), determinism and
//! bounded output, under arbitrary interleavings of the editor, the agents, exits and time.
//!
//! The fuzz target's seed corpus is `fuzz/seeds/bridge_session/`, one file per ACP transcript
//! in the body's input format; this test checks those files are what the transcripts give
//! (`MUSEWIRE_BLESS_SEEDS=1` rewrites them).
#![cfg(feature = "fuzzing")]

use std::path::{Path, PathBuf};

use musewire_core::acp::fuzzing::{self, Op};

use crate::seeds;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The ACP transcripts: name and seed bytes.
fn transcript_seeds() -> Vec<(String, Vec<u8>)> {
    let dir = repo().join("conformance/transcripts");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("acp-") && name.ends_with(".jsonl")) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let (config, ops) = fuzzing::ops_from_transcript(&text)
            .unwrap_or_else(|| panic!("{name} reads as a bridge transcript"));
        assert!(!ops.is_empty(), "{name} has steps");
        let bytes = fuzzing::encode(config, &ops);
        assert_eq!(
            fuzzing::decode(&bytes),
            (config, ops),
            "{name}: encode and decode agree"
        );
        found.push((name.trim_end_matches(".jsonl").to_owned(), bytes));
    }
    found.sort();
    found
}

#[test]
fn acp_07_08_bridge_fuzz_body_on_random_seeds() {
    for input in seeds::seeds(0x5851_f42d_4c95_7f2d, 400, 700) {
        fuzzing::bridge_session(&input);
    }
}

#[test]
fn acp_07_08_bridge_fuzz_body_on_every_acp_transcript() {
    let seeds = transcript_seeds();
    assert!(seeds.len() >= 10, "the ACP transcripts are found");
    for (name, bytes) in &seeds {
        eprintln!("{name}");
        fuzzing::bridge_session(bytes);
    }
}

#[test]
fn acp_07_08_the_seed_corpus_is_the_transcripts() {
    let dir = repo().join("fuzz/seeds/bridge_session");
    let seeds = transcript_seeds();
    if std::env::var_os("MUSEWIRE_BLESS_SEEDS").is_some() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in &seeds {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }
    for (name, bytes) in &seeds {
        let stored = std::fs::read(dir.join(name)).unwrap_or_default();
        assert!(
            stored == *bytes,
            "fuzz/seeds/bridge_session/{name} is stale: run with MUSEWIRE_BLESS_SEEDS=1"
        );
    }
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(files, seeds.len(), "one seed per ACP transcript");
}

/// Scripted sessions through the harness: two sessions opened, a turn with tool output and a
/// todo plan, a load with pages, a read, cancels, bad bytes from both sides, an exit mid-turn,
/// a signal, time past every budget.
#[test]
fn acp_12_bridge_fuzz_body_on_scripted_sessions() {
    let init = Op::EditorMessage(0, 3, 0);
    let new = Op::EditorMessage(1, 0, 0);
    let ready = |s| Op::AgentFrame(s, 0, 0, 0);
    let answer = |s, which| Op::AgentFrame(s, 1, which, 0);
    for config in 0..4 {
        fuzzing::run(
            config,
            [
                init.clone(),
                new.clone(),
                ready(0),
                answer(0, 0),
                new.clone(),
                ready(1),
                answer(1, 0),
                Op::EditorMessage(5, 0, 0),
                answer(0, 1),
                Op::AgentFrame(0, 5, 0, 0),
                Op::AgentFrame(0, 9, 0, 1),
                Op::AgentFrame(0, 10, 200, 1),
                Op::AgentFrame(0, 11, 0, 1),
                Op::AgentFrame(0, 12, 40, 0),
                Op::Agent(1, b"{\"type\":\n\xff\xfe\n".to_vec()),
                Op::EditorMessage(8, 0, 0),
                Op::EditorMessage(9, 1, 0),
                Op::AgentFrame(1, 1, 2, 8),
                Op::AgentFrame(0, 6, 0, 2),
                answer(0, 3),
                Op::EditorMessage(3, 1, 0),
                answer(2, 0),
                answer(2, 1),
                Op::AgentFrame(2, 2, 2, 9),
                Op::Editor(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}\n[1,2]\n\xff\n".to_vec()),
                Op::Advance(6000),
                Op::Advance(21000),
                Op::AgentExit(1, 1),
                Op::EditorMessage(13, 200, 0),
                Op::Shutdown,
                Op::Advance(999),
                Op::Advance(1),
                Op::EditorMessage(1, 0, 0),
            ],
        );
    }
}

/// MCP-18 through the harness: a session with a streamable-HTTP server and one with an
/// HTTP+SSE server, their exchanges answered (heads, bodies, ends, failures) and the ops
/// round-tripping through the input format.
#[test]
fn mcp_18_bridge_fuzz_body_on_http_mcp_servers() {
    let init = Op::EditorMessage(0, 3, 0);
    let ready = |s| Op::AgentFrame(s, 0, 0, 0);
    let answer = |s, which| Op::AgentFrame(s, 1, which, 0);
    let initialize = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}}"#;
    let tools = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#;
    let events = b"event: endpoint\ndata: /messages\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n\n";
    let ops = vec![
        init,
        // session/new with an http server (a % 4 == 1), then one with an sse server.
        Op::EditorMessage(1, 1, 0),
        ready(0),
        answer(0, 0),
        Op::McpHttp(0, 0, Vec::new()),
        Op::McpHttp(0, 1, initialize.to_vec()),
        Op::McpHttp(0, 2, Vec::new()),
        Op::McpHttp(0, 0, Vec::new()),
        Op::McpHttp(0, 1, tools.to_vec()),
        Op::McpHttp(0, 2, Vec::new()),
        Op::EditorMessage(1, 2, 0),
        ready(1),
        answer(1, 0),
        Op::McpHttp(1, 24, Vec::new()),
        Op::McpHttp(1, 1, events.to_vec()),
        Op::McpHttp(1, 3, Vec::new()),
        // A 404 on a session, a failure, time past the budgets.
        Op::McpHttp(0, 12, Vec::new()),
        Op::McpHttp(0, 3, Vec::new()),
        Op::Advance(20_000),
        Op::McpHttp(0, 1, b"\xff garbage".to_vec()),
    ];
    let bytes = fuzzing::encode(1, &ops);
    assert_eq!(fuzzing::decode(&bytes), (1, ops.clone()));
    for config in 0..2 {
        fuzzing::run(config, ops.clone());
    }
}

/// ACP-36, ACP-37, ACP-31, ACP-32, ACP-26 through the harness: an editor with and without
/// form elicitation answering the agent's dialogs every way (permission options, a cancelled
/// outcome, a form's accept, decline, cancel, an error), omp's subagent frames, a fork, a
/// delete and a list answered by the driver (done and failed), over omp and another agent,
/// with and without a session folder; the ops round-trip through the input format.
#[test]
fn acp_36_37_bridge_fuzz_body_on_dialogs_subagents_forks_and_deletes() {
    let ready = |s| Op::AgentFrame(s, 0, 0, 0);
    let answer = |s, which| Op::AgentFrame(s, 1, which, 0);
    let mut ops = vec![
        Op::EditorMessage(0, 4, 0),
        Op::EditorMessage(1, 0, 0),
        ready(0),
    ];
    for which in 0..4 {
        ops.push(answer(0, which));
    }
    ops.push(Op::EditorMessage(5, 0, 0));
    for which in 0..6 {
        ops.push(answer(0, which));
    }
    ops.push(Op::AgentFrame(0, 5, 0, 0));
    for b in 0..6u8 {
        ops.push(Op::AgentFrame(0, 16, b, b));
        ops.push(Op::EditorMessage(16, b, b));
        ops.push(Op::EditorMessage(16, b + 1, b + 2));
    }
    for (a, b) in [(0, 0), (1, 4), (0, 9), (0, 1), (2, 3), (1, 2), (3, 0)] {
        ops.push(Op::AgentFrame(0, 17, a, b));
        ops.push(Op::AgentFrame(0, 18, a * 40, b));
    }
    ops.extend([
        Op::EditorMessage(8, 0, 0),
        Op::EditorMessage(16, 3, 6),
        Op::EditorMessage(14, 0, 0),
        Op::Driver(0, 1),
        Op::EditorMessage(14, 0, 0),
        Op::Driver(3, 2),
        Op::EditorMessage(18, 0, 0),
        Op::Driver(5, 3),
        Op::EditorMessage(18, 0, 0),
        Op::Driver(3, 0),
        Op::EditorMessage(15, 0, 0),
        Op::Driver(1, 0),
        Op::EditorMessage(15, 1, 0),
        Op::Driver(7, 1),
        Op::AgentFrame(0, 17, 3, 0),
        Op::AgentExit(0, 1),
        Op::EditorMessage(17, 0, 0),
        Op::Advance(6000),
    ]);
    let bytes = fuzzing::encode(5, &ops);
    assert_eq!(fuzzing::decode(&bytes), (5, ops.clone()));
    for config in [0, 1, 4, 5] {
        fuzzing::run(config, ops.clone());
    }
}
