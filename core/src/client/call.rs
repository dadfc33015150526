//! The application's calls as data: one vocabulary for drivers (which send calls to the
//! thread or task that owns the client), recorders (which write them into transcripts) and
//! the replayer (which reads them back).

use std::time::Instant;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::{Client, ClientError, Input, RequestId, StreamingBehavior};
use crate::wire::{
    Command, HostToolDefinition, HostUriResult, HostUriSchemeDefinition, ToolResult, UiResponse,
};

/// A call of the application on a [`Client`], handed in as [`Input::Call`] through
/// [`Client::handle`]; what it returned is the [`CallResult`] `handle` gives back.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// Sends a command, typed by the wire model; a command this version does not know goes as
    /// [`Command::other`] (CALL-06). Sent at once (CALL-05), or held until the session is
    /// ready. Returns [`CallResult::Request`]: the response arrives as
    /// [`ClientEvent::Response`](super::ClientEvent::Response) with the returned id (CALL-01),
    /// its data typed by the command. Refused ([`ClientError`]) once the session has closed,
    /// for a command without a type, for a prompt without a streaming behaviour while the
    /// agent streams (CALL-04), and for a `read_output` unless the agent offered it (OUT-10;
    /// before the ready frame the offer is not known, so it is refused then too).
    Send(Command),
    /// Sends a prompt with this message (CALL-03, CALL-04): while the agent streams, the
    /// behaviour must be given. Returns [`CallResult::Request`], as [`Call::Send`].
    Prompt(String, Option<StreamingBehavior>),
    /// Reads the whole history (PAGE-07): pages after v2, `get_messages` otherwise or on
    /// fallback. Returns [`CallResult::Request`]; the result arrives as one
    /// [`ClientEvent::History`](super::ClientEvent::History) with the returned id.
    ReadHistory,
    /// Replaces the host-owned tools (HOST-01), after checking them as the agent will
    /// ([`ClientError::InvalidHostTool`] when it would refuse one). Returns
    /// [`CallResult::Request`].
    SetHostTools(Vec<HostToolDefinition>),
    /// Replaces the host URI schemes (HOST-04), normalised as the agent will
    /// ([`ClientError::InvalidHostUriScheme`] when it would refuse one). Returns
    /// [`CallResult::Request`].
    SetHostUriSchemes(Vec<HostUriSchemeDefinition>),
    /// Sends a partial result for the open host tool call with this id (HOST-02). Returns
    /// [`CallResult::NotOpen`], sending nothing, when the call is not open (cancelled,
    /// finished or unknown: HOST-03).
    HostToolUpdate(String, ToolResult),
    /// Sends the result of the open host tool call `id` and closes it (HOST-02); with
    /// `is_error` (the frame's `isError`) the call is rejected with the result's joined text.
    /// Returns [`CallResult::NotOpen`],
    /// sending nothing, for a call that is not open (HOST-03). With
    /// [`ClientConfig::spill`](super::ClientConfig::spill) a result over the cap is saved
    /// first and sent as a preview once the driver has answered the
    /// [`Action::SpillWrite`](super::Action::SpillWrite) (SPILL-01..05). A result over what
    /// the agent takes is replaced by an error result and reported as a HOST-09 warning.
    HostToolResult {
        /// The open call's id, as its `host_tool_call` gave it.
        id: String,
        /// The tool's result.
        result: ToolResult,
        /// Rejects the call with the result's joined text (`isError`).
        is_error: bool,
    },
    /// Answers the open host URI request with this id (HOST-05); the answer's `id` is set to
    /// it. Returns [`CallResult::NotOpen`], sending nothing, for a request that is not
    /// open. An answer over what the agent takes is replaced by an error and reported as a
    /// HOST-09 warning.
    HostUriResult(String, HostUriResult),
    /// Answers the open extension UI dialog with this id (HOST-06) with `{value}`,
    /// `{confirmed}` or `{cancelled: true}`; the answer's `id` is set to it. Returns
    /// [`CallResult::NotOpen`], sending nothing, for a dialog that is not open
    /// (answered, withdrawn, timed out, or unknown).
    UiRespond(String, UiResponse),
    /// Writes these bytes and a line feed to the agent as they are, bypassing every check:
    /// for tests and tools that need to send what a well-behaved host never would (a line
    /// that is not JSON, say). No request is made; the agent's id-less answer to a line it
    /// cannot parse (command `parse`) follows CALL-02: with no request pending it arrives as
    /// [`ClientEvent::Unmatched`](super::ClientEvent::Unmatched). Held until the session is
    /// ready, like commands. Returns [`CallResult::NotOpen`], writing nothing, once the
    /// session has closed.
    RawLine(Vec<u8>),
    /// Stops the session from the host's side: every pending request fails with
    /// [`SessionError::Stopped`](super::SessionError::Stopped), and
    /// [`Action::StopAgent`](super::Action::StopAgent) asks the driver to stop the agent.
    /// Returns [`CallResult::Done`].
    Stop,
    /// Starts over for a new agent process (CALL-07): a closed client can be started again.
    /// Request ids keep counting, so they stay unique across restarts. Anything still pending
    /// is failed first (as [`Call::Stop`]). Returns [`CallResult::Done`].
    Restart,
}

impl From<Call> for Input<'_> {
    fn from(call: Call) -> Self {
        Input::Call(call)
    }
}

/// What a [`Call`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallResult {
    /// A request was made (or refused).
    Request(Result<RequestId, ClientError>),
    /// An answer or line was written to the agent.
    Sent,
    /// Nothing was written: the call, request or dialog it answers is not open (cancelled,
    /// finished, timed out or unknown: HOST-03), or the session has closed.
    NotOpen,
    /// The call returns nothing.
    Done,
}

impl CallResult {
    /// As a transcript's `returns` holds it: `{"ok": ID}`, `{"err": MESSAGE}`, `true` for
    /// [`CallResult::Sent`], `false` for [`CallResult::NotOpen`], or nothing.
    pub fn to_json(&self) -> Option<Value> {
        match self {
            CallResult::Request(Ok(id)) => Some(json!({"ok": id})),
            CallResult::Request(Err(e)) => Some(json!({"err": e.to_string()})),
            CallResult::Sent => Some(Value::Bool(true)),
            CallResult::NotOpen => Some(Value::Bool(false)),
            CallResult::Done => None,
        }
    }

    /// [`CallResult::Sent`] when `sent`, else [`CallResult::NotOpen`].
    fn sent_if(sent: bool) -> Self {
        if sent {
            CallResult::Sent
        } else {
            CallResult::NotOpen
        }
    }

    /// The request made, if any.
    pub fn request(&self) -> Option<RequestId> {
        match self {
            CallResult::Request(Ok(id)) => Some(*id),
            _ => None,
        }
    }
}

impl Client {
    /// Hands in one input at `now`: the one method through which every change of the
    /// client's state goes, for every driver, recording and replay. Then drain
    /// [`Client::poll_action`] and read [`Client::poll_timeout`]. An [`Input::Call`] returns
    /// what its [`Call`] returned; every other input returns [`CallResult::Done`].
    pub fn handle(&mut self, now: Instant, input: Input<'_>) -> CallResult {
        match input {
            Input::Stdout(bytes) => self.handle_stdout(now, &bytes),
            Input::Stderr(bytes) => self.handle_stderr(&bytes),
            Input::StdoutEnd => self.handle_stdout_eof(now),
            Input::Exit(status, tail) => self.handle_exit(status, &tail),
            Input::Timeout => self.handle_timeout(now),
            Input::Call(call) => return self.call(now, call),
            Input::SpillDone(id, saved) => self.spill_done(id, saved),
        }
        CallResult::Done
    }

    /// Makes `call` at `now` (the [`Input::Call`] of [`Client::handle`]).
    fn call(&mut self, now: Instant, call: Call) -> CallResult {
        match call {
            Call::Send(command) => CallResult::Request(self.send(command)),
            Call::Prompt(message, behavior) => CallResult::Request(self.prompt(&message, behavior)),
            Call::ReadHistory => CallResult::Request(self.read_history()),
            Call::SetHostTools(tools) => CallResult::Request(self.set_host_tools(&tools)),
            Call::SetHostUriSchemes(schemes) => {
                CallResult::Request(self.set_host_uri_schemes(&schemes))
            }
            Call::HostToolUpdate(id, partial) => {
                CallResult::sent_if(self.host_tool_update(&id, partial))
            }
            Call::HostToolResult {
                id,
                result,
                is_error,
            } => CallResult::sent_if(self.host_tool_result(&id, result, is_error)),
            Call::HostUriResult(id, fields) => {
                CallResult::sent_if(self.host_uri_result(&id, fields))
            }
            Call::UiRespond(id, answer) => CallResult::sent_if(self.ui_respond(&id, answer)),
            Call::RawLine(bytes) => CallResult::sent_if(self.send_raw_line(&bytes)),
            Call::Stop => {
                self.stop();
                CallResult::Done
            }
            Call::Restart => {
                self.restart(now);
                CallResult::Done
            }
        }
    }
}

impl Call {
    /// Its name in a transcript (`send`, `prompt`, `read_history`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Call::Send(_) => "send",
            Call::Prompt(..) => "prompt",
            Call::ReadHistory => "read_history",
            Call::SetHostTools(_) => "set_host_tools",
            Call::SetHostUriSchemes(_) => "set_host_uri_schemes",
            Call::HostToolUpdate(..) => "host_tool_update",
            Call::HostToolResult { .. } => "host_tool_result",
            Call::HostUriResult(..) => "host_uri_result",
            Call::UiRespond(..) => "ui_respond",
            Call::RawLine(_) => "raw_line",
            Call::Stop => "stop",
            Call::Restart => "restart",
        }
    }

    /// Writes `call` and the arguments into a transcript step.
    pub fn write(&self, step: &mut Map<String, Value>) {
        step.insert("call".into(), self.name().into());
        let mut put = |k: &str, v: Value| {
            step.insert(k.into(), v);
        };
        match self {
            Call::Send(command) => put("command", command.to_value_with_id(None)),
            Call::Prompt(message, behavior) => {
                put("message", message.as_str().into());
                if let Some(b) = behavior {
                    put("behavior", to_json(b));
                }
            }
            Call::SetHostTools(tools) => put("tools", to_json(tools)),
            Call::SetHostUriSchemes(schemes) => put("schemes", to_json(schemes)),
            Call::HostToolUpdate(id, partial) => {
                put("id", id.as_str().into());
                put("partial_result", to_json(partial));
            }
            Call::HostToolResult {
                id,
                result,
                is_error,
            } => {
                put("id", id.as_str().into());
                put("result", to_json(result));
                put("is_error", (*is_error).into());
            }
            Call::HostUriResult(id, fields) => {
                put("id", id.as_str().into());
                put("fields", without_id(to_json(fields)));
            }
            Call::UiRespond(id, answer) => {
                put("id", id.as_str().into());
                put("answer", without_id(to_json(answer)));
            }
            Call::RawLine(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => put("line", text.into()),
                Err(_) => put("line_bytes", bytes.iter().copied().collect()),
            },
            Call::ReadHistory | Call::Stop | Call::Restart => {}
        }
    }

    /// Reads a call from a transcript step (`"call": NAME` and its arguments).
    pub fn read(step: &Map<String, Value>) -> Result<Call, StepError> {
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
        let typed = |key: &str| -> Result<Value, StepError> { Ok(field(key)?.clone()) };
        // The answers' objects are written without the id the call names; read them with it.
        let with_id = |key: &str, id: &str| -> Result<Value, StepError> {
            let mut object = field(key)?
                .as_object()
                .cloned()
                .ok_or_else(|| format!("\"{key}\" must be an object"))?;
            object.insert("id".into(), id.into());
            Ok(Value::Object(object))
        };
        Ok(match name {
            "send" => Call::Send(
                Command::from_value_with_id(typed("command")?)
                    .map_err(|e| format!("\"command\": {e}"))?
                    .1,
            ),
            "prompt" => {
                let behavior = match step.get("behavior") {
                    None => None,
                    Some(b) => Some(from_json(b.clone(), "behavior")?),
                };
                Call::Prompt(string("message")?, behavior)
            }
            "read_history" => Call::ReadHistory,
            "set_host_tools" => Call::SetHostTools(from_json(typed("tools")?, "tools")?),
            "set_host_uri_schemes" => {
                Call::SetHostUriSchemes(from_json(typed("schemes")?, "schemes")?)
            }
            "host_tool_update" => Call::HostToolUpdate(
                string("id")?,
                from_json(typed("partial_result")?, "partial_result")?,
            ),
            "host_tool_result" => Call::HostToolResult {
                id: string("id")?,
                result: from_json(typed("result")?, "result")?,
                is_error: step
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            },
            "host_uri_result" => {
                let id = string("id")?;
                let fields = from_json(with_id("fields", &id)?, "fields")?;
                Call::HostUriResult(id, fields)
            }
            "ui_respond" => {
                let id = string("id")?;
                let answer = from_json(with_id("answer", &id)?, "answer")?;
                Call::UiRespond(id, answer)
            }
            "raw_line" => match step.get("line_bytes") {
                Some(bytes) => Call::RawLine(
                    bytes
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                        .collect::<Option<Vec<u8>>>()
                        .ok_or("\"line_bytes\" must be an array of bytes")?,
                ),
                None => Call::RawLine(string("line")?.into_bytes()),
            },
            "stop" => Call::Stop,
            "restart" => Call::Restart,
            other => return Err(StepError::UnknownCall(other.to_owned())),
        })
    }
}

/// Why a transcript step is not a call the machine reads ([`Call::read`],
/// [`AgentCall::read`](crate::agent::AgentCall::read)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// The step names a call the machine does not have.
    #[error("unknown call {0:?}")]
    UnknownCall(String),
    /// An argument the call needs is absent.
    #[error("call {call} needs \"{key}\"")]
    Missing {
        /// The call's name.
        call: String,
        /// The absent argument.
        key: String,
    },
    /// `call` is not a string, or an argument is not of its shape: what is wrong, naming the
    /// argument.
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for StepError {
    fn from(text: String) -> Self {
        StepError::Invalid(text)
    }
}

impl From<&str> for StepError {
    fn from(text: &str) -> Self {
        StepError::Invalid(text.to_owned())
    }
}

fn to_json<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).expect("a wire value serialises")
}

fn from_json<T: DeserializeOwned>(value: Value, key: &str) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| format!("\"{key}\": {e}"))
}

fn without_id(mut value: Value) -> Value {
    if let Value::Object(object) = &mut value {
        object.shift_remove("id");
    }
    value
}
