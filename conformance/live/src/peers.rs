//! The real agents, installed by `conformance/peers/install.sh`, started in isolation: a
//! temporary HOME and agent dir, a dummy key, no inherited `OMP_*`/`PI_*`/`XDG_*`, and the
//! scripted model server as their only provider.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `conformance/peers/node_modules`.
pub fn node_modules() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../peers/node_modules")
}

/// The environment variable that lets a test run skip a peer that is not installed.
pub const SKIP_PEERS: &str = "MUSEWIRE_SKIP_PEERS";

/// Whether the agents are installed. A missing agent fails the test (see [`missing`]) unless
/// `MUSEWIRE_SKIP_PEERS=1` says to skip, when the test says so loudly and passes.
pub fn installed_or_skip() -> bool {
    let ok = node_modules().join(".bin/bun").exists()
        && omp_cli().exists()
        && Pi::ALL.iter().all(|pi| pi.cli().exists());
    if !ok {
        missing("the real agents (bun, omp, pi)");
    }
    ok
}

/// A peer a test needs (`what`) is not installed: a failure, unless `MUSEWIRE_SKIP_PEERS=1`
/// is set (and `CI` is not), when it prints a loud notice and returns, and the caller skips
/// the test. A peer test that passes without its peer would be a test that checks nothing.
pub fn missing(what: &str) {
    let asked = std::env::var_os(SKIP_PEERS).is_some_and(|v| v == "1");
    let ci = std::env::var_os("CI").is_some();
    assert!(
        asked && !ci,
        "{what} is not installed: run `bash conformance/peers/install.sh` (or set \
         {SKIP_PEERS}=1 to skip the tests that need it{})",
        if ci { "; not under CI" } else { "" }
    );
    eprintln!(
        "\n!!!! SKIPPED ({SKIP_PEERS}=1): {what} is not installed; this test checked nothing !!!!\n"
    );
}

/// The entry point of a pinned reference MCP server (`everything` or `filesystem`), run with
/// node.
pub fn mcp_server(name: &str) -> PathBuf {
    node_modules().join(format!("@modelcontextprotocol/server-{name}/dist/index.js"))
}

fn omp_cli() -> PathBuf {
    node_modules().join("@oh-my-pi/pi-coding-agent/dist/cli.js")
}

/// Which pi: the two pinned versions, installed side by side (different packages, one `pi`
/// bin name: the tests start each by its package path, never through `.bin/pi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pi {
    /// `@mariozechner/pi-coding-agent` 0.73.1, under node.
    V0_73,
    /// `@earendil-works/pi-coding-agent` 1.6.0: needs node >= 22.19, so under the pinned bun
    /// when node is older.
    V1_6,
}

impl Pi {
    /// Both pinned pis, oldest first.
    pub const ALL: [Pi; 2] = [Pi::V0_73, Pi::V1_6];

    /// The pinned version.
    pub fn version(self) -> &'static str {
        match self {
            Pi::V0_73 => "0.73.1",
            Pi::V1_6 => "1.6.0",
        }
    }

    /// A short name for scratch directories and test names.
    pub fn name(self) -> &'static str {
        match self {
            Pi::V0_73 => "pi073",
            Pi::V1_6 => "pi16",
        }
    }

    /// The CLI script.
    pub fn cli(self) -> PathBuf {
        match self {
            Pi::V0_73 => node_modules().join("@mariozechner/pi-coding-agent/dist/cli.js"),
            Pi::V1_6 => node_modules().join("@earendil-works/pi-coding-agent/dist/bundle/cli.js"),
        }
    }

    /// The runtime that runs [`Pi::cli`]: node, or the pinned bun for pi 1.6 under a node
    /// older than 22.19.
    pub fn runtime(self) -> PathBuf {
        match self {
            Pi::V0_73 => PathBuf::from("node"),
            Pi::V1_6 => modern_runtime(),
        }
    }
}

/// The runtime for a peer that needs node >= 22.19 (pi 1.6, acpx): node when it is that
/// new, else the pinned bun.
pub fn modern_runtime() -> PathBuf {
    if node_at_least(22, 19) {
        PathBuf::from("node")
    } else {
        node_modules().join(".bin/bun")
    }
}

/// acpx's CLI script (the ACP command-line client, 0.19.1), run by [`modern_runtime`].
pub fn acpx_cli() -> PathBuf {
    node_modules().join("acpx/dist/cli.js")
}

/// Whether `node --version` is at least `major.minor`.
fn node_at_least(major: u64, minor: u64) -> bool {
    let Ok(out) = Command::new("node").arg("--version").output() else {
        return false;
    };
    let version = String::from_utf8_lossy(&out.stdout);
    let mut parts = version
        .trim()
        .trim_start_matches('v')
        .split('.')
        .map(|p| p.parse::<u64>().unwrap_or(0));
    let (have_major, have_minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (have_major, have_minor) >= (major, minor)
}

/// A fresh scratch directory for one agent: `home/` and `work/` inside.
///
/// It outlives the test (a failed run's files are there to read), so the same name's
/// directories left by test processes that have ended are removed first: at most one a name
/// stays behind, not one a run (a recorded session's is about 100 MB).
pub fn scratch(name: &str) -> PathBuf {
    let prefix = format!("musewire-live-{name}-");
    remove_ended_runs(&prefix);
    let dir = std::env::temp_dir().join(format!("{prefix}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("work")).expect("scratch dir");
    dir
}

/// Removes `PREFIX<pid>` directories of the temporary folder whose process has ended (Linux,
/// where `/proc` says which are running; elsewhere nothing is removed).
fn remove_ended_runs(prefix: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn isolated(program: &Path, dir: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir(dir.join("work"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("OPENAI_API_KEY", "sk-dummy")
        .env("NO_COLOR", "1");
    command
}

/// `omp --mode rpc` (under bun) using the model server at `base_url` as provider `fake`,
/// on `fake-model` (`fake-model-2`, which reasons, is the other model it offers).
pub fn omp(dir: &Path, base_url: &str) -> Command {
    let agent_dir = dir.join("home/.omp/agent");
    std::fs::create_dir_all(&agent_dir).expect("agent dir");
    let models = format!(
        "providers:\n  fake:\n    baseUrl: {base_url}\n    api: openai-completions\n    apiKey: sk-fake\n    compat: {{supportsUsageInStreaming: true, supportsDeveloperRole: false, supportsStore: false}}\n    models:\n      - {{id: fake-model, name: Fake Model, reasoning: false, contextWindow: 1000000, maxTokens: 4096}}\n      - {{id: fake-model-2, name: Fake Model Two, reasoning: true, contextWindow: 1000000, maxTokens: 4096}}\n"
    );
    std::fs::write(agent_dir.join("models.yml"), models).expect("models.yml");
    let mut command = isolated(&node_modules().join(".bin/bun"), dir);
    command
        .arg(omp_cli())
        .args(["--mode", "rpc", "--model", "fake/fake-model", "--no-title"])
        .env("PI_CODING_AGENT_DIR", &agent_dir);
    command
}

/// `pi --mode rpc` (0.73.1 under node) using the model server at `base_url` as provider
/// `fake`; [`pi_version`] for the other pinned pi.
pub fn pi(dir: &Path, base_url: &str) -> Command {
    pi_version(Pi::V0_73, dir, base_url)
}

/// `pi --mode rpc` of version `pi` (under [`Pi::runtime`]) using the model server at
/// `base_url` as provider `fake`. Both versions read `models.json` from
/// `PI_CODING_AGENT_DIR`, with the same provider schema.
pub fn pi_version(pi: Pi, dir: &Path, base_url: &str) -> Command {
    let agent_dir = dir.join("home/.pi/agent");
    std::fs::create_dir_all(&agent_dir).expect("agent dir");
    let models = serde_json::json!({"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "sk-fake",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false, "supportsUsageInStreaming": true},
        "models": [{"id": "fake-model", "name": "Fake Model", "reasoning": false, "contextWindow": 1000000, "maxTokens": 4096},
            {"id": "fake-model-2", "name": "Fake Model Two", "reasoning": true, "contextWindow": 1000000, "maxTokens": 4096}]}}});
    std::fs::write(agent_dir.join("models.json"), models.to_string()).expect("models.json");
    let mut command = isolated(&pi.runtime(), dir);
    command
        .arg(pi.cli())
        .args([
            "--mode",
            "rpc",
            "--provider",
            "fake",
            "--model",
            "fake-model",
        ])
        .env("PI_CODING_AGENT_DIR", &agent_dir);
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scratch_removes_the_same_names_directories_of_ended_runs_only() {
        let tmp = std::env::temp_dir();
        // No process has a pid over the kernel's limit (at most 2^22).
        let ended = tmp.join("musewire-live-scratch-test-99999999");
        let other_name = tmp.join("musewire-live-scratch-test-other-99999999");
        std::fs::create_dir_all(&ended).unwrap();
        std::fs::create_dir_all(&other_name).unwrap();
        let dir = scratch("scratch-test");
        assert!(dir.join("work").is_dir());
        assert_eq!(!ended.exists(), Path::new("/proc/self").exists());
        assert!(
            other_name.exists(),
            "another name's directory is not this name's"
        );
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&ended);
        let _ = std::fs::remove_dir_all(&other_name);
    }
}
