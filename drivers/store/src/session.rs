//! A host session's local files, written once for both drivers: the transcript a recording
//! appends to, with the core's [`Recorder`] that writes its lines, and the spill store of host
//! tool results (SPILL-06). A driver opens them with the session's client; its [`Driven`] then
//! writes them itself ([`LocalFiles`]), so the driver's own
//! [`Plumbing`](musewire_host::Plumbing) is left with its process and pipes.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::time::Instant;

use musewire_core::client::{Client, ClientConfig, Recorder};
use musewire_core::spill::{SaveFailure, Saved, SpillWrite};
use musewire_host::{Driven, LocalFiles};

use crate::LocalStore;

/// The files a host session writes: the transcript file when recording, and the spill store
/// when the client's spill policy has one.
#[derive(Debug)]
pub struct SessionFiles {
    /// The transcript file, when recording.
    transcript: Option<File>,
    /// Where spilled host tool results are saved (SPILL-06), when the policy has a store.
    store: Option<LocalStore>,
}

impl SessionFiles {
    /// Starts a session's client at `now` with `config`, with its files: with `record`, the
    /// transcript file is created there (truncated when it exists; its error is this call's)
    /// and the client's bookkeeping records into it, its header saying `description`; the
    /// spill store is [`LocalStore::for_client`] (nothing is touched until its first save).
    pub fn open<W>(
        config: ClientConfig,
        record: Option<&Path>,
        now: Instant,
        description: &str,
    ) -> io::Result<Driven<W, Self>> {
        let files = Self::create(&config, record)?;
        let recorder = record.map(|_| Recorder::new(now, &config, &[], description));
        Ok(Driven::new(Client::new(config, now), recorder, files))
    }

    /// The files alone, as [`SessionFiles::open`] makes them: the transcript file created at
    /// `record` (truncated when it exists), and [`LocalStore::for_client`].
    ///
    /// A transcript holds the session's prompts and outputs: a new one is private (mode
    /// 0600), and a symlink at `record` is refused rather than followed (the open fails).
    pub fn create(config: &ClientConfig, record: Option<&Path>) -> io::Result<Self> {
        Ok(SessionFiles {
            transcript: record.map(create_private).transpose()?,
            store: LocalStore::for_client(config),
        })
    }
}

/// Opens `path` for writing, truncated, created 0600 when new; refuses a symlink at `path`
/// (`O_NOFOLLOW`), so nothing is written through a link. For the files a host writes for
/// itself: a session's transcript, the CLI's outputs.
pub fn create_private(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

impl LocalFiles for SessionFiles {
    /// Appends transcript bytes to the transcript file; nothing when not recording.
    fn record(&mut self, transcript: &[u8]) -> io::Result<()> {
        match &mut self.transcript {
            Some(file) => file.write_all(transcript),
            None => Ok(()),
        }
    }

    /// Saves a host tool result's text with the spill store (SPILL-03, SPILL-06), as
    /// [`LocalStore::spill`] answers it ([`SaveFailure::no_store`] without a store).
    fn save(&mut self, write: &SpillWrite) -> Result<Saved, SaveFailure> {
        LocalStore::spill(self.store.as_mut(), write)
    }
}
