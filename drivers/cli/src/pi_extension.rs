//! Writes musewire's pi extension (HOST-10, `musewire_core::client::pi_host_tools`) where a pi
//! started by `musewire acp` loads it: `$XDG_STATE_HOME/musewire/pi/musewire-host-tools.js`
//! (else under `~/.local/state`), the folder 0700, the file 0600, never through a symlink.
//! Only I/O: what the file holds and when pi gets it are the core's.

use std::io::Write;
use std::path::{Path, PathBuf};

use musewire_core::client::pi_host_tools::{PI_HOST_TOOLS_EXTENSION, PI_HOST_TOOLS_FILE_NAME};

/// The extension written to `state/musewire/pi/` (made private if missing): its path. An
/// existing file is replaced by a rename, so a pi starting meanwhile reads the old file or the
/// new one, never half of one, and a symlink at the path is replaced, not followed.
pub fn write_extension(state: &Path) -> Result<PathBuf, String> {
    let dir =
        crate::acp_cmd::private_folder(&state.join("musewire").join("pi"), "pi extension folder")?;
    let path = dir.join(PI_HOST_TOOLS_FILE_NAME);
    let fail = |e: std::io::Error| format!("pi extension {}: {e}", path.display());
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file())
        && std::fs::read(&path).is_ok_and(|old| old == PI_HOST_TOOLS_EXTENSION.as_bytes())
    {
        return Ok(path);
    }
    let temp = dir.join(format!(".{PI_HOST_TOOLS_FILE_NAME}.{}", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    let mut file = crate::output::create_new_private(&temp).map_err(fail)?;
    file.write_all(PI_HOST_TOOLS_EXTENSION.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(fail)?;
    std::fs::rename(&temp, &path).map_err(fail)?;
    Ok(path)
}

/// `$XDG_STATE_HOME`, else `$HOME/.local/state`; `None` when neither is set absolute.
pub fn state_home() -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    std::env::var_os("XDG_STATE_HOME")
        .and_then(absolute)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|h| h.join(".local/state"))
        })
}
