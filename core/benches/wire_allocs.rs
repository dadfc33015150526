//! Allocations and time per typed frame on the host's hot path, counted by a counting
//! global allocator: a `get_state` answer (the bundled agent's, and one with oh-my-pi-like
//! tool schemas), and streamed turns of `message_update`s that each repeat the message so
//! far (`message` and the event's `partial`), as oh-my-pi and pi 0.73 send them.
//!
//!   cargo bench -p musewire-core --bench wire_allocs
//!
//! Prints one line per case: allocations and bytes allocated per frame (or per turn), and
//! the best time of a few rounds. Nothing is asserted: the figures are read, and compared
//! before and after a change.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use musewire_wire::{AgentFrame, AssistantMessageEvent, ResponseData, SessionEvent};
use serde_json::{json, Value};

/// The system allocator, counting each allocation and its bytes.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The bundled agent's `get_state` answer (`musewire agent --mode rpc`).
const BUNDLED_STATE: &str = r#"{"id":"1","type":"response","command":"get_state","success":true,"data":{"model":{"id":"scripted","name":"musewire scripted model","api":"musewire-script","provider":"musewire","reasoning":true,"contextWindow":1000000,"maxTokens":64000},"thinkingLevel":"off","isStreaming":false,"isCompacting":false,"steeringMode":"one-at-a-time","followUpMode":"one-at-a-time","interruptMode":"immediate","sessionId":"session-1","autoCompactionEnabled":false,"queuedMessageCount":0,"todoPhases":[],"fastModeEnabled":false,"fastModeActive":false,"tokensPerSecond":null,"messageCount":0,"dumpTools":[{"name":"bash","description":"Run a shell command with sh -c; the first 2 MiB of its output are kept","parameters":{"type":"object"}},{"name":"read","description":"Read a file (offset: the first line, 1-based; limit: how many lines), or a URI of a scheme the host serves","parameters":{"type":"object"}},{"name":"todo","description":"Set the todo list (op \"init\")","parameters":{"type":"object"}}]}}"#;

/// A `get_state` answer with a system prompt and twelve tools with JSON Schemas, as a
/// session dump of oh-my-pi carries them.
fn schema_state() -> String {
    let tools: Vec<Value> = (0..12)
        .map(|i| {
            json!({"name": format!("tool{i}"), "description": "Does one thing well.\nSee the docs.",
                   "parameters": {"type": "object", "properties": {
                       "path": {"type": "string", "description": "The file to work on"},
                       "offset": {"type": "number", "description": "First line, 1-based"},
                       "limit": {"type": "number"},
                       "mode": {"type": "string", "enum": ["a", "b", "c"]}},
                     "required": ["path"], "additionalProperties": false},
                   "examples": [{"path": "src/lib.rs"}]})
        })
        .collect();
    let mut state: Value = serde_json::from_str(BUNDLED_STATE).unwrap();
    state["data"]["dumpTools"] = Value::Array(tools);
    state["data"]["systemPrompt"] = json!(["You are a coding agent.\n".repeat(200)]);
    state.to_string()
}

/// A streamed turn of `words` words: one `message_update` a word, each with the message so
/// far (oh-my-pi's shape).
fn turn(words: usize) -> Vec<String> {
    let mut text = String::new();
    (0..words)
        .map(|i| {
            let delta = format!("word{i} ");
            text.push_str(&delta);
            let message = json!({"role": "assistant", "content": [{"type": "text", "text": text}],
                                 "api": "anthropic-messages", "provider": "anthropic", "model": "m",
                                 "usage": {"input": 10, "output": i, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 10 + i},
                                 "stopReason": "stop", "timestamp": 1_764_400_000_000u64});
            json!({"type": "message_update", "message": message,
                   "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": delta, "partial": message}})
            .to_string()
        })
        .collect()
}

/// A `get_messages` answer of `count` tool results shaped as the decode benchmark's
/// (`conformance/reference/gen-stream.ts`): multi-line text full of escapes (`\n`, `\t`,
/// `\"`, `\\`, `\u001b`) and non-ASCII words, a `details` object on some.
fn messages_answer(count: usize) -> String {
    const WORDS: [&str; 14] = [
        "const",
        "return",
        "frame",
        "decoder",
        "buffer",
        "résumé",
        "Größe",
        "東京",
        "данные",
        "λ",
        "→",
        "✓",
        "😀",
        "—",
    ];
    let mut seed = 0x6d75_7365_u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let messages: Vec<Value> = (0..count)
        .map(|i| {
            let lines: Vec<String> = (0..2 + next(30))
                .map(|_| match next(5) {
                    0 => format!("{}\t{} {};", next(2000), WORDS[next(14)], WORDS[next(14)]),
                    1 => format!("    at {} (C:\\Users\\dev\\{}.js:{}:3)", WORDS[next(14)], WORDS[next(14)], next(99)),
                    2 => format!("{{\"key\": \"{}\", \"n\": {}, \"ok\": true}}", WORDS[next(14)], next(1_000_000)),
                    3 => format!("\x1b[32m✓\x1b[0m {} ({}ms)", WORDS[next(14)], next(999)),
                    _ => format!("-rw-r--r--  1 dev dev {} Nov 27 12:13 {}.rs", next(99999), WORDS[next(14)]),
                })
                .collect();
            let mut message = json!({"role": "toolResult", "toolCallId": format!("toolu_{i:012}"),
                                     "toolName": "read", "content": [{"type": "text", "text": lines.join("\n")}],
                                     "isError": false, "timestamp": 1_764_400_000_000u64 + i as u64});
            if next(5) == 0 {
                message["details"] = json!({"exitCode": 1, "truncated": false, "path": "/work/東京"});
            }
            message
        })
        .collect();
    json!({"id": "req-1", "type": "response", "command": "get_messages", "success": true,
           "data": {"messages": messages}})
    .to_string()
}

/// The decode benchmark's small frames: a `message_update` with the message so far and a
/// `text_delta` (no `partial`).
fn bench_updates(count: usize) -> Vec<String> {
    (0..count)
        .map(|i| {
            let delta = ["The ", "\"quoted\"", "é", "😀", "\\", "\n"][i % 6];
            json!({"type": "message_update",
                   "message": {"role": "assistant", "content": [{"type": "text", "text": format!("Step {i}: {delta}")}],
                               "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                               "stopReason": "stop", "timestamp": 1_764_400_000_000u64 + i as u64},
                   "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": delta}})
            .to_string()
        })
        .collect()
}

/// Parses every frame of `frames` `rounds` times; prints allocations and bytes per pass, and
/// the best time of a pass.
fn case(name: &str, frames: &[String], rounds: u32) {
    case_with(name, frames, rounds, |_| {});
}

/// Types what a `message_update` keeps as text (its `message` and the event's `partial`):
/// what every update cost when the model typed them on arrival.
fn type_snapshots(frame: &AgentFrame) {
    if let AgentFrame::Event(SessionEvent::MessageUpdate(update)) = frame {
        std::hint::black_box(update.message.as_ref().map(|m| m.get().expect("a message")));
        if let AssistantMessageEvent::TextDelta(delta) = &update.assistant_message_event {
            std::hint::black_box(delta.partial.as_ref().map(|m| m.get().expect("a partial")));
        }
    }
}

/// Types what a `get_state` answer keeps as text (the system prompt, each tool's schema and
/// examples): what the answer cost when the model typed them on arrival (less the one
/// allocation of each member's text).
fn type_state(frame: &AgentFrame) {
    let AgentFrame::Response(response) = frame else {
        return;
    };
    let Some(ResponseData::State(state)) = &response.data else {
        return;
    };
    if let Some(prompt) = &state.system_prompt {
        std::hint::black_box(prompt.get().expect("a system prompt"));
    }
    let tools = state
        .dump_tools
        .as_ref()
        .map(|t| t.get().expect("the tools"));
    for tool in tools.iter().flatten() {
        std::hint::black_box(tool.parameters.as_ref().map(|p| p.get().expect("a schema")));
        std::hint::black_box(tool.examples.as_ref().map(|e| e.get().expect("examples")));
    }
}

/// [`case`], calling `then` on each parsed frame.
fn case_with(name: &str, frames: &[String], rounds: u32, then: fn(&AgentFrame)) {
    let mut best = f64::MAX;
    let mut allocs = 0;
    let mut bytes = 0;
    for _ in 0..rounds {
        let (a0, b0) = (
            ALLOCS.load(Ordering::Relaxed),
            BYTES.load(Ordering::Relaxed),
        );
        let start = Instant::now();
        for frame in frames {
            let parsed = AgentFrame::from_slice(frame.as_bytes()).expect("a frame");
            assert!(!matches!(parsed, AgentFrame::Unknown(_)));
            then(&parsed);
            std::hint::black_box(parsed);
        }
        best = best.min(start.elapsed().as_secs_f64());
        allocs = ALLOCS.load(Ordering::Relaxed) - a0;
        bytes = BYTES.load(Ordering::Relaxed) - b0;
    }
    let size: usize = frames.iter().map(String::len).sum();
    println!(
        "{name:<44} {:>9} bytes {allocs:>8} allocs {bytes:>11} bytes allocated {:>10.1} us",
        size,
        best * 1e6
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("per pass (a frame, or a whole turn), best of the rounds:");
    case(
        "get_state, bundled agent",
        &[BUNDLED_STATE.to_owned()],
        2000,
    );
    case(
        "get_state, 12 tool schemas + system prompt",
        &[schema_state()],
        500,
    );
    case_with(
        "  bundled, members typed on arrival",
        &[BUNDLED_STATE.to_owned()],
        2000,
        type_state,
    );
    case_with(
        "  12 schemas, members typed on arrival",
        &[schema_state()],
        500,
        type_state,
    );
    case(
        "get_messages, 2500 tool results",
        &[messages_answer(2500)],
        20,
    );
    case(
        "decode bench message_update x 1000",
        &bench_updates(1000),
        20,
    );
    case("streamed turn, 64 words", &turn(64), 50);
    case("streamed turn, 1000 words", &turn(1000), 3);
    // What the same turns cost when every update's message so far is typed.
    case_with(
        "  64 words, snapshots typed on arrival",
        &turn(64),
        50,
        type_snapshots,
    );
    case_with(
        "  1000 words, snapshots typed on arrival",
        &turn(1000),
        3,
        type_snapshots,
    );
}
