//! `musewire decode` (being written).

use std::process::ExitCode;

/// Arguments of `musewire decode`.
#[derive(clap::Args)]
pub struct DecodeArgs {}

/// Runs `musewire decode`.
pub fn run(_args: DecodeArgs) -> ExitCode {
    eprintln!("musewire decode: not implemented yet");
    ExitCode::FAILURE
}
