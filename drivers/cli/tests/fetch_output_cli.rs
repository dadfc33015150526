//! `musewire fetch-output` and the stored-output line of `musewire prompt` (OUT-10, ours),
//! against `output_agent.py`, a stand-in agent that serves one stored output with
//! `read_output` in pages shorter than asked.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const REF: &str = "out-0a1b2c3d4e5f6071";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("musewire-fetch-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// 300,000 bytes of every byte value, in an order that is not periodic in the page size.
fn data(dir: &Path) -> (PathBuf, Vec<u8>) {
    let mut x: u32 = 12345;
    let bytes: Vec<u8> = (0..300_000)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect();
    let path = dir.join("data.bin");
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes)
}

fn agent(mode: &str, data: &Path) -> Vec<String> {
    vec![
        "python3".into(),
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/output_agent.py").into(),
        mode.into(),
        data.display().to_string(),
    ]
}

fn fetch(args: &[&str], agent: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_musewire"))
        .arg("fetch-output")
        .args(args)
        .arg("--")
        .args(agent)
        .output()
        .unwrap()
}

/// `fetch-output` of item `item`'s output (the stand-in's reference): `--session-id` when
/// given, `-o FILE` when given, then `extra`, against the stand-in in `mode`.
fn fetch_item(
    session_id: Option<&str>,
    item: &str,
    file: Option<&Path>,
    extra: &[&str],
    mode: &str,
    data: &Path,
) -> Output {
    let mut args = Vec::new();
    if let Some(id) = session_id {
        args.extend(["--session-id", id]);
    }
    args.extend(["--item-id", item, "--output-ref", REF]);
    if let Some(file) = file {
        args.extend(["-o", file.to_str().unwrap()]);
    }
    args.extend(extra);
    fetch(&args, &agent(mode, data))
}

/// `musewire prompt hi` (with `--json` or not) against the stand-in serving `data`.
fn prompt(json: bool, data: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_musewire"));
    command.args(["prompt", "hi"]);
    if json {
        command.arg("--json");
    }
    command
        .arg("--")
        .args(agent("serve", data))
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn out_10_fetch_output_writes_the_output_byte_for_byte_into_a_0600_file() {
    let dir = scratch("whole");
    let (data, bytes) = data(&dir);
    let file = dir.join("got.bin");
    let extra = ["--byte-len", "300000", "--page-bytes", "10000"];
    let out = fetch_item(Some("s-1"), "call-1", Some(&file), &extra, "serve", &data);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&file).unwrap(), bytes, "the output exactly");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // Not a terminal: no bar, one plain line. The agent's pages were 1 to 3 bytes short of
    // the 10,000 asked (advancing by byteLen, OUT-04), so more than 30 pages.
    let text = stderr(&out);
    let pages = text
        .strip_prefix("musewire fetch-output: 300000 bytes in ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(pages > 30, "{pages}");
    assert!(!text.contains('\x1b'), "{text:?}");
    assert!(out.stdout.is_empty());
}

#[test]
fn out_10_fetch_output_to_stdout_without_a_file() {
    let dir = scratch("stdout");
    let (data, bytes) = data(&dir);
    let out = fetch_item(Some("s-1"), "call-1", None, &[], "serve", &data);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, bytes);
}

#[test]
fn out_10_fetch_output_never_writes_through_a_symlink_or_over_a_file() {
    let dir = scratch("symlink");
    let (data, _) = data(&dir);
    // A symlink to a file that exists, and one to a file that does not (yet).
    let victim = dir.join("victim");
    std::fs::write(&victim, b"keep me").unwrap();
    let link = dir.join("link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let dangling = dir.join("dangling");
    let nowhere = dir.join("nowhere");
    std::os::unix::fs::symlink(&nowhere, &dangling).unwrap();
    let existing = dir.join("existing");
    std::fs::write(&existing, b"mine").unwrap();
    for target in [&link, &dangling, &existing] {
        let out = fetch_item(Some("s-1"), "call-1", Some(target), &[], "serve", &data);
        assert!(!out.status.success(), "{}", target.display());
        assert!(stderr(&out).contains("not overwritten"), "{}", stderr(&out));
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    assert!(
        !nowhere.exists(),
        "nothing created through the dangling link"
    );
    assert_eq!(std::fs::read(&existing).unwrap(), b"mine");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

/// Fetches `item` of session s-1 from the stand-in in `mode` into a fresh scratch `name`:
/// the fetch fails and leaves no partial file; its stderr.
fn fetch_fails(name: &str, item: &str, mode: &str) -> String {
    let dir = scratch(name);
    let (data, _) = data(&dir);
    let file = dir.join("got.bin");
    let out = fetch_item(Some("s-1"), item, Some(&file), &[], mode, &data);
    assert!(!out.status.success());
    assert!(!file.exists(), "no partial file left");
    stderr(&out)
}

#[test]
fn out_10_fetch_output_from_an_agent_that_does_not_offer_it_fails_and_leaves_no_file() {
    let text = fetch_fails("nooffer", "call-1", "nooffer");
    assert!(
        text.contains("does not serve read_output") && text.contains("OUT-10"),
        "{text}"
    );
}

#[test]
fn out_09_fetch_output_refuses_a_page_at_the_wrong_offset_and_leaves_no_file() {
    let text = fetch_fails("liar", "call-1", "liar");
    assert!(
        text.contains("a page refused: the page starts at"),
        "{text}"
    );
}

#[test]
fn out_07_fetch_output_reports_the_agents_failure_code() {
    let text = fetch_fails("foreign", "call-2", "serve");
    assert!(text.contains("(foreign)"), "{text}");
    let (data, _) = data(&scratch("foreign-path"));
    // A path is refused as such before anything starts (OUT-09): a usage error.
    let args = ["--item-id", "call-1", "--output-ref", "../secret"];
    let out = fetch(&args, &agent("serve", &data));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("a path, not an output reference"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn out_10_fetch_output_switches_to_the_session_file_first() {
    let dir = scratch("session");
    let (data, bytes) = data(&dir);
    // The stand-in starts in session s-1 and serves its output under the session it is in;
    // switched to the file s-7.jsonl it is in s-7, which get_state reports (no --session-id).
    let session = dir.join("s-7.jsonl");
    std::fs::write(&session, b"{}\n").unwrap();
    let file = dir.join("got.bin");
    // Not switched, the agent is in s-1: the output of s-7 is not its (OUT-07: foreign).
    let out = fetch_item(Some("s-7"), "call-1", Some(&file), &[], "serve", &data);
    assert!(stderr(&out).contains("(foreign)"), "{}", stderr(&out));
    assert!(!file.exists());
    let switch = ["--session", session.to_str().unwrap()];
    let out = fetch_item(None, "call-1", Some(&file), &switch, "serve", &data);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    // A session path the agent refuses fails the fetch, and leaves no file.
    let other = dir.join("other.bin");
    let missing = dir.join("missing.jsonl");
    let switch = ["--session", missing.to_str().unwrap()];
    let out = fetch_item(None, "call-1", Some(&other), &switch, "serve", &data);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("switch_session"), "{}", stderr(&out));
    assert!(!other.exists());
}

#[test]
fn out_02_prompt_shows_where_a_spilled_result_was_stored() {
    let dir = scratch("prompt");
    let (data, _) = data(&dir);
    let out = prompt(false, &data);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("full output stored as"))
        .unwrap_or_else(|| panic!("no stored-output line: {text}"));
    assert_eq!(
        line.trim(),
        format!(
            "full output stored as {REF} (300000 bytes, application/octet-stream); fetch it \
             with: musewire fetch-output --session-id s-1 --item-id call-1 --output-ref {REF} \
             --byte-len 300000 -o FILE"
        )
    );
    // With --json the event is printed as it came; no extra line.
    let out = prompt(true, &data);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("full output stored as"));
    assert!(text.contains("\"storedOutput\""));
}

#[test]
fn out_10_fetch_output_switches_the_bundled_agent_then_asks_only_when_offered() {
    // The bundled agent with a session folder (AGENT-05) and no --max-inline-bytes: it
    // takes the switch to its own session file, and offers no read_output, so none is sent.
    let dir = scratch("bundled");
    let sessions = dir.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let me = env!("CARGO_BIN_EXE_musewire");
    let bundled = [me, "agent", "--mode", "rpc", "--session-dir"].map(String::from);
    let mut bundled = bundled.to_vec();
    bundled.push(sessions.display().to_string());
    let out = Command::new(me)
        .args(["prompt", "hi", "--"])
        .args(&bundled)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let session = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a session file");
    let file = dir.join("got.bin");
    let args = [
        "--session",
        session.to_str().unwrap(),
        "--item-id",
        "call-1",
        "--output-ref",
        REF,
        "-o",
        file.to_str().unwrap(),
    ];
    let out = fetch(&args, &bundled);
    assert!(!out.status.success());
    // Past the switch (a refused switch would say so), refused before writing (OUT-10).
    let text = stderr(&out);
    assert!(text.contains("does not serve read_output"), "{text}");
    assert!(!text.contains("switch_session"), "{text}");
    assert!(!file.exists());
}

#[test]
fn out_08_10_prompt_then_fetch_output_from_the_restarted_bundled_agent() {
    // The bundled agent spills a bash output (SPILL-03); `musewire prompt` prints where it
    // went and the fetch-output line; a restarted agent on the same folders knows the
    // reference only once switched to the session (OUT-08), and then serves it whole.
    let dir = scratch("bundled-spill");
    let sessions = dir.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let me = env!("CARGO_BIN_EXE_musewire");
    let mut bundled: Vec<String> = [me, "agent", "--mode", "rpc", "--max-inline-bytes", "4096"]
        .map(String::from)
        .to_vec();
    bundled.extend([
        "--spill-dir".into(),
        dir.join("spill").display().to_string(),
    ]);
    bundled.extend(["--session-dir".into(), sessions.display().to_string()]);
    let command = "seq 1 100000 | sed 's/$/ é€/'";
    let expected = Command::new("sh")
        .args(["-c", command])
        .output()
        .unwrap()
        .stdout;
    let out = Command::new(me)
        .args(["prompt", &format!("bash {command}"), "--"])
        .args(&bundled)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let fetch_line = text
        .lines()
        .find_map(|l| l.split_once("fetch it with: musewire fetch-output "))
        .map(|(_, args)| args.to_owned())
        .unwrap_or_else(|| panic!("no stored-output line: {text}"));
    let mut args: Vec<&str> = fetch_line.split_whitespace().collect();
    assert_eq!(args.split_off(args.len() - 2), ["-o", "FILE"]);
    let at = |flag: &str| args[args.iter().position(|a| *a == flag).unwrap() + 1].to_owned();
    assert_eq!(at("--byte-len"), expected.len().to_string());
    let session_file = sessions.join(format!("{}.jsonl", at("--session-id")));
    // Restarted, not switched: the reference is not known yet.
    let file = dir.join("got.txt");
    let mut first = args.clone();
    first.extend(["-o", file.to_str().unwrap()]);
    let out = fetch(&first, &bundled);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("(unknown)"), "{}", stderr(&out));
    assert!(!file.exists());
    // Switched to its session file first: the whole output, byte for byte, in a 0600 file.
    first.extend(["--session", session_file.to_str().unwrap()]);
    let out = fetch(&first, &bundled);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&file).unwrap(), expected);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}
