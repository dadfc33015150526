//! `musewire replay TRANSCRIPT…`: replay transcripts through the core and report mismatches.

use std::process::ExitCode;

/// Arguments of `musewire replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// Transcripts (`conformance/transcripts/*.jsonl`, or recordings of `musewire tap`).
    #[arg(required = true)]
    transcripts: Vec<std::path::PathBuf>,
}

/// Runs `musewire replay`: exit 0 when every transcript replays with the same actions, 1 on
/// any mismatch (each shown as a diff of expected and actual actions), 2 when it cannot run.
pub fn run(args: ReplayArgs) -> ExitCode {
    match musewire_transcript::replay::replay_files(&args.transcripts, &mut std::io::stdout()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("musewire replay: {e}");
            ExitCode::from(2)
        }
    }
}
