//! Sign-in (ACP-40, ACP-41, ACP-42): the `authMethods` `initialize` offers, `authenticate`
//! run as the agent's own `login` in an agent of its own (its sign-in page a URL elicitation,
//! a pasted code a form elicitation), and a turn that failed for want of credentials answered
//! `auth_required`.
//!
//! `initialize` comes before any agent runs, so the methods rest on the agent's kind, not on
//! an agent's answer: omp's browser sign-ins are a fixed list read from omp 18.2.3
//! ([`OMP_LOGIN_PROVIDERS`]); a provider omp no longer knows fails its `authenticate` with
//! omp's own `Unknown OAuth provider` text.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Instant;

use agent_client_protocol_schema::v1::{
    AuthMethod, AuthMethodAgent, AuthMethodTerminal, AuthenticateRequest, AuthenticateResponse,
    ClientCapabilities, CompleteElicitationNotification, CreateElicitationRequest,
    CreateElicitationResponse, ElicitationAction, ElicitationContentValue, ElicitationFormMode,
    ElicitationId, ElicitationRequestScope, ElicitationSchema, ElicitationUrlMode, Error,
    RequestId, StringPropertySchema,
};
use serde_json::{json, Value};

use super::map::withhold_credential_uris;
use super::session::Pending;
use super::{rpc, AgentKey, Bridge, ELICITATION_METHOD, TEXT_FIELD};
use crate::client::{self, AgentKind, Call, ClientEvent, CommandFailure};
use crate::wire::{Command, Login, ResponseData, UiRequest, UiResponse};

/// The method that uses the sign-in the agent already has (ACP-40): `authenticate` answers
/// `{}` at once. Offered first: an editor that picks the first method unasked
/// (codecompanion.nvim) gets one that works and starts nothing.
pub const AGENT_METHOD: &str = "agent";
/// The method an editor with `auth.terminal` runs in its terminal (ACP-40).
pub const TERMINAL_METHOD: &str = "terminal";
/// The prefix of an omp browser sign-in's method id: `login-PROVIDER` (ACP-40, ACP-41).
const LOGIN_METHOD_PREFIX: &str = "login-";
/// The argument a `terminal` method appends to the configured agent invocation (`musewire
/// acp … -- AGENT…`, so it lands among the agent's arguments): `musewire acp` then starts
/// the agent's own interactive mode in the terminal, without `--mode rpc`, instead of the
/// bridge (ACP-40).
pub const TERMINAL_LOGIN_ARG: &str = "--musewire-terminal-login";
/// omp 18.2.3's sign-ins that its RPC `login` completes without a terminal: the browser
/// (PKCE) flows, whose sign-in page omp builds itself before any network (`id`, name). Its
/// other 69 providers ask for an API key, which its RPC mode refuses.
pub(crate) const OMP_LOGIN_PROVIDERS: [(&str, &str); 4] = [
    ("anthropic", "Anthropic (Claude Pro/Max)"),
    ("openai-codex", "ChatGPT Plus/Pro (Codex Subscription)"),
    ("google-gemini-cli", "Google Cloud Code Assist (Gemini CLI)"),
    (
        "google-antigravity",
        "Antigravity (Gemini 3, Claude, GPT-OSS)",
    ),
];

/// The message of a turn's `auth_required` answer (ACP-42).
pub const SIGN_IN_REQUIRED: &str = "the agent needs credentials for its provider: sign in";

/// The `authMethods` of `initialize` (ACP-40), most likely to work first: [`AGENT_METHOD`];
/// for omp one `login-PROVIDER` per [`OMP_LOGIN_PROVIDERS`]; for an editor with
/// `auth.terminal`, [`TERMINAL_METHOD`]. For omp and pi only: the bundled agent needs no
/// sign-in, and nothing is assumed of any other agent.
pub(super) fn auth_methods(agent: AgentKind, editor: &ClientCapabilities) -> Vec<AuthMethod> {
    if !matches!(agent, AgentKind::Omp | AgentKind::Pi) {
        return Vec::new();
    }
    let mut methods = vec![AuthMethod::Agent(
        AuthMethodAgent::new(AGENT_METHOD, "Use the agent's own sign-in").description(
            "The provider keys and sign-ins the agent already has (its config, its environment).",
        ),
    )];
    if agent == AgentKind::Omp {
        for (id, name) in OMP_LOGIN_PROVIDERS {
            let method = AuthMethodAgent::new(format!("{LOGIN_METHOD_PREFIX}{id}"), name)
                .description(format!(
                    "Sign in to {name} in the browser (omp's /login {id})."
                ));
            methods.push(AuthMethod::Agent(method));
        }
    }
    if editor.auth.terminal {
        let method = AuthMethodTerminal::new(TERMINAL_METHOD, "Sign in in a terminal")
            .description("The agent's own interactive mode, where /login signs in.")
            .args(vec![TERMINAL_LOGIN_ARG.to_owned()]);
        methods.push(AuthMethod::Terminal(method));
    }
    methods
}

/// The command a `terminal` method runs (ACP-40): the configured agent command with
/// `--musewire-terminal-login` among its arguments (the editor appends it to the invocation),
/// without it and without `--mode rpc` (`--mode=rpc`): the agent's own interactive mode.
/// `None` when the argument is not there: the bridge runs as usual.
pub fn terminal_login_command(agent: &[String]) -> Option<Vec<String>> {
    if !agent.iter().any(|a| a == TERMINAL_LOGIN_ARG) {
        return None;
    }
    let mut out = Vec::new();
    let mut args = agent.iter().filter(|a| *a != TERMINAL_LOGIN_ARG).peekable();
    while let Some(arg) = args.next() {
        if arg == "--mode" && args.peek().is_some_and(|m| *m == "rpc") {
            args.next();
            continue;
        }
        if arg == "--mode=rpc" {
            continue;
        }
        out.push(arg.clone());
    }
    Some(out)
}

/// Whether an agent's error text says it lacks credentials (ACP-42): a provider's 401 or
/// an unknown key (`401`, `unauthorized`, `authentication`, `invalid api key`, `incorrect
/// api key`, `invalid_api_key`), or omp's and pi's own `No API key …`, `No model selected`
/// and `No models available`; any case.
pub(super) fn names_missing_credentials(error: &str) -> bool {
    let error = error.to_ascii_lowercase();
    let words = [
        "unauthorized",
        "unauthenticated",
        "authentication",
        "invalid api key",
        "incorrect api key",
        "invalid_api_key",
        "no api key",
        "missing api key",
        "no model selected",
        "no models available",
    ];
    words.iter().any(|w| error.contains(w)) || has_status_401(&error)
}

/// `401` standing alone (not inside a longer number).
fn has_status_401(text: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices("401").any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + 3).copied();
        !before.is_some_and(|b| b.is_ascii_digit()) && !after.is_some_and(|b| b.is_ascii_digit())
    })
}

/// The `auth_required` answer of a prompt whose turn failed for want of credentials
/// (ACP-42): its data says why, in the agent's words, and which methods sign in.
pub(super) fn sign_in_required(why: &str) -> Error {
    Error::auth_required()
        .data(json!({"message": SIGN_IN_REQUIRED, "error": withhold_credential_uris(why)}))
}

/// The sign-in running, if any: one at a time.
#[derive(Debug, Default)]
pub(super) struct SignIn {
    login: Option<LoginFlow>,
    /// The login agents not yet gone (the running one, and ended ones still exiting): their
    /// events are the sign-in's, never a session's.
    agents: BTreeSet<AgentKey>,
    /// Requests asked of the editor, for their ids.
    next: u64,
}

/// One `authenticate` run as the agent's `login`.
#[derive(Debug)]
struct LoginFlow {
    /// The login agent's key (a session with no ACP id).
    key: AgentKey,
    /// The `authenticate` request, while unanswered.
    editor: Option<RequestId>,
    /// The URL elicitation asked, by its request number, and its elicitation id.
    url: Option<(u64, ElicitationId)>,
    /// The pasted-code form asked: its request number and the agent's dialog id.
    code: Option<(u64, String)>,
}

fn request_id(n: u64) -> RequestId {
    super::methods::EditorReply::SignIn(n).id()
}

impl SignIn {
    /// Whether this agent key is a login agent's.
    pub(super) fn is_login(&self, key: AgentKey) -> bool {
        self.agents.contains(&key)
    }

    /// Whether this agent key is the running sign-in's.
    fn is_running(&self, key: AgentKey) -> bool {
        self.login.as_ref().is_some_and(|l| l.key == key)
    }
}

impl Bridge {
    /// `authenticate` (ACP-40, ACP-41): [`AGENT_METHOD`] answers `{}` at once; a
    /// `login-PROVIDER` of omp starts an agent of its own and sends it `login`, answered when
    /// the login ends; any other id, [`TERMINAL_METHOD`] included (the editor runs it), is
    /// invalid params.
    pub(super) fn authenticate(
        &mut self,
        now: Instant,
        id: &RequestId,
        request: AuthenticateRequest,
    ) -> Result<Option<Vec<u8>>, Error> {
        let method = request.method_id.0.as_ref();
        let editor = self.client_capabilities.clone().unwrap_or_default();
        let offered = auth_methods(self.config.agent, &editor);
        let known = offered
            .iter()
            .any(|m| m.id().0.as_ref() == method && matches!(m, AuthMethod::Agent(_)));
        if !known {
            let why = if method == TERMINAL_METHOD {
                "a terminal sign-in runs in the editor's terminal, not through authenticate"
            } else {
                "no such sign-in method was offered"
            };
            return Err(Error::invalid_params().data(json!(why)));
        }
        let Some(provider) = method.strip_prefix(LOGIN_METHOD_PREFIX) else {
            return Ok(Some(rpc::result_line(id, &AuthenticateResponse::new())));
        };
        // One sign-in at a time: a new one ends the one before (its request cancelled).
        self.end_login(
            now,
            Error::request_cancelled().data(json!("another sign-in began")),
        );
        let cwd = self
            .config
            .auth_cwd
            .clone()
            .unwrap_or_else(|| PathBuf::from("/"));
        let key = self.start_agent(now, cwd);
        self.signin.agents.insert(key);
        self.signin.login = Some(LoginFlow {
            key,
            editor: Some(id.clone()),
            url: None,
            code: None,
        });
        let login = Command::Login(Login {
            provider_id: provider.to_owned(),
            ..Login::default()
        });
        let asked = self.sessions.get_mut(&key).and_then(|session| {
            let sent = session
                .client
                .handle(now, client::Input::Call(Call::Send(login)));
            let request = sent.request()?;
            session
                .pending
                .insert(request, Pending::Login { editor: id.clone() });
            Some(())
        });
        self.drain(now, key);
        if asked.is_none() {
            self.end_login(
                now,
                Error::internal_error().data(json!("the agent could not be asked")),
            );
        }
        Ok(None)
    }

    /// The login agent's `login` answered (ACP-41): `{}` on success (and the URL
    /// elicitation completed), else the agent's error; the agent is stopped.
    pub(super) fn login_answered(
        &mut self,
        now: Instant,
        outcome: Result<ResponseData, CommandFailure>,
    ) {
        let Some(flow) = self.signin.login.as_ref() else {
            return;
        };
        if let Some((_, elicitation)) = &flow.url {
            if outcome.is_ok() {
                let done = CompleteElicitationNotification::new(elicitation.clone());
                self.editor(rpc::notification_line("elicitation/complete", &done));
            }
        }
        match outcome {
            Ok(_) => {
                if let Some(editor) = self.signin.login.as_mut().and_then(|f| f.editor.take()) {
                    self.editor(rpc::result_line(&editor, &AuthenticateResponse::new()));
                }
                // Answered: nothing is left for an error to go to.
                self.end_login(now, Error::internal_error());
            }
            Err(failure) => {
                let error =
                    Error::internal_error().data(json!(withhold_credential_uris(&failure.error)));
                self.end_login(now, error);
            }
        }
    }

    /// An event of the login agent (ACP-41): its sign-in page and its pasted-code dialog go
    /// to the editor; its end fails what waits; nothing else is shown (there is no turn).
    pub(super) fn login_event(&mut self, now: Instant, key: AgentKey, event: ClientEvent) {
        if let ClientEvent::Closed { error } = &event {
            self.signin.agents.remove(&key);
            if self.signin.is_running(key) {
                let error = Error::internal_error().data(json!(error.to_string()));
                self.end_login(now, error);
            }
            return;
        }
        // An ended sign-in's agent, on its way out: its dialogs are answered cancelled.
        if !self.signin.is_running(key) {
            if let ClientEvent::UiRequest(request) = &event {
                if request.is_dialog() {
                    let dialog = request.id().unwrap_or_default().to_owned();
                    let answer = Call::UiRespond(dialog, UiResponse::cancelled(""));
                    self.session_input(now, key, client::Input::Call(answer));
                }
            }
            return;
        }
        match event {
            ClientEvent::UiRequest(UiRequest::OpenUrl(open)) => {
                self.sign_in_page(open.url, open.instructions)
            }
            ClientEvent::UiRequest(UiRequest::Input(input)) => {
                self.pasted_code(input.id, input.title, input.placeholder)
            }
            // A dialog the sign-in cannot ask is answered cancelled.
            ClientEvent::UiRequest(request) if request.is_dialog() => {
                let dialog = request.id().unwrap_or_default().to_owned();
                let answer = Call::UiRespond(dialog, UiResponse::cancelled(""));
                self.session_input(now, key, client::Input::Call(answer));
            }
            ClientEvent::UiWithdrawn { id, .. } => {
                let open = self
                    .signin
                    .login
                    .as_mut()
                    .and_then(|f| f.code.take_if(|(_, dialog)| *dialog == id).map(|(n, _)| n));
                if let Some(n) = open {
                    let cancel = agent_client_protocol_schema::v1::CancelRequestNotification::new(
                        request_id(n),
                    );
                    self.editor(rpc::cancel_request_line(&cancel));
                }
            }
            _ => {}
        }
    }

    /// The sign-in page (`open_url`): a URL elicitation tied to the `authenticate` request
    /// where the editor offers them; else `authenticate` is answered `auth_required` with the
    /// URL in its message, and the login goes on (the page's callback reaches the agent).
    fn sign_in_page(&mut self, url: String, instructions: Option<String>) {
        let Some(editor) = self.signin.login.as_ref().and_then(|f| f.editor.clone()) else {
            return;
        };
        let urls = self
            .client_capabilities
            .as_ref()
            .and_then(|c| c.elicitation.as_ref())
            .is_some_and(|e| e.supports_url());
        let message = instructions
            .filter(|i| !i.trim().is_empty())
            .unwrap_or_else(|| "Sign in in the browser.".to_owned());
        if !urls {
            let error = Error::auth_required().data(json!({
                "message": format!("Open {url} to sign in: {message}"),
                "url": url,
            }));
            if let Some(flow) = self.signin.login.as_mut() {
                flow.editor = None;
            }
            return self.editor(rpc::error_line(&editor, &error));
        }
        self.signin.next += 1;
        let n = self.signin.next;
        let elicitation = ElicitationId::new(format!("musewire-signin-{n}"));
        let mode = ElicitationUrlMode::new(
            ElicitationRequestScope::new(editor),
            elicitation.clone(),
            url,
        );
        let request = CreateElicitationRequest::new(mode, message);
        self.editor(rpc::request_line(
            &request_id(n),
            ELICITATION_METHOD,
            &request,
        ));
        if let Some(flow) = self.signin.login.as_mut() {
            flow.url = Some((n, elicitation));
        }
    }

    /// A pasted-code dialog (`input`): a form elicitation of one string field where the
    /// editor offers forms, tied to the `authenticate` request; else left open, unanswered
    /// (omp asks again at once after an empty answer: the page's callback may still complete
    /// the login, and the dialog's own timeout closes it).
    fn pasted_code(&mut self, dialog: String, title: String, placeholder: Option<String>) {
        let editor = self.signin.login.as_ref().and_then(|f| f.editor.clone());
        let forms = self
            .client_capabilities
            .as_ref()
            .and_then(|c| c.elicitation.as_ref())
            .is_some_and(|e| e.supports_form());
        let (Some(editor), true) = (editor, forms) else {
            return;
        };
        let mut field = StringPropertySchema::new();
        field.title = Some(withhold_credential_uris(&title));
        field.description = placeholder;
        let schema = ElicitationSchema::new().property(TEXT_FIELD, field, true);
        let mode = ElicitationFormMode::new(ElicitationRequestScope::new(editor), schema);
        let request = CreateElicitationRequest::new(mode, withhold_credential_uris(&title));
        self.signin.next += 1;
        let n = self.signin.next;
        self.editor(rpc::request_line(
            &request_id(n),
            ELICITATION_METHOD,
            &request,
        ));
        if let Some(flow) = self.signin.login.as_mut() {
            flow.code = Some((n, dialog));
        }
    }

    /// The editor's answer to sign-in request `n` (ACP-41). The URL
    /// accepted: the login goes on; the form accepted with its text: the text answers the
    /// agent's dialog. Anything else, declined, cancelled or unreadable, cancels the sign-in
    /// (`authenticate` answered -32800, the agent stopped).
    pub(super) fn sign_in_answer(&mut self, now: Instant, n: u64, outcome: &Result<Value, Value>) {
        let Some(flow) = self.signin.login.as_mut() else {
            return;
        };
        let action = outcome
            .as_ref()
            .ok()
            .and_then(|v| serde_json::from_value::<CreateElicitationResponse>(v.clone()).ok())
            .map(|r| r.action);
        if flow.url.as_ref().is_some_and(|(m, _)| *m == n) {
            if !matches!(action, Some(ElicitationAction::Accept(_))) {
                let error = Error::request_cancelled().data(json!("the sign-in was cancelled"));
                self.end_login(now, error);
            }
            return;
        }
        if let Some((_, dialog)) = flow.code.take_if(|(m, _)| *m == n) {
            let key = flow.key;
            let text = match action {
                Some(ElicitationAction::Accept(accept)) => {
                    match accept.content.as_ref().and_then(|c| c.get(TEXT_FIELD)) {
                        Some(ElicitationContentValue::String(text)) => Some(text.clone()),
                        _ => None,
                    }
                }
                _ => None,
            };
            match text {
                Some(text) => {
                    let answer = Call::UiRespond(dialog, UiResponse::value("", text));
                    self.session_input(now, key, client::Input::Call(answer));
                }
                None => {
                    let error = Error::request_cancelled().data(json!("the sign-in was cancelled"));
                    self.end_login(now, error);
                }
            }
        }
    }

    /// The editor withdrew its `authenticate` (`$/cancel_request`): the sign-in is cancelled.
    pub(super) fn sign_in_withdrawn(&mut self, now: Instant, id: &RequestId) {
        let asked = self
            .signin
            .login
            .as_ref()
            .is_some_and(|f| f.editor.as_ref() == Some(id));
        if asked {
            let error = Error::request_cancelled().data(json!("the sign-in was cancelled"));
            self.end_login(now, error);
        }
    }

    /// Ends the sign-in running, if any: its `authenticate` still unanswered gets `error`,
    /// its requests open with the editor are withdrawn, its agent is stopped (ACP-12).
    fn end_login(&mut self, now: Instant, error: Error) {
        let Some(flow) = self.signin.login.take() else {
            return;
        };
        if let Some(editor) = &flow.editor {
            self.editor(rpc::error_line(editor, &error));
        }
        for n in flow.code.iter().map(|(n, _)| *n) {
            let cancel =
                agent_client_protocol_schema::v1::CancelRequestNotification::new(request_id(n));
            self.editor(rpc::cancel_request_line(&cancel));
        }
        if let Some(session) = self.sessions.get_mut(&flow.key) {
            session.pending.clear();
        }
        self.session_input(now, flow.key, client::Input::Call(Call::Stop));
        self.on_session(now, flow.key, |session, out| session.stop_agent(now, out));
    }
}
