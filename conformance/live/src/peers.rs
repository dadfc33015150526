//! The real agents, installed by `conformance/peers/install.sh`, started in isolation: a
//! temporary HOME and agent dir, a dummy key, no inherited `OMP_*`/`PI_*`/`XDG_*`, and the
//! scripted model server as their only provider.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `conformance/peers/node_modules`.
pub fn node_modules() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../peers/node_modules")
}

/// Whether the agents are installed. Outside CI a suite may skip with a notice when they are
/// not; under CI (`CI` set) a missing agent is a failure.
pub fn installed_or_skip() -> bool {
    let ok = node_modules().join(".bin/bun").exists() && omp_cli().exists() && pi_cli().exists();
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "the real agents are not installed: run conformance/peers/install.sh"
        );
        eprintln!("skipping: the real agents are not installed (conformance/peers/install.sh)");
    }
    ok
}

fn omp_cli() -> PathBuf {
    node_modules().join("@oh-my-pi/pi-coding-agent/dist/cli.js")
}

fn pi_cli() -> PathBuf {
    node_modules().join("@mariozechner/pi-coding-agent/dist/cli.js")
}

/// A fresh scratch directory for one agent: `home/` and `work/` inside.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("musewire-live-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("work")).expect("scratch dir");
    dir
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

/// `omp --mode rpc` (under bun) using the model server at `base_url` as provider `fake`.
pub fn omp(dir: &Path, base_url: &str) -> Command {
    let agent_dir = dir.join("home/.omp/agent");
    std::fs::create_dir_all(&agent_dir).expect("agent dir");
    let models = format!(
        "providers:\n  fake:\n    baseUrl: {base_url}\n    api: openai-completions\n    apiKey: sk-fake\n    compat: {{supportsUsageInStreaming: true, supportsDeveloperRole: false, supportsStore: false}}\n    models:\n      - {{id: fake-model, name: Fake Model, reasoning: false, contextWindow: 1000000, maxTokens: 4096}}\n"
    );
    std::fs::write(agent_dir.join("models.yml"), models).expect("models.yml");
    let mut command = isolated(&node_modules().join(".bin/bun"), dir);
    command
        .arg(omp_cli())
        .args(["--mode", "rpc", "--model", "fake/fake-model", "--no-title"])
        .env("PI_CODING_AGENT_DIR", &agent_dir);
    command
}

/// `pi --mode rpc` (under node) using the model server at `base_url` as provider `fake`.
pub fn pi(dir: &Path, base_url: &str) -> Command {
    let agent_dir = dir.join("home/.pi/agent");
    std::fs::create_dir_all(&agent_dir).expect("agent dir");
    let models = serde_json::json!({"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "sk-fake",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false, "supportsUsageInStreaming": true},
        "models": [{"id": "fake-model", "name": "Fake Model", "reasoning": false, "contextWindow": 1000000, "maxTokens": 4096}]}}});
    std::fs::write(agent_dir.join("models.json"), models.to_string()).expect("models.json");
    let mut command = isolated(Path::new("node"), dir);
    command
        .arg(pi_cli())
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
