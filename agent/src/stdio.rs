//! The `musewire agent` command's loop: the [`App`] on the mio driver's agent-side stdio loop
//! ([`musewire_mio::agent_stdio`]), which reads stdin, writes stdout with backpressure, keeps
//! the timers and is woken when a shell command finishes.
//!
//! With `--max-inline-bytes` the loop also performs the agent's store I/O with the local spill
//! store ([`musewire_store::LocalStore`], at `--spill-dir` or in a private temp directory):
//! the spill writes of tool results (SPILL-03, SPILL-06) and the positioned reads of
//! `read_output` (OUT-10), as the core's actions ask. The app itself does no store I/O.
//!
//! The processes the agent starts end with it (AGENT-02): the end of stdin kills every shell
//! command's process group, and so does SIGTERM, SIGINT or SIGHUP ([`TERMINATING_SIGNALS`]),
//! after which the process dies of that signal.

use std::io;
use std::sync::Arc;
use std::time::Instant;

use musewire_core::agent::{Agent, AgentEvent, Input, ReadId, SpillId};
use musewire_core::output::OutputRead;
use musewire_core::spill::{SaveFailure, SpillWrite};
pub use musewire_mio::agent_stdio::TERMINATING_SIGNALS;
use musewire_mio::agent_stdio::{die_of, AgentProgram, AgentStdio, Ended};
use musewire_store::LocalStore;

use crate::{App, Options};

/// Runs the agent on this process's stdin and stdout until stdin ends and everything owed
/// has been written. Returns the exit code. On SIGTERM, SIGINT or SIGHUP every shell
/// command's process group is killed and the process then dies of that signal (AGENT-02);
/// should the signal's default action not end it, the code is 128 + the signal's number.
pub fn run(options: Options) -> io::Result<u8> {
    let stdio = AgentStdio::stdio()?;
    let waker = stdio.waker();
    let store = options
        .max_inline_bytes
        .map(|_| LocalStore::new(options.spill_dir.clone()));
    let mut app = App::new(
        options,
        Instant::now(),
        Arc::new(move || {
            let _ = waker.wake();
        }),
    );
    let ended = stdio.run(&mut Served {
        app: &mut app,
        store,
    });
    // Whatever way the loop ended, no shell command outlives it (AGENT-02).
    app.terminate();
    match ended? {
        Ended::Done => Ok(0),
        Ended::Signal(signal) => Ok(die_of(signal)),
    }
}

/// The app with the spill store, on the loop: the app answers the agent's events, the store
/// performs the agent's I/O actions (SPILL-06, OUT-10).
struct Served<'a> {
    app: &'a mut App,
    /// `None` without `--max-inline-bytes`: the agent then asks for no I/O.
    store: Option<LocalStore>,
}

impl AgentProgram for Served<'_> {
    fn agent(&mut self) -> &mut Agent {
        &mut self.app.agent
    }

    fn on_event(&mut self, now: Instant, event: AgentEvent) {
        AgentProgram::on_event(self.app, now, event);
    }

    /// Saves with the store; a failed save is logged and the original result goes on
    /// (SPILL-05).
    fn spill_write(&mut self, now: Instant, id: SpillId, write: SpillWrite) {
        let Some(store) = &mut self.store else {
            return AgentProgram::spill_write(self.app, now, id, write);
        };
        let saved = store.save(&write).map_err(|error| {
            eprintln!(
                "musewire agent: the result of {} ({}) was not spilled, it goes on whole: {error}",
                write.source.call_id, write.source.tool_name
            );
            SaveFailure::new(error.to_string())
        });
        self.app.agent.handle(now, Input::SpillDone(id, saved));
    }

    /// A positioned read with the store (OUT-04); its errors are the read's typed errors.
    fn output_read(&mut self, now: Instant, id: ReadId, read: OutputRead) {
        let Some(store) = &mut self.store else {
            return AgentProgram::output_read(self.app, now, id, read);
        };
        let bytes = store
            .read(&read.request)
            .map_err(|error| error.output_error());
        self.app.agent.handle(now, Input::ReadDone(id, bytes));
    }

    fn poll_timeout(&self) -> Option<Instant> {
        AgentProgram::poll_timeout(&*self.app)
    }

    fn handle_timeout(&mut self, now: Instant) {
        AgentProgram::handle_timeout(self.app, now);
    }

    fn handle_wake(&mut self, now: Instant) {
        AgentProgram::handle_wake(self.app, now);
    }

    fn is_finished(&self) -> bool {
        AgentProgram::is_finished(&*self.app)
    }

    fn terminate(&mut self) {
        AgentProgram::terminate(self.app);
    }
}
