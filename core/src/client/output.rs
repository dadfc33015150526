//! The host side of `read_output`, musewire's extension of the RPC protocol (OUT-10, ours):
//! the client remembers whether the agent's ready frame offered it, and refuses a
//! `read_output` before anything is written when it did not (omp and pi never offer it), or
//! when its params are not what the agent would take (OUT-03, over the offer's maximum).
//!
//! A page comes back typed as [`ResponseData::ReadOutput`](crate::wire::ResponseData) (a
//! [`ReadResult`](crate::output::ReadResult)); a failed read's `code` as
//! [`CommandFailure::output_code`].

use super::{Client, ClientError, CommandFailure, Phase};
use crate::output::{
    OutputError, OutputErrorCode, ReadParams, MAX_READ_BYTES, READ_OUTPUT_VERSION,
};
use crate::wire::{AgentFrame, Command, ReadOutputOffer};

/// The `readOutput` offer of a ready frame, typed or read as JSON reads it (a ready frame the
/// wire model could not type).
pub(crate) fn offer(ready: &AgentFrame) -> Option<ReadOutputOffer> {
    match ready {
        AgentFrame::Ready(ready) => ready.read_output.clone(),
        AgentFrame::Unknown(value) => {
            serde::Deserialize::deserialize(value.get("readOutput")?).ok()
        }
        _ => None,
    }
}

impl Client {
    /// The most bytes one `read_output` may ask of this agent, when its ready frame offered
    /// `read_output` version 1 (OUT-10); `None` when it did not (an agent without a ready
    /// frame, omp, pi), or offered another version or a maximum of 0, and before the ready
    /// frame, while it is not known. A maximum over
    /// 1,048,576 (OUT-03) counts as 1,048,576.
    pub fn read_output_max_bytes(&self) -> Option<u64> {
        if !matches!(self.phase, Phase::Ready | Phase::Negotiating { .. }) {
            return None;
        }
        self.read_output
            .as_ref()
            .filter(|offer| offer.version == READ_OUTPUT_VERSION && offer.max_length_bytes >= 1)
            .map(|offer| offer.max_length_bytes.min(MAX_READ_BYTES))
    }

    /// Whether the agent serves `read_output` (OUT-10): see [`Client::read_output_max_bytes`].
    pub fn serves_read_output(&self) -> bool {
        self.read_output_max_bytes().is_some()
    }

    /// OUT-10: a `read_output` (typed, or an unknown command of that type) goes only to an
    /// agent that offered it, with params it takes (OUT-03, OUT-09); otherwise it is refused
    /// and nothing is written. Before the ready frame the offer is not known: refused too
    /// (with its own error), never held.
    pub(super) fn check_read_output(&self, command: &Command) -> Result<(), ClientError> {
        if command.type_name() != "read_output" {
            return Ok(());
        }
        if let Phase::AwaitingReady { .. } = self.phase {
            return Err(ClientError::ReadOutputBeforeReady);
        }
        let max = self
            .read_output_max_bytes()
            .ok_or(ClientError::ReadOutputNotOffered)?;
        let params = ReadParams::from_value(&command.to_value_with_id(None))
            .map_err(ClientError::InvalidReadOutput)?;
        if params.length_bytes > max {
            return Err(ClientError::InvalidReadOutput(OutputError::InvalidParams {
                field: "lengthBytes".into(),
                reason: format!(
                    "{} is over the agent's maxLengthBytes {max}",
                    params.length_bytes
                ),
            }));
        }
        Ok(())
    }
}

impl CommandFailure {
    /// A failed `read_output`'s code, typed (OUT-10): one of the codes of
    /// [`OutputErrorCode`]; `None` when the failure has no code or one that is not a read
    /// failure's (the agent's `error` text says more).
    pub fn output_code(&self) -> Option<OutputErrorCode> {
        OutputErrorCode::from_wire(self.code.as_ref()?.as_str())
    }
}
