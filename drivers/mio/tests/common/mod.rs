//! What the mio test binaries share: each is its own agent. Run with [`AGENT_ENV`] set, it
//! runs the bundled agent's stdio loop (`musewire agent`) instead of its tests (no test
//! harness, so nothing but the agent writes to stdout).

use std::process::Command;

/// Set in the child: run the bundled agent.
const AGENT_ENV: &str = "MUSEWIRE_MIO_TEST_AGENT";

/// In the child, runs the bundled agent and exits with its code; elsewhere returns.
pub fn run_agent_if_child() {
    if std::env::var_os(AGENT_ENV).is_some() {
        let code = musewire_agent::stdio::run(musewire_agent::Options::default())
            .expect("the bundled agent runs");
        std::process::exit(i32::from(code));
    }
}

/// The command that runs this binary as the bundled agent.
pub fn bundled_agent() -> Command {
    let mut command = Command::new(std::env::current_exe().expect("this binary"));
    command.env(AGENT_ENV, "1").args(["--mode", "rpc"]);
    command
}

/// This process's threads (`Threads:` of `/proc/self/status`).
#[allow(dead_code)] // not every test binary counts threads
pub fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a Threads: line")
}
