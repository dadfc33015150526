//! The ACP `kind` of each tool the agents ship (ACP-18): omp 18.2.3's built-in and hidden
//! tools, pi 0.73.1's and 1.6.0's, and the bundled agent's. `conformance/RULES.md` has the
//! table; a tool of any other name is `other`.

use agent_client_protocol_schema::v1::ToolKind;
use serde_json::Value;

/// The kind of a call of tool `name` with these arguments: a `write` to an `xd://` device
/// runs that device's tool (`execute`, as omp's own ACP mode reads it); every other call by
/// its name alone.
pub(crate) fn tool_kind(name: &str, args: Option<&Value>) -> ToolKind {
    let device_write = name == "write"
        && args
            .and_then(|a| a.get("path"))
            .and_then(Value::as_str)
            .is_some_and(|p| p.starts_with("xd://"));
    if device_write {
        return ToolKind::Execute;
    }
    match name {
        // Reading files and the code's structure.
        "read" | "ls" | "lsp" => ToolKind::Read,
        // Changing files.
        "edit" | "write" | "ast_edit" | "notebook" => ToolKind::Edit,
        "delete" => ToolKind::Delete,
        "move" => ToolKind::Move,
        // Finding things in the tree.
        "grep" | "find" | "glob" | "search" | "ast_grep" | "security_scan" => ToolKind::Search,
        // Running code.
        "bash" | "shell" | "exec" | "powershell" | "python" | "eval" | "debug" => ToolKind::Execute,
        // Reaching past the machine.
        "fetch" | "web_search" | "github" | "browser" => ToolKind::Fetch,
        // The agent's own planning and memory.
        "todo" | "think" | "goal" | "context_notes" | "memory_edit" | "retain" | "recall"
        | "reflect" | "learn" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn acp_18_kinds_of_the_shipped_tools() {
        for (name, kind) in [
            ("read", ToolKind::Read),
            ("edit", ToolKind::Edit),
            ("ast_edit", ToolKind::Edit),
            ("ast_grep", ToolKind::Search),
            ("glob", ToolKind::Search),
            ("find", ToolKind::Search),
            ("web_search", ToolKind::Fetch),
            ("delete", ToolKind::Delete),
            ("move", ToolKind::Move),
            ("task", ToolKind::Other),
        ] {
            assert_eq!(tool_kind(name, None), kind, "{name}");
        }
        let device = json!({"path": "xd://hub", "content": "{}"});
        assert_eq!(tool_kind("write", Some(&device)), ToolKind::Execute);
        assert_eq!(
            tool_kind("write", Some(&json!({"path": "a.txt"}))),
            ToolKind::Edit
        );
    }
}
