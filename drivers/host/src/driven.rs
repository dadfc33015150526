//! The bookkeeping every driver shares, kept here so the drivers stay thin and alike: the
//! client, an optional transcript recorder, and the callers waiting for an answer.
//!
//! A driver hands every input to [`Driven::handle`]; it gets back what a call returned, the
//! transcript bytes to append to its recording file, and the work to do, in order: bytes to
//! write, the agent to stop, events for the application, and answers for the callers that
//! wait on a request. [`Driven::input`] performs that work itself: the driver's own I/O
//! through its [`Plumbing`], the session's files (the transcript, the spill store) through
//! the [`LocalFiles`] it was made with.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use musewire_core::client::{
    Action, Answer, CallResult, Client, ClientEvent, ExitStatus, Input, Recorder, RequestId,
};
use musewire_core::spill::{SaveFailure, Saved, SpillId, SpillWrite};
use musewire_wire::Answered;

use crate::flow::{Backlog, Flow};
use crate::front::{Heard, Op, RequestKey};

/// How often a driver looks for the agent's exit once its output has ended, the session has
/// closed, or the agent is being stopped (a child's exit wakes no pipe).
pub const REAP_TICK: Duration = Duration::from_millis(5);

/// How often, at most, a driver that is not told of the agent's exit ([`ExitWatch::Asked`])
/// asks for it while the agent's output is open: an agent whose output is open is nearly
/// always running, and the question is a system call (`wait4`) that a busy loop would
/// otherwise make on every wake (three per round trip). [`Driven::deadline`] wakes the loop
/// for it, so an agent that exits while something it left holds its output open is still
/// seen to exit.
pub const EXIT_CHECK_WHILE_OPEN: Duration = Duration::from_millis(50);

/// How a driver learns of the agent's exit: what [`Driven::reap`] asks it for, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitWatch {
    /// The driver is woken by the exit (a pidfd in its poll, [`crate::exit_fd`]) and its
    /// [`Plumbing::try_exit`] asks the system only once it was: the exit is asked for at
    /// every reap, for free until it comes.
    Told,
    /// Nothing wakes the driver at the exit: while the agent's output is open its exit is
    /// asked for at most every [`EXIT_CHECK_WHILE_OPEN`], and the loop is woken for it.
    Asked,
}

/// How long, at most, a driver reads the agent's output after the agent has exited: what
/// still holds its stdout or stderr then (a process it started outside its group, CALL-11)
/// does not hold the session open. Past it the driver stops reading them and the session
/// ends ([`Driven::output_abandoned`]).
pub const OUTPUT_GRACE: Duration = Duration::from_secs(2);

/// How many bytes may wait for the agent's stdin (queued by the driver, or held by the client
/// until the agent is ready) before a driver stops taking the application's operations:
/// its bounded queue of operations then makes a caller wait. One operation's own
/// bytes may go past it (a large prompt is written whole). See [`Driven::takes_ops`].
pub const WRITE_BACKLOG_BYTES: usize = 1 << 20;

/// What a driver does after an input, in order.
#[derive(Debug)]
pub enum Work<W> {
    /// Write these bytes to the agent's stdin.
    Write(Vec<u8>),
    /// Stop the agent process.
    StopAgent,
    /// Save a host tool result's text with the spill store, and hand the answer back in
    /// with [`Input::SpillDone`] (SPILL-03).
    SpillWrite(SpillId, SpillWrite),
    /// Hand this event to the application.
    Event(ClientEvent),
    /// Give this answer to the caller waiting on `W` ([`Heard::Answer`]).
    Answer(W, Answer),
}

/// What a driver's loop does for the client, in its own I/O: the one thing a driver writes
/// itself. [`Driven::input`], [`Driven::op`] and [`Driven::reap`] run the loop's bookkeeping
/// over it, the same in every driver: the work of each input in order, the
/// application's operations, the stop and the exit (CALL-07), and the backpressure on
/// events ([`Backlog`]).
pub trait Plumbing {
    /// Where a caller hears what its call returned, or the answer to the request its `wait`
    /// call made, on one channel ([`Heard`]: the caller wakes once a call). A clone is another
    /// sender on the same channel: the loop keeps one as the request's waiter.
    type Reply: Clone;
    /// The driver's I/O error (a failed append to the transcript, [`LocalFiles::record`],
    /// is one).
    type Error: From<std::io::Error>;

    /// Queues bytes for the agent's stdin.
    fn write(&mut self, bytes: Vec<u8>);
    /// Kills the agent process.
    fn kill(&mut self);
    /// Routes an event to a running handler or to the application; true when it went to the
    /// application (it then counts for the backpressure on events).
    fn event(&mut self, event: ClientEvent) -> bool;
    /// Tells the caller behind `reply` what it hears: what its call returned, or its
    /// request's answer. A caller hears once.
    fn hear(&mut self, reply: Self::Reply, heard: Heard);
    /// Whether the caller behind `reply` stopped waiting before the loop took its call (a
    /// timeout, a dropped future): the call is then never made. By default, never.
    fn withdrawn(&self, _reply: &Self::Reply) -> bool {
        false
    }
    /// A host handler has finished (see [`Op::Finished`]).
    fn finished(&mut self, key: &RequestKey);
    /// The agent is to be stopped (it is killed after `grace`): close its stdin once what is
    /// queued for it is written, or at once, dropping the queue, when `grace` is zero (there
    /// is no time to write it). Nothing is queued after it. Every driver means this.
    fn close_stdin(&mut self, grace: Duration);
    /// The agent's exit status, once it has exited (asked until it has; [`Driven`] keeps it:
    /// [`Driven::exit_status`]).
    fn try_exit(&mut self) -> Result<Option<std::process::ExitStatus>, Self::Error>;
    /// How the driver learns of the exit. By default it is not told: [`ExitWatch::Asked`].
    fn exit_watch(&self) -> ExitWatch {
        ExitWatch::Asked
    }
}

/// A session's local files, the same for every driver and apart from its own I/O
/// ([`Plumbing`]): the transcript its recorder's lines are appended to, and the spill store
/// of host tool results (`musewire_store::SessionFiles` is the one implementation
/// with files). The core only hands them bytes; it opens nothing.
pub trait LocalFiles {
    /// Appends transcript bytes to the recording (called only when recording).
    fn record(&mut self, transcript: &[u8]) -> std::io::Result<()>;
    /// Saves a host tool result's text with the spill store (SPILL-03, SPILL-06); without a
    /// store, a failed save (SPILL-05: the result goes on unchanged).
    /// [`ClientConfig::spill`](musewire_core::client::ClientConfig::spill)'s `has_store` says whether the
    /// client asks at all.
    fn save(&mut self, write: &SpillWrite) -> Result<Saved, SaveFailure>;
}

/// No local files: nothing is appended, and a save fails as without a store (SPILL-05). For
/// a [`Driven`] whose driver takes the transcript from [`Driven::handle`] and writes it
/// itself (`musewire tap`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoFiles;

impl LocalFiles for NoFiles {
    fn record(&mut self, _transcript: &[u8]) -> std::io::Result<()> {
        Ok(())
    }

    fn save(&mut self, _write: &SpillWrite) -> Result<Saved, SaveFailure> {
        Err(SaveFailure::no_store())
    }
}

/// A client with its recorder, its session's files and waiting callers. `W` is whatever a
/// driver wakes a waiting caller with (a channel's sending end); `F`, where the session's
/// transcript and spilled results go ([`LocalFiles`]).
#[derive(Debug)]
pub struct Driven<W, F = NoFiles> {
    /// The session's core. Inputs go to it through `Driven`'s methods, which record them and
    /// route their answers to waiting callers; calling its `handle` directly would skip both.
    pub client: Client,
    recorder: Option<Recorder>,
    files: F,
    waiters: BTreeMap<RequestId, W>,
    /// When the agent is killed unless it has exited.
    kill_at: Option<Instant>,
    /// The agent's exit, once handed in, and when.
    exit: Option<std::process::ExitStatus>,
    exited_at: Option<Instant>,
    /// What the loop read and sent the application, and whether stdout is held back.
    backlog: Backlog,
    held: bool,
    /// Whether the agent's stdout has ended (its end was handed in).
    stdout_ended: bool,
    /// When the agent's exit was last asked for while its output was open, by a driver not
    /// told of it ([`ExitWatch::Asked`]).
    exit_checked: Option<Instant>,
}

impl<W, F: LocalFiles> Driven<W, F> {
    /// Bookkeeping around `client`, recording when `recorder` is given; [`Driven::input`]
    /// appends what it records to `files`, and saves spilled host tool results with them.
    pub fn new(client: Client, recorder: Option<Recorder>, files: F) -> Self {
        Driven {
            client,
            recorder,
            files,
            waiters: BTreeMap::new(),
            kill_at: None,
            exit: None,
            exited_at: None,
            backlog: Backlog::default(),
            held: false,
            stdout_ended: false,
            exit_checked: None,
        }
    }

    /// Hands `input` in and performs its work through `io`, in order, recording it when
    /// recording (appended to the session's files, which save its spill writes, each then
    /// answered as its own input). `waiter` as for [`Driven::handle`].
    pub fn input<P: Plumbing<Reply = W>>(
        &mut self,
        now: Instant,
        input: Input<'_>,
        waiter: impl FnOnce() -> Option<W>,
        io: &mut P,
    ) -> Result<CallResult, P::Error> {
        match &input {
            Input::Stdout(bytes) => self.backlog.read(bytes.len()),
            Input::StdoutEnd => self.stdout_ended = true,
            _ => {}
        }
        let mut sent = 0;
        let mut writes = Vec::new();
        let (result, recorded) = self.handle_with(now, input, waiter, |work| match work {
            Work::Write(bytes) => io.write(bytes),
            Work::StopAgent => io.kill(),
            Work::SpillWrite(id, write) => writes.push((id, write)),
            Work::Event(event) => sent += usize::from(io.event(event)),
            Work::Answer(waiter, answer) => io.hear(waiter, Heard::Answer(answer)),
        });
        for _ in 0..sent {
            self.backlog.sent();
        }
        if !recorded.is_empty() {
            self.files.record(&recorded)?;
        }
        // A save is answered once its input's work is done, as its own input (recorded so).
        let saved: Vec<_> = writes
            .into_iter()
            .map(|(id, write)| (id, self.files.save(&write)))
            .collect();
        for (id, saved) in saved {
            self.input(now, Input::SpillDone(id, saved), no_waiter::<W>, io)?;
        }
        Ok(result)
    }

    /// Performs an operation of the application's handle: a call (its caller hears, through
    /// [`Plumbing::hear`], what it returned, or its request's answer when it waits), a
    /// shutdown, or a handler's answer.
    pub fn op<P: Plumbing<Reply = W>>(
        &mut self,
        now: Instant,
        op: Op<P::Reply>,
        io: &mut P,
    ) -> Result<(), P::Error>
    where
        W: Clone,
    {
        match op {
            // A call its caller gave up before it was taken is not made.
            Op::Call { reply, .. } if io.withdrawn(&reply) => {}
            Op::Call { call, wait, reply } => {
                let waiter = wait.then(|| reply.clone());
                let result = self.input(now, Input::Call(call), || waiter, io)?;
                // A waited call that made its request hears the answer, on the same channel;
                // any other hears what the call returned (the clone it did not keep is
                // dropped).
                if !(wait && result.request().is_some()) {
                    io.hear(reply, Heard::Replied(result));
                }
            }
            Op::Shutdown { grace } => self.stop(now, grace, io),
            Op::Finished { key, call } => {
                io.finished(&key);
                if let Some(call) = call {
                    self.input(now, Input::Call(call), || None, io)?;
                }
            }
        }
        Ok(())
    }

    /// Stops the agent: its stdin is closed now, and it is killed after `grace` (the earliest
    /// of several stops).
    pub fn stop<P: Plumbing>(&mut self, now: Instant, grace: Duration, io: &mut P) {
        io.close_stdin(grace);
        let at = now + grace;
        self.kill_at = Some(self.kill_at.map_or(at, |t| t.min(at)));
    }

    /// Whether the agent is being stopped.
    pub fn is_stopping(&self) -> bool {
        self.kill_at.is_some()
    }

    /// Whether the agent's exit has been handed in.
    pub fn has_exited(&self) -> bool {
        self.exit.is_some()
    }

    /// The agent's exit status, once its exit has been handed in.
    pub fn exit_status(&self) -> Option<std::process::ExitStatus> {
        self.exit
    }

    /// Kills the agent when its time has come, and hands in its exit once it has exited;
    /// not while stdout is held back (CALL-07: all of stdout goes in before the exit),
    /// unless it is being stopped. A driver not told of the exit ([`ExitWatch::Asked`]) is
    /// asked for it at most every [`EXIT_CHECK_WHILE_OPEN`] while the agent's output is open
    /// and it is not being stopped.
    pub fn reap<P: Plumbing<Reply = W>>(
        &mut self,
        now: Instant,
        io: &mut P,
    ) -> Result<(), P::Error> {
        if self.exit.is_some() {
            return Ok(());
        }
        if self.kill_at.is_some_and(|t| now >= t) {
            io.kill();
        }
        if self.held && self.kill_at.is_none() {
            return Ok(());
        }
        if self.exit_asked_while_open() && io.exit_watch() == ExitWatch::Asked {
            if self
                .exit_checked
                .is_some_and(|at| now < at + EXIT_CHECK_WHILE_OPEN)
            {
                return Ok(());
            }
            self.exit_checked = Some(now);
        } else {
            self.exit_checked = None;
        }
        if let Some(status) = io.try_exit()? {
            self.exit = Some(status);
            self.exited_at = Some(now);
            self.input(now, Input::exit(exit_status(status)), || None, io)?;
        }
        Ok(())
    }

    /// Whether to stop reading stdout now (backpressure on events, see [`Backlog`]): never
    /// while the agent is being stopped. When it says so, the application's next take (or a
    /// caller starting to wait) makes [`Flow::unpause`] true: the driver is to be woken.
    pub fn hold_stdout(&mut self, flow: &Flow) -> bool {
        self.held = self.kill_at.is_none() && self.backlog.pause(flow);
        self.held
    }

    /// Whether the driver takes the application's next operation while `queued` bytes wait
    /// for the agent's stdin: only while they and the bytes the client holds until the agent
    /// is ready stay under [`WRITE_BACKLOG_BYTES`].
    pub fn takes_ops(&self, queued: usize) -> bool {
        queued.saturating_add(self.client.held_bytes()) < WRITE_BACKLOG_BYTES
    }

    /// Whether stdout was held back when [`Driven::hold_stdout`] was last asked.
    pub fn is_holding_stdout(&self) -> bool {
        self.held
    }

    /// Whether the agent exited [`OUTPUT_GRACE`] ago or more: its output, if still open, is
    /// no longer read, and the session ends.
    pub fn output_abandoned(&self, now: Instant) -> bool {
        self.exited_at.is_some_and(|at| now >= at + OUTPUT_GRACE)
    }

    /// When the loop is to wake next: the client's timer, and every [`REAP_TICK`] once stdout
    /// has ended (the driver's `Input::StdoutEnd`), the session has closed or the agent is
    /// being stopped; after the agent's exit, the end of its [`OUTPUT_GRACE`] instead of the
    /// ticks. While the output is open and read, the next time a driver not told of the exit
    /// ([`ExitWatch::Asked`]) asks for it.
    pub fn deadline(&self, now: Instant) -> Option<Instant> {
        let deadline = self.client.poll_timeout();
        if let Some(at) = self.exited_at {
            let grace = at + OUTPUT_GRACE;
            return Some(deadline.map_or(grace, |d| d.min(grace)));
        }
        if self.stdout_ended || self.client.is_closed() || self.kill_at.is_some() {
            let tick = now + REAP_TICK;
            return Some(deadline.map_or(tick, |d| d.min(tick)));
        }
        // The next time a driver not told of the exit asks for it; not while stdout is held
        // back, when it would not ask (the wake would find nothing to do, and the deadline,
        // passed, would wake the loop again at once): the application's next take wakes it.
        match self
            .exit_checked
            .filter(|_| self.exit_asked_while_open() && !self.held)
        {
            Some(at) => {
                let next = at + EXIT_CHECK_WHILE_OPEN;
                Some(deadline.map_or(next, |d| d.min(next)))
            }
            None => deadline,
        }
    }

    /// Whether the agent's output is open and it is not being stopped: a driver not told of
    /// its exit asks for it at most every [`EXIT_CHECK_WHILE_OPEN`].
    fn exit_asked_while_open(&self) -> bool {
        !self.stdout_ended && !self.client.is_closed() && self.kill_at.is_none()
    }

    /// Hands in the client's timer when it is due.
    pub fn timers<P: Plumbing<Reply = W>>(
        &mut self,
        now: Instant,
        io: &mut P,
    ) -> Result<(), P::Error> {
        if self.client.poll_timeout().is_some_and(|t| t <= now) {
            self.input(now, Input::Timeout, || None, io)?;
        }
        Ok(())
    }

    /// Hands `input` to the client, records it (when recording), and returns what a call
    /// returned, the transcript bytes to append to the recording file (empty when not
    /// recording), and the work to do, in order. When the input is a call that makes a
    /// request and `waiter` gives a waiter, the request's answer goes to it (as
    /// [`Work::Answer`]) instead of to the application as an event.
    pub fn handle(
        &mut self,
        now: Instant,
        input: Input<'_>,
        waiter: impl FnOnce() -> Option<W>,
    ) -> (CallResult, Vec<u8>, Vec<Work<W>>) {
        let mut work = Vec::new();
        let (result, recorded) = self.handle_with(now, input, waiter, |item| work.push(item));
        (result, recorded, work)
    }

    /// As [`Driven::handle`], handing each piece of work to `perform` as it comes, in order,
    /// rather than in a list: a driver's loop allocates nothing per input for it (nor for
    /// the client's actions, unless recording).
    pub fn handle_with(
        &mut self,
        now: Instant,
        input: Input<'_>,
        waiter: impl FnOnce() -> Option<W>,
        mut perform: impl FnMut(Work<W>),
    ) -> (CallResult, Vec<u8>) {
        // The client consumes the input; the recording needs it as it was (a borrowed read
        // is copied cheaply, a call is cloned).
        let recorded_input = self.recorder.is_some().then(|| input.clone());
        let result = self.client.handle(now, input);
        if let Some(id) = result.request() {
            if let Some(w) = waiter() {
                self.waiters.insert(id, w);
            }
        }
        let Some(input) = recorded_input else {
            while let Some(action) = self.client.poll_action() {
                perform(self.work(action));
            }
            return (result, Vec::new());
        };
        let actions: Vec<Action> = std::iter::from_fn(|| self.client.poll_action()).collect();
        let recorded = match &mut self.recorder {
            Some(recorder) => {
                recorder.step(now, &input, result.to_json(), &actions);
                recorder.take()
            }
            None => Vec::new(),
        };
        for action in actions {
            perform(self.work(action));
        }
        (result, recorded)
    }

    fn work(&mut self, action: Action) -> Work<W> {
        match action {
            Action::Write { bytes } => Work::Write(bytes),
            Action::StopAgent => Work::StopAgent,
            Action::SpillWrite { id, write } => Work::SpillWrite(id, write),
            Action::Event(event) => self.route(event),
        }
    }

    fn route(&mut self, event: ClientEvent) -> Work<W> {
        match event {
            ClientEvent::Response {
                request, outcome, ..
            } if self.waiters.contains_key(&request) => Work::Answer(
                self.waiters.remove(&request).expect("present"),
                outcome.map(Answered::Data),
            ),
            ClientEvent::History {
                request, outcome, ..
            } if self.waiters.contains_key(&request) => Work::Answer(
                self.waiters.remove(&request).expect("present"),
                outcome.map(Answered::History),
            ),
            other => Work::Event(other),
        }
    }
}

/// No waiter: one function (not a closure per call site), so that [`Driven::input`]
/// answering a save with another input instantiates itself once.
fn no_waiter<W>() -> Option<W> {
    None
}

/// The core's [`ExitStatus`] of a process's exit status: its code, or on Unix the signal
/// that ended it.
pub fn exit_status(status: std::process::ExitStatus) -> ExitStatus {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => ExitStatus::Code(code),
            (None, Some(signal)) => ExitStatus::Signal(signal),
            _ => ExitStatus::Unknown,
        }
    }
    #[cfg(not(unix))]
    {
        status.code().map_or(ExitStatus::Unknown, ExitStatus::Code)
    }
}
