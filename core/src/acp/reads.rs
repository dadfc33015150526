//! `_muse/readOutput` (OUT-01, 06, 07): a stored output's page, checked against the agent's
//! history and read by the agent's `read_output` within its budget, every failure typed.

use super::outbox::Outbox;
use super::*;

impl Bridge {
    /// `_muse/readOutput` (OUT-01, 06, 07): the params checked, the session known and open,
    /// the reference looked up in at most [`MAX_HISTORY_PAGES`] pages of
    /// [`WALK_PAGE_MESSAGES`] of the agent's history, then read by the agent's `read_output`
    /// within [`READ_BUDGET`]. Every failure is a typed error; no
    /// turn is started and nothing is changed.
    pub(super) fn read_output(
        &mut self,
        now: Instant,
        id: &RequestId,
        params: &Value,
    ) -> Result<(), Error> {
        if !self.output_meta {
            // OUT-01: nothing was advertised, so there is no such method.
            return Err(Error::method_not_found().data(json!(READ_METHOD)));
        }
        let params = ReadParams::from_value(params).map_err(|e| output::output_error(&e))?;
        let session_id = SessionId::new(params.session_id.as_str());
        let key = self.usable(&session_id).map_err(|_| {
            output::typed_error(
                output::SESSION_NOT_FOUND,
                "the session is not open in this adapter (load it first)",
            )
        })?;
        let offers = self
            .sessions
            .get(&key)
            .is_some_and(|s| s.client.serves_read_output());
        if !offers {
            return Err(output::output_error(&OutputError::Unavailable));
        }
        // ACP-23: what waits on one agent is bounded.
        self.room_for_request(key)?;
        self.send(
            now,
            key,
            Walk::first(),
            |editor| Pending::ReadCheck {
                editor,
                params,
                walk: Walk::default(),
            },
            id,
        );
        Ok(())
    }
}

impl AcpSession {
    /// OUT-06: one history page of a read's check.
    pub(super) fn read_check(
        &mut self,
        now: Instant,
        editor: RequestId,
        params: ReadParams,
        walk: &mut Walk,
        outcome: Result<ResponseData, CommandFailure>,
        out: &mut Outbox<'_>,
    ) {
        let found = match outcome {
            Ok(ResponseData::MessagesPage(page)) => {
                match history::find_stored(&page.messages, &params.item_id, &params.output_ref) {
                    Some(found) => Some(found),
                    None => match walk.after(&page) {
                        Next::Page(command) => {
                            let walk = std::mem::take(walk);
                            let read_check = |editor| Pending::ReadCheck {
                                editor,
                                params,
                                walk,
                            };
                            let _drained = self.send(now, command, read_check, &editor, out);
                            return;
                        }
                        // Outside the budget: not found, never guessed.
                        Next::End | Next::OutOfBudget => Some(Err(OutputError::Unknown)),
                    },
                }
            }
            // The agent cannot page now (it streams): what this session's tool results
            // showed is the evidence.
            _ => None,
        };
        let found = found.unwrap_or_else(|| {
            match self.seen_outputs.get(params.output_ref.as_str()).cloned() {
                Some(stored) if stored.item_id == params.item_id => Ok(stored),
                Some(_) => Err(OutputError::Foreign),
                None => Err(OutputError::Unknown),
            }
        });
        let stored = match found {
            Ok(stored) => stored,
            Err(e) => return out.editor(rpc::error_line(&editor, &output::output_error(&e))),
        };
        match stored.availability {
            Availability::Available => {}
            Availability::Expired => {
                return out.editor(rpc::error_line(
                    &editor,
                    &output::output_error(&OutputError::Expired),
                ))
            }
            Availability::Unavailable => {
                return out.editor(rpc::error_line(
                    &editor,
                    &output::output_error(&OutputError::Unavailable),
                ))
            }
        }
        // The agent's own session id for the output, which the editor's may not be.
        let command = Command::ReadOutput(ReadOutput {
            session_id: stored.session_id.clone(),
            item_id: params.item_id.clone(),
            output_ref: params.output_ref.to_string(),
            offset_bytes: params.offset_bytes,
            length_bytes: Some(params.length_bytes),
            ..ReadOutput::default()
        });
        let deadline = now + READ_BUDGET;
        let read = |editor| Pending::Read {
            editor,
            params,
            deadline,
        };
        let _drained = self.send(now, command, read, &editor, out);
    }
}

/// OUT-04, OUT-07, OUT-10: the agent's `read_output` answers the editor's read: its line.
pub(super) fn read_answered(
    editor: &RequestId,
    params: &ReadParams,
    outcome: Result<ResponseData, CommandFailure>,
) -> Vec<u8> {
    match outcome {
        // The page, typed by the client (OUT-10).
        Ok(ResponseData::ReadOutput(mut result)) => {
            // OUT-04: the three ids as the editor sent them.
            result.session_id = params.session_id.clone();
            rpc::result_line(editor, &result)
        }
        // A page the wire model could not type: say what does not read.
        Ok(ResponseData::Other(data)) => {
            match serde_json::from_value::<ReadResult>(data) {
                // OUT-04: the three ids as the editor sent them.
                Ok(mut result) => {
                    result.session_id = params.session_id.clone();
                    rpc::result_line(editor, &result)
                }
                Err(e) => rpc::error_line(
                    editor,
                    &output::typed_error(
                        "bad_read",
                        &format!("the agent's page does not read: {e}"),
                    ),
                ),
            }
        }
        Ok(_) => rpc::error_line(
            editor,
            &output::typed_error("bad_read", "the agent's answer is not a page"),
        ),
        Err(failure) => {
            let code = failure
                .code
                .as_ref()
                .map_or("bad_read".to_owned(), |c| c.to_string());
            rpc::error_line(editor, &output::typed_error(&code, &failure.error))
        }
    }
}
