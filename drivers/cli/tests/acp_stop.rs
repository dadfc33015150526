//! ACP-12 (ours): nothing outlives `musewire acp`. A session's agent runs a `bash` tool whose
//! shell waits on `sleep 30`; then the editor closes the bridge's stdin, or stops reading its
//! stdout, or the bridge gets SIGTERM. Within the rule's 3 s the bridge has exited and no process is left, counted from
//! `/proc`: none of the agent's process group, none of the shell's, and not the sleep. Over
//! the bundled agent and over omp on the scripted model (conformance/live). Then the bounded
//! waits on a silent agent with real processes: ACP-13 (an agent that never speaks) and
//! ACP-21 (one that stops answering; a silent tool longer than the budget, over the bundled
//! agent, omp and pi).

mod editor;
mod process;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use editor::{Stderr, AGENT_WAIT};
use process::live_in_group;
use serde_json::{json, Value};

/// The rule's bound (`SHUTDOWN_BUDGET`, 3 s), and 5 s more for a loaded 2-core machine to
/// run the kills and the exits (omp among them); still far short of the tool's `sleep 30`,
/// so a group left unkilled fails.
const ENDED_WITHIN: Duration = Duration::from_secs(8);

/// How the bridge is told to end.
#[derive(Clone, Copy)]
enum End {
    /// The editor closes the bridge's stdin.
    EditorEof,
    /// The bridge gets SIGTERM.
    Sigterm,
    /// The editor stops reading: the bridge's next write fails.
    EditorGone,
}

/// `musewire acp` over pipes, its stdout read as JSON-RPC lines on a thread.
struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    /// Set, the reader closes the bridge's stdout at the next line it reads, and sends
    /// `null` once it has.
    hang_up: Arc<AtomicBool>,
    /// Its stderr, for the failure messages.
    stderr: Stderr,
}

impl Bridge {
    fn start(mut command: Command) -> Bridge {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("musewire acp starts");
        let stderr = Stderr::capture(&mut child);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        let hang_up = Arc::new(AtomicBool::new(false));
        let hanging_up = hang_up.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if hanging_up.load(Ordering::SeqCst) {
                    let _ = tx.send(Value::Null);
                    return;
                }
                let Ok(line) = line else { return };
                let Ok(value) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        Bridge {
            child,
            stdin,
            lines,
            hang_up,
            stderr,
        }
    }

    fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(&line).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends request `id` and waits for its answer (notifications before it are dropped),
    /// up to [`AGENT_WAIT`].
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + AGENT_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = self.lines.recv_timeout(left) else {
                panic!(
                    "no answer to {method} within {AGENT_WAIT:?}\n--- musewire acp's stderr ---\n{}",
                    self.stderr.text()
                );
            };
            if line["id"] == json!(id) {
                return line;
            }
        }
    }

    /// `initialize`, checked.
    fn initialize(&mut self) {
        let init = self.call(1, "initialize", json!({"protocolVersion": 1}));
        let result = editor::result("initialize", &init, &self.stderr);
        assert_eq!(result["protocolVersion"], 1, "{init}");
    }

    /// `session/new` in `cwd`, checked: its session id.
    fn new_session(&mut self, cwd: &Path) -> String {
        let new = self.call(2, "session/new", json!({"cwd": cwd, "mcpServers": []}));
        editor::session_id(&new, &self.stderr)
    }

    /// Waits up to `limit` for the bridge's exit.
    fn exited_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `/proc/PID/stat`'s fields after the command name: state, ppid, pgrp, …
fn stat(pid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// Whether `pid` is alive (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|fields| fields[0] != "Z")
}

/// The live children of `parent`.
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

/// The shell command of the `bash` tool: a child shell that writes its pid to `file` and
/// becomes `sleep 30` (`exec`), which the tool's shell waits on.
fn sleeping_shell(file: &Path) -> String {
    format!(
        "sh -c 'echo $$ > {f}.tmp && mv {f}.tmp {f} && exec sleep 30'",
        f = file.display()
    )
}

/// The pid of the tool's shell and of the sleep [`sleeping_shell`] wrote, once the sleep
/// runs.
fn shell_and_sleep(file: &Path, stderr: &Stderr) -> (u32, u32) {
    let deadline = Instant::now() + AGENT_WAIT;
    loop {
        if let Some(sleep) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            let comm = std::fs::read_to_string(format!("/proc/{sleep}/comm")).unwrap_or_default();
            if comm.trim() == "sleep" {
                let shell = stat(sleep).unwrap()[1].parse().unwrap();
                return (shell, sleep);
            }
        }
        assert!(
            Instant::now() < deadline,
            "the bash tool's shell did not start\n--- musewire acp's stderr ---\n{}",
            stderr.text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Opens a session, starts the tool (`prompt`), ends the bridge as `end` says and asserts
/// that within [`ENDED_WITHIN`] the bridge has exited as it should and nothing is left.
fn nothing_outlives_the_bridge(acp: Command, cwd: &Path, file: &Path, prompt: &str, end: End) {
    let mut bridge = Bridge::start(acp);
    bridge.initialize();
    let session = bridge.new_session(cwd);
    bridge.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": prompt}]}}),
    );
    let (shell, sleep) = shell_and_sleep(file, &bridge.stderr);

    let agents = children(bridge.child.id());
    assert_eq!(agents.len(), 1, "one agent for the session: {agents:?}");
    let agent = agents[0];
    let agent_group = stat(agent).unwrap()[2].parse::<u32>().unwrap();
    let shell_group = stat(sleep).unwrap()[2].parse::<u32>().unwrap();
    assert!(alive(shell) && !live_in_group(agent_group).is_empty());

    let ended = Instant::now();
    match end {
        End::EditorEof => bridge.stdin = None,
        End::Sigterm => {
            let status = Command::new("kill")
                .args(["-TERM", &bridge.child.id().to_string()])
                .status()
                .unwrap();
            assert!(status.success());
        }
        End::EditorGone => {
            bridge.hang_up.store(true, Ordering::SeqCst);
            bridge.send(json!({"jsonrpc": "2.0", "id": 4, "method": "nope"}));
            // The lines read before, then the reader's hang-up.
            let hung_up = |l: &Value| *l == Value::Null;
            while !hung_up(
                &bridge
                    .lines
                    .recv_timeout(AGENT_WAIT)
                    .expect("the reader hangs up"),
            ) {}
            // Answering this one, the bridge finds the editor gone.
            bridge.send(json!({"jsonrpc": "2.0", "id": 5, "method": "nope"}));
        }
    }
    let status = bridge.exited_within(ENDED_WITHIN);
    let status =
        status.unwrap_or_else(|| panic!("the bridge did not exit within {ENDED_WITHIN:?}"));
    if let End::EditorEof = end {
        // The running prompt's answer reached the editor before the bridge ended.
        let answered = std::iter::from_fn(|| bridge.lines.recv_timeout(AGENT_WAIT).ok())
            .any(|l| l["id"] == json!(3));
        assert!(
            answered,
            "the running prompt was answered before the bridge ended"
        );
    }
    match end {
        End::EditorEof => assert_eq!(status.code(), Some(0), "{status:?}"),
        End::Sigterm => assert_eq!(
            status.signal(),
            Some(15),
            "it dies of the signal: {status:?}"
        ),
        End::EditorGone => assert_eq!(status.code(), Some(1), "a failed write: {status:?}"),
    }
    // Everything is gone by then, or very soon after for the kernel to finish the kills.
    loop {
        let left: Vec<u32> = live_in_group(agent_group)
            .into_iter()
            .chain(live_in_group(shell_group))
            .chain([shell, sleep].into_iter().filter(|p| alive(*p)))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            ended.elapsed() < ENDED_WITHIN,
            "processes outlive the bridge: {left:?} (agent group {agent_group}, shell group {shell_group})"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        agent_group, agent,
        "the agent leads a process group of its own"
    );
}

/// A fresh folder under the target directory.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn over_the_bundled_agent(name: &str, end: End) {
    let dir = scratch(name);
    let file = dir.join("pids");
    let mut acp = Command::new(env!("CARGO_BIN_EXE_musewire"));
    acp.arg("acp")
        .arg("--session-dir")
        .arg(dir.join("sessions"));
    let prompt = format!("bash {}", sleeping_shell(&file));
    nothing_outlives_the_bridge(acp, &dir, &file, &prompt, end);
    let _ = std::fs::remove_dir_all(dir);
}

fn over_omp(name: &str, end: End) {
    if !musewire_live::peers::installed_or_skip() {
        return;
    }
    let server = musewire_live::model_server::ModelServer::start().expect("model server");
    let dir = musewire_live::peers::scratch(name);
    let omp = musewire_live::peers::omp(&dir, &server.base_url());
    let cwd = omp
        .get_current_dir()
        .expect("omp runs in a folder")
        .to_owned();
    let mut acp = Command::new(env!("CARGO_BIN_EXE_musewire"));
    // The start-up budget is no part of the scenario: generous, for a loaded machine.
    acp.args(["acp", "--ready-timeout", "120", "--"])
        .arg(omp.get_program())
        .args(omp.get_args())
        .current_dir(&cwd)
        .env_clear();
    for (key, value) in omp.get_envs() {
        if let Some(value) = value {
            acp.env(key, value);
        }
    }
    let file = dir.join("pids");
    let args = json!({"command": sleeping_shell(&file)});
    let prompt = format!("[[tool bash {args}]]");
    nothing_outlives_the_bridge(acp, &cwd, &file, &prompt, end);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn acp_12_editor_eof_mid_tool_leaves_nothing_running_bundled_agent() {
    over_the_bundled_agent("acp-stop-eof", End::EditorEof);
}

#[test]
fn acp_12_sigterm_mid_tool_leaves_nothing_running_bundled_agent() {
    over_the_bundled_agent("acp-stop-term", End::Sigterm);
}

#[test]
fn acp_12_an_editor_that_stops_reading_leaves_nothing_running_bundled_agent() {
    over_the_bundled_agent("acp-stop-gone", End::EditorGone);
}

#[test]
fn acp_12_editor_eof_mid_tool_leaves_nothing_running_omp() {
    over_omp("acp-stop-omp-eof", End::EditorEof);
}

#[test]
fn acp_12_sigterm_mid_tool_leaves_nothing_running_omp() {
    over_omp("acp-stop-omp-term", End::Sigterm);
}

/// ACP-13 with a real silent agent (`sleep`): `session/new`, which waits on the agent's state
/// (ACP-24), fails within the start-up budget with an error that says why, and the agent is
/// gone after it.
#[test]
fn acp_13_a_silent_agent_fails_session_new_within_the_budget_and_is_stopped() {
    let dir = scratch("acp-13-silent");
    let mut acp = Command::new(env!("CARGO_BIN_EXE_musewire"));
    acp.args(["acp", "--ready-timeout", "2", "--", "sleep", "1000"]);
    let mut bridge = Bridge::start(acp);
    bridge.initialize();
    let started = Instant::now();
    let answer = bridge.call(2, "session/new", json!({"cwd": dir, "mcpServers": []}));
    let took = started.elapsed();
    let text = answer["error"]["data"].as_str().unwrap_or_default();
    assert!(text.contains("said nothing within 2s"), "{answer}");
    assert!(took < Duration::from_secs(10), "answered after {took:?}");
    let deadline = Instant::now() + ENDED_WITHIN;
    while !children(bridge.child.id()).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        children(bridge.child.id()).is_empty(),
        "the silent agent was stopped"
    );
}

/// ACP-21 with a real agent that stops answering (the flooding fake agent's `sink` mode:
/// its ready frame, then it reads nothing and says nothing): the prompt fails within the
/// prompt budget (`--silence-timeout 2`) with an error that says why, and the agent is gone
/// after it.
#[test]
fn acp_21_a_prompt_to_an_agent_that_stops_answering_fails_within_the_budget() {
    let dir = scratch("acp-21-stopped-answering");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../flood/flood_agent.py");
    let mut acp = Command::new(env!("CARGO_BIN_EXE_musewire"));
    acp.args([
        "acp",
        "--silence-timeout",
        "2",
        "--",
        "python3",
        script,
        "sink",
    ]);
    let mut bridge = Bridge::start(acp);
    bridge.initialize();
    // ACP-24: session/new waits on the agent's state, so it is what the budget fails.
    let started = Instant::now();
    let answer = bridge.call(2, "session/new", json!({"cwd": dir, "mcpServers": []}));
    let took = started.elapsed();
    let text = answer["error"]["data"].as_str().unwrap_or_default();
    assert!(text.contains("stopped answering"), "{answer}");
    assert!(text.contains("for 2s"), "{answer}");
    assert!(took < Duration::from_secs(10), "answered after {took:?}");
    let deadline = Instant::now() + ENDED_WITHIN;
    while !children(bridge.child.id()).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        children(bridge.child.id()).is_empty(),
        "the agent was stopped"
    );
}

/// ACP-21: the budget is on silence, not on the turn's length: a `bash` tool that runs
/// silently for three times the budget (`sleep 6` with `--silence-timeout 2`) ends its turn
/// as usual, the bundled agent answering the bridge's `get_state` meanwhile.
#[test]
fn acp_21_a_silent_tool_longer_than_the_budget_ends_its_turn() {
    let dir = scratch("acp-21-long-tool");
    let mut acp = Command::new(env!("CARGO_BIN_EXE_musewire"));
    acp.args(["acp", "--silence-timeout", "2", "--session-dir"])
        .arg(dir.join("sessions"));
    let mut bridge = Bridge::start(acp);
    bridge.initialize();
    let session = bridge.new_session(&dir);
    let answer = bridge.call(
        3,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "bash sleep 6"}]}),
    );
    let result = editor::result("session/prompt", &answer, &bridge.stderr);
    assert_eq!(result["stopReason"], "end_turn", "{answer}");
}

/// ACP-21 over a real agent (`peer` makes its command) on the scripted model: a silent
/// `bash` tool of one and a half times the budget ends its turn, the agent answering the
/// bridge's `get_state` while the tool runs. The budget (`--silence-timeout 10`) is set
/// for a loaded 2-core machine: a bun agent there may take seconds to start and to answer
/// the probe sent half-way (4 s failed `session/new` on a busy machine); the start-up budget
/// (`--ready-timeout`) is no part of the scenario and is generous.
fn silent_tool_over(name: &str, peer: fn(&Path, &str) -> Command) {
    if !musewire_live::peers::installed_or_skip() {
        return;
    }
    let server = musewire_live::model_server::ModelServer::start().expect("model server");
    let dir = musewire_live::peers::scratch(name);
    let agent = peer(&dir, &server.base_url());
    let cwd = agent
        .get_current_dir()
        .expect("the agent runs in a folder")
        .to_owned();
    let mut acp = Command::new(env!("CARGO_BIN_EXE_musewire"));
    acp.args([
        "acp",
        "--ready-timeout",
        "120",
        "--silence-timeout",
        "10",
        "--",
    ])
    .arg(agent.get_program())
    .args(agent.get_args())
    .current_dir(&cwd)
    .env_clear();
    for (key, value) in agent.get_envs() {
        if let Some(value) = value {
            acp.env(key, value);
        }
    }
    let mut bridge = Bridge::start(acp);
    bridge.initialize();
    let session = bridge.new_session(&cwd);
    let args = json!({"command": "sleep 15"});
    let answer = bridge.call(
        3,
        "session/prompt",
        json!({"sessionId": session,
            "prompt": [{"type": "text", "text": format!("[[tool bash {args}]]")}]}),
    );
    let result = editor::result("session/prompt", &answer, &bridge.stderr);
    assert_eq!(result["stopReason"], "end_turn", "{answer}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn acp_21_a_silent_tool_longer_than_the_budget_ends_its_turn_omp() {
    silent_tool_over("acp-21-long-tool-omp", musewire_live::peers::omp);
}

#[test]
fn acp_21_a_silent_tool_longer_than_the_budget_ends_its_turn_pi() {
    silent_tool_over("acp-21-long-tool-pi", musewire_live::peers::pi);
}
