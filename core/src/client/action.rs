//! What a [`Client`](super::Client) hands out: actions for the driver and events for the
//! application.

use serde::Serialize;

use super::error::SessionError;
use crate::frame::{FrameError, ProtocolVersion};
use crate::spill::{Outcome, SpillId, SpillWrite};
use crate::wire::{
    AgentFrame, AgentMessage, AssistantMessageEvent, ErrorCode, HostToolCall, HostUriRequest,
    ResponseData, SessionEvent, UiRequest,
};

/// The id of a request the application made. Counters, so runs are reproducible; on the wire
/// it is `req_N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct RequestId(pub u64);

impl RequestId {
    /// The id as written on the wire.
    pub fn wire(self) -> String {
        format!("req_{}", self.0)
    }

    /// The request id a wire id names, if it is one of ours.
    pub fn from_wire(id: &str) -> Option<Self> {
        id.strip_prefix("req_")?.parse().ok().map(RequestId)
    }
}

/// Work for the driver, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
// An event is moved once from the client to the driver; boxing it would cost an allocation
// per event on the hot path.
#[allow(clippy::large_enum_variant)]
pub enum Action {
    /// Write these bytes to the agent's stdin.
    Write {
        /// One or more complete JSON lines.
        #[serde(serialize_with = "as_text")]
        bytes: Vec<u8>,
    },
    /// Stop the agent process: the session has failed (FRAME-13).
    StopAgent,
    /// Save this host tool result's text with the spill store (SPILL-03), then answer with
    /// [`Input::SpillDone`](super::Input::SpillDone) and the same id: the store's
    /// [`Saved`](crate::spill::Saved) or a [`SaveFailure`](crate::spill::SaveFailure). The
    /// result is sent once answered.
    SpillWrite {
        /// The id to answer with (`spill-N`).
        id: SpillId,
        /// What to save.
        write: SpillWrite,
    },
    /// Something for the application.
    Event(ClientEvent),
}

fn as_text<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(bytes))
}

/// A failed command: the agent's `{success:false, error, code?}` (CALL-08).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandFailure {
    /// The agent's message.
    pub error: String,
    /// The machine-readable code (`session_busy`, `stale_cursor`, …), when the agent gave one;
    /// a code this version does not know is kept as [`ErrorCode::Other`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
}

impl CommandFailure {
    /// A failure with a message and no code.
    pub fn new(error: impl Into<String>) -> Self {
        CommandFailure {
            error: error.into(),
            code: None,
        }
    }
}

impl std::fmt::Display for CommandFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.code {
            Some(code) => write!(f, "{} ({code})", self.error),
            None => f.write_str(&self.error),
        }
    }
}

impl std::error::Error for CommandFailure {}

/// Where a whole-history read got its messages (PAGE-07).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HistorySource {
    /// Drained `get_messages_page` pages.
    Pages,
    /// The legacy `get_messages` command.
    Legacy,
}

/// An event for the application.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ClientEvent {
    /// The session is ready for commands, in this protocol version (FRAME-03..06).
    Ready {
        /// The version in force.
        protocol: ProtocolVersion,
    },
    /// The answer to a request (CALL-01).
    Response {
        /// The id [`CallResult::Request`](super::CallResult::Request) gave for the call that sent
        /// the command.
        request: RequestId,
        /// The command's wire type.
        command: String,
        /// `data` on success, typed by the command ([`ResponseData::Other`] for a command this
        /// version does not know, or `Other(null)` when the agent sent none); the failure
        /// otherwise.
        #[serde(serialize_with = "crate::outcome::serialize_outcome")]
        outcome: Result<ResponseData, CommandFailure>,
    },
    /// A prompt that was acknowledged turned out local-only (`prompt_result`, CALL-03).
    PromptLocalOnly {
        /// The prompt's request.
        request: RequestId,
    },
    /// A prompt that was acknowledged failed later: a second response with its id (CALL-03).
    PromptFailed {
        /// The prompt's request.
        request: RequestId,
        /// The agent's error for the prompt, with its code when it gave one.
        failure: CommandFailure,
    },
    /// The result of a whole-history read (PAGE-07).
    History {
        /// The request [`Call::ReadHistory`](super::Call::ReadHistory) returned.
        request: RequestId,
        /// Where the messages came from.
        source: HistorySource,
        /// The messages, or why they could not be read.
        #[serde(serialize_with = "crate::outcome::serialize_outcome")]
        outcome: Result<Vec<AgentMessage>, CommandFailure>,
    },
    /// A whole-history read took a page and asks for the next (PAGE-07).
    HistoryProgress {
        /// The read's request.
        request: RequestId,
        /// Messages read so far.
        read: usize,
        /// The total the agent advertises.
        total: u64,
    },
    /// An agent run began (`agent_start`): the agent is streaming.
    TurnStarted,
    /// The agent's turn ended: an `agent_end` that is terminal (`isTerminal` not false).
    TurnFinished,
    /// The agent asks the host to run one of its tools (HOST-02); answer with the call's
    /// `id`.
    HostToolCall(HostToolCall),
    /// A host tool result the spill policy spilled, or kept because it could not save it
    /// (SPILL-03, SPILL-05: the log of a failed or skipped save); sent on as the outcome
    /// says.
    HostToolResultSettled {
        /// The host tool call.
        id: String,
        /// Spilled (where to), or kept and why.
        outcome: Outcome,
    },
    /// The agent withdrew a host tool call (HOST-03); a later result for it is dropped.
    HostToolCancelled {
        /// The call withdrawn.
        id: String,
    },
    /// The agent asks the host to read or write a host URI (HOST-05); answer with the
    /// request's `id`.
    HostUriRequest(HostUriRequest),
    /// The agent withdrew a host URI request (HOST-05).
    HostUriCancelled {
        /// The request withdrawn.
        id: String,
    },
    /// An extension UI request: a dialog to answer (`select`, `confirm`, `input`, `editor`),
    /// or a notice (HOST-06). A `cancel` is given as [`ClientEvent::UiWithdrawn`] instead.
    UiRequest(UiRequest),
    /// A dialog is no longer open: the agent cancelled it, or its timeout passed and the agent
    /// took the default (HOST-06). An answer to it is dropped.
    UiWithdrawn {
        /// The dialog's `id`, as its [`UiRequest`] carried it.
        id: String,
        /// True when its timeout passed, false when the agent cancelled it.
        timed_out: bool,
    },
    /// Any other frame from the agent: session events, notices, frames of types this version
    /// does not know (CALL-06: [`AgentFrame::Unknown`], re-serialised unchanged).
    Frame {
        /// The frame, typed; a type this version does not know is an [`AgentFrame::Unknown`].
        frame: AgentFrame,
    },
    /// A response or failure that matches no pending request (CALL-02): never dropped silently.
    Unmatched {
        /// The response or failure as received, its `id` naming no pending request.
        frame: AgentFrame,
    },
    /// A framing error that does not end the session (FRAME-02, FRAME-13), or a host answer
    /// over the agent's limit that went out as an error instead (HOST-09).
    ProtocolWarning {
        /// The ID of the rule broken, as in `conformance/RULES.md` (`FRAME-02`, `HOST-09`, …).
        rule: &'static str,
        /// What went wrong, one line for a log.
        message: String,
        /// What was wrong and where, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
        /// The first bytes of the offending line (at most 64), when there was one.
        #[serde(skip_serializing_if = "Option::is_none")]
        prefix: Option<String>,
    },
    /// The session ended; every pending request has been failed with this error before it.
    Closed {
        /// Why.
        error: SessionError,
    },
}

impl ClientEvent {
    /// The assistant text this event adds, when it is a `message_update` whose delta is
    /// assistant text (not thinking, not a tool call's arguments).
    pub fn text_delta(&self) -> Option<&str> {
        self.delta("text_delta")
    }

    /// The reasoning text this event adds, when it is a `message_update` whose delta is
    /// thinking.
    pub fn thinking_delta(&self) -> Option<&str> {
        self.delta("thinking_delta")
    }

    /// The delta of a `message_update` of `kind`. A `message_update` the wire model could not
    /// type (members missing that the model requires, CALL-06) is read as JSON reads it, so a
    /// host still shows what such an agent streams.
    fn delta(&self, kind: &str) -> Option<&str> {
        let ClientEvent::Frame { frame } = self else {
            return None;
        };
        match frame {
            AgentFrame::Event(SessionEvent::MessageUpdate(update)) => {
                match (&update.assistant_message_event, kind) {
                    (AssistantMessageEvent::TextDelta(d), "text_delta")
                    | (AssistantMessageEvent::ThinkingDelta(d), "thinking_delta") => Some(&d.delta),
                    _ => None,
                }
            }
            AgentFrame::Unknown(value) if value.get("type")? == "message_update" => {
                let event = value.get("assistantMessageEvent")?;
                (event.get("type")? == kind).then(|| event.get("delta")?.as_str())?
            }
            _ => None,
        }
    }

    pub(crate) fn warning(error: &FrameError) -> Self {
        let (detail, prefix) = match error {
            FrameError::NotJson { detail, prefix } => (Some(detail.clone()), Some(prefix.clone())),
            FrameError::LineTooLong { limit } => (Some(format!("limit {limit} bytes")), None),
            _ => (None, None),
        };
        ClientEvent::ProtocolWarning {
            rule: error.rule(),
            message: error.to_string(),
            detail,
            prefix,
        }
    }
}
