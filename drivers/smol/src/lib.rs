//! # musewire-smol
//!
//! The async driver: spawns an agent (`<agent> --mode rpc`) and runs a
//! [`musewire_core::client::Client`] in a task on smol's executor, offering its operations as
//! async methods and its events as a stream ([`Events`]). Like the blocking driver it holds
//! no protocol rule: it reads the agent's pipes, hands bytes in, performs the actions the
//! core asks for, and sleeps until the next input or the core's next timeout.
//!
//! # Bounded queues
//! Memory stays bounded whichever side is slow:
//! - **Events the application does not take.** Once the driver has read [`BACKLOG_BYTES`]
//!   (2 MiB) of the agent's stdout past the last event the application took, it stops
//!   reading stdout until an event is taken: the agent's pipe fills and the agent waits. A
//!   call's answer is never held behind them: while a caller awaits an answer (any method that
//!   returns the response's data, or [`AgentProcess::messages`]), the driver reads on, and
//!   the answer goes to the caller, not to the events. So awaiting a call without reading
//!   events never deadlocks; the events read meanwhile wait for the application.
//! - **Writes the agent does not take.** Once [`WRITE_BACKLOG_BYTES`] (1 MiB, counting lines
//!   held until the agent is ready) wait for the agent's stdin, the driver takes no more
//!   operations: a call then waits (its future is pending) until the agent reads, and at most
//!   [`OPS_QUEUE`] operations wait in the queue beyond that. When the agent ends, a waiting
//!   call fails with [`CallError::Ended`]. One operation's own bytes may go past the bound
//!   (a large prompt is written whole). While a call waits for room, the driver reads the
//!   agent's stdout on (as for a call awaiting its answer), so an agent that stops reading
//!   until its output is read cannot deadlock an application that is not reading events.
//! - The agent's stdout is read 64 KiB at a time; the core bounds a frame (FRAME-02).
//!
//! The blocking driver (`musewire-mio`) holds events back the same way.
//!
//! # Features
//! None is on by default; a host that only drives agents needs none.
//! - **`mcp`**: the `mcp_http` module, MCP over HTTP (hyper, TLS by rustls) for the core's
//!   MCP client (musewire-core's `mcp` feature).
//! - **`acp`** (turns on `mcp`): the `acp` module, the ACP server (the core's bridge on an
//!   editor's stdio, each session's agent and MCP servers its children), and
//!   `session_folder`, what it reads and writes of an agent's session folder (musewire-core's
//!   `acp` feature).
//!
//! ```no_run
//! use musewire_smol::AgentProcess;
//! smol::block_on(async {
//!     let mut command = std::process::Command::new("omp");
//!     command.args(["--mode", "rpc"]);
//!     let agent = AgentProcess::spawn(command, Default::default())?;
//!     let state = agent.get_state().await?;
//!     println!("{:?} messages", state.message_count);
//!     agent.shutdown(std::time::Duration::from_secs(2)).await?;
//!     Ok::<(), Box<dyn std::error::Error>>(())
//! })
//! # .unwrap();
//! ```

#![warn(missing_docs)]

#[cfg(feature = "acp")]
pub mod acp;
// The awaited exit (`AgentPipes::poll_exit`) serves the ACP server alone: the driver reaps by
// asking (`try_exit`).
#[cfg_attr(not(feature = "acp"), allow(dead_code))]
mod agent_pipes;
pub mod agent_stdio;
mod driver;
#[cfg(feature = "acp")]
mod edited_file;
#[cfg(feature = "acp")]
mod editor_stdio;
mod handlers;
#[cfg(feature = "acp")]
mod loop_wait;
#[cfg(feature = "mcp")]
pub mod mcp_http;
#[cfg(feature = "acp")]
mod orphans;
mod pipe;
mod reactor;
#[cfg(feature = "acp")]
pub mod session_folder;

use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use musewire_core::client::{
    Call, ClientConfig, ClientEvent, FetchError, FetchProgress, Fetched, OutputFetch, RequestId,
};
use musewire_host::{methods, Flow, HandlerAnswer, Heard, HostToolAnswer, Op as CoreOp, Waiting};
use musewire_wire::FromAnswer;
use musewire_wire::{HostToolCall, HostUriRequest, HostUriResult, UiRequest, UiResponse};
use smol::channel;
use smol::stream::Stream;

pub use agent_pipes::AgentCommand;
pub use driver::{OPS_QUEUE, WRITE_BACKLOG_BYTES};
pub use handlers::Updates;
pub use musewire_core::client::CallError;
pub use musewire_host::BACKLOG_BYTES;

/// Where a caller hears what its call returned, or its request's answer (one channel a call,
/// one wake: [`Heard`]).
pub(crate) type Reply = channel::Sender<Heard>;

/// One operation from the application to the driver task (the front end's [`CoreOp`]): a
/// call answers on a channel of its own.
pub(crate) type Op = CoreOp<Reply>;

/// How calls reach the driver task, for the handle and for the host tool handlers'
/// [`Updates`] alike: the bounded operations queue, and the flow and wake that keep the
/// driver reading the agent while a call waits (see the crate docs).
#[derive(Clone)]
pub(crate) struct Caller {
    pub(crate) ops: channel::Sender<Op>,
    pub(crate) flow: Arc<Flow>,
    /// Wakes the driver when it stopped reading stdout for the application.
    pub(crate) resume: channel::Sender<()>,
}

impl Caller {
    /// Until the guard drops the driver reads the agent's stdout on, whether or not events
    /// are taken: the agent may be stuck writing what the driver would otherwise hold back,
    /// and not read its stdin (nor answer) until that is read.
    fn waiting(&self) -> Waiting<'_> {
        let waiting = self.flow.waiting();
        if self.flow.unpause() {
            let _ = self.resume.try_send(());
        }
        waiting
    }

    /// Makes `call` on the client, waiting for room in the operations queue, and returns what
    /// its caller heard: what it returned, or (a `wait` call that made its request) the
    /// answer; `None` when the session ended first. While it waits the driver reads the
    /// agent on, whether or not events are taken, so that the answer arrives however many
    /// events wait.
    pub(crate) async fn call(&self, call: Call, wait: bool) -> Result<Option<Heard>, CallError> {
        let _waiting = self.waiting();
        let (reply, heard) = channel::bounded(1);
        let op = Op::Call { call, wait, reply };
        self.ops.send(op).await.map_err(|_| CallError::Ended)?;
        Ok(heard.recv().await.ok())
    }
}

/// A running agent, driven by a task. Dropping it stops the agent.
pub struct AgentProcess {
    pid: u32,
    caller: Caller,
    /// Dropping it stops the agent; [`AgentProcess::shutdown`] sends the grace on it.
    stop: channel::Sender<Duration>,
    events: Events,
    handlers: Arc<Mutex<handlers::Handlers>>,
    task: Option<smol::Task<io::Result<std::process::ExitStatus>>>,
}

impl AgentProcess {
    /// Spawns `command` with piped stdio and starts driving it on smol's global executor.
    ///
    /// A [`std::process::Command`] is started as the leader of a process group of its own,
    /// killed whole when the agent is stopped and once it has exited (CALL-11); a
    /// [`smol::process::Command`] is started as it is, in the host's group (see
    /// [`AgentCommand`]).
    pub fn spawn(
        command: impl Into<AgentCommand>,
        config: ClientConfig,
    ) -> io::Result<AgentProcess> {
        Self::start(command, config, None)
    }

    /// As [`AgentProcess::spawn`], and records the session as a conformance transcript at `path`
    /// while it runs (replaying it through the core gives the same actions).
    pub fn spawn_recorded(
        command: impl Into<AgentCommand>,
        config: ClientConfig,
        path: &std::path::Path,
    ) -> io::Result<AgentProcess> {
        Self::start(command, config, Some(path))
    }

    fn start(
        command: impl Into<AgentCommand>,
        config: ClientConfig,
        record: Option<&std::path::Path>,
    ) -> io::Result<AgentProcess> {
        let handlers = Arc::new(Mutex::new(handlers::Handlers::default()));
        let flow = Arc::new(Flow::default());
        let started = driver::start(command, config, record, handlers.clone(), flow.clone())?;
        Ok(AgentProcess {
            pid: started.pid,
            caller: Caller {
                ops: started.ops,
                flow: flow.clone(),
                resume: started.resume.clone(),
            },
            stop: started.stop,
            events: Events {
                events: Box::pin(started.events),
                flow,
                resume: started.resume,
            },
            handlers,
            task: Some(started.task),
        })
    }

    /// The agent process's id.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// A `wait` row of the core's method table: makes the call and awaits its request's
    /// answer, typed.
    async fn request<T: FromAnswer>(&self, call: Call) -> Result<T, CallError> {
        methods::heard(self.caller.call(call, true).await?)
    }

    /// A `send` row: makes the call and returns its request's id at once.
    async fn send_call(&self, call: Call) -> Result<RequestId, CallError> {
        methods::sent_request(self.caller.call(call, false).await?)
    }

    /// An `answer` row: whether the answer went out.
    async fn answer(&self, call: Call) -> Result<bool, CallError> {
        methods::answer_sent(self.caller.call(call, false).await?)
    }

    /// Fetches a whole stored output (OUT-04, OUT-10) page by page: each page's bytes go to
    /// `sink` with the progress as they come (the output is never held whole). The walk and
    /// its checks are the core's ([`OutputFetch`]). Call it once the session is ready (the
    /// `Ready` event, or after any answered call).
    pub async fn fetch_output<S>(
        &self,
        mut fetch: OutputFetch,
        sink: &mut S,
    ) -> Result<Fetched, FetchError>
    where
        S: FnMut(&[u8], FetchProgress) -> io::Result<()> + ?Sized,
    {
        while let Some(call) = fetch.next_call() {
            fetch.page(self.request(call).await, sink)?;
        }
        Ok(fetch.finish())
    }

    /// The next event; `None` once the session has ended and every event was taken. While
    /// events are not taken the driver stops reading the agent past [`BACKLOG_BYTES`] (see
    /// the crate docs).
    pub async fn next_event(&self) -> Option<ClientEvent> {
        self.events.recv().await
    }

    /// The events as a stream, to take from another task ([`Events`]).
    pub fn events(&self) -> Events {
        self.events.clone()
    }

    /// Runs `handler` for every host tool call to `name` (HOST-02), instead of handing the
    /// call to the application as an event: the driver spawns the handler, which may stream
    /// updates through its [`Updates`]; its [`HostToolAnswer`] is sent as the result (with `isError` when it rejects the call)
    /// with `isError`. When the agent cancels the call (HOST-03) the handler is dropped and
    /// nothing is sent; neither the call nor its cancellation reach the events. The tool
    /// itself is offered to the agent with `set_host_tools` (HOST-01).
    pub fn on_host_tool<F, Fut>(&self, name: &str, handler: F)
    where
        F: Fn(HostToolCall, Updates) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HostToolAnswer> + Send + 'static,
    {
        self.lock_handlers().set_tool(
            name,
            Arc::new(move |call, updates| {
                let running = handler(call, updates);
                Box::pin(async move { HandlerAnswer::Tool(running.await) })
            }),
        );
    }

    /// Runs `handler` for every host URI request (HOST-05), instead of handing it to the
    /// application: what it returns is sent as the `host_uri_result` fields (`content`,
    /// `contentType`, `isError`, `error`, …). A withdrawn request drops the handler. The
    /// schemes are registered with `set_host_uri_schemes` (HOST-04).
    pub fn on_host_uri<F, Fut>(&self, handler: F)
    where
        F: Fn(HostUriRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HostUriResult> + Send + 'static,
    {
        self.lock_handlers().set_uri(Arc::new(move |request| {
            let running = handler(request);
            Box::pin(async move { HandlerAnswer::Uri(running.await) })
        }));
    }

    /// Runs `handler` for every extension UI request (HOST-06), dialogs and notices alike,
    /// instead of handing it to the application: `Some(answer)` is sent as the
    /// `extension_ui_response` (`{value}`, `{confirmed}`, `{cancelled: true}`), `None` sends
    /// nothing (notices). A dialog withdrawn or timed out drops the handler.
    pub fn on_ui<F, Fut>(&self, handler: F)
    where
        F: Fn(UiRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<UiResponse>> + Send + 'static,
    {
        self.lock_handlers().set_ui(Arc::new(move |request| {
            let running = handler(request);
            Box::pin(async move { HandlerAnswer::Ui(running.await) })
        }));
    }

    fn lock_handlers(&self) -> std::sync::MutexGuard<'_, handlers::Handlers> {
        self.handlers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Closes the agent's stdin, waits up to `grace` for it to exit, then kills it.
    pub async fn shutdown(mut self, grace: Duration) -> io::Result<std::process::ExitStatus> {
        let _ = self.stop.send(grace).await;
        match self.task.take() {
            Some(task) => task.await,
            None => Err(io::Error::other("already shut down")),
        }
    }
}

const _: () = methods::send_and_sync::<AgentProcess>();

impl Drop for AgentProcess {
    /// The agent is stopped at once: the driver sees its stop channel close.
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.detach();
        }
    }
}

/// The events of an agent (see [`AgentProcess::events`]): a stream, cloned to take events
/// from several tasks. Each event taken counts for the backpressure on events.
pub struct Events {
    // Pinned for the stream's sake: a receiver is not `Unpin`.
    events: std::pin::Pin<Box<channel::Receiver<ClientEvent>>>,
    flow: Arc<Flow>,
    resume: channel::Sender<()>,
}

impl Clone for Events {
    fn clone(&self) -> Self {
        Events {
            events: Box::pin(self.events.as_ref().get_ref().clone()),
            flow: self.flow.clone(),
            resume: self.resume.clone(),
        }
    }
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events")
            .field("queued", &self.events.len())
            .finish_non_exhaustive()
    }
}

impl Events {
    /// The next event; `None` once the session has ended and every event was taken.
    pub async fn recv(&self) -> Option<ClientEvent> {
        let event = self.events.recv().await.ok()?;
        self.took();
        Some(event)
    }

    /// How many events wait to be taken.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether no event waits.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    fn took(&self) {
        if self.flow.took() {
            let _ = self.resume.try_send(());
        }
    }
}

impl Stream for Events {
    type Item = ClientEvent;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<ClientEvent>> {
        let this = self.get_mut();
        let next = this.events.as_mut().poll_next(cx);
        if let std::task::Poll::Ready(Some(_)) = &next {
            this.took();
        }
        next
    }
}

impl AgentProcess {
    musewire_host::driver_methods!(async);
}

/// The host kit's handle trait, async flavour: code written over an `AsyncHandle` drives
/// this driver's agents as it does the blocking driver's.
impl musewire_host::AsyncHandle for AgentProcess {
    fn id(&self) -> u32 {
        AgentProcess::id(self)
    }

    fn answered(
        &self,
        call: Call,
    ) -> impl Future<Output = Result<musewire_wire::Answered, CallError>> + Send {
        self.request(call)
    }

    fn send_call(&self, call: Call) -> impl Future<Output = Result<RequestId, CallError>> + Send {
        AgentProcess::send_call(self, call)
    }

    fn answer(&self, call: Call) -> impl Future<Output = Result<bool, CallError>> + Send {
        AgentProcess::answer(self, call)
    }

    fn next_event(&self) -> impl Future<Output = Option<ClientEvent>> + Send {
        AgentProcess::next_event(self)
    }
}
