//! ACP-06 with PAGE-07's fallback against the live pis: `musewire acp --session-dir DIR --
//! pi --mode rpc` makes a session and a turn; a second bridge loads it, and since pi does not
//! page (v1, no `get_messages_page`), the conversation comes back through `get_messages`:
//! the user's text and the model's answer are replayed before the load is answered.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

mod editor;
use editor::Stderr;

use musewire_live::model_server::ModelServer;
use musewire_live::peers::{self, Pi};

const WAIT: Duration = editor::AGENT_WAIT;

/// A `musewire acp` process spoken to in raw JSON-RPC lines.
struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Everything read so far, in order.
    seen: Vec<Value>,
    /// Its stderr, for the failure messages.
    stderr: Stderr,
}

impl Bridge {
    fn start(pi: &Command, sessions: &std::path::Path) -> Bridge {
        let mut command = Command::new(env!("CARGO_BIN_EXE_musewire"));
        command
            // The start-up budget (ACP-13) is no part of this test: generous on a loaded machine.
            .args(["acp", "--ready-timeout", "120", "--session-dir"])
            .arg(sessions)
            .arg("--")
            .arg(pi.get_program())
            .args(pi.get_args())
            .env_clear()
            .current_dir(pi.get_current_dir().unwrap());
        for (key, value) in pi.get_envs() {
            if let Some(value) = value {
                command.env(key, value);
            }
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("musewire acp");
        let stderr = Stderr::capture(&mut child);
        let stdout: ChildStdout = child.stdout.take().unwrap();
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

    /// The `session/update` updates read so far, and forgets them.
    fn take_updates(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.seen)
            .into_iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| m["params"]["update"].clone())
            .collect()
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn texts(updates: &[Value], kind: &str) -> Vec<String> {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .filter_map(|u| u["content"]["text"].as_str().map(str::to_owned))
        .collect()
}

fn load_replays_the_conversation(pi: Pi) {
    let server = ModelServer::start().unwrap();
    let dir = peers::scratch(&format!("acp-pi-load-{}", pi.version()));
    let sessions = dir.join("sessions");
    let command = peers::pi_version(pi, &dir, &server.base_url());
    let cwd = command.get_current_dir().unwrap().to_owned();
    let init = json!({"protocolVersion": 1, "clientCapabilities": {}});

    let session = {
        let mut bridge = Bridge::start(&command, &sessions);
        let init = bridge.call(1, "initialize", init.clone());
        editor::result("initialize", &init, &bridge.stderr);
        let new = bridge.call(2, "session/new", json!({"cwd": cwd, "mcpServers": []}));
        let session = editor::session_id(&new, &bridge.stderr);
        let answer = bridge.call(
            3,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "remember the lighthouse"}]}),
        );
        let result = editor::result("session/prompt", &answer, &bridge.stderr);
        assert_eq!(result["stopReason"], "end_turn", "{answer}");
        let said = texts(&bridge.take_updates(), "agent_message_chunk").concat();
        assert!(said.contains("You said: remember the lighthouse"), "{said}");
        session
    };
    assert!(
        sessions.join(format!("{session}.jsonl")).exists(),
        "pi keeps the session as DIR/<ACP id>.jsonl"
    );

    let mut bridge = Bridge::start(&command, &sessions);
    let requests_before = server.requests().len();
    let init = bridge.call(1, "initialize", init);
    editor::result("initialize", &init, &bridge.stderr);
    let loaded = bridge.call(
        2,
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    editor::result("session/load", &loaded, &bridge.stderr);
    let updates = bridge.take_updates();
    assert_eq!(
        texts(&updates, "user_message_chunk").concat(),
        "remember the lighthouse",
        "{updates:?}"
    );
    assert!(
        texts(&updates, "agent_message_chunk")
            .concat()
            .contains("You said: remember the lighthouse"),
        "{updates:?}"
    );
    assert_eq!(server.requests().len(), requests_before, "no model turn");
}

#[test]
fn acp_06_page_07_session_load_replays_pi_0_73s_conversation_through_get_messages() {
    if !peers::installed_or_skip() {
        return;
    }
    load_replays_the_conversation(Pi::V0_73);
}

#[test]
fn acp_06_page_07_session_load_replays_pi_1_6s_conversation_through_get_messages() {
    if !peers::installed_or_skip() {
        return;
    }
    load_replays_the_conversation(Pi::V1_6);
}
