//! The Python host contraagent 0.9.2 (PyPI), through its unmodified omp RPC backend, drives
//! `musewire agent` in omp's place (AGENT-03): it launches it with omp's flags, asks
//! `--version`, negotiates v2, prompts, reads the turn and `get_state`, and on its own
//! deadline sends `abort` and closes stdin, after which the agent and its shell end
//! (AGENT-01, AGENT-02). contraagent is installed by `conformance/peers/install-python.sh`;
//! without it the test fails, unless `MUSEWIRE_SKIP_PEERS=1` says to skip.

mod process;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use process::assert_group_gone;
use serde_json::Value;

/// The virtual environment `install-python.sh` makes.
fn python() -> Option<PathBuf> {
    let python =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/peers/python/bin/python");
    if python.exists() {
        return Some(python);
    }
    musewire_live::peers::missing("contraagent (conformance/peers/install-python.sh)");
    None
}

/// A private directory holding `omp`, a script that runs `musewire agent` with the arguments
/// it is given: contraagent launches its binary as omp (`omp --mode rpc …`), and omp's flags
/// go to the agent subcommand.
fn stand_in(name: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "musewire-contraagent-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let omp = dir.join("omp");
    let script = format!(
        "#!/bin/sh\nexec '{}' agent \"$@\"\n",
        env!("CARGO_BIN_EXE_musewire")
    );
    std::fs::write(&omp, script).unwrap();
    std::fs::set_permissions(&omp, std::fs::Permissions::from_mode(0o700)).unwrap();
    (dir, omp)
}

/// Runs `drive.py` (one contraagent launch per prompt) and returns each launch's result.
fn drive(python: &Path, omp: &Path, cwd: &Path, timeout_s: u32, prompts: &[&str]) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contraagent/drive.py");
    let out = Command::new(python)
        .arg(script)
        .arg(omp)
        .arg(cwd)
        .arg(timeout_s.to_string())
        .args(prompts)
        .env("MUSEWIRE_AGENT_CLOCK_MS", "1234")
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "drive.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(results.len(), prompts.len());
    results
}

#[test]
fn agent_03_contraagent_drives_musewire_agent_through_its_omp_rpc_backend() {
    let Some(python) = python() else { return };
    let (dir, omp) = stand_in("turns");
    let results = drive(
        &python,
        &omp,
        &dir,
        600,
        &["hello from contraagent", "bash echo hi"],
    );
    let hello = &results[0];
    assert_eq!(hello["ok"], true, "{hello}");
    assert_eq!(hello["stop"], "completed");
    assert_eq!(hello["result_text"], "hello from contraagent");
    assert_eq!(hello["session_id"], "session-1", "read from get_state");
    assert_eq!(
        hello["cli_version"],
        env!("CARGO_PKG_VERSION"),
        "from --version"
    );
    assert_eq!(hello["context_window"], 1_000_000);
    let argv: Vec<&str> = hello["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    for flag in [
        "--no-session",
        "--thinking",
        "--approval-mode",
        "--config",
        "--max-time",
    ] {
        assert!(argv.contains(&flag), "contraagent passed {flag}: {argv:?}");
    }
    let bash = &results[1];
    assert_eq!(bash["ok"], true, "{bash}");
    assert_eq!(bash["result_text"], "bash returned: hi");
    assert_eq!(bash["tool_uses"]["bash"], 1);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn agent_01_02_03_contraagent_deadline_ends_the_agent_and_its_shell() {
    let Some(python) = python() else { return };
    let (dir, omp) = stand_in("deadline");
    let file = dir.join("pgid");
    let prompt = format!(
        "bash echo $$ > {0}.tmp && mv {0}.tmp {0}; sleep 300",
        file.display()
    );
    let start = Instant::now();
    let results = drive(&python, &omp, &dir, 2, &[&prompt]);
    let late = &results[0];
    assert_eq!(late["stop"], "timeout", "{late}");
    assert_eq!(late["tool_uses"]["bash"], 1);
    // contraagent sends abort at its deadline and closes stdin; the agent ends at once
    // rather than after contraagent's own kill.
    assert!(
        late["seconds"].as_f64().unwrap() < 5.0,
        "the agent ended by itself: {late}"
    );
    let pgid: u32 = std::fs::read_to_string(&file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_group_gone(pgid);
    assert!(start.elapsed() < Duration::from_secs(60));
    let _ = std::fs::remove_dir_all(dir);
}
