//! ACP-20 (ours): backpressure end to end, over real processes. `musewire acp` runs the
//! flooding fake agent (`drivers/flood/flood_agent.py stream`: after a prompt it streams
//! assistant messages for ever, until an `abort`); the editor (this test) reads nothing of
//! the bridge's stdout once the prompt is sent. The agents are held back (their pipes fill),
//! the bridge's peak RSS, from `/proc`, stays under 150 MB, with one session and with 20
//! flooding at once; a `session/cancel` still reaches every agent while the editor lags, and
//! once the editor reads again each prompt ends `cancelled`.

#[path = "../../flood/probe.rs"]
mod probe;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The bound of the rule's test.
const PEAK_LIMIT: u64 = 150 * 1024 * 1024;

/// How long the test waits for anything.
const WAIT: Duration = Duration::from_secs(60);

/// `musewire acp` over pipes; its stdout read as lines on a thread only while the gate is
/// open.
struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    reading: Arc<(Mutex<bool>, Condvar)>,
}

impl Bridge {
    fn start(progress: &Path) -> Bridge {
        let mut child = Command::new(env!("CARGO_BIN_EXE_musewire"))
            .args(["acp", "--", "python3", probe::SCRIPT, "stream"])
            .env("FAKE_PROGRESS", progress)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("musewire acp starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let reading = Arc::new((Mutex::new(true), Condvar::new()));
        let gate = reading.clone();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut stdout = BufReader::with_capacity(4096, stdout);
            let mut line = String::new();
            loop {
                {
                    let (open, turned) = &*gate;
                    let mut open = open.lock().unwrap();
                    while !*open {
                        open = turned.wait(open).unwrap();
                    }
                }
                line.clear();
                match stdout.read_line(&mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    if tx.send(value).is_err() {
                        return;
                    }
                }
            }
        });
        Bridge {
            child,
            stdin,
            lines,
            reading,
        }
    }

    fn read(&self, on: bool) {
        let (open, turned) = &*self.reading;
        *open.lock().unwrap() = on;
        turned.notify_all();
    }

    fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(&line).unwrap();
        stdin.flush().unwrap();
    }

    /// The next line answering request `id` (others dropped).
    fn answer(&self, id: u64) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).expect("the bridge answers");
            if line["id"] == json!(id) && line.get("method").is_none() {
                return line;
            }
        }
    }

    /// A field of `/proc/PID/status`, in bytes.
    fn status_bytes(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find(|l| l.starts_with(field))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the agents wrote in all, from their progress files.
fn written(folder: &Path) -> u64 {
    std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .chars()
                        .all(|c| c.is_ascii_digit())
                })
                .map(|e| probe::written(&e.path()))
                .sum()
        })
        .unwrap_or(0)
}

/// How many agents read an `abort`.
fn aborted(folder: &Path) -> usize {
    std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".aborted"))
                .count()
        })
        .unwrap_or(0)
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `sessions` sessions flood an editor that reads nothing: the agents are held back with the
/// bridge's peak RSS under the limit; a cancel reaches each; read again, each prompt ends
/// `cancelled`.
fn flood(name: &str, sessions: u64) {
    let dir = scratch(name);
    let mut bridge = Bridge::start(&dir);
    bridge.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1}}));
    bridge.answer(1);
    let mut ids = Vec::new();
    for n in 0..sessions {
        bridge.send(
            json!({"jsonrpc": "2.0", "id": 100 + n, "method": "session/new",
            "params": {"cwd": dir, "mcpServers": []}}),
        );
        let new = bridge.answer(100 + n);
        // Checked here: a failed session/new fails with its answer (the bridge's stderr,
        // and the agent's, is the test's).
        ids.push(
            new["result"]["sessionId"]
                .as_str()
                .unwrap_or_else(|| panic!("session/new {n} failed: {new}"))
                .to_owned(),
        );
    }
    // The editor stops reading; every session floods.
    bridge.read(false);
    for (n, id) in ids.iter().enumerate() {
        bridge.send(
            json!({"jsonrpc": "2.0", "id": 200 + n, "method": "session/prompt",
            "params": {"sessionId": id, "prompt": [{"type": "text", "text": "flood"}]}}),
        );
    }
    // Held back: nothing more written for 2 s. Today's unbounded queues grow ~100 MB/s, so
    // the bridge is stopped as soon as it is over the limit.
    let started = Instant::now();
    let (mut last, mut since) = (0, Instant::now());
    loop {
        let rss = bridge.status_bytes("VmRSS:");
        assert!(
            rss < PEAK_LIMIT,
            "the bridge grew to {} MB with the editor not reading ({} MB from the agents)",
            rss >> 20,
            written(&dir) >> 20
        );
        let now = written(&dir);
        if now != last {
            (last, since) = (now, Instant::now());
        } else if now > 0 && since.elapsed() > Duration::from_secs(2) {
            break;
        }
        assert!(started.elapsed() < WAIT, "the agents were never held back");
        std::thread::sleep(Duration::from_millis(20));
    }
    let peak = bridge.status_bytes("VmHWM:");
    eprintln!(
        "{sessions} session(s): held back after {} KiB from the agents; peak RSS {} MB",
        last >> 10,
        peak >> 20
    );
    assert!(peak < PEAK_LIMIT, "peak RSS {} MB", peak >> 20);
    // The editor's requests still get through while it lags.
    for id in &ids {
        bridge.send(json!({"jsonrpc": "2.0", "method": "session/cancel",
            "params": {"sessionId": id}}));
    }
    let deadline = Instant::now() + WAIT;
    while aborted(&dir) < ids.len() {
        assert!(
            Instant::now() < deadline,
            "a cancel did not reach its agent while the editor lagged ({} of {})",
            aborted(&dir),
            ids.len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The editor reads again: everything queued comes, and each prompt's answer.
    bridge.read(true);
    let mut answered = 0;
    let deadline = Instant::now() + WAIT;
    while answered < ids.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = bridge
            .lines
            .recv_timeout(left)
            .expect("each prompt is answered");
        if line.get("method").is_none() && line["id"].as_u64().is_some_and(|id| id >= 200) {
            assert_eq!(line["result"]["stopReason"], "cancelled", "{line}");
            answered += 1;
        }
    }
    assert!(bridge.status_bytes("VmHWM:") < PEAK_LIMIT);
    bridge.stdin = None;
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn acp_20_an_editor_that_reads_nothing_holds_a_flooding_agent_back() {
    flood("acp-flood-1", 1);
}

#[test]
fn acp_20_twenty_sessions_flooding_at_once_are_held_back() {
    flood("acp-flood-20", 20);
}
