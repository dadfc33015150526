//! The bytes of MCP over HTTP (MCP-11..17): performs the requests a
//! [`musewire_core::mcp::http::McpHttpServer`] asks for and hands back what came, on smol.
//!
//! Each [`HttpAction::Send`] is one exchange: a connection of its own (TCP, then TLS for
//! `https`), hyper's HTTP/1.1 client on it (`hyper::client::conn::http1` over
//! `smol_hyper::rt::FuturesIo`; no second runtime), the request with the machine's protocol
//! headers and the editor's [`SecretHeaders`], and the response's head, body chunks and end
//! sent to the caller's bounded channel as [`HttpEvent`]s (a slow loop stops the reading:
//! backpressure down to the socket). Dropping the exchange's task ([`McpHttpTransport::abort`])
//! closes it. TLS is rustls with the ring provider, verifying against the platform's roots
//! (`rustls-platform-verifier`), or only against the roots [`McpHttpOptions::tls_roots`]
//! gives. A plain `http://` URL is refused unless its host is loopback or
//! [`McpHttpOptions::allow_insecure_http`] is set (`musewire acp --allow-insecure-mcp-http`).
//!
//! The secret headers are only ever written to the request: no error, event or `Debug` output
//! of this module holds them (MCP-15).
//!
//! One loop drives the machine and the transport (the ACP server's, or any caller's):
//!
//! ```no_run
//! use std::time::Instant;
//! use musewire_core::mcp::http::{HttpAction, HttpConfig, McpHttpServer, SecretHeaders};
//! use musewire_smol::mcp_http::{HttpEvent, McpHttpOptions, McpHttpTransport};
//!
//! async fn drive(tasks: &smol::Executor<'static>) -> Result<(), Box<dyn std::error::Error>> {
//!     let url: url::Url = "http://127.0.0.1:3001/mcp".parse()?;
//!     let mut transport =
//!         McpHttpTransport::new(&url, SecretHeaders::default(), &McpHttpOptions::default())?;
//!     let mut server = McpHttpServer::new("everything", url, Instant::now(), HttpConfig::default());
//!     let (events, inbox) = smol::channel::bounded::<HttpEvent>(16);
//!     loop {
//!         while let Some(action) = server.poll_action() {
//!             match action {
//!                 HttpAction::Tools(tools) => println!("{} tools", tools.len()),
//!                 HttpAction::Stop => return Ok(transport.stop()),
//!                 other => transport.perform(tasks, other, &events, |e| e),
//!             }
//!         }
//!         // (A real loop also sleeps until `server.poll_timeout()`.)
//!         let event = inbox.recv().await?;
//!         transport.finished(&event);
//!         server.handle(Instant::now(), event.as_input());
//!     }
//! }
//! let tasks = smol::Executor::new();
//! smol::block_on(tasks.run(drive(&tasks))).unwrap();
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_rustls::TlsConnector;
use http_body_util::{BodyExt, Empty, Full};
use hyper::header::{HeaderName, HeaderValue, CONTENT_TYPE, HOST};
use musewire_core::mcp::http::{
    ExchangeId, HttpAction, HttpInput, HttpRequest, Method, ResponseHead, SecretHeaders,
};
use rustls::ClientConfig;
use rustls_pki_types::{CertificateDer, ServerName};
use smol::channel::Sender;
use smol::net::TcpStream;
use smol_hyper::rt::FuturesIo;
use url::Url;

/// How long a DELETE sent as the server stops may take before it is dropped.
pub const DELETE_GRACE: Duration = Duration::from_secs(2);

/// How long a connection (TCP and TLS) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest body chunk handed on at once (hyper's frames are at most its read buffer).
pub const MAX_CHUNK: usize = 64 * 1024;

/// How the driver reaches HTTP MCP servers.
#[derive(Clone, Default)]
pub struct McpHttpOptions {
    /// Allow plain `http://` to hosts other than loopback (the headers, a token say, then
    /// cross the network unencrypted).
    pub allow_insecure_http: bool,
    /// Trust only these roots for `https` (a test CA, a company's); `None`: the platform's.
    pub tls_roots: Option<Vec<CertificateDer<'static>>>,
}

impl fmt::Debug for McpHttpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHttpOptions")
            .field("allow_insecure_http", &self.allow_insecure_http)
            .field("tls_roots", &self.tls_roots.as_ref().map(Vec::len))
            .finish()
    }
}

/// Why an HTTP MCP server cannot be reached: given to the user, so it names no header value.
#[derive(Debug, thiserror::Error)]
pub enum McpHttpError {
    /// The URL is neither `http` nor `https`, or has no host.
    #[error("the URL is not an http or https URL with a host")]
    NotHttp,
    /// Plain HTTP to a host that is not loopback, not allowed.
    #[error("plain http is used only on loopback (allow it with --allow-insecure-mcp-http)")]
    Insecure,
    /// A header the editor gave is not a valid HTTP header (its name is given, not its value).
    #[error("the header {0:?} is not a valid HTTP header")]
    BadHeader(String),
    /// TLS could not be set up.
    #[error("TLS could not be set up: {0}")]
    Tls(#[from] rustls::Error),
}

/// What happened to an exchange: an [`HttpInput`] the loop hands to the machine, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpEvent {
    /// The response's head.
    Head {
        /// The exchange.
        exchange: ExchangeId,
        /// Its status.
        status: u16,
        /// `Content-Type`.
        content_type: Option<String>,
        /// `Mcp-Session-Id`.
        session_id: Option<String>,
    },
    /// Body bytes.
    Body {
        /// The exchange.
        exchange: ExchangeId,
        /// The bytes (at most [`MAX_CHUNK`]).
        bytes: Vec<u8>,
    },
    /// The body ended.
    End {
        /// The exchange.
        exchange: ExchangeId,
    },
    /// The exchange failed: the error's text (no header value in it).
    Failed {
        /// The exchange.
        exchange: ExchangeId,
        /// Why.
        error: String,
    },
}

impl HttpEvent {
    /// The machine's input for it.
    pub fn as_input(&self) -> HttpInput<'_> {
        match self {
            HttpEvent::Head {
                exchange,
                status,
                content_type,
                session_id,
            } => HttpInput::Head {
                exchange: *exchange,
                head: ResponseHead {
                    status: *status,
                    content_type: content_type.as_deref(),
                    session_id: session_id.as_deref(),
                },
            },
            HttpEvent::Body { exchange, bytes } => HttpInput::Body {
                exchange: *exchange,
                bytes,
            },
            HttpEvent::End { exchange } => HttpInput::End {
                exchange: *exchange,
            },
            HttpEvent::Failed { exchange, error } => HttpInput::Failed {
                exchange: *exchange,
                error,
            },
        }
    }

    /// The exchange it belongs to.
    pub fn exchange(&self) -> ExchangeId {
        match self {
            HttpEvent::Head { exchange, .. }
            | HttpEvent::Body { exchange, .. }
            | HttpEvent::End { exchange }
            | HttpEvent::Failed { exchange, .. } => *exchange,
        }
    }
}

/// What every exchange of one server shares.
struct Client {
    headers: Vec<(HeaderName, HeaderValue)>,
    tls: Option<TlsConnector>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Client")
            .field("headers", &names)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

/// One HTTP MCP server's transport: its exchanges, by id. See the [module docs](self).
#[derive(Debug)]
pub struct McpHttpTransport {
    client: Arc<Client>,
    exchanges: BTreeMap<ExchangeId, smol::Task<()>>,
}

/// Whether `url` may be used under `options`.
pub fn check_url(url: &Url, options: &McpHttpOptions) -> Result<(), McpHttpError> {
    let host = url.host().ok_or(McpHttpError::NotHttp)?;
    match url.scheme() {
        "https" => Ok(()),
        "http" if options.allow_insecure_http => Ok(()),
        "http" => {
            let loopback = match host {
                url::Host::Domain(domain) => domain.eq_ignore_ascii_case("localhost"),
                url::Host::Ipv4(ip) => IpAddr::V4(ip).is_loopback(),
                url::Host::Ipv6(ip) => IpAddr::V6(ip).is_loopback(),
            };
            if loopback {
                Ok(())
            } else {
                Err(McpHttpError::Insecure)
            }
        }
        _ => Err(McpHttpError::NotHttp),
    }
}

/// The certificates of a PEM file (`-----BEGIN CERTIFICATE-----` blocks), as roots for
/// [`McpHttpOptions::tls_roots`] (`musewire acp --mcp-tls-root FILE`); an error names the
/// file and why, and a file without a certificate is one.
pub fn read_pem_roots(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, String> {
    use rustls_pki_types::pem::PemObject;
    let why = |e: rustls_pki_types::pem::Error| format!("{}: {e}", path.display());
    let roots = CertificateDer::pem_file_iter(path)
        .map_err(why)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(why)?;
    if roots.is_empty() {
        return Err(format!("{}: no PEM certificate in it", path.display()));
    }
    Ok(roots)
}

/// The TLS client configuration: ring, the platform's roots or the given ones.
pub fn tls_config(options: &McpHttpOptions) -> Result<ClientConfig, McpHttpError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder =
        ClientConfig::builder_with_provider(provider).with_safe_default_protocol_versions()?;
    let config = match &options.tls_roots {
        Some(roots) => {
            let mut store = rustls::RootCertStore::empty();
            for root in roots {
                store.add(root.clone())?;
            }
            builder.with_root_certificates(store).with_no_client_auth()
        }
        None => {
            use rustls_platform_verifier::BuilderVerifierExt;
            builder.with_platform_verifier()?.with_no_client_auth()
        }
    };
    Ok(config)
}

impl McpHttpTransport {
    /// The transport of the server at `url`, sending `headers` on every request.
    pub fn new(
        url: &Url,
        headers: SecretHeaders,
        options: &McpHttpOptions,
    ) -> Result<Self, McpHttpError> {
        check_url(url, options)?;
        let headers = headers
            .iter()
            .map(|(name, value)| {
                let bad = || McpHttpError::BadHeader(name.to_owned());
                let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
                let mut value = HeaderValue::from_str(value).map_err(|_| bad())?;
                value.set_sensitive(true);
                Ok((name, value))
            })
            .collect::<Result<Vec<_>, McpHttpError>>()?;
        let tls = match url.scheme() {
            "https" => Some(TlsConnector::from(Arc::new(tls_config(options)?))),
            _ => None,
        };
        Ok(McpHttpTransport {
            client: Arc::new(Client { headers, tls }),
            exchanges: BTreeMap::new(),
        })
    }

    /// Performs [`HttpAction::Send`] (an exchange started on `tasks`, its events sent as
    /// `wrap(event)` on `events`) and [`HttpAction::Abort`]; other actions are the caller's
    /// and are ignored here.
    pub fn perform<T: Send + 'static>(
        &mut self,
        tasks: &smol::Executor<'static>,
        action: HttpAction,
        events: &Sender<T>,
        wrap: impl Fn(HttpEvent) -> T + Send + Sync + 'static,
    ) {
        match action {
            HttpAction::Send(request) => self.send(tasks, request, events.clone(), wrap),
            HttpAction::Abort(exchange) => self.abort(exchange),
            _ => {}
        }
    }

    /// Starts one exchange.
    pub fn send<T: Send + 'static>(
        &mut self,
        tasks: &smol::Executor<'static>,
        request: HttpRequest,
        events: Sender<T>,
        wrap: impl Fn(HttpEvent) -> T + Send + Sync + 'static,
    ) {
        let exchange = request.exchange;
        let client = self.client.clone();
        let delete = request.method == Method::Delete;
        let task = tasks.spawn(async move {
            let run = exchange_task(client, request, &events, &wrap);
            let outcome = if delete {
                smol::future::or(run, async {
                    smol::Timer::after(DELETE_GRACE).await;
                    Err("the DELETE took too long".to_owned())
                })
                .await
            } else {
                run.await
            };
            if let Err(error) = outcome {
                let _ = events
                    .send(wrap(HttpEvent::Failed { exchange, error }))
                    .await;
            }
        });
        self.exchanges.insert(exchange, task);
    }

    /// Drops an exchange: its connection is closed, no more events come for it.
    pub fn abort(&mut self, exchange: ExchangeId) {
        self.exchanges.remove(&exchange);
    }

    /// Forgets an exchange whose last event (`End`, `Failed`) this is.
    pub fn finished(&mut self, event: &HttpEvent) {
        if matches!(event, HttpEvent::End { .. } | HttpEvent::Failed { .. }) {
            if let Some(task) = self.exchanges.remove(&event.exchange()) {
                task.detach();
            }
        }
    }

    /// The exchanges open.
    pub fn open(&self) -> usize {
        self.exchanges.len()
    }

    /// The machine has stopped ([`HttpAction::Stop`]): the exchanges left (the session's
    /// DELETE) finish on their own, within [`DELETE_GRACE`].
    pub fn stop(self) {
        for (_, task) in self.exchanges {
            task.detach();
        }
    }

    /// [`McpHttpTransport::stop`], for a caller that waits for the exchanges left (the
    /// session's DELETE, within [`DELETE_GRACE`]) before it ends: done once they are.
    pub fn finish(self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let tasks: Vec<smol::Task<()>> = self.exchanges.into_values().collect();
        async move {
            for task in tasks {
                task.await;
            }
        }
    }
}

/// One exchange: `Ok` once its end was sent, `Err` with the reason it failed.
async fn exchange_task<T>(
    client: Arc<Client>,
    request: HttpRequest,
    events: &Sender<T>,
    wrap: &impl Fn(HttpEvent) -> T,
) -> Result<(), String> {
    let exchange = request.exchange;
    let url = &request.url;
    let host = url.host_str().ok_or("the URL has no host")?.to_owned();
    let port = url.port_or_known_default().ok_or("the URL has no port")?;
    let connect = async {
        let tcp = TcpStream::connect((host.trim_matches(['[', ']']), port))
            .await
            .map_err(|e| format!("could not connect: {e}"))?;
        let _ = tcp.set_nodelay(true);
        Ok::<_, String>(tcp)
    };
    let timeout = async {
        smol::Timer::after(CONNECT_TIMEOUT).await;
        Err("could not connect in time".to_owned())
    };
    let tcp = smol::future::or(connect, timeout).await?;
    let request = build(&client, &request)?;
    match &client.tls {
        Some(tls) => {
            let name = ServerName::try_from(host.trim_matches(['[', ']']).to_owned())
                .map_err(|_| "the host is not a valid TLS name".to_owned())?;
            let handshake = tls.connect(name, tcp);
            let timeout = async {
                smol::Timer::after(CONNECT_TIMEOUT).await;
                Err(std::io::Error::other("the TLS handshake took too long"))
            };
            let stream = smol::future::or(handshake, timeout)
                .await
                .map_err(|e| format!("TLS failed: {e}"))?;
            converse(FuturesIo::new(stream), request, exchange, events, wrap).await
        }
        None => converse(FuturesIo::new(tcp), request, exchange, events, wrap).await,
    }
}

type Body = http_body_util::Either<Full<Bytes>, Empty<Bytes>>;

fn build(client: &Client, request: &HttpRequest) -> Result<hyper::Request<Body>, String> {
    let url = &request.url;
    let mut target = url.path().to_owned();
    if let Some(query) = url.query() {
        target.push('?');
        target.push_str(query);
    }
    let method = match request.method {
        Method::Post => hyper::Method::POST,
        Method::Get => hyper::Method::GET,
        Method::Delete => hyper::Method::DELETE,
    };
    let host = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or("")),
        None => url.host_str().unwrap_or("").to_owned(),
    };
    let mut builder = hyper::Request::builder()
        .method(method)
        .uri(target)
        .header(HOST, host);
    for (name, value) in request.headers() {
        builder = builder.header(name, value);
    }
    for (name, value) in &client.headers {
        builder = builder.header(name, value);
    }
    let body = match &request.body {
        Some(bytes) => Body::Left(Full::new(Bytes::from(bytes.clone()))),
        None => Body::Right(Empty::new()),
    };
    // The error names no value: an invalid one is the server's session id at most.
    builder
        .body(body)
        .map_err(|_| "the request could not be built (an invalid header)".to_owned())
}

async fn converse<I, T>(
    io: I,
    request: hyper::Request<Body>,
    exchange: ExchangeId,
    events: &Sender<T>,
    wrap: &impl Fn(HttpEvent) -> T,
) -> Result<(), String>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake::<_, Body>(io)
        .await
        .map_err(|e| format!("HTTP failed: {e}"))?;
    let talk = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("HTTP failed: {e}"))?;
        let text = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let head = HttpEvent::Head {
            exchange,
            status: response.status().as_u16(),
            content_type: text(CONTENT_TYPE.as_str()),
            session_id: text("mcp-session-id"),
        };
        let send = |event| async { events.send(wrap(event)).await.map_err(|_| String::new()) };
        send(head).await?;
        let mut body = response.into_body();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| format!("the response broke: {e}"))?;
            if let Ok(data) = frame.into_data() {
                for chunk in data.chunks(MAX_CHUNK) {
                    send(HttpEvent::Body {
                        exchange,
                        bytes: chunk.to_vec(),
                    })
                    .await?;
                }
            }
        }
        send(HttpEvent::End { exchange }).await?;
        Ok(())
    };
    // The connection is driven beside the exchange; it ends when the exchange does.
    let drive = async {
        match connection.await {
            Ok(()) => std::future::pending().await,
            Err(e) => Err(format!("HTTP failed: {e}")),
        }
    };
    smol::future::or(talk, drive).await
}
