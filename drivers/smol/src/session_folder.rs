//! What the bridge asks of the session folder (ACP-26, ACP-31, ACP-32): the read
//! `session/list` asks (its `*.jsonl` regular files, symlinks not followed, each file's head
//! and tail only), and a fork's copy and a delete, done by the store (STORE-01..03).

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::UNIX_EPOCH;

use musewire_core::acp::{
    ForkNaming, SessionFile, SessionFileDone, SessionFileFailure, SessionFileFailureKind,
    SessionFolderError, MAX_SESSION_FILES, SESSION_FILE_HEAD_BYTES, SESSION_FILE_TAIL_BYTES,
};
use musewire_store::sessions::{SessionFileError, SessionFileName, SessionFolder, SessionNaming};

/// Forks the session file `source` of `dir` as [`musewire_core::acp::Action::ForkSessionFile`]
/// asks (ACP-31): the store copies it under a fresh id in the agent's naming (STORE-02: the
/// folder opened without following a symlink and not writable by others, the source
/// `O_NOFOLLOW` and regular, the copy `O_EXCL`, 0600), a timestamped name at the wall clock's
/// time now.
pub fn fork_session_file(
    dir: &Path,
    source: &str,
    naming: ForkNaming,
) -> Result<SessionFileDone, SessionFileFailure> {
    let source = SessionFileName::new(source).map_err(failure)?;
    let mut folder = SessionFolder::open(dir).map_err(failure)?;
    let naming = match naming {
        ForkNaming::Numbered => SessionNaming::Numbered,
        ForkNaming::Timestamped => SessionNaming::Timestamped {
            unix_ms: std::time::SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        },
    };
    let forked = folder.fork(&source, &naming).map_err(failure)?;
    Ok(SessionFileDone::Forked {
        name: forked.name.as_str().to_owned(),
    })
}

/// Removes the session file `name` of `dir` as
/// [`musewire_core::acp::Action::DeleteSessionFile`] asks (ACP-32): only a regular file of
/// the folder, a symlink refused (STORE-03).
pub fn delete_session_file(dir: &Path, name: &str) -> Result<SessionFileDone, SessionFileFailure> {
    let name = SessionFileName::new(name).map_err(failure)?;
    let folder = SessionFolder::open(dir).map_err(failure)?;
    folder.delete(&name).map_err(failure)?;
    Ok(SessionFileDone::Deleted)
}

/// The bridge's kind of a store's failure, with its message.
fn failure(error: SessionFileError) -> SessionFileFailure {
    let kind = match &error {
        SessionFileError::NotFound { .. } | SessionFileError::BadName { .. } => {
            SessionFileFailureKind::NotFound
        }
        SessionFileError::NotAFile { .. } => SessionFileFailureKind::NotAFile,
        _ => SessionFileFailureKind::Other,
    };
    SessionFileFailure {
        kind,
        message: error.to_string(),
    }
}

/// Reads the folder as [`musewire_core::acp::Action::ReadSessionFolder`] asks: at most
/// [`MAX_SESSION_FILES`] files, the newest, each opened with `O_NOFOLLOW` (a symlink
/// planted in the folder is skipped, never read).
pub fn read_session_folder(dir: &Path) -> Result<Vec<SessionFile>, SessionFolderError> {
    let entries = fs::read_dir(dir).map_err(|e| SessionFolderError::io(dir, &e))?;
    let mut found: Vec<(Option<u64>, String)> = Vec::new();
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if !name.ends_with(".jsonl") {
            continue;
        }
        // `symlink_metadata`: a link is not a regular file, so it is skipped.
        let Ok(meta) = fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.file_type().is_file() {
            continue;
        }
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64);
        found.push((modified, name));
    }
    found.sort_by(|a, b| b.cmp(a));
    found.truncate(MAX_SESSION_FILES);
    let mut files = Vec::with_capacity(found.len());
    for (modified_ms, name) in found {
        if let Ok((head, tail)) = head_and_tail(&dir.join(&name)) {
            files.push(SessionFile {
                name,
                modified_ms,
                head,
                tail,
            });
        }
    }
    Ok(files)
}

fn head_and_tail(path: &Path) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)?;
    let len = file.metadata()?.len();
    let mut head = Vec::new();
    (&mut file as &mut File)
        .take(SESSION_FILE_HEAD_BYTES as u64)
        .read_to_end(&mut head)?;
    let mut tail = Vec::new();
    if len > SESSION_FILE_HEAD_BYTES as u64 {
        let from = len
            .saturating_sub(SESSION_FILE_TAIL_BYTES as u64)
            .max(SESSION_FILE_HEAD_BYTES as u64);
        file.seek(SeekFrom::Start(from))?;
        file.take(SESSION_FILE_TAIL_BYTES as u64)
            .read_to_end(&mut tail)?;
    }
    Ok((head, tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acp_26_reads_regular_jsonl_files_and_skips_symlinks() {
        let dir = std::env::temp_dir().join(format!("musewire-folder-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("a.jsonl"),
            b"{\"type\":\"session\",\"cwd\":\"/w\"}\n",
        )
        .unwrap();
        fs::write(dir.join("notes.txt"), b"x").unwrap();
        let big: Vec<u8> = std::iter::repeat_n(b'x', 200_000)
            .chain(*b"\nend\n")
            .collect();
        fs::write(dir.join("big.jsonl"), &big).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.join("link.jsonl")).unwrap();
        let mut files = read_session_folder(&dir).unwrap();
        files.sort_by(|a, b| a.name.cmp(&b.name));
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a.jsonl", "big.jsonl"]);
        assert_eq!(files[0].tail, b"");
        assert_eq!(files[1].head.len(), SESSION_FILE_HEAD_BYTES);
        assert_eq!(files[1].tail.len(), SESSION_FILE_TAIL_BYTES);
        assert!(files[1].tail.ends_with(b"\nend\n"));
        assert!(read_session_folder(&dir.join("missing")).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn acp_31_32_fork_copies_and_delete_removes_regular_files_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("musewire-fork-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        let header = "{\"type\":\"session\",\"version\":3,\"id\":\"session-1\",\"timestamp\":\"t\",\"cwd\":\"/w\"}\n";
        fs::write(
            dir.join("session-1.jsonl"),
            format!("{header}{{\"type\":\"x\"}}\n"),
        )
        .unwrap();
        let forked = fork_session_file(&dir, "session-1.jsonl", ForkNaming::Numbered).unwrap();
        assert_eq!(
            forked,
            SessionFileDone::Forked {
                name: "session-2.jsonl".into()
            }
        );
        let copy = fs::symlink_metadata(dir.join("session-2.jsonl")).unwrap();
        assert_eq!(copy.permissions().mode() & 0o777, 0o600);
        let text = fs::read_to_string(dir.join("session-2.jsonl")).unwrap();
        assert!(text.contains("\"parentSession\"") && text.ends_with("{\"type\":\"x\"}\n"));
        let timestamped = fork_session_file(&dir, "session-1.jsonl", ForkNaming::Timestamped);
        assert!(matches!(timestamped, Ok(SessionFileDone::Forked { name }) if name.contains('_')));
        std::os::unix::fs::symlink(dir.join("session-1.jsonl"), dir.join("link.jsonl")).unwrap();
        let refused = delete_session_file(&dir, "link.jsonl").unwrap_err();
        assert_eq!(refused.kind, SessionFileFailureKind::NotAFile);
        let refused = fork_session_file(&dir, "link.jsonl", ForkNaming::Numbered).unwrap_err();
        assert_eq!(refused.kind, SessionFileFailureKind::NotAFile);
        assert_eq!(
            delete_session_file(&dir, "missing.jsonl").unwrap_err().kind,
            SessionFileFailureKind::NotFound
        );
        delete_session_file(&dir, "session-2.jsonl").unwrap();
        assert!(!dir.join("session-2.jsonl").exists());
        assert!(dir.join("session-1.jsonl").exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
