//! How the agent starts: the flags hosts pass, and the clock that stamps messages.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The environment variable that fixes the clock (milliseconds since the Unix epoch), so a
/// test's output does not depend on the time of day.
pub const CLOCK_ENV: &str = "MUSEWIRE_AGENT_CLOCK_MS";

/// The thinking levels omp's `--thinking` takes.
pub const THINKING_LEVELS: [&str; 8] = [
    "off", "auto", "minimal", "low", "medium", "high", "xhigh", "max",
];

/// Which of the model's tools ask the host before they run: what `--approval-mode` says
/// (AGENT-07, omp 18.2.3's gate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalMode {
    /// Every tool runs unasked: no `--approval-mode`, or omp's `yolo` (the default).
    #[default]
    Unasked,
    /// omp's `write`: the `bash` tool (omp's `exec` tier) asks first, with omp's `select`
    /// (`Allow tool: bash`, `Approve` / `Deny`); `write` and `edit` (omp's `write` tier),
    /// `read`, `todo` and `ask` (its `read` tier) run unasked.
    AskBeforeBash,
    /// omp's `always-ask`: `bash`, `write` and `edit` (omp's `exec` and `write` tiers) ask
    /// first, each with omp's `select`; `read`, `todo` and `ask` run unasked.
    AskBeforeChanges,
}

impl ApprovalMode {
    /// The mode of an `--approval-mode` value omp takes (`always-ask`, `write`, `yolo`).
    pub fn from_flag(value: &str) -> Option<ApprovalMode> {
        match value {
            "always-ask" => Some(ApprovalMode::AskBeforeChanges),
            "write" => Some(ApprovalMode::AskBeforeBash),
            "yolo" => Some(ApprovalMode::Unasked),
            _ => None,
        }
    }
}

/// The agent's options: what `--model`, `--provider`, `--session-dir`, `--no-session`,
/// `--max-time`, `--thinking`, `--approval-mode`, `--max-inline-bytes`, `--spill-dir` and the
/// clock say, and the working directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `--model`: the model id the agent reports (default `scripted`).
    pub model: Option<String>,
    /// `--provider`: the provider it reports (default `musewire`).
    pub provider: Option<String>,
    /// `--session-dir`: the folder of the session files, `<sessionId>.jsonl` each
    /// ([`crate::session`], AGENT-05). [`crate::stdio::run`] makes it absolute, so that
    /// `get_state`'s `sessionFile` is.
    pub session_dir: Option<PathBuf>,
    /// `--no-session`: the session is in memory only, as omp's; `get_state` then names no
    /// session directory or file, and no file is written.
    pub no_session: bool,
    /// `--max-time`: the session's deadline, from the start (omp's). A run still going then
    /// is aborted; a prompt after it ends at once without calling the model.
    pub max_time: Option<Duration>,
    /// `--thinking`: the thinking level `get_state` reports (one of [`THINKING_LEVELS`];
    /// `off` when `None`).
    pub thinking: Option<String>,
    /// `--approval-mode`: which tools ask the host first (AGENT-07).
    pub approval_mode: ApprovalMode,
    /// A fixed clock (milliseconds since the Unix epoch) for every timestamp; `None` for the
    /// system clock, read once at start and advanced by the loop's `now`.
    pub fixed_clock_ms: Option<u64>,
    /// The working directory a session file's header names ([`crate::stdio::run`] fills it
    /// in when `None`).
    pub cwd: Option<PathBuf>,
    /// `--max-inline-bytes`: tool results whose text is larger are spilled to the store and
    /// reach the model and the history as a preview (SPILL-01..05); the agent then serves
    /// `read_output` (OUT-10). `None`: no spill, no `read_output`.
    pub max_inline_bytes: Option<usize>,
    /// `--spill-dir`: the spill store's root (SPILL-06); `None`: the session folder's `spill`
    /// directory when there is a session folder, else a private directory made in the temp
    /// dir on first use.
    pub spill_dir: Option<PathBuf>,
}

impl Options {
    /// The model id reported in `get_state` and on assistant messages.
    pub fn model_id(&self) -> &str {
        self.model.as_deref().unwrap_or("scripted")
    }

    /// The provider reported in `get_state` and on assistant messages.
    pub fn provider(&self) -> &str {
        self.provider.as_deref().unwrap_or("musewire")
    }
}

/// Turns the loop's `now` into the Unix-millisecond timestamps messages carry.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
    start_ms: u64,
    fixed: bool,
}

impl Clock {
    /// A clock starting at `start`: fixed at `fixed_ms` when given, else the system time at
    /// construction plus the time elapsed since `start`.
    pub fn new(start: Instant, fixed_ms: Option<u64>) -> Self {
        let start_ms = fixed_ms.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or(Duration::ZERO)
                .as_millis() as u64
        });
        Clock {
            start,
            start_ms,
            fixed: fixed_ms.is_some(),
        }
    }

    /// The timestamp of `now`, in milliseconds since the Unix epoch.
    pub fn millis(&self, now: Instant) -> u64 {
        if self.fixed {
            return self.start_ms;
        }
        self.start_ms + now.saturating_duration_since(self.start).as_millis() as u64
    }
}
