//! The stand-in agent `output_agent.py` as the drivers' `read_output` / `fetch_output` tests
//! use it (OUT-10, ours): its command line, the output it serves and the reference naming it.
//! Shared by `drivers/mio/tests/fetch_output.rs` and `drivers/smol/tests/fetch_output.rs`
//! (`#[path]`), which keep only how they drive it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use musewire_core::client::ClientEvent;
use musewire_wire::output::OutputRef;

/// The stand-in's script, from the including crate's folder (`drivers/<driver>`).
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../cli/tests/output_agent.py");

/// The interpreter that runs the stand-in.
pub const PROGRAM: &str = "python3";

/// How many bytes the stored output holds.
pub const LEN: usize = 100_000;

/// The arguments that run the stand-in in `mode` (`serve`, `liar`, `nooffer`) over the
/// output stored at `data`.
pub fn args(mode: &str, data: &Path) -> [OsString; 3] {
    [SCRIPT.into(), mode.into(), data.into()]
}

/// The reference the stand-in serves its output under.
pub fn reference() -> OutputRef {
    OutputRef::parse("out-0a1b2c3d4e5f6071").unwrap()
}

/// Writes the output the stand-in serves to a scratch file named for this test binary and
/// `name`; returns its path and bytes.
pub fn data(name: &str) -> (PathBuf, Vec<u8>) {
    let bytes: Vec<u8> = (0..LEN as u32).map(|i| (i * 13 % 253) as u8).collect();
    let file = format!("{}-{name}-{}", env!("CARGO_PKG_NAME"), std::process::id());
    let path = std::env::temp_dir().join(file);
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes)
}

/// Whether `event` says the session is ready (the stand-in then serves reads).
pub fn is_ready(event: &ClientEvent) -> bool {
    matches!(event, ClientEvent::Ready { .. })
}
