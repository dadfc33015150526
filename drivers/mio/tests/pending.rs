//! Calls made now and taken later: one thread keeps calls open on many agents at once
//! ([`AgentProcess::submit_to`] and [`Completions`]), against the bundled agent
//! (`musewire agent`) and a fake agent that never answers.
//!
//! The test binary is its own agent (see `common`). The tests run one after the other, as they
//! count this process's threads.

use std::process::Command;
use std::time::Duration;

use musewire_core::client::{commands, Call, CallError};
use musewire_core::wire::SessionState;
use musewire_mio::{AgentProcess, Completions, Reactor};

mod common;
use common::{bundled_agent, threads};

const WAIT: Duration = Duration::from_secs(30);
const AGENTS: usize = 10;
const ROUNDS: usize = 5;

fn main() {
    common::run_agent_if_child();
    one_thread_keeps_calls_open_on_many_agents();
    println!("test one_thread_keeps_calls_open_on_many_agents ... ok");
    a_pending_answer_can_wait_again_and_ends_with_its_agent();
    println!("test a_pending_answer_can_wait_again_and_ends_with_its_agent ... ok");
}

fn get_state() -> Call {
    Call::Send(commands::get_state())
}

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

fn a_pending_answer_can_wait_again_and_ends_with_its_agent() {
    // A fake agent: its ready frame, then it reads commands and never answers.
    let mut command = Command::new("python3");
    command.args([
        "-c",
        "import sys\nsys.stdout.write('{\"type\":\"ready\",\"protocolVersion\":1,\"supportedProtocolVersions\":[1]}\\n')\nsys.stdout.flush()\nfor _ in sys.stdin: pass\n",
    ]);
    let agent = AgentProcess::spawn(command, Default::default()).expect("spawn");
    let done = Completions::new();
    let mut pending = agent
        .submit_to::<SessionState>(get_state(), &done, 7)
        .expect("made");
    assert!(pending.try_take().is_none(), "no answer yet");
    assert!(matches!(
        pending.wait(Duration::from_millis(50)),
        Err(CallError::Timeout(t)) if t == Duration::from_millis(50)
    ));
    assert_eq!(done.try_next(), None);
    // The agent ends without answering: the call's tag comes, and its answer is the failure
    // the session's end gives every open request, as a blocked call gets.
    let status = Command::new("kill")
        .args(["-KILL", &agent.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    assert_eq!(done.next(WAIT), Some(7));
    let ended = pending.wait(WAIT);
    assert!(
        matches!(&ended, Err(CallError::Failed(f)) if f.error.contains("exited")),
        "{ended:?}"
    );
    // Taken once.
    assert!(matches!(pending.wait(WAIT), Err(CallError::Ended)));
    assert!(pending.is_taken());
}
