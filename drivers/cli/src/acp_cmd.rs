//! `musewire acp [--session-dir DIR] [--max-inline-bytes N] [--ready-timeout SECS] [--silence-timeout SECS] [--mcp-start-timeout SECS] [--allow-insecure-mcp-http] [--mcp-tls-root FILE] [--no-pi-extension] [-- AGENT…]`: serve the Agent
//! Client Protocol on stdio, one agent process per ACP session (the bundled `musewire agent
//! --mode rpc` by default). Only I/O: the protocol is `musewire_core::acp::Bridge`, the loop
//! `musewire_smol::acp::serve_acp_stdio`. On SIGTERM, SIGINT or SIGHUP every agent is stopped
//! (ACP-12) and it then dies of that signal.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use musewire_core::acp::BridgeConfig;
use musewire_core::client::AgentKind;
use musewire_smol::acp::Served;
use musewire_smol::mcp_http::McpHttpOptions;

use crate::agent_command::agent_command;

/// Arguments of `musewire acp`.
#[derive(clap::Args)]
pub struct AcpArgs {
    /// The folder the agent keeps its sessions in, passed to it as `--session-dir DIR`, so
    /// that `session/load` finds them (ACP-06); created private (0700) if missing. With the
    /// bundled agent the default is `$XDG_STATE_HOME/musewire/acp-sessions` (or
    /// `~/.local/state/musewire/acp-sessions`); another agent (omp) gets one only when asked,
    /// and must keep its session files directly in DIR and report `sessionFile`.
    #[arg(long, value_name = "DIR")]
    session_dir: Option<PathBuf>,
    /// Passed to the bundled agent: tool results over N bytes are stored and their full text
    /// served through `_muse/readOutput` to editors that opt in (OUT-01). Only with the
    /// bundled agent.
    #[arg(long, value_name = "N")]
    max_inline_bytes: Option<u64>,
    /// How many seconds a session's agent may say nothing at all (no ready frame, no answer
    /// to the start-up probe, FRAME-03): past it, what the editor waits for in that session
    /// fails with an error saying so and the agent is stopped (ACP-13). An agent that answers,
    /// with a ready frame or without one (pi), is known at once.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    ready_timeout: u64,
    /// The prompt budget, on silence: how many seconds a session's agent may write nothing
    /// while the editor waits on it (a prompt, a load, a read). Half-way it is asked
    /// `get_state`, which a live agent answers even during a long tool; silent for all of
    /// it, what the editor waits for fails with an error saying so and the agent is stopped
    /// (ACP-21). A turn may run as long as the agent keeps saying something.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    silence_timeout: u64,
    /// How many seconds each of the editor's MCP servers may take to answer `initialize` and
    /// list its tools (MCP-02): past it the server is stopped and the editor told.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    mcp_start_timeout: u64,
    /// Reach the editor's `http` and `sse` MCP servers over plain `http://` on a host that
    /// is not loopback too (MCP-17, MCP-18): their headers, a token say, then cross the
    /// network unencrypted. Without it such a server is not reached and the editor told.
    #[arg(long)]
    allow_insecure_mcp_http: bool,
    /// Trust only the PEM certificates in FILE as roots for the editor's `https` MCP servers
    /// (a private CA), instead of the platform's (MCP-17, MCP-18).
    #[arg(long, value_name = "FILE")]
    mcp_tls_root: Option<PathBuf>,
    /// Do not load musewire's pi extension into a pi agent. pi has no host tools of its own;
    /// with the extension (written to `$XDG_STATE_HOME/musewire/pi/`, passed as `-e FILE`)
    /// the editor's MCP servers' tools reach it as they reach omp (HOST-10, MCP-03).
    #[arg(long)]
    no_pi_extension: bool,
    /// The agent command, run once per session in the session's cwd (default: the bundled
    /// `musewire agent --mode rpc`).
    #[arg(last = true, value_name = "AGENT")]
    agent: Vec<String>,
}

/// Runs `musewire acp` until the editor closes stdin and every agent has exited.
pub fn run(args: AcpArgs) -> ExitCode {
    // ACP-40: the `terminal` sign-in runs the agent's own interactive mode instead.
    if let Some(line) = musewire_core::acp::terminal_login_command(&args.agent) {
        return crate::terminal_login::run(&line);
    }
    let mcp_http = match mcp_http_options(&args) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("musewire acp: {}", crate::visible::visible(&e));
            return ExitCode::FAILURE;
        }
    };
    match configure(args) {
        Ok((config, agent)) => serve(config, mcp_http, agent),
        Err(e) => {
            eprintln!("musewire acp: {}", crate::visible::visible(&e));
            ExitCode::FAILURE
        }
    }
}

/// How the editor's HTTP MCP servers are reached (MCP-17, MCP-18): `--allow-insecure-mcp-http`,
/// `--mcp-tls-root FILE` (read now, so a bad file fails before the editor connects).
fn mcp_http_options(args: &AcpArgs) -> Result<McpHttpOptions, String> {
    let tls_roots = match &args.mcp_tls_root {
        Some(file) => Some(musewire_smol::mcp_http::read_pem_roots(file)?),
        None => None,
    };
    Ok(McpHttpOptions {
        allow_insecure_http: args.allow_insecure_mcp_http,
        tls_roots,
    })
}

/// The agent each session runs.
enum Agent {
    /// The bundled agent with these flags after `agent --mode rpc`.
    Bundled(Vec<String>),
    /// The command after `--`.
    Command(Vec<String>),
}

/// The bridge's configuration and the agent each session runs.
fn configure(args: AcpArgs) -> Result<(BridgeConfig, Agent), String> {
    // Checked once up front, so a bad agent command fails before the editor connects.
    agent_command(&args.agent)?;
    let mut config = BridgeConfig::default();
    config.client.ready_timeout = std::time::Duration::from_secs(args.ready_timeout);
    config.silence_budget =
        musewire_core::acp::SilenceBudget(std::time::Duration::from_secs(args.silence_timeout));
    config.mcp_init_budget = Some(std::time::Duration::from_secs(args.mcp_start_timeout));
    // ACP-41: an agent started for `authenticate` runs where the bridge was started.
    config.auth_cwd = std::env::current_dir().ok();
    if !args.agent.is_empty() {
        if args.max_inline_bytes.is_some() {
            return Err("--max-inline-bytes applies to the bundled agent only".into());
        }
        // Which agent runs, decided once (ACP-14: omp and pi take prompt images; another
        // agent is not assumed to).
        config.agent = AgentKind::from_command(&args.agent);
        let mut agent = args.agent;
        // HOST-10: pi carries host tools only through musewire's extension.
        if !args.no_pi_extension && config.agent == AgentKind::Pi {
            match crate::pi_extension::state_home()
                .ok_or_else(|| "neither XDG_STATE_HOME nor HOME is set".to_owned())
                .and_then(|state| crate::pi_extension::write_extension(&state))
            {
                Ok(file) => {
                    agent = musewire_core::client::pi_host_tools::with_extension(&agent, &file)
                }
                Err(e) => eprintln!(
                    "musewire acp: {}; pi gets no host tools (the editor's MCP servers)",
                    crate::visible::visible(&e)
                ),
            }
        }
        // ACP-24: `/status` names the approval policy the agent was started with.
        config.approval_policy = musewire_core::acp::approval_policy_of(&agent);
        // An agent of our choosing loads sessions only when asked to keep them in our folder:
        // omp takes `--session-dir DIR` and names its files `<timestamp>_<id>.jsonl` there,
        // which its `get_state` reports as `sessionFile` (RULES.md, note on ACP-06).
        if let Some(dir) = args.session_dir {
            let dir = private_dir(&dir)?;
            agent.push("--session-dir".to_owned());
            agent.push(dir.to_string_lossy().into_owned());
            config.session_dir = Some(dir);
        }
        return Ok((config, Agent::Command(agent)));
    }
    // ACP-14: the bundled agent takes images (its echo says what it saw of each).
    config.agent = AgentKind::Bundled;
    let mut bundled = Vec::new();
    let dir = match args.session_dir {
        Some(dir) => Some(private_dir(&dir)?),
        // The default folder is a convenience: without it sessions just aren't loadable.
        None => default_session_dir().and_then(|dir| match private_dir(&dir) {
            Ok(dir) => Some(dir),
            Err(e) => {
                eprintln!(
                    "musewire acp: {}; sessions will not be loadable",
                    crate::visible::visible(&e)
                );
                None
            }
        }),
    };
    if let Some(dir) = dir {
        bundled.push("--session-dir".to_owned());
        bundled.push(dir.to_string_lossy().into_owned());
        config.session_dir = Some(dir);
    }
    if let Some(n) = args.max_inline_bytes {
        // The bundled agent offers and serves `read_output` whenever it spills (OUT-10).
        bundled.push("--max-inline-bytes".to_owned());
        bundled.push(n.to_string());
        config.agent_serves_output = true;
    }
    Ok((config, Agent::Bundled(bundled)))
}

fn serve(config: BridgeConfig, mcp_http: McpHttpOptions, agent: Agent) -> ExitCode {
    // ACP-12: the editor's end or SIGTERM, SIGINT, SIGHUP stops every agent first.
    let served = musewire_smol::acp::serve_acp_stdio(config, mcp_http, move |_cwd| {
        let command = match &agent {
            Agent::Bundled(flags) => agent_command(&[]).map(|mut c| {
                c.args(flags);
                c
            }),
            Agent::Command(line) => agent_command(line),
        };
        // Unreachable after the check above; an empty program fails to spawn and the
        // session reports the agent's exit.
        command.unwrap_or_else(|_| std::process::Command::new(""))
    });
    match served {
        Ok(Served::EditorEnd) => ExitCode::SUCCESS,
        Ok(Served::Signal(signal)) => ExitCode::from(musewire_smol::agent_stdio::die_of(signal)),
        Err(e) => {
            eprintln!("musewire acp: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `$XDG_STATE_HOME/musewire/acp-sessions`, else `$HOME/.local/state/musewire/acp-sessions`;
/// `None` when neither is set (sessions are then not loadable).
fn default_session_dir() -> Option<PathBuf> {
    Some(
        crate::pi_extension::state_home()?
            .join("musewire")
            .join("acp-sessions"),
    )
}

/// Makes `dir` (and its parents) if missing, the folder itself 0700; refuses a symlink or a
/// file there. Its absolute path.
fn private_dir(dir: &Path) -> Result<PathBuf, String> {
    private_folder(dir, "session folder")
}

/// [`private_dir`] for any folder, named `what` in its errors.
pub(crate) fn private_folder(dir: &Path, what: &str) -> Result<PathBuf, String> {
    let fail = |e: std::io::Error| format!("{what} {}: {e}", dir.display());
    let dir = std::path::absolute(dir).map_err(fail)?;
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    match builder.create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(fail(e)),
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(fail)?;
    if !meta.file_type().is_dir() {
        return Err(format!(
            "{what} {}: not a directory (a symlink is refused)",
            dir.display()
        ));
    }
    Ok(dir)
}
