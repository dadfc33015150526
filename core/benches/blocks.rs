//! The credential check (BLOCK-04), in uris per second, over a mix of ordinary links and
//! credential-bearing ones; and a whole result shown (BLOCK-06).
//!
//! `cargo bench -p musewire-core --bench blocks -- --warm-up-time 1 --measurement-time 3`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use musewire_core::blocks::{show_tool_result, uri_may_carry_credential, RawToolResult, Source};
use serde_json::{json, Value};

const S3: &str = "https://bucket.s3.amazonaws.com/photo.png?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20260101T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=0123456789abcdef";

fn enc(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn uris() -> Vec<String> {
    vec![
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ".to_owned(),
        "https://docs.google.com/document/d/1abc/edit?usp=sharing".to_owned(),
        "https://docs.rs/url/latest/url/struct.Url.html#method.parse".to_owned(),
        "file:///home/user/project/report.csv".to_owned(),
        "https://app.example/login?next=/dashboard&lang=en".to_owned(),
        "https://www.google.com/url?q=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3Dabc&sa=D"
            .to_owned(),
        "https://github.com/o/r/blob/main/src/lib.rs".to_owned(),
        "https://example.com/".to_owned(),
        S3.to_owned(),
        format!(
            "https://site.example/_next/image?url={}&w=640&q=75",
            enc(S3)
        ),
        format!(
            "https://site.example/_next/image?url={}&w=640",
            enc(&enc(S3))
        ),
        "https://app.example/#/reset?token=abc".to_owned(),
    ]
}

fn bench(c: &mut Criterion) {
    let uris = uris();
    let mut group = c.benchmark_group("credential_check");
    group.throughput(Throughput::Elements(uris.len() as u64));
    group.bench_function("mixed_12_uris", |b| {
        b.iter(|| {
            for uri in &uris {
                black_box(uri_may_carry_credential(black_box(uri)));
            }
        })
    });
    group.finish();

    let content: Vec<Value> = uris
        .iter()
        .map(|uri| json!({"type":"resource_link","name":"f","uri":uri,"mimeType":"text/plain"}))
        .chain([
            json!({"type":"text","text":"x".repeat(2000)}),
            json!({"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}),
            json!({"type":"audio","data":"AAAA","mimeType":"audio/wav"}),
        ])
        .collect();
    let result = RawToolResult {
        content: Value::Array(content),
        is_error: false,
        data_is_content: true,
    };
    let source = Source::Server {
        id: "web",
        address: Some("https://site.example/mcp"),
    };
    let mut group = c.benchmark_group("show_tool_result");
    group.throughput(Throughput::Elements(1));
    group.bench_function("15_blocks", |b| {
        b.iter(|| black_box(show_tool_result(black_box(&result), &source, 50_000)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
