//! [`App`]: the reference agent's application around the core's [`Agent`], made of parts
//! that each own their state: the sessions ([`Sessions`]: the history, the todo list, the
//! session files), the run ([`Runner`]: the scripted model's turns), the tools ([`Tools`]:
//! the shell commands), and the file work handed out ([`IoQueue`]). The App routes the
//! core's events and the answers to its work between them; the commands are in
//! [`crate::commands`]. No part imports the App.
//!
//! Sans-IO apart from the shell commands it runs: the driver hands in stdin, timers and
//! finished jobs, takes stdout lines one at a time with [`AgentProgram::next_line`] (the App is an
//! [`AgentProgram`]), and performs the
//! file work the App hands out ([`App::poll_io`], answered with [`App::handle_io`]: the
//! [I/O seam](crate::io)).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use musewire_core::agent::{
    Agent, AgentCall, AgentConfig, AgentEvent, AgentProgram, CommandFailure, CommandId, Input,
};
use musewire_core::output::stored_outputs_in_history;
use musewire_core::spill::SpillPolicy;
use musewire_wire::AgentMessage;
use serde_json::Value;

use crate::bash::{BashOutcome, JobId, Jobs, Notify, MAX_SPILLED_OUTPUT_BYTES};
use crate::io::{IoFor, IoId, IoOutcome, IoQueue, IoRequest};
use crate::messages::Model;
use crate::options::{Clock, Options};
use crate::run::{Ctx, Runner};
use crate::session::Sessions;
use crate::tools::{self, Pending, Tools};

/// The bundled reference agent's application around the core's [`Agent`]: the session and
/// its history, the scripted model's runs, the tools, and the commands. The driver hands in
/// stdin, timers and finished shell commands, takes stdout lines one at a time with
/// [`AgentProgram::next_line`], and performs the App's file work ([`App::poll_io`]).
#[derive(Debug)]
pub struct App {
    pub(crate) agent: Agent,
    pub(crate) options: Options,
    pub(crate) clock: Clock,
    pub(crate) sessions: Sessions,
    pub(crate) runner: Runner,
    pub(crate) tools: Tools,
    pub(crate) io: IoQueue,
    /// The RPC `bash` commands running: their request and command line.
    pub(crate) rpc_bash: BTreeMap<JobId, (CommandId, String)>,
}

impl App {
    /// An agent whose ready frame is queued. `notify` is called from a shell command's
    /// thread when it finishes or, for the model's `bash` call, has new output (the driver
    /// then calls [`App::handle_jobs`]).
    pub fn new(options: Options, now: Instant, notify: Notify) -> Self {
        let model = Model {
            provider: options.provider().to_owned(),
            id: options.model_id().to_owned(),
        };
        let approval_mode = options.approval_mode;
        let deadline = options.max_time.and_then(|d| now.checked_add(d));
        let folder = options.session_dir.clone().filter(|_| !options.no_session);
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
            sessions: Sessions::new(folder, options.cwd.clone()),
            options,
            runner: Runner::new(model, deadline, approval_mode),
            tools: Tools { jobs },
            io: IoQueue::default(),
            rpc_bash: BTreeMap::new(),
        };
        let millis = app.clock.millis(now);
        app.sessions.start_new(millis, &mut app.io);
        app
    }

    /// The run part, and what it reaches of the others.
    pub(crate) fn parts(&mut self) -> (&mut Runner, Ctx<'_>) {
        (
            &mut self.runner,
            Ctx {
                agent: &mut self.agent,
                sessions: &mut self.sessions,
                tools: &mut self.tools,
                io: &mut self.io,
                clock: self.clock,
            },
        )
    }

    /// The current session's id.
    pub fn session_id(&self) -> &str {
        &self.sessions.current.id
    }

    /// The current session's file (absolute when the session folder given is), once made
    /// or loaded; `None` without a session folder, with `--no-session`, or after a write to
    /// it failed.
    pub fn session_file(&self) -> Option<PathBuf> {
        self.sessions.file()
    }

    /// The next file work for the driver to perform (the [I/O seam](crate::io)); its answer
    /// goes back through [`App::handle_io`]. A driver takes it as soon as it can (after each
    /// call into the App), so that what the App writes is on disk before what follows.
    pub fn poll_io(&mut self) -> Option<IoRequest> {
        self.io.pop()
    }

    /// The answer to the file work `id`.
    pub fn handle_io(&mut self, now: Instant, id: IoId, outcome: IoOutcome) {
        let Some(purpose) = self.io.answered(id) else {
            return;
        };
        match purpose {
            IoFor::Read { path, window } => {
                let finished = tools::read_finished(&path, &window, outcome);
                let (runner, mut ctx) = self.parts();
                runner.answer_tool(&mut ctx, now, Pending::Io(id), finished);
            }
            IoFor::Change { path } => {
                let finished = tools::change_finished(&path, outcome);
                let (runner, mut ctx) = self.parts();
                runner.answer_tool(&mut ctx, now, Pending::Io(id), finished);
            }
            IoFor::Create { epoch } => {
                let millis = self.clock.millis(now);
                self.sessions
                    .on_created(epoch, outcome, millis, &mut self.io);
            }
            IoFor::Write { epoch } => self.sessions.on_written(epoch, &outcome),
            IoFor::Load { request, name } => self.on_session_loaded(now, request, name, outcome),
        }
    }

    /// A session file was read for `switch_session`: when it is a session, the run is
    /// aborted and the session replaced by it (history, todos, leaf; its file written to
    /// from now on), and the stored outputs its history names are registered with the core
    /// agent so that `read_output` serves them again (OUT-08); else the command fails and
    /// nothing changes (AGENT-05).
    fn on_session_loaded(
        &mut self,
        now: Instant,
        request: CommandId,
        name: String,
        outcome: IoOutcome,
    ) {
        let loaded = match self.sessions.loaded(&name, outcome) {
            Ok(loaded) => loaded,
            Err(error) => {
                let failure = CommandFailure { error, code: None };
                return self.respond(now, request, Err(failure));
            }
        };
        let (runner, mut ctx) = self.parts();
        runner.abort(&mut ctx, now);
        self.sessions.replace(name, loaded, &mut self.io);
        // OUT-08: the loaded history's stored outputs are readable again (history replay).
        let history: Vec<Value> = (self.sessions.current.messages.iter())
            .map(|message| serde_json::to_value(message).expect("a message serialises"))
            .collect();
        let outputs = stored_outputs_in_history(&history);
        crate::drive::call(&mut self.agent, now, AgentCall::RegisterOutputs(outputs));
        self.respond(now, request, Ok(Some(crate::commands::not_cancelled())));
    }

    /// The current session's history, oldest first: what `get_messages` and the pages serve,
    /// and, with a session folder, what its file holds.
    pub fn messages(&self) -> &[AgentMessage] {
        &self.sessions.current.messages
    }

    /// Whether a run is in progress.
    pub fn is_streaming(&self) -> bool {
        self.runner.is_streaming()
    }

    /// Shell commands still running.
    pub fn running_jobs(&self) -> usize {
        self.tools.jobs.running()
    }

    /// Hands in bytes read from stdin.
    pub fn handle_stdin(&mut self, now: Instant, bytes: &[u8]) {
        self.agent.handle(now, Input::Stdin(bytes));
    }

    /// Hands in the end of stdin: pending host requests are rejected (HOST-07), the run is
    /// aborted and every shell command killed.
    pub fn handle_stdin_eof(&mut self, now: Instant) {
        self.agent.handle(now, Input::StdinEnd);
    }

    /// Takes the shell commands that have finished, then the output the model's running
    /// `bash` calls wrote since their last update, when due (`tool_execution_update`,
    /// AGENT-06).
    pub fn handle_jobs(&mut self, now: Instant) {
        while let Some(done) = self.tools.jobs.try_finished() {
            self.on_job(now, done);
        }
        for (job, output) in self.tools.jobs.take_updates(now) {
            let (runner, mut ctx) = self.parts();
            runner.tool_update(
                &mut ctx,
                now,
                Pending::Bash(job),
                tools::bash_update(output),
            );
        }
    }

    /// When the App's next timer is due: the session's deadline while a run goes, or a
    /// running `bash` call's update held back by [`crate::UPDATE_INTERVAL`].
    pub fn next_timeout(&self) -> Option<Instant> {
        [self.runner.poll_timeout(), self.tools.jobs.next_update()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Waits up to `timeout` for a shell command to finish and takes it; false on timeout.
    pub fn wait_job(&mut self, now: Instant, timeout: Duration) -> bool {
        match self.tools.jobs.wait_finished(timeout) {
            Some(done) => {
                self.on_job(now, done);
                true
            }
            None => false,
        }
    }

    fn answer_event(&mut self, now: Instant, event: AgentEvent) {
        let answer = |app: &mut App, on: Pending, finished| {
            let (runner, mut ctx) = app.parts();
            runner.answer_tool(&mut ctx, now, on, finished);
        };
        match event {
            AgentEvent::Command {
                request, command, ..
            } => self.on_command(now, request, command),
            AgentEvent::HostToolUpdate {
                call,
                partial_result,
            } => {
                let (runner, mut ctx) = self.parts();
                runner.tool_update(&mut ctx, now, Pending::Host(call), partial_result);
            }
            AgentEvent::HostToolFinished { call, outcome } => answer(
                self,
                Pending::Host(call),
                tools::host_tool_finished(outcome),
            ),
            AgentEvent::HostUriFinished { request, outcome } => answer(
                self,
                Pending::Uri(request),
                tools::host_uri_finished(outcome),
            ),
            AgentEvent::DialogResolved { dialog, outcome } => {
                let (runner, mut ctx) = self.parts();
                if !runner.approval_answered(&mut ctx, now, dialog, &outcome) {
                    let finished = tools::dialog_finished(outcome);
                    runner.answer_tool(&mut ctx, now, Pending::Dialog(dialog), finished);
                }
            }
            AgentEvent::InputClosed => {
                let (runner, mut ctx) = self.parts();
                runner.abort(&mut ctx, now);
                self.tools.jobs.kill_all();
            }
            AgentEvent::ToolResultSettled(settled) => {
                let (runner, mut ctx) = self.parts();
                runner.tool_result_settled(&mut ctx, now, *settled);
            }
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
            let (runner, mut ctx) = self.parts();
            runner.answer_tool(
                &mut ctx,
                now,
                Pending::Bash(job),
                tools::bash_finished(outcome),
            );
        }
    }

    /// The timestamp of `now`.
    pub(crate) fn millis(&self, now: Instant) -> u64 {
        self.clock.millis(now)
    }
}

/// The App is an agent program: the stdio loop of either driver runs it,
/// and its tests step it the same way ([`AgentProgram::next_line`], [`AgentProgram::handle_turn`]).
/// On its own it has no spill store: a spill write fails (SPILL-05, the original result goes
/// on) and a stored-output read finds the output unavailable (the defaults);
/// [`crate::stdio::run`] performs them with the local store.
impl AgentProgram for App {
    fn agent(&mut self) -> &mut Agent {
        &mut self.agent
    }

    fn on_event(&mut self, now: Instant, event: AgentEvent) {
        self.answer_event(now, event);
    }

    /// The session's deadline while a run goes (`--max-time`), and the next held-back update
    /// of a running `bash` call ([`App::next_timeout`]).
    fn poll_timeout(&self) -> Option<Instant> {
        self.next_timeout()
    }

    /// A run past the session's deadline is aborted; a `bash` call's held-back update goes.
    fn handle_timeout(&mut self, now: Instant) {
        let (runner, mut ctx) = self.parts();
        runner.handle_timeout(&mut ctx, now);
        self.handle_jobs(now);
    }

    /// Takes the shell commands that have finished.
    fn handle_wake(&mut self, now: Instant) {
        self.handle_jobs(now);
    }

    /// No run and no shell command is left.
    fn is_finished(&self) -> bool {
        !self.runner.is_streaming() && self.tools.jobs.running() == 0
    }

    /// Every shell command's process group is killed (AGENT-02).
    fn terminate(&mut self) {
        self.tools.jobs.kill_all();
    }
}
