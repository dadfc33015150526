//! The mio reactor's bound on writes the agent does not take, and its fairness: a flooding
//! agent does not starve the others on the same loop thread.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use musewire_core::client::CallError;
use musewire_mio::{AgentProcess, Reactor, OPS_QUEUE, WRITE_BACKLOG_BYTES};
use musewire_wire::Prompt;

mod common;
use common::bundled_agent;
#[path = "../../flood/probe.rs"]
mod probe;

const WAIT: Duration = Duration::from_secs(30);

/// Waits up to `WAIT` for `done`.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < WAIT, "{what}: not in {WAIT:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn kill(agent: &AgentProcess) {
    let status = Command::new("kill")
        .args(["-KILL", &agent.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "{status:?}");
}

#[test]
fn mio_stops_taking_calls_past_the_write_backlog() {
    // An agent that never reads its stdin nor says it is ready: every line is held.
    let mut command = Command::new("sleep");
    command.arg("30");
    let agent = AgentProcess::spawn(command, Default::default()).expect("spawned");
    let message = "x".repeat(256 * 1024);
    let returned = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (agent, message, returned) = (&agent, &message, &returned);
        // `send` has no timeout: past the bound it waits for room as long as it takes.
        let caller = scope.spawn(move || loop {
            agent.send(Prompt::new(message).into())?;
            returned.fetch_add(1, Ordering::SeqCst);
        });
        // The loop takes prompts until a MiB waits for the agent, then no more: the caller
        // waits in the bounded queue and memory stops growing.
        let bound = WRITE_BACKLOG_BYTES / message.len() + 1;
        eventually("the bound reached", || {
            returned.load(Ordering::SeqCst) >= bound - 1
        });
        // It settles (nothing more taken for half a second, however slowly a busy machine
        // lets the loop take what was already queued) within the bound.
        let (mut taken, mut since) = (returned.load(Ordering::SeqCst), Instant::now());
        eventually("the calls stopped being taken", || {
            let now = returned.load(Ordering::SeqCst);
            if now != taken {
                (taken, since) = (now, Instant::now());
            }
            since.elapsed() >= Duration::from_millis(500)
        });
        assert!(taken <= bound + OPS_QUEUE, "{taken} prompts went through");
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            returned.load(Ordering::SeqCst),
            taken,
            "it kept taking calls"
        );

        // A call with a timeout waits for room no longer than its timeout, and is then
        // dropped unsent: the queue stays as full as it was.
        for timeout in [Duration::from_millis(1), Duration::from_millis(200)] {
            let start = Instant::now();
            let result = agent.prompt(message, timeout);
            let took = start.elapsed();
            assert!(
                matches!(result, Err(CallError::Timeout(t)) if t == timeout),
                "{result:?}"
            );
            assert!(
                took >= timeout,
                "returned after {took:?}, before its {timeout:?}"
            );
            assert!(took < timeout + Duration::from_secs(20), "took {took:?}");
        }
        assert_eq!(
            returned.load(Ordering::SeqCst),
            taken,
            "a timed-out call went in"
        );

        // When the agent ends, the waiting call fails instead of waiting for ever.
        kill(agent);
        let end: Result<(), CallError> = caller.join().expect("the caller");
        assert!(
            matches!(end, Err(CallError::Ended | CallError::Refused(_))),
            "{end:?}"
        );
    });
    let status = agent.shutdown(Duration::from_secs(5));
    assert!(status.is_ok_and(|s| !s.success()));
}

/// What the flooding agent would write if it were let (`drivers/flood/flood_agent.py`):
/// more than it can in the test's time.
const FLOOD: u64 = 4 << 30;

#[test]
fn a_flooding_agent_does_not_starve_the_others_on_its_reactor() {
    let progress = probe::scratch("mio", "starve");
    let written = || probe::written(&progress);
    let reactor = Reactor::new().expect("reactor");
    let mut flood = Command::new("python3");
    flood
        .arg(probe::SCRIPT)
        .args(["flood", &FLOOD.to_string()])
        .env("FAKE_PROGRESS", &progress);
    let flooding = reactor.spawn(flood, Default::default()).expect("flood");
    let quiet = reactor
        .spawn(bundled_agent(), Default::default())
        .expect("spawned");
    quiet.get_state(WAIT).expect("ready");
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        // The flood's events are taken as fast as they come, so the loop reads it flat out.
        let (flooding, done) = (&flooding, &done);
        let taker = scope.spawn(move || {
            let mut taken = 0u64;
            while !done.load(Ordering::SeqCst) && flooding.next_event(WAIT).is_some() {
                taken += 1;
            }
            taken
        });
        eventually("the flood under way", || written() > 8 << 20);
        // The other agent on the same loop is answered call after call meanwhile, while the
        // flood goes on: at least 30 calls, and as many more as it takes the flood to write
        // another MiB (the calls can be quicker than that on a busy machine).
        let before = written();
        let started = Instant::now();
        let (mut calls, mut slowest) = (0, Duration::ZERO);
        while calls < 30 || written() < before + (1 << 20) {
            assert!(
                started.elapsed() < WAIT,
                "the flood did not go on beside {calls} calls ({before} -> {} bytes)",
                written()
            );
            let start = Instant::now();
            quiet.get_state(WAIT).expect("answered during the flood");
            slowest = slowest.max(start.elapsed());
            calls += 1;
        }
        let during = written();
        eprintln!(
            "{calls} calls beside the flood: slowest {slowest:?}, flood {before} -> {during} bytes"
        );
        // Starved, a call would wait for the flood's end (minutes); a busy machine alone
        // takes seconds at most.
        assert!(
            slowest < Duration::from_secs(10),
            "a call took {slowest:?} beside the flood"
        );
        done.store(true, Ordering::SeqCst);
        assert!(taker.join().expect("taker") > 0);
    });
    flooding.shutdown(Duration::ZERO).expect("stopped");
}
