//! The agent side on this process's stdio, async on smol: a loop over a
//! [`musewire_core::agent::Agent`] for a Rust program that wants to *be* an
//! `<agent> --mode rpc`, as lsp-server's `Connection::stdio()` is for a language server. It
//! runs the same [`AgentProgram`]s as the mio driver's loop.
//!
//! [`AgentStdio::run`] reads stdin, hands it in as [`Input`]s, writes the agent's lines to
//! stdout and keeps the timers, with backpressure: a line is taken from the agent only when
//! the last one has been written, and stdin is read only once every line is out, so a host
//! that stops reading stops the agent (its pipe fills and the loop waits) rather than growing
//! its memory. [`AgentStdio::stdio`] reads and writes the process's stdio on smol's blocking
//! pool (a pipe, a file and a terminal alike); [`AgentStdio::new`] takes any async reader
//! and writer.
//!
//! When stdin ends the agent rejects what is pending with the host (HOST-07) and the loop ends
//! once everything owed is written and the program [is finished](AgentProgram::is_finished)
//! (AGENT-01). With [`AgentStdio::stdio`], SIGTERM, SIGINT and SIGHUP
//! ([`TERMINATING_SIGNALS`]) end the loop at once after [`AgentProgram::terminate`] (AGENT-02),
//! as [`Ended::Signal`]; [`die_of`] then ends the process as that signal would have.
//!
//! ```no_run
//! use musewire_core::agent::{on_event, Agent, AgentCall, AgentConfig, AgentEvent, Input};
//! use musewire_smol::agent_stdio::{AgentStdio, Ended};
//!
//! // Answers every command with an empty success.
//! let mut echo = on_event(Agent::new(AgentConfig::default()), |agent, now, event| {
//!     if let AgentEvent::Command { request, .. } = event {
//!         agent.handle(now, Input::Call(AgentCall::Respond(request, Ok(None))));
//!     }
//! });
//! match smol::block_on(AgentStdio::stdio()?.run(&mut echo))? {
//!     Ended::Done => {}
//!     Ended::Signal(signal) => std::process::exit(musewire_smol::agent_stdio::die_of(signal).into()),
//! }
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;
use std::time::Instant;

use musewire_core::agent::Input;
pub use musewire_core::agent::{AgentProgram, Ended};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};
use smol::channel;
use smol::future;
use smol::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use smol::Unblock;

const READ_BYTES: usize = 64 * 1024;

/// The signals that end the loop of [`AgentStdio::stdio`], after
/// [`AgentProgram::terminate`] (AGENT-02).
pub const TERMINATING_SIGNALS: [i32; 3] = [SIGTERM, SIGINT, SIGHUP];

/// Wakes the loop from another thread or task; [`AgentProgram::handle_wake`] follows.
#[derive(Debug, Clone)]
pub struct Waker(channel::Sender<()>);

impl Waker {
    /// Wakes the loop (wakes not yet seen are merged into one).
    pub fn wake(&self) {
        let _ = self.0.try_send(());
    }
}

/// The loop over an agent's stdin `R` and stdout `W`. See the [module docs](self).
pub struct AgentStdio<R, W> {
    stdin: Option<R>,
    stdout: W,
    waker: Waker,
    woken: channel::Receiver<()>,
    signals: Option<(channel::Receiver<i32>, Handle)>,
}

impl<R, W> std::fmt::Debug for AgentStdio<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentStdio").finish_non_exhaustive()
    }
}

impl<R, W> Drop for AgentStdio<R, W> {
    /// The signals are no longer caught for the loop (its signal thread ends).
    fn drop(&mut self) {
        if let Some((_, handle)) = &self.signals {
            handle.close();
        }
    }
}

impl AgentStdio<Unblock<io::Stdin>, Unblock<io::Stdout>> {
    /// The loop on this process's stdin and stdout, with [`TERMINATING_SIGNALS`] caught from
    /// now on.
    pub fn stdio() -> io::Result<Self> {
        let mut stdio = Self::new(Unblock::new(io::stdin()), Unblock::new(io::stdout()));
        let mut signals = Signals::new(TERMINATING_SIGNALS)?;
        let handle = signals.handle();
        let (tx, rx) = channel::bounded(1);
        std::thread::Builder::new()
            .name("musewire-agent-signals".into())
            .spawn(move || {
                if let Some(received) = signals.forever().next() {
                    let _ = tx.try_send(received);
                }
            })?;
        stdio.signals = Some((rx, handle));
        Ok(stdio)
    }
}

/// What ended a wait of the loop.
enum Wake {
    Read(io::Result<usize>),
    Woken,
    Signal(i32),
    Timer,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> AgentStdio<R, W> {
    /// The loop over `stdin` and `stdout` (no signal is caught).
    pub fn new(stdin: R, stdout: W) -> Self {
        let (tx, woken) = channel::bounded(1);
        AgentStdio {
            stdin: Some(stdin),
            stdout,
            waker: Waker(tx),
            woken,
            signals: None,
        }
    }

    /// Wakes the loop from another thread or task; [`AgentProgram::handle_wake`] follows.
    pub fn waker(&self) -> Waker {
        self.waker.clone()
    }

    /// Runs `program` until stdin ends and everything owed is written, or a terminating
    /// signal arrives.
    pub async fn run(mut self, program: &mut impl AgentProgram) -> io::Result<Ended> {
        let result = self.serve(program).await;
        if result.is_err() {
            // No child outlives a loop that failed (AGENT-02).
            program.terminate();
        }
        result
    }

    async fn serve(&mut self, program: &mut impl AgentProgram) -> io::Result<Ended> {
        let mut buf = vec![0u8; READ_BYTES];
        loop {
            let now = Instant::now();
            program.handle_turn(now);
            // Every line out before stdin is read again; a write waits while stdout takes no
            // more (backpressure).
            let mut wrote = false;
            while let Some(line) = program.next_line(now) {
                let written = self.write(Some(&line)).await;
                match self.after_write(program, now, written)? {
                    Some(ended) => return Ok(ended),
                    None => wrote = true,
                }
            }
            if wrote {
                let flushed = self.write(None).await;
                if let Some(ended) = self.after_write(program, now, flushed)? {
                    return Ok(ended);
                }
            }
            if program.is_done(self.stdin.is_none()) {
                return Ok(Ended::Done);
            }
            let due = program.next_timeout();
            let wake = self.wait(&mut buf, due).await;
            let now = Instant::now();
            match wake {
                Wake::Read(Ok(n)) if n > 0 => {
                    program.agent().handle(now, Input::Stdin(&buf[..n]));
                }
                // A read error ends stdin as its end does.
                Wake::Read(_) => {
                    self.stdin = None;
                    // HOST-07, AGENT-01: the events of the end (rejections, the run ending)
                    // are taken by the write loop before the loop may wait.
                    program.agent().handle(now, Input::StdinEnd);
                }
                Wake::Signal(signal) => {
                    program.terminate();
                    return Ok(Ended::Signal(signal));
                }
                Wake::Woken | Wake::Timer => {}
            }
        }
    }

    /// Writes `line` (or flushes, for `None`), unless a terminating signal comes first.
    async fn write(&mut self, line: Option<&[u8]>) -> Result<io::Result<()>, i32> {
        let stdout = &mut self.stdout;
        let write = async {
            Ok(match line {
                Some(line) => stdout.write_all(line).await,
                None => stdout.flush().await,
            })
        };
        let signal = async { Err(signalled(&self.signals).await) };
        future::or(write, signal).await
    }

    /// What a write means for the loop: go on, end (the host stopped reading, or a signal),
    /// or fail.
    fn after_write(
        &mut self,
        program: &mut impl AgentProgram,
        now: Instant,
        written: Result<io::Result<()>, i32>,
    ) -> io::Result<Option<Ended>> {
        match written {
            Ok(Ok(())) => Ok(None),
            // The host stopped reading: nothing more can reach it.
            Ok(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
                program.agent().handle(now, Input::StdinEnd);
                while program.next_line(now).is_some() {}
                Ok(Some(Ended::Done))
            }
            Ok(Err(e)) => Err(e),
            Err(signal) => {
                program.terminate();
                Ok(Some(Ended::Signal(signal)))
            }
        }
    }

    /// Waits for stdin, a wake, a signal or the timer `due`.
    async fn wait(&mut self, buf: &mut [u8], due: Option<Instant>) -> Wake {
        let AgentStdio {
            stdin,
            woken,
            signals,
            ..
        } = self;
        let read = async {
            match stdin {
                Some(stdin) => Wake::Read(stdin.read(buf).await),
                None => future::pending().await,
            }
        };
        let woken = async {
            // The loop holds a sender: the channel never closes.
            let _ = woken.recv().await;
            Wake::Woken
        };
        let signal = async { Wake::Signal(signalled(signals).await) };
        let timer = async {
            match due {
                Some(due) => {
                    smol::Timer::at(due).await;
                    Wake::Timer
                }
                None => future::pending().await,
            }
        };
        future::or(future::or(read, woken), future::or(signal, timer)).await
    }
}

/// The next terminating signal; never, when none are caught.
async fn signalled(signals: &Option<(channel::Receiver<i32>, Handle)>) -> i32 {
    match signals {
        Some((rx, _)) => match rx.recv().await {
            Ok(signal) => signal,
            Err(_) => future::pending().await,
        },
        None => future::pending().await,
    }
}

/// Ends the process as `signal` would have (its default action), after a loop that ended with
/// [`Ended::Signal`]; returns the exit code to use should that not end it (128 + the
/// signal's number).
pub fn die_of(signal: i32) -> u8 {
    let _ = signal_hook::low_level::emulate_default_handler(signal);
    128u8.saturating_add(u8::try_from(signal).unwrap_or(0))
}
