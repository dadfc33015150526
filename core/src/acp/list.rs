//! `session/list` (ACP-26): the sessions of the session folder, from the files the driver
//! read ([`Action::ReadSessionFolder`](super::Action::ReadSessionFolder) →
//! [`Input::SessionFolder`](super::Input::SessionFolder)): each file's id, cwd and title from
//! its own lines, its `updatedAt` from its modification time; newest first, filtered by cwd,
//! paged by an opaque cursor. The title is the session's name where the agent set one, else
//! its first user message (read from the head only: a message past
//! [`SESSION_FILE_HEAD_BYTES`] cannot title it); a file with no user message is not a session
//! to list.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{
    Error, ListSessionsRequest, ListSessionsResponse, SessionId, SessionInfo,
};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::json;

use super::is_session_file_name;
use super::map::withhold_credential_uris;
use crate::formats::rfc3339;
use crate::wire::{AgentMessage, ContentBlock, MessageContent, SessionEntry};

/// How much of the start of each session file the driver reads: the header (and omp's
/// title slot before it) and the first user message, which titles an unnamed session.
pub const SESSION_FILE_HEAD_BYTES: usize = 16 * 1024;

/// How much of the end of each session file the driver reads: the latest title changes.
pub const SESSION_FILE_TAIL_BYTES: usize = 64 * 1024;

/// The most session files one listing reads (the newest by modification time).
pub const MAX_SESSION_FILES: usize = 2000;

/// Sessions per `session/list` page.
pub(crate) const SESSIONS_PAGE: usize = 100;

/// One session file of the folder as the driver read it, for `session/list` (ACP-26).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// Its file name in the folder (`<id>.jsonl`).
    pub name: String,
    /// Its modification time in milliseconds since the Unix epoch, when known.
    pub modified_ms: Option<u64>,
    /// Its first [`SESSION_FILE_HEAD_BYTES`] bytes (the whole file when shorter).
    pub head: Vec<u8>,
    /// Its last [`SESSION_FILE_TAIL_BYTES`] bytes, when the file is longer than its head.
    pub tail: Vec<u8>,
}

/// Why the driver could not read the session folder for `session/list` (ACP-26): the
/// editor's error says the folder could not be read, and shows this.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", dir.display())]
pub struct SessionFolderError {
    /// The folder.
    pub dir: PathBuf,
    /// The I/O error's kind.
    pub kind: std::io::ErrorKind,
    /// The I/O error's text.
    pub message: String,
}

impl SessionFolderError {
    /// The folder `dir` could not be read: `error` says why.
    pub fn io(dir: &Path, error: &std::io::Error) -> Self {
        SessionFolderError {
            dir: dir.to_path_buf(),
            kind: error.kind(),
            message: error.to_string(),
        }
    }
}

/// The most characters of a listed title (ACP-26): a longer one is cut at a character and
/// ends in `…`.
pub const MAX_LIST_TITLE_CHARS: usize = 80;

/// A line's `type`, read first; the rest of the line is skipped unread.
#[derive(Deserialize)]
struct Kind<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
}

/// The header, `{type:"session", id, cwd, title?, timestamp}` (every agent): what a listing
/// reads of it.
#[derive(Deserialize)]
struct Header {
    cwd: Option<PathBuf>,
    title: Option<String>,
}

/// omp's fixed-width first-line title slot (`type:"title"`) and its record of a title change
/// (`type:"title_change"`): the session's name, empty when it has none.
#[derive(Deserialize)]
struct TitleLine {
    title: Option<String>,
}

/// What one file says of its session.
struct Listed {
    id: String,
    cwd: PathBuf,
    title: Option<String>,
    modified_ms: Option<u64>,
}

/// Where a line read came from: the head's whole lines, the head's last line cut at
/// [`SESSION_FILE_HEAD_BYTES`] (read up to the cut), or the tail.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Head,
    HeadCut,
    Tail,
}

/// The lines of `file` as read: the head's (its last one closed where the bound cut it, when
/// the file goes on past it) then the tail's (its first one, which begins before the tail,
/// skipped).
fn lines(file: &SessionFile) -> impl Iterator<Item = (Part, Cow<'_, [u8]>)> + '_ {
    let mut head: Vec<&[u8]> = file.head.split(|b| *b == b'\n').collect();
    // The head's last piece: empty after a final `\n`, else a line the head's bound cut (or a
    // write torn by a crash).
    let last = head.pop().filter(|l| !l.is_empty());
    let last = last.and_then(|l| {
        if serde_json::from_slice::<IgnoredAny>(l).is_ok() {
            Some((Part::Head, Cow::Borrowed(l)))
        } else {
            closed_at_cut(l).map(|l| (Part::HeadCut, Cow::Owned(l)))
        }
    });
    head.into_iter()
        .map(|l| (Part::Head, Cow::Borrowed(l)))
        .chain(last)
        .chain(
            file.tail
                .split(|b| *b == b'\n')
                .skip(1)
                .map(|l| (Part::Tail, Cow::Borrowed(l))),
        )
}

/// The text of a user's message entry: its text blocks (or string) joined; `None` for
/// another line, another role or a message the agent injected (`synthetic`).
fn user_text(line: &[u8]) -> Option<String> {
    let SessionEntry::Message(entry) = serde_json::from_slice::<SessionEntry>(line).ok()? else {
        return None;
    };
    let AgentMessage::User(message) = entry.message else {
        return None;
    };
    if message.synthetic == Some(true) {
        return None;
    }
    Some(match message.content {
        MessageContent::Text(text) => text,
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join(" "),
    })
}

fn listed(file: &SessionFile) -> Option<Listed> {
    let id = file.name.strip_suffix(".jsonl")?;
    if !is_session_file_name(id) {
        return None;
    }
    let mut cwd = None;
    let mut header_title = None;
    let mut name: Option<String> = None;
    // The first user message of the head: whether there is one, and its text with the
    // part it was read from.
    let mut user = false;
    let mut first_text: Option<(String, Part)> = None;
    for (part, line) in lines(file) {
        let Ok(Kind { kind }) = serde_json::from_slice::<Kind>(&line) else {
            continue;
        };
        match &*kind {
            "session" if cwd.is_none() => {
                if let Ok(header) = serde_json::from_slice::<Header>(&line) {
                    cwd = header.cwd;
                    header_title = header.title;
                }
            }
            "title" | "title_change" => {
                if let Ok(TitleLine { title: Some(t) }) = serde_json::from_slice(&line) {
                    name = Some(t);
                }
            }
            "session_info" => {
                if let Ok(SessionEntry::SessionInfo(info)) = serde_json::from_slice(&line) {
                    // pi 1.6: an empty name clears the session's name.
                    name = Some(info.name.unwrap_or_default());
                }
            }
            "message" if part != Part::Tail && first_text.is_none() => {
                if let Some(text) = user_text(&line) {
                    user = true;
                    if !text.trim().is_empty() {
                        first_text = Some((text, part));
                    }
                }
            }
            _ => {}
        }
    }
    let cwd = cwd.filter(|c| c.is_absolute())?;
    // ACP-26: a session is listed once a user message is in it. A file longer than its head
    // holds more than a header (a session never prompted is a few hundred bytes): its first
    // user message begins past the head or was cut where it cannot be read.
    if !user && file.tail.is_empty() {
        return None;
    }
    let title = name
        .or(header_title)
        .and_then(|t| list_title(&t, Part::Head))
        .or_else(|| first_text.and_then(|(text, part)| list_title(&text, part)));
    Some(Listed {
        id: id.to_owned(),
        cwd,
        title,
        modified_ms: file.modified_ms,
    })
}

/// A title as the editor's list shows it (ACP-26): one line (runs of whitespace and control
/// characters made one space), credential-bearing uris withheld, at most
/// [`MAX_LIST_TITLE_CHARS`] characters (cut ones end in `…`); `None` when nothing is left.
/// Text cut at the head's bound loses its last word, which may be a part of one.
fn list_title(text: &str, part: Part) -> Option<String> {
    let mut words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect();
    if part == Part::HeadCut {
        words.pop();
    }
    let line = withhold_credential_uris(&words.join(" "));
    if line.is_empty() {
        return None;
    }
    if line.chars().count() <= MAX_LIST_TITLE_CHARS {
        return Some(line);
    }
    let mut cut: String = line.chars().take(MAX_LIST_TITLE_CHARS - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    Some(cut)
}

/// A JSON object cut at the head's bound, closed where it was cut: an incomplete UTF-8
/// character or escape dropped, the open string value ended, the open arrays and objects
/// closed. `None` when the cut is not inside a string value or after a whole value (a cut
/// key, number or literal): such a line is not read.
fn closed_at_cut(line: &[u8]) -> Option<Vec<u8>> {
    let valid = match std::str::from_utf8(line) {
        Ok(_) => line.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => return None,
    };
    let mut bytes = line[..valid].to_vec();
    let mut open = Vec::new();
    let mut in_string = false;
    let mut in_key = false;
    let mut escaped = false;
    // The last byte outside strings that is not whitespace.
    let mut last = 0u8;
    for &b in &bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    // A key ends as `:`, which stands in for it.
                    last = if in_key { b':' } else { b'"' };
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                in_key = open.last() == Some(&b'}') && matches!(last, b'{' | b',');
            }
            b'{' => open.push(b'}'),
            b'[' => open.push(b']'),
            b'}' | b']' if open.pop() != Some(b) => return None,
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            last = b;
        }
    }
    if open.is_empty() && !in_string {
        return None;
    }
    if in_string {
        if in_key {
            return None;
        }
        drop_partial_escape(&mut bytes);
        bytes.push(b'"');
    } else {
        match last {
            b'"' | b'}' | b']' | b'{' | b'[' => {}
            b',' => {
                let at = bytes.iter().rposition(|b| *b == b',')?;
                bytes.truncate(at);
            }
            _ => return None,
        }
    }
    bytes.extend(open.iter().rev());
    Some(bytes)
}

/// Drops an escape the cut left unfinished at the end of a string's bytes (`\`, `\u12`), and
/// a `\uD83D` whose low half was cut off.
fn drop_partial_escape(bytes: &mut Vec<u8>) {
    let backslashes = bytes.iter().rev().take_while(|b| **b == b'\\').count();
    if backslashes % 2 == 1 {
        bytes.pop();
        return;
    }
    let hex = bytes
        .iter()
        .rev()
        .take(4)
        .take_while(|b| b.is_ascii_hexdigit())
        .count();
    let escape_at = bytes.len().checked_sub(hex + 2);
    let is_escape = escape_at.is_some_and(|at| {
        bytes[at..].starts_with(b"\\u")
            && bytes[..at]
                .iter()
                .rev()
                .take_while(|b| **b == b'\\')
                .count()
                % 2
                == 0
    });
    if !is_escape {
        return;
    }
    let at = escape_at.unwrap_or_default();
    let high_half = hex == 4
        && matches!(
            bytes[at + 2..at + 4],
            [b'd' | b'D', b'8' | b'9' | b'a' | b'b' | b'A' | b'B']
        );
    if hex < 4 || high_half {
        bytes.truncate(at);
    }
}

/// The answer to one `session/list` from the folder's files.
pub(crate) fn answer(
    files: &[SessionFile],
    request: &ListSessionsRequest,
) -> Result<ListSessionsResponse, Error> {
    let start = match request.cursor.as_deref() {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix("offset:")
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| Error::invalid_params().data(json!("not a cursor of this list")))?,
    };
    let mut sessions: Vec<Listed> = files
        .iter()
        .filter_map(listed)
        .filter(|s| request.cwd.as_deref().is_none_or(|c| same_dir(c, &s.cwd)))
        .collect();
    sessions.sort_by(|a, b| b.modified_ms.cmp(&a.modified_ms).then(a.id.cmp(&b.id)));
    let end = (start + SESSIONS_PAGE).min(sessions.len());
    let page: Vec<SessionInfo> = sessions
        .get(start..end)
        .unwrap_or_default()
        .iter()
        .map(|s| {
            SessionInfo::new(SessionId::new(s.id.as_str()), s.cwd.clone())
                .title(s.title.clone())
                .updated_at(s.modified_ms.map(rfc3339))
        })
        .collect();
    let next = (end < sessions.len()).then(|| format!("offset:{end}"));
    Ok(ListSessionsResponse::new(page).next_cursor(next))
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a.components().eq(b.components())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, modified_ms: u64, head: &str, tail: &str) -> SessionFile {
        SessionFile {
            name: name.into(),
            modified_ms: Some(modified_ms),
            head: head.into(),
            tail: tail.into(),
        }
    }

    const USER: &str = "{\"type\":\"message\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n";

    #[test]
    fn acp_26_titles_come_from_the_slot_the_header_or_the_latest_change() {
        let header = &format!(
            "{{\"type\":\"session\",\"id\":\"a\",\"cwd\":\"/w\",\"title\":\"From header\"}}\n{USER}"
        );
        let slot = "{\"type\":\"title\",\"v\":1,\"title\":\"Slot\",\"pad\":\"  \"}\n";
        let files = [
            file("a.jsonl", 3, header, ""),
            file("b.jsonl", 2, &format!("{slot}{header}"), ""),
            file(
                "c.jsonl",
                1,
                header,
                "partial line\n{\"type\":\"session_info\",\"id\":\"i\",\"parentId\":\"m1\",\"timestamp\":\"t\",\"name\":\"Named\"}\n",
            ),
            file("d.jsonl", 4, "{\"type\":\"message\"}\n", ""),
            file("../e.jsonl", 5, header, ""),
        ];
        let list = answer(&files, &ListSessionsRequest::new()).unwrap();
        let got: Vec<(String, Option<String>)> = list
            .sessions
            .iter()
            .map(|s| (s.session_id.0.to_string(), s.title.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("a".to_owned(), Some("From header".to_owned())),
                ("b".to_owned(), Some("Slot".to_owned())),
                ("c".to_owned(), Some("Named".to_owned())),
            ]
        );
        assert_eq!(list.next_cursor, None);
    }

    #[test]
    fn acp_26_pages_and_filters_by_cwd() {
        let files: Vec<SessionFile> = (0..250)
            .map(|i| {
                let cwd = if i % 2 == 0 { "/even" } else { "/odd" };
                file(
                    &format!("s-{i:03}.jsonl"),
                    i,
                    &format!("{{\"type\":\"session\",\"cwd\":\"{cwd}\"}}\n{USER}"),
                    "",
                )
            })
            .collect();
        let first = answer(&files, &ListSessionsRequest::new()).unwrap();
        assert_eq!(first.sessions.len(), 100);
        assert_eq!(&*first.sessions[0].session_id.0, "s-249");
        let cursor = first.next_cursor.clone().unwrap();
        let second = answer(&files, &ListSessionsRequest::new().cursor(cursor)).unwrap();
        assert_eq!(&*second.sessions[0].session_id.0, "s-149");
        let third = answer(
            &files,
            &ListSessionsRequest::new().cursor(second.next_cursor.clone().unwrap()),
        )
        .unwrap();
        assert_eq!(third.sessions.len(), 50);
        assert_eq!(third.next_cursor, None);
        let even = answer(
            &files,
            &ListSessionsRequest::new().cwd(PathBuf::from("/even")),
        )
        .unwrap();
        assert!(even.sessions.iter().all(|s| s.cwd == Path::new("/even")));
        assert_eq!(even.sessions.len(), 100);
        assert!(answer(&files, &ListSessionsRequest::new().cursor("x".to_owned())).is_err());
    }

    #[test]
    fn acp_26_a_line_cut_at_the_head_is_closed_where_it_was_cut() {
        let closed =
            |line: &str| closed_at_cut(line.as_bytes()).map(|b| String::from_utf8(b).unwrap());
        assert_eq!(
            closed(r#"{"a":["x","hel"#).as_deref(),
            Some(r#"{"a":["x","hel"]}"#)
        );
        assert_eq!(
            closed(r#"{"a":{"b":1},"#).as_deref(),
            Some(r#"{"a":{"b":1}}"#)
        );
        assert_eq!(closed(r#"{"a":"x\"#).as_deref(), Some(r#"{"a":"x"}"#));
        assert_eq!(closed(r#"{"a":"x\\"#).as_deref(), Some(r#"{"a":"x\\"}"#));
        assert_eq!(closed(r#"{"a":"x\u00"#).as_deref(), Some(r#"{"a":"x"}"#));
        assert_eq!(closed(r#"{"a":"x\ud83d"#).as_deref(), Some(r#"{"a":"x"}"#));
        assert_eq!(
            closed(r#"{"a":"x\u00e9"#).as_deref(),
            Some(r#"{"a":"x\u00e9"}"#)
        );
        // A cut key, number or literal is not read.
        assert_eq!(closed(r#"{"a":"x","ke"#), None);
        assert_eq!(closed(r#"{"a":12"#), None);
        assert_eq!(closed(r#"{"a":tr"#), None);
        assert_eq!(closed(r#"{"a":"#), None);
        // A character whose bytes were cut is dropped.
        let e = "{\"a\":\"caf\u{e9}".as_bytes();
        assert_eq!(
            closed_at_cut(&e[..e.len() - 1]).unwrap(),
            b"{\"a\":\"caf\"}"
        );
        for line in [
            r#"{"a":["x","hel"#,
            r#"{"a":"x\u00"#,
            r#"{"a":{"b":[{"c":"d"#,
        ] {
            let fixed = closed_at_cut(line.as_bytes()).unwrap();
            assert!(
                serde_json::from_slice::<IgnoredAny>(&fixed).is_ok(),
                "{line}"
            );
        }
    }

    #[test]
    fn acp_26_every_cut_of_a_message_line_is_closed_whole_or_not_read() {
        let line = serde_json::json!({"type": "message", "id": "7b45ac07", "parentId": null,
            "timestamp": "2026-12-03T04:15:28.800Z", "message": {"role": "user", "content": [
                {"type": "text", "text": "caf\u{e9} \"q\" \\ tab\t \u{1f600} \u{1} end"},
                {"type": "image", "data": "aGk=", "mimeType": "image/png"}],
            "attribution": "user", "timestamp": 1_796_271_328_719u64}})
        .to_string();
        let bytes = line.as_bytes();
        let text_from = line.find("caf").unwrap();
        let text_to = line.find(" end").unwrap();
        for end in 1..bytes.len() {
            match closed_at_cut(&bytes[..end]) {
                Some(closed) => {
                    let closed = String::from_utf8(closed).unwrap();
                    assert!(
                        serde_json::from_str::<IgnoredAny>(&closed).is_ok(),
                        "{closed}"
                    );
                }
                // Every cut in the message's text is read.
                None => assert!(!(text_from..text_to).contains(&end), "{end}"),
            }
        }
    }

    #[test]
    fn acp_26_a_list_title_is_one_bounded_line() {
        assert_eq!(
            list_title("  Fix\n\tthe\r\nparser \u{7}now ", Part::Head).as_deref(),
            Some("Fix the parser now")
        );
        assert_eq!(list_title(" \n ", Part::Head), None);
        let long = "word ".repeat(40);
        let cut = list_title(&long, Part::Head).unwrap();
        assert_eq!(cut.chars().count(), MAX_LIST_TITLE_CHARS);
        assert!(cut.ends_with("word…"), "{cut}");
        assert_eq!(
            list_title("see https://u:secret@example.com/x please", Part::Head).as_deref(),
            Some("see [uri withheld] please")
        );
        // Cut by the head's bound: the last (maybe partial) word goes.
        assert_eq!(
            list_title("clone https://u:sec", Part::HeadCut).as_deref(),
            Some("clone")
        );
    }
}
