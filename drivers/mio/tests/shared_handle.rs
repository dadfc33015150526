//! One `AgentProcess` shared by two threads at once (blocking calls from any thread): one makes
//! `get_state` calls in a loop and prompts, the other takes the events, against the bundled
//! agent (`musewire agent`).

use std::time::Duration;

use musewire_core::client::ClientEvent;
use musewire_mio::AgentProcess;

mod common;
const WAIT: Duration = Duration::from_secs(60);
const CALLS: usize = 200;

#[test]
fn one_handle_calls_from_one_thread_while_another_takes_events() {
    let agent = AgentProcess::spawn(common::bundled_agent(), Default::default()).expect("spawned");
    let (states, turn) = std::thread::scope(|scope| {
        // Shared by reference: the handle is Sync.
        let agent = &agent;
        let caller = scope.spawn(move || {
            let mut states = 0;
            for i in 0..CALLS {
                agent.get_state(WAIT).expect("get_state");
                states += 1;
                if i == CALLS / 2 {
                    agent.prompt("hello from one thread", WAIT).expect("prompt");
                }
            }
            states
        });
        let reader = scope.spawn(move || {
            let mut events = Vec::new();
            while let Some(event) = agent.next_event(WAIT) {
                let finished = event == ClientEvent::TurnFinished;
                events.push(event);
                if finished {
                    return events;
                }
            }
            panic!("the turn did not finish: {events:?}")
        });
        (
            caller.join().expect("caller"),
            reader.join().expect("reader"),
        )
    });
    assert_eq!(states, CALLS);
    // The reader saw the session start and the whole turn, none of the calls' answers (they
    // went to the caller).
    assert!(
        turn.iter().any(|e| matches!(e, ClientEvent::Ready { .. })),
        "{turn:?}"
    );
    assert!(turn.iter().any(|e| e.text_delta().is_some()), "{turn:?}");
    assert!(
        !turn
            .iter()
            .any(|e| matches!(e, ClientEvent::Response { .. })),
        "{turn:?}"
    );
    let status = agent.shutdown(WAIT).expect("shut down");
    assert!(status.success(), "{status:?}");
}
