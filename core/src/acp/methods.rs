//! The ACP methods the bridge serves and asks, named once: the editor's requests and
//! notifications read by the schema's method names ([`AGENT_METHOD_NAMES`],
//! [`PROTOCOL_LEVEL_METHOD_NAMES`]) into typed params ([`EditorRequest`],
//! [`EditorNotification`]), and the ids of the bridge's own requests to the editor, whose
//! answers are routed by what they ask ([`EditorReply`]).
//!
//! Serving a new method is one variant of [`EditorRequest`] with its schema params, one arm
//! of [`EditorRequest::parse`] naming it by its schema constant, and one arm of the bridge's
//! `request` calling its handler (the match there is exhaustive, so a parsed method cannot
//! go unhandled). Asking the editor something new is one variant of [`EditorReply`] with its
//! id's prefix, and one arm where the bridge routes the answers.

use agent_client_protocol_schema::v1::{
    AuthenticateRequest, CancelNotification, CancelRequestNotification, CloseSessionRequest,
    DeleteSessionRequest, Error, ForkSessionRequest, InitializeRequest, ListSessionsRequest,
    LoadSessionRequest, NewSessionRequest, PromptRequest, RequestId, ResumeSessionRequest,
    SetSessionConfigOptionRequest, SetSessionModeRequest, AGENT_METHOD_NAMES,
    PROTOCOL_LEVEL_METHOD_NAMES,
};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::review::ReviewTicket;
use crate::output::READ_METHOD;

/// A request of the editor's that the bridge serves, with its typed params. It lives for one
/// dispatch and is moved once, so its variants are not boxed (as the schema's own
/// `ClientRequest`).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(super) enum EditorRequest {
    Initialize(InitializeRequest),
    /// ACP-41.
    Authenticate(AuthenticateRequest),
    NewSession(NewSessionRequest),
    /// ACP-06.
    LoadSession(LoadSessionRequest),
    Prompt(PromptRequest),
    /// ACP-26.
    ListSessions(ListSessionsRequest),
    /// ACP-25.
    CloseSession(CloseSessionRequest),
    /// ACP-25.
    ResumeSession(ResumeSessionRequest),
    /// ACP-31.
    ForkSession(ForkSessionRequest),
    /// ACP-32.
    DeleteSession(DeleteSessionRequest),
    /// ACP-35.
    SetMode(SetSessionModeRequest),
    /// ACP-24.
    SetConfigOption(SetSessionConfigOptionRequest),
    /// `_muse/readOutput` (OUT-01): its params are read by the reads' own checks.
    ReadOutput(Value),
}

impl EditorRequest {
    /// The request `method` names, its params read as its schema type: a method the bridge
    /// does not serve is `method_not_found` (with the method as data), params that do not
    /// read are `invalid_params`.
    pub(super) fn parse(method: &str, params: Value) -> Result<Self, Error> {
        let names = &AGENT_METHOD_NAMES;
        Ok(match method {
            m if m == names.initialize => Self::Initialize(params_of(params)?),
            m if m == names.authenticate => Self::Authenticate(params_of(params)?),
            m if m == names.session_new => Self::NewSession(params_of(params)?),
            m if m == names.session_load => Self::LoadSession(params_of(params)?),
            m if m == names.session_prompt => Self::Prompt(params_of(params)?),
            m if m == names.session_list => Self::ListSessions(params_of(params)?),
            m if m == names.session_close => Self::CloseSession(params_of(params)?),
            m if m == names.session_resume => Self::ResumeSession(params_of(params)?),
            m if m == names.session_fork => Self::ForkSession(params_of(params)?),
            m if m == names.session_delete => Self::DeleteSession(params_of(params)?),
            m if m == names.session_set_mode => Self::SetMode(params_of(params)?),
            m if m == names.session_set_config_option => Self::SetConfigOption(params_of(params)?),
            READ_METHOD => Self::ReadOutput(params),
            _ => return Err(Error::method_not_found().data(json!(method))),
        })
    }
}

/// A notification of the editor's that the bridge acts on.
#[derive(Debug)]
pub(super) enum EditorNotification {
    /// `session/cancel` (ACP-05, ACP-08, ACP-28, ACP-33).
    Cancel(CancelNotification),
    /// `$/cancel_request`: the editor withdrew a request of its own (ACP-41).
    CancelRequest(CancelRequestNotification),
}

impl EditorNotification {
    /// The notification `method` names, when the bridge acts on it and its params read;
    /// `None` (ignored) otherwise.
    pub(super) fn parse(method: &str, params: Value) -> Option<Self> {
        match method {
            m if m == AGENT_METHOD_NAMES.session_cancel => {
                serde_json::from_value(params).ok().map(Self::Cancel)
            }
            m if m == PROTOCOL_LEVEL_METHOD_NAMES.cancel_request => {
                serde_json::from_value(params).ok().map(Self::CancelRequest)
            }
            _ => None,
        }
    }
}

/// One of the bridge's own requests to the editor, by its id: the answer goes to what asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EditorReply {
    /// A dialog of an agent's (ACP-08, ACP-09): `musewire-dialog-N`.
    Dialog(u64),
    /// A sign-in's question (ACP-41): `musewire-signin-N`.
    SignIn(u64),
    /// An edited file's write (ACP-38): `musewire-write-N`.
    Write(ReviewTicket),
}

const DIALOG_PREFIX: &str = "musewire-dialog-";
const SIGN_IN_PREFIX: &str = "musewire-signin-";
const WRITE_PREFIX: &str = "musewire-write-";

impl EditorReply {
    /// The id the request goes out with.
    pub(super) fn id(self) -> RequestId {
        RequestId::Str(match self {
            EditorReply::Dialog(n) => format!("{DIALOG_PREFIX}{n}"),
            EditorReply::SignIn(n) => format!("{SIGN_IN_PREFIX}{n}"),
            EditorReply::Write(ticket) => format!("{WRITE_PREFIX}{}", ticket.0),
        })
    }

    /// Which request of ours an editor's response answers; `None` for an id not ours.
    pub(super) fn of(id: &RequestId) -> Option<Self> {
        let RequestId::Str(id) = id else {
            return None;
        };
        let number = |prefix: &str| id.strip_prefix(prefix)?.parse::<u64>().ok();
        if let Some(n) = number(DIALOG_PREFIX) {
            return Some(EditorReply::Dialog(n));
        }
        if let Some(n) = number(SIGN_IN_PREFIX) {
            return Some(EditorReply::SignIn(n));
        }
        number(WRITE_PREFIX).map(|n| EditorReply::Write(ReviewTicket(n)))
    }
}

pub(super) fn params_of<T: DeserializeOwned>(params: Value) -> Result<T, Error> {
    serde_json::from_value(params).map_err(|e| Error::invalid_params().data(json!(e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each of our request ids reads back as what asked; another id is not ours.
    #[test]
    fn editor_reply_ids_round_trip() {
        for reply in [
            EditorReply::Dialog(3),
            EditorReply::SignIn(0),
            EditorReply::Write(ReviewTicket(7)),
        ] {
            assert_eq!(EditorReply::of(&reply.id()), Some(reply));
        }
        assert_eq!(EditorReply::of(&RequestId::Number(3)), None);
        assert_eq!(
            EditorReply::of(&RequestId::Str("musewire-dialog-x".into())),
            None
        );
    }

    /// A method is served only under its schema name; another is `method_not_found`.
    #[test]
    fn editor_requests_are_read_by_their_schema_names() {
        let init = EditorRequest::parse("initialize", json!({"protocolVersion": 1}));
        assert!(matches!(init, Ok(EditorRequest::Initialize(_))));
        let unknown = EditorRequest::parse("session/archive", json!({})).unwrap_err();
        assert_eq!(i32::from(unknown.code), -32601);
        let bad = EditorRequest::parse("session/new", json!({"cwd": 1})).unwrap_err();
        assert_eq!(i32::from(bad.code), -32602);
    }
}
