//! [`App`]: the reference agent's application around the core's [`Agent`]: the session and
//! its history, the scripted model's runs, the tools, and the commands. Sans-IO apart from
//! the shell commands it runs: the driver hands in stdin, timers and finished jobs, and
//! takes stdout lines one at a time with [`App::poll_write`].

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use musewire_core::agent::{Agent, AgentAction, AgentConfig, AgentEvent, RequestId};
use musewire_core::spill::SpillPolicy;
use musewire_mio::agent_stdio::AgentProgram;
use serde_json::Value;

use crate::bash::{BashOutcome, JobId, Jobs, Notify, MAX_SPILLED_OUTPUT_BYTES};
use crate::messages::Model;
use crate::options::{Clock, Options};
use crate::run::Run;

/// One session: its id, its history, and its todos.
#[derive(Debug, Default)]
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) messages: Vec<Value>,
    /// The id of the last entry (`entry-N`), bound into paging cursors.
    pub(crate) leaf: Option<String>,
    pub(crate) todos: Vec<Value>,
}

/// The bundled reference agent's application around the core's [`Agent`]: the session and
/// its history, the scripted model's runs, the tools, and the commands. The driver hands in
/// stdin, timers and finished shell commands, and takes stdout lines one at a time with
/// [`App::poll_write`].
#[derive(Debug)]
pub struct App {
    pub(crate) agent: Agent,
    pub(crate) options: Options,
    pub(crate) clock: Clock,
    pub(crate) model: Model,
    pub(crate) session: Session,
    pub(crate) run: Option<Run>,
    /// Prompts queued while a run streams (`streamingBehavior`, `steer`, `follow_up`).
    pub(crate) queue: VecDeque<String>,
    pub(crate) jobs: Jobs,
    /// The RPC `bash` commands running: their request and command line.
    pub(crate) rpc_bash: BTreeMap<JobId, (RequestId, String)>,
    /// `bashExecution` messages finished during a run, added when it ends.
    pub(crate) deferred: Vec<Value>,
    next_session: u64,
    next_entry: u64,
    pub(crate) next_call: u64,
    /// The session's deadline (`--max-time`, AGENT-03).
    pub(crate) deadline: Option<Instant>,
}

impl App {
    /// An agent whose ready frame is queued. `notify` is called from a shell command's
    /// thread when it finishes (the driver then calls [`App::handle_jobs`]).
    pub fn new(options: Options, now: Instant, notify: Notify) -> Self {
        let model = Model {
            provider: options.provider().to_owned(),
            id: options.model_id().to_owned(),
        };
        let options_deadline = options.max_time.and_then(|d| now.checked_add(d));
        let spills = options.max_inline_bytes.is_some();
        let mut jobs = Jobs::new(notify);
        if spills {
            // The whole output goes to the store, not to the model (SPILL-03).
            jobs.set_max_output_bytes(MAX_SPILLED_OUTPUT_BYTES);
        }
        let mut app = App {
            // With --max-inline-bytes the loop has a store: spill and serve reads (OUT-10).
            agent: Agent::new(AgentConfig {
                spill: SpillPolicy {
                    max_inline_bytes: options.max_inline_bytes,
                    has_store: spills,
                },
                serve_outputs: spills,
                ..AgentConfig::default()
            }),
            clock: Clock::new(now, options.fixed_clock_ms),
            options,
            model,
            session: Session::default(),
            run: None,
            queue: VecDeque::new(),
            jobs,
            rpc_bash: BTreeMap::new(),
            deferred: Vec::new(),
            next_session: 0,
            next_entry: 0,
            next_call: 0,
            deadline: options_deadline,
        };
        app.new_session();
        app
    }

    /// The current session's id.
    pub fn session_id(&self) -> &str {
        &self.session.id
    }

    /// The current history.
    pub fn messages(&self) -> &[Value] {
        &self.session.messages
    }

    /// Whether a run is in progress.
    pub fn is_streaming(&self) -> bool {
        self.run.is_some()
    }

    /// Shell commands still running.
    pub fn running_jobs(&self) -> usize {
        self.jobs.running()
    }

    /// Hands in bytes read from stdin.
    pub fn handle_stdin(&mut self, now: Instant, bytes: &[u8]) {
        self.agent.handle_stdin(now, bytes);
    }

    /// Hands in the end of stdin: pending host requests are rejected (HOST-07), the run is
    /// aborted and every shell command killed.
    pub fn handle_stdin_eof(&mut self, now: Instant) {
        self.agent.handle_stdin_eof(now);
    }

    /// Ends at once, as on a terminating signal (AGENT-02): every shell command's process
    /// group is killed. Nothing more is written; the driver then exits.
    pub fn terminate(&mut self) {
        self.jobs.kill_all();
    }

    /// Hands in the passing of time: dialog timeouts, and the session's deadline
    /// (`--max-time`), at which a run still going is aborted.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.agent.handle_timeout(now);
        if self.deadline_passed(now) {
            self.abort_run(now);
        }
    }

    /// When [`App::handle_timeout`] is next due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let deadline = self.deadline.filter(|_| self.run.is_some());
        [self.agent.poll_timeout(), deadline]
            .into_iter()
            .flatten()
            .min()
    }

    /// Whether the session's deadline (`--max-time`) has passed.
    pub(crate) fn deadline_passed(&self, now: Instant) -> bool {
        self.deadline.is_some_and(|deadline| now >= deadline)
    }

    /// Takes the shell commands that have finished.
    pub fn handle_jobs(&mut self, now: Instant) {
        while let Some(done) = self.jobs.try_finished() {
            self.on_job(now, done);
        }
    }

    /// Waits up to `timeout` for a shell command to finish and takes it; false on timeout.
    pub fn wait_job(&mut self, now: Instant, timeout: Duration) -> bool {
        match self.jobs.wait_finished(timeout) {
            Some(done) => {
                self.on_job(now, done);
                true
            }
            None => false,
        }
    }

    /// The next line for stdout, if any. Events of the core are handled on the way, so a
    /// driver that polls only while stdout accepts lines applies backpressure to the whole
    /// agent (at most one chunk line is held). This driver has no spill store: a spill write
    /// fails (SPILL-05, the original result goes on) and a stored-output read finds the output
    /// unavailable; [`crate::stdio::run`] performs them with the local store.
    pub fn poll_write(&mut self, now: Instant) -> Option<Vec<u8>> {
        loop {
            match self.agent.poll_action()? {
                AgentAction::Write(line) => return Some(line),
                AgentAction::Event(event) => self.on_event(now, event),
                AgentAction::SpillWrite { id, write } => {
                    AgentProgram::spill_write(self, now, id, write)
                }
                AgentAction::OutputRead { id, read } => {
                    AgentProgram::output_read(self, now, id, read)
                }
            }
        }
    }

    /// Whether the agent is done: stdin has ended, no run or shell command is left, and (when
    /// [`App::poll_write`] has returned `None`) nothing is left to write.
    pub fn is_finished(&self) -> bool {
        self.agent.is_input_closed() && self.run.is_none() && self.jobs.running() == 0
    }

    fn on_event(&mut self, now: Instant, event: AgentEvent) {
        match event {
            AgentEvent::Command {
                request, command, ..
            } => self.on_command(now, request, command),
            AgentEvent::HostToolUpdate {
                call,
                partial_result,
            } => self.on_host_tool_update(now, call, partial_result),
            AgentEvent::HostToolFinished { call, outcome } => {
                self.on_host_tool_finished(now, call, outcome)
            }
            AgentEvent::HostUriFinished { request, outcome } => {
                self.on_host_uri_finished(now, request, outcome)
            }
            AgentEvent::DialogResolved { dialog, outcome } => {
                self.on_dialog_resolved(now, dialog, outcome)
            }
            AgentEvent::InputClosed => {
                self.abort_run(now);
                self.jobs.kill_all();
            }
            AgentEvent::ToolResultSettled(settled) => self.on_tool_result_settled(now, *settled),
            AgentEvent::ProtocolChanged { .. }
            | AgentEvent::HostToolsChanged { .. }
            | AgentEvent::HostUriSchemesChanged { .. }
            | AgentEvent::InputError { .. } => {}
        }
    }

    fn on_job(&mut self, now: Instant, (job, outcome): (JobId, BashOutcome)) {
        if let Some((request, command)) = self.rpc_bash.remove(&job) {
            self.finish_rpc_bash(now, request, command, outcome);
        } else {
            self.on_tool_job(now, job, outcome);
        }
    }

    /// Starts a new session: a new id, an empty history and no todos.
    pub(crate) fn new_session(&mut self) {
        self.next_session += 1;
        self.session = Session {
            id: format!("session-{}", self.next_session),
            ..Session::default()
        };
    }

    /// Adds a message to the history (a run's messages are the history's tail).
    pub(crate) fn push_history(&mut self, message: Value) {
        self.next_entry += 1;
        self.session.leaf = Some(format!("entry-{}", self.next_entry));
        self.session.messages.push(message);
    }

    /// Emits a frame the app built (always an object with a type).
    pub(crate) fn emit(&mut self, now: Instant, frame: Value) {
        self.agent
            .emit(now, frame)
            .expect("the app emits objects with a type");
    }

    /// The timestamp of `now`.
    pub(crate) fn millis(&self, now: Instant) -> u64 {
        self.clock.millis(now)
    }
}

/// The app on the mio driver's agent-side stdio loop: the agent's events go to the app, the
/// session's deadline is the app's own timer, finished shell commands are taken on each wake,
/// and a terminating signal kills every shell command's process group (AGENT-02).
impl AgentProgram for App {
    fn agent(&mut self) -> &mut Agent {
        &mut self.agent
    }

    fn on_event(&mut self, now: Instant, event: AgentEvent) {
        App::on_event(self, now, event);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.deadline.filter(|_| self.run.is_some())
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.deadline_passed(now) {
            self.abort_run(now);
        }
    }

    fn handle_wake(&mut self, now: Instant) {
        self.handle_jobs(now);
    }

    fn is_finished(&self) -> bool {
        self.run.is_none() && self.jobs.running() == 0
    }

    fn terminate(&mut self) {
        App::terminate(self);
    }
}
