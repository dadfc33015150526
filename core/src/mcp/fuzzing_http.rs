//! The fuzz body of [`crate::mcp::http::McpHttpServer`] (MCP-10..16): the input is the
//! server's side of HTTP exchanges, interleaved with the agent's calls. Each op is a tag byte
//! and its operands: a well-formed answer to one of the requests sent (JSON, or an event
//! stream split at the fuzzer's points, with ids), raw body bytes, a response head of a
//! chosen status and type, an end or a failure of an exchange, an oversized body or event,
//! the endpoint or a `list_changed` on the event stream, a call, a cancel, time passing.
//! The transport (streamable HTTP or HTTP+SSE) is the first byte's low bit. Checked after
//! every op:
//! - nothing panics; at most [`MAX_EXCHANGES`] exchanges are open;
//! - every POST body is one JSON-RPC 2.0 message; nothing is sent after the stop but the
//!   session's DELETE, right before it;
//! - every call is answered at most once, a cancelled one never; at the stop every call
//!   given and not cancelled has been answered; the stop comes once;
//! - after a timer input the next timeout is in the future;
//! - determinism: a second client fed the same inputs gives the same actions.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::super::http::{
    ExchangeId, HttpAction, HttpConfig, HttpInput, HttpTransport, McpHttpServer, Method,
    ResponseHead, MAX_EXCHANGES,
};
use super::Bytes;

/// The most ops read from one input.
const MAX_OPS: usize = 256;

/// The bound on a body or an event, small so that oversized ones are reached.
const MAX_MESSAGE: usize = 2048;

/// Runs one fuzz input through the HTTP client, panicking on a broken invariant, and gives the
/// actions (their `Debug` text), for tests of scripted seeds.
pub fn http_client_actions(data: &[u8]) -> Vec<String> {
    let start = Instant::now();
    let first = run(data, start);
    let second = run(data, start);
    assert_eq!(first, second, "the same inputs gave different actions");
    first
}

#[derive(Default)]
struct Seen {
    /// Open exchanges: the request's method and JSON-RPC id and method when it had one.
    open: BTreeMap<ExchangeId, (Method, Option<(u64, String)>)>,
    calls: BTreeSet<String>,
    cancelled: BTreeSet<String>,
    answered: BTreeSet<String>,
    tools: Vec<String>,
    stops: usize,
}

fn run(data: &[u8], start: Instant) -> Vec<String> {
    let mut input = Bytes(data);
    let transport = match input.byte().unwrap_or(0) & 1 {
        0 => HttpTransport::Streamable,
        _ => HttpTransport::Sse,
    };
    let config = HttpConfig {
        transport,
        max_message_bytes: MAX_MESSAGE,
        ..HttpConfig::default()
    };
    let url = "https://fuzz.example/mcp".parse().expect("a URL");
    let mut now = start;
    let mut server = McpHttpServer::new("fuzz srv", url, now, config);
    let mut seen = Seen::default();
    let mut log = Vec::new();
    check(&mut server, &mut seen, &mut log);
    let mut ops = 0;
    while let Some(tag) = input.byte() {
        ops += 1;
        if ops > MAX_OPS || seen.stops > 0 {
            break;
        }
        let pick = usize::from(input.byte().unwrap_or(0));
        let exchange = seen
            .open
            .iter()
            .nth(pick % seen.open.len().max(1))
            .map(|(id, request)| (*id, request.clone()));
        match tag % 11 {
            0 => {
                if let Some((id, _)) = exchange {
                    let n = usize::from(input.byte().unwrap_or(0)) * 4;
                    let bytes = input.take(n).to_vec();
                    server.handle(
                        now,
                        HttpInput::Body {
                            exchange: id,
                            bytes: &bytes,
                        },
                    );
                }
            }
            1 => {
                if let Some((id, (_, request))) = exchange {
                    let shape = input.byte().unwrap_or(0);
                    let cuts = input.take(3).to_vec();
                    // HTTP+SSE: the answer comes on the stream, the POST is accepted.
                    let stream = seen
                        .open
                        .iter()
                        .find(|(_, (method, _))| *method == Method::Get)
                        .map(|(id, _)| *id)
                        .filter(|_| transport == HttpTransport::Sse && request.is_some());
                    if stream.is_some() {
                        let head = ResponseHead {
                            status: 202,
                            content_type: None,
                            session_id: None,
                        };
                        server.handle(now, HttpInput::Head { exchange: id, head });
                        server.handle(now, HttpInput::End { exchange: id });
                        seen.open.remove(&id);
                    }
                    let ended = answer(
                        &mut server,
                        now,
                        (stream.unwrap_or(id), stream.is_some()),
                        request.as_ref(),
                        shape,
                        &cuts,
                        transport,
                    );
                    if ended {
                        seen.open.remove(&id);
                    }
                }
            }
            2 => {
                let n = input.byte().unwrap_or(0);
                let id = format!("h{n}");
                let tool = match seen.tools.len() {
                    0 => "mcp__fuzz_srv__x".to_owned(),
                    len => seen.tools[usize::from(n) % len].clone(),
                };
                if seen.calls.insert(id.clone()) {
                    let arguments = json!({ "n": n });
                    server.handle(
                        now,
                        HttpInput::Call {
                            id,
                            tool,
                            arguments,
                        },
                    );
                }
            }
            3 => {
                let id = format!("h{}", input.byte().unwrap_or(0));
                if seen.calls.contains(&id) && !seen.answered.contains(&id) {
                    seen.cancelled.insert(id.clone());
                    server.handle(now, HttpInput::Cancel { id });
                }
            }
            4 => {
                now += Duration::from_millis(u64::from(input.byte().unwrap_or(0)) * 250);
                server.handle(now, HttpInput::Timeout);
                check(&mut server, &mut seen, &mut log);
                if let Some(at) = server.poll_timeout() {
                    assert!(
                        at > now,
                        "a timeout that is already due after a timer input"
                    );
                }
            }
            5 => {
                if let Some((id, _)) = exchange {
                    let (status, content_type) = match input.byte().unwrap_or(0) % 7 {
                        0 => (200, Some("application/json")),
                        1 => (200, Some("text/event-stream")),
                        2 => (202, None),
                        3 => (404, None),
                        4 => (405, None),
                        5 => (500, Some("text/plain")),
                        _ => (200, Some("text/html")),
                    };
                    let session_id = Some("fuzz-session");
                    let head = ResponseHead {
                        status,
                        content_type,
                        session_id,
                    };
                    server.handle(now, HttpInput::Head { exchange: id, head });
                }
            }
            6 => {
                if let Some((id, _)) = exchange {
                    seen.open.remove(&id);
                    server.handle(now, HttpInput::End { exchange: id });
                }
            }
            7 => {
                if let Some((id, _)) = exchange {
                    seen.open.remove(&id);
                    let error = "reset";
                    server.handle(
                        now,
                        HttpInput::Failed {
                            exchange: id,
                            error,
                        },
                    );
                }
            }
            8 => {
                if let Some((id, _)) = exchange {
                    let mut big = b"data: ".to_vec();
                    big.resize(MAX_MESSAGE + 64, b'x');
                    big.extend_from_slice(b"\n\n");
                    server.handle(
                        now,
                        HttpInput::Body {
                            exchange: id,
                            bytes: &big,
                        },
                    );
                }
            }
            9 => {
                if let Some((id, _)) = exchange {
                    let events: &[u8] = match transport {
                        HttpTransport::Sse => b"event: endpoint\ndata: /messages?s=1\n\n",
                        HttpTransport::Streamable => b"id: 9\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n",
                    };
                    server.handle(
                        now,
                        HttpInput::Body {
                            exchange: id,
                            bytes: events,
                        },
                    );
                }
            }
            _ => {
                // An input for an exchange that is not open (aborted, ended, never sent).
                let exchange = ExchangeId(u64::from(input.byte().unwrap_or(0)));
                server.handle(now, HttpInput::End { exchange });
            }
        }
        check(&mut server, &mut seen, &mut log);
    }
    server.handle(now, HttpInput::Stop);
    check(&mut server, &mut seen, &mut log);
    for id in &seen.calls {
        assert!(
            seen.answered.contains(id) || seen.cancelled.contains(id),
            "call {id} was never answered"
        );
    }
    assert_eq!(seen.stops, 1, "the server is stopped exactly once");
    log
}

/// A well-formed answer to `request` on `exchange`: head, body split at `cuts`, end (and
/// `true`) unless the shape leaves the stream open; on an open event stream (`on_stream`),
/// the events only.
fn answer(
    server: &mut McpHttpServer,
    now: Instant,
    (exchange, on_stream): (ExchangeId, bool),
    request: Option<&(u64, String)>,
    shape: u8,
    cuts: &[u8],
    transport: HttpTransport,
) -> bool {
    let message = match request {
        Some((id, method)) => reply(*id, method, shape),
        None => json!({"jsonrpc":"2.0","method":"notifications/message"}),
    };
    let text = message.to_string();
    let events = transport == HttpTransport::Sse || shape & 0x10 != 0;
    let body = if events {
        let id = if shape & 0x20 != 0 { "id: e1\n" } else { "" };
        format!("event: message\r\n{id}data: {text}\r\n\r\n").into_bytes()
    } else {
        text.into_bytes()
    };
    let content_type = Some(if events {
        "text/event-stream"
    } else {
        "application/json"
    });
    let head = ResponseHead {
        status: 200,
        content_type,
        session_id: Some("fuzz-session"),
    };
    if !on_stream {
        server.handle(now, HttpInput::Head { exchange, head });
    }
    let mut from = 0;
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|c| usize::from(*c) % (body.len() + 1))
        .collect();
    points.sort_unstable();
    for point in points.into_iter().chain([body.len()]) {
        let bytes = &body[from..point.max(from)];
        server.handle(now, HttpInput::Body { exchange, bytes });
        from = point.max(from);
    }
    let end = shape & 0x40 == 0 && !on_stream;
    if end {
        server.handle(now, HttpInput::End { exchange });
    }
    end
}

fn reply(id: u64, method: &str, shape: u8) -> Value {
    match (method, shape % 4) {
        (_, 3) => json!({"jsonrpc":"2.0","id":id,"error":{"code":-32000,"message":"no"}}),
        ("initialize", _) => {
            json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}}}})
        }
        ("tools/list", 0) => {
            json!({"jsonrpc":"2.0","id":id,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}})
        }
        ("tools/list", _) => {
            json!({"jsonrpc":"2.0","id":id,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"more"}})
        }
        _ => json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":"ok"}]}}),
    }
}

fn check(server: &mut McpHttpServer, seen: &mut Seen, log: &mut Vec<String>) {
    let mut after_stop = false;
    while let Some(action) = server.poll_action() {
        assert!(!after_stop, "an action after the stop: {action:?}");
        match &action {
            HttpAction::Send(request) => {
                let rpc = request.body.as_deref().map(|body| {
                    let value: Value = serde_json::from_slice(body).expect("a POST body is JSON");
                    assert_eq!(value["jsonrpc"], "2.0");
                    value
                });
                let key = rpc
                    .as_ref()
                    .and_then(|v| Some((v["id"].as_u64()?, v["method"].as_str()?.to_owned())));
                seen.open.insert(request.exchange, (request.method, key));
            }
            HttpAction::Abort(id) => {
                seen.open.remove(id);
            }
            HttpAction::Tools(tools) => {
                seen.tools = tools.iter().map(|t| t.name.clone()).collect();
            }
            HttpAction::Result { id, .. } => {
                assert!(seen.calls.contains(id), "a result for no call: {id}");
                assert!(
                    !seen.cancelled.contains(id),
                    "a result for a cancelled call: {id}"
                );
                assert!(seen.answered.insert(id.clone()), "call {id} answered twice");
            }
            HttpAction::Notice(text) => assert!(!text.is_empty()),
            HttpAction::Stop => {
                seen.stops += 1;
                after_stop = true;
            }
        }
        log.push(format!("{action:?}"));
    }
    assert!(server.open_exchanges() <= MAX_EXCHANGES);
}
