//! CALL-11 (ours): an agent process a driver starts leads a process group of its own, and
//! that group is killed whole when the driver kills the agent and once the agent has exited,
//! so nothing the agent started outlives it (its shell commands, a server it left running).
//!
//! A group of its own also means a terminal's Ctrl-C (SIGINT to the terminal's foreground
//! group) no longer reaches the agent: the host decides when its agent stops
//! ([`Op::Shutdown`](crate::Op::Shutdown) with a grace, or dropping the handle). An agent
//! whose host dies without stopping it sees its stdin end, which ends omp, pi and
//! `musewire agent`.
//!
//! Both drivers call these two functions and nothing else for it, and so does the ACP
//! server for each editor session's agent and MCP server (ACP-12, MCP-01).

use std::os::unix::process::CommandExt;
use std::process::Command;

use rustix::process::{kill_process_group, Pid, Signal};

/// Makes the process `command` starts the leader of a new process group, whose id is then
/// the process's pid (`setpgid(0, 0)` in the child before it runs the program). A group the
/// caller set on `command` is replaced.
pub fn lead_own_group(command: &mut Command) -> &mut Command {
    command.process_group(0)
}

/// Kills (SIGKILL) every process left in the group that the process `leader` was started to
/// lead ([`lead_own_group`]), the leader too if it still runs. A group with no process left
/// is not an error: the kill finds nothing.
///
/// Call it only for a child started with [`lead_own_group`]: for any other child, `leader`
/// is not a group's id, or is another group's. While any process of the group lives, its id
/// is not given to a new process, so a kill sent while the leader is unreaped, or right after
/// reaping it, reaches only the group it led.
pub fn kill_group(leader: u32) {
    let group = i32::try_from(leader).ok().and_then(Pid::from_raw);
    if let Some(group) = group {
        let _ = kill_process_group(group, Signal::KILL);
    }
}
