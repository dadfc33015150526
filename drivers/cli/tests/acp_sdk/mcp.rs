//! The editor's MCP servers: over stdio to each pi through musewire's extension (HOST-10,
//! MCP-05), and over streamable HTTP and HTTP+SSE (MCP-18).

use super::*;

/// HOST-10, MCP-03, MCP-05 through the official SDK client: the editor's MCP server
/// (server-everything) reaches each pinned pi through musewire's extension, the scripted model
/// calls its `echo`, the turn's card shows the call, and the result reaches the model.
#[test]
fn host_10_mcp_05_an_editors_mcp_tool_is_called_by_each_pi_through_the_sdk() {
    let everything = peers::mcp_server("everything");
    if !everything.exists() {
        peers::missing("the reference MCP server everything");
        return;
    }
    each_at_once(&Pi::ALL, |&pi| {
        let Some(live) = Live::pi(pi, &format!("acp-sdk-mcp-{}", pi.name())) else {
            return;
        };
        let servers = json!([{"name": "everything", "command": "node",
            "args": [everything.to_string_lossy()], "env": []}])
        .to_string();
        // The MCP server's start-up budget is no part of the scenario: generous, for a
        // loaded machine.
        let out = Sdk::over("mcp", &live)
            .flags(&["--mcp-start-timeout".as_ref(), "60".as_ref()])
            .env("ACP_MCP_SERVERS", &servers)
            .env(
                "ACP_PROMPT",
                r#"[[tool mcp__everything__echo {"message":"through the sdk"}]]"#,
            )
            .run()
            .expect("the SDK is there");
        check_echo_turn_over_pi(
            &out,
            &live,
            "through the sdk",
            &format!("pi {}", pi.version()),
        );
    });
}

/// A pi's turn that called the editor's server-everything `echo` with `message` (HOST-10):
/// answered `end_turn`, the call's card shown, the tool's answer sent to the model; the
/// editor's end ends the bridge cleanly, the server with it, no notice to an editor gone
/// (MCP-01).
fn check_echo_turn_over_pi(out: &Value, live: &Live, message: &str, what: &str) {
    assert!(
        out["turn"]["result"].is_object(),
        "{what}: the turn was answered: {out:#}"
    );
    let turn = &out["turn"]["result"];
    assert_eq!(turn["stopReason"], "end_turn", "{what}: {out:#}");
    let updates = turn["updates"].as_array().expect("updates");
    assert!(
        updates.iter().any(|u| u["sessionUpdate"] == "tool_call"
            && u["title"]
                .as_str()
                .is_some_and(|t| t.contains("mcp__everything__echo"))),
        "{what}: the call's card: {out:#}"
    );
    let last = live
        .server
        .requests()
        .last()
        .expect("the model was called")
        .to_string();
    assert!(last.contains(&format!("Echo: {message}")), "{what}: {last}");
    assert_eq!(out["bridgeExit"], 0, "{what}: {out:#}");
}

/// The reference MCP server everything, run over HTTP in `mode` (`streamableHttp`, `sse`)
/// on a free loopback port; killed when dropped.
struct HttpEverything {
    child: std::process::Child,
    port: u16,
}

impl HttpEverything {
    /// Started and listening, or `None` when it is not installed (and skipping is allowed).
    fn start(mode: &str) -> Option<HttpEverything> {
        let script = peers::mcp_server("everything");
        if !script.exists() {
            peers::missing("the reference MCP server everything");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("node")
            .arg(script)
            .arg(mode)
            .env("PORT", port.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("node runs");
        let server = HttpEverything { child, port };
        // Generous: node's start on a loaded 2-core machine.
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(60),
                "server-everything ({mode}) did not listen on {port}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Some(server)
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// MCP-18 through the official SDK client: the editor's server-everything over streamable
/// HTTP (`http`) and over HTTP+SSE (`sse`), with a header the bridge sends but never shows;
/// the bundled agent calls its `echo` and the tool's answer reaches the turn.
#[test]
fn mcp_18_an_editors_http_and_sse_mcp_servers_reach_the_bundled_agent_through_the_sdk() {
    const TOKEN: &str = "Bearer mcp-18-not-shown";
    for (mode, kind, path) in [("streamableHttp", "http", "mcp"), ("sse", "sse", "sse")] {
        let Some(server) = HttpEverything::start(mode) else {
            return;
        };
        let sessions = scratch(&format!("acp-sdk-mcp-{kind}"));
        let url = format!("http://127.0.0.1:{}/{path}", server.port);
        let servers = json!([{"type": kind, "name": "everything", "url": url,
            "headers": [{"name": "Authorization", "value": TOKEN}]}])
        .to_string();
        let message = format!("over {kind}");
        let prompt = format!(
            "call mcp__everything__echo {}",
            json!({ "message": message })
        );
        // The server's start-up budget is no part of the scenario: generous, for a loaded
        // machine.
        let Some(out) = Sdk::new("mcp")
            .flags(&[
                "--mcp-start-timeout".as_ref(),
                "60".as_ref(),
                "--session-dir".as_ref(),
                sessions.as_os_str(),
            ])
            .env("ACP_MCP_SERVERS", &servers)
            .env("ACP_PROMPT", &prompt)
            .run()
        else {
            return;
        };
        // Each step it depends on: http and sse advertised, the session opened, the turn.
        let caps = &out["initialize"]["agentCapabilities"]["mcpCapabilities"];
        assert_eq!(caps, &json!({"http": true, "sse": true}), "{kind}: {out:#}");
        assert!(
            out["turn"]["result"].is_object(),
            "{kind}: the turn was answered: {out:#}"
        );
        let turn = &out["turn"]["result"];
        assert_eq!(turn["stopReason"], "end_turn", "{kind}: {out:#}");
        let text = text_of(turn, "agent_message_chunk");
        assert!(
            text.contains(&format!("mcp__everything__echo returned: Echo: {message}")),
            "{kind}: {text:?}: {out:#}"
        );
        // MCP-15: the header's value never reached the editor.
        assert!(!out.to_string().contains("mcp-18-not-shown"), "{out:#}");
        // The editor's end ends the bridge cleanly, the server's session with it (DELETE).
        assert_eq!(out["bridgeExit"], 0, "{kind}: {out:#}");
        drop(server);
    }
}

/// MCP-18, HOST-10 through the official SDK client: the editor's server-everything over
/// streamable HTTP reaches the newest pinned pi through musewire's extension; the scripted
/// model calls its `echo` and the result reaches the model.
#[test]
fn mcp_18_host_10_an_editors_http_mcp_server_reaches_pi_through_the_sdk() {
    let Some(server) = HttpEverything::start("streamableHttp") else {
        return;
    };
    let pi = *Pi::ALL.last().expect("a pinned pi");
    let Some(live) = Live::pi(pi, "acp-sdk-mcp-http-pi") else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let servers =
        json!([{"type": "http", "name": "everything", "url": url, "headers": []}]).to_string();
    // The MCP server's start-up budget is no part of the scenario: generous, for a loaded
    // machine.
    let out = Sdk::over("mcp", &live)
        .flags(&["--mcp-start-timeout".as_ref(), "60".as_ref()])
        .env("ACP_MCP_SERVERS", &servers)
        .env(
            "ACP_PROMPT",
            r#"[[tool mcp__everything__echo {"message":"over http to pi"}]]"#,
        )
        .run()
        .expect("the SDK is there");
    check_echo_turn_over_pi(
        &out,
        &live,
        "over http to pi",
        &format!("pi {}", pi.version()),
    );
}
