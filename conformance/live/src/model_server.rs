//! A scripted model server: the OpenAI chat-completions streaming API on 127.0.0.1 at a free
//! port, playing a script chosen by a marker in the latest user message.
//!
//! Markers (anywhere in the latest user message):
//! - `[[text WORDS…]]`: streams WORDS as `delta.content`, a word at a time.
//! - `[[think THOUGHT…]]`: streams THOUGHT as `delta.reasoning_content`, then the text after
//!   the marker.
//! - `[[tool NAME JSON]]`: the first call streams a tool call to NAME with the JSON arguments
//!   (in pieces, `finish_reason: "tool_calls"`); once the tool's result is in the
//!   conversation, the next call answers `NAME returned: <result text>`.
//! - `[[slow MS]]`: waits MS milliseconds before each chunk (for aborts mid-turn).
//! - `[[status CODE MESSAGE…]]`: fails the call with HTTP CODE and an OpenAI-style error body
//!   carrying MESSAGE (a provider error: 401 for a bad key).
//!
//! Without a marker the user's text is echoed as `You said: …`. Every stream ends with a
//! usage chunk and `data: [DONE]`. Request bodies are kept for tests to inspect.
//!
//! Opt-in send log (for benches, `conformance/bench/acp.sh`): with [`SEND_LOG_ENV`] naming a
//! file when the server starts, every streamed chunk appends one line to it once written to
//! the socket: `MONO_NS\tWALL_NS\tREQUEST\tCHUNK\tCONTENT`, the `CLOCK_MONOTONIC` and
//! `CLOCK_REALTIME` times in nanoseconds, the request's serial number and the chunk's index
//! in it (from 0), and the chunk's `delta.content` as a JSON string (`""` when it has none).
//! A stream's lines are written together when it ends.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

/// Ports the reference agent probes at start (Ollama, llama.cpp, LM Studio): never ours.
const PROBED_PORTS: [u16; 3] = [11434, 8080, 1234];

/// The environment variable naming the send log's file (see the module docs); unset, nothing
/// is logged.
pub const SEND_LOG_ENV: &str = "MUSEWIRE_MODEL_SERVER_LOG";

/// Where the streamed chunks' send times go, when asked for.
struct SendLog {
    file: Mutex<File>,
    requests: AtomicU64,
}

/// `clock`'s time in nanoseconds.
fn clock_ns(clock: libc::clockid_t) -> u128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clocks asked for exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

/// A running model server; stops when dropped.
pub struct ModelServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<Value>>>,
    thread: Option<JoinHandle<()>>,
}

impl ModelServer {
    /// Starts a server on 127.0.0.1 at a free port.
    pub fn start() -> io::Result<ModelServer> {
        let listener = loop {
            let listener = TcpListener::bind("127.0.0.1:0")?;
            if !PROBED_PORTS.contains(&listener.local_addr()?.port()) {
                break listener;
            }
        };
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = match std::env::var_os(SEND_LOG_ENV) {
            Some(path) => Some(Arc::new(SendLog {
                file: Mutex::new(
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)?,
                ),
                requests: AtomicU64::new(0),
            })),
            None => None,
        };
        let (stop2, requests2) = (stop.clone(), requests.clone());
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let requests = requests2.clone();
                let log = log.clone();
                std::thread::spawn(move || {
                    let _ = serve(stream, &requests, log.as_deref());
                });
            }
        });
        Ok(ModelServer {
            addr,
            stop,
            requests,
            thread: Some(thread),
        })
    }

    /// The base URL for a provider config: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The chat-completions request bodies received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(stream: TcpStream, requests: &Mutex<Vec<Value>>, log: Option<&SendLog>) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" || header == "\n" {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    let mut out = stream;
    let path = request_line.split_whitespace().nth(1).unwrap_or("/");
    if path.ends_with("/models") {
        let list = json!({"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "musewire"}]});
        return respond(
            &mut out,
            "200 OK",
            "application/json",
            list.to_string().as_bytes(),
        );
    }
    if !path.contains("/chat/completions") {
        return respond(&mut out, "404 Not Found", "text/plain", b"not found");
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if let Ok(mut r) = requests.lock() {
        r.push(request.clone());
    }
    let script = Script::for_request(&request);
    if let Some((code, message)) = &script.failure {
        let body = json!({"error": {"message": message, "type": "invalid_request_error", "code": code.to_string()}});
        let status = match code {
            401 => "401 Unauthorized".to_owned(),
            code => format!("{code} Error"),
        };
        return respond(
            &mut out,
            &status,
            "application/json",
            body.to_string().as_bytes(),
        );
    }
    out.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n")?;
    let serial = log.map(|log| log.requests.fetch_add(1, Ordering::SeqCst));
    let mut sent = Vec::new();
    for (index, chunk) in script.chunks().iter().enumerate() {
        if let Some(delay) = script.delay {
            std::thread::sleep(delay);
        }
        out.write_all(format!("data: {chunk}\n\n").as_bytes())?;
        out.flush()?;
        if let Some(serial) = serial {
            let (mono, wall) = (
                clock_ns(libc::CLOCK_MONOTONIC),
                clock_ns(libc::CLOCK_REALTIME),
            );
            let content = serde_json::from_str::<Value>(chunk)
                .ok()
                .and_then(|c| {
                    c["choices"][0]["delta"]["content"]
                        .as_str()
                        .map(str::to_owned)
                })
                .unwrap_or_default();
            sent.push(format!(
                "{mono}\t{wall}\t{serial}\t{index}\t{}\n",
                Value::String(content)
            ));
        }
    }
    out.write_all(b"data: [DONE]\n\n")?;
    out.flush()?;
    if let Some(log) = log {
        if let Ok(mut file) = log.file.lock() {
            file.write_all(sent.concat().as_bytes())?;
        }
    }
    Ok(())
}

fn respond(out: &mut TcpStream, status: &str, content_type: &str, body: &[u8]) -> io::Result<()> {
    write!(out, "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len())?;
    out.write_all(body)
}

/// What one model call plays.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// Reasoning text, streamed first.
    pub thinking: Option<String>,
    /// Answer text.
    pub text: String,
    /// A tool call instead of text: name and JSON arguments.
    pub tool_call: Option<(String, String)>,
    /// Delay before each chunk.
    pub delay: Option<Duration>,
    /// An HTTP failure instead of a stream (`[[status CODE message]]`): the status code and
    /// the error's message, as an OpenAI-style `{"error": {...}}` body.
    pub failure: Option<(u16, String)>,
}

/// The text of a message's `content` (a string, or the text parts of an array).
fn content_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// The marker `[[NAME rest]]` in `text`: its rest, and the text around it.
fn marker<'a>(text: &'a str, name: &str) -> Option<(&'a str, String)> {
    let open = format!("[[{name}");
    let start = text.find(&open)?;
    let end = start + text[start..].find("]]")?;
    let rest = text[start + open.len()..end].trim();
    let around = format!("{}{}", &text[..start], &text[end + 2..])
        .trim()
        .to_owned();
    Some((rest, around))
}

impl Script {
    /// The script for a chat-completions request.
    pub fn for_request(request: &Value) -> Script {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let last_user = messages.iter().rposition(|m| m["role"] == "user");
        let user = last_user
            .map(|i| content_text(&messages[i]))
            .unwrap_or_default();
        let after: &[Value] = last_user.map_or(&[], |i| &messages[i + 1..]);
        let delay = marker(&user, "slow")
            .and_then(|(ms, _)| ms.parse::<u64>().ok())
            .map(Duration::from_millis);
        let mut script = Script {
            thinking: None,
            text: String::new(),
            tool_call: None,
            delay,
            failure: None,
        };
        if let Some((rest, _)) = marker(&user, "status") {
            let (code, message) = rest.split_once(' ').unwrap_or((rest, "failed"));
            script.failure = Some((code.parse().unwrap_or(500), message.trim().to_owned()));
            return script;
        }
        if let Some((rest, _)) = marker(&user, "tool") {
            let (name, args) = rest.split_once(' ').unwrap_or((rest, "{}"));
            match after.iter().rev().find(|m| m["role"] == "tool") {
                Some(result) => script.text = format!("{name} returned: {}", content_text(result)),
                None => script.tool_call = Some((name.to_owned(), args.trim().to_owned())),
            }
        } else if let Some((thought, around)) = marker(&user, "think") {
            script.thinking = Some(thought.to_owned());
            script.text = around;
        } else if let Some((words, _)) = marker(&user, "text") {
            script.text = words.to_owned();
        } else {
            let plain = marker(&user, "slow").map_or(user.clone(), |(_, around)| around);
            script.text = format!("You said: {plain}");
        }
        script
    }

    /// The SSE `data:` payloads, in order.
    pub fn chunks(&self) -> Vec<String> {
        let chunk = |delta: Value, finish: Option<&str>| {
            json!({"id": "chatcmpl-musewire", "object": "chat.completion.chunk", "created": 0, "model": "fake-model",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            .to_string()
        };
        let mut out = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
        if let Some(thinking) = &self.thinking {
            for piece in words(thinking) {
                out.push(chunk(json!({"reasoning_content": piece}), None));
            }
        }
        let finish = if let Some((name, args)) = &self.tool_call {
            out.push(chunk(json!({"tool_calls": [{"index": 0, "id": "call_musewire_1", "type": "function", "function": {"name": name, "arguments": ""}}]}), None));
            let mid = args.len() / 2;
            let mid = (0..=mid)
                .rev()
                .find(|i| args.is_char_boundary(*i))
                .unwrap_or(0);
            for piece in [&args[..mid], &args[mid..]] {
                out.push(chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                    None,
                ));
            }
            "tool_calls"
        } else {
            for piece in words(&self.text) {
                out.push(chunk(json!({"content": piece}), None));
            }
            "stop"
        };
        out.push(chunk(json!({}), Some(finish)));
        out.push(json!({"id": "chatcmpl-musewire", "object": "chat.completion.chunk", "created": 0, "model": "fake-model", "choices": [],
                        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}}).to_string());
        out
    }
}

/// `text` in pieces of one word and the space after it.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if c == ' ' {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}
