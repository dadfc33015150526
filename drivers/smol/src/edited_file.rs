//! The read the bridge asks for an edited file (ACP-38, ACP-39): a file an agent's `write`
//! or `edit` changed, beneath the session's cwd, read for the editor's review without
//! following a symlink on its way, a regular file only, at most
//! [`MAX_REVIEW_FILE_BYTES`].

use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use musewire_core::acp::{EditedFileFailure, MAX_REVIEW_FILE_BYTES};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;

/// Reads `path` as [`musewire_core::acp::Action::ReadEditedFile`] asks: `cwd` opened as it
/// is (the session's own folder), then each folder beneath it and the file itself with
/// `O_NOFOLLOW` (a symlink anywhere beneath `cwd` is [`EditedFileFailure::Symlink`]); the
/// file must be a regular one of at most [`MAX_REVIEW_FILE_BYTES`]. Non-blocking, so a
/// FIFO planted there does not hold the read.
pub fn read_edited_file(cwd: &Path, path: &Path) -> Result<Vec<u8>, EditedFileFailure> {
    let relative = path
        .strip_prefix(cwd)
        .map_err(|_| EditedFileFailure::Outside)?;
    let mut parts = Vec::new();
    for part in relative.components() {
        match part {
            Component::Normal(name) => parts.push(name),
            _ => return Err(EditedFileFailure::Outside),
        }
    }
    let Some(name) = parts.pop() else {
        return Err(EditedFileFailure::NotAFile);
    };
    let flags = OFlags::RDONLY | OFlags::CLOEXEC;
    let mut dir: OwnedFd =
        rustix::fs::openat(CWD, cwd, flags | OFlags::DIRECTORY, Mode::empty()).map_err(failure)?;
    for part in parts {
        dir = open_beneath(&dir, part, flags | OFlags::DIRECTORY)?;
    }
    let fd = open_beneath(&dir, name, flags | OFlags::NONBLOCK)?;
    let stat = rustix::fs::fstat(&fd).map_err(failure)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(EditedFileFailure::NotAFile);
    }
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > MAX_REVIEW_FILE_BYTES {
        return Err(EditedFileFailure::TooLarge { size });
    }
    let mut bytes = Vec::new();
    File::from(fd)
        .take(MAX_REVIEW_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| EditedFileFailure::Other(e.to_string()))?;
    if bytes.len() as u64 > MAX_REVIEW_FILE_BYTES {
        return Err(EditedFileFailure::TooLarge {
            size: bytes.len() as u64,
        });
    }
    Ok(bytes)
}

/// `name` in `dir`, never through a symlink (a folder that is one fails `O_DIRECTORY` as
/// not a folder on Linux: looked at without following it, to say which).
fn open_beneath(dir: &OwnedFd, name: &OsStr, flags: OFlags) -> Result<OwnedFd, EditedFileFailure> {
    rustix::fs::openat(dir, name, flags | OFlags::NOFOLLOW, Mode::empty()).map_err(|error| {
        let link = error == Errno::NOTDIR
            && rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Symlink);
        if link {
            EditedFileFailure::Symlink
        } else {
            failure(error)
        }
    })
}

fn failure(error: Errno) -> EditedFileFailure {
    match error {
        Errno::LOOP => EditedFileFailure::Symlink,
        Errno::NOENT => EditedFileFailure::NotFound,
        Errno::NOTDIR => EditedFileFailure::NotAFile,
        error => EditedFileFailure::Other(std::io::Error::from(error).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("musewire-edited-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        dir
    }

    #[test]
    fn acp_38_39_reads_a_regular_file_beneath_the_cwd_and_nothing_else() {
        let cwd = scratch("reads");
        std::fs::write(cwd.join("sub/a.txt"), "hello\n").unwrap();
        assert_eq!(
            read_edited_file(&cwd, &cwd.join("sub/a.txt")),
            Ok(b"hello\n".to_vec())
        );
        // Symlinks: the file itself, and a folder on its way.
        let outside = scratch("reads-outside");
        std::fs::write(outside.join("secret.txt"), "no").unwrap();
        symlink(outside.join("secret.txt"), cwd.join("link.txt")).unwrap();
        symlink(&outside, cwd.join("linked")).unwrap();
        let read = |p: &str| read_edited_file(&cwd, &cwd.join(p));
        assert_eq!(read("link.txt"), Err(EditedFileFailure::Symlink));
        assert_eq!(read("linked/secret.txt"), Err(EditedFileFailure::Symlink));
        assert_eq!(read("missing.txt"), Err(EditedFileFailure::NotFound));
        assert_eq!(read("sub"), Err(EditedFileFailure::NotAFile));
        rustix::fs::mknodat(
            CWD,
            cwd.join("fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert_eq!(read("fifo"), Err(EditedFileFailure::NotAFile));
        let big = vec![b'a'; MAX_REVIEW_FILE_BYTES as usize + 1];
        std::fs::write(cwd.join("big.txt"), big).unwrap();
        assert_eq!(
            read("big.txt"),
            Err(EditedFileFailure::TooLarge {
                size: MAX_REVIEW_FILE_BYTES + 1
            })
        );
        assert_eq!(
            read_edited_file(&cwd, &outside.join("secret.txt")),
            Err(EditedFileFailure::Outside)
        );
        assert_eq!(
            read_edited_file(&cwd, &cwd.join("sub/../../x")),
            Err(EditedFileFailure::Outside)
        );
        let _ = std::fs::remove_dir_all(&cwd);
        let _ = std::fs::remove_dir_all(&outside);
    }
}
