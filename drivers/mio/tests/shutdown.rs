//! CALL-11: stopping an agent process.
//! - A stop with a grace (`AgentProcess::shutdown`) closes the agent's stdin only once what
//!   was queued for it is written (`Plumbing::close_stdin`, one meaning in every driver): a
//!   line the agent had not yet taken when the stop came still reaches it before its end of
//!   input. The agent here is a shell that takes nothing for half a second, so a line larger
//!   than the pipe waits in the driver's queue when the stop comes, then counts the bytes it
//!   is given.
//! - The agent leads a process group of its own, and what it leaves running in it ends with
//!   it: at its own exit, and when the stop's grace runs out and it is killed.
//!
//! CALL-07: the agent's exit is seen, and goes in after all of its output: an exit while what
//! it left holds its output open, and an answer written just before the exit.

use musewire_core::client::ClientEvent;
use musewire_host::BlockingHandle;
use musewire_mio::AgentProcess;
use musewire_wire::GetLastAssistantText;

#[path = "../../flood/probe.rs"]
mod probe;

#[test]
fn call_11_a_stop_with_a_grace_writes_the_queued_stdin_before_closing_it() {
    let count = probe::scratch("mio", "shutdown").with_file_name("count");
    let agent = AgentProcess::spawn(probe::counting_agent(&count), Default::default()).unwrap();
    let line = probe::large_line();
    // Once the agent is ready, so the line is queued for it, not held by the client.
    while !matches!(
        agent.next_event(probe::BUSY_WAIT),
        Some(ClientEvent::Ready { .. }) | None
    ) {}
    assert!(agent.send_raw_line(line.as_bytes()).unwrap());
    let status = agent.shutdown(probe::BUSY_WAIT).unwrap();
    probe::assert_given_whole(&count, line.len(), status);
}

/// The agent, started by this driver for the CALL-11 checks.
fn start(command: std::process::Command) -> probe::Started {
    let agent = AgentProcess::spawn(command, Default::default()).unwrap();
    probe::Started {
        pid: agent.id(),
        stop: Box::new(move |grace| agent.shutdown(grace).unwrap()),
    }
}

/// CALL-11: the agent leads a group of its own (a terminal's Ctrl-C, sent to the host's
/// group, does not reach it), and what it left running in the group is killed once it has
/// exited at the end of its stdin.
#[test]
fn call_11_the_agent_leads_a_group_of_its_own_and_what_it_left_ends_at_its_exit() {
    probe::check_group_ends_at_exit("mio", start);
}

/// CALL-11: an agent that does not end at the end of its stdin is killed when the stop's
/// grace runs out, and its whole group with it.
#[test]
fn call_11_a_stop_past_its_grace_kills_the_agents_whole_group() {
    probe::check_stop_kills_group("mio", start);
}

/// CALL-07, CALL-11: an agent that exits on its own while what it left outside its group
/// holds its output open is seen to exit (its pidfd wakes the loop; without one, the exit is
/// asked for at intervals).
#[test]
fn call_07_an_exit_while_what_the_agent_left_holds_its_output_is_seen() {
    probe::check_exit_seen_while_output_held("mio", |command| {
        let agent = AgentProcess::spawn(command, Default::default()).unwrap();
        let started = std::time::Instant::now();
        while let Some(left) = probe::BUSY_WAIT.checked_sub(started.elapsed()) {
            match agent.next_event(left) {
                Some(ClientEvent::Closed { .. }) => return true,
                Some(_) => {}
                None => return false,
            }
        }
        false
    });
}

/// CALL-07: an answer the agent writes just before it exits is heard, not the exit in its
/// place (the agent answers with 60 KB and exits at once: the loop reads stdout until it
/// would block before it asks for the exit).
#[test]
fn call_07_an_answer_written_just_before_the_exit_is_heard() {
    probe::check_answer_before_exit_heard("mio", |command, _took| {
        let agent = AgentProcess::spawn(command, Default::default()).unwrap();
        let handle: &dyn BlockingHandle = &agent;
        match handle.call(GetLastAssistantText::default(), probe::BUSY_WAIT) {
            Ok(data) => Ok(data.text.map_or(0, |t| t.len())),
            other => Err(format!("{other:?}")),
        }
    });
}

/// CALL-11: a process the agent left outside its group (a session of its own) holds the
/// agent's stdout and stderr open after the agent exits: the session still ends, its output
/// abandoned `OUTPUT_GRACE` after the exit, instead of waiting for that process.
#[test]
fn call_11_output_held_open_by_what_left_the_group_ends_after_the_output_grace() {
    probe::check_output_grace("mio", musewire_host::OUTPUT_GRACE, start);
}
