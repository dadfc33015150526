//! The agent's dialogs, asked of the editor (ACP-08, ACP-09, ACP-36): an approval of a call
//! as `session/request_permission` about the call's card; a dialog tied to no tool (a
//! `confirm`, another `select`, `input`, `editor`) as one item: a form `elicitation/create`
//! when the editor offers forms (`elicit`), else a `confirm` or `select` as a
//! `session/request_permission` whose tool call is announced by no card before it and
//! updated by none after it (text dialogs are then answered cancelled); `notify` and
//! `setTitle` shown; the editor's answers, its "always", a dialog's timeout and a cancelled
//! turn.
//!
//! The agent's dialog stays open in the session's [`Client`](crate::client::Client), whose
//! timer closes it at its timeout ([`ClientEvent::UiWithdrawn`]); the bridge then withdraws
//! its request (`$/cancel_request`) and stops waiting. Every answer the editor gives, and
//! every way it cannot, answers the dialog: none is left to time out unseen.

use super::AgentKey;
use std::collections::BTreeMap;
use std::time::Instant;

use agent_client_protocol_schema::v1::{
    CancelRequestNotification, PermissionOption, PermissionOptionKind, RequestId,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SessionInfoUpdate, SessionUpdate, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind, CLIENT_METHOD_NAMES,
};
use serde_json::Value;

use super::confirm::{Reply, Verdict};
use super::elicit::{self, Field};
use super::map::withhold_credential_uris;
use super::outbox::{Drain, Outbox};
use super::{notices, rpc, AcpSession, Bridge};
use crate::client::{Call, ClientEvent, Input};
use crate::wire::{SelectRequest, UiRequest, UiResponse};

/// The method the bridge asks a choice with (ACP-08, ACP-09).
pub(crate) const PERMISSION_METHOD: &str = CLIENT_METHOD_NAMES.session_request_permission;
/// The method the bridge asks for text with, in form mode (ACP-09).
pub(crate) const ELICITATION_METHOD: &str = CLIENT_METHOD_NAMES.elicitation_create;
/// The option ids of an approval (ACP-08): the four ACP permission kinds.
pub(crate) const APPROVAL_OPTIONS: [&str; 4] =
    ["allow_once", "allow_always", "reject_once", "reject_always"];
/// The answers omp's approval `select` offers, in order (ACP-08).
pub const APPROVE: &str = "Approve";
/// See [`APPROVE`].
pub const DENY: &str = "Deny";
/// The first line of omp's approval title, before the tool's name (ACP-08).
pub(crate) const APPROVAL_TITLE_PREFIX: &str = "Allow tool: ";
/// The form field an elicited dialog's answer comes back in (ACP-09, ACP-36).
pub(crate) const TEXT_FIELD: &str = elicit::FIELD;
/// The prefix of the tool call id a dialog tied to no tool is asked about when the editor
/// offers no forms (ACP-36): `dialog-` and the agent's dialog id. No card of that id is
/// announced before the request or updated after it.
pub const DIALOG_CALL_PREFIX: &str = "dialog-";

/// Why a text dialog is answered cancelled once the editor refused a form (ACP-36).
const FORMS_REFUSED: &str = "the editor refused a form elicitation";

/// The most requests the bridge keeps open with the editor at once; a dialog past it is
/// answered as cancelled (ACP-09).
const MAX_OPEN_ASKS: usize = 64;
/// The most "always" answers remembered across sessions (ACP-08).
const MAX_ALWAYS: usize = 1024;

/// What the bridge asked the editor, by request.
#[derive(Debug, Default)]
pub(crate) struct Dialogs {
    next: u64,
    asks: BTreeMap<u64, Ask>,
    /// The editor's "always" answers: allowed (true) or rejected, by session key and tool.
    always: BTreeMap<(AgentKey, String), bool>,
    /// The editor answered a form with an error although it advertised forms (a Zed build
    /// without its ACP beta flag does): no more forms are asked of it (ACP-36).
    forms_refused: bool,
}

/// One request open with the editor.
#[derive(Debug)]
struct Ask {
    /// The session's agent key.
    key: AgentKey,
    /// The agent's dialog id.
    dialog: String,
    form: Form,
    /// How it was asked: [`PERMISSION_METHOD`] or [`ELICITATION_METHOD`].
    method: &'static str,
    title: String,
    /// A `confirm`'s message, besides its title.
    message: Option<String>,
}

impl Dialogs {
    /// Takes the session's dialogs waiting for the editor, in the order they were asked.
    fn take_session(&mut self, key: AgentKey) -> Vec<(u64, Ask)> {
        let (mine, others): (BTreeMap<u64, Ask>, BTreeMap<u64, Ask>) =
            std::mem::take(&mut self.asks)
                .into_iter()
                .partition(|(_, ask)| ask.key == key);
        self.asks = others;
        mine.into_iter().collect()
    }
}

/// Why the agent closed a dialog (ACP-09): a timed-out one is said in the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Withdrawn {
    Cancelled,
    TimedOut,
}

#[derive(Debug)]
enum Form {
    /// An approval of a call of this tool, answered as `reply` says (ACP-08, ACP-43).
    Approval { tool: String, reply: Reply },
    /// A `select`: one of these values.
    Select { options: Vec<String> },
    /// A `confirm`: yes or no.
    Confirm,
    /// An `input` or `editor` dialog, as a form.
    Text,
}

impl Form {
    /// The form field it is asked with (ACP-36); an approval is never elicited.
    fn field(&self) -> Field<'_> {
        match self {
            Form::Select { options } => Field::Choice(options),
            Form::Confirm => Field::Confirm,
            Form::Approval { .. } | Form::Text => Field::Text(None),
        }
    }
}

/// The tool an approval `select` asks about (ACP-08): options exactly `Approve`, `Deny` and a
/// title whose first line is `Allow tool: NAME`.
pub(crate) fn approval_tool(select: &SelectRequest) -> Option<&str> {
    if select.options.len() != 2 || select.options[0] != APPROVE || select.options[1] != DENY {
        return None;
    }
    let first = select.title.lines().next()?;
    let name = first.strip_prefix(APPROVAL_TITLE_PREFIX)?.trim();
    (!name.is_empty()).then_some(name)
}

fn request_id(n: u64) -> RequestId {
    super::methods::EditorReply::Dialog(n).id()
}

/// A dialog's title as a card title: credential-bearing uris withheld, control characters
/// shown as spaces, bounded.
fn shown_title(text: &str) -> String {
    elicit::label(text)
}

impl Bridge {
    /// A dialog event of a session's client: a dialog asked of the editor, a notice shown, or
    /// a withdrawn dialog's request withdrawn (ACP-08, ACP-09).
    pub(super) fn dialog_event(&mut self, now: Instant, key: AgentKey, event: ClientEvent) {
        match event {
            ClientEvent::UiRequest(request) => self.ui_request(now, key, request),
            ClientEvent::UiWithdrawn { id, timed_out } => {
                let why = if timed_out {
                    Withdrawn::TimedOut
                } else {
                    Withdrawn::Cancelled
                };
                self.ui_withdrawn(key, &id, why)
            }
            _ => {}
        }
    }

    fn ui_request(&mut self, now: Instant, key: AgentKey, request: UiRequest) {
        match request {
            UiRequest::Select(select) => {
                if let Some(tool) = approval_tool(&select).map(str::to_owned) {
                    let fallback = |bridge: &mut Bridge| {
                        let options = select.options.clone();
                        bridge.choice(now, key, &select.id, &select.title, None, options);
                    };
                    let asked = (&select.id[..], &select.title[..], Reply::Select);
                    return self.approval(now, key, asked, tool, fallback);
                }
                self.choice(
                    now,
                    key,
                    &select.id,
                    &select.title,
                    None,
                    select.options.clone(),
                );
            }
            UiRequest::Confirm(confirm) => {
                let message = confirm.message.filter(|m| *m != confirm.title);
                let fallback = |bridge: &mut Bridge| {
                    let form = Form::Confirm;
                    bridge.ask_choice(now, key, &confirm.id, &confirm.title, message, form);
                };
                // ACP-43: a confirm that stops the one call that has just started is its
                // approval.
                let target = self.sessions.get(&key);
                match target.and_then(|s| s.mapper.confirm_target().map(str::to_owned)) {
                    Some(tool) => {
                        let asked = (&confirm.id[..], &confirm.title[..], Reply::Confirm);
                        self.approval(now, key, asked, tool, fallback);
                    }
                    None => fallback(self),
                }
            }
            UiRequest::Input(input) => {
                let prompt = input.placeholder.map(|p| (p, false));
                self.text(now, key, &input.id, &input.title, prompt);
            }
            UiRequest::Editor(editor) => {
                let prefill = editor.prefill.map(|p| (p, true));
                self.text(now, key, &editor.id, &editor.title, prefill);
            }
            // ACP-09: a notification is a short line in the turn.
            UiRequest::Notify(notify) => {
                let label = notify.notify_type.as_deref().unwrap_or("notice");
                let line = notices::line(label, &withhold_credential_uris(&notify.message));
                if let Some((session, mut out)) = self.session_out(key) {
                    session.say(&line, &mut out);
                }
            }
            // ACP-09: the title is the session's.
            UiRequest::SetTitle(set) => {
                let update = SessionInfoUpdate::new().title(shown_title(&set.title));
                self.session_update(key, SessionUpdate::SessionInfoUpdate(update));
            }
            // ACP-09: status lines, widgets, the editor's text and urls are not dialogs, and
            // ACP has no place for them: nothing is shown.
            _ => {}
        }
    }

    /// ACP-08, ACP-43: an approval (the agent's dialog id, its title, how it is answered):
    /// answered from an "always" of this session, else by the session's mode where it says
    /// so (ACP-34), else asked about its call (the card opened first, pending) or, tied to
    /// none, asked as `fallback` asks it.
    fn approval(
        &mut self,
        now: Instant,
        key: AgentKey,
        (dialog, title, reply): (&str, &str, Reply),
        tool: String,
        fallback: impl FnOnce(&mut Bridge),
    ) {
        if let Some(allowed) = self.dialogs.always.get(&(key, tool.clone())).copied() {
            let verdict = if allowed {
                Verdict::Allow
            } else {
                Verdict::Refuse
            };
            return self.on_session(now, key, |session, _| {
                session.respond(now, dialog, reply.answer(verdict))
            });
        }
        // ACP-34: the session's mode approves what it says, unasked, and the card says so.
        let approved = match self.sessions.get_mut(&key) {
            Some(session) => {
                session.approved_by_mode(&tool, title, &mut Outbox::new(&mut self.actions))
            }
            None => false,
        };
        if approved {
            return self.on_session(now, key, |session, _| {
                session.respond(now, dialog, reply.answer(Verdict::Allow))
            });
        }
        let ask = Ask {
            key,
            dialog: dialog.to_owned(),
            form: Form::Approval {
                tool: tool.clone(),
                reply,
            },
            method: PERMISSION_METHOD,
            title: title.to_owned(),
            message: None,
        };
        if !self.has_room(key) {
            return self.unasked(now, ask, "too many questions are open with the editor");
        }
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        let Some((_, call, opening)) = session.mapper.approval_target(&tool) else {
            return fallback(self);
        };
        if let Some(opening) = opening {
            self.session_update(key, opening);
        }
        let options = vec![
            PermissionOption::new(
                APPROVAL_OPTIONS[0],
                "Allow once",
                PermissionOptionKind::AllowOnce,
            ),
            PermissionOption::new(
                APPROVAL_OPTIONS[1],
                format!("Always allow {tool}"),
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(
                APPROVAL_OPTIONS[2],
                "Reject",
                PermissionOptionKind::RejectOnce,
            ),
            PermissionOption::new(
                APPROVAL_OPTIONS[3],
                format!("Always reject {tool}"),
                PermissionOptionKind::RejectAlways,
            ),
        ];
        self.ask_permission(now, ask, call, options);
    }

    /// ACP-09: a `select` that is no approval: its options as `choice-N`.
    fn choice(
        &mut self,
        now: Instant,
        key: AgentKey,
        dialog: &str,
        title: &str,
        message: Option<String>,
        options: Vec<String>,
    ) {
        if options.is_empty() {
            return self.on_session(now, key, |session, _| {
                session.respond(now, dialog, UiResponse::cancelled(""))
            });
        }
        self.ask_choice(now, key, dialog, title, message, Form::Select { options });
    }

    /// ACP-36: a `confirm` or `select` tied to no tool, asked once: as a form elicitation
    /// when the editor offers forms, else as a permission request of its own
    /// ([`Bridge::permission_choice`]).
    fn ask_choice(
        &mut self,
        now: Instant,
        key: AgentKey,
        dialog: &str,
        text: &str,
        message: Option<String>,
        form: Form,
    ) {
        let ask = Ask {
            key,
            dialog: dialog.to_owned(),
            form,
            method: PERMISSION_METHOD,
            title: text.to_owned(),
            message,
        };
        if !self.has_room(key) {
            return self.unasked(now, ask, "too many questions are open with the editor");
        }
        let Some(session) = self.sessions.get(&key) else {
            return;
        };
        if self.offers_forms() {
            let request = elicit::request(
                session.acp_id.clone(),
                &ask.title,
                ask.message.as_deref(),
                ask.form.field(),
            );
            let ask = Ask {
                method: ELICITATION_METHOD,
                ..ask
            };
            return self.open_ask(ask, ELICITATION_METHOD, &request);
        }
        self.permission_choice(now, ask);
    }

    /// Whether dialogs go as forms: the editor advertised form elicitation and has not
    /// refused a form (ACP-36).
    fn offers_forms(&self) -> bool {
        elicit::offers_forms(self.client_capabilities.as_ref()) && !self.dialogs.forms_refused
    }

    /// ACP-36: a `confirm` or `select` as `session/request_permission` about a tool call of
    /// its own, `dialog-ID`, that no card announces before it and none updates after it.
    fn permission_choice(&mut self, now: Instant, ask: Ask) {
        let options = match &ask.form {
            Form::Select { options } => options
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    PermissionOption::new(
                        elicit::choice_id(i),
                        shown_title(o),
                        PermissionOptionKind::AllowOnce,
                    )
                })
                .collect(),
            _ => vec![
                PermissionOption::new(elicit::YES, "Yes", PermissionOptionKind::AllowOnce),
                PermissionOption::new(elicit::NO, "No", PermissionOptionKind::RejectOnce),
            ],
        };
        let call = format!(
            "{DIALOG_CALL_PREFIX}{}",
            super::bound::cut_to_bytes(&ask.dialog, 128)
        );
        let mut fields = ToolCallUpdateFields::new()
            .title(shown_title(&ask.title))
            .kind(ToolKind::Other)
            .status(ToolCallStatus::Pending);
        // A title over more lines than one, or a message, is the request's content.
        let body = ask
            .message
            .clone()
            .or_else(|| ask.title.contains('\n').then(|| ask.title.clone()));
        if let Some(body) = body {
            let content = vec![super::map::text_content(super::bound::bound_snapshot(
                &withhold_credential_uris(&body),
            ))];
            fields = fields.content(content);
        }
        let ask = Ask {
            method: PERMISSION_METHOD,
            ..ask
        };
        self.ask_permission(now, ask, ToolCallUpdate::new(call, fields), options);
    }

    /// Whether another request can be opened for this session: it has its ACP id, and fewer
    /// than [`MAX_OPEN_ASKS`] are open.
    fn has_room(&self, key: AgentKey) -> bool {
        self.dialogs.asks.len() < MAX_OPEN_ASKS
            && self
                .sessions
                .get(&key)
                .is_some_and(|s| !s.acp_id.0.is_empty())
    }

    fn ask_permission(
        &mut self,
        now: Instant,
        ask: Ask,
        call: ToolCallUpdate,
        options: Vec<PermissionOption>,
    ) {
        if !self.has_room(ask.key) {
            return self.unasked(now, ask, "too many questions are open with the editor");
        }
        let Some(session) = self.sessions.get(&ask.key) else {
            return;
        };
        let request = RequestPermissionRequest::new(session.acp_id.clone(), call, options);
        self.open_ask(ask, PERMISSION_METHOD, &request);
    }

    fn open_ask(&mut self, ask: Ask, method: &str, params: &impl serde::Serialize) {
        self.dialogs.next += 1;
        let n = self.dialogs.next;
        self.editor(rpc::request_line(&request_id(n), method, params));
        self.dialogs.asks.insert(n, ask);
    }

    /// ACP-09: `input` and `editor` as a form elicitation with one string field, when the
    /// editor offers forms; else answered as cancelled at once, and the turn says so.
    fn text(
        &mut self,
        now: Instant,
        key: AgentKey,
        dialog: &str,
        text: &str,
        initial: Option<(String, bool)>,
    ) {
        let ask = Ask {
            key,
            dialog: dialog.to_owned(),
            form: Form::Text,
            method: ELICITATION_METHOD,
            title: text.to_owned(),
            message: None,
        };
        if self.dialogs.forms_refused {
            return self.unasked(now, ask, FORMS_REFUSED);
        }
        if !elicit::offers_forms(self.client_capabilities.as_ref()) {
            return self.unasked(now, ask, "the editor offers no form elicitation");
        }
        if !self.has_room(key) {
            return self.unasked(now, ask, "too many questions are open with the editor");
        }
        let Some(session) = self.sessions.get(&key) else {
            return;
        };
        let initial = initial.as_ref().map(|(t, prefill)| (t.as_str(), *prefill));
        let request = elicit::request(session.acp_id.clone(), text, None, Field::Text(initial));
        self.open_ask(ask, ELICITATION_METHOD, &request);
    }

    /// A dialog the editor cannot be asked: answered as cancelled (an approval denied) at
    /// once, and the turn says why.
    fn unasked(&mut self, now: Instant, ask: Ask, why: &str) {
        let answer = refusal(&ask.form);
        let line = notices::line(
            "dialog answered as cancelled",
            &format!("\"{}\": {why}", shown_title(&ask.title)),
        );
        if let Some((session, mut out)) = self.session_out(ask.key) {
            session.say(&line, &mut out);
        }
        self.on_session(now, ask.key, |session, _| {
            session.respond(now, &ask.dialog, answer)
        });
    }

    /// The agent closed a dialog (cancelled it, or its timeout passed): the editor's request
    /// is withdrawn and no longer waited for (ACP-09).
    fn ui_withdrawn(&mut self, key: AgentKey, dialog: &str, why: Withdrawn) {
        let Some(n) = self
            .dialogs
            .asks
            .iter()
            .find(|(_, a)| a.key == key && a.dialog == dialog)
            .map(|(n, _)| *n)
        else {
            return;
        };
        let Some(ask) = self.dialogs.asks.remove(&n) else {
            return;
        };
        let cancel = CancelRequestNotification::new(request_id(n));
        self.editor(rpc::cancel_request_line(&cancel));
        if why == Withdrawn::TimedOut {
            let line = notices::line("dialog timed out", &shown_title(&ask.title));
            if let Some((session, mut out)) = self.session_out(key) {
                session.say(&line, &mut out);
            }
        }
    }

    /// The editor's response to our dialog request `n` (ACP-08, ACP-09). A response for no
    /// open request is dropped; an answer that does not read, or an option not offered,
    /// answers the dialog as cancelled (an approval denied); a `cancelled` outcome also
    /// cancels the turn.
    pub(super) fn dialog_answer(&mut self, now: Instant, n: u64, outcome: Result<Value, Value>) {
        let Some(ask) = self.dialogs.asks.remove(&n) else {
            return;
        };
        if ask.method == ELICITATION_METHOD && outcome.is_err() {
            // ACP-36: an editor that advertised forms and refuses one is asked no more
            // forms: a choice is asked again as a permission request, text is cancelled.
            self.dialogs.forms_refused = true;
            return match ask.form {
                Form::Text => self.unasked(now, ask, FORMS_REFUSED),
                _ => self.permission_choice(now, ask),
            };
        }
        let (answer, cancel_turn) = match &ask.form {
            // ACP-36: a form's accept, decline or cancel answers it; the turn goes on.
            form if ask.method == ELICITATION_METHOD => {
                (elicit::answer(form.field(), outcome), false)
            }
            form => match outcome
                .ok()
                .and_then(|v| serde_json::from_value::<RequestPermissionResponse>(v).ok())
                .map(|r| r.outcome)
            {
                Some(RequestPermissionOutcome::Selected(selected)) => {
                    (self.selected(&ask, form, &selected.option_id.0), false)
                }
                Some(RequestPermissionOutcome::Cancelled) => (refusal(form), true),
                _ => (refusal(form), false),
            },
        };
        self.on_session(now, ask.key, |session, _| {
            session.respond(now, &ask.dialog, answer)
        });
        if cancel_turn {
            // As `session/cancel`: what else waits for the editor is denied too.
            self.cancel_dialogs(now, ask.key);
            self.on_session(now, ask.key, |session, _| session.cancel_turn(now));
        }
    }

    /// The answer an option the editor chose gives; an option not offered is a refusal.
    fn selected(&mut self, ask: &Ask, form: &Form, option: &str) -> UiResponse {
        match form {
            Form::Approval { tool, reply } => {
                let (verdict, always) = match option {
                    "allow_once" => (Verdict::Allow, None),
                    "allow_always" => (Verdict::Allow, Some(true)),
                    "reject_once" => (Verdict::Refuse, None),
                    "reject_always" => (Verdict::Refuse, Some(false)),
                    _ => (Verdict::Refuse, None),
                };
                if let Some(allowed) = always {
                    let entry = (ask.key, tool.clone());
                    if self.dialogs.always.len() < MAX_ALWAYS
                        || self.dialogs.always.contains_key(&entry)
                    {
                        self.dialogs.always.insert(entry, allowed);
                    }
                }
                reply.answer(verdict)
            }
            Form::Select { options } => elicit::chosen(options, option).map_or_else(
                || UiResponse::cancelled(""),
                |v| UiResponse::value("", v.clone()),
            ),
            Form::Confirm if option == elicit::YES => UiResponse::confirm(""),
            Form::Confirm if option == elicit::NO => UiResponse::decline(""),
            Form::Confirm => UiResponse::cancelled(""),
            Form::Text => UiResponse::cancelled(""),
        }
    }

    /// `session/cancel` (ACP-08): every dialog of the session waiting for the editor is
    /// answered as cancelled (approvals denied); the editor answers its permission requests
    /// `cancelled` itself, and those answers find nothing; its forms are withdrawn
    /// (`$/cancel_request`, ACP-36).
    pub(super) fn cancel_dialogs(&mut self, now: Instant, key: AgentKey) {
        for (n, ask) in self.dialogs.take_session(key) {
            if ask.method == ELICITATION_METHOD {
                let cancel = CancelRequestNotification::new(request_id(n));
                self.editor(rpc::cancel_request_line(&cancel));
            }
            self.on_session(now, key, |session, _| {
                session.respond(now, &ask.dialog, refusal(&ask.form))
            });
        }
    }

    /// The session's agent is gone: its requests are withdrawn from the editor
    /// (`$/cancel_request`).
    pub(super) fn forget_dialogs(&mut self, key: AgentKey) {
        for (n, _) in self.dialogs.take_session(key) {
            let cancel = CancelRequestNotification::new(request_id(n));
            self.editor(rpc::cancel_request_line(&cancel));
        }
    }
}

impl AcpSession {
    /// Answers the agent's dialog `dialog`.
    fn respond(&mut self, now: Instant, dialog: &str, answer: UiResponse) -> Drain {
        let answer = Call::UiRespond(dialog.to_owned(), answer);
        self.client.handle(now, Input::Call(answer));
        Drain::Needed
    }

    /// A short line in the session's turn (ACP-09, ACP-11), once it has its id.
    pub(super) fn say(&mut self, line: &str, out: &mut Outbox<'_>) {
        if self.acp_id.0.is_empty() {
            return;
        }
        let update = self.mapper.notice(line);
        out.update(self, update);
    }
}

/// The answer for a dialog nobody chose for: cancelled; an approval denied.
fn refusal(form: &Form) -> UiResponse {
    match form {
        Form::Approval { reply, .. } => reply.answer(Verdict::Refuse),
        _ => UiResponse::cancelled(""),
    }
}
