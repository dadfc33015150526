//! `session/load` (ACP-06): the agent switched to the session's file, the plan cleared, the
//! conversation replayed and the title, latest plan and usage rebuilt from a bounded walk of
//! the history, no model turn.

use super::*;
use crate::wire::{GetAvailableModels, GetSessionStats, GetState, MessagesPageData};

/// Where a `session/load` or `session/resume` is: what the agent is answering. Each answer
/// goes to [`Bridge::load_step`], which shows what it brought and asks the next step.
#[derive(Debug)]
pub(super) enum LoadStep {
    /// `switch_session` to the session's file (ACP-06), for a load or a resume (ACP-25).
    Switch { then: SwitchFor },
    /// A resume's `get_state`, for the options and the title (ACP-24, ACP-25).
    ResumeState,
    /// A load's `get_state`, for the title (ACP-06).
    State,
    /// A history page (ACP-06).
    Page { walk: Walk, rebuild: Box<Rebuild> },
    /// The whole history through `get_messages`, from an agent that does not page (v1-only,
    /// or paging refused: PAGE-07's fallback; ACP-06).
    Legacy { rebuild: Box<Rebuild> },
    /// `get_session_stats` for the cumulative usage (ACP-02, ACP-06), after a walk that
    /// reached the history's end within the budget, or not.
    Stats {
        rebuild: Box<Rebuild>,
        walked: Walked,
    },
}

/// What a switch to a session's file is for: a load replays the conversation (ACP-06); a
/// resume (ACP-25, and a fork's or a restart's opening) does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SwitchFor {
    Load,
    Resume,
}

/// How far a load's history walk went (ACP-06): its facts count only when it reached the
/// history's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Walked {
    /// The whole history, within the budget.
    Whole,
    /// Cut at the budget, or the history could not be read.
    Cut,
}

impl Bridge {
    /// The one step of a load's or resume's chain (ACP-06, ACP-25): the agent answered
    /// `step`; what it brought is shown and the next step asked, or the editor answered.
    pub(super) fn load_step(
        &mut self,
        now: Instant,
        key: AgentKey,
        editor: RequestId,
        step: LoadStep,
        outcome: Result<ResponseData, CommandFailure>,
    ) {
        match (step, outcome) {
            (LoadStep::Switch { then }, Ok(ResponseData::Cancelled(data))) if !data.cancelled => {
                match then {
                    SwitchFor::Load => self.load_switched(now, key, editor),
                    SwitchFor::Resume => self.resume_switched(now, key, editor),
                }
            }
            (LoadStep::Switch { .. }, outcome) => self.open_failed(now, key, editor, outcome),
            (LoadStep::ResumeState, outcome) => self.resume_state(now, key, editor, outcome),
            (LoadStep::State, outcome) => self.load_state(now, key, editor, outcome),
            (LoadStep::Page { walk, rebuild }, Ok(ResponseData::MessagesPage(page))) => {
                self.load_page(now, key, editor, walk, rebuild, page)
            }
            // PAGE-07: paging refused in a way that falls back (busy, stale, not offered):
            // the whole history through `get_messages`, messages already replayed once.
            (LoadStep::Page { rebuild, .. }, Err(failure))
                if crate::client::history::falls_back(&failure) =>
            {
                self.load_legacy(now, key, editor, rebuild)
            }
            // ACP-06: a history that can't be read leaves the facts unknown.
            (LoadStep::Page { rebuild, .. }, _) => {
                self.load_stats(now, key, editor, rebuild, Walked::Cut)
            }
            (LoadStep::Legacy { rebuild }, outcome) => {
                self.load_whole_history(now, key, editor, rebuild, outcome)
            }
            (LoadStep::Stats { rebuild, walked }, outcome) => {
                let stats = stats_of(outcome);
                self.loaded(key, &editor, *rebuild, walked, stats.as_deref());
            }
        }
    }

    /// `session/load` (ACP-06): the agent is started in the cwd and switched to the
    /// session's file in our folder; then the title, the latest plan and usage are rebuilt.
    pub(super) fn load(
        &mut self,
        now: Instant,
        id: &RequestId,
        request: LoadSessionRequest,
    ) -> Result<(), Error> {
        self.check_stored(&request.session_id, &request.cwd, "load")?;
        // ACP-25: a session that is open is loaded again, in a new agent.
        self.reload(now, &request.session_id);
        self.switch_to(
            now,
            id,
            &request.session_id,
            request.cwd,
            request.mcp_servers,
            SwitchFor::Load,
        );
        Ok(())
    }

    /// A stored session opened in a new agent in `cwd` (ACP-06, ACP-25): the agent is
    /// switched to the session's file in our folder, then the session is replayed (a load)
    /// or not (a resume). The id is checked by the caller. The new session's key, unless
    /// there is no session folder.
    pub(super) fn switch_to(
        &mut self,
        now: Instant,
        id: &RequestId,
        session_id: &SessionId,
        cwd: PathBuf,
        mcp_servers: Vec<agent_client_protocol_schema::v1::McpServer>,
        then: SwitchFor,
    ) -> Option<AgentKey> {
        let dir = self.config.session_dir.clone()?;
        let name = &*session_id.0;
        let key = self.open_session(now, cwd.clone());
        if let Some(session) = self.sessions.get_mut(&key) {
            session.acp_id = session_id.clone();
            session.mapper.output_session = self.output_meta.then(|| name.to_owned());
            // ACP-33: kept to start them again with a new agent, on this file.
            session.restart.mcp = mcp_servers.clone();
            session.restart.stored = true;
            // ACP-35: the mode it was last in, in this process.
            session.config.mode = self.modes.recall(name);
            session.mapper.facts.requested(&session.config);
        }
        self.mcp_start(now, key, mcp_servers, &cwd);
        self.keys.insert(session_id.0.clone(), key);
        let path = dir.join(format!("{name}.jsonl"));
        let switch = Command::SwitchSession(SwitchSession {
            session_path: path.to_string_lossy().into_owned(),
            ..SwitchSession::default()
        });
        self.send(
            now,
            key,
            switch,
            |editor| Pending::Load {
                editor,
                step: LoadStep::Switch { then },
            },
            id,
        );
        Some(key)
    }

    /// A load's history walk is over: `get_session_stats` for the cumulative usage (ACP-02).
    /// ACP-06: the replay says where it stopped.
    pub(super) fn replay_cut(&mut self, key: AgentKey) {
        let notice = ContentChunk::new(ContentBlock::Text(TextContent::new(REPLAY_CUT_NOTICE)));
        self.session_update(key, SessionUpdate::AgentMessageChunk(notice));
    }

    /// `session/load` from an agent that does not page: `get_messages` (PAGE-07, ACP-06).
    pub(super) fn load_legacy(
        &mut self,
        now: Instant,
        key: AgentKey,
        editor: RequestId,
        rebuild: Box<Rebuild>,
    ) {
        self.send(
            now,
            key,
            crate::client::history::legacy_command(),
            |editor| Pending::Load {
                editor,
                step: LoadStep::Legacy { rebuild },
            },
            &editor,
        );
    }

    pub(super) fn load_stats(
        &mut self,
        now: Instant,
        key: AgentKey,
        editor: RequestId,
        rebuild: Box<Rebuild>,
        walked: Walked,
    ) {
        self.send(
            now,
            key,
            Command::from(GetSessionStats::default()),
            |editor| Pending::Load {
                editor,
                step: LoadStep::Stats { rebuild, walked },
            },
            &editor,
        );
    }

    /// A load's end (ACP-06): the rebuilt facts shown (or left unknown), then the answer.
    /// The history's facts count only when the walk reached its end ([`Walked::Whole`]); the agent's
    /// `get_session_stats` totals replace the cumulative usage (ACP-02) and its `get_state`
    /// todos stand in for a history with no `todo` result.
    pub(super) fn loaded(
        &mut self,
        key: AgentKey,
        editor: &RequestId,
        rebuild: Rebuild,
        walked: Walked,
        stats: Option<&SessionStatsData>,
    ) {
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        let mut updates = Vec::new();
        let agent_commands = std::mem::take(&mut session.mapper.facts.agent_commands);
        let (facts, plan) = if walked == Walked::Whole {
            (rebuild.facts, rebuild.plan.or(rebuild.state_plan))
        } else {
            (Facts::default(), rebuild.state_plan)
        };
        session.mapper.facts = facts;
        session.mapper.facts.agent_commands = agent_commands;
        session.mapper.facts.context_window = rebuild.context_window;
        session.mapper.facts.requested(&session.config);
        if let Some(stats) = stats {
            session.mapper.facts.session_stats(stats);
        }
        if let Some(plan) = plan {
            session.mapper.facts.plan_size = Some(plan.entries.len());
            updates.push(SessionUpdate::Plan(plan));
        }
        if session.mapper.usage_meta {
            if let Some(update) = session.mapper.facts.usage_update() {
                updates.push(SessionUpdate::SessionInfoUpdate(update));
            }
        }
        if let Some(update) = session.mapper.facts.context_update() {
            updates.push(SessionUpdate::UsageUpdate(update));
        }
        let acp_id = session.acp_id.clone();
        let commands = session.mapper.facts.commands();
        let options = session.config.options();
        let modes = mode::state(session.config.mode);
        for update in updates {
            self.session_update(key, update);
        }
        self.editor(rpc::result_line(
            editor,
            &LoadSessionResponse::new()
                .modes(modes)
                .config_options(options),
        ));
        self.editor(commands_line(&acp_id, commands));
    }
}

impl Bridge {
    /// ACP-06: the agent switched to the session's file: the plan cleared, `get_state` next.
    pub(super) fn load_switched(&mut self, now: Instant, key: AgentKey, editor: RequestId) {
        // ACP-06: the obsolete plan is cleared before new state is shown.
        self.session_update(key, SessionUpdate::Plan(Plan::new(Vec::new())));
        self.send(
            now,
            key,
            Command::from(GetState::default()),
            |editor| Pending::Load {
                editor,
                step: LoadStep::State,
            },
            &editor,
        );
    }

    /// ACP-06: a load's `get_state`: the title, window and todos, the models beside the walk,
    /// then the first page (or the whole history from an agent that does not page).
    pub(super) fn load_state(
        &mut self,
        now: Instant,
        key: AgentKey,
        editor: RequestId,
        outcome: Result<ResponseData, CommandFailure>,
    ) {
        let mut rebuild = Box::<Rebuild>::default();
        rebuild.replay.output_session = self
            .sessions
            .get(&key)
            .and_then(|s| s.mapper.output_session.clone());
        rebuild.replay.cwd = self.sessions.get(&key).and_then(|s| s.mapper.cwd.clone());
        if let Ok(ResponseData::State(state)) = outcome {
            if let Some(session) = self.sessions.get_mut(&key) {
                session.learn_state(&state);
            }
            // ACP-02: the window; ACP-06: the agent's todos, for a history that
            // shows no `todo` result.
            rebuild.context_window = state.model.as_ref().and_then(|m| m.context_window);
            rebuild.state_plan = state
                .todo_phases
                .as_ref()
                .and_then(Value::as_array)
                .map(|phases| plan_from_phases(phases));
            if let Some(title) = state.session_name.filter(|t| !t.is_empty()) {
                let update = SessionInfoUpdate::new().title(title);
                self.session_update(key, SessionUpdate::SessionInfoUpdate(update));
            }
        }
        // ACP-24: the models, beside the walk.
        if let Some(session) = self.sessions.get_mut(&key) {
            session.learn_protocol();
        }
        self.ask(
            now,
            key,
            Command::from(GetAvailableModels::default()),
            Pending::Models,
        );
        // PAGE-07: an agent that did not negotiate v2 (pi) does not page.
        let paged = self
            .sessions
            .get(&key)
            .is_some_and(|s| s.client.protocol() == crate::frame::ProtocolVersion::V2);
        if paged {
            self.send(
                now,
                key,
                Walk::first(),
                |editor| Pending::Load {
                    editor,
                    step: LoadStep::Page {
                        walk: Walk::default(),
                        rebuild,
                    },
                },
                &editor,
            );
        } else {
            self.load_legacy(now, key, editor, rebuild);
        }
    }

    /// ACP-06: a history page replayed; the next page, or the stats at the end or past the budget.
    pub(super) fn load_page(
        &mut self,
        now: Instant,
        key: AgentKey,
        editor: RequestId,
        mut walk: Walk,
        mut rebuild: Box<Rebuild>,
        page: MessagesPageData,
    ) {
        // ACP-06: the conversation replayed as the pages come, before the answer.
        for update in rebuild.page(&page.messages) {
            self.session_update(key, update);
        }
        match walk.after(&page) {
            Next::Page(command) => self.send(
                now,
                key,
                command,
                |editor| Pending::Load {
                    editor,
                    step: LoadStep::Page { walk, rebuild },
                },
                &editor,
            ),
            Next::End => self.load_stats(now, key, editor, rebuild, Walked::Whole),
            Next::OutOfBudget => {
                self.replay_cut(key);
                self.load_stats(now, key, editor, rebuild, Walked::Cut)
            }
        }
    }

    /// ACP-06, PAGE-07: the whole history from `get_messages`, replayed within the same budget.
    pub(super) fn load_whole_history(
        &mut self,
        now: Instant,
        key: AgentKey,
        editor: RequestId,
        mut rebuild: Box<Rebuild>,
        outcome: Result<ResponseData, CommandFailure>,
    ) {
        let walked = match crate::client::history::legacy(outcome) {
            Ok(messages) => {
                // ACP-06: within the same budget as the pages, the oldest first.
                let shown = messages.len().min(MAX_REPLAY_MESSAGES);
                for update in rebuild.page(&messages[..shown]) {
                    self.session_update(key, update);
                }
                if shown < messages.len() {
                    self.replay_cut(key);
                }
                if shown == messages.len() {
                    Walked::Whole
                } else {
                    Walked::Cut
                }
            }
            Err(_) => Walked::Cut,
        };
        self.load_stats(now, key, editor, rebuild, walked)
    }
}
