//! The `musewire` binary, host and CLI side, under faults and bad input, against the small
//! misbehaving agent in `fake_agent.py` (or a shell line). Each test is named by the rule it
//! keeps, or by the behaviour where no numbered rule covers it.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn musewire() -> Command {
    Command::new(env!("CARGO_BIN_EXE_musewire"))
}

/// The fake agent's command line, after `--`.
fn fake(args: &[&str]) -> Vec<String> {
    let mut line = vec![
        "python3".to_owned(),
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake_agent.py").to_owned(),
    ];
    line.extend(args.iter().map(|a| (*a).to_owned()));
    line
}

/// A fresh directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("musewire-faults-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether `pid` is a live process (a zombie counts as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Peak resident memory of a live process, in bytes (`VmHWM`).
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap();
    kb * 1024
}

/// Waits up to `limit` for `child` to exit.
fn wait_for(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// SIGTERM or SIGINT to `musewire prompt` ends the agent it started and the
/// agent's children (the agent runs in a process group of its own, which the CLI ends).
#[test]
fn a_signal_to_prompt_ends_the_agent_and_its_children() {
    for signal in ["TERM", "INT"] {
        let dir = scratch(&format!("signal-{signal}"));
        let pids_file = dir.join("pids");
        let mut prompt = musewire()
            .args(["prompt", "hi", "--timeout", "60", "--"])
            .args(fake(&["group", pids_file.to_str().unwrap()]))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        assert!(
            until(Duration::from_secs(30), || pids_file.exists()),
            "the agent did not start"
        );
        let pids: Vec<u32> = std::fs::read_to_string(&pids_file)
            .unwrap()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 2);
        assert!(pids.iter().all(|p| alive(*p)));
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(prompt.id().to_string())
            .status()
            .unwrap();
        assert!(sent.success());
        let status = wait_for(&mut prompt, Duration::from_secs(10));
        let number = if signal == "TERM" { 15 } else { 2 };
        assert_eq!(
            status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s)),
            Some(number),
            "SIG{signal} ends musewire prompt as the signal would: {status:?}"
        );
        for pid in pids {
            assert!(
                until(Duration::from_secs(5), || !alive(pid)),
                "SIG{signal}: process {pid} (the agent or its child) outlived musewire prompt"
            );
        }
    }
}

/// SIGTERM to `musewire tap` ends the agent it started and the agent's
/// children, as for `prompt`.
#[test]
fn a_signal_to_tap_ends_the_agent_and_its_children() {
    let dir = scratch("signal-tap");
    let pids_file = dir.join("pids");
    let mut tap = musewire()
        .args(["tap", "-o"])
        .arg(dir.join("tap.jsonl"))
        .arg("--")
        .args(fake(&["group", pids_file.to_str().unwrap()]))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        until(Duration::from_secs(30), || pids_file.exists()),
        "the agent did not start"
    );
    let pids: Vec<u32> = std::fs::read_to_string(&pids_file)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(pids.iter().all(|p| alive(*p)));
    let sent = Command::new("kill")
        .arg("-TERM")
        .arg(tap.id().to_string())
        .status()
        .unwrap();
    assert!(sent.success());
    let status = wait_for(&mut tap, Duration::from_secs(10));
    assert!(status.is_some(), "musewire tap ended");
    for pid in pids {
        assert!(
            until(Duration::from_secs(5), || !alive(pid)),
            "process {pid} (the agent or its child) outlived musewire tap"
        );
    }
}

/// When nothing reads `musewire prompt`'s stdout, it stops reading the agent
/// (whose pipe then fills, so it waits): memory stays bounded however much the agent writes.
#[test]
fn prompt_stops_reading_the_agent_when_its_output_is_not_taken() {
    const FLOOD: u64 = 400 << 20;
    const BOUND: u64 = 64 << 20;
    for mode in [&[][..], &["--json"][..]] {
        let dir = scratch(&format!("flood{}", mode.len()));
        let progress = dir.join("progress");
        let mut prompt = musewire()
            .args(["prompt", "go", "--timeout", "120"])
            .args(mode)
            .arg("--")
            .arg("env")
            .arg(format!("FAKE_PROGRESS={}", progress.display()))
            .args(fake(&["flood", &FLOOD.to_string()]))
            .stdout(Stdio::piped()) // never read
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let written = || -> u64 {
            std::fs::read_to_string(&progress)
                .ok()
                .and_then(|p| p.trim().parse().ok())
                .unwrap_or(0)
        };
        // Until the agent has written it all (no backpressure), memory passes the bound, or
        // the agent has been held back (nothing more written for two seconds).
        let started = Instant::now();
        let (mut last, mut since) = (0, Instant::now());
        let mut peak = 0;
        while started.elapsed() < Duration::from_secs(90) {
            peak = peak_rss(prompt.id());
            let now = written();
            if peak > BOUND || now >= FLOOD {
                break;
            }
            if now != last {
                (last, since) = (now, Instant::now());
            } else if now > 0 && since.elapsed() > Duration::from_secs(2) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = Command::new("kill").arg(prompt.id().to_string()).status();
        let _ = wait_for(&mut prompt, Duration::from_secs(10));
        assert!(
            peak <= BOUND,
            "{mode:?}: peak RSS {peak} bytes with {} bytes written by the agent",
            written()
        );
        assert!(written() < FLOOD, "{mode:?}: the agent was never held back");
    }
}

/// `musewire tap` holds at most the agent's input cap of a host line; a
/// longer line is forwarded, reported as over the limit (FRAME-02), not as "not JSON", and
/// the session goes on.
#[test]
fn frame_02_tap_bounds_a_host_line_and_reports_it_over_the_limit() {
    const LINE: usize = 200 << 20;
    const BOUND: u64 = 160 << 20;
    let dir = scratch("tap-line");
    let stderr = dir.join("stderr");
    let mut tap = musewire()
        .args(["tap", "-o"])
        .arg(dir.join("t.jsonl"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let mut stdout = tap.stdout.take().unwrap();
    let (seen_tx, seen) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 65536];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
            if text(&all).contains("\"id\":\"after\"") {
                let _ = seen_tx.send(());
            }
        }
        all
    });
    let mut stdin = tap.stdin.take().unwrap();
    stdin
        .write_all(b"{\"type\":\"prompt\",\"message\":\"")
        .unwrap();
    let block = vec![b'a'; 1 << 20];
    for _ in 0..LINE >> 20 {
        stdin.write_all(&block).unwrap();
    }
    stdin.write_all(b"\"}\n").unwrap();
    stdin
        .write_all(b"{\"id\":\"after\",\"type\":\"get_state\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    seen.recv_timeout(Duration::from_secs(120))
        .expect("the session goes on after the long line");
    let peak = peak_rss(tap.id());
    drop(stdin);
    assert!(wait_for(&mut tap, Duration::from_secs(30)).is_some());
    let _ = reader.join();
    let report = std::fs::read_to_string(&stderr).unwrap();
    assert!(
        report.contains("musewire tap: host: FRAME-02 a line over the limit"),
        "{report}"
    );
    assert!(!report.contains("not JSON"), "{report}");
    assert!(
        peak <= BOUND,
        "peak RSS {peak} bytes for a {LINE}-byte line"
    );
}

/// PAGE-09: `musewire messages` against an agent that pages forever (a
/// fresh cursor every page, more messages than its `totalMessages`) stops with an error.
#[test]
fn page_09_messages_stops_on_an_agent_that_pages_forever() {
    let started = Instant::now();
    let out = musewire()
        .args(["messages", "--timeout", "20", "--"])
        .args(fake(&["pages"]))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("RPC message pagination returned more messages than its total"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(15));
    assert!(out.stdout.is_empty());
}

/// HOST-09: a host tool result over the agent's limit (its ready frame says
/// 1 MiB, v1) fails the call at once with a clear error instead of hanging the turn.
#[test]
fn host_09_prompt_fails_an_oversized_host_tool_result_at_once() {
    let started = Instant::now();
    let out = musewire()
        .args([
            "prompt",
            "go",
            "--timeout",
            "30",
            "--host-tool",
            "big=head -c 1100000 /dev/zero | tr '\\0' a",
            "--",
        ])
        .args(fake(&["bigtool"]))
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("the host answered (error): the host_tool_result for host-tool-1 is"),
        "{stdout}"
    );
    assert!(
        stdout.contains("over the agent's limit of 1048576 bytes"),
        "{stdout}"
    );
    assert!(stderr.contains("HOST-09"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// `--timeout` holds when the agent closes stdout but keeps running (its
/// child holding stderr) and when it stops reading, with no grace added on top; a timeout too
/// large for the clock and `--timeout 0` both mean no timeout, without a panic.
#[test]
fn prompt_timeout_is_honoured_and_never_overflows() {
    let started = Instant::now();
    let out = musewire()
        .args(["prompt", "hi", "--timeout", "3", "--"])
        .args(["sh", "-c", "exec >&-; sleep 30; :"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stdout closed: {:?}",
        started.elapsed()
    );

    let started = Instant::now();
    let out = musewire()
        .args(["prompt", "hi", "--timeout", "3", "--"])
        .args(fake(&["stall"]))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("the turn did not end within 3s"),
        "{stderr}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(7),
        "an agent that stops reading (no 5 s grace on top of the 3 s): {:?}",
        started.elapsed()
    );

    for timeout in ["18446744073709551615", "0"] {
        let out = musewire()
            .args(["prompt", "hello there", "--timeout", timeout])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "--timeout {timeout}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout).trim(), "hello there");
    }
}

/// Terminal escapes, carriage returns and other C0/C1 controls from the agent
/// are made visible in text mode (its text, notify messages, its stderr tail); `--json` keeps
/// them exact.
#[test]
fn agent_control_characters_never_reach_the_terminal() {
    let out = musewire()
        .args(["prompt", "go", "--timeout", "30", "--"])
        .args(fake(&["escapes"]))
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "the agent died mid-turn");
    for shown in [&stdout, &stderr] {
        assert!(
            !shown.contains(['\x1b', '\r', '\x07', '\u{9b}']),
            "{shown:?}"
        );
    }
    assert!(
        stdout.contains("text ^[[2J^[]0;title^G^Mover"),
        "{stdout:?}"
    );
    assert!(
        stdout.contains("[notify] note^[]0;pwned^G^[[2J"),
        "{stdout:?}"
    );
    assert!(stderr.contains("stderr ^[[31mred^[[0m"), "{stderr:?}");

    let out = musewire()
        .args(["prompt", "--json", "go", "--timeout", "30", "--"])
        .args(fake(&["escapes"]))
        .output()
        .unwrap();
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(events
        .iter()
        .any(|e| e["frame"]["assistantMessageEvent"]["delta"]
            == "text \x1b[2J\x1b]0;title\x07\rover\u{9b}31m"));
    assert!(events
        .iter()
        .any(|e| e["event"] == "ui_request" && e["message"] == "note\x1b]0;pwned\x07\x1b[2J"));
}

/// Write failures are errors: `prompt` to a full device exits non-zero with
/// a message; `tap -o /dev/full` says so once and exits non-zero; `blocks` to a full device
/// exits 1 with a message.
#[test]
fn write_failures_exit_non_zero_with_one_message() {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let out = musewire()
        .args(["prompt", "hello", "--timeout", "60"])
        .stdout(full())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.starts_with("musewire prompt: writing the output: "),
        "{stderr}"
    );

    let mut tap = musewire()
        .args(["tap", "-o", "/dev/full"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    tap.stdin
        .take()
        .unwrap()
        .write_all(
            b"{\"id\":\"a\",\"type\":\"get_state\"}\n{\"id\":\"b\",\"type\":\"get_state\"}\n",
        )
        .unwrap();
    let out = tap.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(
        stderr.matches("writing the transcript").count(),
        1,
        "{stderr}"
    );

    let mut blocks = musewire()
        .arg("blocks")
        .stdin(Stdio::piped())
        .stdout(full())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    blocks
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"content":[{"type":"text","text":"x"}]}"#)
        .unwrap();
    let out = blocks.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with("musewire blocks: writing the output: "),
        "{}",
        text(&out.stderr)
    );
}

/// FRAME-03: a v1 agent (no ready frame) that answers the start-up probe is known at once,
/// with no word on stderr; one that says nothing at all is announced on stderr and waited for
/// as long as `--ready-timeout` says; a line that is not JSON before `ready` is reported.
#[test]
fn frame_03_prompt_says_what_it_waits_for_and_reports_garbage_before_ready() {
    let out = musewire()
        .args(["prompt", "hi", "--timeout", "30", "--"])
        .args(fake(&["v1"]))
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "v1 answer");
    assert!(!stderr.contains("no ready frame"), "{stderr}");

    let started = Instant::now();
    let out = musewire()
        .args([
            "prompt",
            "hi",
            "--timeout",
            "30",
            "--ready-timeout",
            "3",
            "--",
        ])
        .args(fake(&["mute"]))
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "mute answer");
    assert!(
        stderr.contains("no ready frame from the agent yet") && stderr.contains("--ready-timeout"),
        "{stderr}"
    );
    assert!(started.elapsed() >= Duration::from_secs(3));
    assert!(started.elapsed() < Duration::from_secs(10));

    let out = musewire()
        .args(["prompt", "hi", "--timeout", "30", "--"])
        .args(fake(&["garbage"]))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("musewire prompt: agent: FRAME-13")
            && stderr.contains("garbage before ready"),
        "{stderr}"
    );
}

/// FRAME-02 and CALL-02: text-mode `prompt` reports an over-limit line and
/// a response that matches no request on stderr.
#[test]
fn frame_02_call_02_text_prompt_reports_warnings_and_unmatched_responses() {
    let out = musewire()
        .args(["prompt", "go", "--timeout", "30", "--"])
        .args(fake(&["escapes"]))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("musewire prompt: agent: FRAME-02"),
        "{stderr}"
    );
    assert!(
        stderr.contains("musewire prompt: agent: CALL-02") && stderr.contains("nobody"),
        "{stderr}"
    );
}

/// Usage errors exit 2 (a bad `--host-tool`, `blocks --cap` without
/// `--json`); an error is said once, not as `musewire prompt: prompt: …`; `--help` names what
/// the tool does.
#[test]
fn usage_errors_exit_2_are_said_once_and_help_names_each_tool() {
    let out = musewire()
        .args(["prompt", "hi", "--host-tool", "nonsense"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("NAME=CMD"));

    let mut blocks = musewire()
        .args(["blocks", "--cap", "3"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = blocks
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"content":[{"type":"text","text":"abcdef"}]}"#);
    let out = blocks.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("--json"));

    let out = musewire()
        .args([
            "prompt",
            "hi",
            "--timeout",
            "20",
            "--",
            "sh",
            "-c",
            "exit 3",
        ])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.starts_with("musewire prompt: "), "{stderr}");
    assert!(!stderr.contains("musewire prompt: prompt:"), "{stderr}");

    let out = musewire().arg("--help").output().unwrap();
    let help = text(&out.stdout);
    assert!(!help.contains("tools: decode and encode"), "{help}");
    for word in [
        "prompt", "messages", "tap", "agent", "blocks", "replay", "decode", "encode",
    ] {
        assert!(help.contains(word), "{word}: {help}");
    }
    let about = help.lines().next().unwrap_or("");
    assert!(about.contains("drive an agent"), "{about}");
}
