//! Bounded memory in the mio host driver under a flooding agent and a stalled application:
//! while the application takes no events the loop stops reading the agent's stdout past the
//! backlog, a call is still answered meanwhile, and taking events lets the agent go on. The
//! fake agent is the drivers' (`drivers/flood/flood_agent.py`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use musewire_mio::{AgentProcess, BACKLOG_BYTES};
use musewire_wire::Abort;

/// What the fake agent would write if it were let: far more than the bound.
const FLOOD: u64 = 400 << 20;
const WAIT: Duration = Duration::from_secs(30);

#[path = "../../flood/probe.rs"]
mod probe;
use probe::{peak_rss, written};

fn flood_agent(progress: &Path) -> Command {
    let mut command = Command::new("python3");
    command
        .arg(probe::SCRIPT)
        .args(["flood", &FLOOD.to_string()])
        .env("FAKE_PROGRESS", progress);
    command
}

fn scratch(name: &str) -> PathBuf {
    probe::scratch("mio", name)
}

fn held_back(progress: &Path) -> Option<u64> {
    probe::held_back(progress, FLOOD)
}

#[test]
fn mio_stops_reading_a_flooding_agent_while_events_are_not_taken() {
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
fn mio_answers_a_call_while_events_are_held_back() {
    let progress = scratch("call");
    let agent = AgentProcess::spawn(flood_agent(&progress), Default::default()).unwrap();
    let stalled = held_back(&progress).expect("the agent was held back");
    // Answered without the application taking a single event, the agent let write only as
    // far as the answer.
    let answered = agent.call(Abort::default(), WAIT);
    assert!(answered.is_ok(), "the call was answered: {answered:?}");
    let after = written(&progress);
    assert!(
        after < stalled + 4 * BACKLOG_BYTES,
        "wrote {after} bytes after {stalled}"
    );
    assert!(peak_rss() < 96 << 20, "peak RSS {} bytes", peak_rss());
    agent.shutdown(Duration::ZERO).unwrap();
}
