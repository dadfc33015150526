//! The few MCP messages the client reads and writes (protocol `2025-06-18`), typed with serde.
//!
//! Written here rather than taken from a crate: `rmcp` needs tokio whatever its features, and
//! `rust-mcp-schema`'s `Tool` keeps only `type`, `properties` and `required` of an input
//! schema (dropping `$defs`, `additionalProperties`, `description`, …), where the agent must
//! get the schema as the server gave it (MCP-03); its content blocks are a closed enum, where
//! a result's content goes on to `core::blocks` as it came (MCP-05).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The protocol version the client asks for in `initialize`.
pub(crate) const PROTOCOL_VERSION: &str = "2025-06-18";

/// The params of `initialize`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct InitializeParams<'a> {
    /// The version asked for.
    #[serde(rename = "protocolVersion")]
    pub protocol_version: &'a str,
    /// The client's capabilities: none (no roots, no sampling, no elicitation).
    pub capabilities: Value,
    /// Who asks.
    #[serde(rename = "clientInfo")]
    pub client_info: Implementation,
}

/// A program's name and version.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Implementation {
    /// The program's `name` (`clientInfo.name`, `serverInfo.name`); empty when not sent.
    #[serde(default)]
    pub name: String,
    /// The program's `version`, free text; empty when not sent.
    #[serde(default)]
    pub version: String,
}

/// The result of `initialize`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct InitializeResult {
    /// The version the server speaks.
    #[serde(rename = "protocolVersion")]
    pub protocol_version: String,
    /// What it offers.
    #[serde(default)]
    pub capabilities: ServerCapabilities,
}

/// The server capabilities the client reads.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ServerCapabilities {
    /// Present when the server has tools (`{listChanged?}`).
    #[serde(default)]
    pub tools: Option<Value>,
}

/// The result of `tools/list`: the tools, each read on its own ([`Tool`]), and the next page.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ListToolsResult {
    /// The tools of this page, as sent.
    pub tools: Vec<Value>,
    /// The cursor of the next page.
    #[serde(rename = "nextCursor", default)]
    pub next_cursor: Option<String>,
}

/// One tool of `tools/list`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Tool {
    /// Its name, as `tools/call` takes it.
    pub name: String,
    /// A display title.
    #[serde(default)]
    pub title: Option<String>,
    /// What it does.
    #[serde(default)]
    pub description: Option<String>,
    /// The JSON Schema of its arguments, as sent.
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
}

/// The params of `tools/call`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CallToolParams<'a> {
    /// The tool's MCP name.
    pub name: &'a str,
    /// The arguments object the agent's model gave, passed on unchanged.
    pub arguments: &'a Value,
}

/// The result of `tools/call`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct CallToolResult {
    /// The content blocks, as sent.
    #[serde(default)]
    pub content: Value,
    /// The tool failed.
    #[serde(rename = "isError", default)]
    pub is_error: Option<bool>,
    /// A structured result.
    #[serde(rename = "structuredContent", default)]
    pub structured_content: Option<Value>,
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct RpcError {
    /// The JSON-RPC error code: -32601 for an unknown method, -32602 for bad params, or
    /// the server's own.
    pub code: i64,
    /// The server's text for it; empty when not sent.
    #[serde(default)]
    pub message: String,
}
