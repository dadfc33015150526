//! A stop with a grace (`AgentProcess::shutdown`) closes the agent's stdin only once what was
//! queued for it is written (`Plumbing::close_stdin`, one meaning in every driver): a line the
//! agent had not yet taken when the stop came still reaches it before its end of input. The
//! agent here is a shell that takes nothing for half a second, so a line larger than the
//! pipe waits in the driver's queue when the stop comes, then counts the bytes it is given.

use std::time::Duration;

use musewire_core::client::ClientEvent;
use musewire_mio::AgentProcess;

#[path = "../../flood/probe.rs"]
mod probe;

#[test]
fn shutdown_with_a_grace_writes_the_queued_stdin_before_closing_it() {
    let count = probe::scratch("mio", "shutdown").with_file_name("count");
    let agent = AgentProcess::spawn(probe::counting_agent(&count), Default::default()).unwrap();
    let line = probe::large_line();
    // Once the agent is ready, so the line is queued for it, not held by the client.
    while !matches!(
        agent.next_event(Duration::from_secs(10)),
        Some(ClientEvent::Ready { .. }) | None
    ) {}
    assert!(agent.send_raw_line(line.as_bytes()).unwrap());
    let status = agent.shutdown(Duration::from_secs(10)).unwrap();
    probe::assert_given_whole(&count, line.len(), status);
}
