//! ACP-38, ACP-39 (ours): the agent's edits reach the editor's review. omp, pi and the
//! bundled agent change files on disk themselves; an editor that offers
//! `clientCapabilities.fs.writeTextFile` (Zed builds its review, "Keep / Reject", from the
//! `fs/write_text_file` requests it gets) is sent each file a `write` or `edit` call changed,
//! with its content on disk after the call, once the call has ended and before its card
//! completes.
//!
//! The bridge is sans-IO, so the driver reads the file: an [`Action::ReadEditedFile`] (at
//! most [`MAX_REVIEW_FILE_BYTES`], no symlink followed beneath the session's cwd, a regular
//! file only) handed back as [`Input::EditedFile`] under its [`ReviewTicket`]. The bridge
//! checks it is text (UTF-8, no NUL) and asks the editor `fs/write_text_file {sessionId,
//! path, content}`. The call's final card update (ACP-19) is held until every file of the
//! call is answered, refused, skipped or past [`EDITOR_WRITE_BUDGET`]; the answer to the
//! prompt waits for the held cards too. What is not sent, and a write the editor refuses or
//! leaves unanswered, is a line in the turn (ACP-11's form); the bridge never writes the
//! file itself, so the file on disk stays as the agent wrote it.

use super::card::edited_files;
use super::outbox::{Drain, Outbox};
use super::*;
use agent_client_protocol_schema::v1::WriteTextFileRequest;
use std::path::Path;
use std::time::Duration;

/// The largest file sent to the editor's review (ACP-39): 1 MiB. A larger one is not sent.
pub const MAX_REVIEW_FILE_BYTES: u64 = 1 << 20;

/// How long a call's card waits for its files to be read and written by the editor
/// (ACP-39), from the call's end: 10 s. Past it the card completes and the turn says which
/// files the editor did not confirm.
pub const EDITOR_WRITE_BUDGET: Duration = Duration::from_secs(10);

/// The most files on their way to the editor at once, across the sessions (ACP-39): a file
/// past it is not sent, and the turn says so.
pub(crate) const MAX_WAITING_EDITS: usize = 64;

/// The ACP method an edited file goes to the editor with (ACP-38).
pub const WRITE_METHOD: &str =
    agent_client_protocol_schema::v1::CLIENT_METHOD_NAMES.fs_write_text_file;

/// The label of the line a file not sent to the editor leaves in the turn (ACP-39).
pub const NOT_SENT_LABEL: &str = "edit not in the editor's review";

/// The label of the line a write the editor refused leaves in the turn (ACP-39).
pub const REFUSED_LABEL: &str = "the editor refused the edit";

/// The label of the line a write the editor did not answer in time leaves in the turn
/// (ACP-39).
pub const UNCONFIRMED_LABEL: &str = "the editor did not confirm the edit";

/// What the refused and unconfirmed lines end with (ACP-39).
const KEPT: &str = "the file on disk is as the agent wrote it";

/// Which file read an [`Input::EditedFile`] answers: the driver hands back the ticket of the
/// [`Action::ReadEditedFile`] it did. The number means nothing beyond that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct ReviewTicket(pub u64);

/// Why the driver did not read an edited file (ACP-39).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditedFileFailure {
    /// It is not there (anymore).
    NotFound,
    /// It, or a folder on its way beneath the session's cwd, is a symlink: never followed.
    Symlink,
    /// It, or a folder on its way, is not what it should be (a directory, a FIFO, a device).
    NotAFile,
    /// It is larger than [`MAX_REVIEW_FILE_BYTES`]: its size, as far as known.
    TooLarge {
        /// Its size in bytes (at least the bound plus one).
        size: u64,
    },
    /// Its path does not lie beneath the session's cwd.
    Outside,
    /// Anything else: what failed, for the user.
    Other(String),
}

/// Why a file is not sent to the editor, as the turn says it (ACP-39).
fn not_sent_why(failure: &EditedFileFailure) -> String {
    match failure {
        EditedFileFailure::NotFound => "it is no longer there".into(),
        EditedFileFailure::Symlink => "it is a symlink or reached through one".into(),
        EditedFileFailure::NotAFile => "it is not a regular file".into(),
        EditedFileFailure::TooLarge { .. } => over_bound(),
        EditedFileFailure::Outside => "it is outside the session's folder".into(),
        EditedFileFailure::Other(error) => format!("it could not be read: {error}"),
    }
}

fn over_bound() -> String {
    format!("it is over {} KiB", MAX_REVIEW_FILE_BYTES / 1024)
}

/// A finished call's files for the editor (ACP-38), before any is asked for.
#[derive(Debug)]
pub(super) struct Edited {
    /// The call.
    call: String,
    /// Its files beneath the session's cwd: read, then sent.
    inside: Vec<PathBuf>,
    /// Its files outside the session's cwd: not sent (ACP-39).
    outside: Vec<PathBuf>,
}

/// Whether the editor offered `fs.writeTextFile` in `initialize` (ACP-38): only then do an
/// agent's edited files go to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EditorWrites {
    Offered,
    NotOffered,
}

/// What becomes of a session's cards held for the editor's writes when nothing waits for
/// those any more (ACP-38).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HeldCards {
    /// Its agent is gone: they complete now, before the turn's error.
    Complete,
    /// The session ended: they go with it.
    Drop,
}

/// The files a client event's finished `write` or `edit` call changed, when the editor
/// offers `fs.writeTextFile` (`writes`) and the call did not fail (ACP-38). Read before the
/// mapper sees the event (it forgets the call's arguments then); the call's final update is
/// then held when any of its files is to be read.
pub(super) fn edited(
    session: &mut AcpSession,
    event: &ClientEvent,
    writes: EditorWrites,
) -> Option<Edited> {
    let ClientEvent::Frame {
        frame: AgentFrame::Event(SessionEvent::ToolExecutionEnd(end)),
    } = event
    else {
        return None;
    };
    if writes == EditorWrites::NotOffered || end.is_error == Some(true) {
        return None;
    }
    let details = end.result.as_ref().and_then(|r| r.get("details"));
    let cwd = session.mapper.cwd.as_deref().map(normalized);
    let args = session.mapper.card_args(&end.tool_call_id);
    let files = edited_files(&end.tool_name, args, details, cwd.as_deref());
    if files.is_empty() {
        return None;
    }
    let (inside, outside) = files
        .into_iter()
        .partition(|path| cwd.as_deref().is_some_and(|cwd| is_beneath(path, cwd)));
    let edited = Edited {
        call: end.tool_call_id.clone(),
        inside,
        outside,
    };
    if !edited.inside.is_empty() {
        session.mapper.hold_final(&edited.call);
    }
    Some(edited)
}

/// A path with `.` and `..` resolved lexically (as the cards' paths are, ACP-17).
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether `path` (normalized) names something strictly beneath `cwd` (normalized).
fn is_beneath(path: &Path, cwd: &Path) -> bool {
    path != cwd && path.starts_with(cwd)
}

/// One file on its way to the editor.
#[derive(Debug)]
struct Edit {
    key: AgentKey,
    /// The call whose card waits for it.
    call: String,
    path: PathBuf,
    /// Asked of the editor (else still being read by the driver).
    asked: bool,
}

/// The files on their way to the editor, by ticket (ACP-38).
#[derive(Debug, Default)]
pub(super) struct Edits {
    next: u64,
    waiting: BTreeMap<ReviewTicket, Edit>,
}

impl Edits {
    /// Whether a file of `key`'s call `call` is still on its way.
    fn waits_for(&self, key: AgentKey, call: &str) -> bool {
        self.waiting
            .values()
            .any(|e| e.key == key && e.call == call)
    }

    /// Session `key`'s files are no longer waited for: a later answer is dropped.
    pub(super) fn forget(&mut self, key: AgentKey) {
        self.waiting.retain(|_, e| e.key != key);
    }
}

/// A session's cards held for their files (ACP-38): each call's deadline, and whether the
/// turn's end waits for them.
#[derive(Debug, Default)]
pub(super) struct Held {
    calls: BTreeMap<String, Instant>,
    /// The turn ended while cards were held: its usage is asked, and the prompt answered,
    /// once none is (ACP-02 after ACP-38).
    end_waits: bool,
}

impl Held {
    /// The earliest deadline of a held card.
    pub(super) fn timeout(&self) -> Option<Instant> {
        self.calls.values().min().copied()
    }

    /// Whether any card is held.
    pub(super) fn is_busy(&self) -> bool {
        !self.calls.is_empty()
    }
}

/// The editor's id of the write of `ticket`.
fn request_id(ticket: ReviewTicket) -> RequestId {
    super::methods::EditorReply::Write(ticket).id()
}

/// The text of a file's bytes, or why it is not text (ACP-39: UTF-8 without NUL).
fn text_of(bytes: Vec<u8>) -> Result<String, String> {
    if bytes.len() as u64 > MAX_REVIEW_FILE_BYTES {
        return Err(over_bound());
    }
    if bytes.contains(&0) {
        return Err("it is not text (it holds a NUL byte)".into());
    }
    String::from_utf8(bytes).map_err(|_| "it is not text (it is not UTF-8)".into())
}

/// What an editor's error answer says (ACP-39): its `message`, then its `data` (a string, or
/// the string `details` or `message` of an object, else the data as JSON) in parentheses.
fn refusal(error: &Value) -> String {
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(str::to_owned)
    };
    let message = text(error.get("message"));
    let data = error.get("data").filter(|d| !d.is_null()).map(|data| {
        text(Some(data))
            .or_else(|| text(data.get("details")))
            .or_else(|| text(data.get("message")))
            .unwrap_or_else(|| data.to_string())
    });
    match (message, data) {
        (Some(message), Some(data)) => format!("{message} ({data})"),
        (Some(text), None) | (None, Some(text)) => text,
        (None, None) => "an error without a message".into(),
    }
}

impl Bridge {
    /// Whether the editor offered `fs.writeTextFile` in `initialize` (ACP-38).
    pub(super) fn writes_offered(&self) -> EditorWrites {
        let offered = self
            .client_capabilities
            .as_ref()
            .is_some_and(|c| c.fs.write_text_file);
        if offered {
            EditorWrites::Offered
        } else {
            EditorWrites::NotOffered
        }
    }

    /// ACP-38: a finished call's files: those outside the cwd said not sent, the others
    /// asked of the driver; the call's card is released at once when none is read.
    pub(super) fn review_begin(&mut self, now: Instant, key: AgentKey, edited: Edited) {
        let Edited {
            call,
            inside,
            outside,
        } = edited;
        for path in &outside {
            let why = not_sent_why(&EditedFileFailure::Outside);
            self.review_line(key, NOT_SENT_LABEL, path, &why);
        }
        let Some(cwd) = self
            .sessions
            .get(&key)
            .and_then(|s| s.mapper.cwd.as_deref())
            .map(normalized)
        else {
            return;
        };
        let mut asked = false;
        for path in inside {
            if self.edits.waiting.len() >= MAX_WAITING_EDITS {
                let why = format!("{MAX_WAITING_EDITS} edits wait for the editor already");
                self.review_line(key, NOT_SENT_LABEL, &path, &why);
                continue;
            }
            self.edits.next += 1;
            let ticket = ReviewTicket(self.edits.next);
            self.actions.push_back(Action::ReadEditedFile {
                ticket,
                cwd: cwd.clone(),
                path: path.clone(),
            });
            self.edits.waiting.insert(
                ticket,
                Edit {
                    key,
                    call: call.clone(),
                    path,
                    asked: false,
                },
            );
            asked = true;
        }
        match self.sessions.get_mut(&key) {
            Some(session) if asked => {
                session.review.calls.insert(call, now + EDITOR_WRITE_BUDGET);
            }
            _ => self.on_session(now, key, |session, out| {
                session.release_card(now, &call, out)
            }),
        }
    }

    /// [`Input::EditedFile`]: the driver read a file (or could not): its text goes to the
    /// editor, or the turn says why it does not (ACP-39).
    pub(super) fn edited_file(
        &mut self,
        now: Instant,
        ticket: ReviewTicket,
        outcome: Result<Vec<u8>, EditedFileFailure>,
    ) {
        let Some(edit) = self.edits.waiting.get_mut(&ticket).filter(|e| !e.asked) else {
            return;
        };
        let (key, path) = (edit.key, edit.path.clone());
        let text = outcome
            .map_err(|failure| not_sent_why(&failure))
            .and_then(text_of);
        let acp_id = self.sessions.get(&key).map(|s| s.acp_id.clone());
        match (text, acp_id) {
            (Ok(content), Some(acp_id)) => {
                edit.asked = true;
                let request = WriteTextFileRequest::new(acp_id, path, content);
                self.editor(rpc::request_line(
                    &request_id(ticket),
                    WRITE_METHOD,
                    &request,
                ));
            }
            (Err(why), _) => {
                self.review_line(key, NOT_SENT_LABEL, &path, &why);
                self.edit_done(now, ticket);
            }
            (Ok(_), None) => self.edit_done(now, ticket),
        }
    }

    /// The editor's answer to our write of `ticket` (ACP-38, ACP-39). A refusal (an error
    /// answer) is said in the turn; any result is success; an answer to a write no longer
    /// waited for is dropped.
    pub(super) fn write_answered(
        &mut self,
        now: Instant,
        ticket: ReviewTicket,
        outcome: &Result<Value, Value>,
    ) {
        let Some(edit) = self.edits.waiting.get(&ticket).filter(|e| e.asked) else {
            return;
        };
        if let Err(error) = outcome {
            let why = format!("{}; {KEPT}", map::withhold_credential_uris(&refusal(error)));
            let (key, path) = (edit.key, edit.path.clone());
            self.review_line(key, REFUSED_LABEL, &path, &why);
        }
        self.edit_done(now, ticket);
    }

    /// ACP-39: a held card past its budget completes; each of its files still on its way is
    /// said unconfirmed (a late answer is dropped).
    pub(super) fn expire_review(&mut self, now: Instant, key: AgentKey) {
        let Some(session) = self.sessions.get(&key) else {
            return;
        };
        let late: Vec<String> = session
            .review
            .calls
            .iter()
            .filter(|(_, deadline)| **deadline <= now)
            .map(|(call, _)| call.clone())
            .collect();
        let budget = EDITOR_WRITE_BUDGET.as_secs();
        for call in late {
            let tickets: Vec<ReviewTicket> = self
                .edits
                .waiting
                .iter()
                .filter(|(_, e)| e.key == key && e.call == call)
                .map(|(t, _)| *t)
                .collect();
            for ticket in tickets {
                let Some(edit) = self.edits.waiting.remove(&ticket) else {
                    continue;
                };
                let why = if edit.asked {
                    format!("no answer within {budget} s; {KEPT}")
                } else {
                    format!("it was not read within {budget} s; {KEPT}")
                };
                self.review_line(key, UNCONFIRMED_LABEL, &edit.path, &why);
            }
            self.on_session(now, key, |session, out| {
                session.release_card(now, &call, out)
            });
        }
    }

    /// The session's agent is gone (its held cards complete now: [`HeldCards::Complete`]) or
    /// the session ended (they are dropped with it): nothing waits for the editor's writes
    /// any more; a later answer is dropped.
    pub(super) fn review_forget(&mut self, key: AgentKey, cards: HeldCards) {
        self.edits.forget(key);
        if let Some((session, mut out)) = self.session_out(key) {
            session.review_forget(cards, &mut out);
        }
    }

    /// A file's way ended: its call's card is released when it was the last.
    fn edit_done(&mut self, now: Instant, ticket: ReviewTicket) {
        let Some(edit) = self.edits.waiting.remove(&ticket) else {
            return;
        };
        if !self.edits.waits_for(edit.key, &edit.call) {
            self.on_session(now, edit.key, |session, out| {
                session.release_card(now, &edit.call, out)
            });
        }
    }

    /// `[LABEL: PATH: WHY]` in the session's turn (ACP-39).
    fn review_line(&mut self, key: AgentKey, label: &str, path: &Path, why: &str) {
        let line = notices::line(label, &format!("{}: {why}", path.display()));
        if let Some((session, mut out)) = self.session_out(key) {
            session.say(&line, &mut out);
        }
    }
}

impl AcpSession {
    /// The turn ended (ACP-02): its usage is asked now, or once no card is held (ACP-38).
    pub(super) fn turn_ended(&mut self, now: Instant, out: &mut Outbox<'_>) -> Drain {
        if self.review.is_busy() {
            self.review.end_waits = true;
            return Drain::NotNeeded;
        }
        self.ask_turn_stats(now, out)
    }

    /// The session's held cards are forgotten; with [`HeldCards::Complete`] the editor sees
    /// them complete.
    pub(super) fn review_forget(&mut self, cards: HeldCards, out: &mut Outbox<'_>) {
        self.review = Held::default();
        let held = self.mapper.release_all();
        if cards == HeldCards::Complete {
            for update in held {
                out.update(self, update);
            }
        }
    }

    /// The call's held card completes; the turn's end goes on once no card is held.
    fn release_card(&mut self, now: Instant, call: &str, out: &mut Outbox<'_>) -> Drain {
        self.review.calls.remove(call);
        if let Some(update) = self.mapper.release_final(call) {
            out.update(self, update);
        }
        if self.review.is_busy() || !std::mem::take(&mut self.review.end_waits) {
            return Drain::NotNeeded;
        }
        self.ask_turn_stats(now, out)
    }
}
