//! # musewire-mio
//!
//! The blocking driver: spawns an agent (`<agent> --mode rpc`), runs a
//! [`musewire_core::client::Client`] on a mio poll loop over the child's non-blocking pipes,
//! and offers the client's operations as blocking calls that any thread may make. It holds no
//! protocol rule: it reads, hands bytes in, performs the actions the core asks for, and sleeps
//! until the next readiness or the core's next timeout.
//!
//! A [`Reactor`] drives many agents on one thread, one poll over all their pipes
//! ([`Reactor::spawn`]); [`AgentProcess::spawn`] gives the same handle, its agent on the
//! process's shared reactor (one loop thread for every agent spawned so, while any runs). Calls block their caller, or are made now and taken later
//! ([`AgentProcess::submit`], [`AgentProcess::submit_to`] with a [`Completions`] queue), so
//! one application thread can keep calls open on many agents at once.
//!
//! # Bounded queues
//! - **Events the application does not take.** Once the loop has read
//!   [`BACKLOG_BYTES`] (2 MiB) of the agent's stdout past
//!   the last event taken, it stops reading that agent's stdout until an event is taken (the
//!   agent's pipe fills and it waits), except while a caller waits for an answer.
//! - **Writes the agent does not take.** Once [`WRITE_BACKLOG_BYTES`] (1 MiB, counting lines
//!   held until the agent is ready) wait for the agent's stdin, the loop takes no more of that
//!   agent's operations ([`Driven::takes_ops`](musewire_host::Driven::takes_ops)); at
//!   most [`OPS_QUEUE`] more wait in its queue, and a call beyond them blocks until the agent
//!   reads (or fails with [`CallError::Ended`] when it ends). A call with a timeout waits so
//!   no longer than its timeout: it fails with [`CallError::Timeout`], and a call the loop
//!   had not yet taken is then never made (the time waiting for the loop counts in the
//!   timeout, as the time waiting for the answer does). While a call blocks so, the loop
//!   reads the agent's stdout on (as for a caller waiting for an answer), so an agent that
//!   stops reading until its output is read cannot deadlock. One operation's own bytes may go
//!   past the bound. A stop ([`AgentProcess::shutdown`], or dropping the handle) never waits
//!   for room.
//!
//! ```no_run
//! use std::time::Duration;
//! use musewire_mio::AgentProcess;
//! let mut command = std::process::Command::new("omp");
//! command.args(["--mode", "rpc"]);
//! let agent = AgentProcess::spawn(command, Default::default())?;
//! let state = agent.get_state(Duration::from_secs(10))?;
//! println!("{:?}", state.model);
//! agent.shutdown(Duration::from_secs(2))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod agent_stdio;
mod event_loop;
mod handlers;
mod oneshot;
mod pending;
mod reactor;

use std::collections::VecDeque;
use std::io;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use musewire_core::client::{
    Call, ClientConfig, ClientEvent, FetchError, FetchProgress, Fetched, OutputFetch, RequestId,
};
use musewire_host::{methods, Flow, HandlerAnswer, Heard, HostToolAnswer, Op as CoreOp};
use musewire_wire::FromAnswer;
use musewire_wire::{HostToolCall, HostUriRequest, HostUriResult, UiRequest, UiResponse};

pub use handlers::Updates;
pub use musewire_core::client::CallError;
pub use musewire_host::{BACKLOG_BYTES, WRITE_BACKLOG_BYTES};
pub use pending::{Completions, Pending};
pub use reactor::Reactor;

/// How many operations may wait for an agent's loop beyond what it takes; a call waits for
/// room beyond them (see the crate docs).
pub const OPS_QUEUE: usize = 8;

/// One operation from the application to the loop thread (the front end's [`CoreOp`]): a
/// call answers on a channel of its own.
pub(crate) type Op = CoreOp<Reply>;

/// Where a blocked caller hears what its call returned, or its request's answer (one channel a
/// call, one wake: [`Heard`]).
pub(crate) type Reply = oneshot::Sender<Heard>;

/// How calls reach the loop thread, for the handle and the host handlers alike: the agent's
/// bounded operations queue, its link to the reactor (its wake), and the flow that keeps the
/// loop reading while a call waits.
#[derive(Clone)]
pub(crate) struct Caller {
    pub(crate) ops: mpsc::SyncSender<Op>,
    pub(crate) link: Arc<reactor::Link>,
    pub(crate) flow: Arc<Flow>,
    /// Where a caller waits for room in a full queue (see [`Room`]).
    pub(crate) room: Arc<Room>,
}

/// Room in an agent's operations queue, for callers that wait for it: the loop says when it
/// took operations while a caller waits ([`Room::made`]), so a call waits for room no longer
/// than its timeout.
#[derive(Default)]
pub(crate) struct Room {
    /// Callers waiting for room.
    wanted: AtomicUsize,
    lock: Mutex<()>,
    freed: Condvar,
}

/// A caller waiting for room looks at the queue again at least this often, whatever it is
/// told: so it also hears that the agent ended (the queue's other end gone) without a word
/// from the loop.
const ROOM_LOOK: Duration = Duration::from_millis(50);

impl Room {
    /// The loop took operations from the queue: wakes the callers waiting for room, if any
    /// (one atomic load when none waits).
    pub(crate) fn made(&self) {
        if self.wanted.load(SeqCst) > 0 {
            let _lock = reactor::lock(&self.lock);
            self.freed.notify_all();
        }
    }

    /// Sends `op` on `ops`, waiting for room until `deadline` (`None`: as long as it takes);
    /// when it cannot, the operation is dropped unsent and the error says why.
    fn send(
        &self,
        ops: &mpsc::SyncSender<Op>,
        mut op: Op,
        deadline: Option<(Instant, Duration)>,
    ) -> Result<(), CallError> {
        self.wanted.fetch_add(1, SeqCst);
        let _wanted = Wanted(&self.wanted);
        let mut guard = reactor::lock(&self.lock);
        loop {
            // Tried under the lock: the loop wakes waiters under it, so no wake is missed
            // between a full queue and the wait.
            op = match ops.try_send(op) {
                Ok(()) => return Ok(()),
                Err(mpsc::TrySendError::Disconnected(_)) => return Err(CallError::Ended),
                Err(mpsc::TrySendError::Full(op)) => op,
            };
            let look = match deadline {
                None => ROOM_LOOK,
                Some((at, _)) => match at.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => left.min(ROOM_LOOK),
                    _ => return Err(timed_out(deadline)),
                },
            };
            guard = match self.freed.wait_timeout(guard, look) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

/// Counts a caller out of [`Room::wanted`] however it leaves.
struct Wanted<'a>(&'a AtomicUsize);

impl Drop for Wanted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

impl Caller {
    /// Hands `op` to the loop and wakes it for this agent. When the queue is full (the agent
    /// does not read its stdin: see the crate docs) it waits for room until `deadline`
    /// (`None`: as long as it takes), the loop reading the agent's stdout on meanwhile; past
    /// the deadline the operation is dropped unsent and the call fails with
    /// [`CallError::Timeout`] of `timeout`.
    pub(crate) fn op(
        &self,
        op: Op,
        deadline: Option<(Instant, Duration)>,
    ) -> Result<(), CallError> {
        let op = match self.ops.try_send(op) {
            Ok(()) => {
                self.link.wake();
                return Ok(());
            }
            Err(mpsc::TrySendError::Disconnected(_)) => return Err(CallError::Ended),
            Err(mpsc::TrySendError::Full(op)) => op,
        };
        let _waiting = self.flow.waiting();
        if self.flow.unpause() {
            self.link.wake();
        }
        let sent = self.room.send(&self.ops, op, deadline);
        self.link.wake();
        sent
    }

    /// Makes `call` on the client and returns what its caller heard: what it returned, or (a
    /// `wait` call that made its request) the answer; `None` when the session ended first.
    ///
    /// A call given a `deadline` (the instant and the timeout it came from) waits for room
    /// in a full queue, then for the loop to take it, then for what it hears, no longer than
    /// that ([`Caller::op`]); a call the loop had not taken by then is never made.
    pub(crate) fn call(
        &self,
        call: Call,
        wait: bool,
        deadline: Option<(Instant, Duration)>,
    ) -> Result<Option<Heard>, CallError> {
        let (reply, heard) = oneshot::reused();
        self.op(Op::Call { call, wait, reply }, deadline)?;
        let heard_until = hear_until(&heard, deadline);
        // Letting go of `heard` on a timeout withdraws the call (`Plumbing::withdrawn`); its
        // slot serves this thread's next call once the loop has let go of it too.
        heard.recycle();
        heard_until
    }
}

/// What a caller hears on `heard` by `deadline` (`None`: as long as it takes): `None` when
/// the channel closed unsent, [`CallError::Timeout`] when the deadline passed first.
fn hear_until(
    heard: &oneshot::Receiver<Heard>,
    deadline: Option<(Instant, Duration)>,
) -> Result<Option<Heard>, CallError> {
    match heard.recv_until(deadline.map(|(at, _)| at)) {
        Ok(heard) => Ok(Some(heard)),
        Err(oneshot::RecvError::Closed) => Ok(None),
        Err(oneshot::RecvError::Timeout) => Err(timed_out(deadline)),
    }
}

/// The deadline of a call made now with `timeout`; `None` (as long as it takes) when it is too
/// long to add to now (a timeout too large for the clock means no timeout, never a panic).
fn deadline(timeout: Duration) -> Option<(Instant, Duration)> {
    Some((Instant::now().checked_add(timeout)?, timeout))
}

/// The error of a call whose `deadline` passed.
fn timed_out(deadline: Option<(Instant, Duration)>) -> CallError {
    CallError::Timeout(deadline.map_or(Duration::MAX, |(_, timeout)| timeout))
}

/// The reactor [`AgentProcess::spawn`] starts agents on, while any of them holds it.
static SHARED: Mutex<std::sync::Weak<Reactor>> = Mutex::new(std::sync::Weak::new());

/// The shared reactor: the one its agents hold, or a new one when none does.
fn shared_reactor() -> io::Result<Arc<Reactor>> {
    let mut slot = reactor::lock(&SHARED);
    if let Some(reactor) = slot.upgrade() {
        return Ok(reactor);
    }
    let reactor = Arc::new(Reactor::new()?);
    *slot = Arc::downgrade(&reactor);
    Ok(reactor)
}

/// A running agent, driven by a reactor's loop thread: the process's shared one
/// ([`AgentProcess::spawn`]) or one the application made ([`Reactor::spawn`]), the same
/// either way. Dropping
/// it kills the agent (and waits for its exit).
///
/// `Send` and `Sync`: one handle serves several threads at once, say one making blocking calls
/// while another takes events ([`AgentProcess::next_event`]); share it by reference
/// (`std::thread::scope`) or in an `Arc`.
pub struct AgentProcess {
    pid: u32,
    caller: Caller,
    /// Behind a lock, so that the handle is `Sync`: one thread takes events at a time.
    events: Mutex<Events>,
    handlers: Arc<Mutex<handlers::Registered>>,
    /// Where the agent's end is heard (its exit status, or the error that ended it); `None`
    /// once heard.
    ended: Option<Mutex<mpsc::Receiver<reactor::Done>>>,
    /// The shared reactor, when spawned by [`AgentProcess::spawn`]: its thread ends with the
    /// last agent spawned so.
    own: Option<Arc<Reactor>>,
    /// Backpressure on the events: what the application has taken.
    flow: Arc<Flow>,
}

impl AgentProcess {
    /// Spawns `command` with piped stdio and starts driving it on the process's shared
    /// [`Reactor`]: one loop thread for every agent spawned so, started with the first and
    /// ended after the last (a host holding many agents has no I/O thread per agent).
    ///
    /// The agent leads a process group of its own, killed whole when the agent is stopped
    /// and once it has exited (CALL-11); a group set on `command` is replaced.
    pub fn spawn(command: Command, config: ClientConfig) -> io::Result<AgentProcess> {
        Self::alone(command, config, None)
    }

    /// As [`AgentProcess::spawn`], and records the session as a conformance transcript at `path`
    /// while it runs (replaying it through the core gives the same actions).
    pub fn spawn_recorded(
        command: Command,
        config: ClientConfig,
        path: &std::path::Path,
    ) -> io::Result<AgentProcess> {
        Self::alone(command, config, Some(path))
    }

    /// Starts the agent on the shared reactor.
    fn alone(
        command: Command,
        config: ClientConfig,
        record: Option<&std::path::Path>,
    ) -> io::Result<AgentProcess> {
        let reactor = shared_reactor()?;
        let mut agent = Self::start(&reactor, command, config, record)?;
        agent.own = Some(reactor);
        Ok(agent)
    }

    /// Starts the agent on `reactor`.
    fn start(
        reactor: &Reactor,
        command: Command,
        config: ClientConfig,
        record: Option<&std::path::Path>,
    ) -> io::Result<AgentProcess> {
        let handlers = Arc::default();
        let flow = Arc::default();
        let started = reactor.add(|link, registry| {
            event_loop::prepare(
                command,
                config,
                record,
                Arc::clone(&handlers),
                Arc::clone(&flow),
                link,
                registry,
            )
        })?;
        Ok(AgentProcess {
            pid: started.pid,
            caller: started.caller,
            events: Mutex::new(Events {
                batches: started.events,
                ready: VecDeque::new(),
            }),
            handlers,
            ended: Some(Mutex::new(started.ended)),
            own: None,
            flow,
        })
    }

    /// Runs `handler` on a worker thread for every host tool call to `name` (HOST-02),
    /// instead of handing the call to the application as an event: it may stream updates
    /// through its [`Updates`]; its [`HostToolAnswer`] is sent as the result (with `isError`
    /// when it rejects the call). When the agent cancels the call (HOST-03) [`Updates::is_cancelled`] turns
    /// true and whatever the handler returns is dropped; neither the call nor its
    /// cancellation reach the events. The tool itself is offered with `set_host_tools`.
    pub fn on_host_tool(
        &self,
        name: &str,
        handler: impl Fn(HostToolCall, Updates) -> HostToolAnswer + Send + Sync + 'static,
    ) {
        self.lock_handlers().set_tool(
            name,
            std::sync::Arc::new(move |call, updates| HandlerAnswer::Tool(handler(call, updates))),
        );
    }

    /// Runs `handler` on a worker thread for every host URI request (HOST-05): what it
    /// returns is sent as the `host_uri_result` fields (`content`, `contentType`, `isError`,
    /// `error`, …). The schemes are registered with `set_host_uri_schemes` (HOST-04).
    pub fn on_host_uri(
        &self,
        handler: impl Fn(HostUriRequest) -> HostUriResult + Send + Sync + 'static,
    ) {
        self.lock_handlers()
            .set_uri(std::sync::Arc::new(move |request| {
                HandlerAnswer::Uri(handler(request))
            }));
    }

    /// Runs `handler` on a worker thread for every extension UI request (HOST-06), dialogs
    /// and notices alike: `Some(answer)` is sent as the `extension_ui_response`, `None` sends
    /// nothing (notices).
    pub fn on_ui(&self, handler: impl Fn(UiRequest) -> Option<UiResponse> + Send + Sync + 'static) {
        self.lock_handlers()
            .set_ui(std::sync::Arc::new(move |request| {
                HandlerAnswer::Ui(handler(request))
            }));
    }

    fn lock_handlers(&self) -> std::sync::MutexGuard<'_, handlers::Registered> {
        self.handlers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The agent process's id.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// A `wait` row of the core's method table: makes the call and waits up to `timeout` for
    /// its request's answer, typed.
    fn request<T: FromAnswer>(&self, call: Call, timeout: Duration) -> Result<T, CallError> {
        // While the caller waits, the loop reads on whether or not events are taken.
        let _waiting = self.flow.waiting();
        methods::heard(self.caller.call(call, true, deadline(timeout))?)
    }

    /// Makes `call` now and returns at once: its answer, typed as `T` (the type its row of the
    /// method table gives, say `SessionState` for `GetState`), is taken later from
    /// the [`Pending`] (so one thread can keep calls open on many agents). For calls that make
    /// a request and wait for its answer (the `wait` rows); a call that makes none (an answer
    /// to a host request, say) is taken as [`CallError::Ended`]. Blocks only while the agent's
    /// operations queue is full (see the crate docs).
    pub fn submit<T: FromAnswer>(&self, call: Call) -> Result<Pending<T>, CallError> {
        self.submit_notifying(call, None)
    }

    /// As [`AgentProcess::submit`], and puts `tag` on `completions` once the answer can be
    /// taken, or the session ended without one (see [`Completions`]). A call that fails
    /// here, or whose [`Pending`] is dropped before its answer came, puts no tag there.
    pub fn submit_to<T: FromAnswer>(
        &self,
        call: Call,
        completions: &Completions,
        tag: u64,
    ) -> Result<Pending<T>, CallError> {
        self.submit_notifying(call, Some(completions.notify(tag)))
    }

    fn submit_notifying<T: FromAnswer>(
        &self,
        call: Call,
        notify: Option<(Arc<pending::Tags>, u64)>,
    ) -> Result<Pending<T>, CallError> {
        // Counted as a blocked caller until the answer comes: the loop reads on for it.
        let waiting = self.flow.waiting_owned();
        let (reply, heard) = oneshot::reused();
        self.caller.op(
            Op::Call {
                call,
                wait: true,
                reply,
            },
            None,
        )?;
        // Only a call made is told of (and an answer already there is told of at once).
        heard.on_settled(waiting, notify);
        Ok(Pending::new(heard))
    }

    /// A `send` row: makes the call and returns its request's id at once.
    fn send_call(&self, call: Call) -> Result<RequestId, CallError> {
        methods::sent_request(self.caller.call(call, false, None)?)
    }

    /// An `answer` row: whether the answer went out.
    fn answer(&self, call: Call) -> Result<bool, CallError> {
        methods::answer_sent(self.caller.call(call, false, None)?)
    }

    /// Fetches a whole stored output (OUT-04, OUT-10) page by page, each page waiting up to
    /// `timeout`: each page's bytes go to `sink` with the progress as they come (the output is
    /// never held whole). The walk and its checks are the core's ([`OutputFetch`]). Call it
    /// once the session is ready (the `Ready` event, or after any answered call).
    pub fn fetch_output<S>(
        &self,
        mut fetch: OutputFetch,
        sink: &mut S,
        timeout: Duration,
    ) -> Result<Fetched, FetchError>
    where
        S: FnMut(&[u8], FetchProgress) -> io::Result<()> + ?Sized,
    {
        while let Some(call) = fetch.next_call() {
            fetch.page(self.request(call, timeout), sink)?;
        }
        Ok(fetch.finish())
    }

    /// The next event, waiting up to `timeout`; `None` on timeout or when the session has
    /// ended and every event was taken.
    ///
    /// Events not taken hold the agent back: once a couple of MiB of its output wait behind
    /// them, the driver stops reading it until the application takes events again (its pipe
    /// fills and it waits), except while a blocking call waits for its answer.
    ///
    /// Threads that take events at once take them in turn: each waits for the others' takes
    /// before its own `timeout` starts.
    pub fn next_event(&self, timeout: Duration) -> Option<ClientEvent> {
        let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        let event = events.next(timeout)?;
        drop(events);
        if self.flow.took() {
            self.caller.link.wake();
        }
        Some(event)
    }

    /// Closes the agent's stdin, waits up to `grace` for it to exit, then kills it.
    pub fn shutdown(mut self, grace: Duration) -> io::Result<std::process::ExitStatus> {
        self.caller.link.stop(grace);
        self.join()
    }

    /// Waits for the agent to be done (and, the last on the shared reactor, for its thread
    /// to end).
    fn join(&mut self) -> io::Result<std::process::ExitStatus> {
        let status = match self.ended.take() {
            Some(ended) => ended
                .into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .recv()
                .unwrap_or_else(|_| Err(io::Error::other("the driver thread ended"))),
            None => Err(io::Error::other("already joined")),
        };
        if let Some(reactor) = self.own.take().and_then(Arc::into_inner) {
            reactor.join();
        }
        status
    }
}

/// The events the loop handed over for the application: in batches (one a read of the
/// agent's output, so a thread waiting for events wakes once a batch), taken one by one.
struct Events {
    batches: mpsc::Receiver<Vec<ClientEvent>>,
    /// The rest of the last batch, in order.
    ready: VecDeque<ClientEvent>,
}

impl Events {
    /// The next event, waiting up to `timeout` for a batch when none is left.
    fn next(&mut self, timeout: Duration) -> Option<ClientEvent> {
        if let Some(event) = self.ready.pop_front() {
            return Some(event);
        }
        let mut batch = self.batches.recv_timeout(timeout).ok()?.into_iter();
        let event = batch.next();
        self.ready.extend(batch);
        event
    }
}

const _: () = methods::send_and_sync::<AgentProcess>();

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if self.ended.is_some() {
            self.caller.link.stop(Duration::ZERO);
            let _ = self.join();
        }
    }
}

impl AgentProcess {
    musewire_host::driver_methods!(blocking);
}

/// The host kit's handle trait, blocking flavour: code written over `&dyn BlockingHandle`
/// drives this driver's agents as it does the async driver's.
impl musewire_host::BlockingHandle for AgentProcess {
    fn id(&self) -> u32 {
        AgentProcess::id(self)
    }

    fn answered(
        &self,
        call: Call,
        timeout: Duration,
    ) -> Result<musewire_wire::Answered, CallError> {
        self.request(call, timeout)
    }

    fn send_call(&self, call: Call) -> Result<RequestId, CallError> {
        AgentProcess::send_call(self, call)
    }

    fn answer(&self, call: Call) -> Result<bool, CallError> {
        AgentProcess::answer(self, call)
    }

    fn next_event(&self, timeout: Duration) -> Option<ClientEvent> {
        AgentProcess::next_event(self, timeout)
    }
}
