//! What the tests that speak raw ACP to `musewire acp` share: the bridge's stderr kept for the
//! failure message, and a step that must succeed (initialize, session/new, session/load)
//! checked where it is taken, so a failed one fails there, with its answer and that stderr,
//! never later on a `null` session id.

#![allow(dead_code)]

use std::io::Read;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// How long a test waits on a real agent (omp or pi under bun or node) for one answer: far
/// more than it takes on a quiet machine, so that a loaded 2-core machine does not fail it.
/// The bridge's own budgets that a scenario is about are set by flags, not by this.
pub const AGENT_WAIT: Duration = Duration::from_secs(120);

/// The bridge's stderr (where it reports, and where the agent's stderr tail shows in its
/// errors), read on a thread into a buffer.
#[derive(Clone, Default)]
pub struct Stderr(Arc<Mutex<Vec<u8>>>);

impl Stderr {
    /// Reads `child`'s stderr (spawned with `Stdio::piped()`) from now on.
    pub fn capture(child: &mut Child) -> Stderr {
        let stderr = Stderr::default();
        if let Some(mut pipe) = child.stderr.take() {
            let buffer = stderr.0.clone();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                    buffer.lock().unwrap().extend_from_slice(&chunk[..n]);
                }
            });
        }
        stderr
    }

    /// What it has written so far, the last 8 KiB of it.
    pub fn text(&self) -> String {
        let bytes = self.0.lock().unwrap();
        let from = bytes.len().saturating_sub(8192);
        String::from_utf8_lossy(&bytes[from..]).into_owned()
    }
}

/// The `result` of a step's answer; a step that failed fails the test here, with the answer
/// and the bridge's stderr.
pub fn result<'a>(step: &str, answer: &'a Value, stderr: &Stderr) -> &'a Value {
    match answer.get("result") {
        Some(result) if answer.get("error").is_none() => result,
        _ => panic!(
            "{step} failed: {answer}\n--- musewire acp's stderr ---\n{}",
            stderr.text()
        ),
    }
}

/// The `sessionId` of a `session/new` answer, checked as [`result`] does.
pub fn session_id(answer: &Value, stderr: &Stderr) -> String {
    let id = result("session/new", answer, stderr)["sessionId"].as_str();
    id.unwrap_or_else(|| {
        panic!(
            "session/new gave no session id: {answer}\n--- musewire acp's stderr ---\n{}",
            stderr.text()
        )
    })
    .to_owned()
}
