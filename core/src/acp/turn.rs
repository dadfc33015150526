//! A prompt's turn (ACP-01, 02, 10, 11, 27): `session/prompt` sent to the agent (or queued
//! behind the running one, `queue`), `session/cancel`, the session's client events mapped to
//! `session/update`s, and the end of the turn with its usage and stop reason.

use super::outbox::{Drain, Outbox};
use super::*;

impl Bridge {
    pub(super) fn prompt(
        &mut self,
        now: Instant,
        id: &RequestId,
        request: PromptRequest,
    ) -> Result<(), Error> {
        // ACP-33: a session whose agent has exited starts it again, then runs the prompt.
        if let Some(outcome) = self.restart_for_prompt(now, id, &request) {
            return outcome;
        }
        let session_id = request.session_id;
        let key = self.usable(&session_id)?;
        let Some(session) = self.sessions.get_mut(&key) else {
            return Err(Error::session_not_found(session_id));
        };
        let in_use = |t: &Turn| t.editor == *id;
        if session.turn.iter().chain(&session.queued).any(in_use) || next::is_held(session, id) {
            // ACP-07: two prompts of one id could not be told apart in their answers.
            return Err(Error::invalid_request().data(json!(
                "a prompt of this request id is running or queued in this session"
            )));
        }
        // ACP-14..16: too many images or image bytes is refused before anything is sent.
        let content = prompt::convert(
            &request.prompt,
            prompt::PromptImages::for_agent(session.agent),
        )?;
        let text = content.message;
        if is_status_prompt(&text) {
            // ACP-01: answered here; no model turn, and the text after it is not executed.
            session.mapper.facts.requested(&session.config);
            let status = session.mapper.facts.status_text();
            let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(status)));
            let update =
                SessionNotification::new(session_id, SessionUpdate::AgentMessageChunk(chunk));
            self.editor(rpc::update_line(&update));
            self.editor(rpc::result_line(
                id,
                &PromptResponse::new(StopReason::EndTurn),
            ));
            return Ok(());
        }
        if next::holds_next(session) {
            // ACP-28: after a cancel, the next turn, not a follow-up of the cancelled one.
            return next::hold(
                session,
                id,
                PromptContent {
                    message: text,
                    ..content
                },
            );
        }
        if session.turn.is_some() && session.queued.len() >= MAX_QUEUED_PROMPTS {
            // ACP-27: what may wait behind the running prompt is bounded.
            return Err(Error::invalid_request().data(json!(format!(
                "{MAX_QUEUED_PROMPTS} prompts are queued in this session already: \
                 try again once one has been answered"
            ))));
        }
        // ACP-27: behind a running prompt, the agent queues it as a follow-up.
        let queued = session.turn.is_some();
        let command = Command::Prompt(Prompt {
            message: text,
            images: (!content.images.is_empty()).then_some(content.images),
            streaming_behavior: queued.then_some(StreamingBehavior::FollowUp),
            ..Prompt::default()
        });
        session.begin_waiting(now);
        let started = session
            .client
            .handle(now, client::Input::Call(Call::Send(command)));
        let prompt = started
            .request()
            .ok_or_else(|| Error::internal_error().data(json!("the prompt was not sent")))?;
        let turn = Turn {
            editor: id.clone(),
            prompt,
            cancel: Cancel::NotRequested,
            user_seen: false,
        };
        let mut notes = content.notes;
        if queued {
            notes.insert(0, queue::QUEUED_NOTICE.to_owned());
            session.queued.push_back(turn);
        } else {
            session.mapper.start_turn();
            session.turn = Some(turn);
        }
        // ACP-14..16: what did not reach the agent is said in the turn (ACP-27: the running
        // one, for a prompt queued behind it).
        for note in &notes {
            let update = session.mapper.notice(note);
            let notification = SessionNotification::new(session_id.clone(), update);
            self.actions.push_back(Action::Editor {
                bytes: rpc::update_line(&notification),
            });
        }
        self.drain(now, key);
        Ok(())
    }
}

impl AcpSession {
    /// The turn is cancelled: the agent is told to abort, once.
    pub(super) fn cancel_turn(&mut self, now: Instant) -> Drain {
        let Some(turn) = self.turn.as_mut() else {
            return Drain::NotNeeded;
        };
        if turn.cancel == Cancel::Requested {
            return Drain::NotNeeded;
        }
        turn.cancel = Cancel::Requested;
        self.client.handle(
            now,
            client::Input::Call(Call::Send(Command::from(Abort::default()))),
        );
        Drain::Needed
    }

    /// ACP-02: a turn ended; the agent's `get_session_stats` gives the cumulative usage
    /// before the prompt is answered (a command that cannot be sent: the bridge's own sum).
    pub(super) fn ask_turn_stats(&mut self, now: Instant, out: &mut Outbox<'_>) -> Drain {
        let sent = self.client.handle(
            now,
            client::Input::Call(Call::Send(Command::from(GetSessionStats::default()))),
        );
        match sent.request() {
            Some(request) => {
                let deadline = now + STATS_BUDGET;
                self.pending
                    .insert(request, Pending::TurnStats { deadline });
            }
            None => {
                let mut lines = Vec::new();
                end_turn(self, None, &mut lines);
                for bytes in lines {
                    out.editor(bytes);
                }
            }
        }
        Drain::Needed
    }
}

/// One client event of a session: `session/update`s, or the prompt's answer; true when the
/// prompt's turn ended and waits for the end-of-turn usage (ACP-02).
/// The output tails a session's running commands sent since the last were shown (ACP-30),
/// as `session/update` lines.
pub(super) fn held_output(session: &mut AcpSession, out: &mut Vec<Vec<u8>>) {
    for update in session.mapper.held_output() {
        let notification = SessionNotification::new(session.acp_id.clone(), update);
        out.push(rpc::update_line(&notification));
    }
}

pub(super) fn session_event(
    session: &mut AcpSession,
    event: ClientEvent,
    out: &mut Vec<Vec<u8>>,
) -> bool {
    let id = &session.acp_id.clone();
    let is_prompt = |request: &AgentRequest, turn: &Option<Turn>| {
        turn.as_ref().is_some_and(|t| t.prompt == *request)
    };
    // ACP-27: a queued prompt's own answer.
    if queue::queued_answer(session, &event, out) {
        return false;
    }
    // ACP-37: the answer to the subagent subscription shows nothing.
    if subagent::subscription_answer(session, &event) {
        return false;
    }
    match event {
        ClientEvent::Frame {
            frame: AgentFrame::Ready(_),
        } => {
            // OUT-01: no handles unless this agent serves stored-output reads (its client
            // knows).
            let serves = session.client.serves_read_output();
            session.mapper.output_session = session.mapper.output_session.take().filter(|_| serves);
        }
        ClientEvent::Frame {
            frame: AgentFrame::AvailableCommandsUpdate(update),
        } => {
            session.mapper.facts.agent_commands = status::agent_commands(&update.commands);
            if !id.0.is_empty() {
                out.push(commands_line(id, session.mapper.facts.commands()));
            }
        }
        // ACP-05: an item of a kind this version does not know.
        ClientEvent::Frame {
            frame: AgentFrame::Unknown(item) | AgentFrame::Event(SessionEvent::Unknown(item)),
        } => {
            for update in session.mapper.unknown_item(&item) {
                let notification = SessionNotification::new(id.clone(), update);
                out.push(rpc::update_line(&notification));
            }
        }
        ClientEvent::Frame {
            frame: AgentFrame::Event(event),
        } => {
            if let SessionEvent::ToolExecutionEnd(end) = &event {
                // OUT-06: what this session's tool results showed, bounded.
                let details = end.result.as_ref().and_then(|r| r.get("details"));
                if let Some(stored) = history::stored_output(details) {
                    if session.seen_outputs.len() < MAX_SEEN_OUTPUTS {
                        session
                            .seen_outputs
                            .insert(stored.output_ref.to_string(), stored);
                    }
                }
            }
            // ACP-27: the run goes on with a queued prompt: the running one is answered.
            queue::user_message_starts(session, &event, out);
            let mut updates = session.mapper.event(&event);
            // ACP-24: a level the agent changed itself moves the option.
            if let SessionEvent::ThinkingLevelChanged(level) = &event {
                let level = level.thinking_level.as_ref().or(level.level.as_ref());
                if level.is_some_and(|l| session.config.thinking_changed(l)) {
                    session.mapper.facts.requested(&session.config);
                    let options = ConfigOptionUpdate::new(session.config.options());
                    updates.push(SessionUpdate::ConfigOptionUpdate(options));
                }
            }
            for update in updates {
                let notification = SessionNotification::new(id.clone(), update);
                out.push(rpc::update_line(&notification));
            }
        }
        ClientEvent::Response {
            request,
            outcome: Err(failure),
            ..
        }
        | ClientEvent::PromptFailed { request, failure }
            if is_prompt(&request, &session.turn) =>
        {
            if let Some(turn) = session.turn.take() {
                let mut error = Error::internal_error().data(json!(failure.to_string()));
                // ACP-42: a prompt refused for want of credentials (pi's `No API key found`,
                // `No model selected`): its text in the turn, the prompt `auth_required`.
                if super::auth::names_missing_credentials(&failure.error) {
                    let line = super::notices::line("error", &failure.error);
                    let update = session.mapper.notice(&line);
                    let notification = SessionNotification::new(id.clone(), update);
                    out.push(rpc::update_line(&notification));
                    error = super::auth::sign_in_required(&failure.error);
                }
                out.push(rpc::error_line(&turn.editor, &error));
                // ACP-27: what was queued behind it runs on its own.
                queue::turn_answered(session, Cancel::NotRequested, out);
            }
        }
        // ACP-10: a prompt the agent answered itself (a builtin command) ends the turn,
        // acknowledged so (`agentInvoked: false`) or later (`prompt_result`).
        ClientEvent::PromptLocalOnly { request } if is_prompt(&request, &session.turn) => {
            finish_turn(session, out);
        }
        // CALL-03: `agentInvoked: false` (omp) or `disposition: "handled"` (pi 1.6).
        ClientEvent::Response {
            request,
            outcome: Ok(ResponseData::Prompt(data)),
            ..
        } if data.is_local() && is_prompt(&request, &session.turn) => {
            finish_turn(session, out);
        }
        // ACP-10, ACP-11: what the agent says outside the model's text.
        ClientEvent::Frame { frame } => {
            for update in frame_updates(session, &frame) {
                let notification = SessionNotification::new(id.clone(), update);
                out.push(rpc::update_line(&notification));
            }
        }
        // CALL-09: the turn is over; the prompt is answered with its stop reason once the
        // end-of-turn usage is known (ACP-02).
        ClientEvent::TurnFinished => {
            // ACP-27: a queued prompt not started in this run starts one of its own.
            return !queue::run_ended_with_queue(session, out) && session.turn.is_some();
        }
        ClientEvent::Closed { error } => {
            let error = Error::internal_error().data(json!(error.to_string()));
            for editor in queue::take_prompts(session) {
                out.push(rpc::error_line(&editor, &error));
            }
            // ACP-37: a subagent still running ends with its agent.
            for update in session.subagents.agent_gone() {
                let notification = SessionNotification::new(id.clone(), update);
                out.push(rpc::update_line(&notification));
            }
        }
        _ => {}
    }
    false
}

/// What a frame that is no event shows (ACP-10, ACP-11): a builtin command's output, the
/// title, a config change, an extension's error.
pub(super) fn frame_updates(session: &mut AcpSession, frame: &AgentFrame) -> Vec<SessionUpdate> {
    let mapper = &mut session.mapper;
    match frame {
        AgentFrame::CommandOutput(output) if !output.text.is_empty() => {
            let mut text = bound_snapshot(&output.text);
            if !text.ends_with('\n') {
                text.push('\n');
            }
            let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
            vec![SessionUpdate::AgentMessageChunk(chunk)]
        }
        // ACP-26: a title reaches the editor when it changes.
        AgentFrame::SessionInfoUpdate(info) => match info.title.as_deref() {
            Some(title) if !title.is_empty() => {
                let title = map::title(&map::withhold_credential_uris(title), None, None);
                if session.title.as_deref() == Some(title.as_str()) {
                    return Vec::new();
                }
                session.title = Some(title.clone());
                vec![SessionUpdate::SessionInfoUpdate(
                    SessionInfoUpdate::new().title(title),
                )]
            }
            _ => Vec::new(),
        },
        // ACP-10, ACP-24: a change a command made is shown, and the options follow it.
        AgentFrame::ConfigUpdate(update) => {
            let mut updates = vec![mapper.notice(&notices::config_update(update))];
            if session.config.update(update) {
                mapper.facts.requested(&session.config);
                let options = ConfigOptionUpdate::new(session.config.options());
                updates.push(SessionUpdate::ConfigOptionUpdate(options));
            }
            updates
        }
        AgentFrame::ExtensionError(error) => {
            vec![mapper.notice(&notices::extension_error(error))]
        }
        // ACP-37: omp's subagents on cards of their own.
        AgentFrame::SubagentLifecycle(_) | AgentFrame::SubagentProgress(_) => {
            session.subagents.frame(frame)
        }
        _ => Vec::new(),
    }
}

/// An `available_commands_update` notification.
pub(super) fn commands_line(id: &SessionId, commands: Vec<AvailableCommand>) -> Vec<u8> {
    let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands));
    rpc::update_line(&SessionNotification::new(id.clone(), update))
}

/// The end of a model turn (ACP-02): the agent's totals (`get_session_stats`) replace the
/// cumulative usage, else the bridge's own sum stands; then the `muse/usage` metadata (when
/// negotiated), the standard `usage_update` (when the window is known) and the prompt's
/// answer.
/// The totals a `get_session_stats` answer gives (ACP-02): none when it failed.
pub(super) fn stats_of(
    outcome: Result<ResponseData, CommandFailure>,
) -> Option<Box<SessionStatsData>> {
    match outcome {
        Ok(ResponseData::SessionStats(stats)) => Some(stats),
        _ => None,
    }
}

pub(super) fn end_turn(
    session: &mut AcpSession,
    stats: Option<&SessionStatsData>,
    out: &mut Vec<Vec<u8>>,
) {
    if session.turn.is_none() {
        return;
    }
    let id = session.acp_id.clone();
    let facts = &mut session.mapper.facts;
    if let Some(stats) = stats {
        facts.session_stats(stats);
    }
    let mut updates = Vec::new();
    if session.mapper.usage_meta {
        if let Some(update) = facts.usage_update() {
            updates.push(SessionUpdate::SessionInfoUpdate(update));
        }
    }
    if let Some(update) = facts.context_update() {
        updates.push(SessionUpdate::UsageUpdate(update));
    }
    // ACP-26: the session's `updatedAt`, the time of its last message.
    if let Some(ms) = facts.last_message_ms {
        let update = SessionInfoUpdate::new().updated_at(crate::formats::rfc3339(ms));
        updates.push(SessionUpdate::SessionInfoUpdate(update));
    }
    for update in updates {
        let notification = SessionNotification::new(id.clone(), update);
        out.push(rpc::update_line(&notification));
    }
    finish_turn(session, out);
}

pub(super) fn finish_turn(session: &mut AcpSession, out: &mut Vec<Vec<u8>>) {
    if let Some(turn) = session.turn.take() {
        let reason = session.mapper.stop_reason(turn.cancel);
        match session.mapper.sign_in_error() {
            // ACP-42: the editor offers sign-in; the error was shown in the turn (ACP-11).
            Some(error) if turn.cancel == Cancel::NotRequested => {
                let error = super::auth::sign_in_required(error);
                out.push(rpc::error_line(&turn.editor, &error));
            }
            _ => out.push(rpc::result_line(&turn.editor, &PromptResponse::new(reason))),
        }
        queue::turn_answered(session, turn.cancel, out);
    }
}

impl AcpSession {
    /// ACP-02: the end-of-turn `get_session_stats`: the agent's totals replace the bridge's
    /// own sum (kept when the command fails); the prompt is answered.
    pub(super) fn turn_stats_answered(
        &mut self,
        outcome: Result<ResponseData, CommandFailure>,
        out: &mut Outbox<'_>,
    ) {
        let stats = stats_of(outcome);
        let mut lines = Vec::new();
        end_turn(self, stats.as_deref(), &mut lines);
        for bytes in lines {
            out.editor(bytes);
        }
    }
}
