//! `AgentProcess::spawn` puts every agent on the process's shared reactor, against the
//! bundled agent (`musewire agent`).
//!
//! The only test of its binary: it counts this process's threads (see `common`).

use std::time::{Duration, Instant};

use musewire_mio::AgentProcess;

mod common;
use common::{bundled_agent, threads};

const WAIT: Duration = Duration::from_secs(30);
const AGENTS: usize = 20;

/// Waits up to `WAIT` for `done`.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < WAIT, "{what}: not in {WAIT:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `AgentProcess::spawn` puts every agent on the process's shared reactor: one loop thread
/// for all of them, started with the first and ended after the last.
#[test]
fn spawned_agents_share_one_loop_thread() {
    let before = threads();
    let agents: Vec<AgentProcess> = (0..AGENTS)
        .map(|_| AgentProcess::spawn(bundled_agent(), Default::default()))
        .collect::<std::io::Result<_>>()
        .expect("spawned");
    assert_eq!(
        threads(),
        before + 1,
        "one loop thread for every spawned agent"
    );
    for agent in &agents {
        let state = agent.get_state(WAIT).expect("get_state");
        assert_eq!(state.is_streaming, Some(false), "{state:?}");
    }
    let mut agents = agents;
    agents
        .pop()
        .expect("an agent")
        .shutdown(WAIT)
        .expect("shut down");
    assert_eq!(threads(), before + 1, "the loop goes on for the others");
    drop(agents);
    eventually("the loop thread gone with the last agent", || {
        threads() == before
    });
}
