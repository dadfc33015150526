//! The HTTP transports' rules (MCP-11..16), as transcripts: the driver's inputs in, the
//! actions out.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::*;

const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}}}}"#;
const TOOLS: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#;

struct Harness {
    server: McpHttpServer,
    now: Instant,
    sends: Vec<HttpRequest>,
    aborts: Vec<ExchangeId>,
    tools: Vec<Vec<String>>,
    results: Vec<(String, String, bool)>,
    notices: Vec<String>,
    stops: usize,
}

impl Harness {
    fn new(transport: HttpTransport) -> Self {
        let now = Instant::now();
        let config = HttpConfig {
            transport,
            ..HttpConfig::default()
        };
        let url = match transport {
            HttpTransport::Streamable => "https://mcp.example/mcp",
            HttpTransport::Sse => "https://mcp.example/sse",
        };
        let server = McpHttpServer::new("srv", url.parse().unwrap(), now, config);
        let mut h = Harness {
            server,
            now,
            sends: Vec::new(),
            aborts: Vec::new(),
            tools: Vec::new(),
            results: Vec::new(),
            notices: Vec::new(),
            stops: 0,
        };
        h.drain();
        h
    }

    fn with_config(config: HttpConfig) -> Self {
        let mut h = Harness::new(config.transport);
        let url = h.server.url.clone();
        h.server = McpHttpServer::new("srv", url, h.now, config);
        h.sends.clear();
        h.drain();
        h
    }

    fn drain(&mut self) {
        while let Some(action) = self.server.poll_action() {
            match action {
                HttpAction::Send(request) => self.sends.push(request),
                HttpAction::Abort(id) => self.aborts.push(id),
                HttpAction::Tools(tools) => {
                    self.tools.push(tools.into_iter().map(|t| t.name).collect())
                }
                HttpAction::Result {
                    id,
                    result,
                    is_error,
                } => {
                    let text = serde_json::to_string(&result.content).unwrap();
                    self.results.push((id, text, is_error));
                }
                HttpAction::Notice(text) => self.notices.push(text),
                HttpAction::Stop => self.stops += 1,
            }
        }
    }

    fn handle(&mut self, input: HttpInput<'_>) {
        self.server.handle(self.now, input);
        self.drain();
    }

    /// The last request sent, and its body as JSON.
    fn last(&self) -> (HttpRequest, Value) {
        let request = self.sends.last().expect("a request").clone();
        let body = request
            .body
            .as_deref()
            .map(|b| serde_json::from_slice(b).unwrap())
            .unwrap_or(Value::Null);
        (request, body)
    }

    fn find(&self, method: &str) -> HttpRequest {
        self.sends
            .iter()
            .rev()
            .find(|r| {
                r.body.as_deref().is_some_and(|b| {
                    serde_json::from_slice::<Value>(b).unwrap()["method"] == method
                })
            })
            .unwrap_or_else(|| panic!("no {method} sent"))
            .clone()
    }

    fn head(&mut self, exchange: ExchangeId, status: u16, ct: Option<&str>, session: Option<&str>) {
        let head = ResponseHead {
            status,
            content_type: ct,
            session_id: session,
        };
        self.handle(HttpInput::Head { exchange, head });
    }

    fn json(&mut self, exchange: ExchangeId, session: Option<&str>, body: &str) {
        self.head(exchange, 200, Some("application/json"), session);
        self.handle(HttpInput::Body {
            exchange,
            bytes: body.as_bytes(),
        });
        self.handle(HttpInput::End { exchange });
    }

    fn events(&mut self, exchange: ExchangeId, chunks: &[&str]) {
        for chunk in chunks {
            self.handle(HttpInput::Body {
                exchange,
                bytes: chunk.as_bytes(),
            });
        }
    }

    fn accepted(&mut self, exchange: ExchangeId) {
        self.head(exchange, 202, None, None);
        self.handle(HttpInput::End { exchange });
    }

    /// Streamable: initialize with session `s1`, the listing, the GET stream refused (405).
    fn ready(&mut self) {
        let init = self.find("initialize").exchange;
        self.json(init, Some("s1"), INIT_OK);
        let initialized = self.find("notifications/initialized").exchange;
        self.accepted(initialized);
        let get = self
            .sends
            .iter()
            .find(|r| r.method == Method::Get)
            .unwrap()
            .exchange;
        self.head(get, 405, None, None);
        let list = self.find("tools/list").exchange;
        self.json(list, None, TOOLS);
        assert_eq!(
            self.tools.last().unwrap(),
            &vec!["mcp__srv__echo".to_owned()]
        );
    }

    fn call(&mut self, id: &str) -> ExchangeId {
        self.handle(HttpInput::Call {
            id: id.into(),
            tool: "mcp__srv__echo".into(),
            arguments: json!({"message": "hi"}),
        });
        let (request, body) = self.last();
        assert_eq!(body["method"], "tools/call");
        request.exchange
    }

    fn advance(&mut self, by: Duration) {
        self.now += by;
        self.handle(HttpInput::Timeout);
    }
}

fn call_answer(id: u64, text: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":text}]}}).to_string()
}

/// MCP-11: a POST per message with the protocol's headers; the session id of the
/// `initialize` answer and the protocol version on every later request; a JSON answer.
#[test]
fn mcp_11_streamable_initialize_list_call_over_json() {
    let mut h = Harness::new(HttpTransport::Streamable);
    let (init, body) = h.last();
    assert_eq!(init.method, Method::Post);
    assert_eq!(init.url.as_str(), "https://mcp.example/mcp");
    assert_eq!(body["method"], "initialize");
    assert_eq!(
        init.headers(),
        vec![
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json")
        ]
    );
    h.ready();
    let call = h.call("c1");
    let request = h.sends.last().unwrap().clone();
    assert_eq!(request.session_id.as_deref(), Some("s1"));
    assert_eq!(request.protocol_version.as_deref(), Some("2025-06-18"));
    assert!(request.headers().contains(&("mcp-session-id", "s1")));
    assert!(request
        .headers()
        .contains(&("mcp-protocol-version", "2025-06-18")));
    h.json(call, None, &call_answer(2, "hi"));
    assert_eq!(
        h.results,
        vec![(
            "c1".into(),
            r#"[{"type":"text","text":"hi"}]"#.into(),
            false
        )]
    );
    assert_eq!(h.server.open_exchanges(), 0);
}

/// MCP-11: an answer on an event stream, split anywhere, after a server request (answered by
/// a POST of its own) and a notification; a notification's 202.
#[test]
fn mcp_11_answer_on_an_event_stream() {
    let mut h = Harness::new(HttpTransport::Streamable);
    h.ready();
    let call = h.call("c1");
    h.head(call, 200, Some("text/event-stream; charset=utf-8"), None);
    let answer = call_answer(2, "streamed");
    let stream = format!(
        ": keep\n\ndata: {{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}}\n\n\
         event: message\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}}\r\n\r\n\
         data: {answer}\n\n"
    );
    let (a, b) = stream.split_at(40);
    let (b, c) = b.split_at(b.len() - 7);
    h.events(call, &[a, b, c]);
    let (ping, body) = h.last();
    assert_eq!(body, json!({"jsonrpc":"2.0","id":"p","result":{}}));
    assert_eq!(h.results[0].1, r#"[{"type":"text","text":"streamed"}]"#);
    // The answered POST's stream is done with.
    assert!(h.aborts.contains(&call));
    h.accepted(ping.exchange);
    assert_eq!(h.server.open_exchanges(), 0);
}

/// MCP-11: a status that is not 2xx loses the request: a call answered as an error naming
/// the status; `initialize` refused fails the server (no secret in any text).
#[test]
fn mcp_11_error_statuses() {
    let mut h = Harness::new(HttpTransport::Streamable);
    h.ready();
    let call = h.call("c1");
    h.head(call, 500, Some("text/plain"), None);
    assert_eq!(h.results.len(), 1);
    assert!(
        h.results[0].1.contains("HTTP status 500"),
        "{:?}",
        h.results
    );
    assert!(h.results[0].2);

    let mut h = Harness::new(HttpTransport::Streamable);
    let init = h.last().0.exchange;
    h.head(init, 401, None, None);
    assert_eq!(h.stops, 1);
    assert!(
        h.notices[0].contains("could not answer initialize: HTTP status 401"),
        "{:?}",
        h.notices
    );
    // No session: no DELETE.
    assert!(h.sends.iter().all(|r| r.method != Method::Delete));
}

/// MCP-11: a broken connection or an answer that ends without the response loses the
/// request at once, not at its budget.
#[test]
fn mcp_11_broken_connections_answer_at_once() {
    let mut h = Harness::new(HttpTransport::Streamable);
    h.ready();
    let call = h.call("c1");
    h.handle(HttpInput::Failed {
        exchange: call,
        error: "connection refused",
    });
    assert!(h.results[0]
        .1
        .contains("the connection failed: connection refused"));
    let call = h.call("c2");
    h.json(
        call,
        None,
        r#"{"jsonrpc":"2.0","method":"notifications/message"}"#,
    );
    assert!(h.results[1].1.contains("ended without the answer"));
}

/// MCP-11: nothing follows `notifications/initialized` (not `tools/list`, not the GET stream)
/// until the server has answered it: each message has a connection of its own, so a message
/// sent at once could reach the server first. A refused or broken notification releases them
/// too.
#[test]
fn mcp_11_messages_wait_for_the_answer_to_initialized() {
    for answer in [202, 500, 0] {
        let mut h = Harness::new(HttpTransport::Streamable);
        let init = h.find("initialize").exchange;
        h.json(init, Some("s1"), INIT_OK);
        let (initialized, body) = h.last();
        assert_eq!(body["method"], "notifications/initialized");
        let sent = h.sends.len();
        h.advance(Duration::from_millis(10));
        assert_eq!(h.sends.len(), sent, "{answer}: nothing before the answer");
        match answer {
            0 => h.handle(HttpInput::Failed {
                exchange: initialized.exchange,
                error: "reset",
            }),
            status => h.head(initialized.exchange, status, None, None),
        }
        let after: Vec<(Method, Value)> = h.sends[sent..]
            .iter()
            .map(|r| {
                let body = r
                    .body
                    .as_deref()
                    .map(|b| serde_json::from_slice(b).unwrap());
                (
                    r.method,
                    body.map_or(Value::Null, |b: Value| b["method"].clone()),
                )
            })
            .collect();
        assert_eq!(
            after,
            [
                (Method::Post, json!("tools/list")),
                (Method::Get, Value::Null)
            ],
            "{answer}"
        );
    }
}

/// MCP-12: a 404 on a request with a session starts a new session: the call answered as an
/// error, `initialize` again without a session id, the new id used after.
#[test]
fn mcp_12_session_expired_reinitializes() {
    let mut h = Harness::new(HttpTransport::Streamable);
    h.ready();
    let call = h.call("c1");
    h.head(call, 404, None, None);
    assert_eq!(h.results.len(), 1);
    assert!(
        h.results[0].1.contains("lost its session"),
        "{:?}",
        h.results
    );
    let (init, body) = h.last();
    assert_eq!(body["method"], "initialize");
    assert_eq!(init.session_id, None);
    assert_eq!(init.protocol_version, None);
    h.json(
        init.exchange,
        Some("s2"),
        &INIT_OK.replace("\"id\":0", "\"id\":3"),
    );
    let initialized = h.find("notifications/initialized");
    assert_eq!(initialized.session_id.as_deref(), Some("s2"));
    assert_eq!(h.stops, 0);
}

/// MCP-12: restarting is bounded.
#[test]
fn mcp_12_reinitializing_is_bounded() {
    let mut h = Harness::new(HttpTransport::Streamable);
    h.ready();
    for round in 0..=MAX_REINITS {
        let call = h.call(&format!("c{round}"));
        h.head(call, 404, None, None);
        if h.stops > 0 {
            break;
        }
        let init = h.find("initialize");
        let id = serde_json::from_slice::<Value>(init.body.as_deref().unwrap()).unwrap()["id"]
            .as_u64()
            .unwrap();
        h.json(
            init.exchange,
            Some("s"),
            &INIT_OK.replace("\"id\":0", &format!("\"id\":{id}")),
        );
        let initialized = h.find("notifications/initialized").exchange;
        h.accepted(initialized);
        let list = h.find("tools/list");
        let id = serde_json::from_slice::<Value>(list.body.as_deref().unwrap()).unwrap()["id"]
            .as_u64()
            .unwrap();
        h.json(
            list.exchange,
            None,
            &TOOLS.replace("\"id\":1", &format!("\"id\":{id}")),
        );
    }
    assert_eq!(h.stops, 1);
    assert!(
        h.notices.last().unwrap().contains("more than 8 times"),
        "{:?}",
        h.notices
    );
}

/// MCP-13: the GET stream after `initialize`: its `list_changed` lists again; when it ends
/// it is reopened after the server's `retry` with `Last-Event-ID`; bounded, then a notice.
#[test]
fn mcp_13_get_stream_reopened_with_last_event_id() {
    let mut h = Harness::new(HttpTransport::Streamable);
    let init = h.last().0.exchange;
    h.json(init, Some("s1"), INIT_OK);
    let initialized = h.find("notifications/initialized").exchange;
    h.accepted(initialized);
    let get = h
        .sends
        .iter()
        .find(|r| r.method == Method::Get)
        .unwrap()
        .clone();
    assert_eq!(get.accept, "text/event-stream");
    assert_eq!(get.session_id.as_deref(), Some("s1"));
    assert_eq!(get.protocol_version.as_deref(), Some("2025-06-18"));
    let list = h.find("tools/list").exchange;
    h.json(list, None, TOOLS);
    h.head(get.exchange, 200, Some("text/event-stream"), None);
    h.events(
        get.exchange,
        &["retry: 2000\nid: e5\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"],
    );
    let (relist, body) = h.last();
    assert_eq!(body["method"], "tools/list");
    h.json(
        relist.exchange,
        None,
        &TOOLS.replace("\"id\":1", "\"id\":2"),
    );
    h.handle(HttpInput::End {
        exchange: get.exchange,
    });
    assert_eq!(
        h.server.poll_timeout(),
        Some(h.now + Duration::from_secs(2))
    );
    let sent = h.sends.len();
    h.advance(Duration::from_secs(2));
    assert_eq!(h.sends.len(), sent + 1);
    let (again, _) = h.last();
    assert_eq!(again.method, Method::Get);
    assert_eq!(again.last_event_id.as_deref(), Some("e5"));
    assert!(again.headers().contains(&("last-event-id", "e5")));
    // Failures in a row are bounded.
    let mut exchange = again.exchange;
    for _ in 0..5 {
        h.handle(HttpInput::Failed {
            exchange,
            error: "connection refused",
        });
        if let Some(at) = h.server.poll_timeout() {
            h.advance(at - h.now);
        }
        exchange = h.last().0.exchange;
    }
    assert!(
        h.notices
            .iter()
            .any(|n| n.contains("could not be reopened")),
        "{:?}",
        h.notices
    );
    assert_eq!(h.stops, 0, "the server goes on without its stream");
    assert_eq!(h.server.poll_timeout(), None);
}

/// MCP-13: a server without the GET stream (405) is not asked again.
#[test]
fn mcp_13_no_get_stream() {
    let mut h = Harness::new(HttpTransport::Streamable);
    h.ready();
    assert_eq!(h.server.poll_timeout(), None);
    assert_eq!(
        h.sends.iter().filter(|r| r.method == Method::Get).count(),
        1
    );
}

/// MCP-13: a POST's stream that ends before its answer is resumed by a GET with
/// `Last-Event-ID`; one without ids is lost at once.
#[test]
fn mcp_13_post_stream_resumed() {
    let mut h = Harness::new(HttpTransport::Streamable);
    h.ready();
    let call = h.call("c1");
    h.head(call, 200, Some("text/event-stream"), None);
    h.events(call, &["id: e1\ndata:\n\n"]);
    h.handle(HttpInput::End { exchange: call });
    assert!(h.results.is_empty());
    let at = h.server.poll_timeout().unwrap();
    assert_eq!(at, h.now + Duration::from_millis(500));
    h.advance(Duration::from_millis(500));
    let (resume, _) = h.last();
    assert_eq!(resume.method, Method::Get);
    assert_eq!(resume.last_event_id.as_deref(), Some("e1"));
    assert_eq!(resume.session_id.as_deref(), Some("s1"));
    h.head(resume.exchange, 200, Some("text/event-stream"), None);
    h.events(
        resume.exchange,
        &[&format!("id: e2\ndata: {}\n\n", call_answer(2, "late"))],
    );
    assert_eq!(h.results[0].1, r#"[{"type":"text","text":"late"}]"#);

    let call = h.call("c2");
    h.head(call, 200, Some("text/event-stream"), None);
    h.handle(HttpInput::End { exchange: call });
    assert!(h.results[1].1.contains("ended without the answer"));
}

/// MCP-14: HTTP+SSE: the stream names the endpoint, messages are POSTed there, answers come
/// on the stream; no session header, no protocol-version header.
#[test]
fn mcp_14_legacy_sse() {
    let mut h = Harness::new(HttpTransport::Sse);
    let (get, _) = h.last();
    assert_eq!(get.method, Method::Get);
    assert_eq!(get.url.as_str(), "https://mcp.example/sse");
    assert_eq!(h.sends.len(), 1, "initialize waits for the endpoint");
    h.head(get.exchange, 200, Some("text/event-stream"), None);
    h.events(
        get.exchange,
        &["event: endpoint\ndata: /messages?sessionId=abc\n", "\n"],
    );
    let (init, body) = h.last();
    assert_eq!(body["method"], "initialize");
    assert_eq!(
        init.url.as_str(),
        "https://mcp.example/messages?sessionId=abc"
    );
    h.accepted(init.exchange);
    h.events(
        get.exchange,
        &[&format!("event: message\ndata: {INIT_OK}\n\n")],
    );
    let initialized = h.find("notifications/initialized");
    assert_eq!(initialized.session_id, None);
    assert_eq!(initialized.protocol_version, None);
    h.accepted(initialized.exchange);
    let list = h.find("tools/list").exchange;
    h.accepted(list);
    h.events(
        get.exchange,
        &[&format!("event: message\ndata: {TOOLS}\n\n")],
    );
    assert_eq!(h.tools.len(), 1);
    let call = h.call("c1");
    h.accepted(call);
    h.events(
        get.exchange,
        &[&format!(
            "event: message\ndata: {}\n\n",
            call_answer(2, "hi")
        )],
    );
    assert_eq!(h.results[0].1, r#"[{"type":"text","text":"hi"}]"#);
    // No GET other than the stream.
    assert_eq!(
        h.sends.iter().filter(|r| r.method == Method::Get).count(),
        1
    );
    h.handle(HttpInput::Stop);
    assert_eq!(h.stops, 1);
    assert!(h.aborts.contains(&get.exchange));
    assert!(h.sends.iter().all(|r| r.method != Method::Delete));
}

/// MCP-14: an endpoint on another origin fails the server (the editor's headers would go
/// there).
#[test]
fn mcp_14_endpoint_on_another_origin() {
    let mut h = Harness::new(HttpTransport::Sse);
    let get = h.last().0.exchange;
    h.head(get, 200, Some("text/event-stream"), None);
    h.events(
        get,
        &["event: endpoint\ndata: https://evil.example/messages\n\n"],
    );
    assert_eq!(h.stops, 1);
    assert!(h.notices[0].contains("another origin"));
    assert_eq!(h.sends.len(), 1);
}

/// MCP-14: a lost HTTP+SSE stream is a lost session: reopened after the backoff, and the
/// server started again from `initialize` once the new endpoint comes.
#[test]
fn mcp_14_lost_stream_starts_again() {
    let mut h = Harness::new(HttpTransport::Sse);
    let get = h.last().0.exchange;
    h.head(get, 200, Some("text/event-stream"), None);
    h.events(get, &["event: endpoint\ndata: /m?s=1\n\n"]);
    let init = h.find("initialize").exchange;
    h.accepted(init);
    h.events(get, &[&format!("event: message\ndata: {INIT_OK}\n\n")]);
    h.handle(HttpInput::End { exchange: get });
    let sent = h.sends.len();
    h.advance(Duration::from_millis(500));
    assert_eq!(h.sends.len(), sent + 1);
    let (get, _) = h.last();
    assert_eq!(get.method, Method::Get);
    h.head(get.exchange, 200, Some("text/event-stream"), None);
    h.events(get.exchange, &["event: endpoint\ndata: /m?s=2\n\n"]);
    let (init, body) = h.last();
    assert_eq!(body["method"], "initialize");
    assert_eq!(init.url.as_str(), "https://mcp.example/m?s=2");
}

/// MCP-15: the editor's headers are not the machine's: their Debug shows names only.
#[test]
fn mcp_15_secret_headers_are_redacted() {
    let headers = SecretHeaders::new(vec![("Authorization".into(), "Bearer hunter2".into())]);
    let shown = format!("{headers:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(shown.contains("Authorization"));
    assert_eq!(headers.values().collect::<Vec<_>>(), vec!["Bearer hunter2"]);
}

/// MCP-16: a JSON answer over the bound is lost; an event over it is skipped with a notice;
/// a head that does not come in time aborts the exchange.
#[test]
fn mcp_16_bounds_and_deadlines() {
    let config = HttpConfig {
        max_message_bytes: 256,
        ..HttpConfig::default()
    };
    let mut h = Harness::with_config(config);
    h.ready();
    let call = h.call("c1");
    h.head(call, 200, Some("application/json"), None);
    h.handle(HttpInput::Body {
        exchange: call,
        bytes: &[b' '; 300],
    });
    assert!(h.aborts.contains(&call));
    assert!(h.results[0].1.contains("over 256 bytes"), "{:?}", h.results);

    let call = h.call("c2");
    h.head(call, 200, Some("text/event-stream"), None);
    let big = format!("data: {}\n\n", "x".repeat(300));
    h.events(
        call,
        &[&big, &format!("data: {}\n\n", call_answer(3, "ok"))],
    );
    assert!(h.notices.iter().any(|n| n.contains("event over 256 bytes")));
    assert_eq!(h.results[1].1, r#"[{"type":"text","text":"ok"}]"#);

    // A head that never comes: aborted at the call budget, the call answered, cancelled.
    let call = h.call("c3");
    h.advance(CALL_BUDGET_FOR_TEST);
    assert!(h.aborts.contains(&call));
    assert!(h.results[2].2);
    let cancel = h.find("notifications/cancelled");
    assert_eq!(cancel.session_id.as_deref(), Some("s1"));
}

const CALL_BUDGET_FOR_TEST: Duration = super::super::CALL_BUDGET;

/// MCP-16: at most MAX_EXCHANGES open; a message past it is lost at once.
#[test]
fn mcp_16_exchanges_are_bounded() {
    let mut h = Harness::new(HttpTransport::Streamable);
    h.ready();
    let mut answered = 0;
    for n in 0..(MAX_EXCHANGES + 8) {
        h.call(&format!("c{n}"));
        answered = h.results.len();
    }
    assert!(h.server.open_exchanges() <= MAX_EXCHANGES);
    assert!(answered > 0);
}

/// MCP-05 over HTTP: a cancelled call is `notifications/cancelled` POSTed with the session,
/// and its exchange is dropped.
#[test]
fn mcp_11_cancel_posts_cancelled_and_drops_the_exchange() {
    let mut h = Harness::new(HttpTransport::Streamable);
    h.ready();
    let call = h.call("c1");
    h.handle(HttpInput::Cancel { id: "c1".into() });
    let (cancel, body) = h.last();
    assert_eq!(body["method"], "notifications/cancelled");
    assert_eq!(body["params"]["requestId"], 2);
    assert_eq!(cancel.session_id.as_deref(), Some("s1"));
    assert!(h.aborts.contains(&call));
    assert!(h.results.is_empty());
}

/// MCP-11: stop aborts every exchange and ends the session with DELETE, once.
#[test]
fn mcp_11_stop_deletes_the_session() {
    let mut h = Harness::new(HttpTransport::Streamable);
    h.ready();
    let call = h.call("c1");
    h.handle(HttpInput::Stop);
    assert!(h.aborts.contains(&call));
    let (delete, _) = h.last();
    assert_eq!(delete.method, Method::Delete);
    assert_eq!(delete.session_id.as_deref(), Some("s1"));
    assert_eq!(h.stops, 1);
    assert!(h.results[0].2);
    h.handle(HttpInput::Stop);
    h.handle(HttpInput::End { exchange: call });
    assert_eq!(h.stops, 1);
    assert_eq!(h.server.poll_timeout(), None);
}

/// MCP-11: a batch answer (2025-03-26) is read message by message.
#[test]
fn mcp_11_batch_answer() {
    let mut h = Harness::new(HttpTransport::Streamable);
    h.ready();
    let call = h.call("c1");
    let batch = format!(
        "[{}, {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}}]",
        call_answer(2, "b")
    );
    h.json(call, None, &batch);
    assert_eq!(h.results[0].1, r#"[{"type":"text","text":"b"}]"#);
}

/// A URL's userinfo, query and fragment (where an editor may put a token) are in no `Debug`
/// output of the machine or its requests, as MCP-15 keeps the headers' values; the request
/// still goes to the URL as given.
#[test]
fn mcp_15_a_url_with_credentials_is_shown_without_them() {
    let url: Url = "https://ada:s3cret-pw@mcp.example:8443/mcp?token=s3cret-q#s3cret-f"
        .parse()
        .unwrap();
    assert_eq!(redacted_url(&url), "https://mcp.example:8443/mcp");
    let plain: Url = "http://127.0.0.1:3001/sse".parse().unwrap();
    assert_eq!(redacted_url(&plain), "http://127.0.0.1:3001/sse");

    let now = Instant::now();
    let mut server = McpHttpServer::new("srv", url.clone(), now, HttpConfig::default());
    let mut sent = Vec::new();
    while let Some(action) = server.poll_action() {
        if let HttpAction::Send(request) = action {
            sent.push(request);
        }
    }
    let [request] = &sent[..] else {
        panic!("one initialize request: {sent:?}")
    };
    assert_eq!(request.url, url, "the driver gets the URL as given");
    for shown in [format!("{request:?}"), format!("{server:?}")] {
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("https://mcp.example:8443/mcp"), "{shown}");
    }
}
