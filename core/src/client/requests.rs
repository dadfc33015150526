//! The requests a host's handlers answer: a host tool call, a host URI request, an extension
//! UI request. Both drivers hand these to the handlers an application registers.

use serde_json::Value;

/// A host tool call handed to a handler (HOST-02).
#[derive(Debug, Clone, PartialEq)]
pub struct HostToolCall {
    /// The call's id.
    pub id: String,
    /// The model's tool call id.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// Its arguments.
    pub arguments: Value,
}

/// A host URI request handed to a handler (HOST-05).
#[derive(Debug, Clone, PartialEq)]
pub struct HostUriRequest {
    /// The request's id.
    pub id: String,
    /// `read` or `write`.
    pub operation: String,
    /// The URI.
    pub url: String,
    /// The content to write, for a write.
    pub content: Option<String>,
}

/// An extension UI request handed to a handler (HOST-06): a dialog to answer or a notice.
#[derive(Debug, Clone, PartialEq)]
pub struct UiRequest {
    /// The request's id.
    pub id: String,
    /// `select`, `confirm`, `input`, `editor`, `notify`, `setStatus`, …
    pub method: String,
    /// The whole frame.
    pub frame: Value,
}

/// Which kind of host request an id names (ids of different kinds may coincide).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostRequestKind {
    /// A host tool call (HOST-02).
    Tool,
    /// A host URI request (HOST-05).
    Uri,
    /// An extension UI request (HOST-06).
    Ui,
}

impl super::ClientEvent {
    /// The host request this event withdraws (a cancelled tool call or URI request, a dialog
    /// withdrawn or timed out), if it is such an event.
    pub fn withdraws(&self) -> Option<(HostRequestKind, &str)> {
        match self {
            super::ClientEvent::HostToolCancelled { id } => Some((HostRequestKind::Tool, id)),
            super::ClientEvent::HostUriCancelled { id } => Some((HostRequestKind::Uri, id)),
            super::ClientEvent::UiWithdrawn { id, .. } => Some((HostRequestKind::Ui, id)),
            _ => None,
        }
    }
}
