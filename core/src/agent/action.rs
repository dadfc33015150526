//! What an [`Agent`](super::Agent) hands out: lines for stdout and events for the
//! application, and the ids that name requests in both directions.

use serde::Serialize;
use serde_json::Value;

use super::HostFailure;
use crate::frame::ProtocolVersion;
use crate::output::{OutputRead, ReadRequest, StoredOutput};
pub use crate::spill::SpillId;
use crate::spill::{Outcome, SpillWrite};
use crate::wire::{Command, HostToolDefinition, HostUriSchemeDefinition, ToolResult};

/// Names a command from the host as the application sees it: a counter, so runs are
/// reproducible (the client's own requests are [`client::RequestId`](crate::client::RequestId)s).
/// The host's own `id` travels with it in [`AgentEvent::Command`] and is echoed in the
/// response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct CommandId(pub u64);

macro_rules! outbound_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub u64);

        impl $name {
            /// The id as written on the wire.
            pub fn wire(self) -> String {
                format!(concat!($prefix, "{}"), self.0)
            }

            /// The id a wire id names, if it is one this agent wrote.
            pub fn from_wire(id: &str) -> Option<Self> {
                let n: u64 = id.strip_prefix($prefix)?.parse().ok()?;
                (Self(n).wire() == id).then_some(Self(n))
            }
        }
    };
}

outbound_id!(
    /// A `host_tool_call` the agent made (HOST-02); on the wire `host-tool-N`.
    HostCallId,
    "host-tool-"
);
outbound_id!(
    /// A `host_uri_request` the agent made (HOST-05); on the wire `host-uri-N`.
    HostUriId,
    "host-uri-"
);
outbound_id!(
    /// An extension UI dialog the agent opened (HOST-06); on the wire `ui-N`.
    DialogId,
    "ui-"
);

outbound_id!(
    /// A positioned read of a stored output the agent asked the driver for (OUT-10); in
    /// transcripts `read-N`.
    ReadId,
    "read-"
);

/// Work for the driver, in order.
///
/// It serialises as the client's actions do (transcripts compare these):
/// `{"action":"write","bytes":LINE}` with the line as text (invalid UTF-8 as U+FFFD),
/// `{"action":"event","event":…}` with the event's members,
/// `{"action":"spill_write","id":"spill-N","write":SpillWrite}` and
/// `{"action":"output_read","id":"read-N","request":ReadRequest}` (the deadline, always
/// 20 s (OUT-07) after the command arrived, is not written).
#[derive(Debug, Clone, PartialEq)]
// An event is moved once from the agent to the driver, as the client's are; boxing it would
// cost an allocation per command (`read_output`'s command made the event the larger).
#[allow(clippy::large_enum_variant)]
pub enum AgentAction {
    /// Write this one physical line (LF included) to stdout. Lines of a chunked frame come one
    /// per action, produced as they are polled, so a driver that stops polling while its
    /// writer is full holds at most one chunk (FRAME-11).
    Write(Vec<u8>),
    /// Something for the application.
    Event(AgentEvent),
    /// Save this text with the spill store (SPILL-03, SPILL-06), then answer with
    /// [`Input::SpillDone`](super::Input::SpillDone) and the same id: the store's
    /// [`Saved`](crate::spill::Saved), or a [`SaveFailure`](crate::spill::SaveFailure).
    SpillWrite {
        /// The id to answer with.
        id: SpillId,
        /// What to save.
        write: SpillWrite,
    },
    /// Read this range of a stored output with a positioned read by `read.deadline`
    /// (OUT-04, OUT-10), then answer with [`Input::ReadDone`](super::Input::ReadDone) and
    /// the same id: the bytes and the output's length, or an
    /// [`OutputError`](crate::output::OutputError). An answer after the deadline is dropped
    /// (the host has had `read_timed_out`).
    OutputRead {
        /// The id to answer with.
        id: ReadId,
        /// What to read, and by when.
        read: OutputRead,
    },
}

impl Serialize for AgentAction {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "action", rename_all = "snake_case")]
        enum Shape<'a> {
            Write {
                #[serde(serialize_with = "as_text")]
                bytes: &'a [u8],
            },
            Event(&'a AgentEvent),
            SpillWrite {
                id: String,
                write: &'a SpillWrite,
            },
            OutputRead {
                id: String,
                request: &'a ReadRequest,
            },
        }
        match self {
            AgentAction::Write(bytes) => Shape::Write { bytes }.serialize(serializer),
            AgentAction::Event(event) => Shape::Event(event).serialize(serializer),
            AgentAction::SpillWrite { id, write } => Shape::SpillWrite {
                id: id.wire(),
                write,
            }
            .serialize(serializer),
            AgentAction::OutputRead { id, read } => Shape::OutputRead {
                id: id.wire(),
                request: &read.request,
            }
            .serialize(serializer),
        }
    }
}

fn as_text<S: serde::Serializer>(bytes: &&[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(bytes))
}

/// Whether a dialog was answered, and how (HOST-06, HOST-07).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum DialogOutcome {
    /// The host's `extension_ui_response`, as received.
    Answered {
        /// The whole `extension_ui_response` object (`value`, `confirmed` or `cancelled`).
        response: Value,
    },
    /// The dialog's timeout passed: the application takes its default.
    TimedOut,
    /// The host's side closed first: "RPC client disconnected before extension UI response
    /// completed" (HOST-07).
    Disconnected,
}

impl DialogOutcome {
    /// The message the reference rejects a dialog with when stdin closes.
    pub const DISCONNECTED: &'static str =
        "RPC client disconnected before extension UI response completed";

    /// The answer of a `select`, `input` or `editor` dialog, as the reference reads it: none
    /// when cancelled, timed out or without a string `value`.
    pub fn value(&self) -> Option<&str> {
        match self {
            DialogOutcome::Answered { response } if !cancelled(response) => {
                response.get("value").and_then(Value::as_str)
            }
            _ => None,
        }
    }

    /// The answer of a `confirm` dialog: false unless the host answered `confirmed: true`.
    pub fn confirmed(&self) -> bool {
        match self {
            DialogOutcome::Answered { response } if !cancelled(response) => {
                response.get("confirmed") == Some(&Value::Bool(true))
            }
            _ => false,
        }
    }

    /// Whether the host reported that its own dialog timed out (`cancelled`, `timedOut`), or
    /// the agent's timeout passed.
    pub fn timed_out(&self) -> bool {
        match self {
            DialogOutcome::Answered { response } => {
                cancelled(response) && super::js::truthy(response.get("timedOut"))
            }
            DialogOutcome::TimedOut => true,
            DialogOutcome::Disconnected => false,
        }
    }
}

fn cancelled(response: &Value) -> bool {
    super::js::truthy(response.get("cancelled"))
}

/// What a host URI read gave (HOST-05), with the reference's defaults.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostUriContent {
    /// The content (empty when absent, and for a write).
    pub content: String,
    /// `contentType`, `text/plain` when absent.
    pub content_type: String,
    /// Resolution notes, when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<String>>,
    /// Whether the content is immutable: the result's `immutable`, else the scheme's.
    pub immutable: bool,
}

/// An event for the application.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A command to answer with [`AgentCall::Respond`](super::AgentCall::Respond) (or, for
    /// `get_messages_page`,
    /// [`AgentCall::RespondMessagesPage`](super::AgentCall::RespondMessagesPage)), in any
    /// order (CALL-01).
    Command {
        /// The counter to answer with (not the host's `id`, which is below).
        request: CommandId,
        /// The host's `id`, as sent (absent when it sent none), for frames that refer to the
        /// command later (`prompt_result`).
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<Value>,
        /// The command, typed (CALL-06: an unknown type, when delivered, is
        /// [`Command::Unknown`] with every member).
        command: Command,
    },
    /// The protocol version changed (FRAME-05): frames from now on are encoded in it.
    ProtocolChanged {
        /// The version in force.
        protocol: ProtocolVersion,
    },
    /// `set_host_tools` replaced the host's tools (HOST-01); already answered.
    HostToolsChanged {
        /// The tools, normalised as the reference does.
        tools: Vec<HostToolDefinition>,
    },
    /// `set_host_uri_schemes` replaced the host's URI schemes (HOST-04); already answered.
    HostUriSchemesChanged {
        /// The schemes, normalised.
        schemes: Vec<HostUriSchemeDefinition>,
    },
    /// A partial result of an open host tool call (HOST-02).
    HostToolUpdate {
        /// The call, as [`AgentCall::CallHostTool`](super::AgentCall::CallHostTool) returned it.
        call: HostCallId,
        /// `partialResult`, as sent.
        partial_result: Value,
    },
    /// A host tool call ended (HOST-02, HOST-07): the result, or the error text.
    HostToolFinished {
        /// The call, as [`AgentCall::CallHostTool`](super::AgentCall::CallHostTool) returned it.
        call: HostCallId,
        /// `result` on success; on `isError` its joined text ("Host tool execution failed"
        /// when empty); on disconnect the reference's message.
        #[serde(serialize_with = "crate::outcome::serialize_outcome")]
        outcome: Result<Value, HostFailure>,
    },
    /// A host URI request ended (HOST-05, HOST-07).
    HostUriFinished {
        /// The request, as [`AgentCall::RequestHostUri`](super::AgentCall::RequestHostUri)
        /// returned it.
        request: HostUriId,
        /// The content (for a write, empty), or the error text.
        #[serde(serialize_with = "crate::outcome::serialize_outcome")]
        outcome: Result<HostUriContent, HostFailure>,
    },
    /// A dialog was answered, timed out, or can no longer be (HOST-06, HOST-07).
    DialogResolved {
        /// The dialog, as [`AgentCall::UiDialog`](super::AgentCall::UiDialog) returned it.
        dialog: DialogId,
        /// How.
        outcome: DialogOutcome,
    },
    /// A line on stdin the agent answered with a `parse` failure (FRAME-14), for the log.
    InputError {
        /// The ID of the rule the line broke: `FRAME-14` (not JSON) or `FRAME-16` (over the
        /// input cap, or `null`).
        rule: &'static str,
        /// The `parse` failure's `error` text, as sent to the host.
        message: String,
    },
    /// Stdin ended; every pending dialog, host tool call and host URI request has been
    /// resolved before this event (HOST-07). Commands still pending can be answered.
    InputClosed,
    /// A final tool result handed in with
    /// [`AgentCall::SettleToolResult`](super::AgentCall::SettleToolResult) is settled
    /// (SPILL-01..05): see [`SettledToolResult`].
    ToolResultSettled(Box<SettledToolResult>),
}

/// A settled tool result ([`AgentEvent::ToolResultSettled`]): `result` is what goes to the
/// model, the `tool_execution_end` event and the history. On a spill it is the preview and
/// notice, and its `details` carry `storedOutput` (OUT-02); a failed save keeps the original
/// result and says why in `outcome` (SPILL-05: to be logged; never an error).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettledToolResult {
    /// The tool call's id.
    pub call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// The result to send on.
    pub result: ToolResult,
    /// What the policy did.
    pub outcome: Outcome,
    /// The stored output recorded for reads, on a spill (also in `result.details`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stored_output: Option<StoredOutput>,
}
