//! The local spill store (SPILL-06), the spill policy through it (SPILL-03, SPILL-05) and
//! stored-output reads from it (OUT-04, OUT-07): `cargo test -p musewire-store`.

use std::fs;
use std::io;
use std::os::unix::fs::{symlink, DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use musewire_core::client::ClientConfig;
use musewire_core::output::{
    read_result, OutputCatalog, ReadParams, ReadRequest, ReaderWalk, TEXT_MEDIA_TYPE,
};
use musewire_core::spill::{
    plan, Decision, KeptInline, Outcome, SaveFailure, SpillOwner, SpillPolicy, SpillSource,
    SpillWrite,
};
use musewire_host::LocalFiles;
use musewire_store::{
    session_dir_name, LeafWriter, LocalStore, SessionFiles, StoreError, RETRIEVAL_HINT,
    TEMP_ROOT_PREFIX,
};
use musewire_wire::output::{OutputError, OutputRef};
use musewire_wire::{ContentBlock, ToolResult};

fn write(session: &str, name: &str, content: &str) -> SpillWrite {
    SpillWrite {
        owner: SpillOwner::new(session),
        source: SpillSource::new("bash", "call-1", "Bash"),
        suggested_name: name.into(),
        content: content.into(),
    }
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

/// A random source giving these values in turn.
fn fixed(values: &[[u8; 8]]) -> musewire_store::RandomSource {
    let values = Arc::new(Mutex::new(values.to_vec()));
    Box::new(move || {
        let mut values = values.lock().unwrap();
        if values.is_empty() {
            Err(io::Error::other("out of test randomness"))
        } else {
            Ok(values.remove(0))
        }
    })
}

/// Every file under `dir`, recursively, without following symlinks.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if fs::symlink_metadata(&path).unwrap().is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn spill_06_temp_root_session_dir_and_file_are_private() {
    let parent = tempfile::tempdir().unwrap();
    let mut store = LocalStore::in_temp_dir(parent.path().to_owned());
    assert!(
        files(parent.path()).is_empty(),
        "nothing made before first use"
    );
    let saved = store
        .save(&write("abc", "bash-call-1.txt", "hello"))
        .unwrap();
    let root = store.root_path().unwrap().to_owned();
    assert_eq!(root.parent().unwrap(), parent.path());
    let root_name = root.file_name().unwrap().to_str().unwrap();
    assert!(root_name.starts_with(TEMP_ROOT_PREFIX));
    assert_eq!(root_name.len(), TEMP_ROOT_PREFIX.len() + 16);
    let session = root.join("session-ba7816bf8f01cfea");
    let leaf = PathBuf::from(&saved.spill_ref.locator);
    assert_eq!(leaf.parent().unwrap(), session);
    let leaf_name = leaf.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        leaf_name,
        format!("{}-bash-call-1.txt", saved.output.output_ref.hex())
    );
    assert!(leaf_name[..16].bytes().all(|b| b.is_ascii_hexdigit()));
    // As `stat` sees them.
    assert_eq!(mode(&root), 0o700);
    assert_eq!(mode(&session), 0o700);
    assert_eq!(mode(&leaf), 0o600);
    assert_eq!(fs::read_to_string(&leaf).unwrap(), "hello");
    assert_eq!(saved.spill_ref.bytes, 5);
    assert_eq!(saved.spill_ref.retrieval_hint, RETRIEVAL_HINT);
    assert_eq!(saved.output.byte_len, 5);
    assert_eq!(saved.output.item_id, "call-1");
    assert_eq!(saved.output.media_type, TEXT_MEDIA_TYPE);
}

#[test]
fn spill_06_configured_root_is_made_0700_and_names_are_made_safe() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("spill");
    let mut store = LocalStore::new(Some(root.clone()));
    let saved = store.save(&write("s", "../../etc/passwd", "x")).unwrap();
    assert_eq!(mode(&root), 0o700);
    let leaf = PathBuf::from(&saved.spill_ref.locator);
    assert_eq!(leaf.parent().unwrap(), root.join(session_dir_name("s")));
    assert!(leaf
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .ends_with("-.._.._etc_passwd"));
    for name in ["", ".", ".."] {
        let saved = store.save(&write("s", name, "x")).unwrap();
        assert!(saved.spill_ref.locator.ends_with("-output.txt"), "{name:?}");
    }
    assert_eq!(files(dir.path()).len(), 4);
}

#[test]
fn spill_06_two_saves_of_the_same_name_are_distinct() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = LocalStore::new(Some(dir.path().join("r")));
    let a = store.save(&write("s", "same.txt", "one")).unwrap();
    let b = store.save(&write("s", "same.txt", "two")).unwrap();
    assert_ne!(a.spill_ref.locator, b.spill_ref.locator);
    assert_ne!(a.output.output_ref, b.output.output_ref);
    assert_eq!(fs::read_to_string(&a.spill_ref.locator).unwrap(), "one");
    assert_eq!(fs::read_to_string(&b.spill_ref.locator).unwrap(), "two");
}

#[test]
fn spill_06_a_symlink_planted_at_the_leaf_fails_the_save_and_writes_nothing_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    let outside = dir.path().join("outside");
    fs::create_dir(&outside).unwrap();
    let victim = outside.join("victim");
    fs::write(&victim, "keep").unwrap();
    let mut store =
        LocalStore::new(Some(root.clone())).with_random(fixed(&[[1; 8], [2; 8], [2; 8]]));
    // A first save makes the session directory.
    store.save(&write("s", "a.txt", "first")).unwrap();
    let session = root.join(session_dir_name("s"));
    // The next leaf will be 0202…-b.txt: plant symlinks there (to a file, and dangling).
    let leaf = session.join("0202020202020202-b.txt");
    symlink(&victim, &leaf).unwrap();
    let error = store.save(&write("s", "b.txt", "evil")).unwrap_err();
    assert!(matches!(error, StoreError::Exists { .. }), "{error}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
    fs::remove_file(&leaf).unwrap();
    let dangling = outside.join("created");
    symlink(&dangling, &leaf).unwrap();
    assert!(store.save(&write("s", "b.txt", "evil")).is_err());
    assert!(!dangling.exists(), "nothing created through the symlink");
    assert_eq!(files(&outside), vec![victim]);
}

#[test]
fn spill_06_a_symlink_planted_at_the_session_dir_fails_the_save() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    fs::DirBuilder::new().mode(0o700).create(&root).unwrap();
    let outside = dir.path().join("outside");
    fs::DirBuilder::new().mode(0o700).create(&outside).unwrap();
    symlink(&outside, root.join(session_dir_name("s"))).unwrap();
    let mut store = LocalStore::new(Some(root));
    let error = store.save(&write("s", "a.txt", "evil")).unwrap_err();
    assert!(matches!(error, StoreError::NotADirectory { .. }), "{error}");
    assert!(files(&outside).is_empty());
}

#[test]
fn spill_06_a_symlink_planted_at_the_root_fails_the_save() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    fs::DirBuilder::new().mode(0o700).create(&outside).unwrap();
    // A configured root that is a symlink.
    let root = dir.path().join("r");
    symlink(&outside, &root).unwrap();
    let mut store = LocalStore::new(Some(root));
    let error = store.save(&write("s", "a.txt", "evil")).unwrap_err();
    assert!(matches!(error, StoreError::NotADirectory { .. }), "{error}");
    assert!(files(&outside).is_empty());
    // A temp root whose name was planted beforehand.
    let parent = dir.path().join("tmp");
    fs::create_dir(&parent).unwrap();
    symlink(
        &outside,
        parent.join(format!("{TEMP_ROOT_PREFIX}0303030303030303")),
    )
    .unwrap();
    let mut store = LocalStore::in_temp_dir(parent).with_random(fixed(&[[3; 8], [4; 8]]));
    let error = store.save(&write("s", "a.txt", "evil")).unwrap_err();
    assert!(matches!(error, StoreError::Exists { .. }), "{error}");
    assert!(files(&outside).is_empty());
}

#[test]
fn spill_06_a_session_dir_open_to_others_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    fs::DirBuilder::new().mode(0o700).create(&root).unwrap();
    let session = root.join(session_dir_name("s"));
    fs::create_dir(&session).unwrap();
    fs::set_permissions(&session, fs::Permissions::from_mode(0o755)).unwrap();
    let mut store = LocalStore::new(Some(root));
    let error = store.save(&write("s", "a.txt", "x")).unwrap_err();
    assert!(matches!(error, StoreError::NotPrivate { .. }), "{error}");
    assert!(files(&session).is_empty());
}

/// SPILL-06: an existing configured root need only be this user's and closed to writers
/// other than its owner: a plain `mkdir`'s 0755 root works, the session directory and the
/// file inside are still 0700 and 0600; a root others can write in is refused.
#[test]
fn spill_06_an_existing_root_needs_only_to_be_closed_to_other_writers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    fs::DirBuilder::new().mode(0o755).create(&root).unwrap();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
    let mut store = LocalStore::new(Some(root.clone()));
    let saved = store.save(&write("s", "a.txt", "x")).unwrap();
    let file = std::path::PathBuf::from(&saved.spill_ref.locator);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    assert_eq!(mode(&root), 0o755, "the configured root is left as it was");

    let open = dir.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    let mut store = LocalStore::new(Some(open.clone()));
    let error = store.save(&write("s", "a.txt", "x")).unwrap_err();
    assert!(matches!(error, StoreError::NotPrivate { .. }), "{error}");
    assert!(files(&open).is_empty());
}

/// A disk with room for `room` bytes.
struct FullDisk {
    room: usize,
}

impl LeafWriter for FullDisk {
    fn write_leaf(&mut self, file: &mut fs::File, content: &[u8]) -> io::Result<()> {
        use std::io::Write;
        let fits = content.len().min(self.room);
        file.write_all(&content[..fits])?;
        if fits < content.len() {
            return Err(io::Error::from_raw_os_error(28)); // ENOSPC
        }
        Ok(())
    }
}

#[test]
fn spill_05_06_a_full_disk_leaves_no_file_and_the_original_result() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    let mut store =
        LocalStore::new(Some(root.clone())).with_writer(Box::new(FullDisk { room: 10 }));
    let result = ToolResult {
        content: vec![ContentBlock::text("0123456789".repeat(100))],
        details: Some(serde_json::json!({"exitCode": 0})),
        ..Default::default()
    };
    let policy = SpillPolicy {
        max_inline_bytes: Some(100),
        has_store: true,
    };
    let Decision::Save(pending) = plan(
        &policy,
        result.clone(),
        SpillSource::new("bash", "call-1", "Bash"),
        Some(SpillOwner::new("s")),
    ) else {
        panic!("expected a save")
    };
    let answer = store
        .save(&pending.write)
        .map(|saved| saved.spill_ref)
        .map_err(|e| SaveFailure::new(e.to_string()));
    let error = answer.clone().unwrap_err();
    assert!(error.reason.contains("os error 28"), "{error}");
    let settled = pending.complete(answer);
    assert_eq!(settled.result, result);
    assert!(matches!(
        settled.outcome,
        Outcome::Kept(KeptInline::SaveFailed { .. })
    ));
    // The partial file was removed.
    assert!(files(&root).is_empty(), "{:?}", files(&root));
}

/// The policy, the store and the reader walk together: spill, then read the whole back.
fn spill_and_walk(store: &mut LocalStore, text: &str, page: u64) -> (String, Vec<u8>) {
    let policy = SpillPolicy {
        max_inline_bytes: Some(1000),
        has_store: true,
    };
    let result = ToolResult {
        content: vec![ContentBlock::text(text)],
        ..Default::default()
    };
    let Decision::Save(pending) = plan(
        &policy,
        result,
        SpillSource::new("bash", "call-9", "Bash"),
        Some(SpillOwner::new("sess")),
    ) else {
        panic!("expected a save")
    };
    let saved = store.save(&pending.write).unwrap();
    let settled = pending.complete(Ok(saved.spill_ref.clone()));
    let shown = settled.result.content[0].as_text().unwrap().to_owned();
    assert!(shown.ends_with(&format!(
        "Full formatted result stored at: {}. {RETRIEVAL_HINT})",
        saved.spill_ref.locator
    )));
    let mut catalog = OutputCatalog::default();
    catalog.insert(saved.output.clone());
    let mut walk = ReaderWalk::new("sess", "call-9", saved.output.output_ref, page).unwrap();
    let mut whole = Vec::new();
    while let Some(params) = walk.next_params() {
        let params = ReadParams::from_value(&params.to_value()).unwrap();
        let read = catalog.plan_read(&params, Instant::now()).unwrap();
        let bytes = store.read(&read.request).unwrap();
        let page = read_result(&read.request, &bytes.bytes, bytes.total_len).unwrap();
        whole.extend(walk.handle(&page).unwrap());
    }
    (shown, whole)
}

#[test]
fn out_04_spilled_text_reads_back_whole_through_the_walk() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = LocalStore::new(Some(dir.path().join("r")));
    let text: String = (0..20_000).map(|i| format!("line {i} é€😀\n")).collect();
    let (shown, whole) = spill_and_walk(&mut store, &text, 4096);
    assert_eq!(whole, text.as_bytes());
    assert!(shown.len() < 1000 + 300);
}

fn request(
    session: &str,
    item: &str,
    output_ref: &OutputRef,
    offset: u64,
    len: u64,
) -> ReadRequest {
    ReadRequest {
        session_id: session.into(),
        item_id: item.into(),
        output_ref: output_ref.clone(),
        offset_bytes: offset,
        length_bytes: len,
        media_type: TEXT_MEDIA_TYPE.into(),
    }
}

#[test]
fn out_07_store_reads_fail_typed_for_unknown_foreign_expired_and_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = LocalStore::new(Some(dir.path().join("r")));
    let saved = store.save(&write("s", "a.txt", "0123456789")).unwrap();
    let r = &saved.output.output_ref;
    let got = store.read(&request("s", "call-1", r, 3, 4)).unwrap();
    assert_eq!((got.bytes.as_slice(), got.total_len), (&b"3456"[..], 10));
    // A short last page.
    assert_eq!(
        store
            .read(&request("s", "call-1", r, 8, 100))
            .unwrap()
            .bytes,
        b"89"
    );
    let typed = |store: &mut LocalStore, req| store.read(&req).unwrap_err().output_error();
    assert_eq!(
        typed(
            &mut store,
            request("s", "call-1", &OutputRef::from_random([9; 8]), 0, 1)
        ),
        OutputError::Unknown
    );
    assert_eq!(
        typed(&mut store, request("t", "call-1", r, 0, 1)),
        OutputError::Foreign
    );
    assert_eq!(
        typed(&mut store, request("s", "call-2", r, 0, 1)),
        OutputError::Foreign
    );
    assert_eq!(
        typed(&mut store, request("s", "call-1", r, 10, 1)),
        OutputError::OffsetOutOfRange {
            offset: 10,
            byte_len: 10
        }
    );
    fs::remove_file(&saved.spill_ref.locator).unwrap();
    assert_eq!(
        typed(&mut store, request("s", "call-1", r, 0, 1)),
        OutputError::Expired
    );
}

#[test]
fn out_07_a_symlink_in_place_of_a_stored_output_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    fs::write(&secret, "secret").unwrap();
    let mut store = LocalStore::new(Some(dir.path().join("r")));
    let saved = store.save(&write("s", "a.txt", "public")).unwrap();
    fs::remove_file(&saved.spill_ref.locator).unwrap();
    symlink(&secret, &saved.spill_ref.locator).unwrap();
    let error = store
        .read(&request("s", "call-1", &saved.output.output_ref, 0, 10))
        .unwrap_err();
    assert!(matches!(error, StoreError::NotAFile { .. }), "{error}");
    assert_eq!(error.output_error(), OutputError::Unavailable);
}

/// The store's part of reading after a restart: its files are found again by reference under
/// the session's directory. History replay is not the store's.
#[test]
fn spill_06_a_restarted_store_on_the_same_root_still_reads_its_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("r");
    let saved = LocalStore::new(Some(root.clone()))
        .save(&write("s", "a.txt", "kept across restarts"))
        .unwrap();
    let mut restarted = LocalStore::new(Some(root.clone()));
    let r = &saved.output.output_ref;
    let got = restarted.read(&request("s", "call-1", r, 5, 6)).unwrap();
    assert_eq!(got.bytes, b"across");
    // Now known as session s's: foreign to t.
    assert_eq!(
        restarted
            .read(&request("t", "call-1", r, 0, 1))
            .unwrap_err()
            .output_error(),
        OutputError::Foreign
    );
    // Another session's directory doesn't have it, and it is never guessed elsewhere.
    assert_eq!(
        LocalStore::new(Some(root.clone()))
            .read(&request("t", "call-1", r, 0, 1))
            .unwrap_err()
            .output_error(),
        OutputError::Unknown
    );
    // Nor does a store with no root yet.
    let parent = tempfile::tempdir().unwrap();
    let mut fresh = LocalStore::in_temp_dir(parent.path().to_owned());
    assert_eq!(
        fresh
            .read(&request("s", "call-1", r, 0, 1))
            .unwrap_err()
            .output_error(),
        OutputError::Unknown
    );
    assert!(files(parent.path()).is_empty(), "a read makes nothing");
}

/// A 10 MB result spills to a preview within the cap, and the walk at the largest page reads it
/// back byte for byte (sha256 equal).
#[test]
fn spill_03_06_out_04_ten_megabytes_round_trip() {
    use sha2::{Digest, Sha256};
    let dir = tempfile::tempdir().unwrap();
    let mut store = LocalStore::new(Some(dir.path().join("r")));
    let text: String = (0..450_000).map(|i| format!("{i:>10} ünïcödé\n")).collect();
    assert!(text.len() >= 10_000_000);
    let started = Instant::now();
    let (shown, whole) = spill_and_walk(&mut store, &text, 1_048_576);
    eprintln!(
        "10 MB spill + walk: {} bytes in {:?}",
        text.len(),
        started.elapsed()
    );
    assert_eq!(Sha256::digest(&whole), Sha256::digest(text.as_bytes()));
    let preview = shown.split("\n\n(Omitted ").next().unwrap();
    assert!(preview.len() <= 1000);
}

/// A host session's files (written once for both drivers): recording, the transcript file is
/// created at once, the client's recorder writes a header saying the driver's description, and
/// the files append what they are given.
#[test]
fn session_files_record_into_the_transcript_file() {
    use musewire_core::client::Input;
    use musewire_host::Driven;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let config = ClientConfig::default();
    let mut driven: Driven<(), SessionFiles> = SessionFiles::open(
        config.clone(),
        Some(&path),
        Instant::now(),
        "recorded by a test",
    )
    .unwrap();
    assert_eq!(
        fs::read(&path).unwrap(),
        b"",
        "created before anything is recorded"
    );
    let (_, recorded, _) = driven.handle(Instant::now(), Input::Timeout, || None);
    let header: serde_json::Value =
        serde_json::from_slice(recorded.split(|&b| b == b'\n').next().unwrap()).unwrap();
    assert_eq!(header["description"], "recorded by a test");

    let mut files = SessionFiles::create(&config, Some(&path)).unwrap();
    files.record(&recorded).unwrap();
    files.record(b"more\n").unwrap();
    let mut expected = recorded.clone();
    expected.extend_from_slice(b"more\n");
    assert_eq!(fs::read(&path).unwrap(), expected);
}

/// Not recording: no recorder, no file, and recording nothing succeeds.
#[test]
fn session_files_without_recording_write_nothing() {
    use musewire_core::client::Input;
    use musewire_host::Driven;
    let dir = tempfile::tempdir().unwrap();
    let config = ClientConfig::default();
    let mut driven: Driven<(), SessionFiles> =
        SessionFiles::open(config.clone(), None, Instant::now(), "unused").unwrap();
    let (_, recorded, _) = driven.handle(Instant::now(), Input::Timeout, || None);
    assert!(recorded.is_empty());
    let mut files = SessionFiles::create(&config, None).unwrap();
    files.record(b"ignored").unwrap();
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A transcript file that can't be created is the opening's error (as the drivers' spawn
/// reported it before).
#[test]
fn session_files_a_transcript_that_cannot_be_created_fails_the_opening() {
    use musewire_host::Driven;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("session.jsonl");
    let opened: io::Result<Driven<(), SessionFiles>> = SessionFiles::open(
        ClientConfig::default(),
        Some(&path),
        Instant::now(),
        "unused",
    );
    assert_eq!(opened.unwrap_err().kind(), io::ErrorKind::NotFound);
}

/// Security: a transcript is created private (0600), and a symlink planted where it goes is
/// refused, never followed (its target is left untouched).
#[test]
fn session_files_a_transcript_is_private_and_never_written_through_a_symlink() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let mut files = SessionFiles::create(&ClientConfig::default(), Some(&path)).unwrap();
    files.record(b"{}\n").unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");

    let target = dir.path().join("elsewhere");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(SessionFiles::create(&ClientConfig::default(), Some(&link)).is_err());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}

/// SPILL-05: a policy without a store answers every save with the no-store failure.
#[test]
fn spill_05_session_files_without_a_store_fail_the_save() {
    let mut files = SessionFiles::create(&ClientConfig::default(), None).unwrap();
    let failed = files.save(&write("abc", "out.txt", "hello")).unwrap_err();
    assert_eq!(failed, SaveFailure::no_store());
}

/// SPILL-06: a policy with a store saves in the configured spill directory, privately.
#[test]
fn spill_06_session_files_save_in_the_configured_spill_dir() {
    let dir = tempfile::tempdir().unwrap();
    let config = ClientConfig {
        spill: SpillPolicy {
            max_inline_bytes: Some(4),
            has_store: true,
        },
        spill_dir: Some(dir.path().join("spill")),
        ..ClientConfig::default()
    };
    let mut files = SessionFiles::create(&config, None).unwrap();
    let saved = files.save(&write("abc", "out.txt", "hello")).unwrap();
    let path = PathBuf::from(&saved.spill_ref.locator);
    assert!(path.starts_with(dir.path().join("spill")));
    assert_eq!(fs::read_to_string(&path).unwrap(), "hello");
    assert_eq!(mode(&path), 0o600);
}
