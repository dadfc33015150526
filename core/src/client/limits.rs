//! What the agent takes on its stdin, as its ready frame says (HOST-09, ours; issue 14 item 6):
//! a host answer whose line is over that limit would be dropped by the agent and its call would
//! wait forever, so the client sends an error answer in its place, at once, and tells the
//! application.

use serde_json::{json, Value};

use super::action::{Action, ClientEvent};
use super::Client;
use crate::frame::ProtocolVersion;

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
    /// The limits in a ready frame; a field that is not a positive whole number is unknown.
    pub(crate) fn from_ready(ready: &Value) -> Self {
        let limit = |key: &str| {
            ready
                .get(key)
                .and_then(Value::as_f64)
                .filter(|n| *n >= 1.0 && n.fract() == 0.0)
                .map(|n| n.min(usize::MAX as f64) as usize)
        };
        AgentLimits {
            frame: limit("maxFrameBytes"),
            reassembled: limit("maxReassembledFrameBytes"),
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
        frame: Value,
        refusal: impl FnOnce(&str) -> Value,
    ) {
        let mut line = serde_json::to_vec(&frame).expect("a JSON value serialises");
        line.push(b'\n');
        let kind = frame
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("answer");
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
            self.write_frame(refusal(&message));
        } else {
            self.actions.push_back(Action::Write { bytes: line });
        }
    }
}

/// The `host_tool_result` sent in place of one over the limit (HOST-02: an error result).
pub(crate) fn tool_refusal(id: &str, message: &str) -> Value {
    json!({"type": "host_tool_result", "id": id, "result": {"content": [{"type": "text", "text": message}]}, "isError": true})
}

/// The `host_uri_result` sent in place of one over the limit (HOST-05: an error).
pub(crate) fn uri_refusal(id: &str, message: &str) -> Value {
    json!({"type": "host_uri_result", "id": id, "isError": true, "error": message})
}
