//! Bounded queues in the smol host driver: a host tool handler that floods updates
//! (`Updates::send`) goes at the agent's pace, held back when the agent does not read (bounded
//! memory), and is never deadlocked by the events held back while it waits.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use musewire_smol::{AgentProcess, OPS_QUEUE, WRITE_BACKLOG_BYTES};
use musewire_wire::ToolResult;
use smol::future;

#[path = "../../flood/probe.rs"]
mod probe;

/// Each update's text.
const UPDATE: usize = 64 << 10;

/// The stand-in agent in `mode`, which asks the host for the tool `flood` at once.
fn fake(mode: &str) -> smol::process::Command {
    let mut command = smol::process::Command::new("python3");
    command.arg(probe::SCRIPT);
    command.arg(mode).env("FAKE_HOST_TOOL", "flood");
    command
}

/// Runs a `flood` handler that sends up to `updates` updates of [`UPDATE`] bytes; returns
/// the count of updates sent so far and whether the handler finished.
fn flood(agent: &AgentProcess, updates: usize) -> (Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (sent, done) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (counted, finished) = (sent.clone(), done.clone());
    agent.on_host_tool("flood", move |_call, progress| {
        let (counted, finished) = (counted.clone(), finished.clone());
        async move {
            for _ in 0..updates {
                if !progress.send(ToolResult::text("u".repeat(UPDATE))).await {
                    break;
                }
                counted.fetch_add(1, SeqCst);
            }
            finished.fetch_add(1, SeqCst);
            ToolResult::text("done").into()
        }
    });
    (sent, done)
}

#[test]
fn smol_a_flooding_tool_handler_waits_for_an_agent_that_does_not_read() {
    smol::block_on(async {
        let agent = AgentProcess::spawn(fake("sink"), Default::default()).unwrap();
        let (sent, done) = flood(&agent, 256);
        // Held back: the count stops moving well before the 16 MiB the handler wants to send.
        let started = Instant::now();
        let (mut last, mut since) = (0, Instant::now());
        while last == 0 || since.elapsed() < Duration::from_secs(1) {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "never held back"
            );
            let now = sent.load(SeqCst);
            if now != last {
                (last, since) = (now, Instant::now());
            }
            smol::Timer::after(Duration::from_millis(50)).await;
        }
        // The write backlog, the pipe's own buffer and the operations queue, nothing more.
        let bound = WRITE_BACKLOG_BYTES / UPDATE + OPS_QUEUE + 4;
        assert!(last <= bound, "{last} updates taken, bound {bound}");
        assert_eq!(done.load(SeqCst), 0, "the handler waits, it did not finish");
        agent.shutdown(Duration::ZERO).await.unwrap();
    });
}

#[test]
fn smol_a_flooding_tool_handler_is_not_deadlocked_by_events_held_back() {
    // The agent reads its stdin only while its stdout is read, and the application takes no
    // event: were stdout held back while the handler's updates wait for room in the write
    // queue, neither side would ever move.
    smol::block_on(async {
        let agent = AgentProcess::spawn(fake("lockstep"), Default::default()).unwrap();
        let updates = 3 * WRITE_BACKLOG_BYTES / UPDATE;
        let (sent, done) = flood(&agent, updates);
        let finished = async {
            while done.load(SeqCst) == 0 {
                smol::Timer::after(Duration::from_millis(20)).await;
            }
            true
        };
        let timeout = async {
            smol::Timer::after(Duration::from_secs(60)).await;
            false
        };
        assert!(
            future::or(finished, timeout).await,
            "the handler finished in time ({} of {updates} updates)",
            sent.load(SeqCst)
        );
        assert_eq!(sent.load(SeqCst), updates);
        agent.shutdown(Duration::ZERO).await.unwrap();
    });
}
