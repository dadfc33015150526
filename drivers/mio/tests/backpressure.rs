//! Bounded memory in the mio host driver under a flooding agent and a stalled application
//! (issue 13 item 3): while the application takes no events the loop stops reading the
//! agent's stdout past the backlog, a call is still answered meanwhile, and taking events
//! lets the agent go on. The fake agent is the smol driver's (`flood_agent.py`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use musewire_core::client::commands;
use musewire_mio::{AgentProcess, BACKLOG_BYTES};

/// What the fake agent would write if it were let: far more than the bound.
const FLOOD: u64 = 400 << 20;
const WAIT: Duration = Duration::from_secs(30);

fn flood_agent(progress: &Path) -> Command {
    let mut command = Command::new("python3");
    command
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../smol/tests/flood_agent.py"
        ))
        .args(["flood", &FLOOD.to_string()])
        .env("FAKE_PROGRESS", progress);
    command
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("musewire-mio-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("progress")
}

/// What the fake agent has written so far (it says every 256 KiB).
fn written(progress: &Path) -> u64 {
    std::fs::read_to_string(progress)
        .ok()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or(0)
}

/// This process's peak resident memory (VmHWM), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

/// Waits until the flooding agent has been held back (nothing more written for a second);
/// what it wrote, or `None` when it wrote everything (no backpressure).
fn held_back(progress: &Path) -> Option<u64> {
    let started = Instant::now();
    let (mut last, mut since) = (0, Instant::now());
    while started.elapsed() < Duration::from_secs(60) {
        let now = written(progress);
        if now >= FLOOD {
            return None;
        }
        if now != last {
            (last, since) = (now, Instant::now());
        } else if now > 0 && since.elapsed() > Duration::from_secs(1) {
            return Some(now);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn issue13_item3_mio_stops_reading_a_flooding_agent_while_events_are_not_taken() {
    let progress = scratch("flood");
    let agent = AgentProcess::spawn(flood_agent(&progress), Default::default()).unwrap();
    let stalled = held_back(&progress).expect("the agent was held back");
    // The backlog, the agent's pipe and one turn's reads: far below what it had to write.
    assert!(
        stalled < 4 * BACKLOG_BYTES,
        "the agent wrote {stalled} bytes"
    );
    assert!(peak_rss() < 96 << 20, "peak RSS {} bytes", peak_rss());
    // Taking the events lets it go on.
    let events = (stalled / 4000) as usize + 600;
    for taken in 0..events {
        assert!(
            agent.next_event(WAIT).is_some(),
            "event {taken} of {events} did not come"
        );
    }
    assert!(
        written(&progress) > stalled,
        "reading resumed once events were taken"
    );
    agent.shutdown(Duration::ZERO).unwrap();
}

#[test]
fn issue13_item3_mio_answers_a_call_while_events_are_held_back() {
    let progress = scratch("call");
    let agent = AgentProcess::spawn(flood_agent(&progress), Default::default()).unwrap();
    let stalled = held_back(&progress).expect("the agent was held back");
    // Answered without the application taking a single event, the agent let write only as
    // far as the answer.
    let answered = agent.call(commands::abort(), WAIT);
    assert!(answered.is_ok(), "the call was answered: {answered:?}");
    let after = written(&progress);
    assert!(after < FLOOD, "the flood never stopped");
    assert!(
        after < stalled + 4 * BACKLOG_BYTES,
        "wrote {after} bytes after {stalled}"
    );
    assert!(peak_rss() < 96 << 20, "peak RSS {} bytes", peak_rss());
    agent.shutdown(Duration::ZERO).unwrap();
}
