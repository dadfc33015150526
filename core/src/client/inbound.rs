//! What the agent writes, routed: responses to their requests, host calls and dialogs to the
//! application, everything else passed on (CALL-01..03, CALL-06, HOST-02..06, PAGE-07).

use std::time::{Duration, Instant};

use serde_json::Value;

use super::action::{ClientEvent, CommandFailure, HistorySource};
use super::error::SessionError;
use super::history::{self, Step, Walk};
use super::{Action, Client, Phase, Purpose, RequestId, OPEN_PROMPTS};
use crate::frame::{
    DecodeEvent, Frame, ProtocolVersion, MAX_FRAME_BYTES, MAX_REASSEMBLED_FRAME_BYTES,
};

/// Dialogs that wait for an answer; the other UI methods are notices (HOST-06).
const DIALOGS: [&str; 4] = ["select", "confirm", "input", "editor"];

impl Client {
    /// Hands in bytes read from the agent's stdout.
    pub fn handle_stdout(&mut self, now: Instant, bytes: &[u8]) {
        if self.phase == Phase::Closed {
            return;
        }
        self.decoder.handle_bytes(bytes);
        self.drain_decoder(now);
    }

    pub(super) fn drain_decoder(&mut self, now: Instant) {
        while let Some(event) = self.decoder.poll_event() {
            if self.phase == Phase::Closed {
                continue;
            }
            match event {
                DecodeEvent::Frame(frame) => self.on_frame(now, frame),
                DecodeEvent::Error(error) if error.is_fatal() => {
                    // FRAME-13: fatal to the session; the driver stops the agent.
                    self.close(SessionError::protocol(&error));
                    self.actions.push_back(Action::StopAgent);
                }
                DecodeEvent::Error(error) => self.event(ClientEvent::warning(&error)),
            }
        }
    }

    fn on_frame(&mut self, now: Instant, frame: Frame) {
        let kind = frame.frame_type().map(str::to_owned);
        let Ok(value) = frame.parse::<Value>() else {
            // The framing layer checked the JSON; only a nesting too deep for the parser
            // lands here. Pass it on as a warning rather than lose it silently.
            return self.event(ClientEvent::ProtocolWarning {
                rule: "CALL-06",
                message: "frame too deeply nested to parse".into(),
                detail: None,
                prefix: None,
            });
        };
        if let Phase::AwaitingReady { .. } = self.phase {
            if kind.as_deref() == Some("ready") {
                return self.on_ready(now, value);
            }
            // FRAME-03: an agent that starts without a ready frame is v1-only.
            self.become_ready(ProtocolVersion::V1);
        }
        match kind.as_deref() {
            Some("response") => self.on_response(&frame, value),
            Some("prompt_result") => self.on_prompt_result(value),
            Some("agent_start") => {
                self.streaming = true;
                self.event(ClientEvent::Frame { frame: value });
                self.event(ClientEvent::TurnStarted);
            }
            Some("agent_end") => {
                let terminal = value.get("isTerminal") != Some(&Value::Bool(false));
                self.event(ClientEvent::Frame { frame: value });
                if terminal {
                    self.streaming = false;
                    self.event(ClientEvent::TurnFinished);
                }
            }
            Some("host_tool_call") => self.on_host_tool_call(value),
            Some("host_tool_cancel") => {
                let target = str_field(&value, "targetId");
                if self.host_calls.remove(&target) {
                    self.event(ClientEvent::HostToolCancelled { id: target });
                }
            }
            Some("host_uri_request") => {
                let id = str_field(&value, "id");
                self.host_uri_requests.insert(id.clone());
                self.event(ClientEvent::HostUriRequest {
                    id,
                    operation: str_field(&value, "operation"),
                    url: str_field(&value, "url"),
                    content: value
                        .get("content")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                });
            }
            Some("host_uri_cancel") => {
                let target = str_field(&value, "targetId");
                if self.host_uri_requests.remove(&target) {
                    self.event(ClientEvent::HostUriCancelled { id: target });
                }
            }
            Some("extension_ui_request") => self.on_ui_request(now, value),
            _ => self.event(ClientEvent::Frame { frame: value }),
        }
    }

    /// FRAME-03, FRAME-04: negotiate v2 when offered within our ceilings; else v1.
    fn on_ready(&mut self, now: Instant, ready: Value) {
        let offers_v2 = ready
            .get("supportedProtocolVersions")
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|n| n.as_f64() == Some(2.0)));
        let within = |key: &str, ceiling: usize, protocol: usize| {
            ready
                .get(key)
                .and_then(Value::as_f64)
                .is_some_and(|n| n >= 1.0 && n <= ceiling.min(protocol) as f64)
        };
        let acceptable = within(
            "maxFrameBytes",
            self.config.max_frame_bytes,
            MAX_FRAME_BYTES,
        ) && within(
            "maxReassembledFrameBytes",
            self.config.max_reassembled_frame_bytes,
            MAX_REASSEMBLED_FRAME_BYTES,
        );
        self.agent_limits = super::limits::AgentLimits::from_ready(&ready);
        self.event(ClientEvent::Frame { frame: ready });
        if offers_v2 && acceptable && self.config.negotiate_v2 {
            self.phase = Phase::Negotiating {
                deadline: now + self.config.ready_timeout,
            };
            let command = serde_json::json!({"type": "negotiate_protocol", "protocolVersion": 2});
            // From the response on, the agent may chunk (FRAME-05): the decoder switches
            // itself right after a successful response line.
            self.decoder.set_follow_negotiation(true);
            self.issue(command, Purpose::Negotiate);
        } else {
            self.become_ready(ProtocolVersion::V1);
        }
    }

    fn on_response(&mut self, frame: &Frame, value: Value) {
        let outcome = response_outcome(&value);
        let own = frame
            .id()
            .and_then(RequestId::from_wire)
            .filter(|id| self.pending.contains_key(id));
        let matched = own.or_else(|| {
            if frame.id().is_some() || outcome.is_ok() {
                return None;
            }
            // CALL-02: an id-less failure belongs to the one pending request with its
            // command, or, for "parse", to the one pending request.
            let command = frame.command().unwrap_or_default();
            let same: Vec<RequestId> = self
                .pending
                .iter()
                .filter(|(_, p)| p.command == command)
                .map(|(id, _)| *id)
                .collect();
            match (same.as_slice(), command) {
                ([one], _) => Some(*one),
                (_, "parse") if self.pending.len() == 1 => self.pending.keys().next().copied(),
                _ => None,
            }
        });
        let Some(request) = matched else {
            // CALL-03: a second response to an acknowledged prompt reports a later failure.
            if let (Some(id), Err(failure)) = (frame.id().and_then(RequestId::from_wire), &outcome)
            {
                if let Some(at) = self.open_prompts.iter().position(|p| *p == id) {
                    self.open_prompts.remove(at);
                    return self.event(ClientEvent::PromptFailed {
                        request: id,
                        failure: failure.clone(),
                    });
                }
            }
            return self.event(ClientEvent::Unmatched { frame: value });
        };
        let pending = self
            .pending
            .remove(&request)
            .expect("matched a pending request");
        match pending.purpose {
            Purpose::App => {
                if pending.command == "prompt" {
                    let local = outcome
                        .as_ref()
                        .is_ok_and(|d| d.get("agentInvoked") == Some(&Value::Bool(false)));
                    if outcome.is_ok() && !local {
                        self.open_prompts.push_back(request);
                        if self.open_prompts.len() > OPEN_PROMPTS {
                            self.open_prompts.pop_front();
                        }
                    }
                }
                self.event(ClientEvent::Response {
                    request,
                    command: pending.command,
                    outcome,
                });
            }
            Purpose::Negotiate => {
                let v2 = outcome
                    .as_ref()
                    .is_ok_and(|d| d.get("protocolVersion").and_then(Value::as_f64) == Some(2.0));
                self.decoder.set_follow_negotiation(false);
                if !v2 {
                    // FRAME-06: refused; the stream stays v1.
                    self.decoder.set_protocol(ProtocolVersion::V1);
                }
                self.become_ready(if v2 {
                    ProtocolVersion::V2
                } else {
                    ProtocolVersion::V1
                });
            }
            Purpose::HistoryPage(walk) => {
                let step = match self.walks.get_mut(&walk) {
                    Some(state) => state.page(outcome),
                    None => return,
                };
                self.walk_step(walk, step);
            }
            Purpose::HistoryLegacy(walk) => {
                self.walks.remove(&walk);
                self.event(ClientEvent::History {
                    request: walk,
                    source: HistorySource::Legacy,
                    outcome: history::legacy(outcome),
                });
            }
        }
    }

    fn walk_step(&mut self, walk: RequestId, step: Step) {
        match step {
            Step::Page(command) => {
                if let Some((read, Some(total))) = self.walks.get(&walk).map(Walk::progress) {
                    self.event(ClientEvent::HistoryProgress {
                        request: walk,
                        read,
                        total,
                    });
                }
                self.issue(command, Purpose::HistoryPage(walk));
            }
            Step::Legacy => {
                self.issue(history::legacy_command(), Purpose::HistoryLegacy(walk));
            }
            Step::Done(messages) => {
                self.walks.remove(&walk);
                self.event(ClientEvent::History {
                    request: walk,
                    source: HistorySource::Pages,
                    outcome: Ok(messages),
                });
            }
            Step::Failed(failure) => {
                self.walks.remove(&walk);
                self.event(ClientEvent::History {
                    request: walk,
                    source: HistorySource::Pages,
                    outcome: Err(failure),
                });
            }
        }
    }

    fn on_prompt_result(&mut self, value: Value) {
        let id = value
            .get("id")
            .and_then(Value::as_str)
            .and_then(RequestId::from_wire);
        let local = value.get("agentInvoked") == Some(&Value::Bool(false));
        match id.and_then(|id| self.open_prompts.iter().position(|p| *p == id)) {
            Some(at) if local => {
                let request = self.open_prompts.remove(at).expect("position is in range");
                self.event(ClientEvent::PromptLocalOnly { request });
            }
            _ => self.event(ClientEvent::Frame { frame: value }),
        }
    }

    fn on_host_tool_call(&mut self, value: Value) {
        let id = str_field(&value, "id");
        self.host_calls.insert(id.clone());
        self.event(ClientEvent::HostToolCall {
            id,
            tool_call_id: str_field(&value, "toolCallId"),
            tool_name: str_field(&value, "toolName"),
            arguments: value.get("arguments").cloned().unwrap_or(Value::Null),
        });
    }

    fn on_ui_request(&mut self, now: Instant, value: Value) {
        let id = str_field(&value, "id");
        let method = str_field(&value, "method");
        if method == "cancel" {
            let target = str_field(&value, "targetId");
            if self.dialogs.remove(&target).is_some() {
                self.event(ClientEvent::UiWithdrawn {
                    id: target,
                    timed_out: false,
                });
            }
            return;
        }
        if DIALOGS.contains(&method.as_str()) {
            // The agent takes the default when the timeout passes; the dialog closes then.
            let deadline = value
                .get("timeout")
                .and_then(Value::as_f64)
                .filter(|ms| *ms >= 0.0 && ms.is_finite())
                .map(|ms| now + Duration::from_millis(ms as u64));
            self.dialogs.insert(id.clone(), deadline);
        }
        self.event(ClientEvent::UiRequest {
            id,
            method,
            frame: value,
        });
    }
}

fn str_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A response's data, or its failure with the typed code (CALL-08).
fn response_outcome(value: &Value) -> Result<Value, CommandFailure> {
    if value.get("success") == Some(&Value::Bool(true)) {
        return Ok(value.get("data").cloned().unwrap_or(Value::Null));
    }
    Err(CommandFailure {
        error: value
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("unknown error")
            .to_owned(),
        code: value.get("code").and_then(Value::as_str).map(str::to_owned),
    })
}
