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
    commands, Answer, Call, CallResult, ClientConfig, ClientEvent, FetchError, FetchProgress,
    Fetched, FromAnswer, HostToolAnswer, Op as CoreOp, OutputFetch, Replied, RequestId,
};
use musewire_core::output::{ReadParams, ReadResult};
use musewire_core::wire::{
    AgentMessage, BashData, Command as WireCommand, HostToolCall, HostToolDefinition,
    HostUriRequest, HostUriResult, HostUriSchemeDefinition, MessagesPageData, PromptData,
    ResponseData, SessionState, TodosData, ToolResult, UiRequest, UiResponse,
};
use serde_json::Value;

pub use handlers::Updates;
pub use musewire_core::client::CallError;

/// One operation from the application to the loop thread (the front end's [`CoreOp`]): a
/// call answers on a channel of its own.
pub(crate) type Op = CoreOp<mpsc::Sender<Replied<Waiter>>>;

/// The answer to a waited request.
pub(crate) type Reply = Answer;

/// Where a blocked caller waits for its answer.
pub(crate) type Waiter = mpsc::Receiver<Reply>;

/// A running agent, driven by a loop thread. Dropping it kills the agent.
pub struct AgentProcess {
    pid: u32,
    ops: mpsc::Sender<Op>,
    waker: std::sync::Arc<mio::Waker>,
    events: mpsc::Receiver<ClientEvent>,
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
        let (pid, ops, events, waker, thread) = event_loop::start(
            command,
            config,
            record,
            std::sync::Arc::clone(&handlers),
            std::sync::Arc::clone(&flow),
        )?;
        Ok(AgentProcess {
            pid,
            ops,
            waker,
            events,
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
        self.lock_handlers()
            .tools
            .insert(name.into(), std::sync::Arc::new(handler));
    }

    /// Runs `handler` on a worker thread for every host URI request (HOST-05): what it
    /// returns is sent as the `host_uri_result` fields (`content`, `contentType`, `isError`,
    /// `error`, …). The schemes are registered with `set_host_uri_schemes` (HOST-04).
    pub fn on_host_uri(
        &self,
        handler: impl Fn(HostUriRequest) -> HostUriResult + Send + Sync + 'static,
    ) {
        self.lock_handlers().uri = Some(std::sync::Arc::new(handler));
    }

    /// Runs `handler` on a worker thread for every extension UI request (HOST-06), dialogs
    /// and notices alike: `Some(answer)` is sent as the `extension_ui_response`, `None` sends
    /// nothing (notices).
    pub fn on_ui(&self, handler: impl Fn(UiRequest) -> Option<UiResponse> + Send + Sync + 'static) {
        self.lock_handlers().ui = Some(std::sync::Arc::new(handler));
    }

    fn lock_handlers(&self) -> std::sync::MutexGuard<'_, handlers::Registered> {
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

    fn request<T: FromAnswer>(&self, call: Call, timeout: Duration) -> Result<T, CallError> {
        // While the caller waits, the loop reads on whether or not events are taken.
        let _waiting = self.flow.waiting();
        match self.call_client(call, true)? {
            (CallResult::Request(Err(e)), _) => Err(CallError::Refused(e)),
            (_, Some(waiter)) => T::from_answer(wait(waiter, timeout)?),
            _ => Err(CallError::Ended),
        }
    }

    /// Sends a command and returns at once; its response arrives as an event.
    pub fn send(&self, command: WireCommand) -> Result<RequestId, CallError> {
        match self.call_client(Call::Send(command), false)?.0 {
            CallResult::Request(sent) => Ok(sent?),
            _ => Err(CallError::Ended),
        }
    }

    /// Sends a command and waits up to `timeout` for its response's `data`.
    pub fn call(&self, command: WireCommand, timeout: Duration) -> Result<ResponseData, CallError> {
        self.request(Call::Send(command), timeout)
    }

    /// Sends a prompt and waits for its acknowledgement; the turn streams as events.
    pub fn prompt(&self, message: &str, timeout: Duration) -> Result<PromptData, CallError> {
        self.request(Call::Send(commands::prompt(message)), timeout)
    }

    /// Runs a shell command in the agent (`bash`) and waits for its result.
    pub fn bash(&self, command: &str, timeout: Duration) -> Result<BashData, CallError> {
        self.request(Call::Send(commands::bash(command)), timeout)
    }

    /// Delivers a message into the current run (`steer`).
    pub fn steer(&self, message: &str, timeout: Duration) -> Result<ResponseData, CallError> {
        self.call(commands::steer(message), timeout)
    }

    /// Queues a message for after the current run (`follow_up`).
    pub fn follow_up(&self, message: &str, timeout: Duration) -> Result<ResponseData, CallError> {
        self.call(commands::follow_up(message), timeout)
    }

    /// Replaces the todo list (`set_todos {phases}`); the response holds the new list.
    pub fn set_todos(&self, phases: Vec<Value>, timeout: Duration) -> Result<TodosData, CallError> {
        self.request(Call::Send(commands::set_todos(phases)), timeout)
    }

    /// One page of the history (`get_messages_page`, PAGE-01..06): never falls back
    /// (PAGE-07); a stale cursor fails with code `stale_cursor`.
    pub fn messages_page(
        &self,
        cursor: Option<&str>,
        limit: Option<u32>,
        timeout: Duration,
    ) -> Result<MessagesPageData, CallError> {
        self.request(Call::Send(commands::messages_page(cursor, limit)), timeout)
    }

    /// Aborts a running `bash` (CALL-05: sent at once, whatever is pending).
    pub fn abort_bash(&self, timeout: Duration) -> Result<ResponseData, CallError> {
        self.call(commands::abort_bash(), timeout)
    }

    /// Aborts the agent's current run.
    pub fn abort(&self, timeout: Duration) -> Result<ResponseData, CallError> {
        self.call(commands::abort(), timeout)
    }

    /// The agent's state (`get_state`).
    pub fn get_state(&self, timeout: Duration) -> Result<SessionState, CallError> {
        self.request(Call::Send(commands::get_state()), timeout)
    }

    /// One page of a stored output (`read_output`, OUT-10): refused
    /// ([`CallError::Refused`]) when the agent's ready frame did not offer it or before the
    /// session is ready; a failed read's code is [`CallError::output_code`].
    pub fn read_output(
        &self,
        params: &ReadParams,
        timeout: Duration,
    ) -> Result<ReadResult, CallError> {
        self.request(Call::Send(commands::read_output(params)), timeout)
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

    /// Starts reading the whole history and returns at once: `HistoryProgress` events follow
    /// each page, and one `History` event ends it (PAGE-07).
    pub fn read_history(&self) -> Result<RequestId, CallError> {
        match self.call_client(Call::ReadHistory, false)?.0 {
            CallResult::Request(sent) => Ok(sent?),
            _ => Err(CallError::Ended),
        }
    }

    /// Reads the whole history (pages after v2, `get_messages` otherwise: PAGE-07).
    pub fn messages(&self, timeout: Duration) -> Result<Vec<AgentMessage>, CallError> {
        self.request(Call::ReadHistory, timeout)
    }

    /// Replaces the host-owned tools (HOST-01), checked as the agent will check them.
    pub fn set_host_tools(
        &self,
        tools: Vec<HostToolDefinition>,
        timeout: Duration,
    ) -> Result<ResponseData, CallError> {
        self.request(Call::SetHostTools(tools), timeout)
    }

    /// Replaces the host URI schemes (HOST-04), normalised as the agent will.
    pub fn set_host_uri_schemes(
        &self,
        schemes: Vec<HostUriSchemeDefinition>,
        timeout: Duration,
    ) -> Result<ResponseData, CallError> {
        self.request(Call::SetHostUriSchemes(schemes), timeout)
    }

    /// The next event, waiting up to `timeout`; `None` on timeout or when the session has
    /// ended and every event was taken.
    ///
    /// Events not taken hold the agent back: once a couple of MiB of its output wait behind
    /// them, the driver stops reading it until the application takes events again (its pipe
    /// fills and it waits), except while a blocking call waits for its answer.
    pub fn next_event(&self, timeout: Duration) -> Option<ClientEvent> {
        let event = self.events.recv_timeout(timeout).ok()?;
        if self.flow.took() {
            let _ = self.waker.wake();
        }
        Some(event)
    }

    /// Sends a partial result for a host tool call; false when the call is not open.
    pub fn host_tool_update(
        &self,
        id: &str,
        partial_result: ToolResult,
    ) -> Result<bool, CallError> {
        self.answer(Call::HostToolUpdate(id.into(), partial_result))
    }

    /// Sends the result of a host tool call; false when the call is not open (HOST-03).
    pub fn host_tool_result(
        &self,
        id: &str,
        result: ToolResult,
        is_error: bool,
    ) -> Result<bool, CallError> {
        self.answer(Call::HostToolResult(id.into(), result, is_error))
    }

    /// Answers a host URI request; false when it is not open.
    pub fn host_uri_result(&self, id: &str, result: HostUriResult) -> Result<bool, CallError> {
        self.answer(Call::HostUriResult(id.into(), result))
    }

    /// Answers an extension UI dialog; false when it is not open (answered, withdrawn, timed
    /// out).
    pub fn ui_respond(&self, id: &str, answer: UiResponse) -> Result<bool, CallError> {
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

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.op(Op::Shutdown {
                grace: Duration::ZERO,
            });
            let _ = self.join();
        }
    }
}

fn wait(
    waiter: mpsc::Receiver<Reply>,
    timeout: Duration,
) -> Result<musewire_core::client::Answered, CallError> {
    // A timeout too long to add to `now` waits as long as it takes (issue 14, item 7).
    match waiter.recv_timeout(timeout) {
        Ok(Ok(data)) => Ok(data),
        Ok(Err(failure)) => Err(CallError::Failed(failure)),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(CallError::Timeout(timeout)),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(CallError::Ended),
    }
}
