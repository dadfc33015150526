//! Calls made now and taken later: one thread keeps calls open on many agents at once
//! ([`AgentProcess::submit_to`] and [`Completions`]), against the bundled agent
//! (`musewire agent`), and no thread is started for them.
//!
//! The only test of its binary: it counts this process's threads (see `common`).

use std::time::Duration;

use musewire_core::client::Call;
use musewire_mio::{AgentProcess, Completions, Reactor};
use musewire_wire::{GetState, SessionState};

mod common;
use common::{bundled_agent, threads};

const WAIT: Duration = Duration::from_secs(30);
const AGENTS: usize = 10;
const ROUNDS: usize = 5;

fn get_state() -> Call {
    Call::Send(GetState::default().into())
}

#[test]
fn one_thread_keeps_calls_open_on_many_agents() {
    let reactor = Reactor::new().expect("reactor");
    let agents: Vec<AgentProcess> = (0..AGENTS)
        .map(|_| {
            reactor
                .spawn(bundled_agent(), Default::default())
                .expect("spawn")
        })
        .collect();
    let before = threads();
    let done = Completions::new();
    // Every agent has a call open at once, all made from this thread; each answer taken is
    // followed by the next call on the same agent, ROUNDS in all.
    let mut pending: Vec<_> = agents
        .iter()
        .enumerate()
        .map(|(i, a)| {
            a.submit_to::<SessionState>(get_state(), &done, i as u64)
                .expect("made")
        })
        .collect();
    let mut answered = vec![0usize; AGENTS];
    for _ in 0..AGENTS * ROUNDS {
        let i = done.next(WAIT).expect("an answer in time") as usize;
        let state = pending[i]
            .try_take()
            .expect("its answer is there once its tag is")
            .expect("get_state answered");
        assert!(state.session_id.is_some(), "{state:?}");
        assert!(pending[i].is_taken());
        answered[i] += 1;
        if answered[i] < ROUNDS {
            pending[i] = agents[i]
                .submit_to(get_state(), &done, i as u64)
                .expect("made");
        }
    }
    assert_eq!(answered, vec![ROUNDS; AGENTS]);
    // A Pending dropped before its answer came puts no tag (the call is withdrawn, or its
    // answer dropped): the next call's tag is the only one to come.
    drop(agents[0].submit_to::<SessionState>(get_state(), &done, 99));
    let mut next = agents[0]
        .submit_to::<SessionState>(get_state(), &done, 0)
        .expect("made");
    assert_eq!(done.next(WAIT), Some(0));
    next.try_take()
        .expect("answered")
        .expect("get_state answered");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(done.try_next(), None, "each call's tag comes once");
    // No thread was started for the calls: the reactor's one serves them all.
    assert_eq!(threads(), before);
}
