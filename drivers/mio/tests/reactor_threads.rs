//! Many agents on one mio thread, against the bundled agent (`musewire agent`): twenty agents
//! on one [`Reactor`], called from several threads at once, each streaming its own turn, one
//! killed and one shut down, and the thread gone with the reactor and its agents.
//!
//! The only test of its binary: it counts this process's threads (see `common`).

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use musewire_core::client::{CallError, ClientEvent};
use musewire_mio::{AgentProcess, Reactor};

mod common;
use common::{bundled_agent, threads};

const WAIT: Duration = Duration::from_secs(30);
const AGENTS: usize = 20;
const CALLERS: usize = 4;

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
fn one_reactor_thread_drives_twenty_agents() {
    let before = threads();
    let reactor = Reactor::new().expect("reactor");
    let with_reactor = threads();
    assert_eq!(with_reactor, before + 1, "the reactor is one thread");
    let agents: Vec<AgentProcess> = (0..AGENTS)
        .map(|_| reactor.spawn(bundled_agent(), Default::default()))
        .collect::<std::io::Result<_>>()
        .expect("spawned");
    // Twenty agents, and still the one loop thread.
    assert_eq!(threads(), with_reactor, "no thread per agent");
    eventually("every agent on the reactor", || reactor.agents() == AGENTS);

    // Several threads call every agent at once, each agent from several threads.
    let answered = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..CALLERS {
            let (agents, answered) = (&agents, &answered);
            scope.spawn(move || {
                for _ in 0..5 {
                    for agent in agents {
                        let state = agent.get_state(WAIT).expect("get_state");
                        assert_eq!(state.is_streaming, Some(false), "{state:?}");
                        answered.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
    });
    assert_eq!(answered.load(Ordering::SeqCst), CALLERS * 5 * AGENTS);
    // (A scope's threads end a moment after their work.)
    eventually("the callers gone, the loop alone", || {
        threads() == with_reactor
    });

    // A prompt each; every agent streams its own turn back, all at once on the one thread.
    for (i, agent) in agents.iter().enumerate() {
        agent
            .prompt(&format!("hello agent{i}"), WAIT)
            .expect("prompt");
    }
    for (i, agent) in agents.iter().enumerate() {
        let mut text = String::new();
        loop {
            match agent.next_event(WAIT) {
                Some(ClientEvent::TurnFinished) => break,
                Some(event) => text.extend(event.text_delta()),
                None => panic!("agent {i}: no agent_end"),
            }
        }
        assert!(text.contains(&format!("agent{i}")), "agent {i}: {text:?}");
    }

    // One agent killed, one shut down: both are removed, the others go on.
    let mut agents = agents;
    let killed = agents.remove(0);
    kill(&killed);
    eventually("the killed agent removed", || {
        reactor.agents() == AGENTS - 1
    });
    assert!(matches!(
        killed.get_state(WAIT),
        Err(CallError::Ended | CallError::Refused(_))
    ));
    let status = agents.remove(0).shutdown(WAIT).expect("shut down");
    assert!(status.success(), "{status:?}");
    assert_eq!(reactor.agents(), AGENTS - 2);
    for agent in &agents {
        agent.get_state(WAIT).expect("the others go on");
    }
    drop(killed);

    // The thread ends once the reactor and its agents are gone, in either order.
    drop(reactor);
    assert_eq!(threads(), with_reactor, "agents keep the thread");
    drop(agents);
    eventually("the reactor thread ended", || threads() == before);
}
