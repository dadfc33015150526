//! What a tool card carries besides its text: `diff` content (ACP-17), `locations`
//! (ACP-18) and the final `rawOutput` (ACP-19), from the call's arguments and its result's
//! `details`, paths made absolute against the session's cwd.

use std::path::{Component, Path, PathBuf};

use agent_client_protocol_schema::v1::{Diff, ToolCallContent, ToolCallLocation, ToolKind};
use serde_json::Value;

use super::bound::{bound_snapshot, MAX_SURFACE_BYTES};
use super::map::withhold_in_value;

/// The most diffs one card carries (ACP-17).
pub(crate) const MAX_CARD_DIFFS: usize = 64;

/// The most locations one card carries (ACP-18).
pub(crate) const MAX_CARD_LOCATIONS: usize = 64;

/// The diffs a call's arguments give (ACP-17): a `write`'s `path` and `content` (the old
/// text unknown: `null`, as for a new file); an `edit`'s replacements, pi's `edits[]
/// {oldText, newText}` (or a single `oldText`/`newText`; omp's replace mode `old_string`/
/// `new_string`), each a diff of the replaced part.
pub(crate) fn argument_diffs(name: &str, args: Option<&Value>, cwd: Option<&Path>) -> Vec<Diff> {
    let Some(args) = args else {
        return Vec::new();
    };
    let Some(path) = file_path(args.get("path"), cwd) else {
        return Vec::new();
    };
    match name {
        "write" => match args.get("content").and_then(Value::as_str) {
            Some(content) => vec![diff(path, None, content)],
            None => Vec::new(),
        },
        "edit" => {
            let pair = |edit: &Value| {
                let old = text(edit, ["oldText", "old_string"])?;
                let new = text(edit, ["newText", "new_string"])?;
                Some(diff(path.clone(), Some(old), new))
            };
            let mut diffs: Vec<Diff> = match args.get("edits").and_then(Value::as_array) {
                Some(edits) => edits.iter().filter_map(pair).collect(),
                None => Vec::new(),
            };
            diffs.extend(pair(args));
            diffs.truncate(MAX_CARD_DIFFS);
            diffs
        }
        _ => Vec::new(),
    }
}

/// The diffs a finished call's `details` give (ACP-17): omp's edit
/// `perFileResults[].{path, oldText, newText}`, or the same members on the details of a
/// single-file edit; an entry that failed (`isError`) or has neither text gives none.
pub(crate) fn result_diffs(details: Option<&Value>, cwd: Option<&Path>) -> Vec<Diff> {
    let Some(details) = details.filter(|d| d.is_object()) else {
        return Vec::new();
    };
    let entries: Vec<&Value> = match details.get("perFileResults").and_then(Value::as_array) {
        Some(entries) => entries.iter().collect(),
        None => vec![details],
    };
    entries
        .into_iter()
        .filter(|e| e.get("isError").and_then(Value::as_bool) != Some(true))
        .filter_map(|entry| {
            let path = file_path(entry.get("path"), cwd)?;
            let old = entry.get("oldText").and_then(Value::as_str);
            let new = entry.get("newText").and_then(Value::as_str);
            if old.is_none() && new.is_none() {
                return None;
            }
            Some(diff(path, old, new.unwrap_or("")))
        })
        .take(MAX_CARD_DIFFS)
        .collect()
}

/// The files a finished `write` or `edit` call changed (ACP-38), made absolute and
/// normalized as the cards' paths are (ACP-17): omp's `write` names its file in
/// `details.resolvedPath`, its `edit` in `details.perFileResults[].path` (a multi-file edit)
/// or `details.path`, an entry that failed (`isError`) or deleted its file (`op: "delete"`)
/// left out, a moved file under its new path; else the arguments' `path` (pi's, the bundled
/// agent's). None for a call whose `path` argument is a uri (`scheme://`: omp's own
/// `local://` artifacts and `xd://` devices, which its ACP mode keeps off the editor too),
/// nor for any other tool. Each path once, at most [`MAX_CARD_DIFFS`].
pub(crate) fn edited_files(
    name: &str,
    args: Option<&Value>,
    details: Option<&Value>,
    cwd: Option<&Path>,
) -> Vec<PathBuf> {
    if !matches!(name, "write" | "edit") {
        return Vec::new();
    }
    let arg_path = args.and_then(|a| a.get("path"));
    if arg_path
        .and_then(Value::as_str)
        .is_some_and(|p| p.contains("://"))
    {
        return Vec::new();
    }
    let details = details.filter(|d| d.is_object());
    let kept = |entry: &&Value| {
        entry.get("isError").and_then(Value::as_bool) != Some(true)
            && entry.get("op").and_then(Value::as_str) != Some("delete")
    };
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut push = |path: Option<PathBuf>| {
        if let Some(path) = path {
            if !paths.contains(&path) && paths.len() < MAX_CARD_DIFFS {
                paths.push(path);
            }
        }
    };
    let per_file = details
        .and_then(|d| d.get("perFileResults"))
        .and_then(Value::as_array);
    if let Some(entries) = per_file {
        for entry in entries.iter().filter(kept) {
            push(file_path(entry.get("path"), cwd));
        }
        return paths;
    }
    // A single file's details: omp names it (`resolvedPath` for a write, `path` for an
    // edit) unless it deleted it; without details, the arguments do.
    let key = if name == "write" {
        "resolvedPath"
    } else {
        "path"
    };
    match details {
        Some(d) if !kept(&d) => {}
        Some(d) if d.get(key).is_some() => push(file_path(d.get(key), cwd)),
        _ => push(file_path(arg_path, cwd)),
    }
    paths
}

/// A diff with both texts bounded to 64 KiB with the truncation notice (ACP-05, ACP-17).
fn diff(path: PathBuf, old: Option<&str>, new: &str) -> Diff {
    Diff::new(path, bound_snapshot(new)).old_text(old.map(bound_snapshot))
}

/// The first of `keys` that is a string member of `value`.
fn text<'a>(value: &'a Value, keys: [&str; 2]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| value.get(*k).and_then(Value::as_str))
}

/// Diffs as card content.
pub(crate) fn diff_content(diffs: Vec<Diff>) -> Vec<ToolCallContent> {
    diffs.into_iter().map(ToolCallContent::Diff).collect()
}

/// The files a call of this kind reads or changes, from its arguments (ACP-18): `path`
/// (an omp read selector `:N…` read as its first line; pi's read `offset` as the line),
/// `oldPath`, `newPath`; only for kinds that touch one file (read, edit, delete, move).
pub(crate) fn argument_locations(
    kind: ToolKind,
    args: Option<&Value>,
    cwd: Option<&Path>,
) -> Vec<ToolCallLocation> {
    let Some(args) = args else {
        return Vec::new();
    };
    if !matches!(
        kind,
        ToolKind::Read | ToolKind::Edit | ToolKind::Delete | ToolKind::Move
    ) {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(raw) = args.get("path").and_then(Value::as_str) {
        let (raw, selected) = split_selector(raw);
        let line = selected.or_else(|| line_of(args.get("offset")));
        push(&mut out, file_path(Some(&Value::from(raw)), cwd), line);
    }
    for key in ["oldPath", "newPath"] {
        push(&mut out, file_path(args.get(key), cwd), None);
    }
    out
}

/// The files a finished call changed or read, from its `details` (ACP-18), after those of
/// its arguments: `resolvedPath`, `path`, `perFileResults[].path`, each with its
/// `firstChangedLine` when given (the first changed line of an edit).
pub(crate) fn result_locations(
    details: Option<&Value>,
    mut out: Vec<ToolCallLocation>,
    cwd: Option<&Path>,
) -> Vec<ToolCallLocation> {
    let Some(details) = details.filter(|d| d.is_object()) else {
        return out;
    };
    let first_line = line_of(details.get("firstChangedLine"));
    if let Some(line) = first_line {
        // The first changed line goes on the file the arguments named.
        if let Some(first) = out.first_mut().filter(|l| l.line.is_none()) {
            first.line = Some(line);
        }
    }
    for key in ["resolvedPath", "path"] {
        push(&mut out, file_path(details.get(key), cwd), first_line);
    }
    if let Some(entries) = details.get("perFileResults").and_then(Value::as_array) {
        for entry in entries {
            let line = line_of(entry.get("firstChangedLine"));
            push(&mut out, file_path(entry.get("path"), cwd), line);
        }
    }
    out
}

fn push(out: &mut Vec<ToolCallLocation>, path: Option<PathBuf>, line: Option<u32>) {
    let Some(path) = path else { return };
    if out.len() >= MAX_CARD_LOCATIONS {
        return;
    }
    match out.iter_mut().find(|l| l.path == path) {
        Some(seen) => {
            if seen.line.is_none() {
                seen.line = line;
            }
        }
        None => out.push(ToolCallLocation::new(path).line(line)),
    }
}

/// A 1-based line number (`offset`, `firstChangedLine`).
fn line_of(value: Option<&Value>) -> Option<u32> {
    value
        .and_then(Value::as_u64)
        .filter(|n| *n >= 1)
        .and_then(|n| u32::try_from(n).ok())
}

/// omp's read selector: `PATH:N`, `PATH:N-M`, `PATH:N+K`, `PATH:N-M,P-Q`: the path and the
/// first line; any other path as it is.
fn split_selector(raw: &str) -> (&str, Option<u32>) {
    let Some((path, selector)) = raw.rsplit_once(':') else {
        return (raw, None);
    };
    let digits: String = selector.chars().take_while(char::is_ascii_digit).collect();
    let well_formed = !digits.is_empty()
        && !path.is_empty()
        && selector
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | ','));
    if !well_formed {
        return (raw, None);
    }
    (path, digits.parse().ok().filter(|n| *n >= 1))
}

/// A file path from a string value: absolute against `cwd` and normalized lexically (`.`,
/// `..`); none for an empty value or a uri (`scheme://…`: omp's internal resources, URLs).
fn file_path(value: Option<&Value>, cwd: Option<&Path>) -> Option<PathBuf> {
    let raw = value?.as_str()?;
    if raw.is_empty() || raw.contains("://") || raw.chars().any(char::is_control) {
        return None;
    }
    let path = Path::new(raw);
    let joined = match cwd {
        Some(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// A final update's `rawOutput` (ACP-19): the result as the agent sent it, credential-bearing
/// uris withheld (BLOCK-04); over 64 KiB serialized, its JSON text cut to 64 KiB with the
/// truncation notice, as a string.
pub(crate) fn raw_output(result: &Value) -> Value {
    let shown = withhold_in_value(result);
    let text = shown.to_string();
    if text.len() <= MAX_SURFACE_BYTES {
        shown
    } else {
        Value::String(bound_snapshot(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn acp_18_paths_are_absolute_against_the_cwd() {
        let cwd = Some(Path::new("/work/p"));
        let path = |s: &str| file_path(Some(&json!(s)), cwd);
        assert_eq!(path("a/b.rs"), Some(PathBuf::from("/work/p/a/b.rs")));
        assert_eq!(path("./a/../c.rs"), Some(PathBuf::from("/work/p/c.rs")));
        assert_eq!(path("/etc/x"), Some(PathBuf::from("/etc/x")));
        assert_eq!(path("xd://hub"), None);
        assert_eq!(path(""), None);
    }

    #[test]
    fn acp_18_read_selectors_give_a_line() {
        assert_eq!(split_selector("a.rs:10-20"), ("a.rs", Some(10)));
        assert_eq!(split_selector("a.rs:7"), ("a.rs", Some(7)));
        assert_eq!(split_selector("a.rs:raw"), ("a.rs:raw", None));
        assert_eq!(split_selector("a.rs"), ("a.rs", None));
    }
}
