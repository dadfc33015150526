//! Differential test: `musewire decode` / `musewire encode` against the reference agent's own
//! framing code (oh-my-pi 18.2.3 `RpcFrameDecoder` / `RpcFrameEncoder`, run by the pinned bun
//! through `conformance/reference/decode.ts` and `encode.ts`).
//!
//! Corpus: `conformance/corpus/frame/*.stream` (small, committed) and the multi-MB streams that
//! `conformance/reference/gen-corpus.ts large` writes into the cargo target tmp dir. For every
//! stream both decoders must print the same number of lines, equal frames (as JSON values,
//! numbers compared as f64: the reference is JavaScript), equal error records on `rule` and
//! `message`, and exit with the same status. Rules: FRAME-01, FRAME-02, FRAME-05, FRAME-07,
//! FRAME-08, FRAME-09, FRAME-10, FRAME-11, FRAME-12, FRAME-13.
//!
//! Needs the peers (`bash conformance/peers/install.sh`). Without them the tests fail,
//! unless `MUSEWIRE_SKIP_PEERS=1` says to skip (`musewire_live::peers::missing`).
//!
//! Every disagreement is listed (stream, output line, both sides) before the test fails; the
//! list is also written to `$CARGO_TARGET_TMPDIR/differential-<test>.txt`.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

fn musewire() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_musewire"))
}

/// The pinned bun, or `None` when it is not installed and `MUSEWIRE_SKIP_PEERS=1` says to skip.
fn bun() -> Option<PathBuf> {
    let bun = repo_root().join("conformance/peers/node_modules/.bin/bun");
    if bun.exists() {
        return Some(bun);
    }
    musewire_live::peers::missing(&bun.display().to_string());
    None
}

fn reference_script(name: &str) -> PathBuf {
    repo_root().join("conformance/reference").join(name)
}

fn small_corpus() -> PathBuf {
    repo_root().join("conformance/corpus/frame")
}

/// The large corpus, generated once per test binary run.
fn large_corpus(bun: &Path) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("frame-corpus-large");
        let _ = fs::remove_dir_all(&dir);
        let status = Command::new(bun)
            .arg(reference_script("gen-corpus.ts"))
            .arg("large")
            .arg(&dir)
            .status()
            .expect("run gen-corpus.ts");
        assert!(status.success(), "gen-corpus.ts large failed");
        dir
    })
    .clone()
}

struct Output {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: Option<i32>,
}

/// Runs `cmd` with `input` (a file) on stdin.
fn run(mut cmd: Command, input: &Path) -> Output {
    let out = cmd
        .stdin(Stdio::from(File::open(input).expect("open input")))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    Output {
        stdout: out.stdout,
        stderr: out.stderr,
        code: out.status.code(),
    }
}

fn musewire_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(musewire());
    c.args(args);
    c
}

fn bun_cmd(bun: &Path, script: &str, args: &[&str]) -> Command {
    let mut c = Command::new(bun);
    c.current_dir(repo_root())
        .arg(reference_script(script))
        .args(args);
    c
}

/// JSON equality with numbers compared as f64 (JavaScript numbers).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || (x.as_f64().is_some() && x.as_f64() == y.as_f64())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

enum Line {
    Frame(Value),
    Error { rule: String, message: String },
    Garbage,
}

fn classify(line: &[u8]) -> Line {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(map)) if map.len() == 1 && map.contains_key("musewire_error") => {
            let e = &map["musewire_error"];
            Line::Error {
                rule: e
                    .get("rule")
                    .and_then(Value::as_str)
                    .unwrap_or("<no rule>")
                    .to_owned(),
                message: e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("<no message>")
                    .to_owned(),
            }
        }
        Ok(v) => Line::Frame(v),
        Err(_) => Line::Garbage,
    }
}

fn clip(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    if s.chars().count() <= 240 {
        s.into_owned()
    } else {
        let head: String = s.chars().take(200).collect();
        format!("{head}… ({} bytes)", bytes.len())
    }
}

fn lines(out: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
    if v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

/// Compares two decoder outputs; returns one description per disagreement.
fn compare(
    name: &str,
    ours: &Output,
    theirs: &Output,
    ours_label: &str,
    theirs_label: &str,
) -> Vec<String> {
    let mut diffs = Vec::new();
    let a = lines(&ours.stdout);
    let b = lines(&theirs.stdout);
    for i in 0..a.len().max(b.len()) {
        let (la, lb) = (a.get(i), b.get(i));
        let same = match (la, lb) {
            // byte-identical lines agree even when serde_json cannot read them (a lone
            // surrogate escape such as "\ud83d" is valid JSON text that JSON.parse accepts)
            (Some(x), Some(y)) if x == y => true,
            (Some(x), Some(y)) => match (classify(x), classify(y)) {
                (Line::Frame(x), Line::Frame(y)) => json_eq(&x, &y),
                (
                    Line::Error {
                        rule: r1,
                        message: m1,
                    },
                    Line::Error {
                        rule: r2,
                        message: m2,
                    },
                ) => r1 == r2 && m1 == m2,
                _ => false,
            },
            _ => false,
        };
        if !same {
            let show = |l: Option<&&[u8]>| l.map_or("<no line>".to_owned(), |l| clip(l));
            diffs.push(format!(
                "{name}: output line {}:\n    {ours_label:>9}: {}\n    {theirs_label:>9}: {}",
                i + 1,
                show(la),
                show(lb)
            ));
        }
    }
    if a.len() != b.len() {
        diffs.push(format!(
            "{name}: {ours_label} printed {} lines, {theirs_label} {}",
            a.len(),
            b.len()
        ));
    }
    if ours.code != theirs.code {
        diffs.push(format!(
            "{name}: exit status {ours_label} {:?}, {theirs_label} {:?} ({ours_label} stderr: {})",
            ours.code,
            theirs.code,
            clip(&ours.stderr)
        ));
    }
    diffs
}

fn report(test: &str, diffs: &[String], checked: usize) {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("differential-{test}.txt"));
    let _ = fs::write(&path, diffs.join("\n") + "\n");
    assert!(checked > 0, "{test}: no corpus stream checked");
    if !diffs.is_empty() {
        panic!(
            "{test}: {} disagreement(s) over {checked} stream(s) (also in {}):\n{}",
            diffs.len(),
            path.display(),
            diffs.join("\n")
        );
    }
    eprintln!("{test}: {checked} stream(s), musewire decode agrees with the reference");
}

fn streams(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "stream")
                && p.file_name().unwrap().to_string_lossy().starts_with(prefix)
        })
        .collect();
    v.sort();
    v
}

/// Decodes every stream named `prefix*` in the given corpora with both decoders.
fn differential(test: &str, prefix: &str, small: bool, large: bool) {
    let Some(bun) = bun() else { return };
    let mut files = Vec::new();
    if small {
        files.extend(streams(&small_corpus(), prefix));
    }
    if large {
        files.extend(streams(&large_corpus(&bun), prefix));
    }
    let mut diffs = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let ours = run(musewire_cmd(&["decode"]), f);
        let theirs = run(bun_cmd(&bun, "decode.ts", &[]), f);
        if theirs.code != Some(0) && theirs.code != Some(1) {
            panic!(
                "reference decode.ts crashed on {name}: {}",
                clip(&theirs.stderr)
            );
        }
        diffs.extend(compare(&name, &ours, &theirs, "musewire", "reference"));
    }
    report(test, &diffs, files.len());
}

// ------------------------------------------------------------------------------------------
// Decoder differential tests, one per rule family.

/// FRAME-01: LF splitting, CR stripping, blank lines, final line without LF, U+2028/U+2029,
/// escapes, duplicate keys, whitespace, numbers.
#[test]
fn frame01_line_splitting_matches_reference() {
    differential("frame01", "frame01-", true, false);
}

/// FRAME-02: lines over maxFrameBytes (1,048,576 bytes with the LF) are reported and skipped.
#[test]
fn frame02_line_limit_matches_reference() {
    differential("frame02", "frame02-", false, true);
}

/// FRAME-05: rpc_chunk before a successful v2 negotiate_protocol response is fatal.
#[test]
fn frame05_negotiation_matches_reference() {
    differential("frame05", "frame05-", true, false);
}

/// FRAME-07: chunk metadata (chunkId, index, count, byteLength), every field wrong every way,
/// and the JavaScript-accepted edges (1.0, -0, 1e0, UTF-16 length of chunkId).
#[test]
fn frame07_chunk_metadata_matches_reference() {
    differential("frame07", "frame07-", true, false);
}

/// FRAME-08: canonical padded base64 data and the 262,144-byte payload limit.
#[test]
fn frame08_chunk_data_matches_reference() {
    differential("frame08", "frame08-", true, true);
}

/// FRAME-09: sequence start, mismatch, exceeds, length mismatch, interrupted, truncated by EOF.
#[test]
fn frame09_sequences_match_reference() {
    differential("frame09", "frame09-", true, true);
}

/// FRAME-10: non-object plain lines; reassembled payloads that are not UTF-8, not JSON, not an
/// object.
#[test]
fn frame10_reassembled_payloads_match_reference() {
    differential("frame10", "frame10-", true, true);
}

/// FRAME-13: lines that are not JSON are reported and decoding goes on.
#[test]
fn frame13_non_json_lines_match_reference() {
    differential("frame13", "frame13-", true, false);
}

/// FRAME-07/08/09/10: valid v2 streams with envelopes a fast path could get wrong, and streams
/// written by the real RpcFrameEncoder (FRAME-11).
#[test]
fn valid_v2_streams_match_reference() {
    differential("valid-v2", "valid-v2-", false, true);
}

/// FRAME-01/12: v1 streams, including the real encoder's over-limit shrinking.
#[test]
fn valid_v1_streams_match_reference() {
    differential("valid-v1", "valid-v1-", false, true);
}

/// Every corpus stream is covered by one of the tests above, and the committed corpus is what
/// gen-corpus.ts writes.
#[test]
fn corpus_is_complete_and_up_to_date() {
    let Some(bun) = bun() else { return };
    let families = [
        "frame01-",
        "frame02-",
        "frame05-",
        "frame07-",
        "frame08-",
        "frame09-",
        "frame10-",
        "frame13-",
        "valid-v1-",
        "valid-v2-",
    ];
    for dir in [small_corpus(), large_corpus(&bun)] {
        for f in streams(&dir, "") {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                families.iter().any(|p| name.starts_with(p)),
                "{name} is not checked by any test"
            );
        }
    }
    let fresh = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("frame-corpus-small");
    let _ = fs::remove_dir_all(&fresh);
    let status = Command::new(&bun)
        .arg(reference_script("gen-corpus.ts"))
        .arg("small")
        .arg(&fresh)
        .status()
        .expect("run gen-corpus.ts");
    assert!(status.success());
    let committed = streams(&small_corpus(), "");
    let generated = streams(&fresh, "");
    let names = |v: &[PathBuf]| {
        v.iter()
            .map(|p| p.file_name().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&committed),
        names(&generated),
        "regenerate: bun conformance/reference/gen-corpus.ts small conformance/corpus/frame"
    );
    for (c, g) in committed.iter().zip(&generated) {
        assert!(
            fs::read(c).unwrap() == fs::read(g).unwrap(),
            "{} is stale: regenerate the corpus",
            c.display()
        );
    }
}

// ------------------------------------------------------------------------------------------
// Encoder round trips and differential (FRAME-11, FRAME-12).

fn frames_file(bun: &Path) -> PathBuf {
    large_corpus(bun).join("roundtrip.frames.jsonl")
}

/// Checks that decoding `stream` (by `decoder`) gives back exactly the frames of `frames`.
fn check_roundtrip(test: &str, frames: &Path, stream: &Output, decoded: &Output, decoder: &str) {
    let mut diffs = Vec::new();
    if stream.code != Some(0) {
        diffs.push(format!(
            "{test}: encoder exit status {:?}: {}",
            stream.code,
            clip(&stream.stderr)
        ));
    }
    let input = fs::read(frames).unwrap();
    let want = Output {
        stdout: input,
        stderr: Vec::new(),
        code: Some(0),
    };
    diffs.extend(compare(
        "roundtrip.frames.jsonl",
        decoded,
        &want,
        decoder,
        "input",
    ));
    report(test, &diffs, 1);
}

fn encode_to_file(cmd: Command, frames: &Path, out: &Path) -> Output {
    let o = run(cmd, frames);
    fs::write(out, &o.stdout).unwrap();
    o
}

/// FRAME-11: `musewire encode --protocol 2` output, decoded by the reference, gives back the
/// input frames.
#[test]
fn frame11_musewire_encode_v2_decoded_by_reference() {
    let Some(bun) = bun() else { return };
    let frames = frames_file(&bun);
    let stream = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("roundtrip-musewire-v2.stream");
    let enc = encode_to_file(
        musewire_cmd(&["encode", "--protocol", "2"]),
        &frames,
        &stream,
    );
    let dec = run(bun_cmd(&bun, "decode.ts", &[]), &stream);
    check_roundtrip("frame11-musewire-encode", &frames, &enc, &dec, "reference");
}

/// FRAME-11: the reference encoder's v2 output, decoded by `musewire decode`, gives back the
/// input frames.
#[test]
fn frame11_reference_encode_v2_decoded_by_musewire() {
    let Some(bun) = bun() else { return };
    let frames = frames_file(&bun);
    let stream = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("roundtrip-reference-v2.stream");
    let enc = encode_to_file(
        bun_cmd(&bun, "encode.ts", &["--protocol", "2"]),
        &frames,
        &stream,
    );
    let dec = run(musewire_cmd(&["decode"]), &stream);
    check_roundtrip("frame11-reference-encode", &frames, &enc, &dec, "musewire");
}

/// FRAME-11/FRAME-12: `musewire encode` writes the same physical lines (as JSON values) as the
/// reference RpcFrameEncoder, in v1 (over-limit shrinking) and v2 (chunking, chunkId rpc-N).
#[test]
fn frame11_frame12_encode_matches_reference() {
    let Some(bun) = bun() else { return };
    let frames = frames_file(&bun);
    let mut diffs = Vec::new();
    for v in ["1", "2"] {
        let ours = run(musewire_cmd(&["encode", "--protocol", v]), &frames);
        let theirs = run(bun_cmd(&bun, "encode.ts", &["--protocol", v]), &frames);
        assert_eq!(
            theirs.code,
            Some(0),
            "reference encode.ts failed: {}",
            clip(&theirs.stderr)
        );
        diffs.extend(compare(
            &format!("encode --protocol {v}"),
            &ours,
            &theirs,
            "musewire",
            "reference",
        ));
    }
    report("encode", &diffs, 2);
}
