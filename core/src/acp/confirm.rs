//! ACP-43 (ours): a `confirm` that asks about the tool call it stops, as an approval.
//!
//! pi (0.73.1, 1.6.0) has no approval gate of its own: an extension gates a tool by calling
//! `ctx.ui.confirm(title, message)` from its `tool_call` handler, which pi runs after
//! `tool_execution_start` and before the tool (a `false` blocks it). Such a `confirm` names
//! no tool, so the bridge ties it by when it comes: to the one call of the assistant message
//! being streamed that has started, has not finished, has no approval tied yet and has shown
//! no output, and is no `ask` ([`QUESTION_TOOL`]: its confirms are its questions). Tied, it is an approval
//! (ACP-08) answered `confirmed` rather than `Approve`/`Deny` ([`Reply::Confirm`]): an
//! "always" of its tool answers it, the session's mode answers it (ACP-34), else the editor
//! is asked about the call's card. With no such call, or more than one, it stays a dialog of
//! its own (ACP-09), asked in every mode.

use crate::wire::UiResponse;

use super::dialogs::{APPROVE, DENY};

/// The tool whose dialogs are questions to the user, never approvals of it (omp's `ask`,
/// the bundled agent's `ask`): a `confirm` it sends stays a dialog (ACP-09).
pub(crate) const QUESTION_TOOL: &str = "ask";

/// How an approval's answer goes back to the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reply {
    /// omp's approval `select` (ACP-08): `Approve` or `Deny`.
    Select,
    /// A `confirm` tied to a call (ACP-43): `confirmed` true or false.
    Confirm,
}

/// Whether an approval lets its call run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The call runs.
    Allow,
    /// The call is refused.
    Refuse,
}

impl Reply {
    /// The answer to the agent's dialog that says `verdict`.
    pub(crate) fn answer(self, verdict: Verdict) -> UiResponse {
        match (self, verdict) {
            (Reply::Select, Verdict::Allow) => UiResponse::value("", APPROVE),
            (Reply::Select, Verdict::Refuse) => UiResponse::value("", DENY),
            (Reply::Confirm, verdict) => {
                if verdict == Verdict::Allow {
                    UiResponse::confirm("")
                } else {
                    UiResponse::decline("")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acp_43_a_tied_confirm_is_answered_confirmed_and_a_select_approve_or_deny() {
        let allow = Reply::Confirm.answer(Verdict::Allow);
        assert_eq!(allow.confirmed, Some(true));
        assert_eq!(allow.value, None);
        assert_eq!(
            Reply::Confirm.answer(Verdict::Refuse).confirmed,
            Some(false)
        );
        assert_eq!(
            Reply::Select.answer(Verdict::Allow).value.as_deref(),
            Some(APPROVE)
        );
        assert_eq!(
            Reply::Select.answer(Verdict::Refuse).value.as_deref(),
            Some(DENY)
        );
    }
}
