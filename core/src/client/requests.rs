//! The requests a host's handlers answer (a host tool call, a host URI request, an extension
//! UI request: the wire model's [`HostToolCall`](crate::wire::HostToolCall),
//! [`HostUriRequest`](crate::wire::HostUriRequest) and [`UiRequest`](crate::wire::UiRequest)),
//! and which of them an event withdraws.

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
