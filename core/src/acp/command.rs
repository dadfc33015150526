//! Command cards (ACP-29, ACP-30): a shell command's card is titled with its command line,
//! its output streams onto it while it runs (the tail as text, or, for an editor that opted
//! in through `clientCapabilities._meta.terminal_output`, as the terminal `_meta` Zed reads
//! from claude-agent-acp and codex-acp), and its final update says how it exited.

use std::path::Path;

use agent_client_protocol_schema::v1::{Meta, Terminal, ToolCallContent};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::bound::{bound_tail, MAX_SURFACE_BYTES};

/// How a command's output reaches the editor (ACP-30).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CommandOutput {
    /// As the card's text content: the tail of the output so far, 64 KiB at most.
    #[default]
    Text,
    /// As a terminal: the card's content is `{type: "terminal", terminalId}` and the output
    /// goes in `_meta.terminal_info` / `terminal_output` / `terminal_exit` (the editor opted
    /// in with `clientCapabilities._meta.terminal_output: true`).
    Terminal,
}

impl CommandOutput {
    /// What the editor's `clientCapabilities._meta` asks for: a terminal only when its
    /// `terminal_output` is `true`, as claude-agent-acp and codex-acp read it.
    pub(crate) fn from_client_meta(meta: Option<&Meta>) -> Self {
        match meta.and_then(|m| m.get("terminal_output")) {
            Some(Value::Bool(true)) => Self::Terminal,
            _ => Self::Text,
        }
    }
}

/// Whether tool `name` runs a shell command line given as its `command` argument (ACP-29):
/// omp's and pi's `bash`, omp's `shell` and `exec`, pi 1.6's `powershell`, the bundled
/// agent's `bash`.
pub(crate) fn is_command_tool(name: &str) -> bool {
    matches!(name, "bash" | "shell" | "exec" | "powershell")
}

/// The `_meta` key of a terminal's opening (ACP-30).
const TERMINAL_INFO: &str = "terminal_info";
/// The `_meta` key of a terminal's new output (ACP-30).
const TERMINAL_OUTPUT: &str = "terminal_output";
/// The `_meta` key of a terminal's exit (ACP-30).
const TERMINAL_EXIT: &str = "terminal_exit";

#[derive(Serialize)]
struct TerminalInfo<'a> {
    terminal_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<&'a Path>,
}

#[derive(Serialize)]
struct TerminalData<'a> {
    terminal_id: &'a str,
    data: &'a str,
}

#[derive(Serialize)]
struct TerminalExit<'a> {
    terminal_id: &'a str,
    exit_code: Option<i64>,
    signal: Option<&'a str>,
}

fn insert(meta: &mut Meta, key: &str, value: impl Serialize) {
    let value = serde_json::to_value(value).expect("terminal meta serialises");
    meta.insert(key.to_owned(), value);
}

/// The terminal a command card shows (ACP-30): the call id is its terminal id.
pub(crate) fn terminal_content(id: &str) -> ToolCallContent {
    ToolCallContent::Terminal(Terminal::new(id.to_owned()))
}

/// A command card's opening `_meta`: `terminal_info {terminal_id, cwd}` (ACP-30).
pub(crate) fn info_meta(id: &str, cwd: Option<&Path>) -> Meta {
    let mut meta = Meta::new();
    insert(
        &mut meta,
        TERMINAL_INFO,
        TerminalInfo {
            terminal_id: id,
            cwd,
        },
    );
    meta
}

/// Adds `terminal_output {terminal_id, data}` to `meta` (ACP-30): the output's new bytes.
pub(crate) fn add_output(meta: &mut Meta, id: &str, data: &str) {
    let data = bound_tail(data);
    insert(
        meta,
        TERMINAL_OUTPUT,
        TerminalData {
            terminal_id: id,
            data: &data,
        },
    );
}

/// Adds `terminal_exit {terminal_id, exit_code, signal}` to `meta` (ACP-30).
pub(crate) fn add_exit(meta: &mut Meta, id: &str, exit_code: Option<i64>) {
    insert(
        meta,
        TERMINAL_EXIT,
        TerminalExit {
            terminal_id: id,
            exit_code,
            signal: None,
        },
    );
}

/// What a command's result `details` say of its exit: omp's `exitCode` (given for a
/// non-zero exit), the bundled agent's `exitCode` (`null` when it was cancelled).
#[derive(Deserialize, Default)]
struct CommandDetails {
    #[serde(rename = "exitCode", default)]
    exit_code: Option<i64>,
}

/// What a tool result says of its call: its `isError`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolResultKind {
    /// The call did its work (or is still doing it: a partial result).
    Ok,
    /// The call failed (`isError: true`).
    Error,
}

impl ToolResultKind {
    /// By the result's `isError`, absent as false.
    pub(crate) fn of(is_error: Option<bool>) -> Self {
        if is_error == Some(true) {
            ToolResultKind::Error
        } else {
            ToolResultKind::Ok
        }
    }
}

/// A finished command's exit code (ACP-30): the details' `exitCode` when the agent gives
/// one; else 0 for a call that did not fail (omp and pi fail a command that exits non-zero);
/// else unknown (`None`: aborted, timed out, or a code the agent gave only as text).
pub(crate) fn exit_code(details: Option<&Value>, result: ToolResultKind) -> Option<i64> {
    let given = details
        .and_then(|d| CommandDetails::deserialize(d).ok())
        .and_then(|d| d.exit_code);
    given.or((result == ToolResultKind::Ok).then_some(0))
}

/// How many bytes of a command's output tail the bridge remembers per card, to tell what is
/// new in the next one (ACP-30).
pub(crate) const MAX_REMEMBERED_BYTES: usize = MAX_SURFACE_BYTES;

/// How many bytes at the end of what was sent are looked for in a new tail that no longer
/// starts with it (ACP-30).
const ANCHOR_BYTES: usize = 256;

/// The output's bytes in tail `now` that were not in tail `sent` (ACP-30): what follows
/// `sent` when `now` starts with it; when the agent's tail window moved on (it keeps only
/// the last bytes), what follows the last [`ANCHOR_BYTES`] of `sent` where they first occur
/// in `now`; when they are not there, all of `now`.
pub(crate) fn new_bytes<'a>(sent: &str, now: &'a str) -> &'a str {
    if let Some(rest) = now.strip_prefix(sent) {
        return rest;
    }
    let mut start = sent.len().saturating_sub(ANCHOR_BYTES);
    while !sent.is_char_boundary(start) {
        start += 1;
    }
    let anchor = &sent[start..];
    if anchor.is_empty() {
        return now;
    }
    match now.find(anchor) {
        Some(at) => &now[at + anchor.len()..],
        None => now,
    }
}

/// The last [`MAX_REMEMBERED_BYTES`] of `text`, cut on a character boundary.
pub(crate) fn remembered(text: &str) -> String {
    let mut start = text.len().saturating_sub(MAX_REMEMBERED_BYTES);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn acp_30_new_bytes_follow_what_was_sent() {
        assert_eq!(new_bytes("", "one\n"), "one\n");
        assert_eq!(new_bytes("one\n", "one\ntwo\n"), "two\n");
        assert_eq!(new_bytes("one\n", "one\n"), "");
        // The agent's tail window moved on: the new bytes follow the old end.
        let sent = format!("{}end-of-old\n", "x".repeat(300));
        let now = format!("{}end-of-old\nfresh\n", "x".repeat(250));
        assert_eq!(new_bytes(&sent, &now), "fresh\n");
        assert_eq!(new_bytes("gone\n", "other\n"), "other\n");
    }

    #[test]
    fn acp_30_exit_codes_from_details() {
        let (ok, error) = (ToolResultKind::Ok, ToolResultKind::Error);
        assert_eq!(exit_code(Some(&json!({"exitCode": 2})), error), Some(2));
        assert_eq!(exit_code(Some(&json!({"exitCode": null})), error), None);
        assert_eq!(exit_code(Some(&json!({})), ok), Some(0));
        assert_eq!(exit_code(None, error), None);
        assert_eq!(
            CommandOutput::from_client_meta(Some(&Meta::from_iter([(
                "terminal_output".to_owned(),
                json!(true)
            )]))),
            CommandOutput::Terminal
        );
        assert_eq!(CommandOutput::from_client_meta(None), CommandOutput::Text);
    }
}
