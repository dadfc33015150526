//! The agent's I/O seam: the file work [`App`](crate::App) hands out and
//! the answers the loop hands back, so that the App itself never touches a disk (its only
//! other I/O are the shell commands it runs).
//!
//! The App queues [`IoRequest`]s; whoever drives it takes them with
//! [`App::poll_io`](crate::App::poll_io), performs each (the [`Disk`](crate::disk::Disk) does it
//! for real; a test may answer by hand) and hands the answer back with
//! [`App::handle_io`](crate::App::handle_io), in the order taken. The stdio loop
//! ([`crate::stdio`]) performs every request as soon as the App has handed it out, before the
//! next stdout line is taken: a session entry is on disk before any frame written after it.
//!
//! Each kind of work is an [`IoWork`] variant answered by an [`IoOutcome`]; work of another
//! kind is added as a variant of each, performed beside these. A spill write or a
//! stored-output read, for instance: `IoWork::SpillWrite(musewire_core::spill::SpillWrite)`
//! answered by an `IoOutcome` carrying the store's answer, handed out by the App where the
//! core agent asks for the write, and performed by the [`Disk`](crate::disk::Disk) with a
//! `musewire_store::LocalStore` it owns.

use std::path::PathBuf;

/// The id of one I/O request of an App: a counter, unique for the App's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IoId(pub u64);

/// One piece of file work for the loop to perform, and its id for the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoRequest {
    /// The id to answer with.
    pub id: IoId,
    /// What to do.
    pub work: IoWork,
}

/// The file work the App hands out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IoWork {
    /// The `read` tool: a window of a local file's lines (answered by [`IoOutcome::Read`]).
    /// The path is as the model gave it (relative to the working directory, `file://`
    /// stripped).
    ReadFile {
        /// The file to read; a relative path is the working directory's.
        path: PathBuf,
        /// Which lines, and how many bytes at most.
        window: crate::read::ReadWindow,
    },
    /// The `write` tool: the file made (its missing folders too) or replaced with `bytes`,
    /// never through a symlink at the file (answered by [`IoOutcome::Changed`] or
    /// [`IoOutcome::Failed`]). A relative path is the working directory's.
    WriteFile {
        /// The file.
        path: PathBuf,
        /// Its new content.
        bytes: Vec<u8>,
    },
    /// The `edit` tool: in a regular file (not a symlink, at most [`MAX_EDIT_FILE_BYTES`]),
    /// each `(old, new)` in turn replaces the one place `old` occurs (answered by
    /// [`IoOutcome::Changed`], or [`IoOutcome::Failed`] when an `old` occurs nowhere or more
    /// than once, and the file is left as it was).
    EditFile {
        /// The file.
        path: PathBuf,
        /// The replacements, in order.
        edits: Vec<(String, String)>,
    },
    /// Creates the session file `name` in the session folder, exclusively (it must not exist),
    /// mode 0600, never through a symlink, holding `bytes` (the header line). Answered by
    /// [`IoOutcome::Done`], [`IoOutcome::Exists`] or [`IoOutcome::Failed`].
    CreateSession {
        /// The file's name in the session folder (`<sessionId>.jsonl`).
        name: String,
        /// Its first bytes: the header line.
        bytes: Vec<u8>,
    },
    /// Appends `bytes` (whole JSONL lines) to the session file `name`, never through a
    /// symlink, in one write. Answered by [`IoOutcome::Done`] or [`IoOutcome::Failed`].
    AppendSession {
        /// The file's name in the session folder.
        name: String,
        /// The lines, each ending in `\n`.
        bytes: Vec<u8>,
    },
    /// Flushes the session file `name` to its device (`fdatasync`), never through a symlink:
    /// done at each run's end, so a finished turn survives a crash of the machine, not only
    /// of the agent. Answered by [`IoOutcome::Done`] or [`IoOutcome::Failed`].
    SyncSession {
        /// The file's name in the session folder.
        name: String,
    },
    /// Reads the session file `name` whole (a regular file, not a symlink, at most
    /// [`MAX_SESSION_FILE_BYTES`]). Answered by [`IoOutcome::Loaded`] or
    /// [`IoOutcome::Failed`].
    LoadSession {
        /// The file's name in the session folder.
        name: String,
    },
    /// Cuts the session file `name` to `len` bytes (its torn last line dropped), never
    /// through a symlink. Answered by [`IoOutcome::Done`] or [`IoOutcome::Failed`].
    TruncateSession {
        /// The file's name in the session folder.
        name: String,
        /// The length to cut it to: the end of its last whole line, in bytes.
        len: u64,
    },
}

/// The answer to an [`IoWork`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IoOutcome {
    /// The work was done (a create, an append, a truncation).
    Done,
    /// A [`IoWork::CreateSession`]: the file exists already.
    Exists,
    /// A [`IoWork::ReadFile`]: what the window holds.
    Read(crate::read::FileWindow),
    /// A [`IoWork::LoadSession`]: the file's bytes.
    Loaded(Vec<u8>),
    /// A [`IoWork::WriteFile`] or [`IoWork::EditFile`]: the bytes the file now holds.
    Changed(u64),
    /// The work failed: the reason, for a person.
    Failed(String),
}

/// The largest file [`IoWork::EditFile`] edits (16 MiB).
pub const MAX_EDIT_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The largest session file [`IoWork::LoadSession`] reads (256 MiB): a bigger one is refused
/// rather than held in memory.
pub const MAX_SESSION_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// What an I/O request the App handed out is for (the App's side of the seam).
#[derive(Debug)]
pub(crate) enum IoFor {
    /// The `read` tool's read of `path` (the tool call waits on `Pending::Io`).
    Read {
        path: String,
        window: crate::read::ReadWindow,
    },
    /// The `write` or `edit` tool's change of `path`.
    Change { path: String },
    /// Making the file of the session of this epoch.
    Create { epoch: u64 },
    /// An append to (or the cut of) the file of the session of this epoch.
    Write { epoch: u64 },
    /// `switch_session`'s load of the file `name`, for `request`.
    Load {
        request: musewire_core::agent::CommandId,
        name: String,
    },
}

/// The file work handed out and not yet answered, in order.
#[derive(Debug, Default)]
pub(crate) struct IoQueue {
    /// Handed out, not yet taken by the driver.
    queue: std::collections::VecDeque<IoRequest>,
    /// Taken or not, not yet answered.
    waiting: std::collections::BTreeMap<IoId, IoFor>,
    next: u64,
}

impl IoQueue {
    /// Hands out `work`, for `purpose`; returns its id.
    pub(crate) fn request(&mut self, work: IoWork, purpose: IoFor) -> IoId {
        self.next += 1;
        let id = IoId(self.next);
        self.queue.push_back(IoRequest { id, work });
        self.waiting.insert(id, purpose);
        id
    }

    /// The next request for the driver.
    pub(crate) fn pop(&mut self) -> Option<IoRequest> {
        self.queue.pop_front()
    }

    /// What the answer to `id` is for (`None`: not a request handed out, or answered).
    pub(crate) fn answered(&mut self, id: IoId) -> Option<IoFor> {
        self.waiting.remove(&id)
    }
}
