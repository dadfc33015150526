//! ACP-40: the `terminal` sign-in method's argument, appended by the editor after the agent
//! command, makes `musewire acp` run the agent's own interactive mode (without `--mode rpc`)
//! on the terminal instead of the bridge, and exit as it did.

use std::process::Command;

fn musewire_acp(agent: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_musewire"))
        .arg("acp")
        .arg("--")
        .args(agent)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("musewire runs")
}

#[test]
fn acp_40_the_terminal_sign_in_runs_the_agent_without_rpc_mode_and_exits_as_it_did() {
    let out = musewire_acp(&[
        "echo",
        "interactive",
        "--mode",
        "rpc",
        "--musewire-terminal-login",
    ]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "interactive\n");
    let out = musewire_acp(&["sh", "-c", "exit 3", "--musewire-terminal-login"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty(), "no ACP served: {out:?}");
}
