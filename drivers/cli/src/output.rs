//! Files the tools write: never through a symlink, private (0600) when created.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

pub use musewire_store::create_private;

/// Creates `path` new for writing, mode 0600: an existing file, or a symlink at `path` (even
/// one that points nowhere), is refused (O_CREAT|O_EXCL|O_NOFOLLOW), so nothing is ever
/// written through a link or over another file.
pub fn create_new_private(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}
