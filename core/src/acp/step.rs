//! One session's side of the bridge's drain: [`AcpSession::step`] takes its client's next
//! action (a write for its agent, a stop, an answer it waited for, an event mapped for the
//! editor) and [`AcpSession::answer`] the agent's answers that only the session needs. What
//! needs more than the session (the key table, the sign-in, the dialogs, the MCP servers'
//! processes, the editor's writes) comes back to the router as a [`Step`] or [`Routed`].

use super::outbox::{Drain, Outbox};
use super::review::{Edited, EditorWrites, HeldCards};
use super::*;
use crate::wire::{GetState, HostToolCall};

/// What a session's client action leaves to the router (`Bridge::drain`).
#[derive(Debug)]
pub(super) enum Step {
    /// The client has no action left and no held prompt started: the drain is over.
    Idle,
    /// The session took the action itself: the router asks for the next one.
    Taken,
    /// An agent's answer that needs the router.
    Answer(Routed),
    /// ACP-41: an event of the sign-in's agent.
    SignIn(ClientEvent),
    /// MCP-05, MCP-08: the agent calls a host tool of the session's MCP servers.
    McpCall(HostToolCall),
    /// MCP-05: the agent withdrew a host tool call.
    McpCancel(String),
    /// MCP-03: the agent answered a `set_host_tools`.
    McpRegistered(AgentRequest, Option<CommandFailure>),
    /// ACP-08, ACP-09: a dialog asked or withdrawn.
    Dialog(ClientEvent),
    /// The agent is gone: the session's lines are out; the router forgets what it holds
    /// for the session (the editor's writes, its dialogs) and, when it was opening, its id.
    Closed(ClosedWhile),
    /// ACP-38: a finished call's files go to the editor; then the turn ends when it did.
    Review(Edited, TurnEnd),
}

/// Where a session that lost its agent was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ClosedWhile {
    /// Answered open.
    Open,
    /// Still opening: the opening failed, and its id is forgotten.
    Opening,
}

/// Whether an event ended the session's turn (ACP-02).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TurnEnd {
    Ended,
    Running,
}

/// Whose the session's client events are: its own, or the sign-in's (ACP-41: the login
/// agent's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EventsTo {
    Session,
    SignIn,
}

/// An agent's answer the session cannot take alone.
#[derive(Debug)]
pub(super) enum Routed {
    /// `session/new`'s `get_state` (ACP-06, ACP-24): the ACP id is checked against the key
    /// table and the session folder.
    NewState {
        editor: RequestId,
        outcome: Result<ResponseData, CommandFailure>,
    },
    /// An opening's models are in (ACP-24): the session opens under `acp_id`.
    Open {
        editor: RequestId,
        acp_id: SessionId,
        opening: open::Opening,
    },
    /// A step of `session/load` or `session/resume` (ACP-06, ACP-25).
    Load {
        editor: RequestId,
        step: LoadStep,
        outcome: Result<ResponseData, CommandFailure>,
    },
    /// ACP-41: the login agent's `login`.
    Login(Result<ResponseData, CommandFailure>),
}

impl AcpSession {
    /// Sends the agent a command whose answer `pending` says what to do with; whether it
    /// went. The client's actions are the caller's to drain.
    pub(super) fn ask(&mut self, now: Instant, command: Command, pending: Pending) -> bool {
        self.begin_waiting(now);
        let sent = self
            .client
            .handle(now, client::Input::Call(Call::Send(command)));
        let asked = sent.request().map(|request| {
            self.pending.insert(request, pending);
        });
        asked.is_some()
    }

    /// Sends the agent a command whose answer the session turns into the editor's request
    /// `editor`; one that could not go fails that request.
    pub(super) fn send(
        &mut self,
        now: Instant,
        command: Command,
        pending: impl FnOnce(RequestId) -> Pending,
        editor: &RequestId,
        out: &mut Outbox<'_>,
    ) -> Drain {
        if !self.ask(now, command, pending(editor.clone())) {
            let error = Error::internal_error().data(json!("the agent could not be asked"));
            out.editor(rpc::error_line(editor, &error));
        }
        Drain::Needed
    }

    /// Takes the client's next action: what only the session needs is done here, the rest
    /// handed to the router.
    pub(super) fn step(
        &mut self,
        now: Instant,
        writes: EditorWrites,
        events: EventsTo,
        out: &mut Outbox<'_>,
    ) -> Step {
        let Some(action) = self.client.poll_action() else {
            let mut lines = Vec::new();
            // ACP-30: a command's output held while this read went on goes now.
            turn::held_output(self, &mut lines);
            // ACP-28: a prompt held behind a cancelled turn starts once it is answered.
            let started = next::start_next(self, now, &mut lines);
            for bytes in lines {
                out.editor(bytes);
            }
            return if started { Step::Taken } else { Step::Idle };
        };
        match action {
            client::Action::Write { bytes } => {
                self.stdin_waiting = self.stdin_waiting.saturating_add(bytes.len());
                out.push(Action::Agent {
                    session: self.key,
                    bytes,
                });
            }
            // ACP-12: every stop closes stdin first, and kills after the grace.
            client::Action::StopAgent => {
                let _closing = self.stop_agent(now, out);
            }
            // The bridge's clients send no host tool results, and it keeps no store.
            client::Action::SpillWrite { id, .. } => {
                let no_store = client::Input::SpillDone(id, Err(SaveFailure::no_store()));
                self.client.handle(now, no_store);
            }
            client::Action::Event(ClientEvent::Response {
                request, outcome, ..
            }) if self.pending.contains_key(&request) => {
                let pending = self.pending.remove(&request).expect("checked");
                if let Some(routed) = self.answer(now, pending, outcome, out) {
                    return Step::Answer(routed);
                }
            }
            // ACP-41: the login agent's events are the sign-in's.
            client::Action::Event(event) if events == EventsTo::SignIn => {
                return Step::SignIn(event)
            }
            // MCP-05, MCP-08: host tool calls go to the session's MCP servers.
            client::Action::Event(ClientEvent::HostToolCall(call)) => return Step::McpCall(call),
            client::Action::Event(ClientEvent::HostToolCancelled { id }) => {
                return Step::McpCancel(id)
            }
            client::Action::Event(ClientEvent::Response {
                request, outcome, ..
            }) if self.mcp.is_registration(request) => {
                return Step::McpRegistered(request, outcome.err())
            }
            // ACP-08, ACP-09: dialogs go to the editor.
            client::Action::Event(
                event @ (ClientEvent::UiRequest(_) | ClientEvent::UiWithdrawn { .. }),
            ) => return Step::Dialog(event),
            client::Action::Event(ClientEvent::Closed { error }) => {
                return Step::Closed(self.closed(error, out))
            }
            client::Action::Event(event) => {
                // ACP-38: a finished write's or edit's files go to the editor first.
                let edited = review::edited(self, &event, writes);
                let mut lines = Vec::new();
                let ended = session_event(self, event, &mut lines);
                for bytes in lines {
                    out.editor(bytes);
                }
                let turn = if ended {
                    TurnEnd::Ended
                } else {
                    TurnEnd::Running
                };
                match edited {
                    Some(edited) => return Step::Review(edited, turn),
                    None if turn == TurnEnd::Ended => {
                        let _drained = self.turn_ended(now, out);
                    }
                    None => {}
                }
            }
        }
        Step::Taken
    }

    /// The agent is gone: whatever waited on it fails, an opening with it (a restart's
    /// prompt too, ACP-33); held cards complete before the turn's error (ACP-38).
    fn closed(&mut self, error: client::SessionError, out: &mut Outbox<'_>) -> ClosedWhile {
        let mut was = ClosedWhile::Open;
        let mut lines = Vec::new();
        for (_, p) in std::mem::take(&mut self.pending) {
            let error = Error::internal_error().data(json!(error.to_string()));
            if let Some(editor) = p.editor() {
                lines.push(rpc::error_line(editor, &error));
            }
            if p.is_opening() {
                was = ClosedWhile::Opening;
            }
        }
        // An opening held for its MCP servers fails too; a restart's prompt (ACP-33) with it.
        self.restart.prompt = None;
        if let Some(editor) = self.mcp.take_held_open() {
            let error = Error::internal_error().data(json!(error.to_string()));
            lines.push(rpc::error_line(&editor, &error));
            was = ClosedWhile::Opening;
        }
        session_event(self, ClientEvent::Closed { error }, &mut lines);
        self.review_forget(HeldCards::Complete, out);
        for bytes in lines {
            out.editor(bytes);
        }
        was
    }

    /// The agent answered what `pending` waited for: what only the session needs is done
    /// here (the options, a turn's usage, a read), the rest handed to the router. A command
    /// it sends next is drained by the loop it runs in (`Bridge::drain`).
    pub(super) fn answer(
        &mut self,
        now: Instant,
        pending: Pending,
        outcome: Result<ResponseData, CommandFailure>,
        out: &mut Outbox<'_>,
    ) -> Option<Routed> {
        match (pending, outcome) {
            // Opening: `session/new` (`open`).
            (Pending::NewState { editor }, outcome) => {
                return Some(Routed::NewState { editor, outcome })
            }
            (
                Pending::NewModels {
                    editor,
                    acp_id,
                    opening,
                    ..
                },
                outcome,
            ) => {
                // ACP-24: an agent that offers no models (or refuses the command) gets no
                // model option, and the session opens all the same.
                if let Ok(ResponseData::Models(models)) = &outcome {
                    self.config.models(&models.models);
                }
                return Some(Routed::Open {
                    editor,
                    acp_id,
                    opening,
                });
            }
            // `session/load` and `session/resume` (`load`).
            (Pending::Load { editor, step }, outcome) => {
                return Some(Routed::Load {
                    editor,
                    step,
                    outcome,
                })
            }
            // ACP-41: the login agent's `login`.
            (Pending::Login { .. }, outcome) => return Some(Routed::Login(outcome)),
            // The options (`config`).
            (Pending::Models, outcome) => self.models_answered(outcome, out),
            (Pending::SetConfig { editor }, Ok(_)) => {
                let config_state = |editor| Pending::ConfigState { editor };
                let _drained = self.send(
                    now,
                    Command::from(GetState::default()),
                    config_state,
                    &editor,
                    out,
                );
            }
            (Pending::SetConfig { editor }, Err(failure)) => {
                let error = Error::invalid_params().data(json!(failure.error));
                out.editor(rpc::error_line(&editor, &error));
            }
            (Pending::ConfigState { editor }, outcome) => self.config_state(editor, outcome, out),
            // The turn (`turn`).
            (Pending::TurnStats { .. }, outcome) => self.turn_stats_answered(outcome, out),
            // ACP-21: the probe's answer only showed the agent alive.
            (Pending::Probe, _) => {}
            // Reads (`reads`).
            (
                Pending::ReadCheck {
                    editor,
                    params,
                    mut walk,
                },
                outcome,
            ) => self.read_check(now, editor, params, &mut walk, outcome, out),
            (Pending::Read { editor, params, .. }, outcome) => {
                out.editor(reads::read_answered(&editor, &params, outcome))
            }
        }
        None
    }
}

impl Bridge {
    /// Routes what session `key`'s step handed back.
    pub(super) fn route_step(&mut self, now: Instant, key: AgentKey, step: Step) {
        match step {
            Step::Idle | Step::Taken => {}
            Step::Answer(routed) => self.routed(now, key, routed),
            Step::SignIn(event) => self.login_event(now, key, event),
            Step::McpCall(call) => self.on_session_mcp(now, key, |s| s.mcp_call(now, call)),
            Step::McpCancel(id) => self.on_session_mcp(now, key, |s| s.mcp_cancel(now, id)),
            Step::McpRegistered(request, failure) => self.mcp_registered(key, request, failure),
            Step::Dialog(event) => self.dialog_event(now, key, event),
            Step::Closed(was) => {
                if was == ClosedWhile::Opening {
                    self.keys.retain(|_, k| *k != key);
                }
                // ACP-38: nothing waits for the editor's writes now.
                self.edits.forget(key);
                // ACP-09: nothing answers the editor's open requests now.
                self.forget_dialogs(key);
            }
            Step::Review(edited, turn) => {
                self.review_begin(now, key, edited);
                if turn == TurnEnd::Ended {
                    self.on_session(now, key, |session, out| session.turn_ended(now, out));
                }
            }
        }
    }

    /// An agent's answer that needs the router.
    fn routed(&mut self, now: Instant, key: AgentKey, routed: Routed) {
        match routed {
            Routed::NewState {
                editor,
                outcome: Ok(ResponseData::State(state)),
            } => self.opened_state(now, key, editor, *state),
            Routed::NewState { editor, .. } if self.config.session_dir.is_none() => {
                self.opened_without_state(now, key, editor)
            }
            Routed::NewState { editor, outcome } => self.open_failed(now, key, editor, outcome),
            Routed::Open {
                editor,
                acp_id,
                opening,
            } => self.opened(now, key, acp_id, &editor, opening),
            Routed::Load {
                editor,
                step,
                outcome,
            } => self.load_step(now, key, editor, step, outcome),
            Routed::Login(outcome) => self.login_answered(now, outcome),
        }
    }
}
