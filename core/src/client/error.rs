//! Client errors: misuse by the application, and what ends a session.

use serde::Serialize;
use thiserror::Error;

use crate::frame::FrameError;

/// A call the client refuses; nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ClientError {
    /// The session has closed; start the client again for a new agent process.
    #[error("the session is closed")]
    Closed,
    /// A prompt while the agent streams must say whether it steers or follows up (CALL-04).
    #[error(
        "the agent is streaming: a prompt must choose streamingBehavior \"steer\" or \"followUp\""
    )]
    StreamingBehaviorRequired,
    /// A host tool definition that the agent would refuse (HOST-01), with its message.
    #[error("{0}")]
    InvalidHostTool(String),
    /// A host URI scheme that the agent would refuse (HOST-04), with its message.
    #[error("{0}")]
    InvalidHostUriScheme(String),
    /// A command that is not a JSON object with a string `type`.
    #[error("a command must be a JSON object with a string \"type\"")]
    InvalidCommand,
    /// A `read_output` to an agent whose ready frame did not offer it (OUT-10): omp, pi, an
    /// agent with no ready frame.
    #[error(
        "the agent does not serve read_output: its ready frame offered no readOutput (OUT-10)"
    )]
    ReadOutputNotOffered,
    /// A `read_output` before the agent's ready frame, which says whether it serves it
    /// (OUT-10): wait for [`ClientEvent::Ready`](super::ClientEvent::Ready).
    #[error("read_output before the agent's ready frame: whether it serves read_output is not known yet (OUT-10)")]
    ReadOutputBeforeReady,
    /// A `read_output` whose params the agent would refuse (OUT-03, OUT-09, or over the
    /// offer's `maxLengthBytes`).
    #[error("invalid read_output: {0}")]
    InvalidReadOutput(crate::output::OutputError),
}

/// How the agent process ended, as the driver saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitStatus {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
    /// The driver could not tell.
    Unknown,
}

impl std::fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitStatus::Code(c) => write!(f, "code {c}"),
            ExitStatus::Signal(s) => write!(f, "signal {s}"),
            ExitStatus::Unknown => write!(f, "an unknown status"),
        }
    }
}

/// Why a session ended (CALL-07, FRAME-13). Every pending request fails with it.
#[derive(Debug, Clone, PartialEq, Eq, Error, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SessionError {
    /// The agent process exited.
    #[error("Agent process exited with {status}. Stderr: {stderr}")]
    Exited {
        /// How it ended: its exit code, the signal that killed it, or unknown.
        status: ExitStatus,
        /// The tail of its stderr.
        stderr: String,
    },
    /// The agent's stdout ended before it exited.
    #[error("Agent output stream ended unexpectedly. Stderr: {stderr}")]
    OutputEnded {
        /// The tail of its stderr, so far.
        stderr: String,
    },
    /// A fatal framing violation (FRAME-13).
    #[error("Agent output reader failed: {message}")]
    Protocol {
        /// The rule broken.
        rule: &'static str,
        /// The reference's message.
        message: String,
    },
    /// The application stopped the session.
    #[error("Client stopped")]
    Stopped,
}

impl SessionError {
    pub(crate) fn protocol(error: &FrameError) -> Self {
        SessionError::Protocol {
            rule: error.rule(),
            message: error.to_string(),
        }
    }
}
