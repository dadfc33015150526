//! The agent side on this process's stdio: a loop over a [`musewire_core::agent::Agent`] for a
//! Rust program that wants to *be* an `<agent> --mode rpc`, as lsp-server's
//! `Connection::stdio()` is for a language server.
//!
//! The program implements [`AgentProgram`] (its agent, and what it does with the agent's
//! events); [`AgentStdio::run`] then reads stdin, hands it in as [`Input`]s, writes the
//! agent's lines to stdout and keeps the timers, with backpressure: a line is taken from the
//! agent only when the last one has been written, and stdin is read only then, so a host that
//! stops reading stops the agent (its pipe fills and it waits) rather than growing its memory.
//! A stdin that cannot be polled (a regular file, `/dev/null`) is read on a thread.
//!
//! When stdin ends the agent rejects what is pending with the host (HOST-07) and the loop ends
//! once everything owed is written and the program [is finished](AgentProgram::is_finished)
//! (AGENT-01). SIGTERM, SIGINT and SIGHUP ([`TERMINATING_SIGNALS`]) end the loop at once after
//! [`AgentProgram::terminate`], so the program can stop the processes it started (AGENT-02);
//! [`die_of`] then ends the process as that signal would have.
//!
//! ```no_run
//! use std::time::Instant;
//! use musewire_core::agent::{Agent, AgentConfig, AgentEvent, Input};
//! use musewire_core::agent::AgentCall;
//! use musewire_mio::agent_stdio::{AgentProgram, AgentStdio, Ended};
//!
//! /// Answers every command with an empty success.
//! struct Echo(Agent);
//!
//! impl AgentProgram for Echo {
//!     fn agent(&mut self) -> &mut Agent {
//!         &mut self.0
//!     }
//!     fn on_event(&mut self, now: Instant, event: AgentEvent) {
//!         if let AgentEvent::Command { request, .. } = event {
//!             self.0.handle(now, Input::Call(AgentCall::Respond(request, Ok(None))));
//!         }
//!     }
//! }
//!
//! let stdio = AgentStdio::stdio()?;
//! match stdio.run(&mut Echo(Agent::new(AgentConfig::default())))? {
//!     Ended::Done => {}
//!     Ended::Signal(signal) => std::process::exit(musewire_mio::agent_stdio::die_of(signal).into()),
//! }
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use mio::unix::pipe::{Receiver, Sender};
use mio::{Events, Interest, Poll, Token, Waker};
use musewire_core::agent::Input;
pub use musewire_core::agent::{AgentProgram, Ended};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};

const STDIN: Token = Token(0);
const STDOUT: Token = Token(1);
const WAKE: Token = Token(2);
const READ_BYTES: usize = 64 * 1024;

/// The signals that end the loop, after [`AgentProgram::terminate`] (AGENT-02).
pub const TERMINATING_SIGNALS: [i32; 3] = [SIGTERM, SIGINT, SIGHUP];

/// The loop over this process's stdin and stdout. See the [module docs](self).
pub struct AgentStdio {
    poll: Poll,
    waker: Arc<Waker>,
    signal: Arc<AtomicI32>,
    signals: Handle,
}

impl Drop for AgentStdio {
    /// The signals are no longer caught for the loop (its signal thread ends).
    fn drop(&mut self) {
        self.signals.close();
    }
}

impl std::fmt::Debug for AgentStdio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentStdio").finish_non_exhaustive()
    }
}

/// Where stdin comes from.
enum Stdin {
    Pipe(Receiver),
    /// A thread reads it (an empty read at the end).
    Thread(mpsc::Receiver<io::Result<Vec<u8>>>),
    Closed,
}

impl AgentStdio {
    /// The loop on stdin and stdout, with [`TERMINATING_SIGNALS`] caught from now on.
    pub fn stdio() -> io::Result<Self> {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
        let signal = Arc::new(AtomicI32::new(0));
        let mut signals = Signals::new(TERMINATING_SIGNALS)?;
        let handle = signals.handle();
        {
            let (signal, waker) = (signal.clone(), waker.clone());
            std::thread::Builder::new()
                .name("musewire-agent-signals".into())
                .spawn(move || {
                    if let Some(received) = signals.forever().next() {
                        signal.store(received, Ordering::SeqCst);
                        let _ = waker.wake();
                    }
                })?;
        }
        Ok(AgentStdio {
            poll,
            waker,
            signal,
            signals: handle,
        })
    }

    /// Wakes the loop from another thread; [`AgentProgram::handle_wake`] follows.
    pub fn waker(&self) -> Arc<Waker> {
        self.waker.clone()
    }

    /// Runs `program` until stdin ends and everything owed is written, or a terminating
    /// signal arrives.
    pub fn run(mut self, program: &mut impl AgentProgram) -> io::Result<Ended> {
        let stdout_fd: OwnedFd = io::stdout().as_fd().try_clone_to_owned()?;
        let mut stdout = Sender::from(stdout_fd);
        stdout.set_nonblocking(true)?;
        let mut stdin = open_stdin(&self.poll, self.waker.clone())?;
        let result = self.serve(program, &mut stdin, &mut stdout);
        if result.is_err() {
            // No child outlives a loop that failed (AGENT-02).
            program.terminate();
        }
        let _ = stdout.set_nonblocking(false);
        if let Stdin::Pipe(pipe) = &stdin {
            let _ = pipe.set_nonblocking(false);
        }
        result
    }

    fn serve(
        &mut self,
        program: &mut impl AgentProgram,
        stdin: &mut Stdin,
        stdout: &mut Sender,
    ) -> io::Result<Ended> {
        let mut events = Events::with_capacity(16);
        let mut buf = vec![0u8; READ_BYTES];
        // The line being written, and how much of it is out.
        let mut pending: Option<(Vec<u8>, usize)> = None;
        let mut stdin_ready = true;
        let mut stdout_registered = false;
        loop {
            let received = self.signal.load(Ordering::SeqCst);
            if received != 0 {
                program.terminate();
                return Ok(Ended::Signal(received));
            }
            let now = Instant::now();
            program.handle_turn(now);
            // Write while stdout accepts.
            loop {
                if pending.is_none() {
                    pending = program.next_line(now).map(|line| (line, 0));
                }
                let Some((line, written)) = &mut pending else {
                    break;
                };
                match stdout.write(&line[*written..]) {
                    Ok(n) => {
                        *written += n;
                        if *written == line.len() {
                            pending = None;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        if !stdout_registered {
                            self.poll
                                .registry()
                                .register(stdout, STDOUT, Interest::WRITABLE)?;
                            stdout_registered = true;
                        }
                        break;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    // The host stopped reading: nothing more can reach it.
                    Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                        program.agent().handle(now, Input::StdinEnd);
                        while program.next_line(now).is_some() {}
                        return Ok(Ended::Done);
                    }
                    Err(e) => return Err(e),
                }
            }
            // Read only when the last line is out (backpressure).
            if pending.is_none() && stdin_ready {
                match read_stdin(stdin, &self.poll, &mut buf)? {
                    Some(0) => {
                        // HOST-07, AGENT-01: the events of the end (rejections, the run
                        // ending) are taken by the write loop before the loop may wait.
                        program.agent().handle(now, Input::StdinEnd);
                        stdin_ready = false;
                        continue;
                    }
                    Some(n) => {
                        program.agent().handle(now, Input::Stdin(&buf[..n]));
                        continue;
                    }
                    None => stdin_ready = false,
                }
            }
            if pending.is_none() && program.is_done(matches!(stdin, Stdin::Closed)) {
                // Nothing pending means the agent had no line left: all is written.
                return stdout.flush().map(|()| Ended::Done);
            }
            let due = program.next_timeout();
            let timeout = due.map(|t| t.saturating_duration_since(Instant::now()));
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for event in events.iter() {
                if event.token() == STDIN || event.token() == WAKE {
                    stdin_ready = true;
                }
            }
        }
    }
}

fn open_stdin(poll: &Poll, waker: Arc<Waker>) -> io::Result<Stdin> {
    let fd: OwnedFd = io::stdin().as_fd().try_clone_to_owned()?;
    let mut pipe = Receiver::from(fd);
    pipe.set_nonblocking(true)?;
    match poll
        .registry()
        .register(&mut pipe, STDIN, Interest::READABLE)
    {
        Ok(()) => Ok(Stdin::Pipe(pipe)),
        Err(_) => {
            // Not pollable (a regular file, /dev/null): read it on a thread, blocking.
            pipe.set_nonblocking(false)?;
            let (tx, rx) = mpsc::channel();
            std::thread::Builder::new()
                .name("musewire-agent-stdin".into())
                .spawn(move || {
                    let mut buf = vec![0u8; READ_BYTES];
                    loop {
                        let read = pipe.read(&mut buf).map(|n| buf[..n].to_vec());
                        let end = !matches!(&read, Ok(b) if !b.is_empty());
                        if tx.send(read).is_err() || waker.wake().is_err() || end {
                            return;
                        }
                    }
                })?;
            Ok(Stdin::Thread(rx))
        }
    }
}

/// One read into `buf`: `Some(n)` bytes (0 at the end, after which stdin is closed), or
/// `None` when nothing is available now. A read error ends stdin as its end does.
fn read_stdin(stdin: &mut Stdin, poll: &Poll, buf: &mut Vec<u8>) -> io::Result<Option<usize>> {
    let read = match stdin {
        Stdin::Closed => return Ok(None),
        Stdin::Pipe(pipe) => loop {
            match pipe.read(buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break 0,
            }
        },
        Stdin::Thread(rx) => match rx.try_recv() {
            Ok(Ok(bytes)) => {
                if buf.len() < bytes.len() {
                    buf.resize(bytes.len(), 0);
                }
                buf[..bytes.len()].copy_from_slice(&bytes);
                bytes.len()
            }
            Ok(Err(_)) | Err(mpsc::TryRecvError::Disconnected) => 0,
            Err(mpsc::TryRecvError::Empty) => return Ok(None),
        },
    };
    if read == 0 {
        if let Stdin::Pipe(pipe) = stdin {
            let _ = poll.registry().deregister(pipe);
        }
        *stdin = Stdin::Closed;
    }
    Ok(Some(read))
}

/// Ends the process as `signal` would have (its default action), after a loop that ended with
/// [`Ended::Signal`]; returns the exit code to use should that not end it (128 + the
/// signal's number).
pub fn die_of(signal: i32) -> u8 {
    let _ = signal_hook::low_level::emulate_default_handler(signal);
    128u8.saturating_add(u8::try_from(signal).unwrap_or(0))
}
