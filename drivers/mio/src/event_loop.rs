//! One agent's part of a mio loop: its process and pipes, the reading and writing, and the
//! channels to its handle. Performs the core's actions; decides nothing of the protocol: the
//! bookkeeping (the work of each input, the operations, the stop and the exit, the
//! backpressure on events and on writes) is the host kit's [`Driven`]; this keeps only its I/O,
//! as [`Plumbing`]. The poll and the wait are the [`reactor`](crate::reactor)'s, which drives
//! one agent or many from one thread and calls in here for each agent's readiness and turn.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use mio::unix::pipe::{Receiver, Sender};
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use musewire_core::client::{ClientConfig, ClientEvent, Input};
use musewire_host::process_group::{kill_group, lead_own_group};
use musewire_host::{Driven, ExitWatch, Flow, Heard, Plumbing, RequestKey};
use musewire_store::SessionFiles;

use crate::handlers::{self, Registered, Running};
use crate::reactor::Link;
use crate::{Caller, Op, Reply, OPS_QUEUE};

/// An agent's tokens are `id * TOKENS +` one of these.
pub(crate) const STDOUT: usize = 0;
pub(crate) const STDERR: usize = 1;
pub(crate) const STDIN: usize = 2;
/// The agent's pidfd: readable once it has exited.
pub(crate) const EXIT: usize = 3;
pub(crate) const TOKENS: usize = 4;

/// How many reads of an agent's stdout (64 KiB each) one turn makes at most: an agent that
/// floods reads on at its next turn, after the other agents' (the reactor does not wait for
/// it).
const READS_PER_TURN: usize = 16;

/// A spawned agent, ready to be started on a reactor, and what its handle keeps.
pub(crate) struct Prepared {
    pub(crate) agent: Agent,
    pub(crate) pid: u32,
    pub(crate) caller: Caller,
    pub(crate) events: mpsc::Receiver<Vec<ClientEvent>>,
}

/// Spawns `command` with piped stdio, its pipes non-blocking, under `link`'s tokens of
/// `registry` (registered when the reactor starts it: [`Agent::start`]).
pub(crate) fn prepare(
    mut command: Command,
    config: ClientConfig,
    record: Option<&std::path::Path>,
    handlers: Arc<std::sync::Mutex<Registered>>,
    flow: Arc<Flow>,
    link: Arc<Link>,
    registry: Arc<Registry>,
) -> io::Result<Prepared> {
    // CALL-11: a group of its own, killed whole with the agent and once it has exited.
    lead_own_group(&mut command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let pid = child.id();
    // Without one the exit is asked for (the host kit's `ExitWatch::Asked`).
    let exit_fd = musewire_host::exit_fd::open(pid).ok();
    let take = |e: &str| io::Error::other(format!("the child has no {e} pipe"));
    let stdin = Sender::from(child.stdin.take().ok_or_else(|| take("stdin"))?);
    let stdout = Receiver::from(child.stdout.take().ok_or_else(|| take("stdout"))?);
    let stderr = Receiver::from(child.stderr.take().ok_or_else(|| take("stderr"))?);
    for r in [&stdout, &stderr] {
        r.set_nonblocking(true)?;
    }
    stdin.set_nonblocking(true)?;
    // Bounded: past it a call waits for the loop to take operations again.
    let (ops_tx, ops) = mpsc::sync_channel(OPS_QUEUE);
    let base = link.id() * TOKENS;
    let caller = Caller {
        ops: ops_tx,
        link,
        flow: Arc::clone(&flow),
        room: Arc::default(),
    };
    let (events_tx, events) = mpsc::channel();
    let driven = SessionFiles::open(config, record, Instant::now(), &describe(&command))?;
    let agent = Agent {
        driven,
        io: Io {
            child,
            group: Some(pid),
            exit_fd,
            exit_reported: true,
            registry,
            base,
            stdin: Some(stdin),
            stdin_registered: false,
            stdout: Some(stdout),
            stderr: Some(stderr),
            out: VecDeque::new(),
            close_stdin: false,
            events: events_tx,
            batch: Vec::new(),
            events_gone: false,
            handlers,
            running: Running::default(),
            caller: caller.clone(),
            ops,
            flow,
        },
    };
    Ok(Prepared {
        agent,
        pid,
        caller,
        events,
    })
}

/// One agent on a reactor: the core's bookkeeping and the agent's I/O.
pub(crate) struct Agent {
    /// With the session's files: its transcript (when recording) and spill store.
    driven: Driven<Reply, SessionFiles>,
    io: Io,
}

/// The agent's I/O: its process and pipes, and the channels to the application.
struct Io {
    child: Child,
    /// The group the agent leads (its pid), until it is killed as the agent's exit is seen
    /// (CALL-11).
    group: Option<u32>,
    /// The agent's pidfd, registered under its `EXIT` token until its exit is seen (`None`
    /// where the system has none): the exit wakes the loop, and the system is asked for it
    /// only then.
    exit_fd: Option<std::os::fd::OwnedFd>,
    /// The pidfd was reported readable (or has not been looked at) since the exit was last
    /// asked for.
    exit_reported: bool,
    /// The reactor's registry, and the first of the agent's tokens in it.
    registry: Arc<Registry>,
    base: usize,
    stdin: Option<Sender>,
    stdin_registered: bool,
    stdout: Option<Receiver>,
    stderr: Option<Receiver>,
    /// Bytes waiting for the agent's stdin; written only while non-empty (backpressure).
    out: VecDeque<u8>,
    /// Close stdin once `out` is written (a stop with a grace: [`Plumbing::close_stdin`]).
    close_stdin: bool,
    /// The application's events, handed over in batches (see [`Io::send_events`]).
    events: mpsc::Sender<Vec<ClientEvent>>,
    /// Events of this turn not yet handed over.
    batch: Vec<ClientEvent>,
    /// The application stopped listening (its end of `events` is gone).
    events_gone: bool,
    ops: mpsc::Receiver<Op>,
    /// The application's host handlers, the ones running, and how they reach the loop.
    handlers: Arc<std::sync::Mutex<Registered>>,
    running: Running,
    /// How running handlers reach the loop.
    caller: Caller,
    /// Backpressure on events: what the application has taken.
    flow: Arc<Flow>,
}

impl Agent {
    /// Registers the agent's output pipes under its tokens, and hands in the first timer
    /// step (what the client says at construction is recorded at time zero).
    pub(crate) fn start(&mut self, now: Instant) -> io::Result<()> {
        let (registry, base) = (&self.io.registry, self.io.base);
        if let Some(r) = self.io.stdout.as_mut() {
            registry.register(r, Token(base + STDOUT), Interest::READABLE)?;
        }
        if let Some(r) = self.io.stderr.as_mut() {
            registry.register(r, Token(base + STDERR), Interest::READABLE)?;
        }
        if let Some(fd) = &self.io.exit_fd {
            let mut source = SourceFd(&fd.as_raw_fd());
            if registry
                .register(&mut source, Token(base + EXIT), Interest::READABLE)
                .is_err()
            {
                // Not pollable here: the exit is asked for instead.
                self.io.exit_fd = None;
            }
        }
        self.after(now, Input::Timeout)
    }

    /// The agent's pidfd was reported readable: its exit is asked for at its turn.
    pub(crate) fn exit_reported(&mut self) {
        self.io.exit_reported = true;
    }

    /// The agent's stderr is readable: reads it until it would block.
    pub(crate) fn stderr_ready(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.read(false, buf).map(drop)
    }

    /// The agent's stdin is writable: writes what waits for it.
    pub(crate) fn stdin_ready(&mut self) -> io::Result<()> {
        self.io.flush()
    }

    /// Its handle asked to stop the agent: stdin closed now, killed after `grace`.
    pub(crate) fn stop(&mut self, now: Instant, grace: Duration) {
        self.driven.stop(now, grace, &mut self.io);
        self.io.send_events();
    }

    /// A turn of the agent, once something woke it or its deadline came: the application's
    /// operations, its stdout (when it was readable, or held back and maybe free again), its
    /// timers, its exit, what waits for its stdin, and the operations again when that made
    /// room for them (a call waiting in the full queue has nothing else to wake the loop).
    /// True when stdout has more to read than a turn reads ([`READS_PER_TURN`]).
    pub(crate) fn turn(&mut self, read_stdout: bool, buf: &mut [u8]) -> io::Result<bool> {
        self.take_ops()?;
        // Stdout held back is read again at each turn: a take of the application's, or a
        // caller starting to wait, wakes the agent.
        let more = match read_stdout || self.driven.is_holding_stdout() {
            true => self.read(true, buf)?,
            false => false,
        };
        let now = Instant::now();
        self.driven.timers(now, &mut self.io)?;
        self.driven.reap(now, &mut self.io)?;
        self.io.flush()?;
        self.take_ops()?;
        self.io.send_events();
        Ok(more)
    }

    /// When the agent is next to have a turn of its own (the core's timers and reaping).
    pub(crate) fn deadline(&self, now: Instant) -> Option<Instant> {
        self.driven.deadline(now)
    }

    /// The agent's exit status once it has exited and its output has ended: it is done, and
    /// its stdin is written out (as far as it goes) and taken out of the poll.
    pub(crate) fn done(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        let status = self.driven.exit_status();
        let open = self.io.stdout.is_some() || self.io.stderr.is_some();
        if status.is_none() || open && !self.driven.output_abandoned(Instant::now()) {
            return Ok(None);
        }
        // What the agent left holds its output past the grace: no longer read.
        for mut pipe in [self.io.stdout.take(), self.io.stderr.take()]
            .into_iter()
            .flatten()
        {
            let _ = self.io.registry.deregister(&mut pipe);
        }
        self.io.flush()?;
        self.io.close_pipe()?;
        Ok(status)
    }

    /// Ends the agent after a failure of its I/O: kills it, reaps it, and takes its pipes
    /// out of the poll.
    pub(crate) fn abandon(&mut self) {
        self.io.send_events();
        self.io.kill();
        let _ = self.io.child.wait();
        self.io.group = None;
        for mut pipe in [self.io.stdout.take(), self.io.stderr.take()]
            .into_iter()
            .flatten()
        {
            let _ = self.io.registry.deregister(&mut pipe);
        }
        let _ = self.io.close_pipe();
    }

    /// Takes the application's operations while the bytes waiting for the agent's stdin stay
    /// under the host kit's bound ([`Driven::takes_ops`]); past it they wait in the bounded queue,
    /// and a caller waits for room in it.
    fn take_ops(&mut self) -> io::Result<()> {
        let mut took = false;
        while self.driven.takes_ops(self.io.out.len()) {
            let Ok(op) = self.io.ops.try_recv() else {
                break;
            };
            took = true;
            let now = Instant::now();
            self.driven.op(now, op, &mut self.io)?;
            self.io.flush()?;
        }
        if took {
            self.io.caller.room.made();
        }
        Ok(())
    }

    /// Reads the agent's stdout (`stdout`) or stderr until it would block, or until stdout
    /// is held back (backpressure on events), handing what it reads in; at its end the pipe
    /// is closed (and stdout's end handed in). Stdout is read [`READS_PER_TURN`] times at
    /// most: true when it stopped there.
    fn read(&mut self, stdout: bool, buf: &mut [u8]) -> io::Result<bool> {
        let mut reads = 0;
        loop {
            if stdout && self.driven.hold_stdout(&self.io.flow) {
                return Ok(false);
            }
            if stdout && reads == READS_PER_TURN {
                return Ok(true);
            }
            let pipe = match stdout {
                true => &mut self.io.stdout,
                false => &mut self.io.stderr,
            };
            let Some(reader) = pipe.as_mut() else {
                return Ok(false);
            };
            reads += 1;
            let read = match reader.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                read => read?,
            };
            let now = Instant::now();
            // A pipe's read short of the buffer took all it held: it is empty now, and what
            // the agent writes next makes it readable again (an edge, woken as an empty pipe
            // fills), so asking again now would only be told it would block.
            let drained = read > 0 && read < buf.len();
            match (read, stdout) {
                (0, _) => {
                    let mut reader = pipe.take().expect("open");
                    self.io.registry.deregister(&mut reader)?;
                    if stdout {
                        self.after(now, Input::StdoutEnd)?;
                    }
                }
                (n, true) => self.after(now, Input::stdout(&buf[..n]))?,
                (n, false) => self.after(now, Input::stderr(&buf[..n]))?,
            }
            if drained {
                return Ok(false);
            }
        }
    }

    /// Hands in an input (recorded when recording), performs its work, and writes what it
    /// queued for the agent.
    fn after(&mut self, now: Instant, input: Input<'_>) -> io::Result<()> {
        self.driven.input(now, input, || None, &mut self.io)?;
        self.io.send_events();
        self.io.flush()
    }
}

impl Io {
    /// Hands the events gathered since the last call to the application in one send: one
    /// wake of a thread waiting in `next_event` for a read's events, not one an event. Sent
    /// after each input and turn, and before a caller hears anything, so every event that
    /// came before an answer can be taken once the answer is heard.
    fn send_events(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.batch);
        if self.events.send(batch).is_err() {
            self.events_gone = true;
        }
    }

    /// Writes what is queued until the pipe would block; wants writability only while bytes
    /// are left.
    fn flush(&mut self) -> io::Result<()> {
        let Some(pipe) = self.stdin.as_mut() else {
            self.out.clear();
            return Ok(());
        };
        while !self.out.is_empty() {
            let (front, _) = self.out.as_slices();
            match pipe.write(front) {
                Ok(n) => {
                    self.out.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    // The agent closed its stdin: it is ending; its exit closes the session.
                    self.out.clear();
                    self.close_pipe()?;
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        if self.close_stdin && self.out.is_empty() {
            return self.close_pipe();
        }
        let want = !self.out.is_empty();
        if let Some(pipe) = self.stdin.as_mut() {
            if want && !self.stdin_registered {
                self.registry
                    .register(pipe, Token(self.base + STDIN), Interest::WRITABLE)?;
            } else if !want && self.stdin_registered {
                self.registry.deregister(pipe)?;
            }
        }
        self.stdin_registered = want;
        Ok(())
    }

    fn close_pipe(&mut self) -> io::Result<()> {
        if let Some(mut pipe) = self.stdin.take() {
            if self.stdin_registered {
                self.registry.deregister(&mut pipe)?;
            }
            self.stdin_registered = false;
        }
        Ok(())
    }
}

impl Plumbing for Io {
    type Reply = Reply;
    type Error = io::Error;

    fn write(&mut self, bytes: Vec<u8>) {
        if self.stdin.is_some() && !self.close_stdin {
            self.out.extend(bytes);
        }
    }

    /// Kills the agent and its group (CALL-11), the group first while its leader is not yet
    /// reaped.
    fn kill(&mut self) {
        if let Some(group) = self.group {
            kill_group(group);
        }
        let _ = self.child.kill();
    }

    // The application may have stopped listening; the loop goes on.
    fn event(&mut self, event: ClientEvent) -> bool {
        let caller = &self.caller;
        let start = |key: &RequestKey, handler| handlers::start(caller, key, handler);
        let event = self
            .running
            .dispatch(event, &self.handlers, start, handlers::stop);
        match event {
            Some(event) if !self.events_gone => {
                self.batch.push(event);
                true
            }
            _ => false,
        }
    }

    fn hear(&mut self, reply: Reply, heard: Heard) {
        self.send_events();
        reply.send(heard);
    }

    fn withdrawn(&self, reply: &Self::Reply) -> bool {
        reply.is_withdrawn()
    }

    fn finished(&mut self, key: &RequestKey) {
        self.running.finished(key);
    }

    fn close_stdin(&mut self, grace: Duration) {
        // What is queued is still written, unless there is no time for it.
        self.close_stdin = true;
        if grace.is_zero() {
            self.out.clear();
        }
        let _ = self.flush();
    }

    /// With a pidfd the system is asked only once the pidfd was reported readable: else the
    /// agent runs.
    fn try_exit(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        if self.exit_fd.is_some() && !self.exit_reported {
            return Ok(None);
        }
        self.exit_reported = false;
        let exit = self.child.try_wait();
        if let Ok(Some(_)) = exit {
            self.exited();
        }
        exit
    }

    fn exit_watch(&self) -> ExitWatch {
        match self.exit_fd {
            Some(_) => ExitWatch::Told,
            None => ExitWatch::Asked,
        }
    }
}

impl Io {
    /// CALL-11: the agent has exited; what it left in its group is killed, once. Its pidfd
    /// leaves the poll.
    fn exited(&mut self) {
        if let Some(fd) = self.exit_fd.take() {
            let _ = self.registry.deregister(&mut SourceFd(&fd.as_raw_fd()));
        }
        if let Some(group) = self.group.take() {
            kill_group(group);
        }
    }
}

/// An agent dropped before its exit was seen (its reactor ended) is killed with its group
/// (CALL-11).
impl Drop for Io {
    fn drop(&mut self) {
        if self.group.is_some() {
            self.kill();
            let _ = self.child.wait();
        }
    }
}

/// The program and arguments, never the environment (it may hold keys).
fn describe(command: &Command) -> String {
    let mut out = format!(
        "recorded live by musewire-mio: {}",
        command.get_program().to_string_lossy()
    );
    for arg in command.get_args() {
        out.push(' ');
        out.push_str(&arg.to_string_lossy());
    }
    out
}
