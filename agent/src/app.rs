//! [`App`]: the reference agent's application around the core's [`Agent`]: the session and
//! its history, the scripted model's runs, the tools, and the commands. Sans-IO apart from
//! the shell commands it runs: the driver hands in stdin, timers and finished jobs, takes
//! stdout lines one at a time with [`App::poll_write`], and performs the file work the App
//! hands out ([`App::poll_io`], answered with [`App::handle_io`]: the [I/O seam](crate::io)).

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use musewire_core::agent::{
    Agent, AgentAction, AgentConfig, AgentEvent, CommandFailure, RequestId,
};
use serde_json::Value;

use crate::bash::{BashOutcome, JobId, Jobs, Notify};
use crate::io::{IoId, IoOutcome, IoRequest, IoWork};
use crate::messages::Model;
use crate::options::{Clock, Options};
use crate::read::ReadWindow;
use crate::run::Run;
use crate::session::{self, FileState, Session, EXTENSION};

/// What an I/O request the App handed out is for.
#[derive(Debug)]
pub(crate) enum IoFor {
    /// The `read` tool's read of `path` (the tool call waits on `Pending::Io`).
    Read { path: String, window: ReadWindow },
    /// Making the file of the session of this epoch.
    Create { epoch: u64 },
    /// An append to (or the cut of) the file of the session of this epoch.
    Write { epoch: u64 },
    /// `switch_session`'s load of the file `name`, for `request`.
    Load { request: RequestId, name: String },
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
    pub(crate) next_entry: u64,
    pub(crate) next_call: u64,
    /// Which session is current: it changes with each new or loaded session, so the answer
    /// to a write for an earlier one is told apart.
    session_epoch: u64,
    /// The file work handed out and not yet taken ([`App::poll_io`]).
    io: VecDeque<IoRequest>,
    /// The file work taken and not yet answered.
    io_waiting: BTreeMap<IoId, IoFor>,
    next_io: u64,
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
        let mut app = App {
            agent: Agent::new(AgentConfig::default()),
            clock: Clock::new(now, options.fixed_clock_ms),
            options,
            model,
            session: Session::default(),
            run: None,
            queue: VecDeque::new(),
            jobs: Jobs::new(notify),
            rpc_bash: BTreeMap::new(),
            deferred: Vec::new(),
            next_session: 0,
            next_entry: 0,
            next_call: 0,
            session_epoch: 0,
            io: VecDeque::new(),
            io_waiting: BTreeMap::new(),
            next_io: 0,
            deadline: options_deadline,
        };
        app.new_session(now);
        app
    }

    /// The current session's id.
    pub fn session_id(&self) -> &str {
        &self.session.id
    }

    /// The current session's file (absolute when the session folder given is), once made
    /// or loaded; `None` without a session folder, with `--no-session`, or after a write to
    /// it failed.
    pub fn session_file(&self) -> Option<PathBuf> {
        let dir = self.options.session_dir.as_ref()?;
        Some(dir.join(self.session.file.name()?))
    }

    /// The next file work for the driver to perform (the [I/O seam](crate::io)); its answer
    /// goes back through [`App::handle_io`]. A driver takes it as soon as it can (after each
    /// call into the App), so that what the App writes is on disk before what follows.
    pub fn poll_io(&mut self) -> Option<IoRequest> {
        self.io.pop_front()
    }

    /// The answer to the file work `id`.
    pub fn handle_io(&mut self, now: Instant, id: IoId, outcome: IoOutcome) {
        let Some(purpose) = self.io_waiting.remove(&id) else {
            return;
        };
        match purpose {
            IoFor::Read { path, window } => self.on_read(now, id, &path, &window, outcome),
            IoFor::Create { epoch } if epoch == self.session_epoch => match outcome {
                IoOutcome::Done => {
                    let name = self.session_file_name();
                    let waiting = match std::mem::take(&mut self.session.file) {
                        FileState::Creating(lines) => lines,
                        _ => Vec::new(),
                    };
                    self.session.file = FileState::Open(name.clone());
                    if !waiting.is_empty() {
                        self.write_session(IoWork::AppendSession {
                            name,
                            bytes: waiting,
                        });
                    }
                }
                // Taken (by an earlier run of the agent, or another one): the next id
                // (issue 11 item 5).
                IoOutcome::Exists => {
                    self.next_session += 1;
                    self.session.id = format!("session-{}", self.next_session);
                    self.create_session_file(now);
                }
                _ => self.session.file = FileState::None,
            },
            IoFor::Write { epoch } if epoch == self.session_epoch => {
                if !matches!(outcome, IoOutcome::Done) {
                    // The file misses an entry now: nothing more is written to it, and
                    // get_state no longer names it.
                    self.session.file = FileState::None;
                }
            }
            IoFor::Create { .. } | IoFor::Write { .. } => {}
            IoFor::Load { request, name } => self.on_session_loaded(now, request, name, outcome),
        }
    }

    /// Hands out file work for the loop, returning its id.
    pub(crate) fn request_io(&mut self, work: IoWork, purpose: IoFor) -> IoId {
        self.next_io += 1;
        let id = IoId(self.next_io);
        self.io.push_back(IoRequest { id, work });
        self.io_waiting.insert(id, purpose);
        id
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
        self.handle_own_timeout(now);
    }

    /// When [`App::handle_timeout`] is next due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        [self.agent.poll_timeout(), self.own_timeout()]
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
    /// agent (at most one chunk line is held).
    pub fn poll_write(&mut self, now: Instant) -> Option<Vec<u8>> {
        loop {
            match self.agent.poll_action()? {
                AgentAction::Write(line) => return Some(line),
                AgentAction::Event(event) => self.on_event(now, event),
            }
        }
    }

    /// Whether the agent is done: stdin has ended, no run or shell command is left, and (when
    /// [`App::poll_write`] has returned `None`) nothing is left to write.
    pub fn is_finished(&self) -> bool {
        self.agent.is_input_closed() && self.is_idle()
    }

    /// The core agent, for a loop that drives it itself (the stdio loop).
    pub(crate) fn agent_mut(&mut self) -> &mut Agent {
        &mut self.agent
    }

    /// The App's own timer (the session's deadline while a run goes), besides the agent's.
    pub(crate) fn own_timeout(&self) -> Option<Instant> {
        self.deadline.filter(|_| self.run.is_some())
    }

    /// The App's own timer is due: a run past the session's deadline is aborted.
    pub(crate) fn handle_own_timeout(&mut self, now: Instant) {
        if self.deadline_passed(now) {
            self.abort_run(now);
        }
    }

    /// Whether no run and no shell command is left.
    pub(crate) fn is_idle(&self) -> bool {
        self.run.is_none() && self.jobs.running() == 0
    }

    /// An event of the core agent, taken by a loop that drives the agent itself.
    pub(crate) fn on_agent_event(&mut self, now: Instant, event: AgentEvent) {
        self.on_event(now, event);
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

    /// Whether sessions are kept in files: a session folder is given, and not
    /// `--no-session`.
    pub(crate) fn persists(&self) -> bool {
        self.options.session_dir.is_some() && !self.options.no_session
    }

    /// Starts a new session: a new id, an empty history and no todos, and its file when
    /// sessions are kept in files.
    pub(crate) fn new_session(&mut self, now: Instant) {
        self.next_session += 1;
        self.session_epoch += 1;
        self.session = Session {
            id: format!("session-{}", self.next_session),
            ..Session::default()
        };
        if self.persists() {
            self.session.file = FileState::Creating(Vec::new());
            self.create_session_file(now);
        }
    }

    fn session_file_name(&self) -> String {
        format!("{}{EXTENSION}", self.session.id)
    }

    /// Makes the current session's file (exclusively: a taken name moves on to the next id).
    fn create_session_file(&mut self, now: Instant) {
        let header = session::header_line(
            &self.session.id,
            self.options.cwd.as_deref(),
            self.millis(now),
        );
        let work = IoWork::CreateSession {
            name: self.session_file_name(),
            bytes: header,
        };
        let epoch = self.session_epoch;
        self.request_io(work, IoFor::Create { epoch });
    }

    /// Writes `work` (an append or a cut) to the current session's file.
    fn write_session(&mut self, work: IoWork) {
        let epoch = self.session_epoch;
        self.request_io(work, IoFor::Write { epoch });
    }

    /// Adds an entry's line to the session's file (or to what waits for the file).
    fn append_entry(&mut self, line: Vec<u8>) {
        match &mut self.session.file {
            FileState::None => {}
            FileState::Creating(waiting) => waiting.extend_from_slice(&line),
            FileState::Open(name) => {
                let name = name.clone();
                self.write_session(IoWork::AppendSession { name, bytes: line });
            }
        }
    }

    /// A new entry's id, chained to the last.
    fn next_entry_id(&mut self) -> (String, Option<String>) {
        self.next_entry += 1;
        let id = format!("entry-{}", self.next_entry);
        let parent = self.session.last_entry.replace(id.clone());
        (id, parent)
    }

    /// Adds a message to the history (a run's messages are the history's tail), and its
    /// entry to the session's file.
    pub(crate) fn push_history(&mut self, now: Instant, message: Value) {
        let (id, parent) = self.next_entry_id();
        if self.persists() {
            let line = session::message_line(&id, parent.as_deref(), self.millis(now), &message);
            self.append_entry(line);
        }
        self.session.leaf = Some(id);
        self.session.messages.push(message);
    }

    /// Sets the todo list, and adds its entry to the session's file.
    pub(crate) fn set_todos(&mut self, now: Instant, phases: Vec<Value>) {
        if self.persists() {
            let (id, parent) = self.next_entry_id();
            let line = session::todos_line(&id, parent.as_deref(), self.millis(now), &phases);
            self.append_entry(line);
        }
        self.session.todos = phases;
    }

    /// `switch_session`: the file must be a session file of the session folder; it is
    /// loaded, and the command answered when it is (see [`App::on_session_loaded`]).
    pub(crate) fn switch_session(&mut self, request: RequestId, path: &str) -> Result<(), String> {
        let dir = match &self.options.session_dir {
            Some(dir) if self.persists() => dir,
            _ => {
                return Err(
                    "musewire agent keeps no session files (no --session-dir, or --no-session)"
                        .into(),
                )
            }
        };
        let name = session::file_name_in(dir, std::path::Path::new(path))?;
        let work = IoWork::LoadSession { name: name.clone() };
        self.request_io(work, IoFor::Load { request, name });
        Ok(())
    }

    /// A session file was read for `switch_session`: when it is a session, the run is
    /// aborted and the session replaced by it (history, todos, leaf; its file written to
    /// from now on, cut back first when its last line was torn); else the command fails and
    /// nothing changes.
    fn on_session_loaded(
        &mut self,
        now: Instant,
        request: RequestId,
        name: String,
        outcome: IoOutcome,
    ) {
        let id = name.strip_suffix(EXTENSION).unwrap_or(&name);
        let loaded = match outcome {
            IoOutcome::Loaded(bytes) => session::parse(&bytes, id).map_err(|e| {
                let dir = self.options.session_dir.clone().unwrap_or_default();
                format!("{}: {e}", dir.join(&name).display())
            }),
            IoOutcome::Failed(error) => Err(error),
            other => Err(format!("unexpected answer to a load: {other:?}")),
        };
        let loaded = match loaded {
            Ok(loaded) => loaded,
            Err(error) => {
                let failure = CommandFailure { error, code: None };
                return self.respond(now, request, Err(failure));
            }
        };
        self.abort_run(now);
        self.session_epoch += 1;
        self.next_entry = self.next_entry.max(loaded.max_entry);
        self.session = Session {
            id: loaded.id,
            messages: loaded.messages,
            leaf: loaded.leaf,
            todos: loaded.todos,
            last_entry: loaded.last_entry,
            file: FileState::Open(name.clone()),
        };
        if let Some(len) = loaded.torn_at {
            self.write_session(IoWork::TruncateSession { name, len });
        }
        self.respond(
            now,
            request,
            Ok(Some(serde_json::json!({"cancelled": false}))),
        );
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
