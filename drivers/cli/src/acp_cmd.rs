//! `musewire acp [-- AGENT…]`: serve the Agent Client Protocol on stdio, one agent process
//! per ACP session (the bundled `musewire agent --mode rpc` by default). Only I/O: the
//! protocol is `musewire_core::acp::Bridge`, the loop `musewire_smol::acp::serve_acp`.

use std::process::ExitCode;

use musewire_core::acp::BridgeConfig;

use crate::agent_command::agent_command;

/// Arguments of `musewire acp`.
#[derive(clap::Args)]
pub struct AcpArgs {
    /// The agent command, run once per session in the session's cwd (default: the bundled
    /// `musewire agent --mode rpc`).
    #[arg(last = true, value_name = "AGENT")]
    agent: Vec<String>,
}

/// Runs `musewire acp` until the editor closes stdin and every agent has exited.
pub fn run(args: AcpArgs) -> ExitCode {
    // Checked once up front, so a bad agent command fails before the editor connects.
    if let Err(e) = agent_command(&args.agent) {
        eprintln!("musewire acp: {}", crate::visible::visible(&e));
        return ExitCode::FAILURE;
    }
    let agent = args.agent;
    let result = smol::block_on(musewire_smol::acp::serve_acp(
        BridgeConfig::default(),
        smol::Unblock::new(std::io::stdin()),
        smol::Unblock::new(std::io::stdout()),
        move |_cwd| match agent_command(&agent) {
            Ok(command) => smol::process::Command::from(command),
            // Unreachable after the check above; an empty program fails to spawn and the
            // session reports the agent's exit.
            Err(_) => smol::process::Command::new(""),
        },
    ));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("musewire acp: {e}");
            ExitCode::FAILURE
        }
    }
}
