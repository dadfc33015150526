//! `musewire agent`: the bundled reference agent on stdio (`musewire_agent`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use musewire_agent::{Options, CLOCK_ENV};

/// The agent's protocol mode.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Mode {
    /// Newline-delimited JSON commands on stdin, responses and events on stdout.
    Rpc,
}

/// The flags hosts pass to an RPC-mode agent.
#[derive(Args, Debug)]
pub struct AgentArgs {
    /// The protocol mode; `rpc` is the only one.
    #[arg(long, value_enum, default_value = "rpc")]
    mode: Mode,
    /// The model id to report (the model is always the scripted one).
    #[arg(long)]
    model: Option<String>,
    /// The provider to report.
    #[arg(long)]
    provider: Option<String>,
    /// Accepted for compatibility; sessions are kept in memory.
    #[arg(long)]
    session_dir: Option<PathBuf>,
    /// Stamp every message with this time (milliseconds since the Unix epoch) instead of the
    /// system clock; the MUSEWIRE_AGENT_CLOCK_MS environment variable does the same.
    #[arg(long)]
    clock_ms: Option<u64>,
}

pub fn run(args: AgentArgs) -> ExitCode {
    let Mode::Rpc = args.mode;
    let fixed_clock_ms = match (args.clock_ms, std::env::var(CLOCK_ENV)) {
        (Some(ms), _) => Some(ms),
        (None, Ok(value)) => match value.trim().parse() {
            Ok(ms) => Some(ms),
            Err(_) => {
                eprintln!("musewire agent: {CLOCK_ENV} must be a whole number of milliseconds, not {value:?}");
                return ExitCode::from(2);
            }
        },
        (None, Err(_)) => None,
    };
    let options = Options {
        model: args.model,
        provider: args.provider,
        session_dir: args.session_dir,
        fixed_clock_ms,
    };
    match musewire_agent::stdio::run(options) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("musewire agent: {error}");
            ExitCode::FAILURE
        }
    }
}
