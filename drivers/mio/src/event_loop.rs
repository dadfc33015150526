//! The loop thread: mio readiness over the child's pipes, the core's timers, and a waker for
//! the application's calls. Performs the core's actions; decides nothing of the protocol.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::unix::pipe::{Receiver, Sender};
use mio::{Events, Interest, Poll, Token, Waker};
use musewire_core::client::{
    CallResult, Client, ClientConfig, ClientEvent, Driven, Input, Recorder, Work,
};

use crate::handlers::{self, Registered, Running};
use crate::{Op, Reply};
use musewire_core::client::{Backlog, Flow};

const STDOUT: Token = Token(0);
const STDERR: Token = Token(1);
const STDIN: Token = Token(2);
const WAKE: Token = Token(3);
/// How often the loop looks for the child's exit once its output has ended.
const REAP_TICK: Duration = Duration::from_millis(5);

type Started = (
    u32,
    mpsc::Sender<Op>,
    mpsc::Receiver<ClientEvent>,
    Arc<Waker>,
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
    let (events_tx, events) = mpsc::channel();
    let now = Instant::now();
    let (recorder, recording) = match record {
        Some(path) => (
            Some(Recorder::new(now, &config, &[], &describe(&command))),
            Some(std::fs::File::create(path)?),
        ),
        None => (None, None),
    };
    let mut state = Loop {
        driven: Driven::new(Client::new(config, now), recorder),
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
        handler_ops: ops_tx.clone(),
        waker: waker.clone(),
        ops,
        exited: None,
        kill_at: None,
        flow,
        backlog: Backlog::default(),
        stdout_paused: false,
    };
    let registry = state.poll.registry();
    if let Some(r) = state.stdout.as_mut() {
        registry.register(r, STDOUT, Interest::READABLE)?;
    }
    if let Some(r) = state.stderr.as_mut() {
        registry.register(r, STDERR, Interest::READABLE)?;
    }
    let thread = std::thread::Builder::new()
        .name("musewire-mio".into())
        .spawn(move || state.run())?;
    Ok((pid, ops_tx, events, waker, thread))
}

struct Loop {
    driven: Driven<mpsc::Sender<Reply>>,
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
    exited: Option<std::process::ExitStatus>,
    /// When set, the child is killed at this time if it has not exited.
    kill_at: Option<Instant>,
    /// The application's host handlers, the ones running, and how they reach the loop.
    handlers: Arc<std::sync::Mutex<Registered>>,
    running: Running,
    handler_ops: mpsc::Sender<Op>,
    waker: Arc<Waker>,
    /// Backpressure on events (issue 14, item 3): what the application has taken, what the
    /// loop read and sent, and whether reading stdout waits for the application.
    flow: Arc<Flow>,
    backlog: Backlog,
    stdout_paused: bool,
}

impl Loop {
    fn run(mut self) -> io::Result<std::process::ExitStatus> {
        let mut events = Events::with_capacity(16);
        let mut buf = vec![0u8; 64 * 1024];
        // What the client says at construction is recorded as a timer step at time zero.
        let now = Instant::now();
        self.after(now, Input::Timeout)?;
        loop {
            if let Some(status) = self.exited {
                if self.stdout.is_none() && self.stderr.is_none() {
                    self.flush()?;
                    return Ok(status);
                }
            }
            let now = Instant::now();
            let mut deadline = self.driven.client.poll_timeout();
            if self.stdout.is_none() || self.driven.client.is_closed() || self.kill_at.is_some() {
                deadline = Some(deadline.map_or(now + REAP_TICK, |d| d.min(now + REAP_TICK)));
            }
            let timeout = deadline.map(|d| d.saturating_duration_since(now));
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for event in events.iter() {
                match event.token() {
                    STDOUT => self.read_stdout(&mut buf)?,
                    STDERR => self.read_stderr(&mut buf)?,
                    STDIN => self.flush()?,
                    WAKE => self.take_ops()?,
                    _ => {}
                }
            }
            if self.stdout_paused {
                self.read_stdout(&mut buf)?;
            }
            let now = Instant::now();
            if self.driven.client.poll_timeout().is_some_and(|t| t <= now) {
                self.after(now, Input::Timeout)?;
            }
            self.reap(now)?;
            self.flush()?;
        }
    }

    fn read_stdout(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.stdout_paused = false;
        while self.stdout.is_some() {
            if self.kill_at.is_none() && self.backlog.pause(&self.flow) {
                self.stdout_paused = true;
                break;
            }
            let pipe = self.stdout.as_mut().expect("open");
            match pipe.read(buf) {
                Ok(0) => {
                    let mut pipe = self.stdout.take().expect("open");
                    self.poll.registry().deregister(&mut pipe)?;
                    let now = Instant::now();
                    self.after(now, Input::StdoutEnd)?;
                }
                Ok(n) => {
                    self.backlog.read(n);
                    let now = Instant::now();
                    self.after(now, Input::stdout(&buf[..n]))?;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn read_stderr(&mut self, buf: &mut [u8]) -> io::Result<()> {
        while let Some(pipe) = self.stderr.as_mut() {
            match pipe.read(buf) {
                Ok(0) => {
                    let mut pipe = self.stderr.take().expect("open");
                    self.poll.registry().deregister(&mut pipe)?;
                }
                Ok(n) => {
                    let now = Instant::now();
                    self.after(now, Input::stderr(&buf[..n]))?;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
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
                    self.close_stdin()?;
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

    fn close_stdin(&mut self) -> io::Result<()> {
        if let Some(mut pipe) = self.stdin.take() {
            if self.stdin_registered {
                self.poll.registry().deregister(&mut pipe)?;
            }
            self.stdin_registered = false;
        }
        Ok(())
    }

    fn take_ops(&mut self) -> io::Result<()> {
        while let Ok(op) = self.ops.try_recv() {
            let now = Instant::now();
            match op {
                Op::Call { call, wait, reply } => {
                    let mut waiter = None;
                    let result = self.handle(now, Input::Call(call), || {
                        wait.then(|| {
                            let (tx, rx) = mpsc::channel();
                            waiter = Some(rx);
                            tx
                        })
                    })?;
                    let _ = reply.send((result, waiter));
                }
                Op::Shutdown { grace } => {
                    let _ = self.close_stdin();
                    self.kill_at.get_or_insert(now + grace);
                }
                Op::Finished { key, call } => {
                    self.running.finished(&key);
                    if let Some(call) = call {
                        self.after(now, Input::Call(call))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Looks for the child's exit; kills it when its time has come.
    fn reap(&mut self, now: Instant) -> io::Result<()> {
        if self.exited.is_none() {
            if self.kill_at.is_some_and(|t| now >= t) {
                let _ = self.child.kill();
            }
            // All of stdout goes in before the exit (CALL-07), also when reading it waits.
            if self.stdout_paused && self.kill_at.is_none() {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                self.exited = Some(status);
                let status = status.into();
                self.after(now, Input::exit(status))?;
            }
        }
        Ok(())
    }

    /// After an input: records it with the work it produced, then does the work in order.
    /// Hands in an input whose call result nobody waits for.
    fn after(&mut self, now: Instant, input: Input<'_>) -> io::Result<()> {
        self.handle(now, input, || None).map(drop)
    }

    /// Hands in an input (recorded when recording) and performs the work it gave.
    fn handle(
        &mut self,
        now: Instant,
        input: Input<'_>,
        waiter: impl FnOnce() -> Option<mpsc::Sender<crate::Reply>>,
    ) -> io::Result<CallResult> {
        let (result, recorded) = self
            .driven
            .handle_with(now, input, waiter, |work| match work {
                Work::Write(bytes) => self.out.extend(bytes),
                Work::StopAgent => {
                    let _ = self.child.kill();
                }
                // The application may have stopped listening; the loop goes on.
                Work::Event(event) => {
                    let event = handlers::dispatch(
                        &mut self.running,
                        &self.handlers,
                        &self.handler_ops,
                        &self.waker,
                        event,
                    );
                    if let Some(event) = event {
                        if self.events.send(event).is_ok() {
                            self.backlog.sent();
                        }
                    }
                }
                Work::Answer(waiter, answer) => {
                    let _ = waiter.send(answer);
                }
            });
        if let Some(file) = &mut self.recording {
            file.write_all(&recorded)?;
        }
        self.flush()?;
        Ok(result)
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
