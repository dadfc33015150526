//! The agent a tool runs: the command after `--`, or the bundled reference agent.

use std::process::Command;

/// The agent command: `agent` (everything after `--`), or `musewire agent --mode rpc` when
/// empty, so every tool works on a fresh machine with nothing else installed.
pub fn agent_command(agent: &[String]) -> Result<Command, String> {
    match agent.split_first() {
        Some((program, args)) => {
            let mut command = Command::new(program);
            command.args(args);
            Ok(command)
        }
        None => {
            let me = std::env::current_exe()
                .map_err(|e| format!("cannot find the musewire binary: {e}"))?;
            let mut command = Command::new(me);
            command.args(["agent", "--mode", "rpc"]);
            Ok(command)
        }
    }
}

/// Whether to colour output: only on a terminal, and never with `NO_COLOR` set.
pub fn colour() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}
