//! Framing errors, each with the rule it enforces and the reference agent's wording.

use thiserror::Error;

/// A framing error on an inbound stream.
///
/// The messages are the reference agent's (`rpc-frame.ts`, `rpc-client.ts`) where it has one,
/// so hosts that match on them keep working. [`FrameError::rule`] names the rule of
/// `conformance/RULES.md`; [`FrameError::is_fatal`] says whether the stream can go on.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrameError {
    /// A physical line longer than `maxFrameBytes` (LF included); the decoder skipped to the
    /// next LF (FRAME-02). Not fatal.
    #[error("rpc frame line exceeds maxFrameBytes")]
    LineTooLong {
        /// The limit in force.
        limit: usize,
    },
    /// A line that is not one JSON value (FRAME-13). Not fatal.
    #[error("rpc frame is not valid JSON")]
    NotJson {
        /// What is wrong, and where.
        detail: String,
        /// The first bytes of the line (at most 64), lossily decoded, for the log.
        prefix: String,
    },
    /// An `rpc_chunk` frame while protocol v2 is not active (FRAME-05).
    #[error("RPC chunk received before protocol negotiation")]
    ChunkBeforeNegotiation,
    /// A chunk whose chunkId, index, count or byteLength break FRAME-07.
    #[error("invalid rpc chunk metadata")]
    InvalidChunkMetadata,
    /// A chunk whose `data` is not non-empty canonical padded base64 (FRAME-08).
    #[error("invalid rpc chunk data")]
    InvalidChunkData,
    /// A chunk whose decoded payload is over 262,144 bytes (FRAME-08).
    #[error("rpc chunk payload exceeds the transport limit")]
    ChunkPayloadTooLarge,
    /// The first chunk of a sequence does not have index 0 (FRAME-09).
    #[error("rpc chunk sequence must start at index 0")]
    SequenceStart,
    /// A chunk whose chunkId, count, byteLength or index does not follow its sequence (FRAME-09).
    #[error("rpc chunk sequence mismatch")]
    SequenceMismatch,
    /// The chunks so far carry more bytes than byteLength declares (FRAME-09).
    #[error("rpc chunk sequence exceeds declared length")]
    SequenceExceedsLength,
    /// The last chunk arrived with fewer bytes in total than byteLength declares (FRAME-09).
    #[error("rpc chunk sequence length mismatch")]
    SequenceLengthMismatch,
    /// A frame other than a chunk arrived while a sequence was open (FRAME-09).
    #[error("rpc chunk sequence interrupted")]
    SequenceInterrupted,
    /// The stream ended while a sequence was open (FRAME-15, FRAME-13: nothing is lost silently).
    #[error("rpc chunk sequence truncated by end of stream")]
    SequenceTruncated,
    /// Reassembled bytes that are not strict UTF-8 (FRAME-10).
    #[error("rpc frame is not valid UTF-8")]
    ReassembledNotUtf8,
    /// Reassembled bytes that are not exactly one JSON value (FRAME-10).
    #[error("rpc frame is not valid JSON")]
    ReassembledNotJson {
        /// What is wrong, and where.
        detail: String,
    },
    /// A logical frame that is JSON but not an object (FRAME-10).
    #[error("rpc frame must be an object")]
    NotAnObject,
}

impl FrameError {
    /// The ID of the rule this error enforces, as in `conformance/RULES.md`.
    pub fn rule(&self) -> &'static str {
        match self {
            FrameError::LineTooLong { .. } => "FRAME-02",
            FrameError::NotJson { .. } => "FRAME-13",
            FrameError::ChunkBeforeNegotiation => "FRAME-05",
            FrameError::InvalidChunkMetadata => "FRAME-07",
            FrameError::InvalidChunkData | FrameError::ChunkPayloadTooLarge => "FRAME-08",
            FrameError::SequenceStart
            | FrameError::SequenceMismatch
            | FrameError::SequenceExceedsLength
            | FrameError::SequenceLengthMismatch
            | FrameError::SequenceInterrupted => "FRAME-09",
            FrameError::SequenceTruncated => "FRAME-15",
            FrameError::ReassembledNotUtf8
            | FrameError::ReassembledNotJson { .. }
            | FrameError::NotAnObject => "FRAME-10",
        }
    }

    /// Whether the error ends the session (FRAME-13): every chunk-sequence and reassembly
    /// violation does; an oversized line or a line that is not JSON does not.
    pub fn is_fatal(&self) -> bool {
        !matches!(
            self,
            FrameError::LineTooLong { .. } | FrameError::NotJson { .. }
        )
    }
}

/// The error of asking for a protocol version the framing layer does not have (FRAME-06).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("Unsupported RPC protocol version: {0}")]
pub struct UnsupportedVersion(pub String);
