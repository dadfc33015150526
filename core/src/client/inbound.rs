//! What the agent writes, routed: responses to their requests, host calls and dialogs to the
//! application, everything else passed on (CALL-01..03, CALL-06, HOST-02..06, PAGE-07).

use std::time::{Duration, Instant};

use serde_json::Value;

use super::action::{ClientEvent, CommandFailure, HistorySource};
use super::error::SessionError;
use super::history::{self, Step, Walk};
use super::{Action, Client, Phase, Purpose, RequestId, OPEN_PROMPTS};
use crate::frame::{
    DecodeEvent, Frame, FrameError, ProtocolVersion, MAX_FRAME_BYTES, MAX_REASSEMBLED_FRAME_BYTES,
};
use crate::wire::{
    AgentFrame, Command, ErrorCode, NegotiateProtocol, PromptResult, Response, ResponseData,
    SessionEvent, UiRequest,
};

impl Client {
    /// Hands in bytes read from the agent's stdout.
    pub(super) fn handle_stdout(&mut self, now: Instant, bytes: &[u8]) {
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
                DecodeEvent::Error(error) => self.on_frame_error(error),
            }
        }
    }

    /// A framing error, in its place among the frames.
    fn on_frame_error(&mut self, error: FrameError) {
        if error.is_fatal() {
            // FRAME-13: fatal to the session; the driver stops the agent.
            self.close(SessionError::protocol(&error));
            self.actions.push_back(Action::StopAgent);
        } else {
            self.event(ClientEvent::warning(&error));
        }
    }

    fn on_frame(&mut self, now: Instant, mut frame: Frame) {
        // The decoder checks late: a plain line comes unchecked, and the
        // typed parse, which takes only JSON, reads it once; the framing check runs only
        // when that parse fails (a frame checked already passes it at once), and gives the
        // error the decoder would have given.
        let strict = frame.parse::<AgentFrame>();
        if strict.is_err() {
            if let Err(error) = frame.check() {
                return self.on_frame_error(error);
            }
        }
        let Ok(typed) = AgentFrame::lenient(strict, frame.payload()) else {
            // The framing layer checked the JSON; only a nesting too deep for the parser
            // lands here. Pass it on as a warning rather than lose it silently.
            return self.event(ClientEvent::ProtocolWarning {
                rule: "CALL-06",
                message: "frame too deeply nested to parse".into(),
                detail: None,
                prefix: None,
            });
        };
        // The frame's `type`: the envelope's when the framing layer read it, else the
        // parsed frame's (the same string: the strict parse refuses a `type` written twice,
        // and reads `id` and `command` as the envelope does, the last one written).
        let kind = if frame.is_checked() {
            frame.frame_type()
        } else {
            typed.type_name()
        };
        let kind = FrameKind::of(kind);
        if let Phase::AwaitingReady { .. } = self.phase {
            if kind == FrameKind::Ready {
                return self.on_ready(now, typed);
            }
            // HOST-10: pi's extension announces itself first; what was held goes its way.
            if let AgentFrame::ExtensionUiRequest(request) = &typed {
                self.tools_via_pi |= super::pi_host_tools::is_announcement(request);
            }
            // FRAME-03: an agent that starts without a ready frame is v1-only.
            self.become_ready(ProtocolVersion::V1);
        }
        match typed {
            AgentFrame::Response(response) => self.on_response(&frame, *response),
            AgentFrame::Unknown(value) if kind == FrameKind::Response => {
                self.on_response(&frame, lenient_response(value))
            }
            AgentFrame::PromptResult(result) => self.on_prompt_result(result),
            frame @ AgentFrame::Event(SessionEvent::AgentStart(_)) => {
                self.streaming = true;
                self.event(ClientEvent::Frame { frame });
                self.event(ClientEvent::TurnStarted);
            }
            frame @ AgentFrame::Event(SessionEvent::AgentEnd(_)) => {
                let terminal = matches!(&frame, AgentFrame::Event(SessionEvent::AgentEnd(end)) if end.is_terminal());
                self.end_of_run(frame, terminal);
            }
            AgentFrame::Unknown(value) if kind == FrameKind::AgentEnd => {
                // CALL-09 on a frame the wire model could not type: only `isTerminal: false`
                // or `willRetry: true` keeps the run going.
                let terminal = value.get("isTerminal") != Some(&Value::Bool(false))
                    && value.get("willRetry") != Some(&Value::Bool(true));
                self.end_of_run(AgentFrame::Unknown(value), terminal);
            }
            AgentFrame::HostToolCall(call) => self.host_tool_call(call),
            AgentFrame::HostToolCancel(cancel) => self.host_tool_cancel(cancel.target_id),
            AgentFrame::HostUriRequest(request) => {
                self.host_uri_requests.insert(request.id.clone());
                self.event(ClientEvent::HostUriRequest(request));
            }
            AgentFrame::HostUriCancel(cancel) => {
                if self.host_uri_requests.remove(&cancel.target_id) {
                    self.event(ClientEvent::HostUriCancelled {
                        id: cancel.target_id,
                    });
                }
            }
            AgentFrame::ExtensionUiRequest(request) => self.on_ui_request(now, request),
            frame => self.event(ClientEvent::Frame { frame }),
        }
    }

    /// HOST-02: a host tool call is open (its result may be spilled as this source names it)
    /// and reaches the application; through pi's extension too (HOST-10).
    pub(super) fn host_tool_call(&mut self, call: crate::wire::HostToolCall) {
        let source = crate::spill::SpillSource::new(
            call.tool_name.clone(),
            call.tool_call_id.clone(),
            call.tool_name.clone(),
        );
        self.host_calls.insert(call.id.clone(), source);
        self.event(ClientEvent::HostToolCall(call));
    }

    /// HOST-03: the agent withdrew host tool call `id`; the application hears of it when it
    /// was open or its result was being saved.
    pub(super) fn host_tool_cancel(&mut self, id: String) {
        let open = self.host_calls.remove(&id).is_some();
        if open || self.cancel_spill(&id) {
            self.event(ClientEvent::HostToolCancelled { id });
        }
    }

    /// CALL-09: the run goes on unless the `agent_end` is terminal.
    fn end_of_run(&mut self, frame: AgentFrame, terminal: bool) {
        self.event(ClientEvent::Frame { frame });
        if terminal {
            self.streaming = false;
            self.event(ClientEvent::TurnFinished);
        }
    }

    /// FRAME-03, FRAME-04: negotiate v2 when offered within our ceilings; else v1.
    fn on_ready(&mut self, now: Instant, ready: AgentFrame) {
        let offer = match &ready {
            AgentFrame::Ready(r) => Offer {
                v2: r.supports(2),
                max_frame_bytes: r.max_frame_bytes.map(|n| n as f64),
                max_reassembled_frame_bytes: r.max_reassembled_frame_bytes.map(|n| n as f64),
            },
            // A ready frame the wire model could not type (a limit written as 1048576.0,
            // say) is read as JSON reads it.
            AgentFrame::Unknown(value) => Offer {
                v2: value
                    .get("supportedProtocolVersions")
                    .and_then(Value::as_array)
                    .is_some_and(|v| v.iter().any(|n| n.as_f64() == Some(2.0))),
                max_frame_bytes: value.get("maxFrameBytes").and_then(Value::as_f64),
                max_reassembled_frame_bytes: value
                    .get("maxReassembledFrameBytes")
                    .and_then(Value::as_f64),
            },
            _ => Offer::default(),
        };
        let within = |n: Option<f64>, ceiling: usize, protocol: usize| {
            n.is_some_and(|n| n >= 1.0 && n <= ceiling.min(protocol) as f64)
        };
        let acceptable = within(
            offer.max_frame_bytes,
            self.config.max_frame_bytes,
            MAX_FRAME_BYTES,
        ) && within(
            offer.max_reassembled_frame_bytes,
            self.config.max_reassembled_frame_bytes,
            MAX_REASSEMBLED_FRAME_BYTES,
        );
        self.agent_limits = super::limits::AgentLimits::from_offer(
            offer.max_frame_bytes,
            offer.max_reassembled_frame_bytes,
        );
        self.read_output = super::output::offer(&ready);
        self.event(ClientEvent::Frame { frame: ready });
        if offer.v2 && acceptable && self.config.negotiate_v2 {
            self.phase = Phase::Negotiating {
                deadline: now + self.config.ready_timeout,
            };
            let command = Command::NegotiateProtocol(NegotiateProtocol {
                protocol_version: 2,
                ..Default::default()
            });
            // From the response on, the agent may chunk (FRAME-05): the decoder switches
            // itself right after a successful response line.
            self.decoder.set_follow_negotiation(true);
            self.request(command, Purpose::Negotiate);
        } else {
            self.become_ready(ProtocolVersion::V1);
        }
    }

    fn on_response(&mut self, frame: &Frame, response: Response) {
        // The envelope's `id` and `command` when the framing layer read them; else the
        // strict parse's, which are the same strings.
        let (id, command) = if frame.is_checked() {
            (frame.id(), frame.command())
        } else {
            (response.id.as_deref(), Some(response.command.as_str()))
        };
        let wire_id = id.and_then(RequestId::from_wire);
        let own = wire_id.filter(|id| self.pending.contains_key(id));
        let matched = own.or_else(|| {
            if id.is_some() || response.success {
                return None;
            }
            // CALL-02: an id-less failure belongs to the one pending request with its
            // command, or, for "parse", to the one pending request.
            let command = command.unwrap_or_default();
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
            if let (Some(id), false) = (wire_id, response.success) {
                if let Some(at) = self.open_prompts.iter().position(|p| *p == id) {
                    self.open_prompts.remove(at);
                    let Err(failure) = response_outcome(response) else {
                        unreachable!("a response that is no success is a failure")
                    };
                    return self.event(ClientEvent::PromptFailed {
                        request: id,
                        failure,
                    });
                }
            }
            return self.event(ClientEvent::Unmatched {
                frame: AgentFrame::Response(Box::new(response)),
            });
        };
        // The data moves to its event; nothing is copied.
        let outcome = response_outcome(response);
        let pending = self
            .pending
            .remove(&request)
            .expect("matched a pending request");
        self.learn_session(&outcome);
        match pending.purpose {
            Purpose::App => {
                if pending.command == "prompt" {
                    // CALL-03: `agentInvoked: false` (omp) or `disposition: "handled"` (pi 1.6).
                    let local =
                        matches!(&outcome, Ok(ResponseData::Prompt(data)) if data.is_local());
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
            // FRAME-03: the probe's answer, whatever it says, only showed the agent is
            // there; the version was settled by the first frame.
            Purpose::Probe => {}
            Purpose::Negotiate => {
                let v2 = match &outcome {
                    Ok(ResponseData::NegotiateProtocol(d)) => d.protocol_version == 2,
                    // `2.0`, say, which JSON reads as 2 but the wire model does not type.
                    Ok(ResponseData::Other(d)) => {
                        d.get("protocolVersion").and_then(Value::as_f64) == Some(2.0)
                    }
                    _ => false,
                };
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
                self.request(command, Purpose::HistoryPage(walk));
            }
            Step::Legacy => {
                self.request(history::legacy_command(), Purpose::HistoryLegacy(walk));
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

    fn on_prompt_result(&mut self, result: PromptResult) {
        let id = result.id.as_deref().and_then(RequestId::from_wire);
        let local = !result.agent_invoked;
        match id.and_then(|id| self.open_prompts.iter().position(|p| *p == id)) {
            Some(at) if local => {
                let request = self.open_prompts.remove(at).expect("position is in range");
                self.event(ClientEvent::PromptLocalOnly { request });
            }
            _ => self.event(ClientEvent::Frame {
                frame: AgentFrame::PromptResult(result),
            }),
        }
    }

    fn on_ui_request(&mut self, now: Instant, request: UiRequest) {
        let Some(request) = self.pi_host_tools_inbound(request) else {
            return;
        };
        if let UiRequest::Cancel(cancel) = &request {
            if self.dialogs.remove(&cancel.target_id).is_some() {
                self.event(ClientEvent::UiWithdrawn {
                    id: cancel.target_id.clone(),
                    timed_out: false,
                });
            }
            return;
        }
        if let (true, Some(id)) = (request.is_dialog(), request.id()) {
            // A dialog (HOST-06): the agent takes the default when the timeout passes; the
            // dialog closes then.
            let deadline = request
                .timeout_ms()
                .filter(|ms| *ms >= 0.0)
                .map(|ms| now + Duration::from_millis(ms as u64));
            self.dialogs.insert(id.to_owned(), deadline);
        }
        self.event(ClientEvent::UiRequest(request));
    }
}

/// The numbers a ready frame offers (FRAME-03).
#[derive(Debug, Default)]
struct Offer {
    v2: bool,
    max_frame_bytes: Option<f64>,
    max_reassembled_frame_bytes: Option<f64>,
}

/// A response's data, or its failure with the typed code (CALL-08).
fn response_outcome(response: Response) -> Result<ResponseData, CommandFailure> {
    if response.success {
        return Ok(response.data.unwrap_or(ResponseData::Other(Value::Null)));
    }
    Err(CommandFailure {
        error: response.error.unwrap_or_else(|| "unknown error".to_owned()),
        code: response.code,
    })
}

/// The frame types routing looks at before the typed frame is taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    Ready,
    Response,
    AgentEnd,
    Other,
}

impl FrameKind {
    fn of(kind: Option<&str>) -> FrameKind {
        match kind {
            Some("ready") => FrameKind::Ready,
            Some("response") => FrameKind::Response,
            Some("agent_end") => FrameKind::AgentEnd,
            _ => FrameKind::Other,
        }
    }
}

/// A `response` frame whose members the wire model could not type (a data payload of
/// another shape, a `success` that is not a boolean, …), read as the reference client reads
/// it: the data kept as sent, anything but `success: true` a failure.
fn lenient_response(value: Value) -> Response {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let success = value.get("success") == Some(&Value::Bool(true));
    let mut response = Response {
        id: text("id"),
        command: text("command").unwrap_or_default(),
        success,
        data: value.get("data").cloned().map(ResponseData::Other),
        error: text("error"),
        code: text("code").map(|c| ErrorCode::from_wire(&c)),
        ..Response::default()
    };
    if let Value::Object(members) = value {
        response.extra = members
            .into_iter()
            .filter(|(k, _)| {
                !matches!(
                    k.as_str(),
                    "id" | "type" | "command" | "success" | "data" | "error" | "code"
                )
            })
            .collect();
    }
    response
}
