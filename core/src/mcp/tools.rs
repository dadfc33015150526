//! An MCP server's tools as host tools (MCP-03): the names the agent sees
//! (`mcp__SERVER__TOOL`), their descriptions and schemas, and the way back to the MCP name.

use std::collections::BTreeMap;

use serde_json::Value;

use super::types::Tool;
use crate::wire::HostToolDefinition;

/// What every host tool name of an MCP server starts with.
pub(crate) const TOOL_PREFIX: &str = "mcp__";

/// The longest host tool name: what the model providers take (`^[a-zA-Z0-9_-]{1,64}$`).
pub(crate) const MAX_TOOL_NAME_BYTES: usize = 64;

/// The most tools one server registers; the rest are left out with a notice.
pub(crate) const MAX_TOOLS: usize = 256;

/// A name with every character outside `[A-Za-z0-9_-]` made `_` (`server` for an empty one).
pub(crate) fn name_part(name: &str) -> String {
    let part: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if part.is_empty() {
        "server".into()
    } else {
        part
    }
}

/// The host tool name of `tool` of the server whose name part is `server`.
pub(crate) fn host_name(server: &str, tool: &str) -> String {
    format!("{TOOL_PREFIX}{server}__{}", name_part(tool))
}

/// A server's tools as registered: the definitions in the server's order, and the MCP name
/// of each by its host name.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolSet {
    pub(crate) definitions: Vec<HostToolDefinition>,
    pub(crate) mcp_names: BTreeMap<String, String>,
}

impl ToolSet {
    /// The set from a listing, and the notices for the tools left out.
    pub(crate) fn from_listing(server: &str, listed: &[Value]) -> (ToolSet, Vec<String>) {
        let mut set = ToolSet::default();
        let mut left_out: Vec<String> = Vec::new();
        let mut malformed = 0usize;
        for value in listed {
            let Ok(tool) = serde_json::from_value::<Tool>(value.clone()) else {
                malformed += 1;
                continue;
            };
            let name = host_name(server, &tool.name);
            let usable = !tool.name.is_empty()
                && tool.input_schema.is_object()
                && name.len() <= MAX_TOOL_NAME_BYTES
                && !set.mcp_names.contains_key(&name)
                && set.definitions.len() < MAX_TOOLS;
            if !usable {
                left_out.push(tool.name);
                continue;
            }
            let description = [tool.description.as_deref(), tool.title.as_deref()]
                .into_iter()
                .flatten()
                .find(|d| !d.trim().is_empty())
                .unwrap_or(&tool.name)
                .to_owned();
            set.definitions.push(HostToolDefinition {
                name: name.clone(),
                label: tool.title.filter(|t| !t.trim().is_empty()),
                description,
                parameters: tool.input_schema,
                // Shown to the model with the agent's own tools, as the editor's MCP tools
                // are in other agents (omp would otherwise mount it under `xd://`).
                load_mode: Some("essential".into()),
                ..HostToolDefinition::default()
            });
            set.mcp_names.insert(name, tool.name);
        }
        let mut notices = Vec::new();
        if malformed > 0 {
            notices.push(format!("{malformed} tool(s) of its list could not be read"));
        }
        if !left_out.is_empty() {
            let shown: Vec<String> = left_out.iter().take(8).map(|n| format!("{n:?}")).collect();
            notices.push(format!(
                "{} tool(s) left out (a name over {MAX_TOOL_NAME_BYTES} bytes as `mcp__SERVER__TOOL`, a repeated name, no object schema, or over {MAX_TOOLS} tools): {}",
                left_out.len(),
                shown.join(", ")
            ));
        }
        (set, notices)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mcp_03_names_are_prefixed_and_made_safe() {
        assert_eq!(name_part("my server.v2"), "my_server_v2");
        assert_eq!(name_part(""), "server");
        assert_eq!(host_name("fs", "read_file"), "mcp__fs__read_file");
    }

    #[test]
    fn mcp_03_schema_and_description_pass_through_and_bad_tools_are_left_out() {
        let schema = json!({"type":"object","properties":{"a":{"type":"string"}},"$defs":{"x":{}},"additionalProperties":false});
        let listed = vec![
            json!({"name":"echo","description":"Echoes","inputSchema":schema}),
            json!({"name":"titled","title":"A title","inputSchema":{"type":"object"}}),
            json!({"name":"bare","inputSchema":{"type":"object"}}),
            json!({"name":"echo","description":"again","inputSchema":{"type":"object"}}),
            json!({"name":"noschema","inputSchema":"no"}),
            json!({"name": "x".repeat(70),"inputSchema":{"type":"object"}}),
            json!({"description":"no name"}),
        ];
        let (set, notices) = ToolSet::from_listing("srv", &listed);
        let names: Vec<&str> = set.definitions.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            ["mcp__srv__echo", "mcp__srv__titled", "mcp__srv__bare"]
        );
        assert_eq!(set.definitions[0].parameters, schema);
        assert_eq!(set.definitions[0].description, "Echoes");
        assert_eq!(set.definitions[1].description, "A title");
        assert_eq!(set.definitions[2].description, "bare");
        assert_eq!(set.mcp_names["mcp__srv__echo"], "echo");
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(notices[1].starts_with("3 tool(s) left out"), "{notices:?}");
    }
}
