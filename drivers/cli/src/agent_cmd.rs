//! `musewire agent`: the bundled reference agent on stdio (`musewire_agent`), taking the flags
//! omp 18.2.3 takes so that a host written against omp can start it in omp's place
//! (AGENT-03): what applies is honoured (`--no-session`, `--max-time`, `--cwd`, `--thinking`,
//! `--model`, `--provider`, `--session-dir`: session files, AGENT-05; `--approval-mode`: the
//! bash, write and edit tools ask first, AGENT-07), the rest accepted and ignored, and the flags that need what a scripted agent does not have (resuming a session
//! by flag, another mode) refused. Its own flags: `--max-inline-bytes` and `--spill-dir`
//! (tool-output spill and `read_output`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use musewire_agent::{ApprovalMode, Options, CLOCK_ENV, THINKING_LEVELS};

/// The agent's protocol mode.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Mode {
    /// Newline-delimited JSON commands on stdin, responses and events on stdout.
    Rpc,
}

/// The flags hosts pass to an RPC-mode agent: omp's (AGENT-03). As in omp, a flag may be
/// given again: the last value counts (repeatable ones collect every value).
#[derive(Args, Debug)]
#[command(args_override_self = true)]
pub struct AgentArgs {
    /// The protocol mode; `rpc` is the only one.
    #[arg(long, value_enum, default_value = "rpc")]
    mode: Mode,
    /// The model id to report (the model is always the scripted one).
    #[arg(long, allow_hyphen_values = true)]
    model: Option<String>,
    /// The provider `get_state` reports (default `musewire`; no provider is called).
    #[arg(long, allow_hyphen_values = true)]
    provider: Option<String>,
    /// Keep each session in this folder, as `<sessionId>.jsonl` (made 0700 when missing;
    /// not a symlink); `switch_session` loads one back. Ignored with --no-session.
    #[arg(long, allow_hyphen_values = true)]
    session_dir: Option<PathBuf>,
    /// Keep the session in memory only, as omp does: `get_state` names no session directory.
    #[arg(long)]
    no_session: bool,
    /// Stop the session after this long (seconds, or a duration like 5s, 10m, 1h), as omp's
    /// `--max-time`: a run still going at the deadline is aborted (its tool withdrawn), and a
    /// prompt after it ends at once, the model not called.
    #[arg(long, value_parser = parse_max_time, allow_hyphen_values = true)]
    max_time: Option<Duration>,
    /// Run in this directory (the `bash` and `read` tools' working directory).
    #[arg(long, allow_hyphen_values = true)]
    cwd: Option<PathBuf>,
    /// The thinking level `get_state` reports (off, auto, minimal, low, medium, high, xhigh,
    /// max); another value is ignored with a warning, as omp does.
    #[arg(long, allow_hyphen_values = true)]
    thinking: Option<String>,
    /// Which tools ask the host before they run, as omp's (AGENT-07): always-ask (bash,
    /// write and edit ask, with omp's select `Allow tool: NAME`), write (bash asks), yolo
    /// (none asks; the default). Another value is ignored with a warning.
    #[arg(long, value_name = "MODE", allow_hyphen_values = true)]
    approval_mode: Option<String>,
    /// Stamp every message with this time (milliseconds since the Unix epoch) instead of the
    /// system clock; the MUSEWIRE_AGENT_CLOCK_MS environment variable does the same.
    #[arg(long)]
    clock_ms: Option<u64>,
    /// Spill tool results whose text is larger than this many bytes to the spill store: the
    /// model and the history get a head/tail preview and the stored output's reference, which
    /// `read_output` serves (musewire's extension, offered in the ready frame).
    #[arg(long, value_name = "N")]
    max_inline_bytes: Option<usize>,
    /// The spill store's root directory (made 0700 when missing); default: `spill` in the
    /// --session-dir folder, else a private directory in the temp dir, made on first use.
    /// Used with --max-inline-bytes.
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    spill_dir: Option<PathBuf>,
    /// Print the version (`musewire agent X.Y.Z`) and exit.
    #[arg(short = 'v', long)]
    version: bool,
    #[command(flatten)]
    ignored: Box<OmpIgnored>,
    #[command(flatten)]
    refused: OmpRefused,
}

/// omp's flags that mean nothing to a scripted agent: accepted (in omp's forms, `--flag value`
/// and `--flag=value`, repeatable where omp's are) and ignored (AGENT-03).
#[derive(Args, Debug)]
#[command(next_help_heading = "Accepted for omp compatibility and ignored")]
#[allow(dead_code)] // read by nobody: that is the point
struct OmpIgnored {
    /// omp: settings file (repeatable).
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    config: Vec<String>,
    /// omp: another workspace directory (repeatable).
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    add_dir: Vec<String>,
    /// omp: approve every tool call.
    #[arg(long, visible_alias = "yolo")]
    auto_approve: bool,
    /// omp: system prompt (text or file).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    system_prompt: Option<String>,
    /// omp: text appended to the system prompt.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    append_system_prompt: Option<String>,
    /// omp: the tools to keep (comma-separated).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    tools: Option<String>,
    /// omp: no built-in tools.
    #[arg(long)]
    no_tools: bool,
    /// omp: no language-server tools.
    #[arg(long)]
    no_lsp: bool,
    /// omp: no pseudo-terminal for bash.
    #[arg(long)]
    no_pty: bool,
    /// omp: extension module (repeatable).
    #[arg(short = 'e', long, value_name = "PATH", allow_hyphen_values = true)]
    extension: Vec<String>,
    /// omp: trusted extension module (repeatable).
    #[arg(long, value_name = "PATH", allow_hyphen_values = true)]
    trusted_extension: Vec<String>,
    /// omp: hook module (repeatable).
    #[arg(long, value_name = "PATH", allow_hyphen_values = true)]
    hook: Vec<String>,
    /// omp: plugin directory (repeatable).
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    plugin_dir: Vec<String>,
    /// omp: no extensions.
    #[arg(long)]
    no_extensions: bool,
    /// omp: the skills to load (comma-separated).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    skills: Option<String>,
    /// omp: no skills.
    #[arg(long)]
    no_skills: bool,
    /// omp: no rules files.
    #[arg(long)]
    no_rules: bool,
    /// omp: no session title.
    #[arg(long)]
    no_title: bool,
    /// omp: models to cycle through (comma-separated).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    models: Option<String>,
    /// omp: the small model.
    #[arg(long, value_name = "MODEL", allow_hyphen_values = true)]
    smol: Option<String>,
    /// omp: the slow model.
    #[arg(long, value_name = "MODEL", allow_hyphen_values = true)]
    slow: Option<String>,
    /// omp: the plan model.
    #[arg(long, value_name = "MODEL", allow_hyphen_values = true)]
    plan: Option<String>,
    /// omp: plan, then run without asking.
    #[arg(long)]
    plan_yolo: bool,
    /// omp: where --plan-yolo writes its plan.
    #[arg(long, value_name = "PATH", allow_hyphen_values = true)]
    plan_yolo_into: Option<String>,
    /// omp: walk the repository first.
    #[arg(long)]
    prewalk: bool,
    /// omp: do not walk the repository first.
    #[arg(long)]
    no_prewalk: bool,
    /// omp: where the prewalk writes.
    #[arg(long, value_name = "PATH", allow_hyphen_values = true)]
    prewalk_into: Option<String>,
    /// omp: OpenAI service tier.
    #[arg(long, value_name = "TIER", allow_hyphen_values = true)]
    service_tier: Option<String>,
    /// omp: the provider's API key.
    #[arg(long, value_name = "KEY", allow_hyphen_values = true)]
    api_key: Option<String>,
    /// omp: the provider's session id.
    #[arg(long, value_name = "ID", allow_hyphen_values = true)]
    provider_session_id: Option<String>,
    /// omp: the prompt cache key.
    #[arg(long, value_name = "KEY", allow_hyphen_values = true)]
    prompt_cache_key: Option<String>,
    /// omp: hide thinking.
    #[arg(long)]
    hide_thinking: bool,
    /// omp: print thinking in print mode.
    #[arg(long)]
    print_thoughts: bool,
    /// omp: the advisor.
    #[arg(long)]
    advisor: bool,
    /// omp: external thinking.
    #[arg(long)]
    external_thinking: bool,
    /// omp: allow running in the home directory.
    #[arg(long)]
    allow_home: bool,
    /// omp: continue the latest session (there is none saved: a new one starts).
    #[arg(short = 'c', long = "continue")]
    continue_session: bool,
    /// omp: settings profile.
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    profile: Option<String>,
    /// omp: model alias profile.
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    alias: Option<String>,
}

/// omp's flags that need what a scripted agent does not have: a saved session to resume,
/// fork or import, or another mode. Parsed as omp parses them, then refused (exit 2).
#[derive(Args, Debug)]
#[command(next_help_heading = "Refused (need a saved session or another mode)")]
struct OmpRefused {
    /// omp: resume a saved session.
    #[arg(short = 'r', long, visible_alias = "session", num_args = 0..=1, value_name = "ID")]
    resume: Option<Option<String>>,
    /// omp: fork a saved session.
    #[arg(long, value_name = "ID", allow_hyphen_values = true)]
    fork: Option<String>,
    /// omp: import a Claude Code session.
    #[arg(long)]
    from_claude: bool,
    /// omp: import a Codex session.
    #[arg(long)]
    from_codex: bool,
    /// omp: print mode.
    #[arg(short = 'p', long)]
    print: bool,
    /// omp: export a session to HTML.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    export: Option<String>,
}

impl OmpRefused {
    /// The first refused flag given, if any.
    fn given(&self) -> Option<&'static str> {
        [
            (self.resume.is_some(), "--resume"),
            (self.fork.is_some(), "--fork"),
            (self.from_claude, "--from-claude"),
            (self.from_codex, "--from-codex"),
            (self.print, "--print"),
            (self.export.is_some(), "--export"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

/// omp's `--max-time`: a positive number of seconds, or a number with `s`, `m` or `h`.
fn parse_max_time(value: &str) -> Result<Duration, String> {
    let trimmed = value.trim();
    let (number, unit) = match trimmed.char_indices().last() {
        Some((i, 's')) => (&trimmed[..i], 1.0),
        Some((i, 'm')) => (&trimmed[..i], 60.0),
        Some((i, 'h')) => (&trimmed[..i], 3600.0),
        _ => (trimmed, 1.0),
    };
    // With a unit, omp takes only digits with an optional fraction (`\d+(?:\.\d+)?`).
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let plain = match number.split_once('.') {
        Some((whole, fraction)) => digits(whole) && digits(fraction),
        None => digits(number),
    };
    Some(number)
        .filter(|_| plain || number.len() == trimmed.len())
        .and_then(|n| n.parse::<f64>().ok())
        .map(|n| n * unit)
        .filter(|s| s.is_finite() && *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| {
            format!("Invalid --max-time value: {value:?}. Expected a positive number of seconds or duration like \"5s\", \"10m\", \"1h\".")
        })
}

pub fn run(args: AgentArgs) -> ExitCode {
    let Mode::Rpc = args.mode;
    if args.version {
        println!("musewire agent {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    if let Some(flag) = args.refused.given() {
        eprintln!("musewire agent: {flag} is not supported: the scripted agent keeps its session in memory and speaks only --mode rpc");
        return ExitCode::from(2);
    }
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
    if let Some(dir) = &args.cwd {
        if let Err(error) = std::env::set_current_dir(dir) {
            eprintln!("musewire agent: --cwd {}: {error}", dir.display());
            return ExitCode::from(2);
        }
    }
    let thinking = args.thinking.filter(|level| {
        let known = THINKING_LEVELS.contains(&level.as_str());
        if !known {
            eprintln!(
                "musewire agent: ignoring --thinking {level:?} (one of {})",
                THINKING_LEVELS.join(", ")
            );
        }
        known
    });
    let approval_mode = match args.approval_mode.as_deref().map(ApprovalMode::from_flag) {
        Some(Some(mode)) => mode,
        Some(None) => {
            eprintln!(
                "musewire agent: ignoring --approval-mode {:?} (one of always-ask, write, yolo)",
                args.approval_mode.unwrap_or_default()
            );
            ApprovalMode::default()
        }
        None => ApprovalMode::default(),
    };
    let options = Options {
        approval_mode,
        model: args.model,
        provider: args.provider,
        session_dir: args.session_dir,
        no_session: args.no_session,
        max_time: args.max_time,
        thinking,
        fixed_clock_ms,
        max_inline_bytes: args.max_inline_bytes,
        spill_dir: args.spill_dir,
        ..Options::default()
    };
    match musewire_agent::stdio::run(options) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("musewire agent: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_03_max_time_reads_as_omp_reads_it() {
        assert_eq!(parse_max_time("600"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_max_time(" 1.5 "), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_max_time("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_max_time("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_max_time("1h"), Ok(Duration::from_secs(3600)));
        for bad in [
            "0", "-1", "", "x", "5d", "inf", "NaN", "1e400", "1e1s", ".5m", "0s",
        ] {
            assert!(parse_max_time(bad).is_err(), "{bad}");
        }
    }
}
