//! A dialog tied to no tool as one form (ACP-36, ACP-09): where the editor's `initialize`
//! advertised `clientCapabilities.elicitation.form`, a `confirm`, a `select` that is no
//! approval of a call, an `input` and an `editor` each go as one form-mode
//! `elicitation/create` scoped to the session, with one required field [`FIELD`]: a confirm's
//! a titled one-of of [`YES`] and [`NO`], a select's a titled one-of of `choice-N` (titled
//! by the option texts), a text dialog's a plain string. The editor's `accept`, `decline` and
//! `cancel` answer the agent's dialog as the permission answers of ACP-09 do.
//!
//! Zed, agent-shell (acp.el's editor) and the official SDK render such a form in the
//! thread as one item; codecompanion.nvim advertises no elicitation and gets the
//! standalone permission request instead (`dialogs`).

use agent_client_protocol_schema::v1::{
    ClientCapabilities, CreateElicitationRequest, CreateElicitationResponse, ElicitationAction,
    ElicitationContentValue, ElicitationFormMode, ElicitationSchema, ElicitationSessionScope,
    EnumOption, SessionId, StringPropertySchema,
};
use serde_json::Value;

use super::bound::bound_snapshot;
use super::map::{title, withhold_credential_uris};
use crate::wire::UiResponse;

/// The one field of every form the bridge asks (ACP-09, ACP-36).
pub(crate) const FIELD: &str = "value";
/// A confirm's "yes" in its form (ACP-36).
pub(crate) const YES: &str = "yes";
/// A confirm's "no" in its form (ACP-36).
pub(crate) const NO: &str = "no";

/// What the form's one field asks.
#[derive(Debug, Clone, Copy)]
pub(super) enum Field<'a> {
    /// A `confirm`: yes or no.
    Confirm,
    /// A `select`: one of these option texts, as `choice-N`.
    Choice(&'a [String]),
    /// An `input` (its placeholder, `false`) or an `editor` (its prefill, `true`).
    Text(Option<(&'a str, bool)>),
}

/// Whether the editor's `initialize` advertised form elicitation.
pub(super) fn offers_forms(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities
        .and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.supports_form())
}

/// A dialog's title or option text as a label: credential-bearing uris withheld, control
/// characters as spaces, at most 256 bytes (ACP-29's title rules).
pub(super) fn label(text: &str) -> String {
    title(&withhold_credential_uris(text), None, None)
}

/// The option id of a select's `n`-th option, as a permission option or a form's constant.
pub(super) fn choice_id(n: usize) -> String {
    format!("choice-{n}")
}

/// The option a `choice-N` id names, when it is one of `options` (no leading zeros).
pub(super) fn chosen<'a>(options: &'a [String], id: &str) -> Option<&'a String> {
    id.strip_prefix("choice-")
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| choice_id(*n) == id)
        .and_then(|n| options.get(n))
}

/// The form-mode `elicitation/create` of a dialog of the session `session_id`: its title (and
/// a confirm's message after it) as the request's message, bounded to 64 KiB (ACP-05), and
/// the one required field `field` asks.
pub(super) fn request(
    session_id: SessionId,
    text: &str,
    message: Option<&str>,
    field: Field<'_>,
) -> CreateElicitationRequest {
    let mut property = StringPropertySchema::new();
    property.title = Some(label(text));
    match field {
        Field::Confirm => {
            property.one_of = Some(vec![EnumOption::new(YES, "Yes"), EnumOption::new(NO, "No")]);
        }
        Field::Choice(options) => {
            let options = options
                .iter()
                .enumerate()
                .map(|(i, o)| EnumOption::new(choice_id(i), label(o)))
                .collect();
            property.one_of = Some(options);
        }
        Field::Text(Some((prefill, true))) => property.default = Some(prefill.to_owned()),
        Field::Text(Some((placeholder, false))) => {
            property.description = Some(placeholder.to_owned())
        }
        Field::Text(None) => {}
    }
    let schema = ElicitationSchema::new().property(FIELD, property, true);
    let mode = ElicitationFormMode::new(ElicitationSessionScope::new(session_id), schema);
    let shown = match message {
        Some(message) => format!("{text}\n\n{message}"),
        None => text.to_owned(),
    };
    CreateElicitationRequest::new(mode, bound_snapshot(&withhold_credential_uris(&shown)))
}

/// The agent's answer to a form's `field` from the editor's response: `accept` with a value
/// the field offers answers it (a confirm's `yes`/`no`, or a boolean, `{confirmed}`; a
/// select's `choice-N` `{value: TEXT}`; text `{value}`); `decline` of a confirm is its "no";
/// anything else (`cancel`, a decline of any other field, a value not offered, an error, an
/// answer that does not read) is `{cancelled: true}`.
pub(super) fn answer(field: Field<'_>, outcome: Result<Value, Value>) -> UiResponse {
    let action = outcome
        .ok()
        .and_then(|v| serde_json::from_value::<CreateElicitationResponse>(v).ok())
        .map(|r| r.action);
    let cancelled = UiResponse::cancelled("");
    let value = match action {
        Some(ElicitationAction::Accept(accept)) => accept.content.and_then(|mut c| c.remove(FIELD)),
        Some(ElicitationAction::Decline) if matches!(field, Field::Confirm) => {
            return UiResponse::decline("")
        }
        _ => return cancelled,
    };
    match (field, value) {
        (Field::Confirm, Some(ElicitationContentValue::String(v))) if v == YES => {
            UiResponse::confirm("")
        }
        (Field::Confirm, Some(ElicitationContentValue::String(v))) if v == NO => {
            UiResponse::decline("")
        }
        (Field::Confirm, Some(ElicitationContentValue::Boolean(yes))) => {
            if yes {
                UiResponse::confirm("")
            } else {
                UiResponse::decline("")
            }
        }
        (Field::Choice(options), Some(ElicitationContentValue::String(id))) => {
            chosen(options, &id).map_or(cancelled, |v| UiResponse::value("", v.clone()))
        }
        (Field::Text(_), Some(ElicitationContentValue::String(text))) => {
            UiResponse::value("", text)
        }
        _ => cancelled,
    }
}
