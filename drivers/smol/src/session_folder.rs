//! The read `session/list` asks of the driver (ACP-26): the session folder's `*.jsonl`
//! regular files, symlinks not followed, each file's head and tail only.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::UNIX_EPOCH;

use musewire_core::acp::{
    SessionFile, MAX_SESSION_FILES, SESSION_FILE_HEAD_BYTES, SESSION_FILE_TAIL_BYTES,
};

/// Reads the folder as [`musewire_core::acp::Action::ReadSessionFolder`] asks: at most
/// [`MAX_SESSION_FILES`] files, the newest, each opened with `O_NOFOLLOW` (a symlink
/// planted in the folder is skipped, never read).
pub fn read_session_folder(dir: &Path) -> Result<Vec<SessionFile>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
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
}
