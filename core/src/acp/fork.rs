//! `session/fork` (ACP-31) and `session/delete` (ACP-32): what the bridge asks of the session
//! folder besides the agents.
//!
//! The bridge is sans-IO, so the folder's files are changed by the driver: a fork is an
//! [`Action::ForkSessionFile`] (the driver copies the session file under a fresh id in the
//! agent's naming, no symlink followed, 0600 in the 0700 folder: the store's STORE-02), a
//! delete an [`Action::DeleteSessionFile`] (the store's STORE-03: only a regular file of the
//! folder); each comes back as [`Input::SessionFile`] under its [`FileTicket`].
//!
//! A fork's copy is then opened as `session/resume` opens a stored session (ACP-25): a new
//! agent in the fork's cwd switched to the copy, its options asked, nothing replayed (the
//! ACP fork is for new turns on the original's context, such as a summary, and the editor
//! holds the original's thread already); the answer carries the fork's id and options as
//! `session/new`'s does. The fork's turns go to its own file and agent, so they never reach
//! the original. A delete of a session that is open closes it first (its agent stopped,
//! ACP-12) and removes its file once that agent has exited, so that nothing writes it after.

use super::*;
use agent_client_protocol_schema::v1::{
    DeleteSessionRequest, DeleteSessionResponse, ForkSessionRequest, McpServer,
};
use std::collections::BTreeSet;

/// The most session-file requests (forks and deletes) waiting on the driver at once; one
/// more is refused (`-32600`).
pub const MAX_WAITING_FILE_REQUESTS: usize = 64;

/// Which of the bridge's session-file requests an [`Input::SessionFile`] answers: the driver
/// hands back the ticket of the [`Action::ForkSessionFile`] or [`Action::DeleteSessionFile`]
/// it did. The number means nothing beyond that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct FileTicket(pub u64);

/// How the agent that owns the session folder names a new session's file, and so the name
/// a fork's copy gets (STORE-02).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ForkNaming {
    /// The bundled agent's `session-N.jsonl`, the first free N.
    Numbered,
    /// omp's and pi's `<ISO timestamp>_<UUIDv7>.jsonl`, at the driver's wall-clock time
    /// (the bridge has none). Also used for any other agent, whose naming is not known.
    Timestamped,
}

impl ForkNaming {
    /// The naming of the agent `kind` runs.
    pub fn of(kind: AgentKind) -> ForkNaming {
        match kind {
            AgentKind::Bundled => ForkNaming::Numbered,
            AgentKind::Omp | AgentKind::Pi | AgentKind::Other => ForkNaming::Timestamped,
        }
    }
}

/// What the driver did with a session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionFileDone {
    /// The fork's copy was made: its file name in the folder (`<id>.jsonl`).
    Forked {
        /// The copy's file name.
        name: String,
    },
    /// The file was removed.
    Deleted,
}

/// Why the driver could not do what a session-file action asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFileFailure {
    /// What kind of failure, which decides the editor's error.
    pub kind: SessionFileFailureKind,
    /// What failed, for the editor's error data.
    pub message: String,
}

/// The kinds of [`SessionFileFailure`] the editor tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionFileFailureKind {
    /// No such file in the folder: the session is not found.
    NotFound,
    /// A symlink, a directory or anything but a regular file: never followed, never removed.
    NotAFile,
    /// Anything else (the folder, the header, a name, I/O).
    Other,
}

/// A session-file request waiting on the driver. Its `Debug` shows no MCP server's
/// environment or headers (credentials).
enum FileRequest {
    Fork {
        editor: RequestId,
        source: SessionId,
        cwd: PathBuf,
        mcp_servers: Vec<McpServer>,
    },
    Delete {
        editor: RequestId,
        session_id: SessionId,
    },
}

impl std::fmt::Debug for FileRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileRequest::Fork {
                editor,
                source,
                cwd,
                mcp_servers,
            } => f
                .debug_struct("Fork")
                .field("editor", editor)
                .field("source", source)
                .field("cwd", cwd)
                .field("mcp_servers", &mcp_servers.len())
                .finish(),
            FileRequest::Delete { editor, session_id } => f
                .debug_struct("Delete")
                .field("editor", editor)
                .field("session_id", session_id)
                .finish(),
        }
    }
}

/// The bridge's session-file requests (ACP-31, ACP-32).
#[derive(Debug, Default)]
pub(super) struct SessionFiles {
    next: u64,
    /// Waiting on the driver (or, for a delete, on an agent's exit first).
    waiting: BTreeMap<FileTicket, FileRequest>,
    /// Deletes held until the agent of the session they close has exited.
    after_exit: BTreeMap<AgentKey, Vec<FileTicket>>,
    /// Sessions opening as forks: answered with a `ForkSessionResponse`.
    forks: BTreeSet<AgentKey>,
    /// The ids deleted, newest last, at most [`MAX_DELETED_REMEMBERED`]: a load, resume or
    /// fork of one is `session not found` (an agent switched to a missing file may make it
    /// anew), until a new session takes the id again.
    deleted: VecDeque<Arc<str>>,
}

/// How many deleted session ids the bridge remembers (ACP-32).
pub(crate) const MAX_DELETED_REMEMBERED: usize = 1024;

impl SessionFiles {
    fn ticket(&mut self) -> FileTicket {
        self.next += 1;
        FileTicket(self.next)
    }

    fn full(&self) -> bool {
        self.waiting.len() >= MAX_WAITING_FILE_REQUESTS
    }

    /// Whether `id` was deleted (ACP-32).
    pub(super) fn is_deleted(&self, id: &str) -> bool {
        self.deleted.iter().any(|d| &**d == id)
    }

    /// A session opened under `id`: it is no longer a deleted one.
    pub(super) fn opened(&mut self, id: &str) {
        self.deleted.retain(|d| &**d != id);
    }

    fn deleted(&mut self, id: Arc<str>) {
        self.opened(&id);
        if self.deleted.len() >= MAX_DELETED_REMEMBERED {
            self.deleted.pop_front();
        }
        self.deleted.push_back(id);
    }

    /// Whether the session `key` opens as a fork, forgotten once asked.
    pub(super) fn take_fork(&mut self, key: AgentKey) -> bool {
        self.forks.remove(&key)
    }
}

fn file_name(session_id: &SessionId) -> String {
    format!("{}.jsonl", session_id.0)
}

fn too_many() -> Error {
    Error::invalid_request().data(json!("too many session forks and deletes waiting"))
}

impl Bridge {
    /// `session/fork` (ACP-31): checked as a load is (a session folder, an absolute cwd, an
    /// id that names a file of the folder); the driver copies the file, and the copy opens.
    pub(super) fn fork(
        &mut self,
        id: &RequestId,
        request: ForkSessionRequest,
    ) -> Result<(), Error> {
        self.check_stored(&request.session_id, &request.cwd, "fork")?;
        let Some(dir) = self.config.session_dir.clone() else {
            return Ok(());
        };
        if self.files.full() {
            return Err(too_many());
        }
        let ticket = self.files.ticket();
        let source = file_name(&request.session_id);
        self.files.waiting.insert(
            ticket,
            FileRequest::Fork {
                editor: id.clone(),
                source: request.session_id,
                cwd: request.cwd,
                mcp_servers: request.mcp_servers,
            },
        );
        self.actions.push_back(Action::ForkSessionFile {
            ticket,
            dir,
            source,
            naming: ForkNaming::of(self.config.agent),
        });
        Ok(())
    }

    /// `session/delete` (ACP-32): an id that names a file of the folder; an open session is
    /// closed first (its turn `cancelled`, its agent stopped) and its file removed once that
    /// agent has exited; the driver removes the file.
    pub(super) fn delete(
        &mut self,
        now: Instant,
        id: &RequestId,
        request: DeleteSessionRequest,
    ) -> Result<(), Error> {
        if self.config.session_dir.is_none() {
            return Err(Error::method_not_found()
                .data(json!("this agent keeps no sessions the bridge can delete")));
        }
        if !is_session_file_name(&request.session_id.0) {
            return Err(Error::session_not_found(request.session_id));
        }
        if self.files.full() {
            return Err(too_many());
        }
        let ticket = self.files.ticket();
        let open = self.keys.get(&*request.session_id.0).copied();
        self.files.waiting.insert(
            ticket,
            FileRequest::Delete {
                editor: id.clone(),
                session_id: request.session_id,
            },
        );
        match open {
            Some(key) => {
                self.end_session(now, key, "the session was deleted");
                if self.sessions.get(&key).is_some_and(|s| !s.exited) {
                    self.files.after_exit.entry(key).or_default().push(ticket);
                } else {
                    self.delete_file(ticket);
                }
            }
            None => self.delete_file(ticket),
        }
        Ok(())
    }

    /// ACP-32: the delete `ticket` asks the driver to remove its file.
    fn delete_file(&mut self, ticket: FileTicket) {
        let (Some(dir), Some(FileRequest::Delete { session_id, .. })) = (
            self.config.session_dir.clone(),
            self.files.waiting.get(&ticket),
        ) else {
            return;
        };
        let name = file_name(session_id);
        self.actions
            .push_back(Action::DeleteSessionFile { ticket, dir, name });
    }

    /// ACP-32: the agent of session `key` exited: the deletes held for it go to the driver.
    pub(super) fn deletes_after_exit(&mut self, key: AgentKey) {
        for ticket in self.files.after_exit.remove(&key).unwrap_or_default() {
            self.delete_file(ticket);
        }
    }

    /// The driver did (or could not do) the session-file request `ticket`.
    pub(super) fn session_file(
        &mut self,
        now: Instant,
        ticket: FileTicket,
        outcome: Result<SessionFileDone, SessionFileFailure>,
    ) {
        let Some(request) = self.files.waiting.remove(&ticket) else {
            return;
        };
        match (request, outcome) {
            (
                FileRequest::Fork {
                    editor,
                    source,
                    cwd,
                    mcp_servers,
                },
                Ok(SessionFileDone::Forked { name }),
            ) => {
                let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
                if !is_session_file_name(stem) || self.keys.contains_key(stem) {
                    let error = Error::internal_error()
                        .data(json!(format!("the fork's file {name:?} cannot be opened")));
                    self.editor(rpc::error_line(&editor, &error));
                    return;
                }
                // ACP-31: the copy opens as a resume does, answered as a fork; ACP-35: in
                // the original's mode.
                let fork = SessionId::new(stem);
                self.modes.remember(stem, self.modes.recall(&source.0));
                let key = self.switch_to(now, &editor, &fork, cwd, mcp_servers, SwitchFor::Resume);
                if let Some(key) = key {
                    self.files.forks.insert(key);
                }
            }
            (FileRequest::Delete { editor, session_id }, Ok(SessionFileDone::Deleted)) => {
                // ACP-35: a session deleted is in no mode.
                self.modes
                    .remember(&session_id.0, mode::PermissionMode::Ask);
                self.files.deleted(session_id.0);
                self.editor(rpc::result_line(&editor, &DeleteSessionResponse::new()));
            }
            (
                FileRequest::Fork {
                    editor,
                    source: session_id,
                    ..
                }
                | FileRequest::Delete { editor, session_id },
                outcome,
            ) => {
                let error = match outcome {
                    Err(SessionFileFailure {
                        kind: SessionFileFailureKind::NotFound,
                        message,
                    }) => Error::session_not_found(session_id).data(json!(message)),
                    Err(SessionFileFailure {
                        kind: SessionFileFailureKind::NotAFile,
                        message,
                    }) => Error::invalid_params().data(json!(message)),
                    Err(SessionFileFailure { message, .. }) => {
                        Error::internal_error().data(json!(message))
                    }
                    Ok(_) => Error::internal_error()
                        .data(json!("the driver did another session-file request")),
                };
                self.editor(rpc::error_line(&editor, &error));
            }
        }
    }
}
