//! [`Disk`]: performs the App's [`IoWork`] with real files (the other side of the
//! [I/O seam](crate::io)).
//!
//! Session files live in one folder, opened once when the `Disk` is made (made with mode
//! 0700 when missing; it must be a directory, not a symlink) and kept open: every session
//! file is then opened relative to that descriptor with `O_NOFOLLOW`, so a symlink planted at
//! a session file makes the work fail, and a folder swapped for a symlink later is never
//! followed (the work goes on in the folder first opened). Session files are made
//! exclusively (`O_EXCL`), mode 0600; appends are one `write` of whole lines each, made as
//! the entry is added, so an entry is in the file (the kernel's) before the agent writes
//! anything after it, and a crash of the agent loses no entry it has reported; at each run's
//! end the file is synced to its device.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};

use crate::io::{IoOutcome, IoWork, MAX_EDIT_FILE_BYTES, MAX_SESSION_FILE_BYTES};
use crate::read::{LineScanner, ReadWindow};

const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;
const READ_BYTES: usize = 64 * 1024;

/// The session folder, open.
#[derive(Debug)]
struct Folder {
    path: PathBuf,
    fd: OwnedFd,
}

/// Performs [`IoWork`] on this machine's files. See the [module docs](self).
#[derive(Debug)]
pub struct Disk {
    sessions: Option<Folder>,
}

impl Disk {
    /// A disk whose session files are in `session_dir` (made, mode 0700, when missing;
    /// `None`: no session files, their work fails). Fails when the folder is a symlink or
    /// not a directory, or cannot be made or opened.
    pub fn new(session_dir: Option<&Path>) -> io::Result<Self> {
        let sessions = session_dir.map(open_folder).transpose()?;
        Ok(Disk { sessions })
    }

    /// Performs `work`; never panics, every failure is an [`IoOutcome::Failed`].
    pub fn perform(&mut self, work: IoWork) -> IoOutcome {
        match work {
            IoWork::ReadFile { path, window } => read_file(&path, window),
            IoWork::WriteFile { path, bytes } => write_file(&path, &bytes),
            IoWork::EditFile { path, edits } => edit_file(&path, &edits),
            IoWork::CreateSession { name, bytes } => self.session_work(&name, |dir, path| {
                create(dir, &name, path, &bytes)
            }),
            IoWork::AppendSession { name, bytes } => self.session_work(&name, |dir, path| {
                let mut file = open_file(dir, &name, path, OFlags::WRONLY | OFlags::APPEND)?;
                file.write_all(&bytes)
                    .and_then(|()| file.flush())
                    .map_err(|e| format!("cannot append to {}: {e}", path.display()))?;
                Ok(IoOutcome::Done)
            }),
            IoWork::SyncSession { name } => self.session_work(&name, |dir, path| {
                let file = open_file(dir, &name, path, OFlags::WRONLY | OFlags::APPEND)?;
                file.sync_data()
                    .map_err(|e| format!("cannot sync {}: {e}", path.display()))?;
                Ok(IoOutcome::Done)
            }),
            IoWork::LoadSession { name } => self.session_work(&name, |dir, path| {
                let file = open_file(dir, &name, path, OFlags::RDONLY)?;
                let size = file.metadata().map(|m| m.len()).unwrap_or(0);
                if size > MAX_SESSION_FILE_BYTES {
                    return Err(format!(
                        "{} is {size} bytes, over the {MAX_SESSION_FILE_BYTES}-byte limit of a session file",
                        path.display()
                    ));
                }
                let mut bytes = Vec::new();
                file.take(MAX_SESSION_FILE_BYTES + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                if bytes.len() as u64 > MAX_SESSION_FILE_BYTES {
                    return Err(format!(
                        "{} is over the {MAX_SESSION_FILE_BYTES}-byte limit of a session file",
                        path.display()
                    ));
                }
                Ok(IoOutcome::Loaded(bytes))
            }),
            IoWork::TruncateSession { name, len } => self.session_work(&name, |dir, path| {
                let file = open_file(dir, &name, path, OFlags::WRONLY)?;
                file.set_len(len)
                    .map_err(|e| format!("cannot cut {}: {e}", path.display()))?;
                Ok(IoOutcome::Done)
            }),
        }
    }

    /// Runs `work` on the session file `name` of the folder.
    fn session_work(
        &self,
        name: &str,
        work: impl FnOnce(&OwnedFd, &Path) -> Result<IoOutcome, String>,
    ) -> IoOutcome {
        let Some(folder) = &self.sessions else {
            return IoOutcome::Failed("no session folder (--session-dir) is set".into());
        };
        if !is_file_name(name) {
            return IoOutcome::Failed(format!("{name:?} is not a session file's name"));
        }
        let path = folder.path.join(name);
        work(&folder.fd, &path).unwrap_or_else(IoOutcome::Failed)
    }
}

/// Whether `name` is one path segment naming a file (not `.`, `..`, empty, or with a `/`
/// or a NUL).
fn is_file_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])
}

/// Opens (making it when missing, mode 0700) the session folder, without following a
/// symlink at it.
fn open_folder(path: &Path) -> io::Result<Folder> {
    let open = || {
        rustix::fs::openat(
            CWD,
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
    };
    let fd = match open() {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)?;
            }
            match rustix::fs::mkdirat(CWD, path, Mode::from_raw_mode(DIR_MODE)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(folder_error(path, "cannot make", e.into())),
            }
            let fd = open().map_err(|e| folder_error(path, "cannot open", e.into()))?;
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(DIR_MODE))
                .map_err(|e| folder_error(path, "cannot chmod", e.into()))?;
            fd
        }
        Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "session folder {} is a symlink or not a directory",
                    path.display()
                ),
            ))
        }
        Err(e) => return Err(folder_error(path, "cannot open", e.into())),
    };
    Ok(Folder {
        path: path.to_owned(),
        fd,
    })
}

fn folder_error(path: &Path, what: &str, error: io::Error) -> io::Error {
    io::Error::new(
        error.kind(),
        format!("{what} session folder {}: {error}", path.display()),
    )
}

/// Creates `name` in `dir` exclusively, mode 0600, holding `bytes`: `Exists` when it is
/// there (a symlink included). A file whose write fails is removed.
fn create(dir: &OwnedFd, name: &str, path: &Path, bytes: &[u8]) -> Result<IoOutcome, String> {
    let fd = match rustix::fs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(FILE_MODE),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::EXIST) => return Ok(IoOutcome::Exists),
        Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
    };
    let written = rustix::fs::fchmod(&fd, Mode::from_raw_mode(FILE_MODE))
        .map_err(io::Error::from)
        .and_then(|()| {
            let mut file = File::from(fd);
            file.write_all(bytes).and_then(|()| file.flush())
        });
    if let Err(e) = written {
        let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
        return Err(format!("cannot write {}: {e}", path.display()));
    }
    Ok(IoOutcome::Done)
}

/// Opens the regular file `name` in `dir` with `flags`, never through a symlink.
fn open_file(dir: &OwnedFd, name: &str, path: &Path, flags: OFlags) -> Result<File, String> {
    let fd = rustix::fs::openat(
        dir,
        name,
        flags | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| match e {
        rustix::io::Errno::LOOP => format!("{} is a symlink", path.display()),
        rustix::io::Errno::NOENT => format!("{} does not exist", path.display()),
        e => format!("cannot open {}: {e}", path.display()),
    })?;
    let stat =
        rustix::fs::fstat(&fd).map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(format!("{} is not a regular file", path.display()));
    }
    Ok(File::from(fd))
}

/// The `write` tool: the file made or replaced, its folders made, never through a symlink
/// at the file.
fn write_file(path: &Path, bytes: &[u8]) -> IoOutcome {
    let write = || -> io::Result<()> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let fd = rustix::fs::open(
            path,
            OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )?;
        let mut file = File::from(fd);
        file.write_all(bytes)?;
        file.flush()
    };
    match write() {
        Ok(()) => IoOutcome::Changed(bytes.len() as u64),
        Err(error) => IoOutcome::Failed(format!("Cannot write {}: {error}", path.display())),
    }
}

/// The `edit` tool: each replacement in turn, each `old` found exactly once; the file
/// written back only when all apply.
fn edit_file(path: &Path, edits: &[(String, String)]) -> IoOutcome {
    let shown = path.display();
    let edit = || -> Result<u64, String> {
        let name = path.file_name().ok_or(format!("{shown} is not a file"))?;
        let dir = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) => parent,
            None => Path::new("."),
        };
        let dir = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| format!("Cannot open the folder of {shown}: {e}"))?;
        let name = name
            .to_str()
            .ok_or(format!("{shown}: the name is not UTF-8"))?;
        let mut file = open_file(&dir, name, path, OFlags::RDWR)?;
        let mut bytes = Vec::new();
        (&mut file)
            .take(MAX_EDIT_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("Cannot read {shown}: {e}"))?;
        if bytes.len() as u64 > MAX_EDIT_FILE_BYTES {
            return Err(format!("{shown} is over {MAX_EDIT_FILE_BYTES} bytes"));
        }
        let mut text =
            String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text"))?;
        for (old, new) in edits {
            match text.matches(old.as_str()).count() {
                1 => text = text.replacen(old.as_str(), new, 1),
                0 => {
                    return Err(format!(
                        "Could not find the text to replace in {shown}: {old:?}"
                    ))
                }
                n => {
                    return Err(format!(
                        "The text to replace occurs {n} times in {shown}, not once: {old:?}"
                    ))
                }
            }
        }
        use std::io::{Seek, SeekFrom};
        file.set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)).map(|_| ()))
            .and_then(|()| file.write_all(text.as_bytes()))
            .and_then(|()| file.flush())
            .map_err(|e| format!("Cannot write {shown}: {e}"))?;
        Ok(text.len() as u64)
    };
    match edit() {
        Ok(len) => IoOutcome::Changed(len),
        Err(error) => IoOutcome::Failed(error),
    }
}

/// The `read` tool's window of a local file.
fn read_file(path: &Path, window: ReadWindow) -> IoOutcome {
    let read = || -> io::Result<_> {
        // Non-blocking, so that a FIFO without a writer reads as empty rather than stopping
        // the loop (no effect on regular files).
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut file = File::from(fd);
        let size = file
            .metadata()
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        let mut scanner = LineScanner::new(window);
        let mut buf = vec![0u8; READ_BYTES];
        let eof = loop {
            let n = match file.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                break true;
            }
            if !scanner.feed(&buf[..n]) {
                break false;
            }
        };
        let mut found = scanner.finish(eof);
        found.size = size;
        Ok(found)
    };
    match read() {
        Ok(found) => IoOutcome::Read(found),
        Err(error) => IoOutcome::Failed(format!("Cannot read {}: {error}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("musewire-agent-disk-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn window() -> ReadWindow {
        ReadWindow {
            offset: None,
            limit: None,
            max_bytes: 1024,
        }
    }

    #[test]
    fn a_read_of_a_fifo_without_a_writer_does_not_hang_the_loop() {
        let fifo = scratch("fifo").join("pipe");
        rustix::fs::mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        let mut disk = Disk::new(None).unwrap();
        let outcome = disk.perform(IoWork::ReadFile {
            path: fifo,
            window: window(),
        });
        assert!(matches!(outcome, IoOutcome::Read(found) if found.kept.is_empty()));
    }

    #[test]
    fn write_makes_the_file_and_edit_replaces_text_found_once_never_through_a_symlink() {
        let dir = scratch("write-edit");
        let file = dir.join("sub/a.txt");
        let mut disk = Disk::new(None).unwrap();
        let write = |disk: &mut Disk, path: &Path, text: &str| {
            disk.perform(IoWork::WriteFile {
                path: path.to_owned(),
                bytes: text.as_bytes().to_vec(),
            })
        };
        assert_eq!(
            write(&mut disk, &file, "alpha\nbeta\n"),
            IoOutcome::Changed(11)
        );
        let edit = |disk: &mut Disk, old: &str, new: &str| {
            disk.perform(IoWork::EditFile {
                path: file.clone(),
                edits: vec![(old.into(), new.into())],
            })
        };
        assert_eq!(edit(&mut disk, "beta", "gamma"), IoOutcome::Changed(12));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "alpha\ngamma\n");
        assert!(
            matches!(edit(&mut disk, "zeta", "x"), IoOutcome::Failed(e) if e.contains("Could not find"))
        );
        assert!(matches!(edit(&mut disk, "a", "x"), IoOutcome::Failed(e) if e.contains("times")));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "alpha\ngamma\n");
        let link = dir.join("link.txt");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(matches!(
            write(&mut disk, &link, "no"),
            IoOutcome::Failed(_)
        ));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "alpha\ngamma\n");
    }

    #[test]
    fn agent_05_session_work_takes_only_a_file_name_of_the_folder() {
        let dir = scratch("names").join("sessions");
        let mut disk = Disk::new(Some(&dir)).unwrap();
        for name in ["", ".", "..", "../x.jsonl", "a/b.jsonl", "nul\0.jsonl"] {
            let name = name.to_owned();
            let outcome = disk.perform(IoWork::LoadSession { name });
            assert!(matches!(outcome, IoOutcome::Failed(_)));
        }
        let create = |disk: &mut Disk| {
            disk.perform(IoWork::CreateSession {
                name: "s.jsonl".into(),
                bytes: b"head\n".to_vec(),
            })
        };
        assert_eq!(create(&mut disk), IoOutcome::Done);
        assert_eq!(create(&mut disk), IoOutcome::Exists);
        let append = disk.perform(IoWork::AppendSession {
            name: "s.jsonl".into(),
            bytes: b"more\n".to_vec(),
        });
        assert_eq!(append, IoOutcome::Done);
        let sync = disk.perform(IoWork::SyncSession {
            name: "s.jsonl".into(),
        });
        assert_eq!(sync, IoOutcome::Done);
        let cut = disk.perform(IoWork::TruncateSession {
            name: "s.jsonl".into(),
            len: 5,
        });
        assert_eq!(cut, IoOutcome::Done);
        let loaded = disk.perform(IoWork::LoadSession {
            name: "s.jsonl".into(),
        });
        assert_eq!(loaded, IoOutcome::Loaded(b"head\n".to_vec()));
        // Without a folder, session work fails.
        let outcome = Disk::new(None).unwrap().perform(IoWork::LoadSession {
            name: "s.jsonl".into(),
        });
        assert!(matches!(outcome, IoOutcome::Failed(e) if e.contains("no session folder")));
    }
}
