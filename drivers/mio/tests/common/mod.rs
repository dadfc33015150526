//! What the mio test binaries (and the `round_trip_allocs` bench) share: the bundled agent to run (the `bundled_agent` example,
//! built with the tests), and this process's thread count.
//!
//! A test that counts threads is the only test of its binary: libtest runs a binary's tests
//! on threads of its own, at once, and a test thread that ends while another test counts
//! would change its count.

#![allow(dead_code)] // not every test binary uses everything

use std::path::PathBuf;
use std::process::Command;

/// The command that runs the bundled agent (`examples/bundled_agent.rs`).
pub fn bundled_agent() -> Command {
    // target/debug/deps/THIS-HASH -> target/debug/examples/bundled_agent
    let example: PathBuf = std::env::current_exe()
        .expect("this binary")
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the target directory")
        .join("examples/bundled_agent");
    assert!(
        example.exists(),
        "{} is missing: it is built with the tests and benches (`cargo test -p musewire-mio`, \
         `cargo bench -p musewire-mio --bench round_trip_allocs`, or `cargo build -p \
         musewire-mio --example bundled_agent` before `--test NAME`)",
        example.display()
    );
    let mut command = Command::new(example);
    command.args(["--mode", "rpc"]);
    command
}

/// This process's threads (`Threads:` of `/proc/self/status`).
pub fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a Threads: line")
}
