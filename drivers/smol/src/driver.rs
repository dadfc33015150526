//! The driver task: reads the agent's pipes, feeds the core, performs its actions, sleeps
//! until the next input or the core's next timeout. It writes to the agent's stdin as one of
//! the things it waits on, so a slow reader on the agent's side never stops it from reading.
//!
//! Both queues are bounded (issue 13 item 3; see the crate docs): the bytes waiting for the
//! agent's stdin stop the task from taking the application's operations once there are
//! [`WRITE_BACKLOG_BYTES`] of them (the bounded operation queue then makes a call wait), and
//! the events the application has not taken stop it from reading the agent's stdout once
//! [`BACKLOG_BYTES`](musewire_core::client::BACKLOG_BYTES) were read past the last event taken, except while a caller waits for
//! an answer ([`Backlog`]).

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use musewire_core::client::{
    Backlog, CallResult, Client, ClientConfig, ClientEvent, Driven, Flow, Input as ClientInput,
    Recorder, Work,
};
use smol::channel;
use smol::future;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};

use crate::handlers::{self, Handlers, Running};
use crate::{Op, Reply};

const REAP_TICK: Duration = Duration::from_millis(5);

/// How many bytes may wait for the agent's stdin before the task stops taking operations
/// (one operation's own bytes may go past it).
pub const WRITE_BACKLOG_BYTES: usize = 1 << 20;

/// How many operations may wait for the task; a call waits for room beyond them.
pub const OPS_QUEUE: usize = 64;

/// What the application's handle holds of a started driver.
pub(crate) struct Started {
    pub(crate) pid: u32,
    pub(crate) ops: channel::Sender<Op>,
    /// Closing (or dropping) it stops the agent: at once, or after the grace sent.
    pub(crate) stop: channel::Sender<Duration>,
    pub(crate) events: channel::Receiver<ClientEvent>,
    /// Wakes the task when it stopped reading stdout for the application (see [`Flow`]).
    pub(crate) resume: channel::Sender<()>,
    pub(crate) task: smol::Task<io::Result<std::process::ExitStatus>>,
}

pub(crate) fn start(
    mut command: Command,
    config: ClientConfig,
    record: Option<&std::path::Path>,
    handlers: Arc<Mutex<Handlers>>,
    flow: Arc<Flow>,
) -> io::Result<Started> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let pid = child.id();
    let missing = |p: &str| io::Error::other(format!("the child has no {p} pipe"));
    let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
    let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
    let stderr = child.stderr.take().ok_or_else(|| missing("stderr"))?;
    let (ops_tx, ops) = channel::bounded(OPS_QUEUE);
    let (stop_tx, stop) = channel::bounded(1);
    let (resume_tx, resume) = channel::bounded(1);
    // Bounded by the backlog of stdout read for it (see the module docs).
    let (events_tx, events) = channel::unbounded();
    let now = Instant::now();
    let (recorder, recording) = match record {
        Some(path) => (
            Some(Recorder::new(
                now,
                &config,
                &[],
                "recorded live by musewire-smol",
            )),
            Some(std::fs::File::create(path)?),
        ),
        None => (None, None),
    };
    let state = Driver {
        driven: Driven::new(Client::new(config, now), recorder),
        recording,
        child,
        stdin: Some(stdin),
        out: VecDeque::new(),
        close_stdin: false,
        stdout: Some(stdout),
        stderr: Some(stderr),
        events: events_tx,
        handlers,
        running: Running::default(),
        handler_ops: ops_tx.downgrade(),
        ops,
        ops_open: true,
        stop: Some(stop),
        resume,
        exited: None,
        kill_at: None,
        flow,
        backlog: Backlog::default(),
        stdout_paused: false,
    };
    Ok(Started {
        pid,
        ops: ops_tx,
        stop: stop_tx,
        events,
        resume: resume_tx,
        task: smol::spawn(state.run()),
    })
}

struct Driver {
    driven: Driven<channel::Sender<Reply>>,
    /// The transcript file, when recording.
    recording: Option<std::fs::File>,
    child: Child,
    stdin: Option<ChildStdin>,
    /// Bytes waiting for the agent's stdin, written as it takes them.
    out: VecDeque<u8>,
    /// Close stdin once `out` is written (a shutdown).
    close_stdin: bool,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    events: channel::Sender<ClientEvent>,
    ops: channel::Receiver<Op>,
    /// Whether the handle may still send operations.
    ops_open: bool,
    /// `None` once the handle is gone.
    stop: Option<channel::Receiver<Duration>>,
    resume: channel::Receiver<()>,
    exited: Option<std::process::ExitStatus>,
    kill_at: Option<Instant>,
    /// Backpressure on events: what the application took, what the task read and sent, and
    /// whether reading stdout waits for the application.
    flow: Arc<Flow>,
    backlog: Backlog,
    stdout_paused: bool,
    /// The application's host handlers, and the ones running.
    handlers: Arc<Mutex<Handlers>>,
    running: Running,
    /// Where running handlers send their answers; weak, so that the ops channel still closes
    /// when the `Agent` is gone.
    handler_ops: channel::WeakSender<Op>,
}

/// What woke the task. An op is moved once; boxing it would cost an allocation per call.
#[allow(clippy::large_enum_variant)]
enum Wake {
    Stdout(io::Result<usize>),
    Stderr(io::Result<usize>),
    Wrote(io::Result<usize>),
    Op(Op),
    OpsClosed,
    Stop(Option<Duration>),
    Resume,
    Tick,
}

impl Driver {
    async fn run(mut self) -> io::Result<std::process::ExitStatus> {
        let mut out_buf = vec![0u8; 64 * 1024];
        let mut err_buf = vec![0u8; 16 * 1024];
        // What the client says at construction is recorded as a timer step at time zero.
        let now = Instant::now();
        self.after(now, ClientInput::Timeout)?;
        loop {
            if let Some(status) = self.exited {
                if self.stdout.is_none() && self.stderr.is_none() {
                    // Ops still queued would keep their callers waiting: the channel outlives
                    // this task while the Agent holds a sender. Close it and drop them.
                    self.ops.close();
                    while self.ops.try_recv().is_ok() {}
                    return Ok(status);
                }
            }
            if self.close_stdin && self.out.is_empty() {
                self.stdin = None;
            }
            // Backpressure on events: reading waits for the application, unless the agent
            // is being stopped (its output then goes in as fast as it comes).
            self.stdout_paused = self.kill_at.is_none() && self.backlog.pause(&self.flow);
            let now = Instant::now();
            let mut deadline = self.driven.client.poll_timeout();
            if self.stdout.is_none() || self.driven.client.is_closed() || self.kill_at.is_some() {
                deadline = Some(deadline.map_or(now + REAP_TICK, |d| d.min(now + REAP_TICK)));
            }
            let held = self.driven.client.held_bytes();
            let input = {
                let Driver {
                    stdin,
                    out,
                    stdout,
                    stderr,
                    ops,
                    ops_open,
                    stop,
                    resume,
                    stdout_paused,
                    ..
                } = &mut self;
                let read_stdout = !*stdout_paused;
                let take_ops = *ops_open && out.len() + held < WRITE_BACKLOG_BYTES;
                let stdout = async {
                    match stdout {
                        Some(pipe) if read_stdout => Wake::Stdout(pipe.read(&mut out_buf).await),
                        _ => future::pending().await,
                    }
                };
                let stderr = async {
                    match stderr {
                        Some(pipe) => Wake::Stderr(pipe.read(&mut err_buf).await),
                        None => future::pending().await,
                    }
                };
                let write = async {
                    match stdin {
                        // A write that loses the race has written nothing: the pipe is
                        // written only when it is ready.
                        Some(pipe) if !out.is_empty() => {
                            Wake::Wrote(pipe.write(out.as_slices().0).await)
                        }
                        _ => future::pending().await,
                    }
                };
                let ops = async {
                    if !take_ops {
                        return future::pending().await;
                    }
                    match ops.recv().await {
                        Ok(op) => Wake::Op(op),
                        Err(_) => Wake::OpsClosed,
                    }
                };
                let control = async {
                    let resume = async {
                        match resume.recv().await {
                            Ok(()) => Wake::Resume,
                            Err(_) => future::pending().await,
                        }
                    };
                    let stop = async {
                        match stop {
                            Some(stop) => Wake::Stop(stop.recv().await.ok()),
                            None => future::pending().await,
                        }
                    };
                    future::or(stop, resume).await
                };
                let tick = async {
                    match deadline {
                        Some(d) => {
                            smol::Timer::at(d).await;
                            Wake::Tick
                        }
                        None => future::pending().await,
                    }
                };
                future::or(
                    future::or(future::or(stdout, stderr), future::or(write, ops)),
                    future::or(control, tick),
                )
                .await
            };
            let now = Instant::now();
            match input {
                Wake::Stdout(Ok(0)) | Wake::Stdout(Err(_)) => {
                    self.stdout = None;
                    self.after(now, ClientInput::StdoutEnd)?;
                }
                Wake::Stdout(Ok(n)) => {
                    self.backlog.read(n);
                    self.after(now, ClientInput::stdout(&out_buf[..n]))?;
                }
                Wake::Stderr(Ok(0)) | Wake::Stderr(Err(_)) => self.stderr = None,
                Wake::Stderr(Ok(n)) => {
                    self.after(now, ClientInput::stderr(&err_buf[..n]))?;
                }
                Wake::Wrote(Ok(n)) => {
                    self.out.drain(..n);
                }
                Wake::Wrote(Err(_)) => {
                    // The agent closed its stdin: it is ending; its exit closes the session.
                    self.out.clear();
                    self.stdin = None;
                }
                Wake::Op(op) => self.op(now, op)?,
                Wake::OpsClosed => {
                    self.ops_open = false;
                    self.stop_agent(now, Duration::ZERO);
                }
                Wake::Stop(None) => {
                    // The Agent handle is gone: stop the agent.
                    self.stop = None;
                    self.stop_agent(now, Duration::ZERO);
                }
                Wake::Stop(Some(grace)) => self.stop_agent(now, grace),
                Wake::Resume | Wake::Tick => {}
            }
            if self.driven.client.poll_timeout().is_some_and(|t| t <= now) {
                self.after(now, ClientInput::Timeout)?;
            }
            self.reap(now)?;
        }
    }

    /// Closes the agent's stdin once what is queued is written (at once, with no grace) and
    /// kills the agent after `grace`.
    fn stop_agent(&mut self, now: Instant, grace: Duration) {
        self.close_stdin = true;
        if grace.is_zero() {
            self.out.clear();
        }
        self.kill_at = Some(self.kill_at.map_or(now + grace, |t| t.min(now + grace)));
    }

    fn op(&mut self, now: Instant, op: Op) -> io::Result<()> {
        match op {
            Op::Call { call, wait, reply } => {
                let mut waiter = None;
                let result = self.handle(now, ClientInput::Call(call), || {
                    wait.then(|| {
                        let (tx, rx) = channel::bounded(1);
                        waiter = Some(rx);
                        tx
                    })
                })?;
                let _ = reply.try_send((result, waiter));
                Ok(())
            }
            Op::Shutdown { grace } => {
                self.stop_agent(now, grace);
                Ok(())
            }
            Op::Finished { key, call } => {
                // The task is ending on its own: let it, rather than cancel it.
                if let Some(task) = self.running.finished(&key) {
                    task.detach();
                }
                match call {
                    Some(call) => self.after(now, ClientInput::Call(call)),
                    None => Ok(()),
                }
            }
        }
    }

    fn reap(&mut self, now: Instant) -> io::Result<()> {
        if self.exited.is_none() {
            if self.kill_at.is_some_and(|t| now >= t) {
                let _ = self.child.kill();
            }
            // All of stdout goes in before the exit (CALL-07), also when reading it waits.
            if self.stdout_paused && self.kill_at.is_none() {
                return Ok(());
            }
            if let Some(status) = self.child.try_status()? {
                self.exited = Some(status);
                let status = status.into();
                self.after(now, ClientInput::exit(status))?;
            }
        }
        Ok(())
    }

    /// After an input: records it with the work it produced, then does the work in order.
    fn after(&mut self, now: Instant, input: ClientInput<'_>) -> io::Result<()> {
        self.handle(now, input, || None).map(drop)
    }

    /// Hands in an input (recorded when recording) and performs the work it gave, in order.
    fn handle(
        &mut self,
        now: Instant,
        input: ClientInput<'_>,
        waiter: impl FnOnce() -> Option<channel::Sender<crate::Reply>>,
    ) -> io::Result<CallResult> {
        let (result, recorded) = self
            .driven
            .handle_with(now, input, waiter, |work| match work {
                Work::Write(bytes) => {
                    if self.stdin.is_some() && !self.close_stdin {
                        self.out.extend(bytes);
                    }
                }
                Work::StopAgent => {
                    let _ = self.child.kill();
                }
                Work::Event(event) => {
                    let event = handlers::dispatch(
                        &mut self.running,
                        &self.handlers,
                        &self.handler_ops,
                        event,
                    );
                    if let Some(event) = event {
                        if self.events.try_send(event).is_ok() {
                            self.backlog.sent();
                        }
                    }
                }
                Work::Answer(waiter, answer) => {
                    let _ = waiter.try_send(answer);
                }
            });
        if let Some(file) = &mut self.recording {
            use std::io::Write as _;
            file.write_all(&recorded)?;
        }
        Ok(result)
    }
}
