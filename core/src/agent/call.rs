//! The application's calls on an [`Agent`] as data: one vocabulary for drivers (which hand
//! calls to whatever owns the agent), transcripts (`"role":"agent"` in
//! `conformance/transcripts/`) and the replayer, as [`crate::client::Call`] is for the
//! client.
//!
//! In a transcript step a call is `"call": NAME` with its arguments:
//!
//! | call | arguments | returns |
//! |---|---|---|
//! | `respond` | `request`, then `data` (a success; absent: no data) or `failure: {error, code?}` | nothing, or `{"err": MESSAGE}` |
//! | `respond_messages_page` | `request`, `busy`, `session_id`, `leaf_id` (string or null), `messages` | as `respond` |
//! | `reject_unknown` | `request` | as `respond` |
//! | `emit` | `frame` | as `respond` |
//! | `call_host_tool` | `tool_call_id`, `name`, `arguments` | `{"ok": "host-tool-N"}` or `{"err": MESSAGE}` |
//! | `cancel_host_tool` | `id` (`host-tool-N`) | a boolean |
//! | `request_host_uri` | `url`, `operation` (`read`\|`write`), `content` (for a write) | `{"ok": "host-uri-N"}` or `{"err": …}` |
//! | `cancel_host_uri` | `id` (`host-uri-N`) | a boolean |
//! | `ui_dialog` | `request` (an `extension_ui_request` without `type`; `id` optional, replaced) | `{"ok": "ui-N"}` or `{"err": …}` |
//! | `ui_notice` | `request`, as `ui_dialog` | `{"ok": ID}` or `{"err": …}` |
//! | `ui_cancel` | `id` (`ui-N`) | a boolean |
//! | `settle_tool_result` | `source` (`{toolName, callId, label}`), `owner` (a session id; absent or null: none), `result` (a tool result) | nothing |
//! | `register_outputs` | `outputs` (`StoredOutput`s, as `details.storedOutput` holds them) | how many were recorded |
//!
//! `request` is the number of an [`AgentEvent::Command`](super::AgentEvent::Command)'s
//! request, as its serialisation shows it.

use std::time::Instant;

use serde_json::{json, Map, Value};

use super::{
    Agent, AgentError, CommandFailure, CommandId, DialogId, HostCallId, HostUriId,
    HostUriOperation, PageSource,
};
use crate::client::StepError;
use crate::output::StoredOutput;
use crate::spill::{SpillOwner, SpillSource};
use crate::wire::{AgentFrame, ResponseData, ToolResult, UiRequest};

/// A call of the application on an [`Agent`].
#[derive(Debug, Clone, PartialEq)]
pub enum AgentCall {
    /// Answers a command (CALL-01): `Ok(data)` is a success (`data` absent when `None`),
    /// `Err` a failure with its message and optional code (CALL-08). The response echoes the
    /// host's id and the command's type. `data` is the command's typed payload; the answer to
    /// a command outside the wire model (an extension's, delivered with
    /// [`UnknownCommands::Deliver`](super::UnknownCommands::Deliver)) is
    /// [`ResponseData::Other`] holding its JSON. Read from a transcript, `data` is
    /// [`ResponseData::Other`]: the step does not name the command, and the payload is
    /// written as it was recorded.
    Respond(CommandId, Result<Option<ResponseData>, CommandFailure>),
    /// Answers a `get_messages_page` from a snapshot of the history (PAGE-01..06), a
    /// [`PageSource`] of JSON messages: busy → `session_busy`; else the limit, the cursor and
    /// its binding to the snapshot are checked, and a page of at most `limit` messages and
    /// 768 KiB (at least one message) is sent as `{messages, nextCursor?, totalMessages}`.
    RespondMessagesPage {
        /// The `get_messages_page` request.
        request: CommandId,
        /// [`PageSource::busy`].
        busy: bool,
        /// [`PageSource::session_id`].
        session_id: String,
        /// [`PageSource::leaf_id`].
        leaf_id: Option<String>,
        /// [`PageSource::messages`].
        messages: Vec<Value>,
    },
    /// Answers a command of an unknown type that was delivered
    /// ([`UnknownCommands::Deliver`](super::UnknownCommands::Deliver)) as the reference
    /// does: `Unknown command: X`, without the id.
    RejectUnknown(CommandId),
    /// Emits a frame: a session event (`agent_start`, `message_update`, …), a notice, a
    /// `prompt_result`, any frame of the protocol (FRAME-11, FRAME-12 apply). A frame outside
    /// the wire model (an extension's) is [`AgentFrame::Unknown`] holding its JSON, which must
    /// be an object with a string `type` ([`AgentError::InvalidFrame`] otherwise); it is
    /// written as it is.
    Emit(AgentFrame),
    /// Asks the host to run one of its tools (HOST-02): writes `host_tool_call`. Updates and
    /// the result arrive as [`AgentEvent::HostToolUpdate`](super::AgentEvent::HostToolUpdate)
    /// and [`AgentEvent::HostToolFinished`](super::AgentEvent::HostToolFinished).
    CallHostTool {
        /// The model's tool call id (`toolCallId`).
        tool_call_id: String,
        /// The host tool's name.
        name: String,
        /// The arguments object the model gave, sent as the call's `arguments`.
        arguments: Value,
    },
    /// Withdraws an open host tool call (HOST-03): writes `host_tool_cancel`; a later result
    /// for it is dropped. [`AgentCallResult::NotOpen`], writing nothing, when the call is not
    /// open.
    CancelHostTool(HostCallId),
    /// Asks the host to read or write a URI of a scheme it registered (HOST-05): writes
    /// `host_uri_request`. The result arrives as
    /// [`AgentEvent::HostUriFinished`](super::AgentEvent::HostUriFinished).
    RequestHostUri(String, HostUriOperation),
    /// Withdraws an open host URI request (HOST-05): writes `host_uri_cancel`.
    /// [`AgentCallResult::NotOpen`], writing nothing, when the request is not open.
    CancelHostUri(HostUriId),
    /// Opens an extension UI dialog (`select`, `confirm`, `input`, `editor`; HOST-06). Its
    /// `id` is replaced by the agent's; its `timeout` (milliseconds), when given, starts a
    /// timer: at expiry the dialog resolves as
    /// [`DialogOutcome::TimedOut`](super::DialogOutcome::TimedOut) and the application takes
    /// its default. The answer arrives as
    /// [`AgentEvent::DialogResolved`](super::AgentEvent::DialogResolved).
    UiDialog(UiRequest),
    /// Sends an extension UI notice that needs no answer (`notify`, `setStatus`,
    /// `setWidget`, `setTitle`, `set_editor_text`, `open_url`, or a method this version does
    /// not know); the id written is returned.
    UiNotice(UiRequest),
    /// Withdraws an open dialog (HOST-06): writes `extension_ui_request` `cancel` with its
    /// `targetId`; a later answer is dropped. [`AgentCallResult::NotOpen`], writing nothing,
    /// when it is not open.
    UiCancel(DialogId),
    /// Settles a final tool result through the spill policy (SPILL-01..05; the reference goes
    /// into `details.storedOutput`, OUT-02); [`AgentEvent::ToolResultSettled`](super::AgentEvent::ToolResultSettled)
    /// follows, at once or after a spill write.
    SettleToolResult {
        /// The tool, the call id and a label.
        source: SpillSource,
        /// The session the call belongs to (SPILL-05: none, no spill).
        owner: Option<SpillOwner>,
        /// The final result.
        result: ToolResult,
    },
    /// Records stored outputs for reads (OUT-08: the outputs a loaded history names, found
    /// with [`stored_outputs_in_history`](crate::output::stored_outputs_in_history)). A newer
    /// record of a reference replaces the older; others stay. Returns how many were recorded.
    RegisterOutputs(Vec<StoredOutput>),
}

/// What an [`AgentCall`] returned.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentCallResult {
    /// An answer or frame was written, or refused.
    Done(Result<(), AgentError>),
    /// A host tool call was made, or refused.
    HostCall(Result<HostCallId, AgentError>),
    /// A host URI request was made, or refused.
    HostUri(Result<HostUriId, AgentError>),
    /// A dialog was opened, or refused.
    Dialog(Result<DialogId, AgentError>),
    /// A notice was sent with this id, or refused.
    Notice(Result<String, AgentError>),
    /// A cancel was written.
    Cancelled,
    /// Nothing was written: the host call, URI request or dialog is not open (answered,
    /// cancelled or unknown).
    NotOpen,
    /// Outputs were recorded: how many.
    Registered(usize),
}

impl AgentCallResult {
    /// [`AgentCallResult::Cancelled`] when `cancelled`, else [`AgentCallResult::NotOpen`].
    fn cancelled_if(cancelled: bool) -> Self {
        if cancelled {
            AgentCallResult::Cancelled
        } else {
            AgentCallResult::NotOpen
        }
    }

    /// As a transcript's `returns` holds it: nothing for a plain success, `{"ok": ID}` for an
    /// id, `{"err": MESSAGE}`, `true` for [`AgentCallResult::Cancelled`], `false` for
    /// [`AgentCallResult::NotOpen`], or a count.
    pub fn to_json(&self) -> Option<Value> {
        fn id<T>(r: &Result<T, AgentError>, wire: impl Fn(&T) -> String) -> Option<Value> {
            Some(match r {
                Ok(v) => json!({"ok": wire(v)}),
                Err(e) => json!({"err": e.to_string()}),
            })
        }
        match self {
            AgentCallResult::Done(Ok(())) => None,
            AgentCallResult::Done(Err(e)) => Some(json!({"err": e.to_string()})),
            AgentCallResult::HostCall(r) => id(r, |c| c.wire()),
            AgentCallResult::HostUri(r) => id(r, |u| u.wire()),
            AgentCallResult::Dialog(r) => id(r, |d| d.wire()),
            AgentCallResult::Notice(r) => id(r, String::clone),
            AgentCallResult::Cancelled => Some(Value::Bool(true)),
            AgentCallResult::NotOpen => Some(Value::Bool(false)),
            AgentCallResult::Registered(count) => Some(Value::from(*count)),
        }
    }
}

impl Agent {
    /// Makes `call` at `now`.
    pub(super) fn call(&mut self, now: Instant, call: AgentCall) -> AgentCallResult {
        match call {
            AgentCall::Respond(request, outcome) => {
                AgentCallResult::Done(self.respond(request, outcome))
            }
            AgentCall::RespondMessagesPage {
                request,
                busy,
                session_id,
                leaf_id,
                messages,
            } => {
                let source = PageSource {
                    busy,
                    session_id: &session_id,
                    leaf_id: leaf_id.as_deref(),
                    messages: &messages,
                };
                AgentCallResult::Done(self.respond_messages_page(request, source))
            }
            AgentCall::RejectUnknown(request) => {
                AgentCallResult::Done(self.reject_unknown(request))
            }
            AgentCall::Emit(frame) => AgentCallResult::Done(self.emit(&frame)),
            AgentCall::CallHostTool {
                tool_call_id,
                name,
                arguments,
            } => AgentCallResult::HostCall(self.call_host_tool(&tool_call_id, &name, arguments)),
            AgentCall::CancelHostTool(call) => {
                AgentCallResult::cancelled_if(self.cancel_host_tool(call))
            }
            AgentCall::RequestHostUri(url, operation) => {
                AgentCallResult::HostUri(self.request_host_uri(&url, operation))
            }
            AgentCall::CancelHostUri(request) => {
                AgentCallResult::cancelled_if(self.cancel_host_uri(request))
            }
            AgentCall::UiDialog(request) => AgentCallResult::Dialog(self.ui_dialog(now, request)),
            AgentCall::UiNotice(request) => AgentCallResult::Notice(self.ui_notice(request)),
            AgentCall::UiCancel(dialog) => AgentCallResult::cancelled_if(self.ui_cancel(dialog)),
            AgentCall::SettleToolResult {
                source,
                owner,
                result,
            } => {
                self.settle_tool_result(source, owner, result);
                AgentCallResult::Done(Ok(()))
            }
            AgentCall::RegisterOutputs(outputs) => {
                AgentCallResult::Registered(self.register_outputs(outputs))
            }
        }
    }
}

impl AgentCall {
    /// Its name in a transcript (`respond`, `emit`, `call_host_tool`, …).
    pub fn name(&self) -> &'static str {
        match self {
            AgentCall::Respond(..) => "respond",
            AgentCall::RespondMessagesPage { .. } => "respond_messages_page",
            AgentCall::RejectUnknown(_) => "reject_unknown",
            AgentCall::Emit(_) => "emit",
            AgentCall::CallHostTool { .. } => "call_host_tool",
            AgentCall::CancelHostTool(_) => "cancel_host_tool",
            AgentCall::RequestHostUri(..) => "request_host_uri",
            AgentCall::CancelHostUri(_) => "cancel_host_uri",
            AgentCall::UiDialog(_) => "ui_dialog",
            AgentCall::UiNotice(_) => "ui_notice",
            AgentCall::UiCancel(_) => "ui_cancel",
            AgentCall::SettleToolResult { .. } => "settle_tool_result",
            AgentCall::RegisterOutputs(_) => "register_outputs",
        }
    }

    /// Writes `call` and the arguments into a transcript step.
    pub fn write(&self, step: &mut Map<String, Value>) {
        step.insert("call".into(), self.name().into());
        let mut put = |k: &str, v: Value| {
            step.insert(k.into(), v);
        };
        match self {
            AgentCall::Respond(request, outcome) => {
                put("request", request.0.into());
                match outcome {
                    Ok(Some(data)) => {
                        put("data", serde_json::to_value(data).unwrap_or(Value::Null))
                    }
                    Ok(None) => {}
                    Err(failure) => put("failure", failure_json(failure)),
                }
            }
            AgentCall::RespondMessagesPage {
                request,
                busy,
                session_id,
                leaf_id,
                messages,
            } => {
                put("request", request.0.into());
                put("busy", (*busy).into());
                put("session_id", session_id.as_str().into());
                put(
                    "leaf_id",
                    leaf_id.as_deref().map_or(Value::Null, Value::from),
                );
                put("messages", Value::Array(messages.clone()));
            }
            AgentCall::RejectUnknown(request) => put("request", request.0.into()),
            AgentCall::Emit(frame) => put("frame", frame.to_value()),
            AgentCall::CallHostTool {
                tool_call_id,
                name,
                arguments,
            } => {
                put("tool_call_id", tool_call_id.as_str().into());
                put("name", name.as_str().into());
                put("arguments", arguments.clone());
            }
            AgentCall::CancelHostTool(call) => put("id", call.wire().into()),
            AgentCall::RequestHostUri(url, operation) => {
                put("url", url.as_str().into());
                match operation {
                    HostUriOperation::Read => put("operation", "read".into()),
                    HostUriOperation::Write(content) => {
                        put("operation", "write".into());
                        put("content", content.as_str().into());
                    }
                }
            }
            AgentCall::CancelHostUri(request) => put("id", request.wire().into()),
            AgentCall::UiDialog(request) | AgentCall::UiNotice(request) => put(
                "request",
                serde_json::to_value(request).unwrap_or(Value::Null),
            ),
            AgentCall::UiCancel(dialog) => put("id", dialog.wire().into()),
            AgentCall::SettleToolResult {
                source,
                owner,
                result,
            } => {
                put(
                    "source",
                    serde_json::to_value(source).unwrap_or(Value::Null),
                );
                if let Some(owner) = owner {
                    put("owner", owner.session_id.as_str().into());
                }
                put(
                    "result",
                    serde_json::to_value(result).unwrap_or(Value::Null),
                );
            }
            AgentCall::RegisterOutputs(outputs) => put(
                "outputs",
                serde_json::to_value(outputs).unwrap_or(Value::Null),
            ),
        }
    }

    /// Reads a call from a transcript step (`"call": NAME` and its arguments).
    pub fn read(step: &Map<String, Value>) -> Result<AgentCall, StepError> {
        let name = step
            .get("call")
            .and_then(Value::as_str)
            .ok_or("\"call\" must be a string")?;
        let field = |key: &str| {
            step.get(key).ok_or_else(|| StepError::Missing {
                call: name.to_owned(),
                key: key.to_owned(),
            })
        };
        let string = |key: &str| -> Result<String, StepError> {
            field(key)?
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("\"{key}\" must be a string").into())
        };
        let request = || -> Result<CommandId, StepError> {
            field("request")?
                .as_u64()
                .map(CommandId)
                .ok_or_else(|| "\"request\" must be a request number".into())
        };
        let wire_id = |parse: fn(&str) -> Option<u64>, what: &str| -> Result<u64, StepError> {
            let id = string("id")?;
            parse(&id).ok_or_else(|| format!("\"id\" must be a {what} id, not {id:?}").into())
        };
        let ui_request = || -> Result<UiRequest, StepError> {
            let mut fields = field("request")?
                .as_object()
                .cloned()
                .ok_or("\"request\" must be an object")?;
            fields.entry("id").or_insert_with(|| Value::from(""));
            serde_json::from_value::<UiRequest>(Value::Object(fields))
                .map_err(|e| format!("\"request\" is not an extension UI request: {e}").into())
        };
        Ok(match name {
            "respond" => {
                let outcome = match (step.get("data"), step.get("failure")) {
                    (Some(_), Some(_)) => return Err("respond takes data or failure".into()),
                    (Some(data), None) => Ok(Some(ResponseData::Other(data.clone()))),
                    (None, Some(failure)) => Err(read_failure(failure)?),
                    (None, None) => Ok(None),
                };
                AgentCall::Respond(request()?, outcome)
            }
            "respond_messages_page" => AgentCall::RespondMessagesPage {
                request: request()?,
                busy: step.get("busy").and_then(Value::as_bool).unwrap_or(false),
                session_id: string("session_id")?,
                leaf_id: match field("leaf_id")? {
                    Value::Null => None,
                    Value::String(s) => Some(s.clone()),
                    _ => return Err("\"leaf_id\" must be a string or null".into()),
                },
                messages: field("messages")?
                    .as_array()
                    .cloned()
                    .ok_or("\"messages\" must be an array")?,
            },
            "reject_unknown" => AgentCall::RejectUnknown(request()?),
            "emit" => AgentCall::Emit(read_frame(field("frame")?)),
            "call_host_tool" => AgentCall::CallHostTool {
                tool_call_id: string("tool_call_id")?,
                name: string("name")?,
                arguments: step.get("arguments").cloned().unwrap_or_else(|| json!({})),
            },
            "cancel_host_tool" => AgentCall::CancelHostTool(HostCallId(wire_id(
                |id| HostCallId::from_wire(id).map(|c| c.0),
                "host-tool-N",
            )?)),
            "request_host_uri" => {
                let operation = match string("operation")?.as_str() {
                    "read" => HostUriOperation::Read,
                    "write" => HostUriOperation::Write(string("content")?),
                    other => return Err(format!("unknown operation {other:?}").into()),
                };
                AgentCall::RequestHostUri(string("url")?, operation)
            }
            "cancel_host_uri" => AgentCall::CancelHostUri(HostUriId(wire_id(
                |id| HostUriId::from_wire(id).map(|u| u.0),
                "host-uri-N",
            )?)),
            "ui_dialog" => AgentCall::UiDialog(ui_request()?),
            "ui_notice" => AgentCall::UiNotice(ui_request()?),
            "ui_cancel" => AgentCall::UiCancel(DialogId(wire_id(
                |id| DialogId::from_wire(id).map(|d| d.0),
                "ui-N",
            )?)),
            "settle_tool_result" => AgentCall::SettleToolResult {
                source: serde_json::from_value(field("source")?.clone())
                    .map_err(|e| format!("\"source\" is not {{toolName, callId, label}}: {e}"))?,
                owner: match step.get("owner") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(session)) => Some(SpillOwner::new(session.as_str())),
                    Some(_) => return Err("\"owner\" must be a session id or null".into()),
                },
                result: serde_json::from_value(field("result")?.clone())
                    .map_err(|e| format!("\"result\" is not a tool result: {e}"))?,
            },
            "register_outputs" => AgentCall::RegisterOutputs(
                serde_json::from_value(field("outputs")?.clone())
                    .map_err(|e| format!("\"outputs\" are not stored outputs: {e}"))?,
            ),
            other => return Err(StepError::UnknownCall(other.to_owned())),
        })
    }
}

/// A transcript's frame, typed as the wire model reads it; one it does not read (not an
/// object, no string `type`, or a known type of another shape) is
/// [`AgentFrame::Unknown`], which [`AgentCall::Emit`] writes as it is or refuses.
fn read_frame(frame: &Value) -> AgentFrame {
    AgentFrame::from_value(frame.clone()).unwrap_or_else(|_| AgentFrame::Unknown(frame.clone()))
}

fn failure_json(failure: &CommandFailure) -> Value {
    serde_json::to_value(failure).unwrap_or(Value::Null)
}

fn read_failure(value: &Value) -> Result<CommandFailure, String> {
    let error = value
        .get("error")
        .and_then(Value::as_str)
        .ok_or("\"failure\" needs a string \"error\"")?;
    let code = match value.get("code") {
        None | Some(Value::Null) => None,
        Some(Value::String(code)) => Some(crate::wire::ErrorCode::from_wire(code)),
        Some(_) => return Err("\"failure.code\" must be a string".into()),
    };
    Ok(CommandFailure {
        error: error.to_owned(),
        code,
    })
}
