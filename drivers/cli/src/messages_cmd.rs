//! `musewire messages [-o FILE] [--page-size N] [-- AGENT…]`: the whole history as JSONL.

use std::io::{BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_core::paging::MAX_PAGE_MESSAGES;
use musewire_mio::AgentProcess;

use crate::agent_command::agent_command;
use crate::session::{self, Deadline};

/// Arguments of `musewire messages`.
#[derive(clap::Args)]
pub struct MessagesArgs {
    /// Write the messages here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<std::path::PathBuf>,
    /// Messages per page (1 to 256) when the agent pages (protocol v2).
    #[arg(long, default_value_t = MAX_PAGE_MESSAGES, value_parser = clap::value_parser!(u64).range(1..=MAX_PAGE_MESSAGES))]
    page_size: u64,
    /// Give up after this many seconds; 0 waits as long as it takes.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// The agent command (default: the bundled `musewire agent`).
    #[arg(last = true, value_name = "AGENT")]
    agent: Vec<String>,
}

/// Runs `musewire messages`.
pub fn run(args: MessagesArgs) -> ExitCode {
    match messages(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("musewire messages: {}", crate::visible::visible(&e));
            ExitCode::FAILURE
        }
    }
}

fn messages(args: MessagesArgs) -> Result<(), String> {
    let config = ClientConfig {
        history_page_limit: args.page_size,
        ..ClientConfig::default()
    };
    let agent = session::spawn(agent_command(&args.agent)?, config)?;
    let deadline = Deadline::after_secs(args.timeout);
    let outcome = read(&agent, &args, deadline);
    session::end(agent, &outcome);
    outcome
}

fn read(agent: &AgentProcess, args: &MessagesArgs, deadline: Deadline) -> Result<(), String> {
    let next = |what: &str| {
        agent
            .next_event(deadline.left())
            .ok_or_else(|| format!("no {what} within {}s", args.timeout))
    };
    loop {
        match next("ready frame")? {
            ClientEvent::Ready { .. } => break,
            ClientEvent::Closed { error } => return Err(format!("the session ended: {error}")),
            _ => {}
        }
    }
    let walk = agent.read_history().map_err(|e| e.to_string())?;
    // A progress bar on a terminal only; nothing extra otherwise.
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} messages")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let messages = loop {
        match next("history")? {
            ClientEvent::HistoryProgress {
                request,
                read,
                total,
            } if request == walk => {
                if let Some(bar) = &bar {
                    bar.set_length(total);
                    bar.set_position(read as u64);
                }
            }
            ClientEvent::History {
                request, outcome, ..
            } if request == walk => {
                break outcome.map_err(|f| format!("reading the history failed: {}", f.error))?;
            }
            ClientEvent::Closed { error } => return Err(format!("the session ended: {error}")),
            _ => {}
        }
    };
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let sink: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(
            crate::output::create_private(path).map_err(|e| format!("{}: {e}", path.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::new(sink);
    for message in &messages {
        serde_json::to_writer(&mut out, message).map_err(|e| e.to_string())?;
        out.write_all(b"\n").map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())?;
    Ok(())
}
