//! `musewire agent` as a bare process over pipes: lines written to its stdin, logical frames
//! read from its stdout on a thread (reassembled from `rpc_chunk` once v2 is negotiated), its stdin closed at will, its exit awaited with a deadline. No
//! client in between, so a test sees exactly what a crashing host would leave behind.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use musewire_core::frame::{DecodeEvent, StreamDecoder};
use serde_json::Value;

/// How long a test waits for a frame.
pub const WAIT: Duration = Duration::from_secs(30);

/// A running `musewire agent --mode rpc`.
pub struct AgentProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    frames: Vec<Value>,
    seen: usize,
    stderr: Option<JoinHandle<String>>,
}

impl AgentProcess {
    /// Starts `musewire agent --mode rpc ARGS` with a fixed clock.
    pub fn spawn(args: &[&str]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_musewire"));
        command.args(["agent", "--mode", "rpc"]).args(args);
        Self::start(command)
    }

    /// Starts `command` with piped stdio.
    pub fn start(mut command: Command) -> Self {
        command
            .env("MUSEWIRE_AGENT_CLOCK_MS", "1234")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("musewire agent starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            // Logical frames: `rpc_chunk` sequences reassembled once v2 is negotiated.
            let mut stdout = stdout;
            let mut decoder = StreamDecoder::new();
            let mut buf = vec![0u8; 1 << 16];
            loop {
                let n = stdout.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    decoder.handle_eof();
                } else {
                    decoder.handle_bytes(&buf[..n]);
                }
                while let Some(event) = decoder.poll_event() {
                    let frame = match event {
                        DecodeEvent::Frame(frame) => frame.parse::<Value>().unwrap(),
                        DecodeEvent::Error(error) => panic!("the agent's stdout: {error}"),
                    };
                    if tx.send(frame).is_err() {
                        return;
                    }
                }
                if n == 0 {
                    return;
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        AgentProcess {
            child,
            stdin,
            lines,
            frames: Vec::new(),
            seen: 0,
            stderr: Some(stderr),
        }
    }

    /// The agent's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes one JSON line to stdin.
    pub fn send(&mut self, frame: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let mut line = serde_json::to_vec(frame).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).expect("the agent reads stdin");
        stdin.flush().unwrap();
    }

    /// Closes the agent's stdin, as a host that dies does.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next frame (after the last one returned) that `wanted` accepts; panics after
    /// [`WAIT`].
    pub fn wait_frame(&mut self, mut wanted: impl FnMut(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            while self.seen < self.frames.len() {
                self.seen += 1;
                if wanted(&self.frames[self.seen - 1]) {
                    return self.frames[self.seen - 1].clone();
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(frame) => self.frames.push(frame),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let _ = self.child.wait();
                    panic!("stdout ended; stderr: {}", self.stderr());
                }
                Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                    "no such frame within {WAIT:?}; frames so far: {:?}",
                    self.frames.iter().map(|f| &f["type"]).collect::<Vec<_>>()
                ),
            }
        }
    }

    /// Waits up to `limit` for the process to exit; kills it and panics when it does not.
    /// Everything it wrote is then in [`AgentProcess::frames`].
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                while let Ok(frame) = self.lines.recv_timeout(Duration::from_secs(5)) {
                    self.frames.push(frame);
                }
                return status;
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("the agent did not exit within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every frame read so far.
    pub fn frames(&self) -> &[Value] {
        &self.frames
    }

    /// What the agent wrote to stderr (after it has exited).
    pub fn stderr(&mut self) -> String {
        self.stderr
            .take()
            .map(|t| t.join().unwrap_or_default())
            .unwrap_or_default()
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The processes of group `pgid` that are alive (not zombies waiting to be reaped).
pub fn live_in_group(pgid: u32) -> Vec<u32> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
            live.push(pid);
        }
    }
    live
}

/// Asserts that nothing of group `pgid` is left alive within five seconds (AGENT-02).
pub fn assert_group_gone(pgid: u32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !live_in_group(pgid).is_empty() {
        assert!(
            Instant::now() < deadline,
            "processes of group {pgid} survive: {:?}",
            live_in_group(pgid)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
