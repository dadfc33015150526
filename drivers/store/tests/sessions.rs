//! An agent's session folder (STORE-01..03): session file names, the folder opened without
//! following a symlink, a fork under a fresh id in the agent's naming scheme, and a delete
//! of only a regular session file: `cargo test -p musewire-store --test sessions`.

use std::fs;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::Path;

use musewire_store::sessions::{
    iso_8601, SessionFileError, SessionFileName, SessionFolder, SessionNaming,
};
use musewire_store::StoreError;
use musewire_wire::{SessionHeader, SessionLine};

const HEADER: &str = r#"{"type":"session","version":3,"id":"session-1","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/w","title":"kept"}"#;
const ENTRIES: &str = concat!(
    r#"{"type":"message","id":"entry-1","parentId":null,"timestamp":"2026-05-01T10:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
    "\n",
    r#"{"type":"custom","id":"entry-2","parentId":"entry-1","timestamp":"2026-05-01T10:00:02.000Z","customType":"musewire.todos","data":{"phases":[]}}"#,
    "\n",
);

fn name(name: &str) -> SessionFileName {
    SessionFileName::new(name).unwrap()
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

/// A folder made by the store, with `session-1.jsonl` in it.
fn folder(dir: &Path) -> SessionFolder {
    let folder = SessionFolder::open_or_create(&dir.join("sessions")).unwrap();
    fs::write(
        folder.path().join("session-1.jsonl"),
        format!("{HEADER}\n{ENTRIES}"),
    )
    .unwrap();
    folder
}

/// The header among the first lines of `text`, and the lines after it.
fn header_of(text: &str) -> (SessionHeader, String) {
    let mut lines = text.split_inclusive('\n');
    for line in lines.by_ref() {
        if let Ok(SessionLine::Header(header)) = serde_json::from_str(line) {
            return (header, lines.collect());
        }
    }
    panic!("no header in {text}")
}

#[test]
fn store_01_a_session_file_name_is_one_jsonl_segment() {
    for good in [
        "session-1.jsonl",
        "2026-05-01T10-00-00-000Z_0196.jsonl",
        "a b.jsonl",
    ] {
        assert_eq!(name(good).as_str(), good);
    }
    assert_eq!(name("session-7.jsonl").stem(), "session-7");
    let long = format!("{}.jsonl", "x".repeat(250));
    for bad in [
        "../session-1.jsonl",
        "sub/session-1.jsonl",
        "/tmp/session-1.jsonl",
        ".jsonl",
        ".hidden.jsonl",
        "..",
        "session-1.json",
        "session-1",
        "a\0.jsonl",
        long.as_str(),
        "",
    ] {
        assert!(
            matches!(
                SessionFileName::new(bad),
                Err(SessionFileError::BadName { .. })
            ),
            "{bad:?}"
        );
    }
}

#[test]
fn store_01_the_folder_is_made_0700_and_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let made = SessionFolder::open_or_create(&dir.path().join("new")).unwrap();
    assert_eq!(mode(made.path()), 0o700);
    assert!(matches!(
        SessionFolder::open(&dir.path().join("missing")),
        Err(SessionFileError::NotFound { .. })
    ));
    // A symlink at the folder's path, even to a good folder, is refused.
    symlink(made.path(), dir.path().join("link")).unwrap();
    assert!(matches!(
        SessionFolder::open(&dir.path().join("link")),
        Err(SessionFileError::Folder(StoreError::NotADirectory { .. }))
    ));
    // One that others can write in is refused; a mkdir's 0755 is fine.
    let open = dir.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    assert!(matches!(
        SessionFolder::open(&open),
        Err(SessionFileError::Folder(StoreError::NotPrivate { .. }))
    ));
    fs::set_permissions(&open, fs::Permissions::from_mode(0o755)).unwrap();
    SessionFolder::open(&open).unwrap();
}

#[test]
fn store_02_a_fork_is_the_file_under_a_fresh_id_in_the_bundled_agents_scheme() {
    let dir = tempfile::tempdir().unwrap();
    let mut folder = folder(dir.path());
    // session-2 is taken (by a file of another id): the fork is session-3.
    fs::write(folder.path().join("session-2.jsonl"), "").unwrap();
    let fork = folder
        .fork(&name("session-1.jsonl"), &SessionNaming::Numbered)
        .unwrap();
    assert_eq!(fork.name.as_str(), "session-3.jsonl");
    assert_eq!(fork.session_id, "session-3");
    assert_eq!(fork.path, folder.path().join("session-3.jsonl"));
    assert_eq!(mode(&fork.path), 0o600);
    let text = fs::read_to_string(&fork.path).unwrap();
    assert!(
        text.starts_with(r#"{"type":"session","#),
        "type first: {text}"
    );
    let (header, rest) = header_of(&text);
    assert_eq!(header.id, "session-3");
    let source = folder.path().join("session-1.jsonl");
    assert_eq!(header.parent_session.as_deref(), source.to_str());
    assert_eq!(
        (header.timestamp.as_str(), header.cwd.as_str()),
        ("2026-05-01T10:00:00.000Z", "/w")
    );
    assert!(text.contains(r#""title":"kept""#), "unknown members kept");
    assert_eq!(rest, ENTRIES, "the entries byte for byte");
    // The source is untouched.
    assert_eq!(
        fs::read_to_string(&source).unwrap(),
        format!("{HEADER}\n{ENTRIES}")
    );
}

#[test]
fn store_02_a_fork_in_omps_scheme_keeps_the_title_slot_before_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let folder = SessionFolder::open_or_create(&dir.path().join("sessions")).unwrap();
    let slot = format!(
        "{{\"title\":\"t\",\"updatedAt\":\"x\"}}{}\n",
        " ".repeat(40)
    );
    let source = "2026-05-01T09-00-00-000Z_0196aaaa-0000-7000-8000-000000000000.jsonl";
    fs::write(
        folder.path().join(source),
        format!("{slot}{HEADER}\n{ENTRIES}"),
    )
    .unwrap();
    let mut draws = [[0xAB; 8], [0xCD; 8]].into_iter().cycle();
    let mut folder = folder.with_random(Box::new(move || Ok(draws.next().unwrap())));
    let unix_ms = 1_777_629_600_123;
    let fork = folder
        .fork(&name(source), &SessionNaming::Timestamped { unix_ms })
        .unwrap();
    let id = "019de2fb-197b-7bab-abab-ababababcdcd";
    assert_eq!(fork.session_id, id);
    assert_eq!(
        fork.name.as_str(),
        format!("2026-05-01T10-00-00-123Z_{id}.jsonl")
    );
    let text = fs::read_to_string(&fork.path).unwrap();
    assert!(text.starts_with(&slot), "the slot verbatim, first");
    let (header, rest) = header_of(&text);
    assert_eq!(header.id, id);
    assert_eq!(rest, ENTRIES);
    for (ms, iso) in [
        (0, "1970-01-01T00:00:00.000Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),
        (4_102_444_799_999, "2099-12-31T23:59:59.999Z"),
    ] {
        assert_eq!(iso_8601(ms), iso);
    }
}

#[test]
fn store_02_a_forks_source_is_never_followed_and_must_be_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut folder = folder(dir.path());
    let outside = dir.path().join("outside.jsonl");
    fs::write(&outside, format!("{HEADER}\n")).unwrap();
    // A symlink planted in the folder, to a session file outside it or inside it.
    symlink(&outside, folder.path().join("planted.jsonl")).unwrap();
    symlink(
        folder.path().join("session-1.jsonl"),
        folder.path().join("inner.jsonl"),
    )
    .unwrap();
    fs::create_dir(folder.path().join("dir.jsonl")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        folder.path().join("fifo.jsonl"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    for source in ["planted.jsonl", "inner.jsonl", "dir.jsonl", "fifo.jsonl"] {
        assert!(
            matches!(
                folder.fork(&name(source), &SessionNaming::Numbered),
                Err(SessionFileError::NotAFile { .. })
            ),
            "{source}"
        );
    }
    assert!(matches!(
        folder.fork(&name("gone.jsonl"), &SessionNaming::Numbered),
        Err(SessionFileError::NotFound { .. })
    ));
    fs::write(folder.path().join("notes.jsonl"), "not a session\n{}\n").unwrap();
    assert!(matches!(
        folder.fork(&name("notes.jsonl"), &SessionNaming::Numbered),
        Err(SessionFileError::NoHeader { .. })
    ));
    assert!(
        !folder.path().join("session-2.jsonl").exists(),
        "nothing made for a refused fork"
    );
}

#[test]
fn store_02_a_symlink_planted_at_the_new_name_is_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let mut folder = folder(dir.path());
    let target = dir.path().join("target");
    symlink(&target, folder.path().join("session-2.jsonl")).unwrap();
    let fork = folder
        .fork(&name("session-1.jsonl"), &SessionNaming::Numbered)
        .unwrap();
    assert_eq!(
        fork.name.as_str(),
        "session-3.jsonl",
        "the link's name is taken"
    );
    assert!(!target.exists(), "nothing written through the link");
    assert!(fs::symlink_metadata(folder.path().join("session-2.jsonl"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn store_03_delete_removes_only_a_regular_session_file_of_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let folder = folder(dir.path());
    let outside = dir.path().join("outside.jsonl");
    fs::write(&outside, "keep").unwrap();
    symlink(&outside, folder.path().join("planted.jsonl")).unwrap();
    fs::create_dir(folder.path().join("dir.jsonl")).unwrap();
    for refused in ["planted.jsonl", "dir.jsonl"] {
        assert!(
            matches!(
                folder.delete(&name(refused)),
                Err(SessionFileError::NotAFile { .. })
            ),
            "{refused}"
        );
    }
    assert!(fs::symlink_metadata(folder.path().join("planted.jsonl")).is_ok());
    assert_eq!(fs::read_to_string(&outside).unwrap(), "keep");
    assert!(folder.path().join("dir.jsonl").is_dir());
    assert!(matches!(
        folder.delete(&name("gone.jsonl")),
        Err(SessionFileError::NotFound { .. })
    ));
    // A name out of the folder never gets this far.
    assert!(SessionFileName::new("../outside.jsonl").is_err());
    folder.delete(&name("session-1.jsonl")).unwrap();
    assert!(!folder.path().join("session-1.jsonl").exists());
}
