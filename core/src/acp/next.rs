//! ACP-28 (ours): a prompt after `session/cancel` is the next turn, not a follow-up. An editor
//! may send its next prompt right after cancelling the running one, without waiting for the
//! cancelled prompt's answer (codecompanion.nvim does). Sent as ACP-27's `followUp`, omp and
//! pi would run it inside the aborted run and the cancel would answer it `cancelled` too;
//! instead the bridge holds it ([`Held`]: no `Queued` note, nothing sent) until the cancelled
//! turn is answered `cancelled` (the agent's `agent_end`, then its usage, ACP-02), then sends
//! it as a prompt of its own, which becomes the turn and is answered with its own stop
//! reason. Prompts held so run one after another, in order; at most [`MAX_QUEUED_PROMPTS`]
//! wait with ACP-27's queue. Another `session/cancel` answers the held prompts `cancelled` at
//! once (nothing of theirs reached the agent); an agent that ends fails them and a close
//! cancels them with the turn (`queue::take_prompts`).

use super::outbox::Outbox;
use super::*;

/// A prompt held behind a cancelled turn (ACP-28): the editor's request and its content, not
/// yet sent to the agent.
#[derive(Debug)]
pub(super) struct Held {
    /// The editor's `session/prompt` request.
    pub(super) editor: RequestId,
    content: PromptContent,
}

/// Whether a prompt that comes now is held for the next turn (ACP-28): the running turn was
/// cancelled and is not answered yet, or prompts are held already (they run in order).
pub(super) fn holds_next(session: &AcpSession) -> bool {
    session
        .turn
        .as_ref()
        .is_some_and(|t| t.cancel == Cancel::Requested)
        || !session.held.is_empty()
}

/// Whether a prompt of this request id is held in the session (ACP-07: refused as a
/// duplicate).
pub(super) fn is_held(session: &AcpSession, id: &RequestId) -> bool {
    session.held.iter().any(|h| h.editor == *id)
}

/// Holds the prompt for the next turn (ACP-28); refused (-32600) when [`MAX_QUEUED_PROMPTS`]
/// wait already, queued (ACP-27) or held.
pub(super) fn hold(
    session: &mut AcpSession,
    editor: &RequestId,
    content: PromptContent,
) -> Result<(), Error> {
    if session.queued.len() + session.held.len() >= MAX_QUEUED_PROMPTS {
        return Err(Error::invalid_request().data(json!(format!(
            "{MAX_QUEUED_PROMPTS} prompts wait in this session already: \
             try again once one has been answered"
        ))));
    }
    session.held.push_back(Held {
        editor: editor.clone(),
        content,
    });
    Ok(())
}

/// Starts the oldest held prompt as the session's turn once no turn runs (ACP-28): sent to
/// the agent as a prompt of its own (no `streamingBehavior`), its notes (ACP-14..16) shown in
/// its turn; one that cannot be sent is answered with an error. The editor's lines go to
/// `out`; false when nothing was held or the session cannot take a turn now.
pub(super) fn start_next(session: &mut AcpSession, now: Instant, out: &mut Vec<Vec<u8>>) -> bool {
    if session.turn.is_some() || session.exited || session.client.is_closed() {
        return false;
    }
    let Some(Held { editor, content }) = session.held.pop_front() else {
        return false;
    };
    session.begin_waiting(now);
    let command = Command::Prompt(Prompt {
        message: content.message,
        images: (!content.images.is_empty()).then_some(content.images),
        ..Prompt::default()
    });
    let sent = session
        .client
        .handle(now, client::Input::Call(Call::Send(command)));
    let Some(prompt) = sent.request() else {
        let error = Error::internal_error().data(json!("the prompt was not sent"));
        out.push(rpc::error_line(&editor, &error));
        return true;
    };
    session.mapper.start_turn();
    session.turn = Some(Turn {
        editor,
        prompt,
        cancel: Cancel::NotRequested,
        user_seen: false,
    });
    for note in &content.notes {
        let update = session.mapper.notice(note);
        let notification = SessionNotification::new(session.acp_id.clone(), update);
        out.push(rpc::update_line(&notification));
    }
    true
}

impl AcpSession {
    /// ACP-28: the prompts held for the next turn are answered `cancelled`.
    pub(super) fn cancel_held(&mut self, out: &mut Outbox<'_>) {
        for held in self.held.drain(..) {
            let answer = PromptResponse::new(StopReason::Cancelled);
            out.editor(rpc::result_line(&held.editor, &answer));
        }
    }
}
