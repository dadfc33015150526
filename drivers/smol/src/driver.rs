//! The driver task: reads the agent's pipes, feeds the core, performs its actions, sleeps
//! until the next input or the core's next timeout. It writes to the agent's stdin as one of
//! the things it waits on, so a slow reader on the agent's side never stops it from reading.
//!
//! Both queues are bounded (see the crate docs): the bytes waiting for the agent's stdin stop
//! the task from taking the application's operations once there are [`WRITE_BACKLOG_BYTES`] of
//! them (the bounded operation queue then makes a call wait), and the events the application
//! has not taken stop it from reading the agent's stdout once
//! [`BACKLOG_BYTES`](musewire_host::BACKLOG_BYTES) were read past the last event taken,
//! except while a caller waits for an answer ([`Backlog`](musewire_host::Backlog)).
//!
//! The loop's bookkeeping (the work of each input, the operations, the stop and the exit,
//! the backpressure) is the host kit's [`Driven`]; this task keeps only its I/O, as
//! [`Plumbing`].

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use musewire_core::client::{ClientConfig, ClientEvent, Input as ClientInput};
use musewire_host::{Driven, ExitWatch, Flow, Heard, Plumbing, RequestKey};
use musewire_store::SessionFiles;
use smol::channel;
use smol::future;
use smol::stream::Stream;

use crate::agent_pipes::{AgentCommand, AgentPipes, PipeEvent};
use crate::handlers::{self, Handlers, Reach, Running};
use crate::{Op, Reply};

/// How many bytes may wait for the agent's stdin before the task stops taking operations
/// (one operation's own bytes may go past it): the core's rule, [`Driven::takes_ops`].
pub use musewire_host::WRITE_BACKLOG_BYTES;

/// How many operations may wait for the task; a call waits for room beyond them.
pub const OPS_QUEUE: usize = 8;

/// How many wakes the task handles before it yields to the executor.
const YIELD_EVERY: u32 = 16;

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
    command: impl Into<AgentCommand>,
    config: ClientConfig,
    record: Option<&std::path::Path>,
    handlers: Arc<Mutex<Handlers>>,
    flow: Arc<Flow>,
) -> io::Result<Started> {
    let pipes = AgentPipes::spawn(command)?;
    let pid = pipes.pid();
    let (ops_tx, ops) = channel::bounded(OPS_QUEUE);
    let (stop_tx, stop) = channel::bounded(1);
    let (resume_tx, resume) = channel::bounded(1);
    // Bounded by the backlog of stdout read for it (see the module docs).
    let (events_tx, events) = channel::unbounded();
    let description = "recorded live by musewire-smol";
    let driven = SessionFiles::open(config, record, Instant::now(), description)?;
    let state = Driver {
        driven,
        io: Io {
            pipes,
            events: events_tx,
            handlers,
            running: Running::default(),
            reach: Reach {
                ops: ops_tx.downgrade(),
                flow: flow.clone(),
                resume: resume_tx.clone(),
            },
            ops: Box::pin(ops),
            ops_open: true,
            ops_first: false,
            stop: Some(Box::pin(stop)),
            resume: Box::pin(resume),
            timer: smol::Timer::never(),
            timer_at: None,
            flow,
        },
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
    /// With the session's files: its transcript (when recording) and spill store.
    driven: Driven<Reply, SessionFiles>,
    io: Io,
}

/// The task's I/O: the agent's process and pipes, and the channels to the application.
struct Io {
    /// The agent's process and pipes.
    pipes: AgentPipes,
    events: channel::Sender<ClientEvent>,
    // The receivers are polled in place, wake after wake (pinned: they are not `Unpin`).
    ops: Pin<Box<channel::Receiver<Op>>>,
    /// Whether the handle may still send operations.
    ops_open: bool,
    /// Whether an operation went before the agent's output at the last poll (they take
    /// turns).
    ops_first: bool,
    /// `None` once the handle is gone.
    stop: Option<Pin<Box<channel::Receiver<Duration>>>>,
    resume: Pin<Box<channel::Receiver<()>>>,
    /// The core's next timeout, kept armed across wakes, and the instant it is set for.
    timer: smol::Timer,
    timer_at: Option<Instant>,
    /// Backpressure on events: what the application took (see the module docs).
    flow: Arc<Flow>,
    /// The application's host handlers, and the ones running.
    handlers: Arc<Mutex<Handlers>>,
    running: Running,
    /// How running handlers reach this task: their answers, and their updates' wakes (an
    /// update that waits keeps the task reading).
    reach: Reach,
}

/// The first size of each read buffer.
const FIRST_READ: usize = 4 * 1024;
/// The most of the agent's stdout read at a time.
const STDOUT_READ: usize = 64 * 1024;
/// The most of its stderr read at a time.
const STDERR_READ: usize = 16 * 1024;

/// Doubles `buf` (up to `most`) after a read of `n` bytes filled it.
fn grow(buf: &mut Vec<u8>, n: usize, most: usize) {
    if n == buf.len() && n < most {
        buf.resize((n * 2).min(most), 0);
    }
}

/// What woke the task. An op is moved once; boxing it would cost an allocation per call.
#[allow(clippy::large_enum_variant)]
enum Wake {
    Pipe(PipeEvent),
    Op(Op),
    OpsClosed,
    Stop(Option<Duration>),
    Resume,
    Tick,
    /// The agent's exit was reported: the reap asks for it.
    Exit,
}

impl Driver {
    async fn run(mut self) -> io::Result<std::process::ExitStatus> {
        // Small until a read fills them (an idle session holds little), then doubled up to
        // their full size: an agent that writes fast is read 64 KiB at a time.
        let mut out_buf = vec![0u8; FIRST_READ];
        let mut err_buf = vec![0u8; FIRST_READ];
        let (driven, io) = (&mut self.driven, &mut self.io);
        // What the client says at construction is recorded as a timer step at time zero.
        let now = Instant::now();
        driven.input(now, ClientInput::Timeout, || None, io)?;
        let mut turns = 0u32;
        loop {
            // A pipe that is always ready never makes the task wait: it gives the executor
            // back now and then, so that the host tool handlers' tasks (and any other on the
            // same executor) run while an agent floods.
            turns = turns.wrapping_add(1);
            if turns.is_multiple_of(YIELD_EVERY) {
                future::yield_now().await;
            }
            if let Some(status) = driven.exit_status() {
                let ended = !io.pipes.stdout_open() && !io.pipes.stderr_open();
                if ended || driven.output_abandoned(Instant::now()) {
                    io.pipes.abandon_stdout();
                    io.pipes.abandon_stderr();
                    // Ops still queued would keep their callers waiting: the channel outlives
                    // this task while the Agent holds a sender. Close it and drop them.
                    io.ops.close();
                    while io.ops.try_recv().is_ok() {}
                    return Ok(status);
                }
            }
            let held = driven.hold_stdout(&io.flow);
            let now = Instant::now();
            let deadline = driven.deadline(now);
            let take_ops = io.ops_open && driven.takes_ops(io.pipes.queued());
            let input = io
                .wait(held, take_ops, deadline, &mut out_buf, &mut err_buf)
                .await;
            let now = Instant::now();
            match input {
                Wake::Pipe(PipeEvent::StdoutEnd) => {
                    driven.input(now, ClientInput::StdoutEnd, || None, io)?;
                }
                Wake::Pipe(PipeEvent::Stdout(n)) => {
                    driven.input(now, ClientInput::stdout(&out_buf[..n]), || None, io)?;
                    grow(&mut out_buf, n, STDOUT_READ);
                }
                Wake::Pipe(PipeEvent::Stderr(n)) => {
                    driven.input(now, ClientInput::stderr(&err_buf[..n]), || None, io)?;
                    grow(&mut err_buf, n, STDERR_READ);
                }
                // A stdin the agent closed is dropped with its queue: it is ending, and its
                // exit closes the session.
                Wake::Pipe(PipeEvent::StderrEnd | PipeEvent::Written(_)) => {}
                Wake::Op(op) => driven.op(now, op, io)?,
                Wake::OpsClosed => {
                    io.ops_open = false;
                    driven.stop(now, Duration::ZERO, io);
                }
                Wake::Stop(None) => {
                    // The Agent handle is gone: stop the agent.
                    io.stop = None;
                    driven.stop(now, Duration::ZERO, io);
                }
                Wake::Stop(Some(grace)) => driven.stop(now, grace, io),
                Wake::Resume | Wake::Tick | Wake::Exit => {}
            }
            driven.timers(now, io)?;
            driven.reap(now, io)?;
        }
    }
}

impl Io {
    /// Waits for what comes first: stdout (unless `held`), stderr, room in the agent's stdin
    /// for what waits for it, an operation (when `take_ops`), a stop, a resume, the deadline.
    /// Every source stays registered across wakes (the pipes are read on readiness, the
    /// channels and the timer polled in place), so a wake costs no failed reads and no new
    /// registrations.
    async fn wait(
        &mut self,
        held: bool,
        take_ops: bool,
        deadline: Option<Instant>,
        out_buf: &mut [u8],
        err_buf: &mut [u8],
    ) -> Wake {
        if deadline != self.timer_at {
            match deadline {
                Some(at) => self.timer.set_at(at),
                None => self.timer = smol::Timer::never(),
            }
            self.timer_at = deadline;
        }
        future::poll_fn(|cx| self.poll_wake(cx, held, take_ops, out_buf, err_buf)).await
    }

    fn poll_wake(
        &mut self,
        cx: &mut Context<'_>,
        held: bool,
        take_ops: bool,
        out_buf: &mut [u8],
        err_buf: &mut [u8],
    ) -> Poll<Wake> {
        // The agent's output and the application's operations take turns going first, so
        // that neither a flooding agent (read on while a call waits) starves the calls, nor a
        // stream of calls the reads.
        self.ops_first = !self.ops_first;
        if self.ops_first {
            if let Poll::Ready(wake) = self.poll_op(cx, take_ops) {
                return Poll::Ready(wake);
            }
        }
        if let Poll::Ready(event) = self.pipes.poll(cx, !held, out_buf, err_buf) {
            return Poll::Ready(Wake::Pipe(event));
        }
        if let Poll::Ready(wake) = self.poll_op(cx, take_ops) {
            return Poll::Ready(wake);
        }
        // Not while stdout is held back: the exit is not reaped then (CALL-07), and a report
        // not reaped would wake the task at every poll.
        if !held && self.pipes.poll_exit_reported(cx).is_ready() {
            return Poll::Ready(Wake::Exit);
        }
        if let Some(stop) = &mut self.stop {
            if let Poll::Ready(grace) = stop.as_mut().poll_next(cx) {
                return Poll::Ready(Wake::Stop(grace));
            }
        }
        // A closed resume channel never wakes.
        if let Poll::Ready(Some(())) = self.resume.as_mut().poll_next(cx) {
            return Poll::Ready(Wake::Resume);
        }
        if self.timer_at.is_some() && Pin::new(&mut self.timer).poll(cx).is_ready() {
            self.timer_at = None;
            return Poll::Ready(Wake::Tick);
        }
        Poll::Pending
    }

    /// The next operation, when operations are taken.
    fn poll_op(&mut self, cx: &mut Context<'_>, take_ops: bool) -> Poll<Wake> {
        if !take_ops {
            return Poll::Pending;
        }
        self.ops
            .as_mut()
            .poll_next(cx)
            .map(|op| op.map_or(Wake::OpsClosed, Wake::Op))
    }
}

impl Plumbing for Io {
    type Reply = Reply;
    type Error = io::Error;

    fn write(&mut self, bytes: Vec<u8>) {
        self.pipes.queue(&bytes);
    }

    fn kill(&mut self) {
        self.pipes.kill();
    }

    fn event(&mut self, event: ClientEvent) -> bool {
        let reach = &self.reach;
        let start = |key: &RequestKey, handler| handlers::start(reach, key, handler);
        let event = self.running.dispatch(event, &self.handlers, start, drop);
        event.is_some_and(|event| self.events.try_send(event).is_ok())
    }

    fn hear(&mut self, reply: Reply, heard: Heard) {
        let _ = reply.try_send(heard);
    }

    /// The caller's future was dropped (say, raced against a timer) before the task took its
    /// call: the call is not made.
    fn withdrawn(&self, reply: &Self::Reply) -> bool {
        reply.is_closed()
    }

    fn finished(&mut self, key: &RequestKey) {
        // The task is ending on its own: let it, rather than cancel it.
        if let Some(task) = self.running.finished(key) {
            task.detach();
        }
    }

    fn close_stdin(&mut self, grace: Duration) {
        self.pipes.close_stdin(grace);
    }

    fn try_exit(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        self.pipes.try_exit()
    }

    fn exit_watch(&self) -> ExitWatch {
        self.pipes.exit_watch()
    }
}
