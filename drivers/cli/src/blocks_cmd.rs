//! `musewire blocks` (being written).

use std::process::ExitCode;

/// Arguments of `musewire blocks`.
#[derive(clap::Args)]
pub struct BlocksArgs {}

/// Runs `musewire blocks`.
pub fn run(_args: BlocksArgs) -> ExitCode {
    eprintln!("musewire blocks: not implemented yet");
    ExitCode::FAILURE
}
