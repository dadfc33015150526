//! An agent's session folder, for what a host does to the session files in it besides the
//! agent: fork one (a copy under a fresh session id, in the agent's own naming scheme) and
//! delete one. STORE-01..03.
//!
//! Every file operation goes through the folder's descriptor, opened once with
//! `O_DIRECTORY|O_NOFOLLOW`; a file is named by a validated [`SessionFileName`] (one path
//! segment ending in `.jsonl`), never by a path from a caller, and no symlink is followed:
//! a fork's source is opened `O_NOFOLLOW` (and must be a regular file), its copy is created
//! `O_CREAT|O_EXCL|O_NOFOLLOW` with mode 0600, and a delete removes only a regular file.
//!
//! ```
//! use musewire_store::sessions::{SessionFileName, SessionFolder, SessionNaming};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let mut folder = SessionFolder::open_or_create(&dir.path().join("sessions")).unwrap();
//! std::fs::write(
//!     folder.path().join("session-1.jsonl"),
//!     "{\"type\":\"session\",\"version\":3,\"id\":\"session-1\",\"timestamp\":\"t\",\"cwd\":\"/w\"}\n",
//! )
//! .unwrap();
//! let source = SessionFileName::new("session-1.jsonl").unwrap();
//! let fork = folder.fork(&source, &SessionNaming::Numbered).unwrap();
//! assert_eq!((fork.name.as_str(), fork.session_id.as_str()), ("session-2.jsonl", "session-2"));
//! folder.delete(&source).unwrap();
//! ```

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use musewire_wire::{self as wire, SessionLine};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};

use crate::{open_dir_at, os_random, RandomSource, StoreError, FILE_MODE, NOT_WRITABLE_BY_OTHERS};

/// The extension of a session file.
pub const SESSION_FILE_EXTENSION: &str = ".jsonl";

/// The longest session file name, in bytes (a file name's limit on Linux).
pub const MAX_SESSION_FILE_NAME_BYTES: usize = 255;

/// The longest line a fork reads looking for the header (the header, or omp's title slot
/// before it): 1 MiB.
pub const MAX_HEADER_LINE_BYTES: usize = 1024 * 1024;

/// How many lines a fork reads looking for the header: omp 18 may write a fixed-width title
/// slot line before it; pi and the bundled agent write it first.
pub const HEADER_LINES: usize = 2;

/// The most `session-N` names a numbered fork tries.
const MAX_NUMBERED: u64 = 1_000_000;

/// The most fresh ids a timestamped fork draws before it gives up (a collision of UUIDv7s
/// is not expected once).
const MAX_DRAWS: usize = 16;

/// What a session folder operation failed on.
#[derive(Debug, thiserror::Error)]
pub enum SessionFileError {
    /// A name that is not one session file of the folder (STORE-01).
    #[error("{name:?} is not a session file name: {why}")]
    BadName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The folder could not be opened or made: a symlink, not a directory, not this user's,
    /// writable by others, or an I/O error.
    #[error(transparent)]
    Folder(#[from] StoreError),
    /// No such file in the folder.
    #[error("{path}: no such session file")]
    NotFound {
        /// Its path.
        path: PathBuf,
    },
    /// A symlink, directory or anything but a regular file: never read, never removed.
    #[error("{path}: a symlink or not a regular file; session files are never followed")]
    NotAFile {
        /// Its path.
        path: PathBuf,
    },
    /// None of the first [`HEADER_LINES`] lines of a fork's source is a session header
    /// (`{type:"session", id, timestamp, cwd}`, within [`MAX_HEADER_LINE_BYTES`]).
    #[error("{path}: no session header in its first lines")]
    NoHeader {
        /// The source's path.
        path: PathBuf,
    },
    /// Every name a fork tried was taken.
    #[error("{folder}: no free name for a new session file")]
    NoFreeName {
        /// The folder.
        folder: PathBuf,
    },
    /// Drawing a fresh session id failed.
    #[error("drawing a session id: {0}")]
    Random(io::Error),
    /// An I/O error.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// On what.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl SessionFileError {
    fn io(what: &'static str, path: &Path, source: impl Into<io::Error>) -> Self {
        SessionFileError::Io {
            what,
            path: path.to_owned(),
            source: source.into(),
        }
    }
}

/// The name of one session file of a folder: one path segment (no `/`, no NUL), not hidden
/// (no leading `.`, so neither `.` nor `..`), at most [`MAX_SESSION_FILE_NAME_BYTES`] bytes,
/// ending in `.jsonl` after a non-empty stem (STORE-01). That it names a regular file is
/// checked when it is used, through the folder's descriptor.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionFileName(String);

impl SessionFileName {
    /// Checks `name` (STORE-01).
    pub fn new(name: &str) -> Result<Self, SessionFileError> {
        let bad = |why| {
            Err(SessionFileError::BadName {
                name: name.to_owned(),
                why,
            })
        };
        if name.contains('/') {
            return bad("a path, not a file name");
        }
        if name.contains('\0') {
            return bad("a NUL byte");
        }
        if name.starts_with('.') {
            return bad("a hidden name");
        }
        if name.len() > MAX_SESSION_FILE_NAME_BYTES {
            return bad("longer than a file name can be");
        }
        match name.strip_suffix(SESSION_FILE_EXTENSION) {
            Some(stem) if !stem.is_empty() => Ok(SessionFileName(name.to_owned())),
            _ => bad("not a .jsonl file"),
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name without `.jsonl`.
    pub fn stem(&self) -> &str {
        &self.0[..self.0.len() - SESSION_FILE_EXTENSION.len()]
    }
}

impl std::fmt::Display for SessionFileName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// How the agent that owns the folder names a new session's file, and so a fork's (STORE-02).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionNaming {
    /// The bundled agent's (`musewire agent --session-dir`, AGENT-05): `session-N.jsonl`, the
    /// id `session-N`, N the first from 1 whose file does not exist.
    Numbered,
    /// omp's and pi's: `<timestamp>_<id>.jsonl`, the id a fresh UUIDv7 of `unix_ms`, the
    /// timestamp its ISO 8601 form with `:` and `.` made `-`
    /// (`2026-05-01T10-00-00-000Z_019de2…jsonl`).
    Timestamped {
        /// The fork's time, in milliseconds since the Unix epoch.
        unix_ms: u64,
    },
}

/// A session file made by [`SessionFolder::fork`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkedSession {
    /// Its name in the folder.
    pub name: SessionFileName,
    /// Its path (the folder's path joined with the name).
    pub path: PathBuf,
    /// The session id its header now holds.
    pub session_id: String,
}

/// An agent's session folder, opened once: see the [module docs](self).
pub struct SessionFolder {
    path: PathBuf,
    fd: OwnedFd,
    random: RandomSource,
}

impl std::fmt::Debug for SessionFolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionFolder")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl SessionFolder {
    /// Opens the folder at `path` without following a symlink (STORE-01); a missing one is
    /// [`SessionFileError::NotFound`]. It must be a directory owned by this user that no one
    /// else can write in (omp's own folders are a `mkdir`'s 0755).
    pub fn open(path: &Path) -> Result<Self, SessionFileError> {
        Self::open_at(path, false)
    }

    /// As [`open`](Self::open), the folder made first (mode 0700) when it is missing.
    pub fn open_or_create(path: &Path) -> Result<Self, SessionFileError> {
        Self::open_at(path, true)
    }

    fn open_at(path: &Path, create: bool) -> Result<Self, SessionFileError> {
        let fd =
            open_dir_at(CWD, path, path, create, NOT_WRITABLE_BY_OTHERS)?.ok_or_else(|| {
                SessionFileError::NotFound {
                    path: path.to_owned(),
                }
            })?;
        Ok(SessionFolder {
            path: path.to_owned(),
            fd,
            random: Box::new(os_random),
        })
    }

    /// Draws the random part of fresh ids from `random` instead of the OS (for tests).
    pub fn with_random(self, random: RandomSource) -> Self {
        SessionFolder { random, ..self }
    }

    /// The folder's path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Copies the session file `source` to a new file of the folder named as `naming` says,
    /// under a fresh session id (STORE-02): the source is opened without following a symlink
    /// and must be a regular file whose header is among its first [`HEADER_LINES`] lines; the
    /// copy is created exclusively, mode 0600, relative to the folder's descriptor. It is
    /// the source byte for byte but for the header, whose `id` becomes the new id and whose
    /// `parentSession` becomes the source's path (its other members kept, as omp and pi fork:
    /// the entries keep their ids). A copy that fails part way is removed.
    pub fn fork(
        &mut self,
        source: &SessionFileName,
        naming: &SessionNaming,
    ) -> Result<ForkedSession, SessionFileError> {
        let source_path = self.path.join(source.as_str());
        let file = self.open_regular(source, &source_path)?;
        let mut reader = BufReader::new(file);
        let (before, header) = read_header(&mut reader, &source_path)?;
        let (name, session_id, mut copy) = self.create_new(naming)?;
        let path = self.path.join(name.as_str());
        let written = (|| {
            copy.write_all(&before)?;
            let mut header = header;
            header.id.clone_from(&session_id);
            header.parent_session = Some(source_path.to_string_lossy().into_owned());
            let mut line = wire::to_vec(&SessionLine::Header(header)).map_err(io::Error::from)?;
            line.push(b'\n');
            copy.write_all(&line)?;
            io::copy(&mut reader, &mut copy)?;
            copy.flush()
        })();
        if let Err(e) = written {
            // The half-made copy is ours: it goes.
            let _ = rustix::fs::unlinkat(&self.fd, name.as_str(), AtFlags::empty());
            return Err(SessionFileError::io("copy to", &path, e));
        }
        Ok(ForkedSession {
            name,
            path,
            session_id,
        })
    }

    /// Removes the session file `name` of the folder (STORE-03): only a regular file, looked
    /// at without following a symlink; a symlink (even to a session file), a directory or
    /// anything else is refused and left as it is.
    pub fn delete(&self, name: &SessionFileName) -> Result<(), SessionFileError> {
        let path = self.path.join(name.as_str());
        let stat = rustix::fs::statat(&self.fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| self.missing_or(e, "stat", &path))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(SessionFileError::NotAFile { path });
        }
        // Should a symlink replace it in between, `unlinkat` removes the link itself: it
        // never follows one.
        rustix::fs::unlinkat(&self.fd, name.as_str(), AtFlags::empty())
            .map_err(|e| self.missing_or(e, "remove", &path))
    }

    /// Opens `name` for reading, without following a symlink (nor blocking on a FIFO), and
    /// checks it is a regular file.
    fn open_regular(&self, name: &SessionFileName, path: &Path) -> Result<File, SessionFileError> {
        let fd = rustix::fs::openat(
            &self.fd,
            name.as_str(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            rustix::io::Errno::LOOP => SessionFileError::NotAFile {
                path: path.to_owned(),
            },
            e => self.missing_or(e, "open", path),
        })?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| SessionFileError::io("stat", path, e))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(SessionFileError::NotAFile {
                path: path.to_owned(),
            });
        }
        Ok(File::from(fd))
    }

    fn missing_or(
        &self,
        e: rustix::io::Errno,
        what: &'static str,
        path: &Path,
    ) -> SessionFileError {
        if e == rustix::io::Errno::NOENT {
            SessionFileError::NotFound {
                path: path.to_owned(),
            }
        } else {
            SessionFileError::io(what, path, e)
        }
    }

    /// Creates a new file named as `naming` says: its name, the session id, the file.
    fn create_new(
        &mut self,
        naming: &SessionNaming,
    ) -> Result<(SessionFileName, String, File), SessionFileError> {
        match *naming {
            SessionNaming::Numbered => {
                for n in 1..=MAX_NUMBERED {
                    let id = format!("session-{n}");
                    if let Some(made) = self.try_create(&id, format!("{id}.jsonl"))? {
                        return Ok(made);
                    }
                }
            }
            SessionNaming::Timestamped { unix_ms } => {
                let stamp = iso_8601(unix_ms).replace([':', '.'], "-");
                for _ in 0..MAX_DRAWS {
                    let id = self.uuid_v7(unix_ms)?;
                    if let Some(made) = self.try_create(&id, format!("{stamp}_{id}.jsonl"))? {
                        return Ok(made);
                    }
                }
            }
        }
        Err(SessionFileError::NoFreeName {
            folder: self.path.clone(),
        })
    }

    /// Creates `name` exclusively (0600, no symlink followed); `None` when it exists.
    fn try_create(
        &self,
        id: &str,
        name: String,
    ) -> Result<Option<(SessionFileName, String, File)>, SessionFileError> {
        let name = SessionFileName::new(&name)?;
        match rustix::fs::openat(
            &self.fd,
            name.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(FILE_MODE),
        ) {
            Ok(fd) => Ok(Some((name, id.to_owned(), File::from(fd)))),
            Err(rustix::io::Errno::EXIST) => Ok(None),
            Err(e) => Err(SessionFileError::io(
                "create",
                &self.path.join(name.as_str()),
                e,
            )),
        }
    }

    /// A UUIDv7 of `unix_ms` (RFC 9562), its random bits drawn from the folder's source.
    fn uuid_v7(&mut self, unix_ms: u64) -> Result<String, SessionFileError> {
        let a = (self.random)().map_err(SessionFileError::Random)?;
        let b = (self.random)().map_err(SessionFileError::Random)?;
        let mut bytes = [0u8; 16];
        bytes[..6].copy_from_slice(&unix_ms.to_be_bytes()[2..]);
        bytes[6..14].copy_from_slice(&a);
        bytes[14..].copy_from_slice(&b[..2]);
        bytes[6] = 0x70 | (bytes[6] & 0x0F);
        bytes[8] = 0x80 | (bytes[8] & 0x3F);
        let hex = crate::hex(&bytes);
        Ok(format!(
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        ))
    }
}

/// Reads up to [`HEADER_LINES`] lines for the header: the bytes of the lines before it, and
/// the header.
fn read_header(
    reader: &mut impl BufRead,
    path: &Path,
) -> Result<(Vec<u8>, musewire_wire::SessionHeader), SessionFileError> {
    let mut before = Vec::new();
    for _ in 0..HEADER_LINES {
        let mut line = Vec::new();
        (&mut *reader)
            .take(MAX_HEADER_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| SessionFileError::io("read", path, e))?;
        if line.last() != Some(&b'\n') {
            // Past the cap, or the end of the file: no whole line.
            break;
        }
        let parsed = wire::parse_value(&line).and_then(serde_json::from_value::<SessionLine>);
        match parsed {
            Ok(SessionLine::Header(header)) => return Ok((before, header)),
            _ => before.extend_from_slice(&line),
        }
    }
    Err(SessionFileError::NoHeader {
        path: path.to_owned(),
    })
}

/// `unix_ms` as `YYYY-MM-DDTHH:MM:SS.mmmZ`, as JavaScript's `toISOString` writes it (the
/// core's [`rfc3339`](musewire_core::formats::rfc3339), which `session/list` dates with).
pub fn iso_8601(unix_ms: u64) -> String {
    musewire_core::formats::rfc3339(unix_ms)
}
