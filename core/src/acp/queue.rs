//! ACP-27 (ours): a prompt while one runs is queued, not refused. The bridge sends it to the
//! agent at once as a `prompt` with `streamingBehavior: "followUp"` (omp and pi hold it until
//! the running work is done, then go on in the same run with it as the next user message),
//! says so in the running turn ([`QUEUED_NOTICE`]) and keeps the editor's request behind the
//! turn. The running prompt is answered when the agent starts on the queued one (the run's
//! next user `message_start`), which then becomes the turn; one that the agent starts as a
//! run of its own (it was idle when the follow-up came) becomes the turn at the running one's
//! `agent_end`. A queued prompt the agent refuses is answered with its error, one it answers
//! itself (a builtin command) `end_turn`, at once; a cancel answers the running prompt and
//! every queued one `cancelled` when the run ends. At most [`MAX_QUEUED_PROMPTS`] wait.

use agent_client_protocol_schema::v1::{Error, PromptResponse, StopReason};
use serde_json::json;

use super::map::Cancel;
use super::{end_turn, rpc, AcpSession};
use crate::client::{ClientEvent, RequestId as AgentRequest};
use crate::wire::{AgentMessage, ResponseData, SessionEvent};

/// The most prompts that may wait behind a session's running one (ACP-27); past it a prompt
/// is refused (-32600).
pub const MAX_QUEUED_PROMPTS: usize = 8;

/// What the running turn shows when a prompt is queued behind it (ACP-27).
pub(crate) const QUEUED_NOTICE: &str = "Queued: this prompt runs when the current one ends.";

/// A user message starts (ACP-27): the turn's own, or a queued prompt's, which ends the
/// running turn (with the bridge's own usage sum: the run goes on, so there is no
/// end-of-run total to ask for) and becomes the turn.
pub(super) fn user_message_starts(
    session: &mut AcpSession,
    event: &SessionEvent,
    out: &mut Vec<Vec<u8>>,
) {
    let SessionEvent::MessageStart(start) = event else {
        return;
    };
    if !matches!(start.message, AgentMessage::User(_)) {
        return;
    }
    let Some(turn) = session.turn.as_mut() else {
        return;
    };
    if !turn.user_seen {
        turn.user_seen = true;
        return;
    }
    if session.queued.is_empty() {
        return;
    }
    if turn.cancel == Cancel::Requested {
        // A cancel asked of the run holds for what it goes on with: all of it is answered
        // `cancelled` when the run ends.
        return;
    }
    end_turn(session, None, out);
    if let Some(turn) = session.turn.as_mut() {
        turn.user_seen = true;
    }
}

/// The run ended (`agent_end`, ACP-27) with prompts still queued and no cancel: the agent
/// starts the next as a run of its own, so the running prompt is answered now and the next
/// becomes the turn. False (nothing done) otherwise.
pub(super) fn run_ended_with_queue(session: &mut AcpSession, out: &mut Vec<Vec<u8>>) -> bool {
    let cancelled = session
        .turn
        .as_ref()
        .is_some_and(|t| t.cancel == Cancel::Requested);
    if session.queued.is_empty() || cancelled || session.turn.is_none() {
        return false;
    }
    end_turn(session, None, out);
    true
}

/// The turn was answered: after a cancel, every queued prompt is answered `cancelled` too;
/// else the oldest queued prompt becomes the turn (ACP-27).
pub(super) fn turn_answered(session: &mut AcpSession, cancel: Cancel, out: &mut Vec<Vec<u8>>) {
    if cancel == Cancel::Requested {
        for queued in session.queued.drain(..) {
            out.push(rpc::result_line(
                &queued.editor,
                &PromptResponse::new(StopReason::Cancelled),
            ));
        }
        return;
    }
    if let Some(next) = session.queued.pop_front() {
        session.mapper.start_turn();
        session.turn = Some(next);
    }
}

/// A queued prompt's own answer from the agent (ACP-27): refused, it is answered with the
/// error; answered by the agent itself (a builtin command: CALL-03), `end_turn`. Either way
/// it leaves the queue. True when the event was about a queued prompt.
pub(super) fn queued_answer(
    session: &mut AcpSession,
    event: &ClientEvent,
    out: &mut Vec<Vec<u8>>,
) -> bool {
    let (request, answer) = match event {
        ClientEvent::Response {
            request,
            outcome: Err(failure),
            ..
        }
        | ClientEvent::PromptFailed { request, failure } => (
            request,
            Err(Error::internal_error().data(json!(failure.to_string()))),
        ),
        ClientEvent::Response {
            request,
            outcome: Ok(ResponseData::Prompt(data)),
            ..
        } if data.is_local() => (request, Ok(())),
        ClientEvent::PromptLocalOnly { request } => (request, Ok(())),
        _ => return false,
    };
    let Some(at) = position(session, request) else {
        return false;
    };
    let Some(queued) = session.queued.remove(at) else {
        return false;
    };
    out.push(match answer {
        Ok(()) => rpc::result_line(&queued.editor, &PromptResponse::new(StopReason::EndTurn)),
        Err(error) => rpc::error_line(&queued.editor, &error),
    });
    true
}

fn position(session: &AcpSession, request: &AgentRequest) -> Option<usize> {
    session.queued.iter().position(|q| q.prompt == *request)
}

/// The editor's requests of the turn and of every queued prompt, which leave the session
/// (its agent ended or the session closes).
pub(super) fn take_prompts(session: &mut AcpSession) -> Vec<super::RequestId> {
    let mut prompts: Vec<_> = session.turn.take().map(|t| t.editor).into_iter().collect();
    prompts.extend(session.queued.drain(..).map(|q| q.editor));
    // ACP-28: and the prompts held for the next turn.
    prompts.extend(session.held.drain(..).map(|h| h.editor));
    prompts
}
