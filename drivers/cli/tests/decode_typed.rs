//! `musewire decode --summary --typed`: every logical frame is counted once and parsed once,
//! whether the parser thread or the framing thread parses it (the framing thread takes a batch
//! itself once the bytes waiting for the parser pass its bound), and a frame the typed model
//! refuses counts as an error (FRAME-10 reassembly, with the frames large enough to be
//! chunked).

use std::io::Write;
use std::process::{Command, Stdio};

fn musewire(args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_musewire"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("musewire runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("output");
    writer.join().expect("writer").expect("written");
    assert!(out.status.success(), "{:?}", out.status);
    out.stdout
}

/// A `message_update` whose text is `size` bytes of escaped content.
fn update(n: usize, size: usize) -> String {
    let text = "line \"quoted\"\tgr\u{f6}\u{df}e \u{1F600}\n".repeat(size / 30 + 1);
    serde_json::json!({
        "type": "message_update",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}],
                    "api": "a", "provider": "p", "model": "m", "stopReason": "stop",
                    "timestamp": n},
        "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "x"}
    })
    .to_string()
}

#[test]
fn frame_10_typed_summary_counts_every_frame_once_on_both_threads() {
    let mut logical = String::from(
        "{\"id\":\"n\",\"type\":\"response\",\"command\":\"negotiate_protocol\",\"success\":true,\"data\":{\"protocolVersion\":2}}\n",
    );
    let mut frames = 1;
    // Frames the typed model refuses, spread through the stream: each counts as an error,
    // and nothing else does, so a batch parsed twice or not at all shows.
    let refused = [
        "{\"type\":\"message_update\",\"message\":5}",
        "{\"type\":\"agent_end\",\"messages\":7}",
    ];
    let mut errors = 0;
    // About 20 MB: past the bytes that may wait for the parser thread, in small frames and in
    // chunked ones (over 1 MiB, so v2 splits them into rpc_chunk lines).
    for n in 0..200 {
        logical.push_str(&update(n, if n % 40 == 7 { 1_500_000 } else { 60_000 }));
        logical.push('\n');
        frames += 1;
        if n % 25 == 3 {
            logical.push_str(refused[n % 2]);
            logical.push('\n');
            frames += 1;
            errors += 1;
        }
    }
    let stream = musewire(&["encode", "--protocol", "2"], logical.as_bytes());
    assert!(
        stream.windows(11).any(|w| w == b"\"rpc_chunk\""),
        "the large frames are chunked"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&musewire(&["decode", "--summary", "--typed"], &stream))
            .expect("one JSON line");
    assert_eq!(summary["frames"], frames, "{summary}");
    assert_eq!(summary["errors"], errors, "{summary}");
    assert_eq!(summary["bytes"], stream.len(), "{summary}");
}
