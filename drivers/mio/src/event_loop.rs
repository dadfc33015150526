//! The loop thread: mio readiness over the child's pipes, the core's timers, and a waker for
//! the application's calls. Performs the core's actions; decides nothing of the protocol:
//! the loop's bookkeeping (the work of each input, the operations, the stop and the exit,
//! the backpressure on events) is the core's [`Driven`]; this loop keeps only its I/O, as
//! [`Plumbing`].

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::unix::pipe::{Receiver, Sender};
use mio::{Events, Interest, Poll, Token, Waker};
use musewire_core::client::{
    Answer, Client, ClientConfig, ClientEvent, Driven, Flow, Input, Plumbing, Recorder, Replied,
    RequestKey,
};
use musewire_core::spill::{SaveFailure, Saved, SpillWrite};
use musewire_store::LocalStore;

use crate::handlers::{self, Registered, Running};
use crate::{Caller, Op, Reply, Waiter};

const STDOUT: Token = Token(0);
const STDERR: Token = Token(1);
const STDIN: Token = Token(2);
const WAKE: Token = Token(3);

type Started = (
    u32,
    Caller,
    mpsc::Receiver<ClientEvent>,
    JoinHandle<io::Result<std::process::ExitStatus>>,
);

pub(crate) fn start(
    mut command: Command,
    config: ClientConfig,
    record: Option<&std::path::Path>,
    handlers: Arc<std::sync::Mutex<Registered>>,
    flow: Arc<Flow>,
) -> io::Result<Started> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let pid = child.id();
    let take = |e: &str| io::Error::other(format!("the child has no {e} pipe"));
    let stdin = Sender::from(child.stdin.take().ok_or_else(|| take("stdin"))?);
    let stdout = Receiver::from(child.stdout.take().ok_or_else(|| take("stdout"))?);
    let stderr = Receiver::from(child.stderr.take().ok_or_else(|| take("stderr"))?);
    for r in [&stdout, &stderr] {
        r.set_nonblocking(true)?;
    }
    stdin.set_nonblocking(true)?;
    let poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
    let (ops_tx, ops) = mpsc::channel();
    let caller = Caller { ops: ops_tx, waker };
    let (events_tx, events) = mpsc::channel();
    let now = Instant::now();
    let (recorder, recording) = match record {
        Some(path) => (
            Some(Recorder::new(now, &config, &[], &describe(&command))),
            Some(std::fs::File::create(path)?),
        ),
        None => (None, None),
    };
    // The local store of spilled host tool results (SPILL-06), when the policy has one.
    let store = LocalStore::for_client(&config);
    let mut state = Loop {
        driven: Driven::new(Client::new(config, now), recorder),
        io: Io {
            store,
            recording,
            child,
            poll,
            stdin: Some(stdin),
            stdin_registered: false,
            stdout: Some(stdout),
            stderr: Some(stderr),
            out: VecDeque::new(),
            events: events_tx,
            handlers,
            running: Running::default(),
            caller: caller.clone(),
            ops,
            flow,
        },
    };
    let io = &mut state.io;
    let registry = io.poll.registry();
    if let Some(r) = io.stdout.as_mut() {
        registry.register(r, STDOUT, Interest::READABLE)?;
    }
    if let Some(r) = io.stderr.as_mut() {
        registry.register(r, STDERR, Interest::READABLE)?;
    }
    let thread = std::thread::Builder::new()
        .name("musewire-mio".into())
        .spawn(move || state.run())?;
    Ok((pid, caller, events, thread))
}

struct Loop {
    driven: Driven<mpsc::Sender<Reply>>,
    io: Io,
}

/// The loop's I/O: the agent's process and pipes, and the channels to the application.
struct Io {
    /// The transcript file, when recording.
    recording: Option<std::fs::File>,
    child: Child,
    poll: Poll,
    stdin: Option<Sender>,
    stdin_registered: bool,
    stdout: Option<Receiver>,
    stderr: Option<Receiver>,
    /// Bytes waiting for the agent's stdin; written only while non-empty (backpressure).
    out: VecDeque<u8>,
    events: mpsc::Sender<ClientEvent>,
    ops: mpsc::Receiver<Op>,
    /// The application's host handlers, the ones running, and how they reach the loop.
    handlers: Arc<std::sync::Mutex<Registered>>,
    running: Running,
    /// How running handlers reach the loop.
    caller: Caller,
    /// Backpressure on events (issue 14, item 3): what the application has taken.
    flow: Arc<Flow>,
    /// Where spilled host tool results are saved (SPILL-06), when the policy has a store.
    store: Option<LocalStore>,
}

impl Loop {
    fn run(mut self) -> io::Result<std::process::ExitStatus> {
        let mut events = Events::with_capacity(16);
        let mut buf = vec![0u8; 64 * 1024];
        // What the client says at construction is recorded as a timer step at time zero.
        let now = Instant::now();
        self.after(now, Input::Timeout)?;
        loop {
            if let Some(status) = self.driven.exit_status() {
                if self.io.stdout.is_none() && self.io.stderr.is_none() {
                    self.io.flush()?;
                    return Ok(status);
                }
            }
            let now = Instant::now();
            let deadline = self.driven.deadline(now, self.io.stdout.is_some());
            let timeout = deadline.map(|d| d.saturating_duration_since(now));
            match self.io.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let mut read_stdout = false;
            for event in events.iter() {
                match event.token() {
                    STDOUT => read_stdout = true,
                    STDERR => self.read(false, &mut buf)?,
                    STDIN => self.io.flush()?,
                    WAKE => self.take_ops()?,
                    _ => {}
                }
            }
            // Stdout held back is read again at each turn: a take of the application's, or a
            // caller starting to wait, wakes the loop.
            if read_stdout || self.driven.is_holding_stdout() {
                self.read(true, &mut buf)?;
            }
            let now = Instant::now();
            self.driven.timers(now, &mut self.io)?;
            self.driven.reap(now, &mut self.io)?;
            self.io.flush()?;
        }
    }

    /// Reads the agent's stdout (`stdout`) or stderr until it would block, or until stdout
    /// is held back (backpressure on events), handing what it reads in; at its end the pipe
    /// is closed (and stdout's end handed in).
    fn read(&mut self, stdout: bool, buf: &mut [u8]) -> io::Result<()> {
        loop {
            if stdout && self.driven.hold_stdout(&self.io.flow) {
                return Ok(());
            }
            let pipe = match stdout {
                true => &mut self.io.stdout,
                false => &mut self.io.stderr,
            };
            let Some(reader) = pipe.as_mut() else {
                return Ok(());
            };
            let read = match reader.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                read => read?,
            };
            let now = Instant::now();
            match (read, stdout) {
                (0, _) => {
                    let mut reader = pipe.take().expect("open");
                    self.io.poll.registry().deregister(&mut reader)?;
                    if stdout {
                        self.after(now, Input::StdoutEnd)?;
                    }
                }
                (n, true) => self.after(now, Input::stdout(&buf[..n]))?,
                (n, false) => self.after(now, Input::stderr(&buf[..n]))?,
            }
        }
    }

    fn take_ops(&mut self) -> io::Result<()> {
        while let Ok(op) = self.io.ops.try_recv() {
            let now = Instant::now();
            self.driven.op(now, op, &mut self.io)?;
            self.io.flush()?;
        }
        Ok(())
    }

    /// Hands in an input (recorded when recording), performs its work, and writes what it
    /// queued for the agent.
    fn after(&mut self, now: Instant, input: Input<'_>) -> io::Result<()> {
        self.driven.input(now, input, || None, &mut self.io)?;
        self.io.flush()
    }
}

impl Io {
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
        let want = !self.out.is_empty();
        if let Some(pipe) = self.stdin.as_mut() {
            if want && !self.stdin_registered {
                self.poll
                    .registry()
                    .register(pipe, STDIN, Interest::WRITABLE)?;
            } else if !want && self.stdin_registered {
                self.poll.registry().deregister(pipe)?;
            }
        }
        self.stdin_registered = want;
        Ok(())
    }

    fn close_pipe(&mut self) -> io::Result<()> {
        if let Some(mut pipe) = self.stdin.take() {
            if self.stdin_registered {
                self.poll.registry().deregister(&mut pipe)?;
            }
            self.stdin_registered = false;
        }
        Ok(())
    }
}

impl Plumbing for Io {
    type Waiter = mpsc::Sender<Reply>;
    type WaitEnd = Waiter;
    type Reply = mpsc::Sender<Replied<Waiter>>;
    type Error = io::Error;

    fn write(&mut self, bytes: Vec<u8>) {
        self.out.extend(bytes);
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
    }

    // The application may have stopped listening; the loop goes on.
    fn event(&mut self, event: ClientEvent) -> bool {
        let caller = &self.caller;
        let start = |key: &RequestKey, handler| handlers::start(caller, key, handler);
        let event = self
            .running
            .dispatch(event, &self.handlers, start, handlers::stop);
        event.is_some_and(|event| self.events.send(event).is_ok())
    }

    fn answer(&mut self, waiter: Self::Waiter, answer: Answer) {
        let _ = waiter.send(answer);
    }

    fn waiter(&mut self) -> (Self::Waiter, Waiter) {
        mpsc::channel()
    }

    fn reply(&mut self, reply: Self::Reply, replied: Replied<Waiter>) {
        let _ = reply.send(replied);
    }

    fn finished(&mut self, key: &RequestKey) {
        self.running.finished(key);
    }

    fn close_stdin(&mut self, _grace: Duration) {
        let _ = self.close_pipe();
    }

    fn record(&mut self, transcript: &[u8]) -> io::Result<()> {
        match &mut self.recording {
            Some(file) => file.write_all(transcript),
            None => Ok(()),
        }
    }

    fn try_exit(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        self.child.try_wait()
    }

    fn save(&mut self, write: &SpillWrite) -> Result<Saved, SaveFailure> {
        LocalStore::spill(self.store.as_mut(), write)
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
