//! The fuzz body for the [`McpServer`] (feature `fuzzing`): `fuzz/fuzz_targets/mcp_client.rs`
//! is a thin wrapper, and `core/tests/fuzz_bodies/mcp.rs` runs it on the seeds under cargo test.
//!
//! The input is the server's side, interleaved with the agent's calls: each op is a tag byte
//! and its operands: raw stdout bytes, a well-formed answer to one of the requests the client
//! wrote (shaped by its method, or an error), a server request or notification, a host tool
//! call or cancel, time passing, and the server's end. Checked after every op:
//! - nothing panics;
//! - every write is complete JSON-RPC 2.0 lines;
//! - every call is answered at most once, a cancelled one never; at the end (the session's
//!   stop) every call given and not cancelled has been answered (MCP-05, MCP-06: never a
//!   hang), and the process was stopped once;
//! - registered tools are `mcp__SERVER__…` with an object schema;
//! - after a timer input the next timeout is in the future (no busy loop);
//! - determinism: a second client fed the same inputs gives the same actions.
//!
//! The same input then drives an [`super::http::McpHttpServer`] (see [`http_client_actions`]).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Action, Input, McpConfig, McpServer};

/// The most ops read from one input.
const MAX_OPS: usize = 512;

/// Runs one fuzz input; panics on a broken invariant. The input drives the stdio client,
/// then the HTTP client ([`http_client_actions`]: the same bytes read as HTTP exchanges).
pub fn mcp_client(data: &[u8]) {
    let start = Instant::now();
    let first = run(data, start);
    let second = run(data, start);
    assert_eq!(first, second, "the same inputs gave different actions");
    http_client_actions(data);
}

#[path = "fuzzing_http.rs"]
mod http_body;
pub use http_body::http_client_actions;

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        taken
    }
}

#[derive(Default)]
struct Seen {
    /// Requests written and not answered by the fuzzer, by id: their method.
    requests: BTreeMap<u64, String>,
    calls: BTreeSet<String>,
    cancelled: BTreeSet<String>,
    answered: BTreeSet<String>,
    tools: Vec<String>,
    stops: usize,
}

fn run(data: &[u8], start: Instant) -> Vec<Action> {
    let mut input = Bytes(data);
    let mut now = start;
    let mut server = McpServer::new("fuzz srv", now, McpConfig::default());
    let mut seen = Seen::default();
    let mut log = Vec::new();
    check(&mut server, &mut seen, &mut log);
    let mut ops = 0;
    while let Some(tag) = input.byte() {
        ops += 1;
        if ops > MAX_OPS {
            break;
        }
        match tag % 9 {
            0 => {
                let n = usize::from(input.byte().unwrap_or(0)) * 4;
                let bytes = input.take(n).to_vec();
                server.handle(now, Input::Stdout(&bytes));
            }
            1 => {
                let pick = usize::from(input.byte().unwrap_or(0));
                let shape = input.byte().unwrap_or(0);
                if let Some((&id, method)) =
                    seen.requests.iter().nth(pick % seen.requests.len().max(1))
                {
                    let reply = answer(id, method, shape);
                    seen.requests.remove(&id);
                    server.handle(now, Input::Stdout(&reply));
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
                    server.handle(
                        now,
                        Input::Call {
                            id,
                            tool,
                            arguments: json!({"n": n}),
                        },
                    );
                }
            }
            3 => {
                let id = format!("h{}", input.byte().unwrap_or(0));
                if seen.calls.contains(&id) && !seen.answered.contains(&id) {
                    seen.cancelled.insert(id.clone());
                    server.handle(now, Input::Cancel { id });
                }
            }
            4 => {
                now += Duration::from_secs(u64::from(input.byte().unwrap_or(0)));
                server.handle(now, Input::Timeout);
                check(&mut server, &mut seen, &mut log);
                if let Some(at) = server.poll_timeout() {
                    assert!(
                        at > now,
                        "a timeout that is already due after a timer input"
                    );
                }
            }
            5 => server.handle(
                now,
                Input::Stdout(
                    b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n",
                ),
            ),
            6 => server.handle(
                now,
                Input::Stdout(b"{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}\n"),
            ),
            7 => server.handle(now, Input::StdoutEnd),
            _ => server.handle(now, Input::Exit),
        }
        check(&mut server, &mut seen, &mut log);
    }
    server.handle(now, Input::Stop);
    check(&mut server, &mut seen, &mut log);
    for id in &seen.calls {
        assert!(
            seen.answered.contains(id) || seen.cancelled.contains(id),
            "call {id} was never answered"
        );
    }
    assert_eq!(seen.stops, 1, "the process is stopped exactly once");
    log
}

fn answer(id: u64, method: &str, shape: u8) -> Vec<u8> {
    let result = match (method, shape % 4) {
        (_, 3) => json!({"jsonrpc":"2.0","id":id,"error":{"code":-32000,"message":"no"}}),
        ("initialize", _) => {
            json!({"jsonrpc":"2.0","id":id,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}}}})
        }
        ("tools/list", 0) => {
            json!({"jsonrpc":"2.0","id":id,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b c","description":"B","inputSchema":{"type":"object"}}]}})
        }
        ("tools/list", 1) => {
            json!({"jsonrpc":"2.0","id":id,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"more"}})
        }
        ("tools/list", _) => {
            json!({"jsonrpc":"2.0","id":id,"result":{"tools":[{"name":"bad","inputSchema":1}]}})
        }
        (_, 0) => {
            json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":"ok"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}})
        }
        (_, 1) => {
            json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"resource_link","name":"n","uri":"file:///x"}],"isError":true}})
        }
        _ => json!({"jsonrpc":"2.0","id":id,"result":{"structuredContent":{"a":1}}}),
    };
    let mut bytes = serde_json::to_vec(&result).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

fn check(server: &mut McpServer, seen: &mut Seen, log: &mut Vec<Action>) {
    while let Some(action) = server.poll_action() {
        match &action {
            Action::Write { bytes } => {
                assert_eq!(bytes.last(), Some(&b'\n'), "a write ends its line");
                for line in bytes[..bytes.len() - 1].split(|&b| b == b'\n') {
                    let value: Value = serde_json::from_slice(line).expect("a write is JSON");
                    assert_eq!(value["jsonrpc"], "2.0");
                    if let (Some(id), Some(method)) =
                        (value["id"].as_u64(), value["method"].as_str())
                    {
                        seen.requests.insert(id, method.to_owned());
                    }
                }
            }
            Action::Tools(tools) => {
                seen.tools = tools.iter().map(|t| t.name.clone()).collect();
                for tool in tools {
                    assert!(tool.name.starts_with("mcp__fuzz_srv__"), "{}", tool.name);
                    assert!(tool.parameters.is_object() && !tool.description.is_empty());
                }
            }
            Action::Result { id, .. } => {
                assert!(seen.calls.contains(id), "a result for no call: {id}");
                assert!(
                    !seen.cancelled.contains(id),
                    "a result for a cancelled call: {id}"
                );
                assert!(seen.answered.insert(id.clone()), "call {id} answered twice");
            }
            Action::Notice(text) => assert!(!text.is_empty()),
            Action::Stop => seen.stops += 1,
        }
        log.push(action);
    }
}
