//! HOST-10 (ours): host tools on pi. pi (0.73.1 and 1.6.0) has no `set_host_tools` or
//! `host_tool_call`; started with musewire's extension ([`PI_HOST_TOOLS_EXTENSION`], loaded
//! with `-e FILE`), it carries them over its own extension protocol, and the [`Client`] speaks
//! that for the host, so a host's [`Call::SetHostTools`](super::Call::SetHostTools),
//! [`ClientEvent::HostToolCall`](super::ClientEvent::HostToolCall),
//! [`Call::HostToolResult`](super::Call::HostToolResult) and
//! [`ClientEvent::HostToolCancelled`](super::ClientEvent::HostToolCancelled) work on pi as on
//! omp:
//!
//! - The extension announces itself as pi starts, before pi reads anything: an
//!   `extension_ui_request` `setStatus` with key `musewire:host_tools`. Only a client that saw it
//!   takes the route; without it `set_host_tools` goes as itself (and pi refuses it).
//! - `set_host_tools {tools}` goes as `prompt {message: "/musewire-host-tools JSON"}`, which
//!   pi runs at once, even during a run; its answer is the call's answer.
//! - A call is an `input` dialog titled `musewire:host_tool_call` whose placeholder is
//!   `{toolCallId, toolName, arguments}` as JSON: the host sees a `host_tool_call` whose `id`
//!   is the dialog's. The result goes back as the dialog's value, `{content, details?,
//!   isError?}` as JSON; a dialog whose placeholder is not such a call is answered
//!   cancelled (the tool fails) and the host sees nothing of it.
//! - A call the agent aborts is a `setStatus` with key `musewire:host_tool_cancel` and the toolCallId as
//!   its text: the host sees `host_tool_cancel` for the call.
//! - A partial result (`host_tool_update`) has no way to pi: it is accepted and dropped.
//!
//! None of these frames reaches the host as a UI request.

use std::path::Path;

use serde_json::Value;

use super::Client;
use crate::wire::{
    Command, HostFrame, HostToolCall, HostToolDefinition, Prompt, ToolResult, UiRequest, UiResponse,
};

/// The extension's source (JavaScript, for pi's `-e`): what a driver writes to a private file
/// ([`PI_HOST_TOOLS_FILE_NAME`]) and passes as `-e FILE` ([`with_extension`]).
pub const PI_HOST_TOOLS_EXTENSION: &str = include_str!("pi_host_tools.js");

/// The file name a driver gives [`PI_HOST_TOOLS_EXTENSION`].
pub const PI_HOST_TOOLS_FILE_NAME: &str = "musewire-host-tools.js";

/// The extension's command that sets the host's tools.
pub(crate) const SET_COMMAND: &str = "musewire-host-tools";

/// The `setStatus` key the extension announces itself with.
pub(crate) const ANNOUNCE_KEY: &str = "musewire:host_tools";

/// The title of the `input` dialog that is a host tool call.
pub(crate) const CALL_TITLE: &str = "musewire:host_tool_call";

/// The `setStatus` key of an aborted call (its text: the toolCallId).
pub(crate) const CANCEL_KEY: &str = "musewire:host_tool_cancel";

/// `command` with the extension at `file` loaded: `-e FILE` appended.
pub fn with_extension(command: &[String], file: &Path) -> Vec<String> {
    let mut out = command.to_vec();
    out.push("-e".to_owned());
    out.push(file.to_string_lossy().into_owned());
    out
}

/// Whether `request` is the extension's announcement.
pub(super) fn is_announcement(request: &UiRequest) -> bool {
    matches!(request, UiRequest::SetStatus(s) if s.status_key == ANNOUNCE_KEY)
}

/// The `prompt` line that sets `tools` through the extension, with request id `id`.
pub(super) fn set_line(id: &str, tools: &[HostToolDefinition]) -> Vec<u8> {
    let json = serde_json::to_string(tools).expect("host tool definitions serialise");
    let command = Command::Prompt(Prompt {
        message: format!("/{SET_COMMAND} {json}"),
        ..Prompt::default()
    });
    let mut line = command.to_vec_with_id(Some(id));
    line.push(b'\n');
    line
}

/// What a call dialog's placeholder carries.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallRequest {
    tool_call_id: String,
    tool_name: String,
    #[serde(default)]
    arguments: Value,
}

impl Client {
    /// HOST-10: takes the extension's frames out of the UI requests; gives back any other.
    pub(super) fn pi_host_tools_inbound(&mut self, request: UiRequest) -> Option<UiRequest> {
        match request {
            request if is_announcement(&request) => {
                self.tools_via_pi = true;
                None
            }
            UiRequest::Input(input) if self.tools_via_pi && input.title == CALL_TITLE => {
                let parsed = input
                    .placeholder
                    .as_deref()
                    .and_then(|p| serde_json::from_str::<CallRequest>(p).ok());
                let Some(call) = parsed else {
                    // Not a call the host could run: the tool fails, the host sees nothing.
                    self.write_frame(&HostFrame::ExtensionUiResponse(UiResponse {
                        id: input.id,
                        cancelled: Some(true),
                        ..UiResponse::default()
                    }));
                    return None;
                };
                self.pi_calls
                    .insert(input.id.clone(), call.tool_call_id.clone());
                self.host_tool_call(HostToolCall {
                    id: input.id,
                    tool_call_id: call.tool_call_id,
                    tool_name: call.tool_name,
                    arguments: call.arguments,
                    ..HostToolCall::default()
                });
                None
            }
            UiRequest::SetStatus(status)
                if self.tools_via_pi && status.status_key == CANCEL_KEY =>
            {
                let tool_call = status.status_text.unwrap_or_default();
                let dialog = self
                    .pi_calls
                    .iter()
                    .find(|(_, t)| **t == tool_call)
                    .map(|(d, _)| d.clone());
                if let Some(dialog) = dialog {
                    self.pi_calls.remove(&dialog);
                    self.host_tool_cancel(dialog);
                }
                None
            }
            request => Some(request),
        }
    }

    /// HOST-10: the result of call `id` as its dialog's value, when the call came through the
    /// extension; `result` back otherwise.
    pub(super) fn pi_host_tools_result(
        &mut self,
        id: &str,
        mut result: ToolResult,
        is_error: bool,
    ) -> Option<ToolResult> {
        if self.pi_calls.remove(id).is_none() {
            return Some(result);
        }
        if is_error {
            result.is_error = Some(true);
        }
        let value = serde_json::to_string(&result).expect("a tool result serialises");
        self.write_frame(&HostFrame::ExtensionUiResponse(UiResponse::value(
            id, value,
        )));
        None
    }

    /// HOST-10: whether call `id` came through the extension (its partial results have no
    /// way to pi).
    pub(super) fn is_pi_call(&self, id: &str) -> bool {
        self.pi_calls.contains_key(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The extension's markers are the ones the Client reads.
    #[test]
    fn the_extension_speaks_the_markers_the_client_reads() {
        for marker in [SET_COMMAND, ANNOUNCE_KEY, CALL_TITLE, CANCEL_KEY] {
            assert!(
                PI_HOST_TOOLS_EXTENSION.contains(&format!("\"{marker}\"")),
                "{marker}"
            );
        }
    }
}
