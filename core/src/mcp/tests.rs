use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::*;

fn drain(server: &mut McpServer) -> Vec<Action> {
    std::iter::from_fn(|| server.poll_action()).collect()
}

fn writes(actions: &[Action]) -> Vec<Value> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Write { bytes } => {
                assert_eq!(bytes.last(), Some(&b'\n'));
                Some(serde_json::from_slice(bytes).unwrap())
            }
            _ => None,
        })
        .collect()
}

fn line(value: Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&value).unwrap();
    bytes.push(b'\n');
    bytes
}

fn feed(server: &mut McpServer, now: Instant, value: Value) -> Vec<Action> {
    server.handle(now, Input::Stdout(&line(value)));
    drain(server)
}

const ECHO: &str = "mcp__srv__echo";

/// A server answered `initialize` and listed one tool, `echo`.
fn ready(now: Instant) -> McpServer {
    let mut server = McpServer::new("srv", now, McpConfig::default());
    drain(&mut server);
    feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"t","version":"1"}}}),
    );
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","description":"Echoes","inputSchema":{"type":"object"}}]}}),
    );
    assert!(matches!(&actions[..], [Action::Tools(t)] if t.len() == 1));
    server
}

fn call(server: &mut McpServer, now: Instant, id: &str) -> Vec<Action> {
    server.handle(
        now,
        Input::Call {
            id: id.into(),
            tool: ECHO.into(),
            arguments: json!({"message": "hi"}),
        },
    );
    drain(server)
}

fn result_of(actions: &[Action]) -> (String, String, bool) {
    actions
        .iter()
        .find_map(|a| match a {
            Action::Result {
                id,
                result,
                is_error,
            } => {
                let text = result
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text(t) => Some(t.text.clone()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                Some((id.clone(), text, *is_error))
            }
            _ => None,
        })
        .expect("a result")
}

#[test]
fn mcp_02_initialize_then_initialized_and_every_page_of_tools() {
    let now = Instant::now();
    let mut server = McpServer::new("my srv", now, McpConfig::default());
    let sent = writes(&drain(&mut server));
    assert_eq!(sent[0]["method"], "initialize");
    assert_eq!(sent[0]["params"]["protocolVersion"], "2025-06-18");
    assert_eq!(sent[0]["params"]["capabilities"], json!({}));
    assert_eq!(sent[0]["params"]["clientInfo"]["name"], "musewire");
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}}),
    );
    let sent = writes(&actions);
    assert_eq!(
        sent[0],
        json!({"jsonrpc":"2.0","method":"notifications/initialized"})
    );
    assert_eq!(sent[1]["method"], "tools/list");
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"p2"}}),
    );
    let sent = writes(&actions);
    assert_eq!(sent[0]["params"], json!({"cursor":"p2"}));
    assert!(!actions.iter().any(|a| matches!(a, Action::Tools(_))));
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}}),
    );
    let Some(Action::Tools(tools)) = actions.first() else {
        panic!("{actions:?}")
    };
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["mcp__my_srv__a", "mcp__my_srv__b"]);
    assert!(server.owns("mcp__my_srv__a") && !server.owns("mcp__my_srvx__a"));
    assert_eq!(server.poll_timeout(), None);
}

#[test]
fn mcp_02_a_server_without_tools_is_not_listed() {
    let now = Instant::now();
    let mut server = McpServer::new("srv", now, McpConfig::default());
    drain(&mut server);
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}),
    );
    assert_eq!(writes(&actions).len(), 1);
    assert_eq!(server.poll_timeout(), None);
}

#[test]
fn mcp_06_a_server_silent_past_its_start_up_budget_fails_with_a_notice() {
    let now = Instant::now();
    let mut server = McpServer::new("srv", now, McpConfig::default());
    drain(&mut server);
    assert_eq!(server.poll_timeout(), Some(now + INIT_BUDGET));
    server.handle(now + Duration::from_secs(9), Input::Timeout);
    assert!(drain(&mut server).is_empty());
    server.handle(now + INIT_BUDGET, Input::Timeout);
    let actions = drain(&mut server);
    assert_eq!(
        actions,
        [
            Action::Notice("MCP server \"srv\" did not answer initialize within 10 s".into()),
            Action::Stop
        ]
    );
    assert_eq!(server.poll_timeout(), None);
    // A call now is answered at once, as an error.
    let (_, text, is_error) = result_of(&call(&mut server, now + INIT_BUDGET, "h1"));
    assert!(is_error && text.contains("is not running"), "{text}");
}

#[test]
fn mcp_05_a_call_is_tools_call_and_its_content_goes_through_blocks() {
    let now = Instant::now();
    let mut server = ready(now);
    let sent = writes(&call(&mut server, now, "h1"));
    assert_eq!(
        sent[0],
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}})
    );
    assert!(server.has_call("h1"));
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":2,"result":{"content":[
            {"type":"text","text":"Echo: hi"},
            {"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},
            {"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}
        ]}}),
    );
    let [Action::Result {
        id,
        result,
        is_error: false,
    }] = &actions[..]
    else {
        panic!("{actions:?}")
    };
    assert_eq!(id, "h1");
    assert_eq!(result.content[0], ContentBlock::text("Echo: hi"));
    assert_eq!(
        result.content[1],
        ContentBlock::image("iVBORw0KGgo=", "image/png")
    );
    let ContentBlock::Text(marker) = &result.content[2] else {
        panic!("{result:?}")
    };
    assert!(marker.text.starts_with("[Audio not shown"), "{marker:?}");
    assert!(!server.has_call("h1"));
}

#[test]
fn mcp_05_an_mcp_error_or_a_tool_error_is_an_error_result() {
    let now = Instant::now();
    let mut server = ready(now);
    call(&mut server, now, "h1");
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad arguments"}}),
    );
    let (_, text, is_error) = result_of(&actions);
    assert!(is_error);
    assert_eq!(
        text,
        "MCP server \"srv\" failed tools/call \"echo\": bad arguments (code -32602)"
    );
    call(&mut server, now, "h2");
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"no"}],"isError":true}}),
    );
    assert_eq!(result_of(&actions), ("h2".into(), "no".into(), true));
    call(&mut server, now, "h3");
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":4,"result":{"content":[],"structuredContent":{"n":1}}}),
    );
    assert_eq!(
        result_of(&actions),
        ("h3".into(), "{\"n\":1}".into(), false)
    );
}

#[test]
fn mcp_05_a_call_past_its_budget_is_an_error_and_cancelled() {
    let now = Instant::now();
    let mut server = ready(now);
    call(&mut server, now, "h1");
    assert_eq!(server.poll_timeout(), Some(now + CALL_BUDGET));
    server.handle(now + CALL_BUDGET, Input::Timeout);
    let actions = drain(&mut server);
    assert_eq!(
        writes(&actions),
        [
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"no answer within the call budget"}})
        ]
    );
    let (id, text, is_error) = result_of(&actions);
    assert_eq!(id, "h1");
    assert!(is_error);
    assert_eq!(
        text,
        "MCP server \"srv\" did not answer tools/call \"echo\" within 60 s"
    );
    // A late answer is dropped.
    let late = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":2,"result":{"content":[]}}),
    );
    assert!(late.is_empty());
}

#[test]
fn mcp_05_a_withdrawn_call_is_cancelled_and_not_answered() {
    let now = Instant::now();
    let mut server = ready(now);
    call(&mut server, now, "h1");
    server.handle(now, Input::Cancel { id: "h1".into() });
    let actions = drain(&mut server);
    assert_eq!(
        writes(&actions),
        [
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the agent withdrew the call"}})
        ]
    );
    assert_eq!(actions.len(), 1);
    assert!(feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":2,"result":{"content":[]}})
    )
    .is_empty());
}

#[test]
fn mcp_08_a_call_for_no_tool_of_the_server_is_answered_at_once() {
    let now = Instant::now();
    let mut server = ready(now);
    server.handle(
        now,
        Input::Call {
            id: "h1".into(),
            tool: "mcp__srv__nope".into(),
            arguments: json!({}),
        },
    );
    let actions = drain(&mut server);
    assert!(writes(&actions).is_empty());
    let (_, text, is_error) = result_of(&actions);
    assert!(is_error);
    assert_eq!(text, "MCP server \"srv\" has no tool \"mcp__srv__nope\"");
}

#[test]
fn mcp_04_a_changed_list_is_listed_again() {
    let now = Instant::now();
    let mut server = ready(now);
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"}),
    );
    assert_eq!(writes(&actions)[0]["method"], "tools/list");
    // Another change while that listing is under way lists once more after it.
    assert!(feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})
    )
    .is_empty());
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":2,"result":{"tools":[]}}),
    );
    assert_eq!(actions[0], Action::Tools(Vec::new()));
    assert_eq!(writes(&actions)[0]["id"], 3);
}

#[test]
fn mcp_06_garbage_withdraws_the_tools_and_fails_the_calls() {
    let now = Instant::now();
    let mut server = ready(now);
    call(&mut server, now, "h1");
    server.handle(now, Input::Stdout(b"Server running on stdio\n"));
    let actions = drain(&mut server);
    assert_eq!(
        actions[0],
        Action::Notice(
            "MCP server \"srv\" wrote something that is not a JSON-RPC message; its tools are withdrawn"
                .into()
        )
    );
    assert_eq!(actions[1], Action::Tools(Vec::new()));
    let (id, text, is_error) = result_of(&actions);
    assert_eq!(id, "h1");
    assert!(is_error && text.contains("before tools/call \"echo\" was answered"));
    assert_eq!(actions.last(), Some(&Action::Stop));
    assert!(server.is_gone());
    // Nothing more comes of it.
    server.handle(now, Input::Exit);
    assert!(drain(&mut server).is_empty());
}

#[test]
fn mcp_06_an_exit_mid_call_answers_the_call() {
    let now = Instant::now();
    let mut server = ready(now);
    call(&mut server, now, "h1");
    server.handle(now, Input::Stdout(b"{\"jsonrpc\":\"2.0\","));
    server.handle(now, Input::StdoutEnd);
    let actions = drain(&mut server);
    assert!(matches!(&actions[0], Action::Notice(n) if n.contains("not a JSON-RPC message")));
    let (_, _, is_error) = result_of(&actions);
    assert!(is_error);
}

#[test]
fn mcp_06_stop_withdraws_quietly() {
    let now = Instant::now();
    let mut server = ready(now);
    server.handle(now, Input::Stop);
    assert_eq!(
        drain(&mut server),
        [Action::Tools(Vec::new()), Action::Stop]
    );
}

#[test]
fn mcp_07_ping_is_answered_and_other_requests_refused() {
    let now = Instant::now();
    let mut server = ready(now);
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":"p","method":"ping"}),
    );
    assert_eq!(
        writes(&actions),
        [json!({"jsonrpc":"2.0","id":"p","result":{}})]
    );
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}),
    );
    assert_eq!(writes(&actions)[0]["error"]["code"], -32601);
    // Notifications the client does not act on are ignored.
    assert!(feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}})
    )
    .is_empty());
}

#[test]
fn mcp_06_a_refused_initialize_fails() {
    let now = Instant::now();
    let mut server = McpServer::new("srv", now, McpConfig::default());
    drain(&mut server);
    let actions = feed(
        &mut server,
        now,
        json!({"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"unsupported version"}}),
    );
    assert_eq!(
        actions,
        [
            Action::Notice(
                "MCP server \"srv\" refused initialize: unsupported version (code -32600)".into()
            ),
            Action::Stop
        ]
    );
}
