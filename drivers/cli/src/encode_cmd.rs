//! `musewire encode` (being written).

use std::process::ExitCode;

/// Arguments of `musewire encode`.
#[derive(clap::Args)]
pub struct EncodeArgs {}

/// Runs `musewire encode`.
pub fn run(_args: EncodeArgs) -> ExitCode {
    eprintln!("musewire encode: not implemented yet");
    ExitCode::FAILURE
}
