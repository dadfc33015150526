//! `musewire blocks` end to end (BLOCK-01 … BLOCK-06).

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_musewire"))
        .arg("blocks")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("musewire runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const S3_ONCE: &str = "https://site.example/_next/image?url=https%3A%2F%2Fb.s3.amazonaws.com%2Fp.png%3FX-Amz-Signature%3DSECRETSIG&w=640";

fn result() -> String {
    format!(
        r#"{{"content":[
            {{"type":"text","text":"done"}},
            {{"type":"audio","data":"{}","mimeType":"audio/wav"}},
            {{"type":"resource_link","name":"report.csv","uri":"file:///tmp/report.csv","mimeType":"text/csv"}},
            {{"type":"resource_link","name":"photo","uri":"{S3_ONCE}"}},
            {{"type":"resource_link","name":"a\u2028b\ud800","uri":"https://www.youtube.com/watch?v=abc"}},
            {{"type":"video","uri":"https://v.example/x?sig=SECRETSIG"}}
        ],"isError":false}}"#,
        "QUJD".repeat(1024)
    )
}

#[test]
fn block_01_03_04_05_prints_the_stored_copy() {
    let (code, out, err) = run(&[], &result());
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "done\n\
         [Audio not shown: this host's tool results carry only text and images (audio/wav, ~3KB).]\n\
         [resource link \"report.csv\": file:///tmp/report.csv, text/csv; not fetched]\n\
         [resource link \"photo\"; not fetched: no server delivered it; its uri isn't shown, as it may carry a credential]\n\
         [resource link \"ab\u{FFFD}\": https://www.youtube.com/watch?v=abc; not fetched]\n\
         [Content not shown: this host can't display \"video\" content.]\n"
    );
    assert!(!out.contains("SECRETSIG"));
    assert!(!out.contains("QUJD"));
}

#[test]
fn block_06_json_prints_both_copies_and_the_classification() {
    let (code, out, err) = run(&["--json"], &result());
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("SECRETSIG"));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["isContent"], true);
    assert_eq!(v["isError"], false);
    let kinds: Vec<&str> = v["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "marker", "link", "stub", "link", "marker"]);
    assert_eq!(v["blocks"][3]["uri"]["withheld"], "credential");
    assert_eq!(v["blocks"][3]["unfetchable"]["reason"], "no_server");
    assert_eq!(v["copies"]["native"], false);
    assert_eq!(v["copies"]["live"][0]["type"], "text");
    assert_eq!(
        v["copies"]["live"][0]["text"].as_str().unwrap(),
        v["copies"]["stored"].as_str().unwrap()
    );
}

#[test]
fn block_03_a_server_link_on_its_origin_is_a_reference_stub() {
    let input = r#"{"content":[
        {"type":"resource_link","name":"r","uri":"https://mcp.example.com/r?X-Amz-Signature=SECRETSIG","mimeType":"text/plain","size":2048},
        {"type":"resource_link","name":"s","uri":"http://mcp.example.com/s"},
        {"type":"resource_link","name":"t","uri":"https://mcp.example.com/t"}
    ]}"#;
    let (code, out, _) = run(
        &[
            "--server",
            "files",
            "--server-url",
            "https://mcp.example.com/mcp",
        ],
        input,
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "[reference ref-1 \"r\": text/plain, ~2KB; fetch it with fetch_reference]\n\
         [resource link \"s\": http://mcp.example.com/s; not fetched]\n\
         [reference ref-2 \"t\"; fetch it with fetch_reference]\n"
    );
    let (_, out, _) = run(&["--server", "files"], input);
    assert!(out.contains("[resource link \"r\": text/plain; not fetched: its server \"files\" has no address to fetch from; its uri isn't shown, as it may carry a credential]"), "{out}");
    let (_, out, _) = run(&["--server", "gone", "--unknown-server"], input);
    assert!(
        out.contains("its server \"gone\" isn't one this host knows"),
        "{out}"
    );
}

#[test]
fn block_06_image_goes_native_until_links_and_markers_pass_the_cap() {
    let input = r#"{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},
        {"type":"audio","data":"AAAA","mimeType":"audio/wav"}]}"#;
    let (_, out, _) = run(&["--json"], input);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["copies"]["native"], true);
    assert_eq!(v["copies"]["live"][0]["type"], "image");
    assert_eq!(v["copies"]["live"][0]["mimeType"], "image/png");
    let (_, out, _) = run(&["--json", "--cap", "20"], input);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["copies"]["native"], false);
    assert_eq!(
        v["copies"]["live"][0]["text"],
        "[image: image/png, ~\n[Output cut at 20 characters.]"
    );
}

#[test]
fn block_02_module_data_is_json_unless_content() {
    let (_, out, _) = run(&[], r#"{"data":[{"type":"row","id":1}]}"#);
    assert_eq!(out, "[{\"type\":\"row\",\"id\":1}]\n");
    let (_, out, _) = run(
        &[],
        r#"{"data":[{"type":"row","id":1}],"dataIsContent":true}"#,
    );
    assert_eq!(
        out,
        "[Content not shown: this host can't display \"row\" content.]\n"
    );
}

#[test]
fn unreadable_input_fails_with_a_message() {
    let (code, out, err) = run(&[], "not json");
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("isn't JSON"), "{err}");
    let (code, _, err) = run(&[], "[1]");
    assert_eq!(code, 2);
    assert!(err.contains("\"content\""), "{err}");
}
