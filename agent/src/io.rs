//! The agent's I/O seam (issue 10 item 5): the file work [`App`](crate::App) hands out and
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
//! kind (a spill write, a stored-output read) is added as a variant of each, performed beside
//! these.

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
        /// The file.
        path: PathBuf,
        /// Which lines, and how many bytes at most.
        window: crate::read::ReadWindow,
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
        /// Its new length.
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
    /// The work failed: the reason, for a person.
    Failed(String),
}

/// The largest session file [`IoWork::LoadSession`] reads (256 MiB): a bigger one is refused
/// rather than held in memory.
pub const MAX_SESSION_FILE_BYTES: u64 = 256 * 1024 * 1024;
