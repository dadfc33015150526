//! ACP-22 (ours): crash and restart, over real processes (`musewire acp` and the bundled
//! agent, counted from `/proc`). An agent killed mid-turn fails its prompt with an error
//! naming the exit, its session file holds whole lines, and `session/load` restores it in a
//! new agent of the same bridge. The bridge itself killed with SIGKILL mid-turn: its agents
//! end (their stdin closed with it), and their shells; the session files hold whole lines
//! only; the next `musewire acp` loads every session.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(30);

/// How long the agents have to end once the bridge is gone.
const ENDED_WITHIN: Duration = Duration::from_secs(5);

struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl Bridge {
    fn start(sessions: &Path) -> Bridge {
        let mut child = Command::new(env!("CARGO_BIN_EXE_musewire"))
            .arg("acp")
            .arg("--session-dir")
            .arg(sessions)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("musewire acp starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    if tx.send(value).is_err() {
                        return;
                    }
                }
            }
        });
        let mut bridge = Bridge {
            child,
            stdin,
            lines,
        };
        let (init, _) = bridge.call(1, "initialize", json!({"protocolVersion": 1}));
        assert!(init["result"].is_object(), "initialize failed: {init}");
        bridge
    }

    fn send(&mut self, id: u64, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(&line).unwrap();
        stdin.flush().unwrap();
    }

    /// The answer to request `id`, and the notifications before it.
    fn answer(&self, id: u64) -> (Value, Vec<Value>) {
        let deadline = Instant::now() + WAIT;
        let mut before = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).expect("the bridge answers");
            if line["id"] == json!(id) && line.get("method").is_none() {
                return (line, before);
            }
            before.push(line);
        }
    }

    fn call(&mut self, id: u64, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.send(id, method, params);
        self.answer(id)
    }

    fn new_session(&mut self, id: u64, cwd: &Path) -> String {
        let (new, _) = self.call(id, "session/new", json!({"cwd": cwd, "mcpServers": []}));
        new["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("session/new failed: {new}"))
            .to_owned()
    }

    fn prompt(&mut self, id: u64, session: &str, text: &str) {
        self.send(
            id,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        );
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `/proc/PID/stat`'s fields after the command name.
fn stat(pid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|fields| fields[0] != "Z")
}

fn children(parent: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if stat(pid).is_some_and(|f| f[0] != "Z" && f[1] == parent.to_string()) {
            found.push(pid);
        }
    }
    found
}

/// A `bash` prompt whose shell writes its pid to `file` and becomes `sleep 30`.
fn sleeping(file: &Path) -> String {
    format!(
        "bash sh -c 'echo $$ > {f}.tmp && mv {f}.tmp {f} && exec sleep 30'",
        f = file.display()
    )
}

/// The pid of the sleep of [`sleeping`], once it runs.
fn sleep_of(file: &Path) -> u32 {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == "sleep" {
                return pid;
            }
        }
        assert!(Instant::now() < deadline, "the tool's sleep did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether every pid has ended within [`ENDED_WITHIN`].
fn all_end(pids: &[u32]) -> Vec<u32> {
    let deadline = Instant::now() + ENDED_WITHIN;
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The session file holds whole JSON lines only; their number.
fn whole_lines(sessions: &Path, session: &str) -> usize {
    let path = sessions.join(format!("{session}.jsonl"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        bytes.last(),
        Some(&b'\n'),
        "{} ends mid-line",
        path.display()
    );
    let lines: Vec<&[u8]> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    for line in &lines {
        serde_json::from_slice::<Value>(line).unwrap_or_else(|e| {
            panic!(
                "{}: a line that does not read ({e}): {}",
                path.display(),
                String::from_utf8_lossy(line)
            )
        });
    }
    lines.len()
}

/// Whether the updates replay this text.
fn replays(updates: &[Value], text: &str) -> bool {
    updates.iter().any(|m| {
        m["params"]["update"]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains(text))
    })
}

#[test]
fn acp_22_an_agent_killed_mid_turn_fails_the_prompt_and_its_session_loads_again() {
    let dir = scratch("acp-22-agent-killed");
    let sessions = dir.join("sessions");
    let mut bridge = Bridge::start(&sessions);
    let session = bridge.new_session(2, &dir);
    bridge.prompt(3, &session, "hello before the crash");
    let (done, _) = bridge.answer(3);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let pids = dir.join("pids");
    bridge.prompt(4, &session, &sleeping(&pids));
    let sleep = sleep_of(&pids);
    let agents = children(bridge.child.id());
    assert_eq!(agents.len(), 1, "{agents:?}");
    let killed = Command::new("kill")
        .args(["-KILL", &agents[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let (failed, _) = bridge.answer(4);
    let text = failed["error"]["data"].as_str().unwrap_or_default();
    assert!(
        text.contains("exited with signal 9"),
        "the error names the exit: {failed}"
    );
    // The bundled agent runs its shells in groups of their own (AGENT-02) and kills them
    // at its stdin's end; killed with SIGKILL it cannot. The bridge adopted them (a child
    // subreaper, Linux) and ends them with their agent.
    #[cfg(target_os = "linux")]
    {
        let left = all_end(&[sleep]);
        assert!(
            left.is_empty(),
            "the dead agent's shell outlived it: {left:?}"
        );
    }
    #[cfg(not(target_os = "linux"))]
    let _ = Command::new("kill")
        .args(["-KILL", &sleep.to_string()])
        .status();
    assert!(
        whole_lines(&sessions, &session) >= 3,
        "header and the first turn"
    );
    // The same bridge loads it again, in a new agent, and it goes on.
    let (loaded, replay) = bridge.call(
        5,
        "session/load",
        json!({"sessionId": session, "cwd": dir, "mcpServers": []}),
    );
    assert!(loaded.get("result").is_some(), "{loaded}");
    assert!(replays(&replay, "hello before the crash"), "{replay:?}");
    let agents_now = children(bridge.child.id());
    assert!(
        agents_now.len() == 1 && agents_now[0] != agents[0],
        "{agents_now:?}"
    );
    bridge.prompt(6, &session, "after");
    let (after, _) = bridge.answer(6);
    assert_eq!(after["result"]["stopReason"], "end_turn", "{after}");
    bridge.stdin = None;
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn acp_22_a_bridge_killed_mid_turn_leaves_no_agent_and_the_next_one_loads_every_session() {
    let dir = scratch("acp-22-bridge-killed");
    let sessions = dir.join("sessions");
    let mut bridge = Bridge::start(&sessions);
    let mut ids = Vec::new();
    for n in 0..3u64 {
        let session = bridge.new_session(10 + n, &dir);
        bridge.prompt(20 + n, &session, &format!("hello number {n}"));
        let (done, _) = bridge.answer(20 + n);
        assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
        ids.push(session);
    }
    let mut sleeps = Vec::new();
    for (n, session) in ids.iter().enumerate() {
        let pids = dir.join(format!("pids-{n}"));
        bridge.prompt(30 + n as u64, session, &sleeping(&pids));
        sleeps.push(sleep_of(&pids));
    }
    let agents = children(bridge.child.id());
    assert_eq!(agents.len(), 3, "{agents:?}");
    // SIGKILL: the bridge stops nothing; the agents' stdin closes as it dies.
    bridge.child.kill().unwrap();
    bridge.child.wait().unwrap();
    let left = all_end(&agents.iter().chain(&sleeps).copied().collect::<Vec<_>>());
    assert!(
        left.is_empty(),
        "outlived the killed bridge: {left:?} (agents {agents:?}, sleeps {sleeps:?})"
    );
    for session in &ids {
        whole_lines(&sessions, session);
    }
    // The next bridge loads every session.
    let mut next = Bridge::start(&sessions);
    for (n, session) in ids.iter().enumerate() {
        let (loaded, replay) = next.call(
            40 + n as u64,
            "session/load",
            json!({"sessionId": session, "cwd": dir, "mcpServers": []}),
        );
        assert!(loaded.get("result").is_some(), "{loaded}");
        assert!(replays(&replay, &format!("hello number {n}")), "{replay:?}");
    }
    next.stdin = None;
    let _ = std::fs::remove_dir_all(dir);
}
