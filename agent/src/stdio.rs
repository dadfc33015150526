//! The `musewire agent` command's loop: the [`App`] on the mio driver's agent-side stdio loop
//! ([`musewire_mio::agent_stdio`]), which reads stdin, writes stdout with backpressure, keeps
//! the timers and is woken when a shell command finishes; and the [`Disk`] performing the
//! App's file work (the [I/O seam](crate::io)) as soon as the App hands it out.
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
use musewire_core::spill::SpillWrite;
pub use musewire_mio::agent_stdio::TERMINATING_SIGNALS;
use musewire_mio::agent_stdio::{die_of, AgentProgram, AgentStdio, Ended};
use musewire_store::LocalStore;

use crate::disk::Disk;
use crate::io::{IoOutcome, IoWork};
use crate::{App, Options};

/// The spill store's root inside the session folder when `--spill-dir` is not given.
pub const SPILL_SUBDIR: &str = "spill";

/// Runs the agent on this process's stdin and stdout until stdin ends and everything owed
/// has been written. Returns the exit code. On SIGTERM, SIGINT or SIGHUP every shell
/// command's process group is killed and the process then dies of that signal (AGENT-02);
/// should the signal's default action not end it, the code is 128 + the signal's number.
///
/// The session folder (`--session-dir`, unless `--no-session`) is opened (made when missing)
/// first, and then named by its canonical path: one that is a symlink, or cannot be made or
/// opened, is an error before anything is read or written.
pub fn run(mut options: Options) -> io::Result<u8> {
    if options.cwd.is_none() {
        options.cwd = std::env::current_dir().ok();
    }
    let folder = options.session_dir.clone().filter(|_| !options.no_session);
    let disk = Disk::new(folder.as_deref())?;
    if let Some(folder) = folder {
        // Opened, so not a symlink itself: its canonical path spells the files as
        // `get_state` reports them and `switch_session` takes them back.
        options.session_dir = Some(std::fs::canonicalize(folder)?);
    } else if let Some(dir) = &options.session_dir {
        options.session_dir = Some(std::path::absolute(dir)?);
    }
    let stdio = AgentStdio::stdio()?;
    let waker = stdio.waker();
    // With --max-inline-bytes the loop has a spill store (SPILL-06, OUT-10): at --spill-dir,
    // else in the session folder's `spill` (so a restarted agent on the same folder still
    // serves the outputs a loaded session names, OUT-08), else a private temp directory.
    let spill_root = options.spill_dir.clone().or_else(|| {
        let folder = options.session_dir.as_ref().filter(|_| !options.no_session);
        folder.map(|folder| folder.join(SPILL_SUBDIR))
    });
    let store = options
        .max_inline_bytes
        .map(|_| LocalStore::new(spill_root));
    let app = App::new(
        options,
        Instant::now(),
        Arc::new(move || {
            let _ = waker.wake();
        }),
    );
    let mut program = Program { app, disk, store };
    program.perform_io(Instant::now());
    let ended = stdio.run(&mut program);
    // Whatever way the loop ended, no shell command outlives it (AGENT-02).
    program.app.terminate();
    match ended? {
        Ended::Done => Ok(0),
        Ended::Signal(signal) => Ok(die_of(signal)),
    }
}

/// The App, its disk and its spill store on the loop: each call into the App is followed by
/// the file work it handed out, performed at once and answered (so an entry is in its
/// session file before the next stdout line is taken); the core agent's store I/O (spill
/// writes, output reads) is performed with the store as the agent asks; the session's
/// deadline is the App's own timer, finished shell commands are taken on each wake, and a
/// terminating signal kills every shell command's process group (AGENT-02).
struct Program {
    app: App,
    disk: Disk,
    /// `None` without `--max-inline-bytes`: the agent then asks for no store I/O.
    store: Option<LocalStore>,
}

impl Program {
    /// Performs the App's file work until it hands out no more. A failed session write is
    /// reported on stderr (the App then stops writing that file).
    fn perform_io(&mut self, now: Instant) {
        while let Some(request) = self.app.poll_io() {
            let session = !matches!(request.work, IoWork::ReadFile { .. });
            let outcome = self.disk.perform(request.work);
            if let (true, IoOutcome::Failed(error)) = (session, &outcome) {
                eprintln!("musewire agent: session file: {error}");
            }
            self.app.handle_io(now, request.id, outcome);
        }
    }
}

impl AgentProgram for Program {
    fn agent(&mut self) -> &mut Agent {
        self.app.agent()
    }

    fn on_event(&mut self, now: Instant, event: AgentEvent) {
        self.app.on_event(now, event);
        self.perform_io(now);
    }

    /// Saves with the store; a failed save is logged and the original result goes on
    /// (SPILL-05).
    fn spill_write(&mut self, now: Instant, id: SpillId, write: SpillWrite) {
        let saved = LocalStore::spill(self.store.as_mut(), &write).inspect_err(|failure| {
            eprintln!(
                "musewire agent: the result of {} ({}) was not spilled, it goes on whole: {failure}",
                write.source.call_id, write.source.tool_name
            )
        });
        self.app.agent().handle(now, Input::SpillDone(id, saved));
    }

    /// A positioned read with the store (OUT-04); its errors are the read's typed errors.
    fn output_read(&mut self, now: Instant, id: ReadId, read: OutputRead) {
        let Some(store) = &mut self.store else {
            return self.app.output_read(now, id, read);
        };
        let bytes = store
            .read(&read.request)
            .map_err(|error| error.output_error());
        self.app.agent().handle(now, Input::ReadDone(id, bytes));
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.app.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.app.handle_timeout(now);
        self.perform_io(now);
    }

    fn handle_wake(&mut self, now: Instant) {
        self.app.handle_wake(now);
        self.perform_io(now);
    }

    fn is_finished(&self) -> bool {
        self.app.is_finished()
    }

    fn terminate(&mut self) {
        self.app.terminate();
    }
}
