//! The coverage report: for each rule ID of `conformance/RULES.md`, the transcripts whose
//! header names it and the tests that name it.
//!
//! A test names a rule by its function name (the ID in snake case: `frame_09_…` covers
//! FRAME-09, `host_02_03_…` covers HOST-02 and HOST-03) or by a comment or doc comment in the
//! lines just above the function (`FRAME-09`, also `FRAME-07..09` for a range and
//! `FRAME-01/09` for a list). A test is a function with a `#[test]`-like attribute right above
//! it (and no `#[ignore]`), in the `tests/` trees of `core`, `core/wire`, `drivers/*` and `conformance` (a
//! test binary is a file there, or a folder whose `main.rs` names its modules) or the `src/`
//! trees of those crates.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The rule IDs of a rules catalogue, in order: every `- ID …` list item.
pub fn rule_ids(rules_md: &str) -> Vec<String> {
    rules_md
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|id| parse_id(id).is_some())
        .map(str::to_owned)
        .collect()
}

/// `("FRAME", 9)` for `"FRAME-09"`.
fn parse_id(id: &str) -> Option<(&str, u32)> {
    let (prefix, number) = id.split_once('-')?;
    let valid = !prefix.is_empty()
        && prefix.bytes().all(|b| b.is_ascii_uppercase())
        && (1..=3).contains(&number.len())
        && number.bytes().all(|b| b.is_ascii_digit());
    if !valid {
        return None;
    }
    Some((prefix, number.parse().ok()?))
}

fn format_id(prefix: &str, n: u32) -> String {
    format!("{prefix}-{n:02}")
}

/// The rule IDs a test's name spells in snake case, among `prefixes` (upper case).
pub fn ids_in_name(name: &str, prefixes: &BTreeSet<String>) -> BTreeSet<String> {
    let tokens: Vec<&str> = name.split('_').collect();
    let mut out = BTreeSet::new();
    for (i, token) in tokens.iter().enumerate() {
        let prefix = token.to_ascii_uppercase();
        if !prefixes.contains(&prefix) {
            continue;
        }
        for number in &tokens[i + 1..] {
            match number.parse::<u32>() {
                Ok(n) if (1..=3).contains(&number.len()) => {
                    out.insert(format_id(&prefix, n));
                }
                _ => break,
            }
        }
    }
    out
}

/// The rule IDs a comment names: `FRAME-09`, `FRAME-07..09`, `FRAME-01/09`.
pub fn ids_in_text(text: &str, prefixes: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = text.as_bytes();
    for prefix in prefixes {
        let needle = format!("{prefix}-");
        let mut from = 0;
        while let Some(pos) = text[from..].find(&needle) {
            let start = from + pos;
            from = start + needle.len();
            if start > 0 && bytes[start - 1].is_ascii_alphanumeric() {
                continue;
            }
            let digits = |at: usize| {
                let len = bytes[at..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                (len, text[at..at + len].parse::<u32>().ok())
            };
            let (len, Some(first)) = digits(from) else {
                continue;
            };
            out.insert(format_id(prefix, first));
            let after = from + len;
            let rest = &text[after..];
            if rest.starts_with("..") {
                if let (_, Some(last)) = digits(after + 2) {
                    for n in first..=last.min(first + 50) {
                        out.insert(format_id(prefix, n));
                    }
                }
            } else {
                let mut at = after;
                while text[at..].starts_with('/') {
                    match digits(at + 1) {
                        (len, Some(n)) => {
                            out.insert(format_id(prefix, n));
                            at += 1 + len;
                        }
                        _ => break,
                    }
                }
            }
        }
    }
    out
}

/// A test found in a source file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TestRef {
    /// `file_stem::function`.
    pub name: String,
    /// The rules it covers.
    pub rules: BTreeSet<String>,
}

/// The tests of one Rust source file, with the rules they name.
pub fn tests_in_source(stem: &str, source: &str, prefixes: &BTreeSet<String>) -> Vec<TestRef> {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = fn_name(line) else { continue };
        // The attributes and comments right above the function.
        let above: Vec<&str> = lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim())
            .take_while(|l| l.starts_with("#[") || l.starts_with("//"))
            .take(12)
            .collect();
        let is_test = above
            .iter()
            .any(|l| l.starts_with("#[") && l.contains("test]"));
        // An ignored test does not run in CI: it covers nothing.
        let ignored = above.iter().any(|l| l.starts_with("#[ignore"));
        if !is_test || ignored {
            continue;
        }
        let mut rules = ids_in_name(name, prefixes);
        for l in above.iter().filter(|l| l.starts_with("//")) {
            rules.extend(ids_in_text(l, prefixes));
        }
        if !rules.is_empty() {
            out.push(TestRef {
                name: format!("{stem}::{name}"),
                rules,
            });
        }
    }
    out
}

fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    for word in ["pub ", "pub(crate) ", "async ", "unsafe "] {
        rest = rest.strip_prefix(word).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&rest[..end])
}

fn rust_files(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            if recursive {
                rust_files(&path, true, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source files scanned for tests, under the workspace `root`.
pub fn test_sources(root: &Path) -> Vec<PathBuf> {
    let mut crates = vec![
        root.join("core"),
        root.join("core/wire"),
        root.join("conformance"),
    ];
    if let Ok(entries) = std::fs::read_dir(root.join("drivers")) {
        let mut drivers: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        drivers.sort();
        crates.extend(drivers);
    }
    let mut files = Vec::new();
    for krate in crates {
        rust_files(&krate.join("tests"), true, &mut files);
        rust_files(&krate.join("src"), true, &mut files);
    }
    files
}

/// How a test's name starts for the file at `path`: its file stem, or for a module of a
/// test binary that is a folder (`tests/acp/stop.rs`), the binary and the module (`acp::stop`;
/// `main.rs` is the binary itself).
fn test_path(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = path.parent();
    let binary = parent
        .filter(|dir| dir.parent().and_then(Path::file_name) == Some("tests".as_ref()))
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned());
    match binary {
        Some(binary) if stem == "main" || stem == "mod" => binary,
        Some(binary) => format!("{binary}::{stem}"),
        None => stem,
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleCoverage {
    /// The rule's ID, as `conformance/RULES.md` lists it (`FRAME-01`).
    pub id: String,
    /// Transcript file names whose header names it.
    pub transcripts: Vec<String>,
    /// Tests naming it.
    pub tests: Vec<String>,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// One entry per rule, in catalogue order.
    pub rules: Vec<RuleCoverage>,
    /// Rule IDs named by transcripts or tests that the catalogue does not have.
    pub unknown: BTreeMap<String, Vec<String>>,
}

impl Report {
    /// How many rules have at least one transcript or test.
    pub fn covered(&self) -> usize {
        self.rules
            .iter()
            .filter(|r| !r.transcripts.is_empty() || !r.tests.is_empty())
            .count()
    }

    /// The printed report: one line per rule, then `covered N of M rules`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let list = |items: &[String]| {
            if items.is_empty() {
                "-".to_owned()
            } else {
                items.join(", ")
            }
        };
        for rule in &self.rules {
            let status = if rule.transcripts.is_empty() && rule.tests.is_empty() {
                "UNCOVERED"
            } else {
                "ok"
            };
            out.push_str(&format!(
                "{:<9} {:<9} transcripts: {} | tests: {}\n",
                rule.id,
                status,
                list(&rule.transcripts),
                list(&rule.tests)
            ));
        }
        for (id, by) in &self.unknown {
            out.push_str(&format!(
                "warning: {id} is not in RULES.md (named by {})\n",
                by.join(", ")
            ));
        }
        out.push_str(&format!(
            "covered {} of {} rules\n",
            self.covered(),
            self.rules.len()
        ));
        out
    }
}

/// Builds the report for the workspace at `root`: `conformance/RULES.md`, the transcripts in
/// `conformance/transcripts/`, the tests of [`test_sources`].
pub fn build(root: &Path) -> Result<Report, String> {
    let rules_path = root.join("conformance/RULES.md");
    let rules_md = std::fs::read_to_string(&rules_path)
        .map_err(|e| format!("{}: {e}", rules_path.display()))?;
    let ids = rule_ids(&rules_md);
    let known: BTreeSet<String> = ids.iter().cloned().collect();
    let prefixes: BTreeSet<String> = ids
        .iter()
        .filter_map(|id| parse_id(id).map(|(p, _)| p.to_owned()))
        .collect();
    let mut transcripts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut tests: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut unknown: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in crate::transcript_files(&root.join("conformance/transcripts"))? {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let first = text.lines().next().unwrap_or_default();
        let header: crate::transcript::Header = serde_json::from_str(first)
            .map_err(|e| format!("{}: bad header: {e}", path.display()))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for id in header.rules {
            let map = if known.contains(&id) {
                &mut transcripts
            } else {
                &mut unknown
            };
            map.entry(id).or_default().push(name.clone());
        }
    }
    for path in test_sources(root) {
        let Ok(source) = std::fs::read_to_string(&path) else {
            continue;
        };
        let stem = test_path(&path);
        for test in tests_in_source(&stem, &source, &prefixes) {
            for id in test.rules {
                let map = if known.contains(&id) {
                    &mut tests
                } else {
                    &mut unknown
                };
                map.entry(id).or_default().push(test.name.clone());
            }
        }
    }
    let rules = ids
        .into_iter()
        .map(|id| RuleCoverage {
            transcripts: transcripts.remove(&id).unwrap_or_default(),
            tests: tests.remove(&id).unwrap_or_default(),
            id,
        })
        .collect();
    Ok(Report { rules, unknown })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefixes() -> BTreeSet<String> {
        ["FRAME", "HOST", "PAGE"].map(String::from).into()
    }

    #[test]
    fn ids_from_names_and_comments() {
        let ids = ids_in_name("host_02_03_tool_calls_stream", &prefixes());
        assert_eq!(ids, ["HOST-02", "HOST-03"].map(String::from).into());
        assert!(ids_in_name("turns_end_at_agent_end", &prefixes()).is_empty());
        let ids = ids_in_text("/// FRAME-01/09 and FRAME-07..08; XFRAME-05", &prefixes());
        assert_eq!(
            ids,
            ["FRAME-01", "FRAME-07", "FRAME-08", "FRAME-09"]
                .map(String::from)
                .into()
        );
    }

    #[test]
    fn a_module_of_a_test_binary_folder_names_the_binary_and_the_module() {
        assert_eq!(test_path(Path::new("core/tests/acp/stop.rs")), "acp::stop");
        assert_eq!(test_path(Path::new("core/tests/acp/main.rs")), "acp");
        assert_eq!(test_path(Path::new("core/tests/spill.rs")), "spill");
        assert_eq!(test_path(Path::new("core/src/acp/mod.rs")), "mod");
    }

    #[test]
    fn tests_need_a_test_attribute() {
        let src = "fn frame_01_helper() {}\n\n/// PAGE-07: walk\n#[test]\nfn walks() {}\n#[test]\n#[ignore]\nfn frame_02_x() {}\n";
        let found = tests_in_source("f", src, &prefixes());
        assert_eq!(
            found,
            vec![TestRef {
                name: "f::walks".into(),
                rules: ["PAGE-07".to_owned()].into()
            }]
        );
        assert_eq!(
            rule_ids("- FRAME-01 x\n- not a rule\n- HOST-07 y"),
            ["FRAME-01", "HOST-07"]
        );
    }
}
