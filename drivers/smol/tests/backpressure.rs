//! Bounded queues in the smol host driver: a flooding agent whose events the application does
//! not take is held back (the driver stops reading its stdout), a call is still answered
//! meanwhile, and writes to an agent that does not read wait.

use std::path::{Path, PathBuf};
use std::time::Duration;

use musewire_core::client::CallError;
use musewire_smol::{AgentProcess, BACKLOG_BYTES, OPS_QUEUE, WRITE_BACKLOG_BYTES};
use musewire_wire::Abort;
use smol::future;

const FLOOD: u64 = 400 << 20;

#[path = "../../flood/probe.rs"]
mod probe;
use probe::{peak_rss, written};

fn fake(args: &[&str], progress: Option<&Path>) -> smol::process::Command {
    let mut command = smol::process::Command::new("python3");
    command.arg(probe::SCRIPT);
    command.args(args);
    if let Some(progress) = progress {
        command.env("FAKE_PROGRESS", progress);
    }
    command
}

fn scratch(name: &str) -> PathBuf {
    probe::scratch("smol", name)
}

/// Waits until the flooding agent has been held back ([`probe::held_back`]).
async fn held_back(progress: &Path) -> Option<u64> {
    let progress = progress.to_owned();
    smol::unblock(move || probe::held_back(&progress, FLOOD)).await
}

#[test]
fn smol_stops_reading_a_flooding_agent_while_events_are_not_taken() {
    let progress = scratch("flood");
    smol::block_on(async {
        let command = fake(&["flood", &FLOOD.to_string()], Some(&progress));
        let agent = AgentProcess::spawn(command, Default::default()).unwrap();
        let stalled = held_back(&progress).await.expect("the agent was held back");
        // The backlog, the agent's pipe and one read: far below what it had to write.
        assert!(
            stalled < 4 * BACKLOG_BYTES,
            "the agent wrote {stalled} bytes"
        );
        let queued = agent.events().len();
        eprintln!(
            "held back after {stalled} bytes, {queued} events queued, peak RSS {} bytes",
            peak_rss()
        );
        assert!(queued > 0 && (queued as u64) * 4000 <= BACKLOG_BYTES + (128 << 10));
        assert!(peak_rss() < 96 << 20, "peak RSS {} bytes", peak_rss());
        // Taking the events lets it go on.
        for _ in 0..queued + 600 {
            agent.next_event().await.unwrap();
        }
        assert!(
            written(&progress) > stalled,
            "reading resumed once events were taken"
        );
        agent.shutdown(Duration::ZERO).await.unwrap();
    });
}

#[test]
fn smol_answers_a_call_while_events_are_held_back() {
    let progress = scratch("call");
    smol::block_on(async {
        let command = fake(&["flood", &FLOOD.to_string()], Some(&progress));
        let agent = AgentProcess::spawn(command, Default::default()).unwrap();
        let stalled = held_back(&progress).await.expect("the agent was held back");
        let call = agent.call(Abort::default());
        let timeout = async {
            smol::Timer::after(Duration::from_secs(30)).await;
            Err(CallError::Ended)
        };
        let answered = future::or(call, timeout).await;
        assert!(answered.is_ok(), "the call was answered: {answered:?}");
        // It was answered without the application taking a single event, and the agent was
        // let write only as far as the answer.
        let after = written(&progress);
        assert!(after < FLOOD, "the flood never stopped");
        assert!(agent.events().len() as u64 * 4000 >= stalled.min(BACKLOG_BYTES) / 2);
        agent.shutdown(Duration::ZERO).await.unwrap();
    });
}

#[test]
fn smol_writes_to_an_agent_that_does_not_read_wait_then_fail_clearly_once_it_is_gone() {
    smol::block_on(async {
        let agent = AgentProcess::spawn(fake(&["sink"], None), Default::default()).unwrap();
        let line = vec![b'x'; 64 << 10];
        let mut sent = 0usize;
        let stalled = loop {
            let send = async { Some(agent.send_raw_line(&line).await) };
            let timeout = async {
                smol::Timer::after(Duration::from_secs(2)).await;
                None
            };
            match future::or(send, timeout).await {
                Some(Ok(true)) => sent += 1,
                Some(other) => panic!("a write failed: {other:?}"),
                None => break sent,
            }
            assert!(sent < 1000, "64 MiB queued for an agent that reads nothing");
        };
        // The write queue, the operations queue and the agent's pipe: no more.
        eprintln!("{stalled} writes of 64 KiB taken before a call waited");
        let bound = (WRITE_BACKLOG_BYTES + (128 << 10)) / line.len() + OPS_QUEUE + 2;
        assert!(stalled <= bound, "{stalled} writes queued, bound {bound}");
        // A call waiting for room ends once the agent is gone (taken as room appears, or
        // failed), and the calls after it fail clearly.
        let pid = agent.id().to_string();
        let kill = async {
            smol::Timer::after(Duration::from_millis(200)).await;
            let _ = std::process::Command::new("kill").arg(&pid).status();
        };
        let send = async { Some(agent.send_raw_line(&line).await) };
        let timeout = async {
            smol::Timer::after(probe::BUSY_WAIT).await;
            None
        };
        let (result, ()) = future::zip(future::or(send, timeout), kill).await;
        assert!(result.is_some(), "the waiting call ended with the agent");
        let closed = async {
            while agent.next_event().await.is_some() {}
            true
        };
        let timeout = async {
            smol::Timer::after(probe::BUSY_WAIT).await;
            false
        };
        assert!(future::or(closed, timeout).await, "the session ended");
        let after = agent.send_raw_line(&line).await;
        assert!(
            matches!(after, Err(CallError::Ended) | Ok(false)),
            "{after:?}"
        );
    });
}
