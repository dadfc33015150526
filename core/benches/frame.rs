//! Criterion benches of the framing layer: decoding a v2 stream (chunked responses among
//! small events) in 64 KiB reads, and encoding it. The whole-pipeline comparison with the
//! reference agent is `conformance/bench/run.sh`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use musewire_core::frame::{
    DecodeEvent, DecoderConfig, FrameEncoder, ProtocolVersion, StreamDecoder,
};
use serde_json::{json, Value};

/// Logical frames like a session's: a few large `get_messages` responses, many small updates.
fn frames() -> Vec<Value> {
    let mut frames = Vec::new();
    for r in 0..4 {
        let messages: Vec<Value> = (0..2500)
            .map(|i| {
                json!({"role": "toolResult", "toolCallId": format!("call_{r}_{i}"), "toolName": "bash",
                       "content": [{"type": "text", "text": format!("line {i}: résultat \"ok\"\n").repeat(1 + i % 40)}],
                       "isError": false, "timestamp": 1_700_000_000_000u64 + i as u64})
            })
            .collect();
        frames.push(json!({"id": format!("req-{r}"), "type": "response", "command": "get_messages", "success": true, "data": {"messages": messages}}));
        for i in 0..2000 {
            frames.push(json!({"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": format!("tok{i} ")}}));
        }
    }
    frames
}

fn bench(c: &mut Criterion) {
    let frames = frames();
    let mut encoder = FrameEncoder::new();
    encoder.set_protocol(ProtocolVersion::V2);
    let stream: Vec<u8> = frames
        .iter()
        .flat_map(|f| encoder.encode_to_vec(f))
        .collect();

    let mut group = c.benchmark_group("frame");
    group.throughput(Throughput::Bytes(stream.len() as u64));
    group.sample_size(10);
    group.bench_function("decode_v2_stream", |b| {
        b.iter(|| {
            let mut decoder = StreamDecoder::with_config(DecoderConfig {
                protocol: ProtocolVersion::V2,
                ..DecoderConfig::default()
            });
            let mut n = 0usize;
            for read in stream.chunks(64 * 1024) {
                decoder.handle_bytes(read);
                while let Some(event) = decoder.poll_event() {
                    n += usize::from(matches!(event, DecodeEvent::Frame(_)));
                }
            }
            decoder.handle_eof();
            assert_eq!(n, frames.len());
        })
    });
    group.bench_function("encode_v2_stream", |b| {
        b.iter_batched(
            || {
                let mut e = FrameEncoder::new();
                e.set_protocol(ProtocolVersion::V2);
                e
            },
            |mut e| {
                let mut out = Vec::with_capacity(64 * 1024);
                let mut total = 0usize;
                for f in &frames {
                    let mut lines = e.encode(f);
                    while lines.write_next(&mut out) {
                        total += out.len();
                        out.clear();
                    }
                }
                total
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
