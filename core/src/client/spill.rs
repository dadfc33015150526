//! The spill policy applied to the host's own tool results before they are sent
//! (SPILL-01..05 on the host side).
//!
//! A host tool's answer can be as large as any tool's, and it goes to the agent's model as it
//! is. With [`ClientConfig::spill`](super::ClientConfig::spill) set, the client applies
//! [`spill::plan`] to each result handed in as
//! [`Call::HostToolResult`](super::Call::HostToolResult), as an agent does to its own tools'
//! results (the source is the call's `toolName` and `toolCallId`, its label the tool's
//! name): off, within the cap, not all text, or a tool that is never spilled, the result goes
//! out unchanged at once; over the cap the client asks the driver for an
//! [`Action::SpillWrite`](super::Action::SpillWrite) and sends the head/tail preview and the
//! notice when the driver answers with [`Input::SpillDone`](super::Input::SpillDone), the
//! original result when the save failed (a spill never turns a result into an error,
//! SPILL-05). Nothing is written for the call until then; HOST-09's check of the line's
//! length applies to what is finally sent.
//!
//! * **Owner (SPILL-05).** The owner session is the agent's `sessionId` as the latest
//!   `get_state` or `get_session_stats` response gave it, else
//!   [`ClientConfig::spill_owner`](super::ClientConfig::spill_owner); with neither, the result
//!   goes on unchanged.
//! * **The log (SPILL-05).** A result that was spilled, or kept because the save could not
//!   happen (no owner, no store, a failed save), is told to the application as
//!   [`ClientEvent::HostToolResultSettled`]; results passed through for the other reasons are
//!   not.
//! * **Cancelled while saving (HOST-03).** A `host_tool_cancel` for a call whose result is
//!   being saved withdraws it ([`ClientEvent::HostToolCancelled`]); the save's answer then
//!   sends nothing. A save answered after the session closed sends nothing either.

use super::{Action, Client, ClientEvent, CommandFailure, Phase};
use crate::spill::{self, Decision, Outcome, SaveFailure, Saved, SpillId, SpillOwner};
use crate::wire::{HostFrame, HostToolResult, ResponseData, ToolResult};

/// What a host tool result waiting for its spill write keeps beside it.
#[derive(Debug, Clone)]
pub(super) struct HostSpill {
    /// The host tool call's request id.
    call: String,
    /// Whether the result rejects the call.
    is_error: bool,
    /// The agent withdrew the call while the result was being saved (HOST-03).
    cancelled: bool,
}

impl Client {
    /// Sends `result` for host tool call `id` through the spill policy: at once, or after the
    /// driver's spill write.
    pub(super) fn send_tool_result(
        &mut self,
        id: &str,
        source: spill::SpillSource,
        result: ToolResult,
        is_error: bool,
    ) {
        let owner = self.spill_owner.clone();
        match spill::plan(&self.config.spill, result, source, owner) {
            Decision::Settled(settled) => {
                self.log_spill(id, &settled.outcome);
                self.write_tool_result(id, settled.result, is_error);
            }
            Decision::Save(pending) => {
                let call = HostSpill {
                    call: id.to_owned(),
                    is_error,
                    cancelled: false,
                };
                let (id, write) = self.spills.start(pending, call);
                self.actions.push_back(Action::SpillWrite { id, write });
            }
        }
    }

    /// The driver's answer to spill write `id` (SPILL-03, SPILL-05): the settled result is
    /// sent, unless the call was withdrawn or the session closed meanwhile. An answer to a
    /// write that is not pending is dropped.
    pub(super) fn spill_done(&mut self, id: SpillId, saved: Result<Saved, SaveFailure>) {
        let Some((settled, _stored, spill)) = self.spills.finish(id, saved) else {
            return;
        };
        self.log_spill(&spill.call, &settled.outcome);
        if !spill.cancelled {
            self.write_tool_result(&spill.call, settled.result, spill.is_error);
        }
    }

    /// Withdraws the result of host tool call `id` while it is being saved (HOST-03); true
    /// when one was.
    pub(super) fn cancel_spill(&mut self, id: &str) -> bool {
        match self
            .spills
            .kept_mut()
            .find(|spill| spill.call == id && !spill.cancelled)
        {
            Some(spill) => {
                spill.cancelled = true;
                true
            }
            None => false,
        }
    }

    /// Takes the owner session of later spills from a response that names the agent's
    /// session (SPILL-05).
    pub(super) fn learn_session(&mut self, outcome: &Result<ResponseData, CommandFailure>) {
        let session = match outcome {
            Ok(ResponseData::State(state)) => state.session_id.as_deref(),
            Ok(ResponseData::SessionStats(stats)) => stats.session_id.as_deref(),
            _ => None,
        };
        if let Some(session) = session.filter(|s| !s.is_empty()) {
            if self.spill_owner.as_ref().map(|o| o.session_id.as_str()) != Some(session) {
                self.spill_owner = Some(SpillOwner::new(session));
            }
        }
    }

    /// Spill writes waiting for the driver.
    pub fn pending_spills(&self) -> usize {
        self.spills.len()
    }

    fn log_spill(&mut self, id: &str, outcome: &Outcome) {
        let worth_telling = match outcome {
            Outcome::Spilled(_) => true,
            Outcome::Kept(why) => why.is_failure(),
        };
        if worth_telling {
            self.event(ClientEvent::HostToolResultSettled {
                id: id.to_owned(),
                outcome: outcome.clone(),
            });
        }
    }

    fn write_tool_result(&mut self, id: &str, result: ToolResult, is_error: bool) {
        if self.phase == Phase::Closed {
            return;
        }
        // HOST-10: a call that came through pi's extension is answered as its dialog.
        let Some(result) = self.pi_host_tools_result(id, result, is_error) else {
            return;
        };
        let frame = HostFrame::HostToolResult(HostToolResult {
            id: id.to_owned(),
            result,
            is_error: is_error.then_some(true),
            ..Default::default()
        });
        self.write_host_answer(id, frame, |m| super::limits::tool_refusal(id, m));
    }
}
