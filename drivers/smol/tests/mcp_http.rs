//! MCP over HTTP end to end: the core's `McpHttpServer` driven by the smol transport against
//! server-everything (streamable HTTP and HTTP+SSE) and against small Rust servers on
//! loopback (TLS with a test CA, a stream dropped mid-answer, a header that must be sent and
//! never shown).

use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use musewire_core::mcp::http::{
    HttpAction, HttpConfig, HttpInput, HttpTransport, McpHttpServer, SecretHeaders,
};
use musewire_smol::mcp_http::{HttpEvent, McpHttpError, McpHttpOptions, McpHttpTransport};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{json, Value};
use smol::future::FutureExt;
use smol_hyper::rt::FuturesIo;

const SECRET: &str = "Bearer s3cret-token-4711";

/// What one session gave.
#[derive(Debug, Default)]
struct Outcome {
    tools: Vec<String>,
    results: Vec<(String, bool)>,
    notices: Vec<String>,
    /// Everything shown or logged: every action's and event's Debug, the notices, the results.
    log: String,
}

/// Runs a server: waits for its tools, calls `tool` with `{message: "hi"}`, takes the
/// answer, stops. Without tools (a failed start) it ends at the machine's stop.
fn session(
    url: &str,
    transport: HttpTransport,
    headers: SecretHeaders,
    options: &McpHttpOptions,
    tool: &str,
) -> Result<Outcome, McpHttpError> {
    let tasks = Arc::new(smol::Executor::<'static>::new());
    let url: url::Url = url.parse().unwrap();
    let mut out = Outcome::default();
    out.log.push_str(&format!("{options:?} {headers:?}\n"));
    let mut client = McpHttpTransport::new(&url, headers, options)?;
    out.log.push_str(&format!("{client:?}\n"));
    let config = HttpConfig {
        transport,
        ..HttpConfig::default()
    };
    let mut server = McpHttpServer::new("srv", url, Instant::now(), config);
    let (events, inbox) = smol::channel::bounded::<HttpEvent>(16);
    let run = async {
        let mut called = false;
        loop {
            while let Some(action) = server.poll_action() {
                out.log.push_str(&format!("{action:?}\n"));
                match action {
                    // The tools registered (kept when they are withdrawn at the stop).
                    HttpAction::Tools(tools) if tools.is_empty() => {}
                    HttpAction::Tools(tools) => {
                        out.tools = tools.into_iter().map(|t| t.name).collect();
                        if !called && out.tools.iter().any(|t| t == tool) {
                            called = true;
                            server.handle(
                                Instant::now(),
                                HttpInput::Call {
                                    id: "c1".into(),
                                    tool: tool.into(),
                                    arguments: json!({"message": "hi"}),
                                },
                            );
                        }
                    }
                    HttpAction::Result {
                        result, is_error, ..
                    } => {
                        let text = serde_json::to_string(&result.content).unwrap();
                        out.results.push((text, is_error));
                        server.handle(Instant::now(), HttpInput::Stop);
                    }
                    HttpAction::Notice(text) => out.notices.push(text),
                    HttpAction::Stop => return,
                    other => client.perform(&tasks, other, &events, |e| e),
                }
            }
            let timer = match server.poll_timeout() {
                Some(at) => smol::Timer::at(at),
                None => smol::Timer::never(),
            };
            let event = async { inbox.recv().await.ok() }
                .or(async {
                    timer.await;
                    None
                })
                .await;
            match event {
                Some(event) => {
                    out.log.push_str(&format!("{event:?}\n"));
                    client.finished(&event);
                    server.handle(Instant::now(), event.as_input());
                }
                None => server.handle(Instant::now(), HttpInput::Timeout),
            }
        }
    };
    let deadline = async {
        smol::Timer::after(Duration::from_secs(60)).await;
        panic!("the session did not end within 60 s");
    };
    smol::block_on(tasks.run(run.or(deadline)));
    client.stop();
    // The DELETE's grace.
    smol::block_on(tasks.run(smol::Timer::after(Duration::from_millis(50))));
    for (text, _) in &out.results {
        out.log.push_str(text);
    }
    for notice in &out.notices {
        out.log.push_str(notice);
    }
    Ok(out)
}

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn everything() -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "server-everything is not installed: run conformance/peers/install.sh"
    );
    eprintln!("skipping: server-everything is not installed (conformance/peers/install.sh)");
    None
}

struct Node(Child);

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts server-everything in `mode` on a free port, once it says (on its stderr) that it
/// listens there. A port found free can be taken before node binds it (by another test's
/// server or connection, which a connection check would take for node's): node then exits,
/// and another port is tried.
fn start_everything(mode: &str) -> Option<(Node, u16)> {
    use std::io::{BufRead, BufReader};
    use std::sync::mpsc::RecvTimeoutError;
    let script = everything()?;
    for _ in 0..5 {
        let port = free_port();
        let mut child = Command::new("node")
            .arg(&script)
            .arg(mode)
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs");
        let stderr = child.stderr.take().expect("node's stderr");
        let node = Node(child);
        // Both modes say "... on port N" once listening; the rest of what node says is read
        // and dropped (a full pipe would stop it), until it exits.
        let (listening, said) = std::sync::mpsc::channel();
        let line = format!("port {port}");
        std::thread::spawn(move || {
            for said in BufReader::new(stderr).lines().map_while(Result::ok) {
                if said.ends_with(&line) {
                    let _ = listening.send(());
                }
            }
        });
        match said.recv_timeout(Duration::from_secs(60)) {
            Ok(()) => return Some((node, port)),
            Err(RecvTimeoutError::Disconnected) => continue,
            Err(RecvTimeoutError::Timeout) => panic!("server-everything did not listen in 60 s"),
        }
    }
    panic!("server-everything found no free port in five tries");
}

/// MCP-11, MCP-17: server-everything over streamable HTTP: initialize, its tools, `echo`.
#[test]
fn mcp_11_17_server_everything_streamable_http() {
    let Some((_node, port)) = start_everything("streamableHttp") else {
        return;
    };
    let headers = SecretHeaders::new(vec![("x-api-key".into(), SECRET.into())]);
    let out = session(
        &format!("http://127.0.0.1:{port}/mcp"),
        HttpTransport::Streamable,
        headers,
        &McpHttpOptions::default(),
        "mcp__srv__echo",
    )
    .unwrap();
    assert!(out.tools.iter().any(|t| t == "mcp__srv__echo"), "{out:?}");
    assert_eq!(out.results.len(), 1, "{out:?}");
    assert!(out.results[0].0.contains("Echo: hi"), "{out:?}");
    assert!(!out.results[0].1);
    assert!(!out.log.contains(SECRET));
}

/// MCP-14, MCP-17: server-everything over HTTP+SSE.
#[test]
fn mcp_14_17_server_everything_sse() {
    let Some((_node, port)) = start_everything("sse") else {
        return;
    };
    let out = session(
        &format!("http://127.0.0.1:{port}/sse"),
        HttpTransport::Sse,
        SecretHeaders::default(),
        &McpHttpOptions::default(),
        "mcp__srv__echo",
    )
    .unwrap();
    assert!(out.tools.iter().any(|t| t == "mcp__srv__echo"), "{out:?}");
    assert_eq!(out.results.len(), 1, "{out:?}");
    assert!(out.results[0].0.contains("Echo: hi"), "{out:?}");
}

/// How the test server answers `tools/call`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Echo,
    /// An event stream that breaks off mid-event.
    DropMidStream,
}

type TestBody = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

fn full(status: u16, ct: Option<&str>, body: String) -> Response<TestBody> {
    let mut builder = Response::builder().status(status);
    if let Some(ct) = ct {
        builder = builder.header("content-type", ct);
    }
    builder = builder.header("mcp-session-id", "sess-1");
    builder
        .body(Full::new(Bytes::from(body)).map_err(|e| match e {}).boxed())
        .unwrap()
}

/// A minimal streamable HTTP MCP server: `initialize`, `tools/list` (one tool `echo`),
/// `tools/call`; 405 on GET; 401 without the expected header.
async fn answer(
    request: Request<Incoming>,
    mode: Mode,
    seen: Arc<Mutex<Vec<String>>>,
) -> Result<Response<TestBody>, std::convert::Infallible> {
    let auth = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if auth.as_deref() != Some(SECRET) {
        return Ok(full(401, None, String::new()));
    }
    if request.method() != hyper::Method::POST {
        return Ok(full(405, None, String::new()));
    }
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let message: Value = serde_json::from_slice(&body).unwrap();
    let method = message["method"].as_str().unwrap_or("").to_owned();
    seen.lock().unwrap().push(method.clone());
    let id = message["id"].clone();
    let result = match method.as_str() {
        "initialize" => {
            json!({"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"t","version":"1"}})
        }
        "tools/list" => {
            json!({"tools":[{"name":"echo","inputSchema":{"type":"object"}}]})
        }
        "tools/call" if mode == Mode::DropMidStream => {
            let (tx, rx) = smol::channel::bounded::<Result<Frame<Bytes>, std::io::Error>>(2);
            let partial = format!("id: 1\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"res");
            tx.try_send(Ok(Frame::data(Bytes::from(partial)))).unwrap();
            tx.try_send(Err(std::io::Error::other("dropped"))).unwrap();
            let response = Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(StreamBody::new(rx).boxed())
                .unwrap();
            return Ok(response);
        }
        "tools/call" => {
            let text = message["params"]["arguments"]["message"].clone();
            json!({"content":[{"type":"text","text":text}]})
        }
        _ => return Ok(full(202, None, String::new())),
    };
    let answer = json!({"jsonrpc":"2.0","id":id,"result":result}).to_string();
    Ok(full(200, Some("application/json"), answer))
}

struct TestServer {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
    _thread: std::thread::JoinHandle<()>,
}

/// Serves `answer` on loopback, over TLS when `tls` holds the server's certificate chain
/// and key.
fn test_server(
    mode: Mode,
    tls: Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>,
) -> TestServer {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let acceptor = tls.map(|(chain, key)| {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        futures_rustls::TlsAcceptor::from(Arc::new(config))
    });
    let shared = seen.clone();
    let thread = std::thread::spawn(move || {
        let executor = smol::Executor::new();
        smol::block_on(executor.run(async {
            let listener = smol::net::TcpListener::try_from(listener).unwrap();
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let seen = shared.clone();
                let acceptor = acceptor.clone();
                executor
                    .spawn(async move {
                        let service =
                            hyper::service::service_fn(move |r| answer(r, mode, seen.clone()));
                        let http = hyper::server::conn::http1::Builder::new();
                        match acceptor {
                            Some(acceptor) => {
                                if let Ok(tls) = acceptor.accept(tcp).await {
                                    let _ =
                                        http.serve_connection(FuturesIo::new(tls), service).await;
                                }
                            }
                            None => {
                                let _ = http.serve_connection(FuturesIo::new(tcp), service).await;
                            }
                        }
                    })
                    .detach();
            }
        }));
    });
    TestServer {
        addr,
        seen,
        _thread: thread,
    }
}

fn secret_headers() -> SecretHeaders {
    SecretHeaders::new(vec![("Authorization".into(), SECRET.into())])
}

/// A test CA and a certificate for `localhost` and 127.0.0.1 signed by it.
fn test_pki() -> (
    CertificateDer<'static>,
    Vec<CertificateDer<'static>>,
    PrivateKeyDer<'static>,
) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let params =
        CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    let cert = params.signed_by(&key, &ca).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    (ca.der().clone(), vec![cert.der().clone()], key)
}

/// MCP-15, MCP-17: the editor's header is sent on every request (the server refuses without
/// it) and appears in no action, event, notice, result or Debug output.
#[test]
fn mcp_15_17_headers_sent_and_never_shown() {
    let server = test_server(Mode::Echo, None);
    let url = format!("http://127.0.0.1:{}/mcp", server.addr.port());
    let out = session(
        &url,
        HttpTransport::Streamable,
        secret_headers(),
        &McpHttpOptions::default(),
        "mcp__srv__echo",
    )
    .unwrap();
    assert_eq!(
        out.results,
        vec![(r#"[{"type":"text","text":"hi"}]"#.to_owned(), false)]
    );
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ]
    );
    assert!(!out.log.contains("s3cret"), "{}", out.log);

    // Refused (no header): the failure's notice names the status, not the header.
    let out = session(
        &url,
        HttpTransport::Streamable,
        SecretHeaders::new(vec![("Authorization".into(), "Bearer wrong-s3cret".into())]),
        &McpHttpOptions::default(),
        "mcp__srv__echo",
    )
    .unwrap();
    assert!(out.notices[0].contains("HTTP status 401"), "{out:?}");
    assert!(!out.log.contains("s3cret"), "{}", out.log);
}

/// MCP-17: TLS against a test CA given by config; without it (the platform's roots) the
/// certificate is refused and the server fails with a notice.
#[test]
fn mcp_17_tls_with_a_test_root() {
    let (ca, chain, key) = test_pki();
    let server = test_server(Mode::Echo, Some((chain, key)));
    let url = format!("https://localhost:{}/mcp", server.addr.port());
    let options = McpHttpOptions {
        tls_roots: Some(vec![ca]),
        ..McpHttpOptions::default()
    };
    let out = session(
        &url,
        HttpTransport::Streamable,
        secret_headers(),
        &options,
        "mcp__srv__echo",
    )
    .unwrap();
    assert_eq!(
        out.results,
        vec![(r#"[{"type":"text","text":"hi"}]"#.to_owned(), false)]
    );

    let out = session(
        &url,
        HttpTransport::Streamable,
        secret_headers(),
        &McpHttpOptions::default(),
        "mcp__srv__echo",
    )
    .unwrap();
    assert!(out.tools.is_empty());
    assert!(out.notices[0].contains("TLS failed"), "{out:?}");
    assert!(!out.log.contains("s3cret"));
}

/// MCP-11, MCP-17: a stream dropped mid-event answers the call as an error at once.
#[test]
fn mcp_11_17_stream_dropped_mid_answer() {
    let server = test_server(Mode::DropMidStream, None);
    let url = format!("http://127.0.0.1:{}/mcp", server.addr.port());
    let started = Instant::now();
    let out = session(
        &url,
        HttpTransport::Streamable,
        secret_headers(),
        &McpHttpOptions::default(),
        "mcp__srv__echo",
    )
    .unwrap();
    assert_eq!(out.results.len(), 1, "{out:?}");
    assert!(out.results[0].1);
    assert!(
        out.results[0].0.contains("could not answer tools/call"),
        "{out:?}"
    );
    // Its event had no complete id: not resumed (no GET with a Last-Event-ID), answered at
    // once (a resumption would wait its backoff; 10 s is far within the budget even on a
    // busy machine).
    assert!(out.log.contains("last_event_id: None"), "{}", out.log);
    assert!(!out.log.contains("last_event_id: Some"), "{}", out.log);
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// MCP-17: plain http only on loopback unless allowed; other schemes refused.
#[test]
fn mcp_17_plain_http_only_on_loopback() {
    let check = |url: &str, allow: bool| {
        let options = McpHttpOptions {
            allow_insecure_http: allow,
            ..McpHttpOptions::default()
        };
        McpHttpTransport::new(&url.parse().unwrap(), secret_headers(), &options).map(|_| ())
    };
    assert!(matches!(
        check("http://mcp.example/mcp", false),
        Err(McpHttpError::Insecure)
    ));
    assert!(check("http://mcp.example/mcp", true).is_ok());
    assert!(check("http://localhost:1/mcp", false).is_ok());
    assert!(check("http://[::1]:1/mcp", false).is_ok());
    assert!(check("http://127.0.0.2:1/mcp", false).is_ok());
    assert!(matches!(
        check("ftp://mcp.example/", true),
        Err(McpHttpError::NotHttp)
    ));
    let bad = McpHttpTransport::new(
        &"http://localhost/".parse().unwrap(),
        SecretHeaders::new(vec![("x".into(), "s3cret\nvalue".into())]),
        &McpHttpOptions::default(),
    );
    let text = bad.unwrap_err().to_string();
    assert!(!text.contains("s3cret"), "{text}");
}

/// MCP-17, MCP-18: `read_pem_roots` (`musewire acp --mcp-tls-root FILE`) reads a CA's PEM
/// into the roots a TLS session with it then verifies against; a file without a certificate,
/// or none at all, is an error naming the file.
#[test]
fn mcp_18_pem_roots_are_read_for_a_private_ca() {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
    // This process's own folder: two runs of the tests at once do not share it.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-18-pem-roots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ca.pem");
    std::fs::write(&file, format!("# a comment line\n{}", ca.pem())).unwrap();
    let roots = musewire_smol::mcp_http::read_pem_roots(&file).unwrap();
    assert_eq!(roots, vec![ca.der().clone()]);

    std::fs::write(&file, "no certificate here\n").unwrap();
    let error = musewire_smol::mcp_http::read_pem_roots(&file).unwrap_err();
    assert!(error.contains("ca.pem"), "{error}");
    let error = musewire_smol::mcp_http::read_pem_roots(&dir.join("missing.pem")).unwrap_err();
    assert!(error.contains("missing.pem"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}
