//! `session/list` (ACP-26): the sessions of the session folder, from the files the driver
//! read ([`Action::ReadSessionFolder`](super::Action::ReadSessionFolder) →
//! [`Input::SessionFolder`](super::Input::SessionFolder)): each file's id, cwd and title from
//! its own lines, its `updatedAt` from its modification time; newest first, filtered by cwd,
//! paged by an opaque cursor.

use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{
    Error, ListSessionsRequest, ListSessionsResponse, SessionId, SessionInfo,
};
use serde::Deserialize;
use serde_json::json;

use super::is_session_file_name;
use super::map::{title, withhold_credential_uris};

/// How much of the start of each session file the driver reads: the header (and omp's
/// title slot before it).
pub const SESSION_FILE_HEAD_BYTES: usize = 16 * 1024;

/// How much of the end of each session file the driver reads: the latest title changes.
pub const SESSION_FILE_TAIL_BYTES: usize = 64 * 1024;

/// The most session files one listing reads (the newest by modification time).
pub const MAX_SESSION_FILES: usize = 2000;

/// Sessions per `session/list` page.
pub const SESSIONS_PAGE: usize = 100;

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

/// The lines of a session file this listing reads; every other line is `Other`.
#[derive(Deserialize)]
#[serde(tag = "type")]
enum Entry {
    /// The header: `{type:"session", id, cwd, title?, timestamp}` (every agent).
    #[serde(rename = "session")]
    Header {
        cwd: Option<PathBuf>,
        title: Option<String>,
    },
    /// omp's fixed-width first-line title slot.
    #[serde(rename = "title")]
    TitleSlot { title: Option<String> },
    /// omp's record of a title change.
    #[serde(rename = "title_change")]
    TitleChange { title: Option<String> },
    /// pi's session name entry.
    #[serde(rename = "session_info")]
    Info { name: Option<String> },
    #[serde(other)]
    Other,
}

/// What one file says of its session.
struct Listed {
    id: String,
    cwd: PathBuf,
    title: Option<String>,
    modified_ms: Option<u64>,
}

fn lines(bytes: &[u8], skip_first: bool) -> impl Iterator<Item = Entry> + '_ {
    bytes
        .split(|b| *b == b'\n')
        .skip(usize::from(skip_first))
        .filter_map(|line| serde_json::from_slice::<Entry>(line).ok())
}

fn listed(file: &SessionFile) -> Option<Listed> {
    let id = file.name.strip_suffix(".jsonl")?;
    if !is_session_file_name(id) {
        return None;
    }
    let mut cwd = None;
    let mut header_title = None;
    let mut title = None;
    for entry in lines(&file.head, false).chain(lines(&file.tail, true)) {
        match entry {
            Entry::Header { cwd: c, title: t } if cwd.is_none() => {
                cwd = c;
                header_title = t;
            }
            Entry::TitleSlot { title: t } | Entry::TitleChange { title: t } => title = t.or(title),
            Entry::Info { name } => title = name.or(title),
            _ => {}
        }
    }
    let cwd = cwd.filter(|c| c.is_absolute())?;
    let title = title
        .or(header_title)
        .filter(|t| !t.trim().is_empty())
        .map(|t| title_text(&t));
    Some(Listed {
        id: id.to_owned(),
        cwd,
        title,
        modified_ms: file.modified_ms,
    })
}

/// A title as the editor sees it: credential-bearing uris withheld, one bounded line.
fn title_text(text: &str) -> String {
    title(&withhold_credential_uris(text), None, None)
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

/// Milliseconds since the Unix epoch as RFC 3339 in UTC (`2026-12-01T13:55:00.000Z`): the
/// form omp writes its timestamps in, and `updatedAt`'s (ACP-26).
pub fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days, for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
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

    #[test]
    fn acp_26_rfc3339_is_utc_with_milliseconds() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn acp_26_titles_come_from_the_slot_the_header_or_the_latest_change() {
        let header =
            "{\"type\":\"session\",\"id\":\"a\",\"cwd\":\"/w\",\"title\":\"From header\"}\n";
        let slot = "{\"type\":\"title\",\"v\":1,\"title\":\"Slot\",\"pad\":\"  \"}\n";
        let files = [
            file("a.jsonl", 3, header, ""),
            file("b.jsonl", 2, &format!("{slot}{header}"), ""),
            file(
                "c.jsonl",
                1,
                header,
                "partial line\n{\"type\":\"session_info\",\"name\":\"Named\"}\n",
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
                    &format!("{{\"type\":\"session\",\"cwd\":\"{cwd}\"}}\n"),
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
}
