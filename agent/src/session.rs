//! A session and its file (AGENT-05), pure: the lines written and how a
//! file is read back. The [`Disk`](crate::disk::Disk) does the writing.
//!
//! ## The file
//!
//! `--session-dir DIR` keeps each session in `DIR/<sessionId>.jsonl`: JSON Lines, one entry a
//! line, in omp's shape (its session format version 3), appended as the session grows:
//!
//! ```text
//! {"type":"session","version":3,"id":"session-1","timestamp":"2023-11-14T22:13:20.000Z","cwd":"/work"}
//! {"type":"message","id":"entry-1","parentId":null,"timestamp":"…","message":{"role":"user",…}}
//! {"type":"message","id":"entry-2","parentId":"entry-1","timestamp":"…","message":{"role":"assistant",…}}
//! {"type":"custom","customType":"musewire.todos","id":"entry-3","parentId":"entry-2","timestamp":"…","data":{"phases":[…]}}
//! ```
//!
//! * The file is made when the session starts (at the agent's start, on `new_session`),
//!   holding the header; omp makes it later, at its first assistant message.
//! * The header comes first: the session's id (the file's name without `.jsonl`; a file
//!   whose header names another id is refused) and the working directory.
//! * A `message` entry per history message, in order, its `message` exactly as
//!   `get_messages` reports it (a tool result's `details` with it, stored-output metadata
//!   included: OUT-08 replays it).
//! * The todo list, each time it is set, as a `custom` entry (`customType`
//!   `musewire.todos`, as omp keeps extension state); the last one counts.
//! * Every entry has an `id` and the previous entry's id as `parentId` (a single chain); the
//!   session's leaf (bound into paging cursors) is its last message entry's id. Entries of
//!   another type are skipped when the file is read, as omp skips what it does not replay.
//!
//! Ids: sessions are `session-N`, the first `N` whose file does not exist yet in the folder
//! (the file is made exclusively; a taken name moves on to the next), so ids stay unique
//! across restarts and are the same given the folder's contents.
//!
//! ## A line that is not an entry
//!
//! Each entry is written with one `write` as it is added, so a crash between entries leaves
//! whole lines only; at each run's end the file is synced to its device (`fdatasync`). A last line without its `\n` (a write torn by a crash) is dropped when
//! the file is read, and the file is cut back to its last whole line before anything is
//! appended. Any other line that is not an entry (not JSON, not an object with a known
//! shape) makes the whole file refused, naming the line: a history is never replayed with
//! a hole in it.

use std::path::{Component, Path, PathBuf};

use musewire_core::agent::CommandId;
use musewire_wire::AgentMessage;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::io::{IoFor, IoOutcome, IoQueue, IoWork};

/// omp's session file format version, which these files follow.
pub const SESSION_VERSION: u64 = 3;

/// The `customType` of the todo list's entries.
pub const TODOS_ENTRY: &str = "musewire.todos";

/// A session file's extension.
pub const EXTENSION: &str = ".jsonl";

/// One session: its id, its history, its todos, and where its file stands.
#[derive(Debug, Default)]
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) messages: Vec<AgentMessage>,
    /// The id of the last message entry (`entry-N`), bound into paging cursors.
    pub(crate) leaf: Option<String>,
    pub(crate) todos: Vec<Value>,
    /// The id of the last entry of any kind (the next entry's `parentId`).
    pub(crate) last_entry: Option<String>,
    pub(crate) file: FileState,
}

/// Where a session's file stands.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) enum FileState {
    /// No file (no session folder, `--no-session`, or a write failed).
    #[default]
    None,
    /// Being made: the lines written meanwhile wait here.
    Creating(Vec<u8>),
    /// Written to: the file's name in the folder.
    Open(String),
}

impl FileState {
    /// The file's name once it exists.
    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            FileState::Open(name) => Some(name),
            _ => None,
        }
    }
}

/// The sessions part of the App: the current session, the counters its ids come from, and
/// its file's writes (handed out as [`IoWork`]).
#[derive(Debug)]
pub(crate) struct Sessions {
    pub(crate) current: Session,
    /// The session folder, when sessions are kept in files.
    folder: Option<PathBuf>,
    /// The working directory headers name.
    cwd: Option<PathBuf>,
    next_session: u64,
    next_entry: u64,
    /// Which session is current: it changes with each new or loaded session, so the answer
    /// to a write for an earlier one is told apart.
    epoch: u64,
}

impl Sessions {
    /// No session yet; files in `folder` when given.
    pub(crate) fn new(folder: Option<PathBuf>, cwd: Option<PathBuf>) -> Self {
        Sessions {
            current: Session::default(),
            folder,
            cwd,
            next_session: 0,
            next_entry: 0,
            epoch: 0,
        }
    }

    /// The current session's file, once made or loaded.
    pub(crate) fn file(&self) -> Option<PathBuf> {
        Some(self.folder.as_ref()?.join(self.current.file.name()?))
    }

    fn file_name(&self) -> String {
        format!("{}{EXTENSION}", self.current.id)
    }

    /// Starts a new session: a new id, an empty history and no todos, and its file when
    /// sessions are kept in files.
    pub(crate) fn start_new(&mut self, millis: u64, io: &mut IoQueue) {
        self.next_session += 1;
        self.epoch += 1;
        self.current = Session {
            id: format!("session-{}", self.next_session),
            ..Session::default()
        };
        if self.folder.is_some() {
            self.current.file = FileState::Creating(Vec::new());
            self.create_file(millis, io);
        }
    }

    /// Makes the current session's file (exclusively: a taken name moves on to the next id).
    fn create_file(&mut self, millis: u64, io: &mut IoQueue) {
        let bytes = header_line(&self.current.id, self.cwd.as_deref(), millis);
        let work = IoWork::CreateSession {
            name: self.file_name(),
            bytes,
        };
        io.request(work, IoFor::Create { epoch: self.epoch });
    }

    /// The answer to the making of the file of the session of `epoch`.
    pub(crate) fn on_created(
        &mut self,
        epoch: u64,
        outcome: IoOutcome,
        millis: u64,
        io: &mut IoQueue,
    ) {
        if epoch != self.epoch {
            return;
        }
        match outcome {
            IoOutcome::Done => {
                let name = self.file_name();
                let waiting = match std::mem::take(&mut self.current.file) {
                    FileState::Creating(lines) => lines,
                    _ => Vec::new(),
                };
                self.current.file = FileState::Open(name.clone());
                if !waiting.is_empty() {
                    self.write(
                        IoWork::AppendSession {
                            name,
                            bytes: waiting,
                        },
                        io,
                    );
                }
            }
            // Taken (by an earlier run of the agent, or another one): the next id.
            IoOutcome::Exists => {
                self.next_session += 1;
                self.current.id = format!("session-{}", self.next_session);
                self.create_file(millis, io);
            }
            _ => self.current.file = FileState::None,
        }
    }

    /// The answer to a write (an append or a cut) to the file of the session of `epoch`.
    pub(crate) fn on_written(&mut self, epoch: u64, outcome: &IoOutcome) {
        if epoch == self.epoch && !matches!(outcome, IoOutcome::Done) {
            // The file misses an entry now: nothing more is written to it, and get_state
            // no longer names it.
            self.current.file = FileState::None;
        }
    }

    fn write(&self, work: IoWork, io: &mut IoQueue) {
        io.request(work, IoFor::Write { epoch: self.epoch });
    }

    /// Adds an entry's line to the session's file (or to what waits for the file).
    fn append_entry(&mut self, line: Vec<u8>, io: &mut IoQueue) {
        match &mut self.current.file {
            FileState::None => {}
            FileState::Creating(waiting) => waiting.extend_from_slice(&line),
            FileState::Open(name) => {
                let name = name.clone();
                self.write(IoWork::AppendSession { name, bytes: line }, io);
            }
        }
    }

    /// A new entry's id, chained to the last.
    fn next_entry_id(&mut self) -> (String, Option<String>) {
        self.next_entry += 1;
        let id = format!("entry-{}", self.next_entry);
        let parent = self.current.last_entry.replace(id.clone());
        (id, parent)
    }

    /// A run ended: the session's file, when it has one, is synced to its device.
    pub(crate) fn sync(&self, io: &mut IoQueue) {
        if let FileState::Open(name) = &self.current.file {
            let name = name.clone();
            self.write(IoWork::SyncSession { name }, io);
        }
    }

    /// Adds a message to the history, and its entry to the session's file.
    pub(crate) fn push(&mut self, millis: u64, message: AgentMessage, io: &mut IoQueue) {
        let (id, parent) = self.next_entry_id();
        if self.folder.is_some() {
            let line = message_line(&id, parent.as_deref(), millis, &message);
            self.append_entry(line, io);
        }
        self.current.leaf = Some(id);
        self.current.messages.push(message);
    }

    /// Sets the todo list, and adds its entry to the session's file.
    pub(crate) fn set_todos(&mut self, millis: u64, phases: Vec<Value>, io: &mut IoQueue) {
        if self.folder.is_some() {
            let (id, parent) = self.next_entry_id();
            let line = todos_line(&id, parent.as_deref(), millis, &phases);
            self.append_entry(line, io);
        }
        self.current.todos = phases;
    }

    /// `switch_session`: the file must be a session file of the session folder; its load is
    /// handed out, for `request`.
    pub(crate) fn request_load(
        &self,
        request: CommandId,
        path: &str,
        io: &mut IoQueue,
    ) -> Result<(), String> {
        let Some(dir) = &self.folder else {
            return Err(
                "musewire agent keeps no session files (no --session-dir, or --no-session)".into(),
            );
        };
        let name = file_name_in(dir, Path::new(path))?;
        let work = IoWork::LoadSession { name: name.clone() };
        io.request(work, IoFor::Load { request, name });
        Ok(())
    }

    /// The session the load of file `name` gave, or why it is none.
    pub(crate) fn loaded(&self, name: &str, outcome: IoOutcome) -> Result<Loaded, String> {
        let id = name.strip_suffix(EXTENSION).unwrap_or(name);
        match outcome {
            IoOutcome::Loaded(bytes) => parse(&bytes, id).map_err(|e| {
                let dir = self.folder.clone().unwrap_or_default();
                format!("{}: {e}", dir.join(name).display())
            }),
            IoOutcome::Failed(error) => Err(error),
            other => Err(format!("unexpected answer to a load: {other:?}")),
        }
    }

    /// Makes `loaded` (read from the file `name`) the current session, its file written to
    /// from now on (cut back first when its last line was torn).
    pub(crate) fn replace(&mut self, name: String, loaded: Loaded, io: &mut IoQueue) {
        self.epoch += 1;
        self.next_entry = self.next_entry.max(loaded.max_entry);
        self.current = Session {
            id: loaded.id,
            messages: loaded.messages,
            leaf: loaded.leaf,
            todos: loaded.todos,
            last_entry: loaded.last_entry,
            file: FileState::Open(name.clone()),
        };
        if let Some(len) = loaded.torn_at {
            self.write(IoWork::TruncateSession { name, len }, io);
        }
    }
}

/// The header line of a session (with its `\n`).
pub(crate) fn header_line(id: &str, cwd: Option<&Path>, millis: u64) -> Vec<u8> {
    let cwd = cwd
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    line(&Header {
        kind: "session",
        version: SESSION_VERSION,
        id,
        timestamp: iso_timestamp(millis),
        cwd,
    })
}

/// A message entry's line.
pub(crate) fn message_line(
    id: &str,
    parent: Option<&str>,
    millis: u64,
    message: &AgentMessage,
) -> Vec<u8> {
    line(&MessageEntry {
        kind: "message",
        id,
        parent_id: parent,
        timestamp: iso_timestamp(millis),
        message,
    })
}

/// A todo list entry's line.
pub(crate) fn todos_line(id: &str, parent: Option<&str>, millis: u64, phases: &[Value]) -> Vec<u8> {
    line(&TodosEntry {
        kind: "custom",
        custom_type: TODOS_ENTRY,
        id,
        parent_id: parent,
        timestamp: iso_timestamp(millis),
        data: TodosData { phases },
    })
}

/// The session file's header: `{type:"session", version, id, timestamp, cwd}`.
#[derive(Serialize)]
struct Header<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    version: u64,
    id: &'a str,
    timestamp: String,
    cwd: String,
}

/// A message entry: `{type:"message", id, parentId, timestamp, message}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MessageEntry<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: &'a str,
    parent_id: Option<&'a str>,
    timestamp: String,
    message: &'a AgentMessage,
}

/// A todo list entry: `{type:"custom", customType, id, parentId, timestamp, data:{phases}}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TodosEntry<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    custom_type: &'static str,
    id: &'a str,
    parent_id: Option<&'a str>,
    timestamp: String,
    data: TodosData<'a>,
}

/// A todo list entry's `data`.
#[derive(Serialize)]
struct TodosData<'a> {
    phases: &'a [Value],
}

fn line(entry: &impl Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(entry).expect("an entry serialises");
    bytes.push(b'\n');
    bytes
}

/// A session read back from its file.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Loaded {
    pub(crate) id: String,
    pub(crate) messages: Vec<AgentMessage>,
    pub(crate) leaf: Option<String>,
    pub(crate) last_entry: Option<String>,
    pub(crate) todos: Vec<Value>,
    /// The highest `N` of the `entry-N` ids, so new entries get new ids.
    pub(crate) max_entry: u64,
    /// `Some(len)`: the last line was torn; the file is to be cut to `len` bytes.
    pub(crate) torn_at: Option<u64>,
}

/// Reads a session file's bytes (see the [module docs](self)); `id` is the id its name
/// gives, which its header must name.
pub(crate) fn parse(bytes: &[u8], id: &str) -> Result<Loaded, String> {
    let mut loaded = Loaded::default();
    let whole = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(last) => last + 1,
        None => 0,
    };
    if whole < bytes.len() {
        loaded.torn_at = Some(whole as u64);
    }
    let mut header = false;
    for (index, raw) in bytes[..whole].split_inclusive(|&b| b == b'\n').enumerate() {
        let raw = &raw[..raw.len() - 1];
        let number = index + 1;
        let bad = |why: &str| format!("line {number} is not a session entry: {why}");
        let entry: Value = serde_json::from_slice(raw).map_err(|e| bad(&e.to_string()))?;
        let kind = entry
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no \"type\""))?;
        if !header {
            if kind != "session" {
                return Err(bad("the first line is not the session header"));
            }
            let named = entry
                .get("id")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("no \"id\""))?;
            if named != id {
                return Err(bad(&format!(
                    "the header names session {named:?}, the file {id:?}"
                )));
            }
            loaded.id = named.to_owned();
            header = true;
            continue;
        }
        let entry_id = entry.get("id").and_then(Value::as_str);
        match kind {
            "message" => {
                let message = entry
                    .get("message")
                    .filter(|m| m.is_object())
                    .ok_or_else(|| bad("no \"message\" object"))?;
                let entry_id = entry_id.ok_or_else(|| bad("no \"id\""))?;
                // Typed as the wire model reads it: a message of another shape as it is.
                let message = AgentMessage::deserialize(message)
                    .unwrap_or_else(|_| AgentMessage::Unknown(message.clone()));
                loaded.messages.push(message);
                loaded.leaf = Some(entry_id.to_owned());
            }
            "custom" if entry.get("customType").and_then(Value::as_str) == Some(TODOS_ENTRY) => {
                let phases = entry
                    .pointer("/data/phases")
                    .and_then(Value::as_array)
                    .ok_or_else(|| bad("a todo list without \"data.phases\""))?;
                loaded.todos = phases.clone();
            }
            "session" => return Err(bad("a second session header")),
            _ => {}
        }
        if let Some(entry_id) = entry_id {
            loaded.last_entry = Some(entry_id.to_owned());
            if let Some(n) = entry_id
                .strip_prefix("entry-")
                .and_then(|n| n.parse::<u64>().ok())
            {
                loaded.max_entry = loaded.max_entry.max(n);
            }
        }
    }
    if !header {
        return Err("the file has no session header".into());
    }
    Ok(loaded)
}

/// The name of the session file `path` names in the folder `dir` (both absolute), or why
/// it is not one: it must be `dir/<id>.jsonl`, written without `..` components (compared
/// component by component, as [`Path`] reads them).
pub(crate) fn file_name_in(dir: &Path, path: &Path) -> Result<String, String> {
    if !path.is_absolute() {
        return Err(format!("{} is not an absolute path", path.display()));
    }
    if path
        .components()
        .any(|c| matches!(c, Component::CurDir | Component::ParentDir))
    {
        return Err(format!("{} has . or .. in it", path.display()));
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(format!("{} names no file", path.display()));
    };
    let same_dir = parent.components().eq(dir.components());
    if !same_dir {
        return Err(format!(
            "{} is not in the session folder {}",
            path.display(),
            dir.display()
        ));
    }
    let name = name
        .to_str()
        .filter(|n| n.strip_suffix(EXTENSION).is_some_and(is_session_id))
        .ok_or_else(|| format!("{} is not a session file (<id>{EXTENSION})", path.display()))?;
    Ok(name.to_owned())
}

/// Whether `id` can be a session id in a file name: letters, digits, `.`, `_` and `-`, not
/// starting with `.`.
pub(crate) fn is_session_id(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// `millis` since the Unix epoch as omp writes timestamps: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub(crate) fn iso_timestamp(millis: u64) -> String {
    musewire_core::formats::rfc3339(millis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A message as the wire model reads it.
    fn message(value: Value) -> AgentMessage {
        AgentMessage::deserialize(&value).unwrap()
    }

    #[test]
    fn timestamps_are_omp_s_iso_form() {
        assert_eq!(iso_timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_timestamp(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(iso_timestamp(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    fn file(lines: &[Vec<u8>]) -> Vec<u8> {
        lines.concat()
    }

    #[test]
    fn agent_05_a_written_session_reads_back_whole() {
        let user = message(json!({"role": "user", "content": "hi", "timestamp": 1}));
        let reply = message(json!({"role": "assistant", "content": [], "timestamp": 2}));
        let todos = vec![json!({"name": "Tasks", "tasks": []})];
        let bytes = file(&[
            header_line("session-3", Some(Path::new("/w")), 0),
            message_line("entry-1", None, 0, &user),
            todos_line("entry-2", Some("entry-1"), 0, &todos),
            message_line("entry-3", Some("entry-2"), 0, &reply),
            b"{\"type\":\"label\",\"id\":\"x\",\"parentId\":\"entry-3\"}\n".to_vec(),
        ]);
        let loaded = parse(&bytes, "session-3").unwrap();
        assert_eq!(loaded.id, "session-3");
        assert_eq!(loaded.messages, [user, reply]);
        assert_eq!(loaded.todos, todos);
        assert_eq!(loaded.leaf.as_deref(), Some("entry-3"));
        assert_eq!(loaded.last_entry.as_deref(), Some("x"));
        assert_eq!(loaded.max_entry, 3);
        assert_eq!(loaded.torn_at, None);
    }

    #[test]
    fn agent_05_a_torn_last_line_is_dropped_and_the_file_cut_back() {
        let head = header_line("s", None, 0);
        let mut bytes = head.clone();
        bytes.extend_from_slice(br#"{"type":"message","id":"entry-1","par"#);
        let loaded = parse(&bytes, "s").unwrap();
        assert!(loaded.messages.is_empty());
        assert_eq!(loaded.torn_at, Some(head.len() as u64));
    }

    #[test]
    fn agent_05_a_corrupt_line_refuses_the_file_naming_the_line() {
        let mut bytes = header_line("s", None, 0);
        bytes.extend_from_slice(b"not json\n");
        let user = AgentMessage::Unknown(json!({"role": "user"}));
        bytes.extend(message_line("entry-1", None, 0, &user));
        let error = parse(&bytes, "s").unwrap_err();
        assert!(
            error.starts_with("line 2 is not a session entry"),
            "{error}"
        );
        let mut bytes = header_line("s", None, 0);
        bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"e\"}\n");
        assert!(parse(&bytes, "s")
            .unwrap_err()
            .contains("no \"message\" object"));
        assert!(parse(b"", "s").unwrap_err().contains("no session header"));
        assert!(parse(&header_line("other", None, 0), "s")
            .unwrap_err()
            .contains("names session \"other\""));
        assert!(parse(b"\n", "s").is_err());
    }

    #[test]
    fn agent_05_only_a_session_file_of_the_folder_is_named() {
        let dir = Path::new("/d/sessions");
        assert_eq!(
            file_name_in(dir, Path::new("/d/sessions/session-1.jsonl")),
            Ok("session-1.jsonl".into())
        );
        // The same file written with `.` (which `Path` reads away).
        assert_eq!(
            file_name_in(dir, Path::new("/d/sessions/./session-1.jsonl")),
            Ok("session-1.jsonl".into())
        );
        for bad in [
            "/d/other/session-1.jsonl",
            "/d/sessions/../sessions/session-1.jsonl",
            "/d/sessions/sub/session-1.jsonl",
            "session-1.jsonl",
            "/d/sessions/session-1.txt",
            "/d/sessions/.jsonl",
            "/d/sessions/.hidden.jsonl",
            "/d/sessions",
            "/",
        ] {
            assert!(file_name_in(dir, Path::new(bad)).is_err(), "{bad}");
        }
    }
}
