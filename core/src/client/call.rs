//! The application's calls as data: one vocabulary for drivers (which send calls to the
//! thread or task that owns the client), recorders (which write them into transcripts) and
//! the replayer (which reads them back).

use std::time::Instant;

use serde_json::{json, Map, Value};

use super::{Client, ClientError, RequestId, StreamingBehavior};

/// A call of the application on a [`Client`].
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// [`Client::send`].
    Send(Value),
    /// [`Client::prompt`].
    Prompt(String, Option<StreamingBehavior>),
    /// [`Client::read_history`].
    ReadHistory,
    /// [`Client::set_host_tools`].
    SetHostTools(Vec<Value>),
    /// [`Client::set_host_uri_schemes`].
    SetHostUriSchemes(Vec<Value>),
    /// [`Client::host_tool_update`].
    HostToolUpdate(String, Value),
    /// [`Client::host_tool_result`].
    HostToolResult(String, Value, bool),
    /// [`Client::host_uri_result`].
    HostUriResult(String, Map<String, Value>),
    /// [`Client::ui_respond`].
    UiRespond(String, Map<String, Value>),
    /// [`Client::send_raw_line`] (for tests and tools).
    RawLine(Vec<u8>),
    /// [`Client::stop`].
    Stop,
    /// [`Client::restart`].
    Restart,
}

/// What a [`Call`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallResult {
    /// A request was made (or refused).
    Request(Result<RequestId, ClientError>),
    /// An answer was sent (true) or dropped because nothing was open for it (false).
    Sent(bool),
    /// The call returns nothing.
    Done,
}

impl CallResult {
    /// As a transcript's `returns` holds it: `{"ok": ID}`, `{"err": MESSAGE}`, a boolean, or
    /// nothing.
    pub fn to_json(&self) -> Option<Value> {
        match self {
            CallResult::Request(Ok(id)) => Some(json!({"ok": id})),
            CallResult::Request(Err(e)) => Some(json!({"err": e.to_string()})),
            CallResult::Sent(sent) => Some(Value::Bool(*sent)),
            CallResult::Done => None,
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
    /// Makes `call` at `now`.
    pub fn call(&mut self, now: Instant, call: Call) -> CallResult {
        match call {
            Call::Send(command) => CallResult::Request(self.send(now, command)),
            Call::Prompt(message, behavior) => {
                CallResult::Request(self.prompt(now, &message, behavior))
            }
            Call::ReadHistory => CallResult::Request(self.read_history(now)),
            Call::SetHostTools(tools) => CallResult::Request(self.set_host_tools(now, &tools)),
            Call::SetHostUriSchemes(schemes) => {
                CallResult::Request(self.set_host_uri_schemes(now, &schemes))
            }
            Call::HostToolUpdate(id, partial) => {
                CallResult::Sent(self.host_tool_update(now, &id, partial))
            }
            Call::HostToolResult(id, result, is_error) => {
                CallResult::Sent(self.host_tool_result(now, &id, result, is_error))
            }
            Call::HostUriResult(id, fields) => {
                CallResult::Sent(self.host_uri_result(now, &id, fields))
            }
            Call::UiRespond(id, answer) => CallResult::Sent(self.ui_respond(now, &id, answer)),
            Call::RawLine(bytes) => CallResult::Sent(self.send_raw_line(now, &bytes)),
            Call::Stop => {
                self.stop(now);
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
            Call::HostToolResult(..) => "host_tool_result",
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
            Call::Send(command) => put("command", command.clone()),
            Call::Prompt(message, behavior) => {
                put("message", message.as_str().into());
                if let Some(b) = behavior {
                    put("behavior", b.wire().into());
                }
            }
            Call::SetHostTools(tools) => put("tools", Value::Array(tools.clone())),
            Call::SetHostUriSchemes(schemes) => put("schemes", Value::Array(schemes.clone())),
            Call::HostToolUpdate(id, partial) => {
                put("id", id.as_str().into());
                put("partial_result", partial.clone());
            }
            Call::HostToolResult(id, result, is_error) => {
                put("id", id.as_str().into());
                put("result", result.clone());
                put("is_error", (*is_error).into());
            }
            Call::HostUriResult(id, fields) => {
                put("id", id.as_str().into());
                put("fields", Value::Object(fields.clone()));
            }
            Call::UiRespond(id, answer) => {
                put("id", id.as_str().into());
                put("answer", Value::Object(answer.clone()));
            }
            Call::RawLine(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => put("line", text.into()),
                Err(_) => put("line_bytes", bytes.iter().copied().collect()),
            },
            Call::ReadHistory | Call::Stop | Call::Restart => {}
        }
    }

    /// Reads a call from a transcript step (`"call": NAME` and its arguments).
    pub fn read(step: &Map<String, Value>) -> Result<Call, String> {
        let name = step
            .get("call")
            .and_then(Value::as_str)
            .ok_or("\"call\" must be a string")?;
        let field = |key: &str| {
            step.get(key)
                .ok_or_else(|| format!("call {name} needs \"{key}\""))
        };
        let string = |key: &str| {
            field(key)?
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("\"{key}\" must be a string"))
        };
        let array = |key: &str| {
            field(key)?
                .as_array()
                .cloned()
                .ok_or_else(|| format!("\"{key}\" must be an array"))
        };
        let object = |key: &str| {
            field(key)?
                .as_object()
                .cloned()
                .ok_or_else(|| format!("\"{key}\" must be an object"))
        };
        Ok(match name {
            "send" => Call::Send(field("command")?.clone()),
            "prompt" => {
                let behavior = match step.get("behavior").and_then(Value::as_str) {
                    None => None,
                    Some("steer") => Some(StreamingBehavior::Steer),
                    Some("followUp") => Some(StreamingBehavior::FollowUp),
                    Some(other) => return Err(format!("unknown behavior {other:?}")),
                };
                Call::Prompt(string("message")?, behavior)
            }
            "read_history" => Call::ReadHistory,
            "set_host_tools" => Call::SetHostTools(array("tools")?),
            "set_host_uri_schemes" => Call::SetHostUriSchemes(array("schemes")?),
            "host_tool_update" => {
                Call::HostToolUpdate(string("id")?, field("partial_result")?.clone())
            }
            "host_tool_result" => Call::HostToolResult(
                string("id")?,
                field("result")?.clone(),
                step.get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            ),
            "host_uri_result" => Call::HostUriResult(string("id")?, object("fields")?),
            "ui_respond" => Call::UiRespond(string("id")?, object("answer")?),
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
            other => return Err(format!("unknown call {other:?}")),
        })
    }
}
