//! How an [`Agent`](super::Agent) starts.

use crate::spill::SpillPolicy;

/// What the agent does with a command whose type the wire model does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnknownCommands {
    /// Answer it as the reference does, `{type:"response", command, success:false,
    /// error:"Unknown command: X"}` without the id (CALL-02).
    #[default]
    Reject,
    /// Hand it to the application as [`Command::Unknown`](crate::wire::Command::Unknown)
    /// (CALL-06); the application answers it, or calls
    /// [`AgentCall::RejectUnknown`](super::AgentCall::RejectUnknown).
    Deliver,
}

/// Configuration of an [`Agent`](super::Agent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentConfig {
    /// Longest stdin line accepted, LF included (FRAME-14). A longer line is discarded up to
    /// its LF and answered with a `parse` failure; the agent never buffers more. Default
    /// 64 MiB.
    pub max_input_line_bytes: usize,
    /// Commands of unknown types. Default [`UnknownCommands::Reject`].
    pub unknown_commands: UnknownCommands,
    /// The spill policy applied to the tool results handed in with
    /// [`AgentCall::SettleToolResult`](super::AgentCall::SettleToolResult) (SPILL-01..05):
    /// `max_inline_bytes` (`None`, the default: no spill) and whether the driver has a store
    /// to perform [`AgentAction::SpillWrite`](super::AgentAction::SpillWrite) with.
    pub spill: SpillPolicy,
    /// Whether the agent serves `read_output` (OUT-10, ours): its ready frame then offers
    /// `readOutput` and the driver performs
    /// [`AgentAction::OutputRead`](super::AgentAction::OutputRead). Default false: the ready
    /// frame is omp's, and `read_output` is an unknown command.
    pub serve_outputs: bool,
}

/// The default inbound line cap: 64 MiB.
pub const DEFAULT_MAX_INPUT_LINE_BYTES: usize = 64 * 1024 * 1024;

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_input_line_bytes: DEFAULT_MAX_INPUT_LINE_BYTES,
            unknown_commands: UnknownCommands::Reject,
            spill: SpillPolicy::default(),
            serve_outputs: false,
        }
    }
}
