//! `musewire fetch-output --item-id I --output-ref R [--session-id S] [--session PATH]
//! [-o FILE] [-- AGENT…]`: one stored output (a spilled tool result, OUT-02), fetched whole
//! through `read_output` pages (OUT-04, OUT-10) into a file.
//!
//! The agent is started (the bundled one by default); with `--session PATH` it first switches
//! to that session file, so a restarted agent serves the outputs stored under it again (OUT-08;
//! the bundled agent keeps a session as `<sessionId>.jsonl`, AGENT-05). The file is created
//! new (never through a symlink, never over an existing file), mode 0600, and removed again
//! when the fetch fails.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use musewire_core::client::{
    ClientConfig, ClientEvent, FetchProgress, Fetched, OutputFetch, FETCH_PAGE_BYTES,
};
use musewire_core::output::MAX_READ_BYTES;
use musewire_mio::AgentProcess;
use musewire_wire::output::OutputRef;
use musewire_wire::{Command, ResponseData, SwitchSession};

use crate::agent_command::agent_command;
use crate::session::{self, Deadline};
use crate::visible::visible;

/// Arguments of `musewire fetch-output`.
#[derive(clap::Args)]
pub struct FetchOutputArgs {
    /// The session the output belongs to (`details.storedOutput.sessionId`); default: the
    /// agent's current session (after `--session`), as `get_state` reports it.
    #[arg(long, value_name = "ID")]
    session_id: Option<String>,
    /// The item (tool call id) the output belongs to (`details.storedOutput.itemId`).
    #[arg(long, value_name = "ID")]
    item_id: String,
    /// The output's reference (`details.storedOutput.outputRef`: `out-` and 16 hex digits).
    #[arg(long, value_name = "REF", value_parser = parse_output_ref)]
    output_ref: OutputRef,
    /// Switch the agent to this session file first (`switch_session`): for an agent restarted
    /// on the same session folder.
    #[arg(long, value_name = "PATH")]
    session: Option<PathBuf>,
    /// Write the output here (created new, mode 0600; an existing file or a symlink is
    /// refused) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// The output's length when known (`details.storedOutput.byteLen`): the pages are checked
    /// against it and the progress bar has a total.
    #[arg(long, value_name = "N")]
    byte_len: Option<u64>,
    /// Bytes asked per page (1 to 1048576, within the agent's `maxLengthBytes`).
    #[arg(long, value_name = "N", default_value_t = FETCH_PAGE_BYTES,
          value_parser = clap::value_parser!(u64).range(1..=MAX_READ_BYTES))]
    page_bytes: u64,
    /// Give up when a page (or the start) has no answer after this many seconds; 0 waits as
    /// long as it takes.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    timeout: u64,
    /// How many seconds to wait for the agent's ready frame (which offers `read_output`).
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    ready_timeout: u64,
    /// The agent command (default: the bundled `musewire agent`).
    #[arg(last = true, value_name = "AGENT")]
    agent: Vec<String>,
}

fn parse_output_ref(text: &str) -> Result<OutputRef, String> {
    OutputRef::parse(text).map_err(|e| format!("{e} (want `out-` and 16 hex digits)"))
}

/// Runs `musewire fetch-output`.
pub fn run(args: FetchOutputArgs) -> ExitCode {
    match fetch_output(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("musewire fetch-output: {}", visible(&e));
            ExitCode::FAILURE
        }
    }
}

/// Where the bytes go: a file this run created (removed again on failure), or stdout.
enum Target {
    File(BufWriter<File>, PathBuf),
    Stdout(std::io::StdoutLock<'static>),
}

impl Target {
    fn open(path: Option<&Path>) -> Result<Self, String> {
        match path {
            Some(path) => {
                let file = crate::output::create_new_private(path).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        format!(
                            "{}: already exists (or is a symlink); not overwritten",
                            path.display()
                        )
                    } else {
                        format!("{}: {e}", path.display())
                    }
                })?;
                Ok(Target::File(BufWriter::new(file), path.to_owned()))
            }
            None => Ok(Target::Stdout(std::io::stdout().lock())),
        }
    }

    fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Target::File(file, _) => file.write_all(bytes),
            Target::Stdout(out) => out.write_all(bytes),
        }
    }

    /// Flushes (and syncs a file): the output is complete.
    fn finish(self) -> Result<String, String> {
        match self {
            Target::File(file, path) => {
                let file = file
                    .into_inner()
                    .map_err(|e| format!("{}: {}", path.display(), e.error()))?;
                file.sync_all()
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                Ok(path.display().to_string())
            }
            Target::Stdout(mut out) => {
                out.flush().map_err(|e| format!("stdout: {e}"))?;
                Ok("stdout".into())
            }
        }
    }

    /// The fetch failed: a file this run created is removed, so no partial output is left
    /// looking like a whole one.
    fn abandon(self) {
        if let Target::File(file, path) = self {
            drop(file);
            let _ = std::fs::remove_file(path);
        }
    }
}

fn fetch_output(args: FetchOutputArgs) -> Result<(), String> {
    // The file first: a symlink or an existing file is refused before an agent starts.
    let mut target = Target::open(args.output.as_deref())?;
    let config = ClientConfig {
        ready_timeout: Duration::from_secs(args.ready_timeout),
        ..ClientConfig::default()
    };
    let agent = match agent_command(&args.agent).and_then(|c| session::spawn(c, config)) {
        Ok(agent) => agent,
        Err(e) => {
            target.abandon();
            return Err(e);
        }
    };
    let outcome = fetch(&agent, &args, &mut target);
    session::end(agent, &outcome);
    let fetched = match outcome {
        Ok(fetched) => fetched,
        Err(e) => {
            target.abandon();
            return Err(e);
        }
    };
    let place = target.finish()?;
    if !std::io::stderr().is_terminal() {
        eprintln!(
            "musewire fetch-output: {} bytes in {} pages into {place}",
            fetched.byte_len, fetched.pages
        );
    }
    Ok(())
}

fn fetch(
    agent: &AgentProcess,
    args: &FetchOutputArgs,
    target: &mut Target,
) -> Result<Fetched, String> {
    let timeout = Deadline::after_secs(args.timeout);
    wait_ready(agent, args)?;
    if let Some(path) = &args.session {
        let switch = Command::SwitchSession(SwitchSession {
            session_path: path.to_string_lossy().into_owned(),
            ..SwitchSession::default()
        });
        match agent.call(switch, timeout.left()) {
            Ok(ResponseData::Cancelled(c)) if c.cancelled => {
                return Err(format!("switching to {} was cancelled", path.display()))
            }
            Ok(_) => {}
            Err(e) => return Err(format!("switch_session to {}: {e}", path.display())),
        }
    }
    let session_id = match &args.session_id {
        Some(id) => id.clone(),
        None => agent
            .get_state(timeout.left())
            .map_err(|e| format!("get_state: {e}"))?
            .session_id
            .ok_or("the agent reports no sessionId: give --session-id")?,
    };
    let mut fetch = OutputFetch::new(
        session_id,
        args.item_id.clone(),
        args.output_ref.clone(),
        args.page_bytes,
    )
    .map_err(|e| e.to_string())?;
    if let Some(len) = args.byte_len {
        fetch = fetch.expecting(len);
    }
    let bar = Progress::new();
    let mut sink = |bytes: &[u8], progress: FetchProgress| {
        target.write(bytes)?;
        bar.show(progress);
        Ok(())
    };
    let page_timeout = if args.timeout == 0 {
        timeout.left()
    } else {
        Duration::from_secs(args.timeout)
    };
    let fetched = agent.fetch_output(fetch, &mut sink, page_timeout);
    bar.done();
    fetched.map_err(|e| e.to_string())
}

/// Waits for the session to be ready: the ready frame (and its `readOutput` offer) read.
fn wait_ready(agent: &AgentProcess, args: &FetchOutputArgs) -> Result<(), String> {
    let deadline = Deadline::after_secs(args.ready_timeout.saturating_add(args.timeout));
    loop {
        match agent.next_event(deadline.left()) {
            Some(ClientEvent::Ready { .. }) => return Ok(()),
            Some(ClientEvent::Closed { error }) => {
                return Err(format!("the session ended: {error}"))
            }
            Some(_) => {}
            None => return Err("the agent was not ready in time".into()),
        }
    }
}

/// A progress bar on stderr when it is a terminal; nothing otherwise (a plain summary line
/// follows the fetch).
struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    fn new() -> Self {
        Progress(std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {bytes}/{total_bytes} {bytes_per_sec}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        }))
    }

    fn show(&self, progress: FetchProgress) {
        if let Some(bar) = &self.0 {
            if let Some(total) = progress.total {
                bar.set_length(total);
            } else {
                bar.set_length(progress.received);
            }
            bar.set_position(progress.received);
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
