//! Requests the agent makes of the host: host tool calls (HOST-02, 03), host URI requests
//! (HOST-05), extension UI (HOST-06); the routing of the host's answers; and their rejection
//! when stdin closes (HOST-07).

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::{
    js, Agent, AgentError, AgentEvent, DialogId, DialogOutcome, HostCallId, HostFailure,
    HostUriContent, HostUriId, PendingUri,
};
use crate::wire::UiRequest;

/// The error of a host tool result with `isError` and no text (HOST-02).
pub(crate) const HOST_TOOL_FAILED: &str = "Host tool execution failed";
/// How host tool calls are rejected when stdin closes (HOST-07).
pub const HOST_TOOL_DISCONNECTED: &str =
    "RPC client disconnected before host tool execution completed";
/// How host URI requests are rejected when stdin closes (HOST-07).
pub const HOST_URI_DISCONNECTED: &str = "RPC client disconnected before host URI request completed";

/// What a host URI request asks (HOST-05).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostUriOperation {
    /// Read the resource.
    Read,
    /// Write this content; only for a scheme the host registered as writable.
    Write(String),
}

/// Longest dialog timeout honoured (a year): larger values are clamped.
const MAX_DIALOG_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

impl Agent {
    /// Asks the host to run one of its tools (HOST-02): writes `host_tool_call`. Updates and
    /// the result arrive as [`AgentEvent::HostToolUpdate`] and
    /// [`AgentEvent::HostToolFinished`].
    pub(super) fn call_host_tool(
        &mut self,
        tool_call_id: &str,
        tool_name: &str,
        arguments: Value,
    ) -> Result<HostCallId, AgentError> {
        if self.input_closed {
            return Err(AgentError::Disconnected(HOST_TOOL_DISCONNECTED));
        }
        if !self.host_tools.contains_key(tool_name) {
            return Err(AgentError::UnknownHostTool(tool_name.to_owned()));
        }
        let call = HostCallId(self.next_outbound());
        self.tool_calls.insert(call, tool_name.to_owned());
        self.write(&serde_json::json!({
            "type": "host_tool_call",
            "id": call.wire(),
            "toolCallId": tool_call_id,
            "toolName": tool_name,
            "arguments": arguments,
        }));
        Ok(call)
    }

    /// Withdraws an open host tool call (HOST-03): writes `host_tool_cancel`; a later result
    /// for it is dropped. False, writing nothing, when the call is not open.
    pub(super) fn cancel_host_tool(&mut self, call: HostCallId) -> bool {
        if self.tool_calls.remove(&call).is_none() {
            return false;
        }
        let id = format!("cancel-{}", self.next_outbound());
        self.write(
            &serde_json::json!({"type": "host_tool_cancel", "id": id, "targetId": call.wire()}),
        );
        true
    }

    /// Asks the host to read or write a URI of a scheme it registered (HOST-05): writes
    /// `host_uri_request`. The result arrives as [`AgentEvent::HostUriFinished`].
    pub(super) fn request_host_uri(
        &mut self,
        url: &str,
        operation: HostUriOperation,
    ) -> Result<HostUriId, AgentError> {
        if self.input_closed {
            return Err(AgentError::Disconnected(HOST_URI_DISCONNECTED));
        }
        let scheme = url
            .split_once(':')
            .map(|(s, _)| s.to_ascii_lowercase())
            .unwrap_or_default();
        let Some(definition) = self.host_schemes.get(&scheme) else {
            return Err(AgentError::UnknownHostUriScheme(scheme));
        };
        let write = matches!(operation, HostUriOperation::Write(_));
        if write && definition.writable != Some(true) {
            return Err(AgentError::NotWritable(scheme));
        }
        let request = HostUriId(self.next_outbound());
        let mut frame = serde_json::json!({
            "type": "host_uri_request",
            "id": request.wire(),
            "operation": if write { "write" } else { "read" },
            "url": url,
        });
        if let HostUriOperation::Write(content) = operation {
            frame["content"] = Value::String(content);
        }
        self.write(&frame);
        self.uri_requests.insert(
            request,
            PendingUri {
                write,
                url: url.to_owned(),
                scheme,
            },
        );
        Ok(request)
    }

    /// Withdraws an open host URI request (HOST-05): writes `host_uri_cancel`. False,
    /// writing nothing, when the request is not open.
    pub(super) fn cancel_host_uri(&mut self, request: HostUriId) -> bool {
        if self.uri_requests.remove(&request).is_none() {
            return false;
        }
        let id = format!("cancel-{}", self.next_outbound());
        self.write(
            &serde_json::json!({"type": "host_uri_cancel", "id": id, "targetId": request.wire()}),
        );
        true
    }

    /// Opens an extension UI dialog (`select`, `confirm`, `input`, `editor`; HOST-06). Its
    /// `id` is replaced by the agent's; its `timeout` (milliseconds), when given, starts a
    /// timer: at expiry the dialog resolves as [`DialogOutcome::TimedOut`] and the
    /// application takes its default. The answer arrives as [`AgentEvent::DialogResolved`].
    pub(super) fn ui_dialog(
        &mut self,
        now: Instant,
        request: UiRequest,
    ) -> Result<DialogId, AgentError> {
        if !request.is_dialog() {
            let method = request.method().unwrap_or_default().to_owned();
            return Err(AgentError::WrongUiMethod(method));
        }
        if self.input_closed {
            return Err(AgentError::Disconnected(DialogOutcome::DISCONNECTED));
        }
        let dialog = DialogId(self.next_outbound());
        let frame = ui_frame(&dialog.wire(), &request);
        let deadline = request.timeout_ms().map(|ms| {
            let timeout = Duration::from_secs_f64(ms.max(0.0) / 1000.0);
            now + timeout.min(MAX_DIALOG_TIMEOUT)
        });
        self.write(&frame);
        self.dialogs.insert(dialog, deadline);
        Ok(dialog)
    }

    /// Sends an extension UI notice that needs no answer (`notify`, `setStatus`,
    /// `setWidget`, `setTitle`, `set_editor_text`, `open_url`, or a method this version does
    /// not know). Returns the id written.
    pub(super) fn ui_notice(&mut self, request: UiRequest) -> Result<String, AgentError> {
        if request.is_dialog() || matches!(request, UiRequest::Cancel(_)) {
            let method = request.method().unwrap_or_default().to_owned();
            return Err(AgentError::WrongUiMethod(method));
        }
        let id = format!("ui-{}", self.next_outbound());
        let frame = ui_frame(&id, &request);
        self.write(&frame);
        Ok(id)
    }

    /// Withdraws an open dialog (HOST-06): writes `extension_ui_request` `cancel` with its
    /// `targetId`; a later answer is dropped. False, writing nothing, when it is not open.
    pub(super) fn ui_cancel(&mut self, dialog: DialogId) -> bool {
        if self.dialogs.remove(&dialog).is_none() {
            return false;
        }
        let id = format!("ui-{}", self.next_outbound());
        self.write(&serde_json::json!({
            "type": "extension_ui_request",
            "id": id,
            "method": "cancel",
            "targetId": dialog.wire(),
        }));
        true
    }

    /// The host's side-channel frames, with the reference's guards: `extension_ui_response`
    /// with a string id; `host_tool_result`/`host_tool_update` with a string id and a result
    /// carrying a `content` array; `host_uri_result` with a string id. Answers to requests that
    /// are not open are dropped (HOST-03). Returns false for anything else (a command).
    pub(super) fn route_host_frame(&mut self, fields: &Map<String, Value>) -> bool {
        let Some(id) = fields.get("id").and_then(Value::as_str) else {
            return false;
        };
        let has_content = |key: &str| {
            fields
                .get(key)
                .and_then(|r| r.get("content"))
                .is_some_and(Value::is_array)
        };
        match fields.get("type").and_then(Value::as_str) {
            Some("extension_ui_response") => {
                if let Some(dialog) = DialogId::from_wire(id) {
                    if self.dialogs.remove(&dialog).is_some() {
                        self.event(AgentEvent::DialogResolved {
                            dialog,
                            outcome: DialogOutcome::Answered {
                                response: Value::Object(fields.clone()),
                            },
                        });
                    }
                }
                true
            }
            Some("host_tool_update") if has_content("partialResult") => {
                if let Some(call) = HostCallId::from_wire(id) {
                    if self.tool_calls.contains_key(&call) {
                        self.event(AgentEvent::HostToolUpdate {
                            call,
                            partial_result: fields["partialResult"].clone(),
                        });
                    }
                }
                true
            }
            Some("host_tool_result") if has_content("result") => {
                if let Some(call) = HostCallId::from_wire(id) {
                    if self.tool_calls.remove(&call).is_some() {
                        let result = &fields["result"];
                        let outcome = if js::truthy(fields.get("isError")) {
                            Err(HostFailure::Failed(error_text(result)))
                        } else {
                            Ok(result.clone())
                        };
                        self.event(AgentEvent::HostToolFinished { call, outcome });
                    }
                }
                true
            }
            Some("host_uri_result") => {
                if let Some(request) = HostUriId::from_wire(id) {
                    if let Some(pending) = self.uri_requests.remove(&request) {
                        let outcome = self.uri_outcome(&pending, fields);
                        self.event(AgentEvent::HostUriFinished { request, outcome });
                    }
                }
                true
            }
            _ => false,
        }
    }

    /// HOST-05: an error's text is `error`, else `content`, else "Host URI read failed for
    /// <url>" (write for a write); a success gets the reference's defaults.
    fn uri_outcome(
        &self,
        pending: &PendingUri,
        fields: &Map<String, Value>,
    ) -> Result<HostUriContent, HostFailure> {
        let text = |key: &str| match fields.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => Some(js::string(Some(v))),
        };
        if js::truthy(fields.get("isError")) {
            let error = [fields.get("error"), fields.get("content")]
                .into_iter()
                .find(|v| js::truthy(*v))
                .map(|v| js::string(v))
                .unwrap_or_else(|| {
                    let operation = if pending.write { "write" } else { "read" };
                    format!("Host URI {operation} failed for {}", pending.url)
                });
            return Err(HostFailure::Failed(error));
        }
        let notes: Vec<String> = fields
            .get("notes")
            .and_then(Value::as_array)
            .map(|notes| notes.iter().map(|n| js::string(Some(n))).collect())
            .unwrap_or_default();
        let immutable = match fields.get("immutable") {
            None | Some(Value::Null) => self
                .host_schemes
                .get(&pending.scheme)
                .is_some_and(|s| s.immutable == Some(true)),
            Some(v) => js::truthy(Some(v)),
        };
        Ok(HostUriContent {
            content: text("content").unwrap_or_default(),
            content_type: text("contentType").unwrap_or_else(|| "text/plain".to_owned()),
            notes: (!notes.is_empty()).then_some(notes),
            immutable,
        })
    }

    /// HOST-07, in the reference's order: dialogs, host tool calls, host URI requests.
    pub(super) fn close_input(&mut self) {
        self.input_closed = true;
        for (dialog, _) in std::mem::take(&mut self.dialogs) {
            self.event(AgentEvent::DialogResolved {
                dialog,
                outcome: DialogOutcome::Disconnected,
            });
        }
        for (call, _) in std::mem::take(&mut self.tool_calls) {
            self.event(AgentEvent::HostToolFinished {
                call,
                outcome: Err(HostFailure::Disconnected(HOST_TOOL_DISCONNECTED)),
            });
        }
        for (request, _) in std::mem::take(&mut self.uri_requests) {
            self.event(AgentEvent::HostUriFinished {
                request,
                outcome: Err(HostFailure::Disconnected(HOST_URI_DISCONNECTED)),
            });
        }
        self.host_schemes.clear();
        self.event(AgentEvent::InputClosed);
    }
}

/// `{type:"extension_ui_request", id, method, …}` from a typed request, with `id` replaced.
fn ui_frame(id: &str, request: &UiRequest) -> Value {
    let mut frame = Map::new();
    frame.insert("type".into(), "extension_ui_request".into());
    frame.insert("id".into(), id.into());
    if let Ok(Value::Object(fields)) = serde_json::to_value(request) {
        frame.extend(fields.into_iter().filter(|(k, _)| k != "id" && k != "type"));
    }
    Value::Object(frame)
}

/// The text of a tool result's text blocks (`{content: [{type: "text", text}, …]}`), joined
/// by LF, as the reference joins them (HOST-02).
pub fn result_text(result: &Value) -> String {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// "Host tool execution failed" (HOST-02).
fn error_text(result: &Value) -> String {
    let joined = result_text(result);
    let text = js::trim(&joined);
    if text.is_empty() {
        HOST_TOOL_FAILED.to_owned()
    } else {
        text.to_owned()
    }
}
