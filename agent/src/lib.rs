//! # musewire-agent
//!
//! The bundled reference agent: `musewire agent --mode rpc` speaks the RPC protocol on
//! stdio like oh-my-pi does, built on the core's [`musewire_core::agent::Agent`], with a
//! deterministic scripted model instead of an LLM (see [`script`]) and real tools: `bash`
//! (`sh -c`, abortable, its output's first [`MAX_OUTPUT_BYTES`] kept, and its last
//! [`MAX_UPDATE_BYTES`] so far sent in `tool_execution_update`s while it runs, at most one
//! per [`UPDATE_INTERVAL`]: AGENT-06), `read` (files, a
//! window of lines with `offset`/`limit` up to the same cap: [`read`]; and host URIs through
//! the host), `todo`, and the host's own tools. It keeps a real message history (user,
//! assistant, tool results, bash executions), pages it (PAGE-01..06), and with
//! `--session-dir` keeps each session in a file of that folder, loaded back by
//! `switch_session` ([`session`], AGENT-05). With `--approval-mode always-ask`
//! ([`ApprovalMode`]) its `bash`, `write` and `edit` tools ask the host first, as omp's do
//! (AGENT-07).
//!
//! [`App`] is the application, driven without a process by tests, sans-IO apart from the
//! shell commands it runs: its file work goes through the [I/O seam](io) ([`App::poll_io`],
//! [`App::handle_io`]), performed for real by a [`disk::Disk`]. [`stdio::run`] runs both on
//! the mio driver's agent-side stdio loop ([`musewire_mio::agent_stdio`]), as the
//! `musewire agent` command does.
//!
//! With `--max-inline-bytes N` ([`Options::max_inline_bytes`]) every tool's final result goes
//! through the core's spill policy before it reaches the model and the history
//! ([`musewire_core::agent::AgentCall::SettleToolResult`]): a larger text is saved to the
//! local spill store (`--spill-dir`, or a private temp directory) by the loop
//! ([`stdio::run`]), and the model-facing result is a preview, the notice and
//! `details.storedOutput` (SPILL-01..06, OUT-02); the agent then offers and serves
//! `read_output` (OUT-10). A shell command's output is then kept up to
//! [`MAX_SPILLED_OUTPUT_BYTES`] instead of [`MAX_OUTPUT_BYTES`].
//!
//! Deterministic: ids are counters (`session-N`, the first `N` whose file the session folder
//! does not hold; `entry-N`, `call-N`); timestamps come from the loop's `now`, on a clock
//! that [`Options::fixed_clock_ms`] (or the `MUSEWIRE_AGENT_CLOCK_MS` environment variable,
//! read by the command) fixes.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod app;
mod bash;
mod commands;
pub mod disk;
pub(crate) mod drive;
pub mod io;
mod messages;
mod options;
pub mod read;
mod run;
pub mod script;
pub mod session;
pub mod stdio;
mod todo;
mod tools;

pub use app::App;
pub use bash::Notify;
pub use bash::{MAX_OUTPUT_BYTES, MAX_SPILLED_OUTPUT_BYTES, MAX_UPDATE_BYTES, UPDATE_INTERVAL};
pub use commands::BUSY;
pub use options::{ApprovalMode, Clock, Options, CLOCK_ENV, THINKING_LEVELS};
pub use run::{MAX_DELTAS, MAX_QUOTE_BYTES};
pub use script::MAX_REPLY_BYTES;
pub use tools::BUILTIN_TOOLS;
