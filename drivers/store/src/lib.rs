//! # musewire-store
//!
//! The local spill store (SPILL-06), written once for both drivers: it performs the
//! [`SpillWrite`] actions of [`musewire_core::spill`] and the positioned reads of
//! [`musewire_core::output`], with real file I/O. The randomness the core never draws lives
//! here too. A host session's local files, the transcript of a recording and this store, are
//! one [`SessionFiles`]. An agent's session folder, for the host's forks and deletes of its
//! session files, is a [`sessions::SessionFolder`] (STORE-01..03).
//!
//! ## Layout
//!
//! ```text
//! <root>/session-<first 16 hex of sha256(sessionId)>/<16 random hex>-<safe name>
//! ```
//!
//! * `<root>` is the configured path (made with mode 0700 when missing), or a private
//!   directory `musewire-spill-<16 random hex>` made in the temp dir on first use, mode 0700.
//! * The session directory is made with mode 0700. A session directory that already exists
//!   must be a directory (not a symlink) owned by this user and closed to group and others
//!   (mode `& 0o077 == 0`); a configured root that already exists must be a directory owned
//!   by this user that no one else can write in (mode `& 0o022 == 0`: a plain `mkdir`'s 0755
//!   is fine, since everything inside is 0700 and 0600); otherwise the save fails.
//! * The leaf is created exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`), mode 0600, relative to the
//!   session directory's descriptor, itself opened relative to the root's with
//!   `O_DIRECTORY|O_NOFOLLOW`: a symlink planted at the root, the session directory or the leaf
//!   makes the save fail, and nothing is written anywhere else. There is no check-then-use: each
//!   step goes through a descriptor already opened.
//! * Each save draws a new random prefix: two saves never share a path. A save that fails
//!   while writing removes its file.
//!
//! The leaf's random prefix is also the output's reference: [`OutputRef`] `out-<16 hex>`.
//! [`LocalStore::read`] finds the file by it (in its index, or by listing the session
//! directory after a restart), never by a path from a caller. The store checks the session
//! (and, for outputs it saved in this process, the item); the full session/item association
//! against history is the reader's [`musewire_core::output::OutputCatalog`].
//!
//! ```
//! use musewire_core::spill::{SpillOwner, SpillSource, SpillWrite};
//! use musewire_store::LocalStore;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let mut store = LocalStore::new(Some(dir.path().join("spill")));
//! let saved = store.save(&SpillWrite {
//!     owner: SpillOwner::new("abc"),
//!     source: SpillSource::new("bash", "call-1", "Bash"),
//!     suggested_name: "bash-call-1.txt".into(),
//!     content: "hello".into(),
//! }).unwrap();
//! assert!(saved.spill_ref.locator.contains("/spill/session-ba7816bf8f01cfea/"));
//! assert!(saved.spill_ref.locator.ends_with("-bash-call-1.txt"));
//! assert_eq!(std::fs::read_to_string(&saved.spill_ref.locator).unwrap(), "hello");
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use musewire_core::client::ClientConfig;
use musewire_core::output::{check_offset, ReadRequest, MAX_READ_BYTES, TEXT_MEDIA_TYPE};
use musewire_core::spill::{SaveFailure, SpillRef, SpillWrite};
use musewire_wire::output::{Availability, OutputError, OutputRef, StoredOutput};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};
use sha2::{Digest, Sha256};

/// The retrieval hint of the local store: its locators are paths.
pub const RETRIEVAL_HINT: &str =
    "Use read with offset/limit, or grep this path to search within it.";

/// The name a suggested name that can't be made safe becomes.
pub const DEFAULT_NAME: &str = "output.txt";

/// The most bytes of a safe name (a leaf is then at most 17 + this, well under 255).
pub const MAX_NAME_BYTES: usize = 200;

/// The prefix of a temp root's name.
pub const TEMP_ROOT_PREFIX: &str = "musewire-spill-";

const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;

/// What a store operation failed on.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A directory of the layout is a symlink or not a directory (never followed).
    #[error("{path}: a symlink or not a directory; the spill store never follows one")]
    NotADirectory {
        /// The directory's path.
        path: PathBuf,
    },
    /// A directory is not this user's, or is open to others.
    #[error("{path}: not owned by this user, or open to group or others")]
    NotPrivate {
        /// The directory's path.
        path: PathBuf,
    },
    /// Something is already where a new file or directory was to be made (a planted symlink,
    /// for one).
    #[error("{path} already exists")]
    Exists {
        /// The path that was to be made new.
        path: PathBuf,
    },
    /// A stored output is a symlink or not a regular file.
    #[error("{path}: not a regular file")]
    NotAFile {
        /// The stored output's path, under the store's root.
        path: PathBuf,
    },
    /// An I/O error.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or directory it was done on.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// No random bytes.
    #[error("no random bytes: {0}")]
    Random(io::Error),
    /// A read failed before any I/O (OUT-07): an unknown, foreign or expired reference, or
    /// an offset out of range.
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl StoreError {
    /// The error as a read's typed error (OUT-07): an I/O failure or an unsafe file is
    /// [`OutputError::Unavailable`].
    pub fn output_error(&self) -> OutputError {
        match self {
            StoreError::Output(error) => error.clone(),
            _ => OutputError::Unavailable,
        }
    }

    fn io(what: &'static str, path: &Path, source: impl Into<io::Error>) -> Self {
        StoreError::Io {
            what,
            path: path.to_owned(),
            source: source.into(),
        }
    }
}

/// Writes a new file's content. The store's own writes the whole of it; a test can give a
/// store one that fails like a full disk ([`LocalStore::with_writer`]).
pub trait LeafWriter: Send {
    /// Writes all of `content` to `file`, a new empty file.
    fn write_leaf(&mut self, file: &mut File, content: &[u8]) -> io::Result<()>;
}

/// The store's own [`LeafWriter`]: `write_all`.
#[derive(Debug, Default, Clone, Copy)]
pub struct DirectWriter;

impl LeafWriter for DirectWriter {
    fn write_leaf(&mut self, file: &mut File, content: &[u8]) -> io::Result<()> {
        file.write_all(content)
    }
}

/// Where random bytes come from: the OS ([`os_random`]), or a test's sequence.
pub type RandomSource = Box<dyn FnMut() -> io::Result<[u8; 8]> + Send>;

/// 8 random bytes from the OS.
pub fn os_random() -> io::Result<[u8; 8]> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(bytes)
}

pub use musewire_core::output::ReadBytes;
pub use musewire_core::spill::Saved;

mod session;
pub mod sessions;
pub use session::{create_private, SessionFiles};

/// Where the root is.
#[derive(Debug, Clone)]
enum RootChoice {
    Configured(PathBuf),
    Temp(PathBuf),
}

/// An opened root.
#[derive(Debug)]
struct Root {
    path: PathBuf,
    fd: OwnedFd,
}

/// What the store knows of a file it issued.
#[derive(Debug, Clone)]
struct Issued {
    session_id: String,
    item_id: Option<String>,
    leaf: String,
}

/// The local spill store (SPILL-06).
pub struct LocalStore {
    choice: RootChoice,
    root: Option<Root>,
    writer: Box<dyn LeafWriter>,
    random: RandomSource,
    issued: HashMap<OutputRef, Issued>,
}

impl std::fmt::Debug for LocalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalStore")
            .field("choice", &self.choice)
            .field("root", &self.root)
            .field("issued", &self.issued.len())
            .finish_non_exhaustive()
    }
}

impl LocalStore {
    /// A store at `root`, or, with `None`, in a private directory made in the temp dir on
    /// first use. Nothing is touched until the first save or read.
    pub fn new(root: Option<PathBuf>) -> Self {
        match root {
            Some(root) => Self::with_choice(RootChoice::Configured(
                std::path::absolute(&root).unwrap_or(root),
            )),
            None => Self::in_temp_dir(std::env::temp_dir()),
        }
    }

    /// The store a host's driver keeps for `config`'s spill policy of host tool results
    /// (SPILL-03, SPILL-06): at [`ClientConfig::spill_dir`] (a private temp directory when
    /// `None`), or none when the policy has no store.
    pub fn for_client(config: &ClientConfig) -> Option<Self> {
        config
            .spill
            .has_store
            .then(|| Self::new(config.spill_dir.clone()))
    }

    /// Answers a core's spill write (SPILL-03, SPILL-05): the store's record, or the failure
    /// with the store's message, as [`Input::SpillDone`](musewire_core::client::Input) takes
    /// it. A driver with no store (`None`) answers [`SaveFailure::no_store`].
    pub fn spill(store: Option<&mut Self>, write: &SpillWrite) -> Result<Saved, SaveFailure> {
        match store {
            Some(store) => store
                .save(write)
                .map_err(|error| SaveFailure::new(error.to_string())),
            None => Err(SaveFailure::no_store()),
        }
    }

    /// A store whose private root is made, on first use, inside `parent` (instead of the
    /// temp dir).
    pub fn in_temp_dir(parent: PathBuf) -> Self {
        Self::with_choice(RootChoice::Temp(
            std::path::absolute(&parent).unwrap_or(parent),
        ))
    }

    fn with_choice(choice: RootChoice) -> Self {
        LocalStore {
            choice,
            root: None,
            writer: Box::new(DirectWriter),
            random: Box::new(os_random),
            issued: HashMap::new(),
        }
    }

    /// The same store writing through `writer`.
    pub fn with_writer(mut self, writer: Box<dyn LeafWriter>) -> Self {
        self.writer = writer;
        self
    }

    /// The same store drawing its random prefixes from `random`.
    pub fn with_random(mut self, random: RandomSource) -> Self {
        self.random = random;
        self
    }

    /// The root's path, once made or opened.
    pub fn root_path(&self) -> Option<&Path> {
        self.root.as_ref().map(|r| r.path.as_path())
    }

    /// Saves a spill (SPILL-06): a new private file under the owner's session directory.
    pub fn save(&mut self, write: &SpillWrite) -> Result<Saved, StoreError> {
        self.open_root(true)?;
        let Some(root) = &self.root else {
            return Err(StoreError::io(
                "open",
                Path::new(""),
                io::ErrorKind::NotFound,
            ));
        };
        let random = (self.random)().map_err(StoreError::Random)?;
        let session_name = session_dir_name(&write.owner.session_id);
        let session_path = root.path.join(&session_name);
        let session = open_dir_at(&root.fd, &session_name, &session_path, true, PRIVATE)?
            .ok_or_else(|| StoreError::io("open", &session_path, io::ErrorKind::NotFound))?;
        let output_ref = OutputRef::from_random(random);
        let leaf = format!("{}-{}", output_ref.hex(), safe_name(&write.suggested_name));
        let leaf_path = session_path.join(&leaf);
        let fd = rustix::fs::openat(
            &session,
            leaf.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(FILE_MODE),
        )
        .map_err(|e| match e {
            rustix::io::Errno::EXIST => StoreError::Exists {
                path: leaf_path.clone(),
            },
            e => StoreError::io("create", &leaf_path, e),
        })?;
        let written = rustix::fs::fchmod(&fd, Mode::from_raw_mode(FILE_MODE))
            .map_err(io::Error::from)
            .and_then(|()| {
                let mut file = File::from(fd);
                self.writer.write_leaf(&mut file, write.content.as_bytes())
            });
        if let Err(error) = written {
            // Leave no partial file behind (the name is ours: made with O_EXCL just now).
            let _ = rustix::fs::unlinkat(&session, leaf.as_str(), AtFlags::empty());
            return Err(StoreError::io("write", &leaf_path, error));
        }
        let bytes = write.content.len() as u64;
        self.issued.insert(
            output_ref.clone(),
            Issued {
                session_id: write.owner.session_id.clone(),
                item_id: Some(write.source.call_id.clone()),
                leaf,
            },
        );
        Ok(Saved {
            spill_ref: SpillRef {
                locator: leaf_path.to_string_lossy().into_owned(),
                bytes,
                retrieval_hint: RETRIEVAL_HINT.to_owned(),
            },
            output: StoredOutput {
                session_id: write.owner.session_id.clone(),
                item_id: write.source.call_id.clone(),
                output_ref,
                byte_len: bytes,
                media_type: TEXT_MEDIA_TYPE.to_owned(),
                availability: Availability::Available,
            },
        })
    }

    /// Reads a range of a stored output with a positioned read (OUT-04, OUT-07). The
    /// reference is looked up among those this store issued, or, after a restart, in the
    /// session's directory; one of another session or item is foreign; one whose file is
    /// gone has expired. Nothing is read on an error.
    pub fn read(&mut self, request: &ReadRequest) -> Result<ReadBytes, StoreError> {
        let issued = self.issued.get(&request.output_ref).cloned();
        if let Some(issued) = &issued {
            let other_item = issued
                .item_id
                .as_ref()
                .is_some_and(|item| *item != request.item_id);
            if issued.session_id != request.session_id || other_item {
                return Err(OutputError::Foreign.into());
            }
        }
        let gone = || -> StoreError {
            if issued.is_some() {
                OutputError::Expired.into()
            } else {
                OutputError::Unknown.into()
            }
        };
        self.open_root(false)?;
        let Some(root) = &self.root else {
            return Err(gone());
        };
        let session_name = session_dir_name(&request.session_id);
        let session_path = root.path.join(&session_name);
        let Some(session) = open_dir_at(&root.fd, &session_name, &session_path, false, PRIVATE)?
        else {
            return Err(gone());
        };
        let leaf = match &issued {
            Some(issued) => issued.leaf.clone(),
            None => match find_leaf(&session, &session_path, &request.output_ref)? {
                Some(leaf) => leaf,
                None => return Err(OutputError::Unknown.into()),
            },
        };
        let leaf_path = session_path.join(&leaf);
        let fd = match rustix::fs::openat(
            &session,
            leaf.as_str(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Err(gone()),
            Err(rustix::io::Errno::LOOP) => return Err(StoreError::NotAFile { path: leaf_path }),
            Err(e) => return Err(StoreError::io("open", &leaf_path, e)),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| StoreError::io("stat", &leaf_path, e))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(StoreError::NotAFile { path: leaf_path });
        }
        if issued.is_none() {
            self.issued.insert(
                request.output_ref.clone(),
                Issued {
                    session_id: request.session_id.clone(),
                    item_id: None,
                    leaf: leaf.clone(),
                },
            );
        }
        let total_len = u64::try_from(stat.st_size).unwrap_or(0);
        check_offset(request.offset_bytes, total_len)?;
        let len = request
            .length_bytes
            .min(MAX_READ_BYTES)
            .min(total_len - request.offset_bytes);
        let mut bytes = vec![0u8; len as usize];
        File::from(fd)
            .read_exact_at(&mut bytes, request.offset_bytes)
            .map_err(|e| StoreError::io("read", &leaf_path, e))?;
        Ok(ReadBytes { bytes, total_len })
    }

    /// Opens the root (made first when `create`); left unopened when it doesn't exist and
    /// `create` is false.
    fn open_root(&mut self, create: bool) -> Result<(), StoreError> {
        if self.root.is_none() {
            let root = match &self.choice {
                RootChoice::Configured(path) => {
                    open_dir_at(CWD, path, path, create, NOT_WRITABLE_BY_OTHERS)?.map(|fd| Root {
                        path: path.clone(),
                        fd,
                    })
                }
                RootChoice::Temp(parent) if create => {
                    let random = (self.random)().map_err(StoreError::Random)?;
                    let name = format!("{TEMP_ROOT_PREFIX}{}", hex(&random));
                    let path = parent.join(name);
                    let fd = make_dir_at(CWD, &path, &path)?;
                    Some(Root { path, fd })
                }
                RootChoice::Temp(_) => None,
            };
            self.root = root;
        }
        Ok(())
    }
}

/// `session-<first 16 hex of sha256(sessionId)>`.
pub fn session_dir_name(session_id: &str) -> String {
    let digest = Sha256::digest(session_id.as_bytes());
    format!("session-{}", hex(&digest[..8]))
}

/// A suggested name reduced to one safe path segment: separators (`/`, `\`), `~` and control
/// characters become `_`; `.`, `..` and the empty name become [`DEFAULT_NAME`]; the name is
/// cut to [`MAX_NAME_BYTES`] on a character boundary.
pub fn safe_name(suggested: &str) -> String {
    let mut name = String::with_capacity(suggested.len().min(MAX_NAME_BYTES));
    for c in suggested.chars() {
        let c = if matches!(c, '/' | '\\' | '~') || c.is_control() {
            '_'
        } else {
            c
        };
        if name.len() + c.len_utf8() > MAX_NAME_BYTES {
            break;
        }
        name.push(c);
    }
    if name.is_empty() || name == "." || name == ".." {
        return DEFAULT_NAME.to_owned();
    }
    name
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Makes a new private directory `name` under `dir` (which must not exist) and opens it.
fn make_dir_at<Fd: AsFd>(dir: Fd, name: &Path, path: &Path) -> Result<OwnedFd, StoreError> {
    match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(DIR_MODE)) {
        Ok(()) => {}
        Err(rustix::io::Errno::EXIST) => {
            return Err(StoreError::Exists {
                path: path.to_owned(),
            })
        }
        Err(e) => return Err(StoreError::io("make", path, e)),
    }
    let fd = open_no_follow(&dir, name, path)?;
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(DIR_MODE))
        .map_err(|e| StoreError::io("chmod", path, e))?;
    Ok(fd)
}

/// The mode bits a session directory or a temp root that already exists must not have: it
/// is closed to group and others.
const PRIVATE: u32 = 0o077;

/// The mode bits a configured root that already exists must not have: no one but its owner
/// writes in it (a plain `mkdir`'s 0755 is fine: what is inside is 0700 and 0600).
const NOT_WRITABLE_BY_OTHERS: u32 = 0o022;

/// Opens directory `name` under `dir` without following a symlink, making it (0700) first
/// when `create` and it is missing. One that was already there must be this user's and have
/// none of the `forbidden` mode bits. `None`: missing and not `create`.
fn open_dir_at<Fd: AsFd, P: AsRef<Path>>(
    dir: Fd,
    name: P,
    path: &Path,
    create: bool,
    forbidden: u32,
) -> Result<Option<OwnedFd>, StoreError> {
    let name = name.as_ref();
    if create {
        match make_dir_at(&dir, name, path) {
            Ok(fd) => return Ok(Some(fd)),
            Err(StoreError::Exists { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let fd = match open_no_follow(&dir, name, path) {
        Ok(fd) => fd,
        Err(StoreError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| StoreError::io("stat", path, e))?;
    if stat.st_uid != rustix::process::geteuid().as_raw() || stat.st_mode & forbidden != 0 {
        return Err(StoreError::NotPrivate {
            path: path.to_owned(),
        });
    }
    Ok(Some(fd))
}

fn open_no_follow<Fd: AsFd>(dir: Fd, name: &Path, path: &Path) -> Result<OwnedFd, StoreError> {
    rustix::fs::openat(
        &dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => StoreError::NotADirectory {
            path: path.to_owned(),
        },
        e => StoreError::io("open", path, e),
    })
}

/// The leaf of `output_ref` in a session directory: the one entry named `<hex>-…`.
fn find_leaf(
    session: &OwnedFd,
    path: &Path,
    output_ref: &OutputRef,
) -> Result<Option<String>, StoreError> {
    let prefix = format!("{}-", output_ref.hex());
    let dir = rustix::fs::Dir::read_from(session).map_err(|e| StoreError::io("list", path, e))?;
    for entry in dir {
        let entry = entry.map_err(|e| StoreError::io("list", path, e))?;
        if let Ok(name) = entry.file_name().to_str() {
            if name.starts_with(&prefix) {
                return Ok(Some(name.to_owned()));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spill_06_safe_names_are_one_segment() {
        assert_eq!(safe_name("bash-call-1.txt"), "bash-call-1.txt");
        assert_eq!(safe_name("../../etc/passwd"), ".._.._etc_passwd");
        assert_eq!(safe_name("a\\b"), "a_b");
        assert_eq!(safe_name("~root"), "_root");
        assert_eq!(safe_name("a\nb\u{0}c\u{7f}"), "a_b_c_");
        assert_eq!(safe_name("."), DEFAULT_NAME);
        assert_eq!(safe_name(".."), DEFAULT_NAME);
        assert_eq!(safe_name(""), DEFAULT_NAME);
        assert_eq!(safe_name("..."), "...");
        let long = "é".repeat(150); // 300 bytes
        let cut = safe_name(&long);
        assert_eq!(cut.len(), MAX_NAME_BYTES);
        assert!(cut.chars().all(|c| c == 'é'));
    }

    #[test]
    fn spill_06_session_dir_is_a_sha256_prefix() {
        // sha256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
        assert_eq!(session_dir_name("abc"), "session-ba7816bf8f01cfea");
    }
}
