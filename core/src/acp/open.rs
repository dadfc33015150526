//! Opening a session (`session/new`, and the opening `session/resume` shares, ACP-06,
//! ACP-24, ACP-25): its agent started in its cwd, its state and models asked, its ACP id (its
//! session file's name with a session folder), its answer with the config options.

use super::command::CommandDisplay;
use super::outbox::{Drain, Outbox};
use super::*;
use crate::wire::{GetAvailableModels, GetState, SessionState};

impl Bridge {
    /// Starts a session's agent in `cwd`; its key. ACP-37: omp is asked for its subagents'
    /// progress first (the next drain writes it).
    pub(super) fn open_session(&mut self, now: Instant, cwd: PathBuf) -> AgentKey {
        let key = self.start_agent(now, cwd);
        if let Some(session) = self.sessions.get_mut(&key) {
            subagent::subscribe(session, now);
        }
        key
    }

    /// Starts an agent in `cwd` with a session's state and no subscription: a session's
    /// ([`Bridge::open_session`]) or a sign-in's (ACP-41, whose agent only logs in).
    pub(super) fn start_agent(&mut self, now: Instant, cwd: PathBuf) -> AgentKey {
        self.next_session += 1;
        let key = AgentKey(self.next_session);
        let mut mapper = Mapper::new();
        mapper.usage_meta = self.usage_meta;
        // ACP-30: command output as a terminal only for an editor that opted in.
        let client_meta = self
            .client_capabilities
            .as_ref()
            .and_then(|c| c.meta.as_ref());
        mapper.command_display = CommandDisplay::from_client_meta(client_meta);
        // ACP-17, ACP-18: card paths are absolute against the session's cwd.
        mapper.cwd = Some(cwd.clone());
        self.sessions.insert(
            key,
            AcpSession {
                key,
                acp_id: SessionId::new(""),
                agent: self.config.agent,
                client: Client::new(self.config.client.clone(), now),
                mapper,
                turn: None,
                queued: VecDeque::new(),
                held: VecDeque::new(),
                pending: BTreeMap::new(),
                seen_outputs: BTreeMap::new(),
                exited: false,
                stop: stop::Stop::default(),
                start: start::StartBudget::new(now, self.config.client.ready_timeout),
                config: config::Config::new(self.config.approval_policy.clone()),
                title: None,
                silence: silence::Silence::new(now),
                mcp: mcp::SessionMcp::default(),
                restart: Default::default(),
                stdin_waiting: 0,
                subagents: Default::default(),
                review: Default::default(),
            },
        );
        self.actions.push_back(Action::Spawn { session: key, cwd });
        key
    }

    /// The session has its ACP id: `session/new` is answered and `/status` advertised.
    pub(super) fn opened(
        &mut self,
        now: Instant,
        key: AgentKey,
        acp_id: SessionId,
        editor: &RequestId,
        opening: Opening,
    ) {
        if self.mcp_hold_open(key, &acp_id, editor, opening) {
            return;
        }
        // ACP-31: a fork opens as a resume does, and is answered with its own id.
        let forked = self.files.take_fork(key);
        self.files.opened(&acp_id.0);
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        session.acp_id = acp_id.clone();
        session.mapper.output_session = self.output_meta.then(|| acp_id.0.to_string());
        let commands = session.mapper.facts.commands();
        self.keys.insert(acp_id.0.clone(), key);
        // ACP-35: a new session asks, whatever an earlier one of its id was in.
        if opening == Opening::New && !forked {
            self.modes.remember(&acp_id.0, session.config.mode);
        }
        let modes = mode::state(session.config.mode);
        let options = session.config.options();
        if session.restart.prompt.is_some() {
            // ACP-33: opened again for a prompt: the prompt runs instead of an answer.
            self.editor(commands_line(&acp_id, commands));
            if let Some((session, mut out)) = self.session_out(key) {
                session.mcp_opened(&mut out);
            }
            self.restarted(now, key);
            return;
        }
        let answer = if forked {
            rpc::result_line(
                editor,
                &ForkSessionResponse::new(acp_id.clone())
                    .modes(modes)
                    .config_options(options),
            )
        } else if opening == Opening::Resumed {
            // ACP-25: a resumed session's answer has no id of its own.
            rpc::result_line(
                editor,
                &ResumeSessionResponse::new()
                    .modes(modes)
                    .config_options(options),
            )
        } else {
            rpc::result_line(
                editor,
                &NewSessionResponse::new(acp_id.clone())
                    .modes(modes)
                    .config_options(options),
            )
        };
        self.editor(answer);
        // ACP-01: `/status` is advertised beside the agent's own commands.
        self.editor(commands_line(&acp_id, commands));
        if let Some((session, mut out)) = self.session_out(key) {
            session.mcp_opened(&mut out);
        }
    }

    /// The name of a session file directly in our session folder, `.jsonl` dropped, when it
    /// is a safe file name (ACP-06).
    pub(super) fn session_stem(&self, file: &str) -> Option<String> {
        let dir = self.config.session_dir.as_deref()?;
        let file = std::path::Path::new(file);
        if file.parent() != Some(dir) {
            return None;
        }
        let stem = file.file_name()?.to_str()?.strip_suffix(".jsonl")?;
        is_session_file_name(stem).then(|| stem.to_owned())
    }
}

/// How a session opens: new (`session/new`), or on its stored file (`session/resume`, a
/// fork: ACP-25, ACP-31), which decides its answer and whether its mode is remembered anew
/// (ACP-35).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Opening {
    New,
    Resumed,
}

/// Whether an ACP session id names a session file of our folder: 1..=128 ASCII letters,
/// digits, `-`, `_` and `.`, not starting with `.` (ACP-06: the id becomes
/// `<dir>/<id>.jsonl`, so it can't name another folder).
pub(super) fn is_session_file_name(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

impl Bridge {
    /// ACP-24: an opening asks for the models, answered with `acp_id` once they come (or at
    /// [`MODELS_BUDGET`] without the model option).
    fn ask_models(
        &mut self,
        now: Instant,
        key: AgentKey,
        editor: RequestId,
        acp_id: SessionId,
        opening: Opening,
    ) {
        self.send(
            now,
            key,
            Command::from(GetAvailableModels::default()),
            |editor| Pending::NewModels {
                editor,
                acp_id,
                deadline: now + MODELS_BUDGET,
                opening,
            },
            &editor,
        );
    }

    /// ACP-06, ACP-24: `get_state` answered at `session/new`: the context window, the ACP id
    /// from the session file, then the models.
    pub(super) fn opened_state(
        &mut self,
        now: Instant,
        key: AgentKey,
        editor: RequestId,
        state: SessionState,
    ) {
        // ACP-02: the context window, when the agent reports one.
        if let Some(session) = self.sessions.get_mut(&key) {
            session.mapper.facts.context_window =
                state.model.as_ref().and_then(|m| m.context_window);
        }
        // ACP-06: the name of the agent's session file in our folder (`<id>.jsonl`
        // of the bundled agent, `<timestamp>_<id>.jsonl` of omp) without `.jsonl`, so
        // that a load finds the file again; else our key (not loadable).
        let stem = state
            .session_file
            .as_deref()
            .and_then(|file| self.session_stem(file))
            .filter(|stem| !self.keys.contains_key(stem.as_str()));
        let stored = stem.is_some();
        let acp_id = stem.map_or_else(|| SessionId::new(key.to_string()), SessionId::new);
        if let Some(session) = self.sessions.get_mut(&key) {
            // ACP-33: only a session with its file comes back.
            session.restart.stored = stored;
            session.learn_protocol();
            session.learn_state(&state);
        }
        self.ask_models(now, key, editor, acp_id, Opening::New);
    }

    /// ACP-24: without a session folder the id is ours, and a session whose agent will not
    /// tell its state opens all the same.
    pub(super) fn opened_without_state(&mut self, now: Instant, key: AgentKey, editor: RequestId) {
        let acp_id = SessionId::new(key.to_string());
        self.ask_models(now, key, editor, acp_id, Opening::New);
    }

    /// ACP-25: a resume switched the agent to its file: `get_state` next.
    pub(super) fn resume_switched(&mut self, now: Instant, key: AgentKey, editor: RequestId) {
        self.send(
            now,
            key,
            Command::from(GetState::default()),
            |editor| Pending::Load {
                editor,
                step: LoadStep::ResumeState,
            },
            &editor,
        );
    }

    /// ACP-24, ACP-25: a resume's `get_state`: the options and the title, nothing replayed;
    /// the models next.
    pub(super) fn resume_state(
        &mut self,
        now: Instant,
        key: AgentKey,
        editor: RequestId,
        outcome: Result<ResponseData, CommandFailure>,
    ) {
        let Some((session, mut out)) = self.session_out(key) else {
            return;
        };
        let acp_id = session.resumed_state(&outcome, &mut out);
        self.ask_models(now, key, editor, acp_id, Opening::Resumed);
    }

    /// ACP-06: an agent that did not open the session: the editor's request fails, the agent
    /// is stopped.
    pub(super) fn open_failed(
        &mut self,
        now: Instant,
        key: AgentKey,
        editor: RequestId,
        outcome: Result<ResponseData, CommandFailure>,
    ) {
        let reason = match outcome {
            Err(failure) => failure.to_string(),
            Ok(_) => "the agent did not open the session".to_owned(),
        };
        let error = match self.sessions.get(&key).map(|s| s.acp_id.clone()) {
            Some(id) if !id.0.is_empty() => Error::session_not_found(id).data(json!(reason)),
            _ => Error::internal_error().data(json!(reason)),
        };
        self.editor(rpc::error_line(&editor, &error));
        self.keys.retain(|_, k| *k != key);
        self.on_session(now, key, |session, _| session.stop_client(now));
    }
}

impl Bridge {
    /// ACP-24: a session whose agent is slow to list its models opens without them; their
    /// late answer is a `config_option_update` ([`Pending::Models`]).
    pub(super) fn expire_models(&mut self, now: Instant, key: AgentKey) {
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        let late = session.past_due(now, |p| matches!(p, Pending::NewModels { .. }));
        let mut opened = Vec::new();
        for request in late {
            if let Some(Pending::NewModels {
                editor,
                acp_id,
                opening,
                ..
            }) = session.pending.insert(request, Pending::Models)
            {
                opened.push((editor, acp_id, opening));
            }
        }
        for (editor, acp_id, opening) in opened {
            self.opened(now, key, acp_id, &editor, opening);
        }
    }
}

impl AcpSession {
    /// ACP-24, ACP-25: what a resume's `get_state` said is learnt, its title shown as a load
    /// shows it (nothing is replayed); the session's ACP id.
    fn resumed_state(
        &mut self,
        outcome: &Result<ResponseData, CommandFailure>,
        out: &mut Outbox<'_>,
    ) -> SessionId {
        self.learn_protocol();
        let mut title = None;
        if let Ok(ResponseData::State(state)) = outcome {
            self.learn_state(state);
            self.mapper.facts.context_window = state.model.as_ref().and_then(|m| m.context_window);
            title = state.session_name.clone().filter(|t| !t.is_empty());
        }
        if let Some(title) = title {
            let update = SessionInfoUpdate::new().title(title);
            out.update(self, SessionUpdate::SessionInfoUpdate(update));
        }
        self.acp_id.clone()
    }

    /// ACP-06: the agent of a session that did not open is stopped.
    fn stop_client(&mut self, now: Instant) -> Drain {
        self.client.handle(now, client::Input::Call(Call::Stop));
        Drain::Needed
    }
}

#[cfg(test)]
mod tests {
    use super::is_session_file_name;

    #[test]
    fn acp_06_a_session_id_names_a_file_of_the_folder_only() {
        for good in ["s-1", "session-12", "2026-01-01T00.00_abc", "a.b"] {
            assert!(is_session_file_name(good), "{good}");
        }
        let long = "x".repeat(129);
        for bad in [
            "", ".hidden", "..", "../x", "a/b", "a\\b", "a b", "é", "a\0", &long,
        ] {
            assert!(!is_session_file_name(bad), "{bad:?}");
        }
    }
}
