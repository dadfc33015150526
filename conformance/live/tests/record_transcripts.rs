//! Captures the committed live transcripts `conformance/transcripts/live-omp-*.jsonl`: real
//! omp sessions (the LLM played by the scripted model server) recorded by the blocking
//! driver's `spawn_recorded`, with the rules they cover written into the header. Ignored: run
//! `cargo test -p musewire-live --test record_transcripts -- --ignored` to capture them again
//! (ids, timestamps and paths change from one capture to the next). The replay test of
//! `musewire-conformance` checks them.

use musewire_live::support::typed_command;
use std::path::{Path, PathBuf};

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_live::model_server::ModelServer;
use musewire_live::peers;
use musewire_live::support::{text_result, Session};
use serde_json::{json, Value};

fn transcripts() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../transcripts")
}

/// Records one omp session at `path` (on the mio driver), then writes `rules` and
/// `description` into its header.
fn record(name: &str, rules: &[&str], description: &str, session: impl FnOnce(&Session)) {
    let server = ModelServer::start().unwrap();
    if !peers::installed_or_skip() {
        return;
    }
    let dir = peers::scratch(&format!("record-{name}"));
    let path = transcripts().join(format!("{name}.jsonl"));
    let agent = musewire_mio::AgentProcess::spawn_recorded(
        peers::omp(&dir, &server.base_url()),
        ClientConfig::default(),
        &path,
    )
    .expect("spawn omp");
    let s = Session {
        host: Box::new(agent),
    };
    s.until("ready", |e| matches!(e, ClientEvent::Ready { .. }));
    s.call(typed_command(
        json!({"type": "set_auto_compaction", "enabled": false}),
    ))
    .expect("set_auto_compaction");
    session(&s);
    s.shutdown();
    set_header(&path, rules, description);
}

fn set_header(path: &Path, rules: &[&str], description: &str) {
    let text = std::fs::read_to_string(path).expect("the recording");
    let (first, rest) = text.split_once('\n').expect("a header line");
    let mut header: Value = serde_json::from_str(first).expect("a JSON header");
    header["rules"] = json!(rules);
    header["description"] = json!(description);
    std::fs::write(path, format!("{header}\n{rest}")).expect("write the recording");
}

#[test]
#[ignore = "captures conformance/transcripts/live-omp-*.jsonl from the real agent"]
fn capture_live_omp_transcripts() {
    record(
        "live-omp-turn-with-thinking",
        &["FRAME-03", "FRAME-04", "CALL-01", "CALL-03", "CALL-09"],
        "omp 18.2.3 (bun), recorded live by musewire-mio: ready, v2 negotiation, one prompt turn streaming thinking then text deltas until the terminal agent_end, get_last_assistant_text, clean exit",
        |s| {
            s.prompt("[[think Weighing the options.]] Answer: 42");
            s.turn();
            s.call(typed_command(json!({"type": "get_last_assistant_text"})))
                .expect("get_last_assistant_text");
        },
    );
    record(
        "live-omp-host-tool-call",
        &["HOST-01", "HOST-02", "HOST-03", "CALL-03", "CALL-09"],
        "omp 18.2.3 (bun), recorded live by musewire-mio: set_host_tools, the model calls the host tool, the host streams an update and answers, a second result for the closed call is dropped, the model's next call sees the result",
        |s| {
            s.register_lookup();
            s.prompt(r#"[[tool lookup {"word":"musewire"}]]"#);
            let events = s.until("host tool call", |e| matches!(e, ClientEvent::HostToolCall { .. }));
            let Some(ClientEvent::HostToolCall(call)) = events.last() else {
                unreachable!()
            };
            let id = &call.id;
            assert!(s.host.host_tool_update(id, text_result("looking…")));
            assert!(s.host.host_tool_result(id, text_result("a protocol stack"), false));
            assert!(!s.host.host_tool_result(id, text_result("again"), false));
            s.turn();
        },
    );
    record(
        "live-omp-non-json-line",
        &["CALL-02", "CALL-06"],
        "omp 18.2.3 (bun), recorded live by musewire-mio: a line that is not JSON (raw_line) gets an id-less parse failure, unmatched with nothing pending; the next command still answers",
        |s| {
            assert!(s.host.send_raw_line(b"this is not JSON {"));
            s.until("the parse error", |e| matches!(e, ClientEvent::Unmatched { .. }));
            // Not get_state: its system prompt sits in an array, which the recorder writes in
            // full where bless abbreviates it.
            s.call(typed_command(json!({"type": "get_last_assistant_text"})))
                .expect("get_last_assistant_text");
        },
    );
}
