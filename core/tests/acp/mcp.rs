//! The editor's MCP servers through the bridge (MCP-01, 03, 05, 06, 08, 09, 18): started with
//! the session (stdio, http, sse), their tools registered with the agent, the agent's calls
//! answered from them, their failures noted and their tools withdrawn.

use crate::support as acp_support;

use std::path::PathBuf;
use std::time::Duration;

use acp_support::Harness;
use musewire_core::acp::McpRead;
use musewire_core::mcp::http::{HttpInput, HttpRequest, Method, ResponseHead};
use serde_json::{json, Value};

const SERVER: &str = "musewire-1/mcp-0";

/// initialize + session/new (request 2) with the given servers + the agent's ready frame:
/// the session id (its agent key, no session folder); `session/new` may still be held (MCP-02).
fn session(h: &mut Harness, servers: Value) -> String {
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h.request(
        2,
        "session/new",
        json!({"cwd": "/work/p", "mcpServers": servers}),
    );
    let id = "musewire-1".to_owned();
    h.agent_lines(
        &id,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    // ACP-24: what the opening asks of the agent.
    h.answer_opening(&id);
    id
}

fn everything() -> Value {
    json!([{"name": "every thing", "command": "/usr/bin/node", "args": ["server.js"], "env": [{"name": "K", "value": "v"}]}])
}

/// The server answers initialize and lists `echo`.
fn serve_tools(h: &mut Harness) {
    h.mcp_lines(
        SERVER,
        &[json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}})],
    );
    h.mcp_lines(
        SERVER,
        &[json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","description":"Echoes back","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}]}})],
    );
}

fn agent_sent(h: &Harness, kind: &str) -> Vec<Value> {
    h.agent
        .iter()
        .filter(|f| f["type"] == kind)
        .cloned()
        .collect()
}

fn notices(h: &Harness) -> Vec<String> {
    h.editor
        .iter()
        .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
        .filter(|t| t.contains("[MCP:"))
        .map(str::to_owned)
        .collect()
}

fn host_call(h: &mut Harness, session: &str, id: &str, tool: &str) {
    h.agent_lines(
        session,
        &[json!({"type":"host_tool_call","id":id,"toolCallId":"t1","toolName":tool,"arguments":{"message":"hi"}})],
    );
}

#[test]
fn mcp_01_03_05_a_stdio_server_is_started_its_tools_registered_and_called() {
    let mut h = Harness::new();
    let id = session(&mut h, everything());
    assert_eq!(h.mcp_spawned.len(), 1);
    let (key, launch) = &h.mcp_spawned[0];
    assert_eq!(key, SERVER);
    assert_eq!(launch.command, PathBuf::from("/usr/bin/node"));
    assert_eq!(launch.args, ["server.js"]);
    assert_eq!(launch.env, [("K".to_owned(), "v".to_owned())]);
    assert_eq!(launch.cwd, PathBuf::from("/work/p"));
    assert_eq!(h.mcp[0].1["method"], "initialize");
    // MCP-02: session/new waits for the server, so its tools are there for the first prompt.
    assert!(h.answer(2).is_none());
    serve_tools(&mut h);
    assert_eq!(h.answer(2).unwrap()["result"]["sessionId"], id.as_str());
    let registered = agent_sent(&h, "set_host_tools");
    assert_eq!(registered.len(), 1, "{:?}", h.agent);
    let tools = registered[0]["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "mcp__every_thing__echo");
    assert_eq!(tools[0]["description"], "Echoes back");
    assert_eq!(tools[0]["parameters"]["required"], json!(["message"]));
    // The agent's answer to set_host_tools shows nothing.
    let request = registered[0]["id"].as_str().unwrap().to_owned();
    h.editor.clear();
    h.agent_lines(
        &id,
        &[json!({"id":request,"type":"response","command":"set_host_tools","success":true,"data":{"toolNames":["mcp__every_thing__echo"]}})],
    );
    assert!(h.editor.is_empty(), "{:?}", h.editor);

    host_call(&mut h, &id, "host-tool-1", "mcp__every_thing__echo");
    let call = h.mcp.last().unwrap().1.clone();
    assert_eq!(call["method"], "tools/call");
    assert_eq!(
        call["params"],
        json!({"name":"echo","arguments":{"message":"hi"}})
    );
    h.mcp_lines(
        SERVER,
        &[json!({"jsonrpc":"2.0","id":call["id"],"result":{"content":[{"type":"text","text":"Echo: hi"}]}})],
    );
    let results = agent_sent(&h, "host_tool_result");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["id"], "host-tool-1");
    assert_eq!(
        results[0]["result"]["content"],
        json!([{"type":"text","text":"Echo: hi"}])
    );
    assert_eq!(results[0].get("isError"), None);
}

#[test]
fn mcp_06_09_a_server_dying_mid_call_answers_the_call_withdraws_its_tools_and_says_so() {
    let mut h = Harness::new();
    let id = session(&mut h, everything());
    serve_tools(&mut h);
    host_call(&mut h, &id, "host-tool-1", "mcp__every_thing__echo");
    h.editor.clear();
    h.mcp_read(SERVER, McpRead::Exit);
    let results = agent_sent(&h, "host_tool_result");
    assert_eq!(results[0]["id"], "host-tool-1");
    assert_eq!(results[0]["isError"], true);
    let text = results[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        "MCP server \"every thing\" exited before tools/call \"echo\" was answered"
    );
    let registered = agent_sent(&h, "set_host_tools");
    assert_eq!(registered.len(), 2);
    assert_eq!(registered[1]["tools"], json!([]));
    assert_eq!(
        notices(&h),
        ["[MCP: MCP server \"every thing\" exited; its tools are withdrawn]\n"]
    );
    assert_eq!(h.editor[0]["params"]["sessionId"], id.as_str());
    assert_eq!(h.mcp_stopped, [SERVER]);
    // The session goes on: a later call is answered at once.
    host_call(&mut h, &id, "host-tool-2", "mcp__every_thing__echo");
    let results = agent_sent(&h, "host_tool_result");
    assert_eq!(results[1]["id"], "host-tool-2");
    assert_eq!(results[1]["isError"], true);
}

#[test]
fn mcp_06_a_server_that_never_answers_initialize_is_noted_and_stopped() {
    let mut h = Harness::new();
    session(&mut h, everything());
    assert!(h.answer(2).is_none());
    h.editor.clear();
    h.timeout(Duration::from_secs(10));
    assert!(h.answer(2).unwrap()["result"]["sessionId"].is_string());
    assert_eq!(
        notices(&h),
        ["[MCP: MCP server \"every thing\" did not answer initialize within 10 s]\n"]
    );
    assert_eq!(h.mcp_stopped, [SERVER]);
    assert!(agent_sent(&h, "set_host_tools").is_empty());
}

#[test]
fn mcp_01_09_18_entries_not_started_are_noted_and_servers_stop_with_the_session() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    let servers = json!([
        {"type": "http", "name": "web", "url": "ftp://example.com/mcp", "headers": []},
        {"name": "a", "command": "/bin/a", "args": [], "env": []},
        {"name": "a", "command": "/bin/b", "args": [], "env": []}
    ]);
    h.request(
        2,
        "session/new",
        json!({"cwd": "/work/p", "mcpServers": servers}),
    );
    assert_eq!(h.mcp_spawned.len(), 1);
    assert_eq!(h.mcp_spawned[0].0, "musewire-1/mcp-1");
    // A server without tools has started once it answers initialize.
    assert!(h.answer(2).is_none());
    h.mcp_lines(
        "musewire-1/mcp-1",
        &[json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{}}})],
    );
    // ACP-24: and once the agent has said its state and models.
    assert!(h.answer(2).is_none());
    h.answer_opening("musewire-1");
    let id = h.answer(2).unwrap()["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        notices(&h),
        [
            "[MCP: MCP server \"web\" is not started: its URL is not an http or https URL]\n",
            "[MCP: MCP server \"a\" is not started: another server of this session has that name]\n"
        ]
    );
    h.agent_exit(&id);
    assert_eq!(h.mcp_stopped, ["musewire-1/mcp-1"]);
}

#[test]
fn mcp_08_a_call_no_server_owns_is_answered_at_once() {
    let mut h = Harness::new();
    let id = session(&mut h, json!([]));
    host_call(&mut h, &id, "host-tool-1", "mcp__nobody__x");
    let results = agent_sent(&h, "host_tool_result");
    assert_eq!(results[0]["isError"], true);
    assert_eq!(
        results[0]["result"]["content"][0]["text"],
        "no running MCP server of this session has the tool \"mcp__nobody__x\""
    );
}

#[test]
fn mcp_03_a_name_two_servers_give_is_registered_once_and_called_on_the_first() {
    let mut h = Harness::new();
    let servers = json!([
        {"name": "a", "command": "/bin/a", "args": [], "env": []},
        {"name": "a_", "command": "/bin/b", "args": [], "env": []}
    ]);
    let id = session(&mut h, servers);
    for (server, tool) in [("musewire-1/mcp-0", "_b"), ("musewire-1/mcp-1", "b")] {
        h.mcp_lines(
            server,
            &[json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}})],
        );
        h.mcp_lines(
            server,
            &[json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":tool,"inputSchema":{"type":"object"}}]}})],
        );
    }
    let registered = agent_sent(&h, "set_host_tools");
    let last = registered.last().unwrap()["tools"]
        .as_array()
        .unwrap()
        .clone();
    let names: Vec<&str> = last.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["mcp__a___b"]);
    h.mcp.clear();
    host_call(&mut h, &id, "host-tool-1", "mcp__a___b");
    assert_eq!(h.mcp.len(), 1);
    assert_eq!(h.mcp[0].0, "musewire-1/mcp-0");
    assert_eq!(h.mcp[0].1["params"]["name"], "_b");
}

const SECRET: &str = "Bearer s3cret-token";

/// The last request to `server` whose body is the JSON-RPC `method` (MCP-18).
fn http_request(h: &Harness, server: &str, method: &str) -> HttpRequest {
    h.mcp_http
        .iter()
        .rev()
        .filter(|(key, _)| key == server)
        .map(|(_, request)| request)
        .find(|r| {
            r.body
                .as_deref()
                .and_then(|b| serde_json::from_slice::<Value>(b).ok())
                .is_some_and(|v| v["method"] == method)
        })
        .unwrap_or_else(|| panic!("no {method} sent to {server}: {:?}", h.mcp_http))
        .clone()
}

/// MCP-11: the server takes `notifications/initialized` (202); only then do later messages go.
fn accept_initialized(h: &mut Harness) {
    let initialized = http_request(h, SERVER, "notifications/initialized");
    let accepted = ResponseHead {
        status: 202,
        content_type: None,
        session_id: None,
    };
    h.mcp_http_answer(SERVER, initialized.exchange, accepted, b"");
}

fn request_id(request: &HttpRequest) -> Value {
    let body: Value = serde_json::from_slice(request.body.as_deref().unwrap()).unwrap();
    body["id"].clone()
}

const JSON: ResponseHead<'static> = ResponseHead {
    status: 200,
    content_type: Some("application/json"),
    session_id: Some("s-1"),
};

fn tools_list(id: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"result":{"tools":[{"name":"echo","description":"Echoes back","inputSchema":{"type":"object"}}]}})
}

/// No credential reached the editor, the agent or the Debug output of the driver's actions
/// (MCP-15, MCP-18).
fn assert_secret_kept(h: &Harness) {
    let shown = [
        serde_json::to_string(&h.editor).unwrap(),
        serde_json::to_string(&h.agent).unwrap(),
        format!("{:?}", h.mcp_http_opened),
        format!("{:?}", h.mcp_http),
        serde_json::to_string(&h.mcp_http_opened.iter().map(|(_, l)| l).collect::<Vec<_>>())
            .unwrap(),
    ];
    for text in shown {
        assert!(!text.contains("s3cret"), "{text}");
    }
}

#[test]
fn mcp_18_an_http_server_is_started_its_tools_registered_and_called_its_headers_kept() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    let caps = &h.answer(1).unwrap()["result"]["agentCapabilities"]["mcpCapabilities"];
    assert_eq!(caps, &json!({"http": true, "sse": true}));
    let servers = json!([{"type": "http", "name": "web", "url": "http://127.0.0.1:3001/mcp",
        "headers": [{"name": "Authorization", "value": SECRET}]}]);
    let id = session(&mut h, servers);
    // The driver is told where and with which headers, before the first request.
    assert_eq!(h.mcp_http_opened.len(), 1);
    let (key, launch) = &h.mcp_http_opened[0];
    assert_eq!(key, SERVER);
    assert_eq!(launch.url.as_str(), "http://127.0.0.1:3001/mcp");
    assert_eq!(launch.headers.values().collect::<Vec<_>>(), [SECRET]);
    assert!(h.mcp_spawned.is_empty());
    let init = http_request(&h, SERVER, "initialize");
    assert_eq!(init.method, Method::Post);
    assert_eq!(init.url.as_str(), "http://127.0.0.1:3001/mcp");
    // MCP-02: session/new waits for the server.
    assert!(h.answer(2).is_none());
    let answer = json!({"jsonrpc":"2.0","id":request_id(&init),"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}});
    h.mcp_http_answer(SERVER, init.exchange, JSON, answer.to_string().as_bytes());
    accept_initialized(&mut h);
    let list = http_request(&h, SERVER, "tools/list");
    assert_eq!(list.session_id.as_deref(), Some("s-1"));
    let answer = tools_list(request_id(&list));
    h.mcp_http_answer(SERVER, list.exchange, JSON, answer.to_string().as_bytes());
    assert_eq!(h.answer(2).unwrap()["result"]["sessionId"], id.as_str());
    let registered = agent_sent(&h, "set_host_tools");
    assert_eq!(registered.len(), 1, "{:?}", h.agent);
    assert_eq!(registered[0]["tools"][0]["name"], "mcp__web__echo");

    // MCP-05 over HTTP: the call is a POST, its answer an event stream here.
    host_call(&mut h, &id, "host-tool-1", "mcp__web__echo");
    let call = http_request(&h, SERVER, "tools/call");
    let body: Value = serde_json::from_slice(call.body.as_deref().unwrap()).unwrap();
    assert_eq!(
        body["params"],
        json!({"name":"echo","arguments":{"message":"hi"}})
    );
    let answer = json!({"jsonrpc":"2.0","id":body["id"],"result":{"content":[{"type":"text","text":"Echo: hi"}]}});
    let events = format!("event: message\ndata: {answer}\n\n");
    let head = ResponseHead {
        content_type: Some("text/event-stream"),
        ..JSON
    };
    h.mcp_http_answer(SERVER, call.exchange, head, events.as_bytes());
    let results = agent_sent(&h, "host_tool_result");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["id"], "host-tool-1");
    assert_eq!(
        results[0]["result"]["content"],
        json!([{"type":"text","text":"Echo: hi"}])
    );

    // The session's end ends the server's session: DELETE, then the server is stopped.
    h.agent_exit(&id);
    let (_, delete) = h.mcp_http.last().unwrap();
    assert_eq!(delete.method, Method::Delete);
    assert_eq!(delete.session_id.as_deref(), Some("s-1"));
    assert_eq!(h.mcp_stopped, [SERVER]);
    assert_secret_kept(&h);
}

#[test]
fn mcp_18_an_sse_server_is_reached_over_http_sse() {
    let mut h = Harness::new();
    let servers = json!([{"type": "sse", "name": "old", "url": "http://127.0.0.1:3001/sse",
        "headers": [{"name": "X-Key", "value": SECRET}]}]);
    let id = session(&mut h, servers);
    let (_, stream) = h.mcp_http[0].clone();
    assert_eq!(stream.method, Method::Get);
    assert_eq!(stream.url.as_str(), "http://127.0.0.1:3001/sse");
    let head = ResponseHead {
        status: 200,
        content_type: Some("text/event-stream"),
        session_id: None,
    };
    let exchange = stream.exchange;
    let event = |h: &mut Harness, text: String| {
        let read = McpRead::Http(HttpInput::Body {
            exchange,
            bytes: text.as_bytes(),
        });
        h.mcp_read(SERVER, read);
    };
    h.mcp_read(SERVER, McpRead::Http(HttpInput::Head { exchange, head }));
    event(
        &mut h,
        "event: endpoint\ndata: /messages?s=1\n\n".to_owned(),
    );
    let init = http_request(&h, SERVER, "initialize");
    assert_eq!(init.url.as_str(), "http://127.0.0.1:3001/messages?s=1");
    let accepted = ResponseHead {
        status: 202,
        content_type: None,
        session_id: None,
    };
    h.mcp_http_answer(SERVER, init.exchange, accepted, b"");
    let answer = json!({"jsonrpc":"2.0","id":request_id(&init),"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}}}});
    event(&mut h, format!("event: message\ndata: {answer}\n\n"));
    accept_initialized(&mut h);
    let list = http_request(&h, SERVER, "tools/list");
    h.mcp_http_answer(SERVER, list.exchange, accepted, b"");
    event(
        &mut h,
        format!(
            "event: message\ndata: {}\n\n",
            tools_list(request_id(&list))
        ),
    );
    assert_eq!(h.answer(2).unwrap()["result"]["sessionId"], id.as_str());
    let registered = agent_sent(&h, "set_host_tools");
    assert_eq!(registered[0]["tools"][0]["name"], "mcp__old__echo");
    assert_secret_kept(&h);
}

#[test]
fn mcp_18_an_unreachable_http_server_is_noted_and_the_session_opens() {
    let mut h = Harness::new();
    let servers = json!([{"type": "http", "name": "web", "url": "https://example.com/mcp",
        "headers": [{"name": "Authorization", "value": SECRET}]}]);
    session(&mut h, servers);
    let init = http_request(&h, SERVER, "initialize");
    assert!(h.answer(2).is_none());
    let error = "could not connect: refused";
    let read = McpRead::Http(HttpInput::Failed {
        exchange: init.exchange,
        error,
    });
    h.mcp_read(SERVER, read);
    assert!(h.answer(2).unwrap()["result"]["sessionId"].is_string());
    let notes = notices(&h);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("\"web\""), "{notes:?}");
    assert!(notes[0].contains(error), "{notes:?}");
    assert_eq!(h.mcp_stopped, [SERVER]);
    assert!(agent_sent(&h, "set_host_tools").is_empty());
    assert_secret_kept(&h);
}

#[test]
fn mcp_18_session_load_and_resume_start_their_http_and_sse_servers() {
    for (method, kind, first) in [
        ("session/load", "http", Method::Post),
        ("session/resume", "sse", Method::Get),
    ] {
        let mut h = Harness::new();
        h.bridge = musewire_core::acp::Bridge::new(musewire_core::acp::BridgeConfig {
            session_dir: Some("/state/sessions".into()),
            ..Default::default()
        });
        h.request(1, "initialize", json!({"protocolVersion": 1}));
        let servers = json!([{"type": kind, "name": "web", "url": "https://example.com/mcp",
            "headers": [{"name": "Authorization", "value": SECRET}]}]);
        h.request(
            2,
            method,
            json!({"sessionId": "s1", "cwd": "/work/p", "mcpServers": servers}),
        );
        assert_eq!(h.mcp_http_opened.len(), 1, "{method}");
        assert_eq!(h.mcp_http_opened[0].0, SERVER);
        assert_eq!(h.mcp_http[0].1.method, first, "{method}");
        assert_secret_kept(&h);
    }
}

#[test]
fn mcp_05_18_a_call_cancelled_over_http_drops_its_post_and_notifies_the_server() {
    let mut h = Harness::new();
    let servers = json!([{"type": "http", "name": "web", "url": "http://127.0.0.1:3001/mcp",
        "headers": [{"name": "Authorization", "value": SECRET}]}]);
    let id = session(&mut h, servers);
    let init = http_request(&h, SERVER, "initialize");
    let answer = json!({"jsonrpc":"2.0","id":request_id(&init),"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}});
    h.mcp_http_answer(SERVER, init.exchange, JSON, answer.to_string().as_bytes());
    accept_initialized(&mut h);
    let list = http_request(&h, SERVER, "tools/list");
    let answer = tools_list(request_id(&list));
    h.mcp_http_answer(SERVER, list.exchange, JSON, answer.to_string().as_bytes());
    host_call(&mut h, &id, "host-tool-1", "mcp__web__echo");
    let call = http_request(&h, SERVER, "tools/call");
    h.agent_lines(
        &id,
        &[json!({"type":"host_tool_cancel","id":"host-tool-9","targetId":"host-tool-1"})],
    );
    // MCP-05: notifications/cancelled for the call's request; MCP-11: its POST dropped.
    let cancelled = http_request(&h, SERVER, "notifications/cancelled");
    let body: Value = serde_json::from_slice(cancelled.body.as_deref().unwrap()).unwrap();
    assert_eq!(body["params"]["requestId"], request_id(&call));
    assert!(
        h.mcp_http_aborted
            .iter()
            .any(|(key, exchange)| key == SERVER && *exchange == call.exchange),
        "{:?}",
        h.mcp_http_aborted
    );
    // HOST-03: no result for a cancelled call.
    assert!(agent_sent(&h, "host_tool_result").is_empty());
    assert_secret_kept(&h);
}

#[test]
fn mcp_01_18_the_editors_end_ends_the_servers_session_without_a_notice() {
    let mut h = Harness::new();
    let servers = json!([{"type": "http", "name": "web", "url": "http://127.0.0.1:3001/mcp",
        "headers": []}]);
    session(&mut h, servers);
    let init = http_request(&h, SERVER, "initialize");
    let answer = json!({"jsonrpc":"2.0","id":request_id(&init),"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}});
    h.mcp_http_answer(SERVER, init.exchange, JSON, answer.to_string().as_bytes());
    accept_initialized(&mut h);
    let list = http_request(&h, SERVER, "tools/list");
    let answer = tools_list(request_id(&list));
    h.mcp_http_answer(SERVER, list.exchange, JSON, answer.to_string().as_bytes());
    assert_eq!(agent_sent(&h, "set_host_tools").len(), 1);
    h.editor.clear();
    h.bridge.handle(h.now, musewire_core::acp::Input::EditorEnd);
    h.drain();
    // The session's end: DELETE and the server stopped; its tools are not withdrawn from an
    // agent that is going (no set_host_tools, no notice to an editor that has gone).
    let (_, delete) = h.mcp_http.last().unwrap();
    assert_eq!(delete.method, Method::Delete);
    assert_eq!(h.mcp_stopped, [SERVER]);
    assert_eq!(agent_sent(&h, "set_host_tools").len(), 1);
    assert!(notices(&h).is_empty(), "{:?}", h.editor);
}

/// An editor's server URL with a credential in its userinfo or query (MCP-15, as for its
/// headers): the driver is told the URL as given; the editor, the agent (so the model), the
/// notices, the transcript form and every `Debug` output see it without the credential.
#[test]
fn mcp_15_a_server_url_with_credentials_reaches_only_the_driver() {
    let mut h = Harness::new();
    let url = "https://ada:s3cret-pw@mcp.example/mcp?token=s3cret-q";
    let servers = json!([{"type": "http", "name": "web", "url": url, "headers": []}]);
    session(&mut h, servers);
    let launch = h.mcp_http_opened[0].1.clone();
    assert_eq!(launch.url.as_str(), url);
    let init = http_request(&h, SERVER, "initialize");
    assert_eq!(init.url.as_str(), url);
    let read = McpRead::Http(HttpInput::Failed {
        exchange: init.exchange,
        error: "could not connect: refused",
    });
    h.mcp_read(SERVER, read);
    assert_eq!(notices(&h).len(), 1);
    assert_eq!(
        serde_json::to_value(&launch).unwrap()["url"],
        "https://mcp.example/mcp"
    );
    assert_secret_kept(&h);
}
