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
//! use musewire_mio::{Agent, AgentEvent};
//! let mut command = std::process::Command::new("omp");
//! command.args(["--mode", "rpc"]);
//! let agent = Agent::spawn(command, Default::default())?;
//! let state = agent.call(serde_json::json!({"type": "get_state"}), Duration::from_secs(10))?;
//! println!("{state}");
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
use std::time::{Duration, Instant};

use musewire_core::client::{
    commands, Call, CallResult, ClientConfig, ClientError, ClientEvent, CommandFailure, RequestId,
};
use serde_json::{Map, Value};
use thiserror::Error;

pub use handlers::{HostToolCall, HostUriRequest, UiRequest, Updates};
pub use musewire_core::client::ClientEvent as AgentEvent;

/// Why a blocking call did not return the agent's answer.
#[derive(Debug, Error)]
pub enum CallError {
    /// The client refused the call (nothing was sent).
    #[error(transparent)]
    Refused(#[from] ClientError),
    /// The agent answered with a failure.
    #[error("{}", .0.error)]
    Failed(CommandFailure),
    /// No answer within the deadline. The request stays pending in the client.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The driver's thread is gone: the session has ended.
    #[error("the session has ended")]
    Ended,
}

/// One operation from the application to the loop thread.
pub(crate) enum Op {
    /// A call of the client; when `wait`, the answer to the request it makes goes to a waiter
    /// rather than the event channel.
    Call {
        call: Call,
        wait: bool,
        reply: mpsc::Sender<(CallResult, Option<Waiter>)>,
    },
    Shutdown {
        grace: Duration,
    },
    /// A handler has finished; its answer, if it has one, is made as a call.
    Finished {
        key: (musewire_core::client::HostRequestKind, String),
        call: Option<Call>,
    },
}

/// The answer to a waited request.
pub(crate) type Reply = Result<Value, CommandFailure>;

/// Where a blocked caller waits for its answer.
pub(crate) type Waiter = mpsc::Receiver<Reply>;

/// A running agent, driven by a loop thread. Dropping it kills the agent.
pub struct Agent {
    pid: u32,
    ops: mpsc::Sender<Op>,
    waker: std::sync::Arc<mio::Waker>,
    events: mpsc::Receiver<ClientEvent>,
    handlers: std::sync::Arc<std::sync::Mutex<handlers::Handlers>>,
    thread: Option<JoinHandle<io::Result<std::process::ExitStatus>>>,
}

impl Agent {
    /// Spawns `command` with piped stdio and starts driving it.
    pub fn spawn(command: Command, config: ClientConfig) -> io::Result<Agent> {
        Self::start(command, config, None)
    }

    /// As [`Agent::spawn`], and records the session as a conformance transcript at `path`
    /// while it runs (replaying it through the core gives the same actions).
    pub fn spawn_recorded(
        command: Command,
        config: ClientConfig,
        path: &std::path::Path,
    ) -> io::Result<Agent> {
        Self::start(command, config, Some(path))
    }

    fn start(
        command: Command,
        config: ClientConfig,
        record: Option<&std::path::Path>,
    ) -> io::Result<Agent> {
        let handlers = std::sync::Arc::default();
        let (pid, ops, events, waker, thread) =
            event_loop::start(command, config, record, std::sync::Arc::clone(&handlers))?;
        Ok(Agent {
            pid,
            ops,
            waker,
            events,
            handlers,
            thread: Some(thread),
        })
    }

    /// Runs `handler` on a worker thread for every host tool call to `name` (HOST-02),
    /// instead of handing the call to the application as an event: it may stream updates
    /// through its [`Updates`]; its `Ok` is sent as the result, its `Err` as a result with
    /// `isError`. When the agent cancels the call (HOST-03) [`Updates::is_cancelled`] turns
    /// true and whatever the handler returns is dropped; neither the call nor its
    /// cancellation reach the events. The tool itself is offered with `set_host_tools`.
    pub fn on_host_tool(
        &self,
        name: &str,
        handler: impl Fn(HostToolCall, Updates) -> Result<Value, Value> + Send + Sync + 'static,
    ) {
        self.lock_handlers()
            .tools
            .insert(name.into(), std::sync::Arc::new(handler));
    }

    /// Runs `handler` on a worker thread for every host URI request (HOST-05): what it
    /// returns is sent as the `host_uri_result` fields (`content`, `contentType`, `isError`,
    /// `error`, …). The schemes are registered with `set_host_uri_schemes` (HOST-04).
    pub fn on_host_uri(
        &self,
        handler: impl Fn(HostUriRequest) -> Map<String, Value> + Send + Sync + 'static,
    ) {
        self.lock_handlers().uri = Some(std::sync::Arc::new(handler));
    }

    /// Runs `handler` on a worker thread for every extension UI request (HOST-06), dialogs
    /// and notices alike: `Some(answer)` is sent as the `extension_ui_response`, `None` sends
    /// nothing (notices).
    pub fn on_ui(
        &self,
        handler: impl Fn(UiRequest) -> Option<Map<String, Value>> + Send + Sync + 'static,
    ) {
        self.lock_handlers().ui = Some(std::sync::Arc::new(handler));
    }

    fn lock_handlers(&self) -> std::sync::MutexGuard<'_, handlers::Handlers> {
        self.handlers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The agent process's id.
    pub fn id(&self) -> u32 {
        self.pid
    }

    fn op(&self, op: Op) -> Result<(), CallError> {
        self.ops.send(op).map_err(|_| CallError::Ended)?;
        self.waker.wake().map_err(|_| CallError::Ended)
    }

    /// Makes a call on the client; with `wait`, the answer to the request it makes is kept
    /// for the caller.
    fn call_client(
        &self,
        call: Call,
        wait: bool,
    ) -> Result<(CallResult, Option<Waiter>), CallError> {
        let (reply, answer) = mpsc::channel();
        self.op(Op::Call { call, wait, reply })?;
        answer.recv().map_err(|_| CallError::Ended)
    }

    fn request(&self, call: Call, timeout: Duration) -> Result<Value, CallError> {
        match self.call_client(call, true)? {
            (CallResult::Request(Err(e)), _) => Err(CallError::Refused(e)),
            (_, Some(waiter)) => wait(waiter, timeout),
            _ => Err(CallError::Ended),
        }
    }

    /// Sends a command and returns at once; its response arrives as an event.
    pub fn send(&self, command: Value) -> Result<RequestId, CallError> {
        match self.call_client(Call::Send(command), false)?.0 {
            CallResult::Request(sent) => Ok(sent?),
            _ => Err(CallError::Ended),
        }
    }

    /// Sends a command and waits up to `timeout` for its response's `data`.
    pub fn call(&self, command: Value, timeout: Duration) -> Result<Value, CallError> {
        self.request(Call::Send(command), timeout)
    }

    /// Sends a prompt and waits for its acknowledgement; the turn streams as events.
    pub fn prompt(&self, message: &str, timeout: Duration) -> Result<Value, CallError> {
        self.call(commands::prompt(message), timeout)
    }

    /// Runs a shell command in the agent (`bash`) and waits for its result.
    pub fn bash(&self, command: &str, timeout: Duration) -> Result<Value, CallError> {
        self.call(commands::bash(command), timeout)
    }

    /// Delivers a message into the current run (`steer`).
    pub fn steer(&self, message: &str, timeout: Duration) -> Result<Value, CallError> {
        self.call(commands::steer(message), timeout)
    }

    /// Queues a message for after the current run (`follow_up`).
    pub fn follow_up(&self, message: &str, timeout: Duration) -> Result<Value, CallError> {
        self.call(commands::follow_up(message), timeout)
    }

    /// Replaces the todo list (`set_todos {phases}`); the response holds the new list.
    pub fn set_todos(&self, phases: Value, timeout: Duration) -> Result<Value, CallError> {
        self.call(commands::set_todos(phases), timeout)
    }

    /// One page of the history (`get_messages_page`, PAGE-01..06): never falls back
    /// (PAGE-07); a stale cursor fails with code `stale_cursor`.
    pub fn messages_page(
        &self,
        cursor: Option<&str>,
        limit: Option<u32>,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        self.call(commands::messages_page(cursor, limit), timeout)
    }

    /// Aborts a running `bash` (CALL-05: sent at once, whatever is pending).
    pub fn abort_bash(&self, timeout: Duration) -> Result<Value, CallError> {
        self.call(commands::abort_bash(), timeout)
    }

    /// Aborts the agent's current run.
    pub fn abort(&self, timeout: Duration) -> Result<Value, CallError> {
        self.call(commands::abort(), timeout)
    }

    /// The agent's state (`get_state`).
    pub fn get_state(&self, timeout: Duration) -> Result<Value, CallError> {
        self.call(commands::get_state(), timeout)
    }

    /// Starts reading the whole history and returns at once: `HistoryProgress` events follow
    /// each page, and one `History` event ends it (PAGE-07).
    pub fn read_history(&self) -> Result<RequestId, CallError> {
        match self.call_client(Call::ReadHistory, false)?.0 {
            CallResult::Request(sent) => Ok(sent?),
            _ => Err(CallError::Ended),
        }
    }

    /// Reads the whole history (pages after v2, `get_messages` otherwise: PAGE-07).
    pub fn messages(&self, timeout: Duration) -> Result<Vec<Value>, CallError> {
        match self.request(Call::ReadHistory, timeout)? {
            Value::Array(messages) => Ok(messages),
            _ => Ok(Vec::new()),
        }
    }

    /// The next event, waiting up to `timeout`; `None` on timeout or when the session has
    /// ended and every event was taken.
    pub fn next_event(&self, timeout: Duration) -> Option<ClientEvent> {
        self.events.recv_timeout(timeout).ok()
    }

    /// Sends a partial result for a host tool call; false when the call is not open.
    pub fn host_tool_update(&self, id: &str, partial_result: Value) -> Result<bool, CallError> {
        self.answer(Call::HostToolUpdate(id.into(), partial_result))
    }

    /// Sends the result of a host tool call; false when the call is not open (HOST-03).
    pub fn host_tool_result(
        &self,
        id: &str,
        result: Value,
        is_error: bool,
    ) -> Result<bool, CallError> {
        self.answer(Call::HostToolResult(id.into(), result, is_error))
    }

    /// Answers a host URI request; false when it is not open.
    pub fn host_uri_result(&self, id: &str, fields: Map<String, Value>) -> Result<bool, CallError> {
        self.answer(Call::HostUriResult(id.into(), fields))
    }

    /// Answers an extension UI dialog; false when it is not open (answered, withdrawn, timed
    /// out).
    pub fn ui_respond(&self, id: &str, answer: Map<String, Value>) -> Result<bool, CallError> {
        self.answer(Call::UiRespond(id.into(), answer))
    }

    /// Writes `line` and a line feed to the agent unchecked, for tests and tools (see
    /// [`musewire_core::client::Client::send_raw_line`]); false once the session has closed.
    pub fn send_raw_line(&self, line: &[u8]) -> Result<bool, CallError> {
        self.answer(Call::RawLine(line.to_vec()))
    }

    fn answer(&self, call: Call) -> Result<bool, CallError> {
        Ok(matches!(
            self.call_client(call, false)?.0,
            CallResult::Sent(true)
        ))
    }

    /// Closes the agent's stdin, waits up to `grace` for it to exit, then kills it.
    pub fn shutdown(mut self, grace: Duration) -> io::Result<std::process::ExitStatus> {
        let _ = self.op(Op::Shutdown { grace });
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

impl Drop for Agent {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.op(Op::Shutdown {
                grace: Duration::ZERO,
            });
            let _ = self.join();
        }
    }
}

fn wait(waiter: mpsc::Receiver<Reply>, timeout: Duration) -> Result<Value, CallError> {
    let deadline = Instant::now() + timeout;
    match waiter.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(Ok(data)) => Ok(data),
        Ok(Err(failure)) => Err(CallError::Failed(failure)),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(CallError::Timeout(timeout)),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(CallError::Ended),
    }
}
