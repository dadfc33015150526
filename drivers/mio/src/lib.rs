//! # musewire-mio
//!
//! The blocking driver: spawns an agent (`<agent> --mode rpc`), runs a
//! [`musewire_core::client::Client`] on a mio poll loop over the child's non-blocking pipes in
//! a thread of its own, and offers the client's operations as blocking calls that any thread
//! may make. It holds no protocol rule: it reads, hands bytes in, performs the actions the
//! core asks for, and sleeps until the next readiness or the core's next timeout.
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

pub mod agent_stdio;
mod event_loop;
mod handlers;

use std::io;
use std::process::Command;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use musewire_core::client::{
    methods, Answer, Call, ClientConfig, ClientEvent, FetchError, FetchProgress, Fetched,
    FromAnswer, HandlerAnswer, HostToolAnswer, Op as CoreOp, OutputFetch, Replied, RequestId,
};
use musewire_core::wire::{HostToolCall, HostUriRequest, HostUriResult, UiRequest, UiResponse};

pub use handlers::Updates;
pub use musewire_core::client::CallError;

/// One operation from the application to the loop thread (the front end's [`CoreOp`]): a
/// call answers on a channel of its own.
pub(crate) type Op = CoreOp<mpsc::Sender<Replied<Waiter>>>;

/// The answer to a waited request.
pub(crate) type Reply = Answer;

/// Where a blocked caller waits for its answer.
pub(crate) type Waiter = mpsc::Receiver<Reply>;

/// How calls reach the loop thread, for the handle and the host handlers alike: the
/// operations channel and the waker of the loop.
#[derive(Clone)]
pub(crate) struct Caller {
    pub(crate) ops: mpsc::Sender<Op>,
    pub(crate) waker: std::sync::Arc<mio::Waker>,
}

impl Caller {
    /// Hands `op` to the loop and wakes it.
    pub(crate) fn op(&self, op: Op) -> Result<(), CallError> {
        self.ops.send(op).map_err(|_| CallError::Ended)?;
        self.waker.wake().map_err(|_| CallError::Ended)
    }

    /// Makes `call` on the client and returns what it returned (with the end its answer
    /// arrives on, when `wait`).
    pub(crate) fn call(&self, call: Call, wait: bool) -> Result<Replied<Waiter>, CallError> {
        let (reply, answer) = mpsc::channel();
        self.op(Op::Call { call, wait, reply })?;
        answer.recv().map_err(|_| CallError::Ended)
    }
}

/// A running agent, driven by a loop thread. Dropping it kills the agent.
///
/// `Send` and `Sync` (issue 13 item 2): one handle serves several threads at once, say one
/// making blocking calls while another takes events ([`AgentProcess::next_event`]); share
/// it by reference (`std::thread::scope`) or in an `Arc`.
pub struct AgentProcess {
    pid: u32,
    caller: Caller,
    /// Behind a lock, so that the handle is `Sync`: one thread takes events at a time.
    events: std::sync::Mutex<mpsc::Receiver<ClientEvent>>,
    handlers: std::sync::Arc<std::sync::Mutex<handlers::Registered>>,
    thread: Option<JoinHandle<io::Result<std::process::ExitStatus>>>,
    /// Backpressure on the events (issue 14, item 3).
    flow: std::sync::Arc<musewire_core::client::Flow>,
}

impl AgentProcess {
    /// Spawns `command` with piped stdio and starts driving it.
    pub fn spawn(command: Command, config: ClientConfig) -> io::Result<AgentProcess> {
        Self::start(command, config, None)
    }

    /// As [`AgentProcess::spawn`], and records the session as a conformance transcript at `path`
    /// while it runs (replaying it through the core gives the same actions).
    pub fn spawn_recorded(
        command: Command,
        config: ClientConfig,
        path: &std::path::Path,
    ) -> io::Result<AgentProcess> {
        Self::start(command, config, Some(path))
    }

    fn start(
        command: Command,
        config: ClientConfig,
        record: Option<&std::path::Path>,
    ) -> io::Result<AgentProcess> {
        let handlers = std::sync::Arc::default();
        let flow = std::sync::Arc::default();
        let (pid, caller, events, thread) = event_loop::start(
            command,
            config,
            record,
            std::sync::Arc::clone(&handlers),
            std::sync::Arc::clone(&flow),
        )?;
        Ok(AgentProcess {
            pid,
            caller,
            events: std::sync::Mutex::new(events),
            handlers,
            thread: Some(thread),
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
        let waiter = methods::awaited(self.caller.call(call, true)?)?;
        // A timeout too long to add to `now` waits as long as it takes (issue 14, item 7).
        let answer = match waiter.recv_timeout(timeout) {
            Ok(answer) => Some(answer),
            Err(mpsc::RecvTimeoutError::Timeout) => return Err(CallError::Timeout(timeout)),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
        };
        methods::typed_answer(answer)
    }

    /// A `send` row: makes the call and returns its request's id at once.
    fn send_call(&self, call: Call) -> Result<RequestId, CallError> {
        methods::sent_request(self.caller.call(call, false)?)
    }

    /// An `answer` row: whether the answer went out.
    fn answer(&self, call: Call) -> Result<bool, CallError> {
        Ok(methods::answer_sent(&self.caller.call(call, false)?))
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
        let events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        let event = events.recv_timeout(timeout).ok()?;
        drop(events);
        if self.flow.took() {
            let _ = self.caller.waker.wake();
        }
        Some(event)
    }

    /// Closes the agent's stdin, waits up to `grace` for it to exit, then kills it.
    pub fn shutdown(mut self, grace: Duration) -> io::Result<std::process::ExitStatus> {
        let _ = self.caller.op(Op::Shutdown { grace });
        self.join()
    }

    fn join(&mut self) -> io::Result<std::process::ExitStatus> {
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the driver thread panicked"))),
            None => Err(io::Error::other("already joined")),
        }
    }
}

const _: () = methods::send_and_sync::<AgentProcess>();

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.caller.op(Op::Shutdown {
                grace: Duration::ZERO,
            });
            let _ = self.join();
        }
    }
}

impl AgentProcess {
    musewire_core::driver_methods!(blocking);
}
