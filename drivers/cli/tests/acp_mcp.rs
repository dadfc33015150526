//! MCP-01..09 live: `musewire acp` starts the editor's MCP servers and gives their tools to
//! the session's agent as host tools. The reference servers from npm
//! (`@modelcontextprotocol/server-everything` and `server-filesystem`, pinned in
//! conformance/peers) are called by the bundled agent's scripted model (`call TOOL {…}`) and by
//! omp on the scripted model server, and the tool's result reaches the model; a server that
//! crashes mid-call answers the call as an error with a notice, and one that never answers
//! `initialize` is given up on within the start-up budget, the session working on.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

use musewire_live::model_server::ModelServer;
use musewire_live::peers;

mod editor;
use editor::Stderr;

const WAIT: Duration = editor::AGENT_WAIT;

/// A `musewire acp` process spoken to in raw JSON-RPC lines.
struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    seen: Vec<Value>,
    /// Its stderr, for the failure messages.
    stderr: Stderr,
}

impl Bridge {
    fn start(mut command: Command) -> Bridge {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("musewire acp");
        let stderr = Stderr::capture(&mut child);
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(value) = serde_json::from_str(&line) {
                    if send.send(value).is_err() {
                        break;
                    }
                }
            }
        });
        let stdin = child.stdin.take();
        Bridge {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            stderr,
        }
    }

    /// Sends a request and reads until its answer: the answer.
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin.as_mut().unwrap(), "{request}").unwrap();
        loop {
            let line = self.lines.recv_timeout(WAIT).unwrap_or_else(|_| {
                panic!(
                    "no answer to {method}: {:?}\n--- musewire acp's stderr ---\n{}",
                    self.seen,
                    self.stderr.text()
                )
            });
            self.seen.push(line.clone());
            if line["id"] == json!(id) && line.get("method").is_none() {
                return line;
            }
        }
    }

    /// initialize + session/new in `cwd` with these servers: the session id.
    fn session(&mut self, cwd: &Path, servers: Value) -> String {
        let init = self.call(1, "initialize", json!({"protocolVersion": 1}));
        editor::result("initialize", &init, &self.stderr);
        let answer = self.call(2, "session/new", json!({"cwd": cwd, "mcpServers": servers}));
        editor::session_id(&answer, &self.stderr)
    }

    /// A prompt's turn: the agent's message text, after the prompt is answered.
    fn prompt(&mut self, id: u64, session: &str, text: &str) -> String {
        self.seen.clear();
        let answer = self.call(
            id,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        );
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        self.message_text()
    }

    /// The agent message text read so far.
    fn message_text(&self) -> String {
        self.seen
            .iter()
            .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
            .collect()
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("work")).unwrap();
    dir
}

/// `musewire acp` over the bundled agent, its sessions in `dir`.
fn bundled(dir: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_musewire"));
    command
        .arg("acp")
        .arg("--session-dir")
        .arg(dir.join("sessions"))
        .args(extra);
    command
}

fn node_server(name: &str, server: &str, args: &[&str]) -> Value {
    let mut all = vec![peers::mcp_server(server).to_string_lossy().into_owned()];
    all.extend(args.iter().map(|a| a.to_string()));
    json!({"name": name, "command": which("node"), "args": all, "env": []})
}

fn which(program: &str) -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
        .to_string_lossy()
        .into_owned()
}

fn servers_installed() -> bool {
    let ok = peers::mcp_server("everything").exists() && peers::mcp_server("filesystem").exists();
    if !ok {
        peers::missing("the reference MCP servers");
    }
    ok
}

#[test]
fn mcp_03_05_the_bundled_agent_calls_server_everythings_echo() {
    if !servers_installed() {
        return;
    }
    let dir = scratch("acp-mcp-everything");
    let mut bridge = Bridge::start(bundled(&dir, &[]));
    let work = dir.join("work");
    let session = bridge.session(&work, json!([node_server("everything", "everything", &[])]));
    let text = bridge.prompt(
        3,
        &session,
        r#"call mcp__everything__echo {"message":"hello from the editor's MCP server"}"#,
    );
    assert!(
        text.contains("mcp__everything__echo returned: Echo: hello from the editor's MCP server"),
        "{text}"
    );
    // MCP-05: another tool, its arguments passed through.
    let text = bridge.prompt(
        4,
        &session,
        "call mcp__everything__get-sum {\"a\":2,\"b\":40}",
    );
    assert!(text.contains("42"), "{text}");
}

#[test]
fn mcp_05_the_bundled_agent_reads_a_file_through_server_filesystem() {
    if !servers_installed() {
        return;
    }
    let dir = scratch("acp-mcp-filesystem");
    let work = dir.join("work");
    std::fs::write(work.join("note.txt"), "the note's text\n").unwrap();
    let mut bridge = Bridge::start(bundled(&dir, &[]));
    let fs = node_server("fs", "filesystem", &[work.to_str().unwrap()]);
    let session = bridge.session(&work, json!([fs]));
    let call = format!(
        "call mcp__fs__read_text_file {}",
        json!({"path": work.join("note.txt")})
    );
    let text = bridge.prompt(3, &session, &call);
    assert!(
        text.contains("mcp__fs__read_text_file returned: the note's text"),
        "{text}"
    );
}

/// A stdio MCP server in Python that lists one tool, `crash`, and exits when it is called.
const CRASHER: &str = r#"
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    method = m.get("method")
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "crasher", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "crash", "description": "Exits mid-call", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        os._exit(3)
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": result}), flush=True)
"#;

#[test]
fn mcp_06_09_a_server_that_crashes_mid_call_fails_the_call_and_the_session_goes_on() {
    if !servers_installed() {
        return;
    }
    let dir = scratch("acp-mcp-crash");
    let work = dir.join("work");
    let script = dir.join("crasher.py");
    std::fs::write(&script, CRASHER).unwrap();
    let mut bridge = Bridge::start(bundled(&dir, &[]));
    let crasher =
        json!({"name": "crasher", "command": which("python3"), "args": [script], "env": []});
    let session = bridge.session(
        &work,
        json!([crasher, node_server("everything", "everything", &[])]),
    );
    let text = bridge.prompt(3, &session, "call mcp__crasher__crash {}");
    assert!(
        text.contains(
            "mcp__crasher__crash failed: MCP server \"crasher\" exited before tools/call \"crash\" was answered"
        ) || text.contains("mcp__crasher__crash failed: MCP server \"crasher\" closed its stdout"),
        "{text}"
    );
    // The notice may come before the prompt's answer or after it: read until it is there.
    let mut all = text;
    while !all.contains("[MCP: MCP server \"crasher\"") {
        let line = bridge.lines.recv_timeout(WAIT).expect("the crash's notice");
        bridge.seen.push(line);
        all = bridge.message_text();
    }
    assert!(all.contains("its tools are withdrawn]"), "{all}");
    // The other server, and the session, go on.
    let text = bridge.prompt(
        4,
        &session,
        r#"call mcp__everything__echo {"message":"still here"}"#,
    );
    assert!(text.contains("returned: Echo: still here"), "{text}");
}

#[test]
fn mcp_02_06_a_server_that_never_answers_initialize_is_given_up_on() {
    let dir = scratch("acp-mcp-silent");
    let work = dir.join("work");
    let mut bridge = Bridge::start(bundled(&dir, &["--mcp-start-timeout", "1"]));
    let silent = json!({"name": "silent", "command": which("sleep"), "args": ["60"], "env": []});
    let session = bridge.session(&work, json!([silent]));
    let mut all = bridge.message_text();
    while !all.contains("[MCP: MCP server \"silent\" did not answer initialize within 1 s]") {
        let line = bridge
            .lines
            .recv_timeout(WAIT)
            .expect("the silent server's notice");
        bridge.seen.push(line);
        all = bridge.message_text();
    }
    let text = bridge.prompt(3, &session, "hello");
    assert!(text.contains("hello"), "{text}");
}

#[test]
fn mcp_03_05_omp_calls_server_everythings_echo_and_the_result_reaches_the_model() {
    if !servers_installed() || !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().expect("model server");
    let dir = peers::scratch("acp-mcp-omp");
    let (mut bridge, cwd) = bridge_over(peers::omp(&dir, &server.base_url()), &[]);
    let session = bridge.session(&cwd, json!([node_server("everything", "everything", &[])]));
    let text = bridge.prompt(
        3,
        &session,
        r#"[[tool mcp__everything__echo {"message":"through omp"}]]"#,
    );
    assert!(text.contains("returned"), "{text}");
    // The tool's result is in the conversation the model was sent.
    let requests = server.requests();
    let last = requests.last().expect("the model was called").to_string();
    assert!(last.contains("Echo: through omp"), "{last}");
    let first = requests.first().unwrap();
    let tools = first["tools"].to_string();
    assert!(tools.contains("mcp__everything__echo"), "{tools}");
    let _ = std::fs::remove_dir_all(dir);
}

/// `musewire acp` over `agent` (a peer's command, its env and cwd kept), with `extra` flags
/// before `--`: the bridge and the agent's cwd. The start-up budgets of the agent and of the
/// MCP servers are generous, for a loaded machine (no test here is about them over a real
/// agent).
fn bridge_over(agent: Command, extra: &[&str]) -> (Bridge, PathBuf) {
    let cwd = agent.get_current_dir().unwrap().to_path_buf();
    let mut acp = Command::new(env!("CARGO_BIN_EXE_musewire"));
    acp.arg("acp")
        .args(["--ready-timeout", "120", "--mcp-start-timeout", "60"])
        .args(extra)
        .arg("--")
        .arg(agent.get_program())
        .args(agent.get_args())
        .env_clear()
        .current_dir(&cwd);
    for (key, value) in agent.get_envs() {
        if let Some(value) = value {
            acp.env(key, value);
        }
    }
    (Bridge::start(acp), cwd)
}

/// `musewire acp` over pi `version`, with `extra` flags before `--`.
fn bridge_over_pi(pi: peers::Pi, dir: &Path, base_url: &str, extra: &[&str]) -> (Bridge, PathBuf) {
    bridge_over(peers::pi_version(pi, dir, base_url), extra)
}

/// pi (0.73.1 and 1.6.0) has no host tools of its own: `musewire acp` loads musewire's
/// extension into it (HOST-10), so the editor's MCP server's tool is offered to the model,
/// called by it, and its result reaches the model (MCP-03, MCP-05) as through omp.
fn pi_calls_the_servers_tool(pi: peers::Pi) {
    if !servers_installed() || !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().expect("model server");
    let dir = peers::scratch(&format!("acp-mcp-{}", pi.name()));
    let (mut bridge, cwd) = bridge_over_pi(pi, &dir, &server.base_url(), &[]);
    let session = bridge.session(&cwd, json!([node_server("everything", "everything", &[])]));
    let text = bridge.prompt(
        3,
        &session,
        r#"[[tool mcp__everything__echo {"message":"through pi"}]]"#,
    );
    assert!(text.contains("returned"), "{text}");
    let requests = server.requests();
    let last = requests.last().expect("the model was called").to_string();
    assert!(last.contains("Echo: through pi"), "{last}");
    let tools = requests.first().unwrap()["tools"].to_string();
    assert!(tools.contains("mcp__everything__echo"), "{tools}");
    // The extension lives in the agent's state folder, private.
    let file = dir.join("home/.local/state/musewire/pi/musewire-host-tools.js");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file)
        .expect("the extension file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{}", file.display());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn mcp_03_05_host_10_pi_0_73_calls_server_everythings_echo_through_the_extension() {
    pi_calls_the_servers_tool(peers::Pi::V0_73);
}

#[test]
fn mcp_03_05_host_10_pi_1_6_calls_server_everythings_echo_through_the_extension() {
    pi_calls_the_servers_tool(peers::Pi::V1_6);
}

/// Without the extension (`--no-pi-extension`) pi's answer to `set_host_tools` is "Unknown
/// command", so the editor is told the servers' tools did not reach the agent (MCP-03,
/// MCP-09) rather than left to find out, and the session works on.
#[test]
fn mcp_03_09_pi_without_the_extension_refuses_host_tools_and_the_editor_is_told() {
    if !servers_installed() || !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().expect("model server");
    let dir = peers::scratch("acp-mcp-pi-bare");
    let (mut bridge, cwd) = bridge_over_pi(
        peers::Pi::V1_6,
        &dir,
        &server.base_url(),
        &["--no-pi-extension"],
    );
    let session = bridge.session(&cwd, json!([node_server("everything", "everything", &[])]));
    let mut all = bridge.message_text();
    while !all.contains("[MCP: the agent refused the MCP servers' tools (set_host_tools)") {
        let line = bridge
            .lines
            .recv_timeout(WAIT)
            .expect("the refusal's notice");
        bridge.seen.push(line);
        all = bridge.message_text();
    }
    let text = bridge.prompt(3, &session, "[[text still working]]");
    assert!(text.contains("still working"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Prompts `text` (request 3), waits for the update `started` says the call is running in,
/// cancels the turn, and checks the prompt is answered `cancelled` well before the 30 s
/// operation would end (MCP-05, HOST-03).
fn cancel_mid_call(bridge: &mut Bridge, session: &str, text: &str, started: fn(&Value) -> bool) {
    let request = json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
        "sessionId": session, "prompt": [{"type": "text", "text": text}]}});
    writeln!(bridge.stdin.as_mut().unwrap(), "{request}").unwrap();
    loop {
        let line = bridge.lines.recv_timeout(WAIT).expect("the tool's card");
        if started(&line) {
            break;
        }
    }
    let cancel =
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}});
    writeln!(bridge.stdin.as_mut().unwrap(), "{cancel}").unwrap();
    let answer = loop {
        let line = bridge
            .lines
            .recv_timeout(Duration::from_secs(10))
            .expect("the prompt's answer well before the 30 s operation ends");
        if line["id"] == json!(3) {
            break line;
        }
    };
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
}

/// MCP-05 (HOST-03): `session/cancel` mid-call: the agent withdraws the host tool call, the
/// bridge cancels the `tools/call` at the server, the turn ends `cancelled`, and the server
/// goes on serving the next call.
#[test]
fn mcp_05_a_cancelled_turn_cancels_the_server_call() {
    if !servers_installed() {
        return;
    }
    let dir = scratch("acp-mcp-cancel");
    let work = dir.join("work");
    let mut bridge = Bridge::start(bundled(&dir, &[]));
    let session = bridge.session(&work, json!([node_server("everything", "everything", &[])]));
    // The call has started once its card is open.
    cancel_mid_call(
        &mut bridge,
        &session,
        "call mcp__everything__trigger-long-running-operation {\"duration\":30,\"steps\":3}",
        |line| line["params"]["update"]["sessionUpdate"] == "tool_call",
    );
    let text = bridge.prompt(
        4,
        &session,
        r#"call mcp__everything__echo {"message":"after the cancel"}"#,
    );
    assert!(text.contains("returned: Echo: after the cancel"), "{text}");
}

/// HOST-10 with MCP-05: `session/cancel` while pi runs a server's tool through the extension:
/// pi aborts the call, the extension says so, the bridge cancels the `tools/call`, the turn
/// ends `cancelled` long before the 30 s operation would, and the next call works.
#[test]
fn mcp_05_host_10_a_cancelled_turn_over_pi_cancels_the_server_call() {
    if !servers_installed() || !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().expect("model server");
    let dir = peers::scratch("acp-mcp-pi-cancel");
    let (mut bridge, cwd) = bridge_over_pi(peers::Pi::V1_6, &dir, &server.base_url(), &[]);
    let session = bridge.session(&cwd, json!([node_server("everything", "everything", &[])]));
    // The call runs once its card says so.
    cancel_mid_call(
        &mut bridge,
        &session,
        "[[tool mcp__everything__trigger-long-running-operation {\"duration\":30,\"steps\":3}]]",
        |line| line["params"]["update"]["status"] == "in_progress",
    );
    let text = bridge.prompt(
        4,
        &session,
        r#"[[tool mcp__everything__echo {"message":"after the cancel"}]]"#,
    );
    assert!(text.contains("returned"), "{text}");
    let last = server.requests().last().unwrap().to_string();
    assert!(last.contains("Echo: after the cancel"), "{last}");
    let _ = std::fs::remove_dir_all(dir);
}

/// MCP-17, MCP-18: an `http` server on a host that is not loopback is not reached over plain
/// http (its header would cross the network unencrypted) unless `--allow-insecure-mcp-http`:
/// the editor is told why and how, the header's value nowhere, and the session works on.
#[test]
fn mcp_18_plain_http_to_a_host_not_loopback_is_refused_with_a_notice() {
    let dir = scratch("acp-mcp-http-insecure");
    let work = dir.join("work");
    let mut bridge = Bridge::start(bundled(&dir, &[]));
    let web = json!({"type": "http", "name": "web", "url": "http://192.0.2.1/mcp",
        "headers": [{"name": "Authorization", "value": "Bearer mcp-18-kept"}]});
    let session = bridge.session(&work, json!([web]));
    let mut all = bridge.message_text();
    while !all.contains("[MCP: MCP server \"web\"") {
        let line = bridge
            .lines
            .recv_timeout(WAIT)
            .expect("the refusal's notice");
        bridge.seen.push(line);
        all = bridge.message_text();
    }
    assert!(all.contains("--allow-insecure-mcp-http"), "{all}");
    let text = bridge.prompt(3, &session, "hello");
    assert!(text.contains("hello"), "{text}");
    let seen = serde_json::to_string(&bridge.seen).unwrap();
    assert!(!seen.contains("mcp-18-kept"), "{seen}");
}

/// `--mcp-tls-root FILE` is read before the editor is served: a file without a certificate
/// fails `musewire acp` at once, naming the file.
#[test]
fn mcp_18_a_tls_root_file_without_a_certificate_fails_at_start() {
    let dir = scratch("acp-mcp-tls-root");
    let file = dir.join("roots.pem");
    std::fs::write(&file, "not a certificate\n").unwrap();
    let out = bundled(&dir, &["--mcp-tls-root", file.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .expect("musewire acp");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("roots.pem"), "{stderr}");
}
