//! MCP over HTTP, sans-IO (rules MCP-10..16): [`McpHttpServer`] is an [`McpServer`] whose
//! messages travel as HTTP requests, in either of MCP's HTTP transports
//! ([`HttpTransport`]): streamable HTTP (protocol `2025-03-26` / `2025-06-18`) or the older
//! HTTP+SSE (`2024-11-05`).
//!
//! The machine holds the protocol; the driver holds the bytes. It asks for requests as
//! [`HttpAction::Send`] (method, URL, the protocol's headers, a JSON body), each with an
//! [`ExchangeId`]; the driver answers each with [`HttpInput::Head`] (status, content type,
//! `Mcp-Session-Id`), [`HttpInput::Body`] chunks and [`HttpInput::End`], or
//! [`HttpInput::Failed`] when the connection could not be made or broke, and drops the
//! exchange on [`HttpAction::Abort`]. The headers the editor gave (a token, say) are not the
//! machine's: the driver adds them to every request ([`SecretHeaders`], never shown), so no
//! action, notice or error the machine makes can hold them (MCP-15).
//!
//! Streamable HTTP (MCP-11, MCP-12, MCP-13): each JSON-RPC message is a POST accepting
//! `application/json, text/event-stream`; a request's answer is a JSON body or an event stream
//! carrying it (and maybe the server's requests and notifications); a notification's is 202.
//! The `Mcp-Session-Id` of the `initialize` answer goes on every later request, and
//! `MCP-Protocol-Version` after `initialize`; a 404 on a request with a session starts a new
//! session from `initialize` (at most 8 times). After `initialize` a GET opens
//! the server's own event stream (405: it has none), reopened with `Last-Event-ID` after the
//! server's `retry` or a doubling backoff, at most [`HttpConfig::reconnect_attempts`] times in
//! a row. A POST's event stream that ends before its answer is resumed by a GET with
//! `Last-Event-ID` when its events had ids, the same bounded number of times; otherwise the
//! request is answered as lost. On stop the session is ended with DELETE.
//!
//! HTTP+SSE (MCP-14): a GET opens the event stream; its `endpoint` event names the URL
//! (same origin only) the messages are POSTed to; answers come as `message` events on the
//! stream. A lost stream is a lost session: reopened with backoff, bounded, and started
//! again from `initialize`.
//!
//! Bounds (MCP-16): a JSON body or an event holds at most [`HttpConfig::max_message_bytes`]
//! (an answer over it is lost, an event over it skipped with a notice); at most
//! 128 exchanges are open; every response head is due within the call budget
//! (the start-up budget for `initialize` and the event streams), else the exchange is aborted
//! and its requests are answered as lost. A lost request is answered as a server error would
//! be: a call as an error result, `initialize` as a failed start. The protocol's rules
//! (MCP-02..07: budgets, listing, calls, cancellation by `notifications/cancelled`) are
//! [`McpServer`]'s, unchanged.
//!
//! ```
//! use std::time::Instant;
//! use musewire_core::mcp::http::{HttpAction, HttpConfig, HttpInput, McpHttpServer, ResponseHead};
//!
//! let now = Instant::now();
//! let url = "http://127.0.0.1:3001/mcp".parse().unwrap();
//! let mut server = McpHttpServer::new("everything", url, now, HttpConfig::default());
//! let Some(HttpAction::Send(post)) = server.poll_action() else { panic!() };
//! assert_eq!(post.method.as_str(), "POST");
//! let head = ResponseHead { status: 200, content_type: Some("application/json"), session_id: Some("s1") };
//! server.handle(now, HttpInput::Head { exchange: post.exchange, head });
//! let body = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}"#;
//! server.handle(now, HttpInput::Body { exchange: post.exchange, bytes: body });
//! server.handle(now, HttpInput::End { exchange: post.exchange });
//! let Some(HttpAction::Send(initialized)) = server.poll_action() else { panic!() };
//! assert_eq!(initialized.session_id.as_deref(), Some("s1"));
//! assert_eq!(initialized.protocol_version.as_deref(), Some("2025-06-18"));
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use url::Url;

use super::sse::{SseDecoder, SseItem};
use super::{Action, Input, McpConfig, McpServer, MAX_LINE_BYTES};
use crate::wire::{HostToolDefinition, ToolResult};

/// The most exchanges (requests with their responses, streams included) open at once; a
/// message past it is answered as lost.
pub(crate) const MAX_EXCHANGES: usize = 128;

/// The most messages held while the server has not named its endpoint (HTTP+SSE) or not yet
/// answered `notifications/initialized` (MCP-11).
pub(crate) const MAX_HELD: usize = 16;

/// How many times one server's session may be started again (404 on a session, a lost
/// HTTP+SSE stream) before the server counts as failed.
pub(crate) const MAX_REINITS: u32 = 8;

/// The longest `Mcp-Session-Id` taken (the spec allows visible ASCII; a longer one fails the
/// server).
pub(crate) const MAX_SESSION_ID_BYTES: usize = 1024;

/// `Accept` of a POST.
pub(crate) const ACCEPT_POST: &str = "application/json, text/event-stream";

/// `Accept` of a GET (an event stream).
pub(crate) const ACCEPT_STREAM: &str = "text/event-stream";

/// Which of MCP's HTTP transports a server speaks (ACP's `McpServer::Http` or `::Sse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpTransport {
    /// Streamable HTTP (`2025-03-26` on): one endpoint, POST per message, optional GET stream.
    Streamable,
    /// HTTP+SSE (`2024-11-05`): a GET event stream, which names the endpoint POSTs go to.
    Sse,
}

/// How an [`McpHttpServer`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpConfig {
    /// The protocol's budgets, as for a stdio server.
    pub mcp: McpConfig,
    /// The transport.
    pub transport: HttpTransport,
    /// The most bytes of one JSON body or one event (default 32 MiB, as a stdio
    /// line).
    pub max_message_bytes: usize,
    /// How many times in a row an event stream is reopened (or a POST's stream resumed)
    /// before giving up.
    pub reconnect_attempts: u32,
    /// The first reconnection delay when the server set no `retry`; doubled each attempt.
    pub backoff_base: Duration,
    /// The longest reconnection delay.
    pub backoff_max: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            mcp: McpConfig::default(),
            transport: HttpTransport::Streamable,
            max_message_bytes: MAX_LINE_BYTES,
            reconnect_attempts: 5,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
        }
    }
}

/// The headers the editor gave for a server (ACP `McpServer::Http { headers }`): the driver
/// sends them on every request. Their values are secrets: [`fmt::Debug`] shows the names
/// only, and the type has no `Display` or `Serialize`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretHeaders(Vec<(String, String)>);

impl SecretHeaders {
    /// The headers, as `(name, value)` pairs.
    pub fn new(headers: Vec<(String, String)>) -> Self {
        SecretHeaders(headers)
    }

    /// The pairs, to put on a request.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// The values, for a caller that checks no output holds them.
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(_, v)| v.as_str())
    }
}

impl fmt::Debug for SecretHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(n, _)| (n, "<redacted>")))
            .finish()
    }
}

/// A server's URL as a log line, a transcript, a notice or a `Debug` output shows it: scheme,
/// host, port and path only. The userinfo (`https://user:token@host/`), the query and the
/// fragment are left out, since an editor may put a credential there as it puts one in a
/// header (MCP-15); the driver alone sends the URL as given.
pub(crate) fn redacted_url(url: &Url) -> String {
    let mut shown = url.clone();
    // Fails only for a URL that cannot have userinfo.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.into()
}

/// One HTTP exchange the machine asked for: the key of the inputs that answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExchangeId(pub u64);

/// An HTTP method the machine uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Sends a JSON-RPC message: the answer is JSON or an event stream.
    Post,
    /// Opens or resumes (`Last-Event-ID`) the server's event stream.
    Get,
    /// Ends the server's session (`Mcp-Session-Id`).
    Delete,
}

impl Method {
    /// Its name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Post => "POST",
            Method::Get => "GET",
            Method::Delete => "DELETE",
        }
    }
}

/// A request to send. The driver adds the editor's [`SecretHeaders`] and nothing else of
/// its own but what HTTP itself needs (`Host`, `Content-Length`). Its `Debug` shows the URL
/// redacted (scheme, host, port and path only) and the body's length.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// The exchange its inputs name.
    pub exchange: ExchangeId,
    /// What the exchange is for.
    pub method: Method,
    /// The server's URL, or the endpoint its event stream named (HTTP+SSE).
    pub url: Url,
    /// The `Accept` header's value, as the method needs it.
    pub accept: &'static str,
    /// `Mcp-Session-Id`, once the server gave one.
    pub session_id: Option<String>,
    /// `MCP-Protocol-Version`, after `initialize` (streamable HTTP only).
    pub protocol_version: Option<String>,
    /// `Last-Event-ID`, when resuming a stream.
    pub last_event_id: Option<String>,
    /// One JSON-RPC message (`Content-Type: application/json`), for a POST.
    pub body: Option<Vec<u8>>,
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRequest")
            .field("exchange", &self.exchange)
            .field("method", &self.method)
            .field("url", &redacted_url(&self.url))
            .field("accept", &self.accept)
            .field(
                "session_id",
                &self.session_id.as_ref().map(|_| "<redacted>"),
            )
            .field("protocol_version", &self.protocol_version)
            .field("last_event_id", &self.last_event_id)
            .field("body_bytes", &self.body.as_ref().map(Vec::len))
            .finish()
    }
}

impl HttpRequest {
    /// The protocol's headers, as `(name, value)` pairs: `Accept`, `Content-Type` with a
    /// body, and the session, version and event id when set.
    pub fn headers(&self) -> Vec<(&'static str, &str)> {
        let mut headers = vec![("accept", self.accept)];
        if self.body.is_some() {
            headers.push(("content-type", "application/json"));
        }
        let optional = [
            ("mcp-session-id", &self.session_id),
            ("mcp-protocol-version", &self.protocol_version),
            ("last-event-id", &self.last_event_id),
        ];
        headers.extend(
            optional
                .into_iter()
                .filter_map(|(name, value)| Some((name, value.as_deref()?))),
        );
        headers
    }
}

/// Work for the driver, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum HttpAction {
    /// Send this request and answer with its [`HttpInput`]s.
    Send(HttpRequest),
    /// Drop this exchange (close its connection or stream); no more inputs are wanted for it.
    Abort(ExchangeId),
    /// The server's tools are now these (empty: withdrawn), as [`Action::Tools`].
    Tools(Vec<HostToolDefinition>),
    /// A host tool call's answer, as [`Action::Result`].
    Result {
        /// The host tool call's id.
        id: String,
        /// The result.
        result: ToolResult,
        /// Whether the call failed.
        is_error: bool,
    },
    /// Tell the user this, as [`Action::Notice`].
    Notice(String),
    /// The server is done with: every exchange but a DELETE just sent has been aborted; the
    /// driver lets that DELETE finish on its own (briefly) and takes no more transport inputs.
    /// Comes once.
    Stop,
}

/// A response's head, as the driver read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseHead<'a> {
    /// The status code.
    pub status: u16,
    /// `Content-Type`, if any.
    pub content_type: Option<&'a str>,
    /// `Mcp-Session-Id`, if any.
    pub session_id: Option<&'a str>,
}

/// One input to an [`McpHttpServer`].
#[derive(Debug, Clone, PartialEq)]
pub enum HttpInput<'a> {
    /// An exchange's response head.
    Head {
        /// The exchange, as its [`HttpRequest::exchange`] named it.
        exchange: ExchangeId,
        /// Its head.
        head: ResponseHead<'a>,
    },
    /// Bytes of an exchange's response body (chunked encoding already undone).
    Body {
        /// The exchange, as its [`HttpRequest::exchange`] named it.
        exchange: ExchangeId,
        /// The next bytes, in order: they may end anywhere, inside an event or a JSON body.
        bytes: &'a [u8],
    },
    /// An exchange's response body ended.
    End {
        /// The exchange, as its [`HttpRequest::exchange`] named it.
        exchange: ExchangeId,
    },
    /// An exchange could not be made, or broke before its end: `error` says why (the
    /// driver's words: it names no header value).
    Failed {
        /// The exchange, as its [`HttpRequest::exchange`] named it.
        exchange: ExchangeId,
        /// What failed, in the driver's words.
        error: &'a str,
    },
    /// The time of [`McpHttpServer::poll_timeout`] has come.
    Timeout,
    /// The agent calls one of the server's tools, as [`Input::Call`].
    Call {
        /// The host tool call's id.
        id: String,
        /// The host tool name.
        tool: String,
        /// The arguments.
        arguments: Value,
    },
    /// The agent withdrew a call, as [`Input::Cancel`].
    Cancel {
        /// The host tool call's id.
        id: String,
    },
    /// The session ends: the server's session is ended.
    Stop,
}

/// What one exchange is for.
#[derive(Debug, Clone)]
enum Kind {
    /// A POSTed message; `requests` are the ids of the requests in it; `initialized`: it is
    /// `notifications/initialized`, which later messages wait behind until its head (MCP-11).
    Post {
        requests: Vec<u64>,
        initialize: bool,
        initialized: bool,
    },
    /// The event stream (streamable: the optional GET; HTTP+SSE: the session's).
    Stream,
    /// A GET resuming a POST's event stream.
    Resume { requests: Vec<u64>, attempts: u32 },
    /// The session's DELETE.
    Delete,
}

#[derive(Debug, Clone)]
enum Body {
    AwaitingHead,
    Json(Vec<u8>),
    Events(Box<SseDecoder>),
    Ignored,
}

#[derive(Debug, Clone)]
struct Exchange {
    kind: Kind,
    body: Body,
    /// The head is due by then.
    head_due: Option<Instant>,
}

/// The event stream's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    /// Not opened (streamable: not yet initialized).
    Closed,
    /// Open or opening.
    Open(ExchangeId),
    /// To be reopened at this time.
    Waiting(Instant),
    /// The server has none (405), or it could not be reopened.
    None,
}

/// A POST's stream to resume.
#[derive(Debug, Clone)]
struct Resume {
    at: Instant,
    requests: Vec<u64>,
    last_event_id: String,
    attempts: u32,
}

/// The fields of a JSON-RPC message the transport reads.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    id: Option<u64>,
    #[serde(default, borrow)]
    method: Option<&'a str>,
}

/// One MCP server over HTTP, as its client. See the [module docs](self). Its `Debug` shows
/// its URLs redacted (scheme, host, port and path only).
pub struct McpHttpServer {
    inner: McpServer,
    config: HttpConfig,
    /// The endpoint (streamable) or the event stream's URL (HTTP+SSE).
    url: Url,
    /// Where messages are POSTed: the endpoint, or what the `endpoint` event named.
    post_url: Option<Url>,
    session: Option<String>,
    next_exchange: u64,
    exchanges: BTreeMap<ExchangeId, Exchange>,
    /// Messages waiting for the endpoint (HTTP+SSE) or for the server's answer to
    /// `notifications/initialized` (MCP-11), in order.
    held: VecDeque<Vec<u8>>,
    stream: Stream,
    /// Stream openings in a row without an event.
    stream_attempts: u32,
    /// The stream's last event id and `retry`, kept across reopenings.
    stream_last_id: Option<String>,
    stream_retry: Option<Duration>,
    resumes: Vec<Resume>,
    reinits: u32,
    stopped: bool,
    actions: VecDeque<HttpAction>,
}

impl fmt::Debug for McpHttpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHttpServer")
            .field("inner", &self.inner)
            .field("transport", &self.config.transport)
            .field("url", &redacted_url(&self.url))
            .field("post_url", &self.post_url.as_ref().map(redacted_url))
            .field("exchanges", &self.exchanges.len())
            .finish_non_exhaustive()
    }
}

impl McpHttpServer {
    /// A client for the server named `name` (as the editor named it) at `url`: it asks at
    /// once for its first request (the `initialize` POST, or the HTTP+SSE stream).
    pub fn new(name: &str, url: Url, now: Instant, config: HttpConfig) -> Self {
        let post_url = match config.transport {
            HttpTransport::Streamable => Some(url.clone()),
            HttpTransport::Sse => None,
        };
        let mut server = McpHttpServer {
            inner: McpServer::new(name, now, config.mcp),
            config,
            url,
            post_url,
            session: None,
            next_exchange: 0,
            exchanges: BTreeMap::new(),
            held: VecDeque::new(),
            stream: Stream::Closed,
            stream_attempts: 0,
            stream_last_id: None,
            stream_retry: None,
            resumes: Vec::new(),
            reinits: 0,
            stopped: false,
            actions: VecDeque::new(),
        };
        if config.transport == HttpTransport::Sse {
            server.open_stream(now);
        }
        server.pump(now);
        server
    }

    /// The protocol machine under the transport (its name, tools, state).
    pub fn server(&self) -> &McpServer {
        &self.inner
    }

    /// The session id the server gave, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// The exchanges open now.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn open_exchanges(&self) -> usize {
        self.exchanges.len()
    }

    /// The next action, if any.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<HttpAction> {
        self.actions.pop_front()
    }

    /// When [`HttpInput::Timeout`] is next due: a budget, a head's deadline, a reconnection.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.stopped {
            return self.inner.poll_timeout();
        }
        let stream = match self.stream {
            Stream::Waiting(at) => Some(at),
            _ => None,
        };
        self.exchanges
            .values()
            .filter_map(|e| e.head_due)
            .chain(self.resumes.iter().map(|r| r.at))
            .chain(stream)
            .chain(self.inner.poll_timeout())
            .min()
    }

    /// Hands in one input.
    pub fn handle(&mut self, now: Instant, input: HttpInput<'_>) {
        match input {
            HttpInput::Call {
                id,
                tool,
                arguments,
            } => self.inner.handle(
                now,
                Input::Call {
                    id,
                    tool,
                    arguments,
                },
            ),
            HttpInput::Cancel { id } => self.inner.handle(now, Input::Cancel { id }),
            HttpInput::Stop => self.inner.handle(now, Input::Stop),
            HttpInput::Timeout => {
                self.inner.handle(now, Input::Timeout);
                if !self.stopped {
                    self.timers(now);
                }
            }
            _ if self.stopped => {}
            HttpInput::Head { exchange, head } => self.head(now, exchange, head),
            HttpInput::Body { exchange, bytes } => self.body(now, exchange, bytes),
            HttpInput::End { exchange } => self.end(now, exchange, None),
            HttpInput::Failed { exchange, error } => self.end(now, exchange, Some(error)),
        }
        self.pump(now);
    }

    /// Takes the protocol machine's actions: its writes become POSTs.
    fn pump(&mut self, now: Instant) {
        while let Some(action) = self.inner.poll_action() {
            match action {
                Action::Write { mut bytes } => {
                    if bytes.last() == Some(&b'\n') {
                        bytes.pop();
                    }
                    if !self.stopped {
                        self.send_message(now, bytes);
                    }
                }
                Action::Tools(tools) => self.actions.push_back(HttpAction::Tools(tools)),
                Action::Result {
                    id,
                    result,
                    is_error,
                } => self.actions.push_back(HttpAction::Result {
                    id,
                    result,
                    is_error,
                }),
                Action::Notice(text) => self.actions.push_back(HttpAction::Notice(text)),
                Action::Stop => self.shut_down(now),
            }
        }
        if self.stopped {
            return;
        }
        self.release(now);
        // MCP-13: after `initialize` (and the server's answer to `initialized`), the server's
        // own stream.
        if self.config.transport == HttpTransport::Streamable
            && self.stream == Stream::Closed
            && !self.awaiting_initialized()
            && self.inner.protocol_version().is_some()
        {
            self.open_stream(now);
        }
        // A POST whose requests are all answered (or given up) is done with.
        let done: Vec<ExchangeId> = self
            .exchanges
            .iter()
            .filter(|(_, e)| match &e.kind {
                Kind::Post { requests, .. } | Kind::Resume { requests, .. } => {
                    !requests.is_empty()
                        && matches!(e.body, Body::AwaitingHead | Body::Events(_))
                        && !requests.iter().any(|r| self.inner.is_waiting(*r))
                }
                _ => false,
            })
            .map(|(id, _)| *id)
            .collect();
        for id in done {
            self.abort(id);
        }
        self.resumes
            .retain(|r| r.requests.iter().any(|q| self.inner.is_waiting(*q)));
    }

    fn exchange(&mut self, now: Instant, request: HttpRequest, kind: Kind, budget: Duration) {
        self.exchanges.insert(
            request.exchange,
            Exchange {
                kind,
                body: Body::AwaitingHead,
                head_due: Some(now + budget),
            },
        );
        self.actions.push_back(HttpAction::Send(request));
    }

    fn request(&mut self, method: Method, url: Url, accept: &'static str) -> HttpRequest {
        let exchange = ExchangeId(self.next_exchange);
        self.next_exchange += 1;
        let streamable = self.config.transport == HttpTransport::Streamable;
        HttpRequest {
            exchange,
            method,
            url,
            accept,
            session_id: self.session.clone().filter(|_| streamable),
            protocol_version: self
                .inner
                .protocol_version()
                .filter(|_| streamable)
                .map(str::to_owned),
            last_event_id: None,
            body: None,
        }
    }

    /// A message waits while the server has not named its endpoint (MCP-14) or not answered
    /// `notifications/initialized` (MCP-11), and behind any message already waiting.
    fn send_message(&mut self, now: Instant, bytes: Vec<u8>) {
        if self.post_url.is_none() || self.awaiting_initialized() || !self.held.is_empty() {
            if self.held.len() >= MAX_HELD {
                return self
                    .inner
                    .fail("was sent too many messages before it was ready for them");
            }
            self.held.push_back(bytes);
            return;
        }
        self.post(now, bytes);
    }

    /// Whether the `notifications/initialized` POST is open without its head: later messages
    /// sent on connections of their own could reach the server before it (MCP-11).
    fn awaiting_initialized(&self) -> bool {
        self.exchanges.values().any(|e| {
            matches!(
                e.kind,
                Kind::Post {
                    initialized: true,
                    ..
                }
            ) && matches!(e.body, Body::AwaitingHead)
        })
    }

    /// Sends the messages waiting, in order, while nothing holds them.
    fn release(&mut self, now: Instant) {
        while self.post_url.is_some() && !self.awaiting_initialized() {
            let Some(bytes) = self.held.pop_front() else {
                return;
            };
            self.post(now, bytes);
        }
    }

    /// MCP-11: one message, one POST.
    fn post(&mut self, now: Instant, bytes: Vec<u8>) {
        let Some(url) = self.post_url.clone() else {
            return;
        };
        let (requests, initialize, initialized) =
            match serde_json::from_slice::<Envelope<'_>>(&bytes) {
                Ok(Envelope {
                    id: Some(id),
                    method: Some(method),
                }) => (vec![id], method == "initialize", false),
                Ok(Envelope {
                    id: None,
                    method: Some(method),
                }) => (Vec::new(), false, method == "notifications/initialized"),
                _ => (Vec::new(), false, false),
            };
        if self.exchanges.len() >= MAX_EXCHANGES {
            for request in requests {
                self.inner.lost(
                    request,
                    &format!("{MAX_EXCHANGES} HTTP requests are open already"),
                );
            }
            return;
        }
        let mut request = self.request(Method::Post, url, ACCEPT_POST);
        if initialize {
            request.session_id = None;
            request.protocol_version = None;
        }
        request.body = Some(bytes);
        let budget = if initialize {
            self.config.mcp.init_budget
        } else {
            self.config.mcp.call_budget
        };
        self.exchange(
            now,
            request,
            Kind::Post {
                requests,
                initialize,
                initialized,
            },
            budget,
        );
    }

    fn open_stream(&mut self, now: Instant) {
        let mut request = self.request(Method::Get, self.url.clone(), ACCEPT_STREAM);
        if self.config.transport == HttpTransport::Streamable {
            request.last_event_id = self.stream_last_id.clone();
        }
        self.stream = Stream::Open(request.exchange);
        let budget = self.config.mcp.init_budget;
        self.exchange(now, request, Kind::Stream, budget);
    }

    fn abort(&mut self, exchange: ExchangeId) {
        if self.exchanges.remove(&exchange).is_some() {
            self.actions.push_back(HttpAction::Abort(exchange));
        }
    }

    fn head(&mut self, now: Instant, exchange: ExchangeId, head: ResponseHead<'_>) {
        let Some(entry) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        entry.head_due = None;
        let kind = entry.kind.clone();
        let media = media_type(head.content_type);
        let ok = (200..300).contains(&head.status);
        let streamable = self.config.transport == HttpTransport::Streamable;
        let max = self.config.max_message_bytes;
        let body = match media {
            Media::Json if ok && streamable => Body::Json(Vec::new()),
            Media::Events if ok && (streamable || matches!(kind, Kind::Stream)) => {
                Body::Events(Box::new(SseDecoder::new(max)))
            }
            _ => Body::Ignored,
        };
        let events = matches!(body, Body::Events(_));
        entry.body = body;
        // MCP-12: a session that has expired starts again.
        if head.status == 404 && self.session.is_some() && streamable {
            let initializing = matches!(
                kind,
                Kind::Post {
                    initialize: true,
                    ..
                }
            );
            if !initializing {
                return self.reinitialize(now, "lost its session (HTTP 404)");
            }
        }
        match kind {
            Kind::Post {
                requests,
                initialize,
                ..
            } => {
                if initialize && ok && streamable {
                    if let Some(id) = head.session_id {
                        if id.len() > MAX_SESSION_ID_BYTES
                            || !id.bytes().all(|b| (0x21..=0x7e).contains(&b))
                        {
                            return self.inner.fail("gave a session id that is not valid");
                        }
                        self.session = Some(id.to_owned());
                    }
                }
                let why = if !ok {
                    format!("HTTP status {}", head.status)
                } else if streamable && !events && !matches!(media, Media::Json) {
                    "the answer was neither JSON nor an event stream".to_owned()
                } else {
                    return;
                };
                self.exchanges.remove(&exchange);
                self.actions.push_back(HttpAction::Abort(exchange));
                for request in requests {
                    self.inner.lost(request, &why);
                }
            }
            Kind::Stream => {
                if events {
                    return;
                }
                self.abort(exchange);
                if streamable && head.status == 405 {
                    self.stream = Stream::None;
                } else {
                    self.stream_lost(now, &format!("HTTP status {}", head.status));
                }
            }
            Kind::Resume { requests, .. } => {
                if !events {
                    self.abort(exchange);
                    let why = format!("resuming its stream got HTTP status {}", head.status);
                    for request in requests {
                        self.inner.lost(request, &why);
                    }
                }
            }
            Kind::Delete => {}
        }
    }

    fn body(&mut self, now: Instant, exchange: ExchangeId, bytes: &[u8]) {
        let max = self.config.max_message_bytes;
        let Some(entry) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        let mut items = Vec::new();
        match &mut entry.body {
            Body::Json(buffer) => {
                if buffer.len() + bytes.len() > max {
                    let requests = requests_of(&entry.kind);
                    self.abort(exchange);
                    let why = format!("the answer was over {max} bytes");
                    for request in requests {
                        self.inner.lost(request, &why);
                    }
                    return;
                }
                buffer.extend_from_slice(bytes);
                return;
            }
            Body::Events(decoder) => decoder.push(bytes, &mut |item| items.push(item)),
            Body::AwaitingHead | Body::Ignored => return,
        }
        let is_stream = matches!(entry.kind, Kind::Stream);
        if is_stream {
            if let Body::Events(decoder) = &entry.body {
                if let Some(id) = decoder.last_event_id() {
                    self.stream_last_id = Some(id.to_owned());
                }
                self.stream_retry = decoder.retry().or(self.stream_retry);
            }
        }
        for item in items {
            match item {
                SseItem::TooLong => self
                    .inner
                    .notice(format!("sent an event over {max} bytes; it was skipped")),
                SseItem::Event(event) => {
                    if is_stream {
                        self.stream_attempts = 0;
                    }
                    match event.event.as_deref() {
                        None | Some("message") => self.deliver(now, event.data.as_bytes()),
                        Some("endpoint") if is_stream && !self.streamable() => {
                            self.endpoint(now, &event.data)
                        }
                        Some(_) => {}
                    }
                }
            }
        }
    }

    fn streamable(&self) -> bool {
        self.config.transport == HttpTransport::Streamable
    }

    /// MCP-14: the HTTP+SSE stream names where to POST; same origin only.
    fn endpoint(&mut self, now: Instant, data: &str) {
        if self.post_url.is_some() {
            return;
        }
        let Ok(url) = self.url.join(data.trim()) else {
            return self.inner.fail("named an endpoint that is not a URL");
        };
        if url.origin() != self.url.origin() {
            return self.inner.fail("named an endpoint on another origin");
        }
        self.post_url = Some(url);
        self.release(now);
    }

    /// One message (or a batch of them) to the protocol machine.
    fn deliver(&mut self, now: Instant, data: &[u8]) {
        let start = data.iter().position(|b| !b.is_ascii_whitespace());
        match start.map(|at| data[at]) {
            None => {}
            Some(b'[') => match serde_json::from_slice::<Vec<&RawValue>>(data) {
                Ok(batch) => {
                    for message in batch {
                        self.inner.message(now, message.get().as_bytes());
                    }
                }
                Err(_) => self.inner.message(now, data),
            },
            Some(_) => self.inner.message(now, data),
        }
    }

    /// An exchange ended (`error`: it broke).
    fn end(&mut self, now: Instant, exchange: ExchangeId, error: Option<&str>) {
        let Some(entry) = self.exchanges.remove(&exchange) else {
            return;
        };
        let streamable = self.streamable();
        let mut resume_from = None;
        match entry.body {
            Body::Json(buffer) if error.is_none() => self.deliver(now, &buffer),
            Body::Events(mut decoder) => {
                decoder.finish();
                resume_from = decoder.last_event_id().map(str::to_owned);
            }
            _ => {}
        }
        let why = match error {
            Some(error) => format!("the connection failed: {error}"),
            None => "the response ended without the answer".to_owned(),
        };
        match entry.kind {
            Kind::Post { requests, .. } if streamable => {
                self.unanswered(now, requests, resume_from, 0, &why)
            }
            Kind::Post { requests, .. } => {
                // HTTP+SSE: answers come on the stream; only a failed POST loses them.
                if error.is_some() {
                    for request in requests {
                        self.inner.lost(request, &why);
                    }
                }
            }
            Kind::Resume { requests, attempts } => {
                self.unanswered(now, requests, resume_from, attempts, &why)
            }
            Kind::Stream => {
                if self.stream == Stream::Open(exchange) {
                    self.stream_lost(now, &why);
                }
            }
            Kind::Delete => {}
        }
    }

    /// MCP-13: requests whose stream ended: resumed when it had event ids, else lost.
    fn unanswered(
        &mut self,
        now: Instant,
        requests: Vec<u64>,
        last_event_id: Option<String>,
        attempts: u32,
        why: &str,
    ) {
        let waiting: Vec<u64> = requests
            .into_iter()
            .filter(|r| self.inner.is_waiting(*r))
            .collect();
        if waiting.is_empty() {
            return;
        }
        match last_event_id {
            Some(last_event_id) if attempts < self.config.reconnect_attempts => {
                let at = now + self.delay(attempts + 1);
                self.resumes.push(Resume {
                    at,
                    requests: waiting,
                    last_event_id,
                    attempts: attempts + 1,
                });
            }
            _ => {
                for request in waiting {
                    self.inner.lost(request, why);
                }
            }
        }
    }

    /// The delay before reconnection attempt `attempt` (from 1): the server's `retry`, else
    /// the doubling backoff, at most [`HttpConfig::backoff_max`].
    fn delay(&self, attempt: u32) -> Duration {
        let backoff = self
            .config
            .backoff_base
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
        self.stream_retry
            .unwrap_or(backoff)
            .min(self.config.backoff_max)
    }

    /// MCP-13, MCP-14: the event stream ended or could not be opened.
    fn stream_lost(&mut self, now: Instant, why: &str) {
        self.stream_attempts += 1;
        if !self.streamable() {
            // HTTP+SSE: the session was the stream.
            let had_session = self.post_url.take().is_some();
            if self.stream_attempts > self.config.reconnect_attempts {
                self.stream = Stream::None;
                return self.inner.fail(&format!(
                    "lost its event stream and it could not be reopened ({why})"
                ));
            }
            if had_session {
                self.reinitialize(now, "lost its event stream");
            }
        } else if self.stream_attempts > self.config.reconnect_attempts {
            self.stream = Stream::None;
            return self.inner.notice(format!(
                "closed its event stream and it could not be reopened ({why}); changes to its tools are no longer seen"
            ));
        }
        if self.stream != Stream::None {
            self.stream = Stream::Waiting(now + self.delay(self.stream_attempts));
        }
    }

    /// MCP-12: a new session from `initialize`, bounded.
    fn reinitialize(&mut self, now: Instant, why: &str) {
        self.reinits += 1;
        if self.reinits > MAX_REINITS {
            return self
                .inner
                .fail(&format!("{why} more than {MAX_REINITS} times"));
        }
        self.session = None;
        let open: Vec<ExchangeId> = self.exchanges.keys().copied().collect();
        for exchange in open {
            self.abort(exchange);
        }
        self.resumes.clear();
        self.held.clear();
        if self.streamable() {
            self.stream = Stream::Closed;
        }
        self.inner.restart(now, why);
    }

    fn timers(&mut self, now: Instant) {
        let late: Vec<ExchangeId> = self
            .exchanges
            .iter()
            .filter(|(_, e)| e.head_due.is_some_and(|due| due <= now))
            .map(|(id, _)| *id)
            .collect();
        for exchange in late {
            self.actions.push_back(HttpAction::Abort(exchange));
            self.end(now, exchange, Some("no response in time"));
        }
        if let Stream::Waiting(at) = self.stream {
            if at <= now {
                self.open_stream(now);
            }
        }
        let (due, later): (Vec<Resume>, Vec<Resume>) = std::mem::take(&mut self.resumes)
            .into_iter()
            .partition(|r| r.at <= now);
        self.resumes = later;
        for resume in due {
            let Some(url) = self.post_url.clone() else {
                continue;
            };
            let mut request = self.request(Method::Get, url, ACCEPT_STREAM);
            request.last_event_id = Some(resume.last_event_id);
            let budget = self.config.mcp.call_budget;
            self.exchange(
                now,
                request,
                Kind::Resume {
                    requests: resume.requests,
                    attempts: resume.attempts,
                },
                budget,
            );
        }
    }

    /// The protocol machine stopped: every exchange aborted, the session DELETEd.
    fn shut_down(&mut self, now: Instant) {
        if self.stopped {
            return;
        }
        let open: Vec<ExchangeId> = self.exchanges.keys().copied().collect();
        for exchange in open {
            self.abort(exchange);
        }
        self.resumes.clear();
        self.held.clear();
        if self.session.is_some() && self.streamable() {
            let request = self.request(Method::Delete, self.url.clone(), ACCEPT_POST);
            let budget = self.config.mcp.init_budget;
            self.exchange(now, request, Kind::Delete, budget);
            self.exchanges.clear();
        }
        self.stream = Stream::None;
        self.stopped = true;
        self.actions.push_back(HttpAction::Stop);
    }
}

fn requests_of(kind: &Kind) -> Vec<u64> {
    match kind {
        Kind::Post { requests, .. } | Kind::Resume { requests, .. } => requests.clone(),
        Kind::Stream | Kind::Delete => Vec::new(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Media {
    Json,
    Events,
    Other,
}

fn media_type(content_type: Option<&str>) -> Media {
    let essence = content_type
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim();
    if essence.eq_ignore_ascii_case("application/json") {
        Media::Json
    } else if essence.eq_ignore_ascii_case("text/event-stream") {
        Media::Events
    } else {
        Media::Other
    }
}

#[cfg(test)]
mod tests;
