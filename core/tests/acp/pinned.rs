//! The bridge's limits, budgets and words as an editor and an agent meet them, pinned by
//! value here: the core keeps them to itself, and a change to one is a change these tests see.
#![allow(dead_code)]

use std::time::Duration;

/// How long a turn's end waits for the agent's `get_session_stats` (ACP-02).
pub const STATS_BUDGET: Duration = Duration::from_secs(5);
/// The `authMethods` id of the agent's own sign-in (ACP-40).
pub const AGENT_METHOD: &str = "agent";
/// The `authMethods` id of the sign-in run in the editor's terminal (ACP-40).
pub const TERMINAL_METHOD: &str = "terminal";
/// The argument the terminal sign-in runs the CLI with (ACP-40).
pub const TERMINAL_LOGIN_ARG: &str = "--musewire-terminal-login";
/// A turn's `auth_required` message (ACP-42).
pub const SIGN_IN_REQUIRED: &str = "the agent needs credentials for its provider: sign in";
/// Editor bytes waiting to be written past which the agents' stdout is not read (ACP-20).
pub const EDITOR_HIGH_WATER: usize = 1 << 20;
/// Editor bytes waiting to be written past which the editor's input is not read (ACP-20).
pub const EDITOR_READ_LIMIT: usize = 16 << 20;
/// Bytes waiting for one agent's stdin past which the editor's input is not read (ACP-20).
pub const AGENT_STDIN_HIGH_WATER: usize = 4 << 20;
/// Editor requests that may wait on one session's agent (ACP-23).
pub const MAX_WAITING_REQUESTS: usize = 64;
/// Session-file requests (forks, deletes) that may wait on the driver at once.
pub const MAX_WAITING_FILE_REQUESTS: usize = 64;
/// The longest title `session/list` gives, in characters (ACP-26).
pub const MAX_LIST_TITLE_CHARS: usize = 80;
/// The note an audio block leaves in the turn (ACP-14).
pub const AUDIO_NOTE: &str = "[audio not sent: this agent's prompts carry text and images only]";
/// The note an image leaves when the agent takes no images (ACP-14).
pub const IMAGE_NOT_TAKEN_NOTE: &str = "[image not sent: this agent takes no images]";
/// What the prompt says where embedded context was cut (ACP-15).
pub const CONTEXT_CUT_NOTICE: &str =
    "[… embedded context cut: this prompt's resources are over 4 MiB; the rest is not included]";
/// The embedded context one prompt carries (ACP-15).
pub const MAX_CONTEXT_BYTES: usize = 4 * 1024 * 1024;
/// The images one prompt carries (ACP-14).
pub const MAX_PROMPT_IMAGES: usize = 20;
/// The error code word of a prompt with too many images (ACP-14).
pub const TOO_MANY_IMAGES: &str = "too_many_images";
/// The error code word of a prompt with over 10 MiB of images (ACP-14).
pub const IMAGES_TOO_LARGE: &str = "images_too_large";
/// Prompts one session queues behind a running turn (ACP-27).
pub const MAX_QUEUED_PROMPTS: usize = 8;
/// Restarts of a session's agent within [`RESTART_WINDOW`] (ACP-33).
pub const MAX_RESTARTS: usize = 3;
/// The window [`MAX_RESTARTS`] counts in (ACP-33).
pub const RESTART_WINDOW: Duration = Duration::from_secs(60);
/// How long the editor has to answer a write for its review (ACP-39).
pub const EDITOR_WRITE_BUDGET: Duration = Duration::from_secs(10);
/// The method a reviewed edit is sent to the editor with (ACP-39).
pub const WRITE_METHOD: &str = "fs/write_text_file";
/// The label of an edit not sent for review (ACP-39).
pub const NOT_SENT_LABEL: &str = "edit not in the editor's review";
/// The label of an edit the editor refused (ACP-39).
pub const REFUSED_LABEL: &str = "the editor refused the edit";
/// The label of an edit the editor did not confirm in time (ACP-39).
pub const UNCONFIRMED_LABEL: &str = "the editor did not confirm the edit";
/// How long an agent may say nothing while the editor waits, unless configured (ACP-21).
pub const DEFAULT_SILENCE_BUDGET: Duration = Duration::from_secs(60);
/// How long a stopped agent has after its stdin closes before its group is killed (ACP-12).
pub const STOP_GRACE: Duration = Duration::from_secs(1);
/// The longest the bridge waits for its agents once its shutdown began (ACP-12).
pub const SHUTDOWN_BUDGET: Duration = Duration::from_secs(3);

/// The line a card approved by the session's mode begins with (ACP-34); `mode` as the
/// editor's dropdown names it ("Accept edits", "Allow all").
pub fn approved_line(mode: &str) -> String {
    format!("[approved without asking: the session's mode is {mode}]")
}
