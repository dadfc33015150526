//! Bounded queues in the smol host driver: a call waiting for room in the write queue is never
//! deadlocked by the events held back. Its own test binary: the events read while the calls
//! wait pile up by design, which would blur the peak memory measured in `backpressure.rs`.

use std::time::Duration;

use musewire_smol::AgentProcess;
use smol::future;

#[path = "../../flood/probe.rs"]
mod probe;

fn fake(args: &[&str]) -> smol::process::Command {
    let mut command = smol::process::Command::new("python3");
    command.arg(probe::SCRIPT);
    command.args(args);
    command
}

#[test]
fn smol_a_call_waiting_for_room_is_not_deadlocked_by_events_held_back() {
    // The agent reads its stdin only while its stdout is read; the application writes to it
    // without taking a single event. Were stdout held back while the calls wait for room in
    // the write queue, neither side would ever move.
    smol::block_on(async {
        let agent = AgentProcess::spawn(fake(&["lockstep"]), Default::default()).unwrap();
        let line = vec![b'x'; 64 << 10];
        let writes = async {
            for _ in 0..24 {
                assert!(matches!(agent.send_raw_line(&line).await, Ok(true)));
            }
            true
        };
        let timeout = async {
            smol::Timer::after(Duration::from_secs(60)).await;
            false
        };
        assert!(future::or(writes, timeout).await, "1.5 MiB written in time");
        agent.shutdown(Duration::ZERO).await.unwrap();
    });
}
