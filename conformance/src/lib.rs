//! Conformance tooling for musewire: the transcript format and its replayer ([`transcript`],
//! [`replay`], from the `musewire-transcript` crate; a transcript drives the host-side `Client`
//! or the agent-side `Agent`, by its header's role), the coverage report over `RULES.md` ([`report`]), and a recorder that turns a
//! session with the real agent into a transcript ([`capture`]).
//!
//! The command-line front end is the `musewire-conformance` binary:
//!
//! ```text
//! musewire-conformance replay [FILES…]        replay (default: every transcript); exit 1 on a mismatch
//! musewire-conformance bless FILES…           rewrite the files' expect/returns from the actual actions
//! musewire-conformance report                 rule coverage, ending `covered N of M rules`
//! musewire-conformance capture-omp SCENARIO [OUT]   record a session with the real omp
//! ```
#![warn(missing_docs)]

pub mod capture;
pub mod report;

pub use musewire_transcript::{diff, replay, transcript};

use std::path::{Path, PathBuf};

/// The workspace root (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the workspace")
        .to_owned()
}

/// The directory of the committed transcripts.
pub fn transcripts_dir() -> PathBuf {
    workspace_root().join("conformance/transcripts")
}

/// The `*.jsonl` files of a directory, sorted.
pub fn transcript_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}
