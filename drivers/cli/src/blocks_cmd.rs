//! `musewire blocks`: reads a tool result as JSON on stdin and prints what the model would
//! read of it (BLOCK-01 … BLOCK-06).
//!
//! Input is a protocol result, `{"content":[…],"isError":…}`, or a module's result,
//! `{"data":…,"dataIsContent":…}`. Without `--json` the stored copy (the text history keeps)
//! is printed; with `--json`, one line holding the classification and both copies.

use std::io::{Read, Write};
use std::process::ExitCode;

use musewire_core::blocks::{show_tool_result, RawToolResult, Source, DEFAULT_CAP_CHARS};

/// Arguments of `musewire blocks`.
#[derive(clap::Args)]
pub struct BlocksArgs {
    /// Print the classification and both copies as one line of JSON.
    #[arg(long)]
    json: bool,
    /// The cap, in characters, the live copy's text is cut at. The live copy is printed with
    /// `--json` only, so the cap needs it (without it: a usage error, exit 2).
    #[arg(long, default_value_t = DEFAULT_CAP_CHARS, requires = "json")]
    cap: usize,
    /// The id of the server that delivered the result (default: no server, a module's result).
    #[arg(long, value_name = "ID")]
    server: Option<String>,
    /// The URL the host dials that server at (default: none, as for a stdio server).
    #[arg(long, value_name = "URL", requires = "server")]
    server_url: Option<String>,
    /// The server is one the host doesn't know.
    #[arg(long, requires = "server", conflicts_with = "server_url")]
    unknown_server: bool,
}

/// Runs `musewire blocks`.
pub fn run(args: BlocksArgs) -> ExitCode {
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("musewire blocks: reading stdin: {e}");
        return ExitCode::from(2);
    }
    let text = String::from_utf8_lossy(&input);
    let result = match RawToolResult::from_json(&text) {
        Ok(result) => result,
        Err(e) => {
            eprintln!("musewire blocks: {e}");
            return ExitCode::from(2);
        }
    };
    let source = match (&args.server, args.unknown_server) {
        (None, _) => Source::Local,
        (Some(id), true) => Source::UnknownServer { id },
        (Some(id), false) => Source::Server {
            id,
            address: args.server_url.as_deref(),
        },
    };
    let shown = show_tool_result(&result, &source, args.cap);
    let out = if args.json {
        match serde_json::to_string(&shown) {
            Ok(line) => line,
            Err(e) => {
                eprintln!("musewire blocks: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        shown.copies.stored
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{out}").and_then(|()| stdout.flush()) {
        // A failed write is said, not only exited on.
        eprintln!("musewire blocks: writing the output: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
