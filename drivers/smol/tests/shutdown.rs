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

use std::time::{Duration, Instant};

use musewire_core::client::ClientEvent;
use musewire_smol::{AgentProcess, CallError};
use musewire_wire::GetLastAssistantText;
use smol::process::Command;

#[path = "../../flood/probe.rs"]
mod probe;

#[test]
fn call_11_a_stop_with_a_grace_writes_the_queued_stdin_before_closing_it() {
    let count = probe::scratch("smol", "shutdown").with_file_name("count");
    let line = probe::large_line();
    let status = smol::block_on(async {
        let agent = AgentProcess::spawn(
            Command::from(probe::counting_agent(&count)),
            Default::default(),
        )
        .unwrap();
        // Once the agent is ready, so the line is queued for it, not held by the client.
        while !matches!(
            agent.next_event().await,
            Some(ClientEvent::Ready { .. }) | None
        ) {}
        assert!(agent.send_raw_line(line.as_bytes()).await.unwrap());
        agent.shutdown(probe::BUSY_WAIT).await.unwrap()
    });
    probe::assert_given_whole(&count, line.len(), status);
}

/// The agent, started by this driver for the CALL-11 checks.
fn start(command: std::process::Command) -> probe::Started {
    let agent = AgentProcess::spawn(command, Default::default()).unwrap();
    probe::Started {
        pid: agent.id(),
        stop: Box::new(move |grace| smol::block_on(agent.shutdown(grace)).unwrap()),
    }
}

/// CALL-11: the agent leads a group of its own (a terminal's Ctrl-C, sent to the host's
/// group, does not reach it), and what it left running in the group is killed once it has
/// exited at the end of its stdin.
#[test]
fn call_11_the_agent_leads_a_group_of_its_own_and_what_it_left_ends_at_its_exit() {
    probe::check_group_ends_at_exit("smol", start);
}

/// CALL-11: an agent that does not end at the end of its stdin is killed when the stop's
/// grace runs out, and its whole group with it.
#[test]
fn call_11_a_stop_past_its_grace_kills_the_agents_whole_group() {
    probe::check_stop_kills_group("smol", start);
}

/// CALL-07, CALL-11: an agent that exits on its own while what it left outside its group
/// holds its output open is seen to exit (its pidfd wakes the task; without one, the exit is
/// asked for at intervals).
#[test]
fn call_07_an_exit_while_what_the_agent_left_holds_its_output_is_seen() {
    probe::check_exit_seen_while_output_held("smol", |command| {
        smol::block_on(async {
            let agent = AgentProcess::spawn(command, Default::default()).unwrap();
            let closed = async {
                while let Some(event) = agent.next_event().await {
                    if matches!(event, ClientEvent::Closed { .. }) {
                        return true;
                    }
                }
                false
            };
            let late = async {
                smol::Timer::after(probe::BUSY_WAIT).await;
                false
            };
            smol::future::or(closed, late).await
        })
    });
}

/// CALL-07: an answer the agent writes just before it exits is heard, not the exit in its
/// place, though the driver finds the exit reported while the answer is still in the pipe:
/// its task is kept off smol's executor (the executor's thread taken for half a second) while
/// the agent answers and exits, and then reads a buffer a wake.
#[test]
fn call_07_an_answer_written_just_before_the_exit_is_heard() {
    probe::check_answer_before_exit_heard("smol", |command, took| {
        let agent = AgentProcess::spawn(command, Default::default()).unwrap();
        let stall = {
            let took = took.to_owned();
            std::thread::spawn(move || {
                let start = Instant::now();
                while !took.exists() && start.elapsed() < probe::BUSY_WAIT {
                    std::thread::sleep(Duration::from_millis(1));
                }
                smol::spawn(async { std::thread::sleep(Duration::from_millis(500)) }).detach();
            })
        };
        let answered = smol::block_on(async {
            let call = agent.call(GetLastAssistantText::default());
            let late = async {
                smol::Timer::after(probe::BUSY_WAIT).await;
                Err(CallError::Ended)
            };
            smol::future::or(call, late).await
        });
        stall.join().unwrap();
        match answered {
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
    probe::check_output_grace("smol", musewire_host::OUTPUT_GRACE, start);
}

/// CALL-11: smol's own `Command` cannot be given a group, so an agent started from one runs
/// in the host's group as it is, and its stop kills the agent alone, never the host's group.
#[test]
fn call_11_an_agent_from_a_smol_command_stays_in_the_hosts_group() {
    let left = probe::scratch("smol", "group-smol").with_file_name("left");
    let command = Command::from(probe::group_agent(&left, "stays"));
    let agent = AgentProcess::spawn(command, Default::default()).unwrap();
    let leader = agent.id() as i32;
    let sleeper = probe::left_running(&left);
    assert_eq!(
        probe::process_group(leader),
        Some(probe::own_process_group())
    );
    let status = smol::block_on(agent.shutdown(Duration::from_millis(200))).unwrap();
    assert!(
        !status.success(),
        "the agent was to be killed, it ended with {status:?}"
    );
    // Not the agent's group to kill: the sleep is left, and ended here.
    assert_eq!(
        probe::process_group(sleeper),
        Some(probe::own_process_group())
    );
    let _ = std::process::Command::new("kill")
        .arg(sleeper.to_string())
        .status();
}
