//! The agent a tool starts, and how it ends: the agent runs in a process group of its own, so
//! that whatever way the tool ends (the turn done, a timeout, an error, SIGTERM, SIGINT or
//! SIGHUP) the agent and everything it started end with it; and the tool never waits on
//! the agent's end longer than it said it would.

use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use musewire_core::client::ClientConfig;
use musewire_mio::AgentProcess;
use rustix::process::{kill_process_group, test_kill_process, Pid, Signal};

/// The process group of the running agent (its pid), 0 when there is none.
static GROUP: AtomicI32 = AtomicI32::new(0);

/// The signal being handled, 0 when none: the signal thread ends the process with it.
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// How long the agent's group has, after SIGTERM, before SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);

/// When a tool gives up: `--timeout SECS`, where 0 (and a time too far away to represent)
/// means no deadline.
#[derive(Debug, Clone, Copy)]
pub struct Deadline(Option<Instant>);

impl Deadline {
    /// `secs` from now; none for 0 or when the sum overflows an `Instant`.
    pub fn after_secs(secs: u64) -> Self {
        Deadline(if secs == 0 {
            None
        } else {
            Instant::now().checked_add(Duration::from_secs(secs))
        })
    }

    /// The time left (zero once passed); about a century without a deadline, which every
    /// timed wait can add to `now`.
    pub fn left(&self) -> Duration {
        match self.0 {
            Some(at) => at.saturating_duration_since(Instant::now()),
            None => Duration::from_secs(100 * 365 * 24 * 3600),
        }
    }
}

/// Starts `command` as the agent, in a new process group, and makes SIGTERM, SIGINT and
/// SIGHUP end that group before this process ends.
pub fn spawn(mut command: Command, config: ClientConfig) -> Result<AgentProcess, String> {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    watch_signals()?;
    let agent =
        AgentProcess::spawn(command, config).map_err(|e| format!("cannot start the agent: {e}"))?;
    GROUP.store(i32::try_from(agent.id()).unwrap_or(0), Ordering::SeqCst);
    Ok(agent)
}

/// For a tool that starts the agent process itself (`tap`): puts `command` in a process group
/// of its own and makes SIGTERM, SIGINT and SIGHUP end that group before this process ends.
/// Call [`started`] with the child's pid once it runs.
pub fn prepare(command: &mut Command) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    watch_signals()
}

/// The agent started with [`prepare`] runs as `pid` (its group).
pub fn started(pid: u32) {
    GROUP.store(i32::try_from(pid).unwrap_or(0), Ordering::SeqCst);
}

/// Ends what is left of the group of the agent started with [`prepare`].
pub fn end_started() {
    end_group();
}

/// How long an agent whose session went well is given to exit once its stdin is closed.
pub const END_GRACE: Duration = Duration::from_secs(5);

/// Ends the session: closes the agent's stdin and gives it [`END_GRACE`] to exit when the
/// session went well (its `outcome` is `Ok`; else stops it at once), then ends whatever is
/// left of its process group. Never waits much past the grace, even when a process outside
/// the group holds the agent's pipes open.
pub fn end<T, E>(agent: AgentProcess, outcome: &Result<T, E>) {
    let grace = match outcome {
        Ok(_) => END_GRACE,
        Err(_) => Duration::ZERO,
    };
    if grace.is_zero() {
        end_group();
    }
    let (done, ended) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = agent.shutdown(grace);
        let _ = done.send(());
    });
    let _ = ended.recv_timeout(grace + TERM_GRACE);
    end_group();
    // The session ended because of a signal: the signal thread ends the process as the
    // signal would have, so that whoever sent it sees that, not an error of the session.
    if SIGNALLED.load(Ordering::SeqCst) != 0 {
        loop {
            std::thread::park();
        }
    }
}

/// SIGTERM to the agent's group (an agent that handles it stops its own children, in groups
/// of their own or not), then, once the agent is gone or after a moment, SIGKILL to what is
/// left of the group.
fn end_group() {
    let group = GROUP.swap(0, Ordering::SeqCst);
    let Some(pid) = Pid::from_raw(group) else {
        return;
    };
    if kill_process_group(pid, Signal::TERM).is_err() {
        return;
    }
    // The driver reaps the agent itself: until then it answers (as a zombie, too).
    let until = Instant::now() + TERM_GRACE;
    while Instant::now() < until && test_kill_process(pid).is_ok() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = kill_process_group(pid, Signal::KILL);
}

/// A thread that waits for SIGTERM, SIGINT and SIGHUP: it ends the agent's group, then this
/// process, as the signal would have.
fn watch_signals() -> Result<(), String> {
    use musewire_mio::agent_stdio::{die_of, TERMINATING_SIGNALS};
    let mut signals = signal_hook::iterator::Signals::new(TERMINATING_SIGNALS)
        .map_err(|e| format!("cannot watch signals: {e}"))?;
    std::thread::Builder::new()
        .name("musewire-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                SIGNALLED.store(signal, Ordering::SeqCst);
                end_group();
                signal_hook::low_level::exit(die_of(signal).into());
            }
        })
        .map_err(|e| format!("cannot watch signals: {e}"))?;
    Ok(())
}
