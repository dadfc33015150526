//! `musewire replay`: transcripts replay through the core; a mismatch is shown as a diff and
//! exits 1.

use std::process::Command;

fn transcripts() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../conformance/transcripts")
}

#[test]
fn replay_passes_the_committed_transcripts() {
    let files: Vec<_> = std::fs::read_dir(transcripts())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert!(files.len() > 20);
    let out = Command::new(env!("CARGO_BIN_EXE_musewire"))
        .arg("replay")
        .args(&files)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout
            .trim_end()
            .ends_with(&format!("{} transcripts, 0 failed", files.len())),
        "{stdout}"
    );
}

#[test]
fn replay_reports_a_mismatch_with_a_diff_and_exits_1() {
    let original =
        std::fs::read_to_string(transcripts().join("call-02-idless-failures.jsonl")).unwrap();
    let broken = original.replacen(
        "Unknown command: frobnicate",
        "Unknown command: something else",
        1,
    );
    assert_ne!(broken, original);
    let dir = std::env::temp_dir().join(format!("musewire-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("broken.jsonl");
    std::fs::write(&path, broken).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_musewire"))
        .arg("replay")
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL") && stdout.contains("expected:") && stdout.contains("actual:"),
        "{stdout}"
    );
}
