//! The `musewire agent` command's loop: the [`App`] on the mio driver's agent-side stdio loop
//! ([`musewire_mio::agent_stdio`]), which reads stdin, writes stdout with backpressure, keeps
//! the timers and is woken when a shell command finishes.
//!
//! The processes the agent starts end with it (AGENT-02): the end of stdin kills every shell
//! command's process group, and so does SIGTERM, SIGINT or SIGHUP ([`TERMINATING_SIGNALS`]),
//! after which the process dies of that signal.

use std::io;
use std::sync::Arc;
use std::time::Instant;

pub use musewire_mio::agent_stdio::TERMINATING_SIGNALS;
use musewire_mio::agent_stdio::{die_of, AgentStdio, Ended};

use crate::{App, Options};

/// Runs the agent on this process's stdin and stdout until stdin ends and everything owed
/// has been written. Returns the exit code. On SIGTERM, SIGINT or SIGHUP every shell
/// command's process group is killed and the process then dies of that signal (AGENT-02);
/// should the signal's default action not end it, the code is 128 + the signal's number.
pub fn run(options: Options) -> io::Result<u8> {
    let stdio = AgentStdio::stdio()?;
    let waker = stdio.waker();
    let mut app = App::new(
        options,
        Instant::now(),
        Arc::new(move || {
            let _ = waker.wake();
        }),
    );
    let ended = stdio.run(&mut app);
    // Whatever way the loop ended, no shell command outlives it (AGENT-02).
    app.terminate();
    match ended? {
        Ended::Done => Ok(0),
        Ended::Signal(signal) => Ok(die_of(signal)),
    }
}
