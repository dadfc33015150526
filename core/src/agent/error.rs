//! Calls an [`Agent`](super::Agent) refuses: nothing was written.

use thiserror::Error;

use super::CommandId;

/// A call the agent refuses; nothing was written.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AgentError {
    /// The command is not pending: already answered, or never handed out.
    #[error("command {} is not pending", .0.0)]
    UnknownCommand(CommandId),
    /// [`AgentCall::RespondMessagesPage`](super::AgentCall::RespondMessagesPage) for a
    /// command that is not a `get_messages_page`.
    #[error("command {} is not a get_messages_page", .0.0)]
    NotAPageCommand(CommandId),
    /// The host's side has closed: no new host requests (HOST-07). The reference's message.
    #[error("{0}")]
    Disconnected(&'static str),
    /// A host tool the host has not registered (HOST-01).
    #[error("Host tool \"{0}\" is not registered")]
    UnknownHostTool(String),
    /// A URL whose scheme the host has not registered (HOST-04).
    #[error("Host URI scheme is not registered: {0}")]
    UnknownHostUriScheme(String),
    /// A write to a scheme the host did not register as writable (HOST-05).
    #[error("Host URI scheme is not writable: {0}://")]
    NotWritable(String),
    /// [`AgentCall::UiDialog`](super::AgentCall::UiDialog) with a notice or `cancel`, or
    /// [`AgentCall::UiNotice`](super::AgentCall::UiNotice) with a dialog.
    #[error("extension UI method {0:?} does not fit this call")]
    WrongUiMethod(String),
    /// A frame that is not a JSON object with a string `type`.
    #[error("a frame must be a JSON object with a string \"type\"")]
    InvalidFrame,
}

/// Why a host tool call or host URI request ended without a result; its text is what the
/// agent gives the model, and what a transcript's `{"err": …}` holds.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HostFailure {
    /// The host answered with `isError` (HOST-02, HOST-05): its text, or the reference's
    /// default when it gave none.
    #[error("{0}")]
    Failed(String),
    /// The host's side closed before it answered (HOST-07): the reference's message,
    /// `RPC client disconnected before host tool execution completed` or
    /// `RPC client disconnected before host URI request completed`.
    #[error("{0}")]
    Disconnected(&'static str),
}

impl serde::Serialize for HostFailure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
