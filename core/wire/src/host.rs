//! Host tools and host URI schemes: the definitions the host registers, the calls and
//! requests the agent sends (`host_tool_call`, `host_uri_request`, their cancels), and the
//! answers the host writes back (HOST-01..05).

use serde_json::Value;

use super::codec::wire_struct;
use super::message::ToolResult;

wire_struct! {
    /// A tool the host implements (`set_host_tools`, HOST-01): a non-empty name and
    /// description, and a JSON Schema object for its parameters.
    pub struct HostToolDefinition {
        /// Tool name.
        req name: String = "name",
        /// Display label.
        opt label: String = "label",
        /// What the tool does, for the model.
        req description: String = "description",
        /// JSON Schema of the arguments, as given.
        req parameters: Value = "parameters",
        /// Hidden from the model's tool list.
        opt hidden: bool = "hidden",
        /// How the tool is presented when enabled (`discoverable` when absent).
        opt load_mode: String = "loadMode",
        /// Whether the tool can read `skill://` content.
        opt reads_skill_uris: bool = "readsSkillUris",
    }
}

wire_struct! {
    /// A URI scheme the host serves (`set_host_uri_schemes`, HOST-04).
    pub struct HostUriSchemeDefinition {
        /// Scheme without `://`, e.g. `db`.
        req scheme: String = "scheme",
        /// Description for logs.
        opt description: String = "description",
        /// Whether writes may go to it.
        opt writable: bool = "writable",
        /// Whether resolved content is immutable.
        opt immutable: bool = "immutable",
    }
}

wire_struct! {
    /// `host_tool_call {id, toolCallId, toolName, arguments}` (agent → host, HOST-02).
    pub struct HostToolCall {
        /// Request id; the host's update and result carry it.
        req id: String = "id",
        /// The model's tool call id.
        req tool_call_id: String = "toolCallId",
        /// The host tool's name.
        req tool_name: String = "toolName",
        /// Arguments, as sent.
        req arguments: Value = "arguments",
    }
}

wire_struct! {
    /// `host_tool_cancel` / `host_uri_cancel {id, targetId}` (agent → host, HOST-03/05).
    pub struct HostCancel {
        /// This frame's id.
        req id: String = "id",
        /// The id of the call or request to abort.
        req target_id: String = "targetId",
    }
}

wire_struct! {
    /// `host_tool_update {id, partialResult}` (host → agent, HOST-02).
    pub struct HostToolUpdate {
        /// The call's id.
        req id: String = "id",
        /// Progress so far, as the tool reports it; the call stays open.
        req partial_result: ToolResult = "partialResult",
    }
}

wire_struct! {
    /// `host_tool_result {id, result, isError?}` (host → agent, HOST-02).
    pub struct HostToolResult {
        /// The call's id.
        req id: String = "id",
        /// What the tool gave; with `isError` its joined text is the error.
        req result: ToolResult = "result",
        /// Rejects the call with the result's joined text.
        opt is_error: bool = "isError",
    }
}

wire_struct! {
    /// `host_uri_request {id, operation, url, content?}` (agent → host, HOST-05).
    pub struct HostUriRequest {
        /// Request id.
        req id: String = "id",
        /// `read` or `write`.
        req operation: String = "operation",
        /// The whole URL, whose scheme the host registered (HOST-04).
        req url: String = "url",
        /// Content to write.
        opt content: String = "content",
    }
}

impl HostUriRequest {
    /// Whether this is a write.
    pub fn is_write(&self) -> bool {
        self.operation == "write"
    }
}

wire_struct! {
    /// `host_uri_result {id, content?, contentType?, notes?, immutable?, isError?, error?}`
    /// (host → agent, HOST-05).
    pub struct HostUriResult {
        /// The request's id.
        req id: String = "id",
        /// Content read (or error text).
        opt content: String = "content",
        /// `text/plain` (default), `text/markdown`, `application/json`.
        opt content_type: String = "contentType",
        /// Resolution notes.
        opt notes: Vec<String> = "notes",
        /// Per-result immutability.
        opt immutable: bool = "immutable",
        /// Whether this is an error.
        opt is_error: bool = "isError",
        /// Why the read or write failed, with `isError`.
        opt error: String = "error",
    }
}
