//! What the agent takes on its stdin, as its ready frame says (HOST-09, ours):
//! a host answer whose line is over that limit would be dropped by the agent and its call would
//! wait forever, so the client sends an error answer in its place, at once, and tells the
//! application.

use super::action::{Action, ClientEvent};
use super::Client;
use crate::frame::ProtocolVersion;
use crate::wire::{HostFrame, HostToolResult, HostUriResult, ToolResult};

/// The rule a host answer over the agent's limit breaks.
pub(crate) const RULE: &str = "HOST-09";

/// The limits the agent's ready frame advertised (FRAME-03); none without a ready frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct AgentLimits {
    /// `maxFrameBytes`: the longest line in v1.
    frame: Option<usize>,
    /// `maxReassembledFrameBytes`: the longest logical frame in v2.
    reassembled: Option<usize>,
}

impl AgentLimits {
    /// The limits a ready frame offers; one that is not a positive whole number is unknown.
    pub(crate) fn from_offer(frame: Option<f64>, reassembled: Option<f64>) -> Self {
        let limit = |n: Option<f64>| {
            n.filter(|n| *n >= 1.0 && n.fract() == 0.0)
                .map(|n| n.min(usize::MAX as f64) as usize)
        };
        AgentLimits {
            frame: limit(frame),
            reassembled: limit(reassembled),
        }
    }

    /// The longest line, LF included, the agent takes in `protocol`, when it said.
    fn line(&self, protocol: ProtocolVersion) -> Option<usize> {
        match protocol {
            ProtocolVersion::V1 => self.frame,
            _ => self.reassembled,
        }
    }
}

impl Client {
    /// Writes a host answer (`host_tool_result`, `host_uri_result`) for request `id`. When its
    /// line is over what the agent takes (HOST-09), `refusal(message)` is written in its place,
    /// so the agent fails the call at once, and the application gets a
    /// [`ClientEvent::ProtocolWarning`] naming the rule.
    pub(super) fn write_host_answer(
        &mut self,
        id: &str,
        frame: HostFrame,
        refusal: impl FnOnce(&str) -> HostFrame,
    ) {
        let mut line = frame.to_vec();
        line.push(b'\n');
        let kind = frame.type_name().unwrap_or("answer");
        let over = self
            .agent_limits
            .line(self.protocol)
            .filter(|limit| line.len() > *limit);
        if let Some(limit) = over {
            let message = format!(
                "the {kind} for {id} is {} bytes, over the agent's limit of {limit} bytes: \
                 sent as an error instead",
                line.len()
            );
            drop(line);
            self.event(ClientEvent::ProtocolWarning {
                rule: RULE,
                message: message.clone(),
                detail: None,
                prefix: None,
            });
            self.write_frame(&refusal(&message));
        } else {
            self.actions.push_back(Action::Write { bytes: line });
        }
    }
}

/// The `host_tool_result` sent in place of one over the limit (HOST-02: an error result).
pub(crate) fn tool_refusal(id: &str, message: &str) -> HostFrame {
    HostFrame::HostToolResult(HostToolResult {
        id: id.to_owned(),
        result: ToolResult::text(message),
        is_error: Some(true),
        ..Default::default()
    })
}

/// The `host_uri_result` sent in place of one over the limit (HOST-05: an error).
pub(crate) fn uri_refusal(id: &str, message: &str) -> HostFrame {
    HostFrame::HostUriResult(HostUriResult {
        id: id.to_owned(),
        is_error: Some(true),
        error: Some(message.to_owned()),
        ..Default::default()
    })
}
