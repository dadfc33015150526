//! The host side of the agent RPC protocol: [`Client`] drives `omp --mode rpc` (v1 and v2)
//! or `pi --mode rpc` (v1 only).
//!
//! The client follows the crate's run-loop contract (the [crate docs](crate) state the poll
//! order and the time rule): the driver hands in every [`Input`] through [`Client::handle`]
//! (the agent's stdout and stderr, their end, the agent's exit, timers, and the application's
//! [`Call`]s), then drains [`Client::poll_action`] (bytes to write, typed [`ClientEvent`]s, a
//! request to stop the agent) and sleeps until [`Client::poll_timeout`]. `handle` is the only
//! way in: every change of the client's state is an [`Input`], so the inputs a [`Recorder`]
//! writes down replay the session exactly; the other methods only read. Frames reach the
//! application typed on the wire model ([`musewire_wire::AgentFrame`], unknown types and members
//! kept, CALL-06), responses with their data typed by the command
//! ([`musewire_wire::ResponseData`]), failures with their [`musewire_wire::ErrorCode`].
//!
//! ```
//! use std::time::Instant;
//! use musewire_core::client::{Action, Call, Client, ClientConfig, ClientEvent, Input};
//! use musewire_wire::{GetState, ResponseData};
//!
//! let now = Instant::now();
//! let mut client = Client::new(ClientConfig::default(), now);
//! // As the agent starts: the start-up probe (FRAME-03), which tells a v1 agent's answer
//! // from a ready frame without waiting for one.
//! assert!(matches!(client.poll_action(), Some(Action::Write { bytes }) if bytes == b"{\"id\":\"req_0\",\"type\":\"get_state\"}\n"));
//! let state = client.handle(now, Input::Call(Call::Send(GetState::default().into()))).request().unwrap();
//! // Held until the agent is ready: nothing to write yet.
//! assert!(client.poll_action().is_none());
//! client.handle(now, Input::stdout(b"{\"type\":\"ready\",\"protocolVersion\":1,\"supportedProtocolVersions\":[1]}\n"));
//! let mut written = Vec::new();
//! while let Some(action) = client.poll_action() {
//!     if let Action::Write { bytes } = action { written.extend(bytes) }
//! }
//! assert_eq!(written, b"{\"id\":\"req_1\",\"type\":\"get_state\"}\n");
//! client.handle(now, Input::stdout(b"{\"id\":\"req_1\",\"type\":\"response\",\"command\":\"get_state\",\"success\":true,\"data\":{\"isStreaming\":false}}\n"));
//! let answered = std::iter::from_fn(|| client.poll_action()).any(|a| matches!(a,
//!     Action::Event(ClientEvent::Response { request, outcome: Ok(ResponseData::State(_)), .. }) if request == state));
//! assert!(answered);
//! ```

mod action;
mod agent_kind;
mod answer;
mod answered;
mod call;
mod config;
mod error;
mod fetch;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub(crate) mod history;
mod host;
mod inbound;
mod input;
mod limits;
mod output;
pub mod pi_host_tools;
mod record;
mod requests;
mod spill;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

pub use action::{Action, ClientEvent, CommandFailure, HistorySource, RequestId};
pub use agent_kind::AgentKind;
pub use answer::CallError;
pub use answered::Answer;
pub use call::{Call, CallResult, StepError};
pub use config::ClientConfig;
pub use error::{ClientError, ExitStatus, SessionError};
pub use fetch::{FetchError, FetchProgress, Fetched, OutputFetch, FETCH_PAGE_BYTES};
pub(crate) use host::{normalize_host_tools, normalize_host_uri_schemes};
pub use input::Input;
pub use record::{abbreviate_str, fnv1a64, normalize, Recorder, ABBREVIATE_OVER};
pub use requests::HostRequestKind;

use crate::frame::{DecoderConfig, Negotiation, ProtocolVersion, StreamDecoder};
use crate::wire::StreamingBehavior;
use crate::wire::{
    Command, GetState, HostFrame, HostToolDefinition, HostToolUpdate, HostUriResult,
    HostUriSchemeDefinition, Prompt, SetHostTools, SetHostUriSchemes, ToolResult, UiResponse,
};
use history::Walk;

/// How long after stdout ends the client waits for the exit status before closing.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    AwaitingReady {
        deadline: Instant,
    },
    /// Waiting for the answer to our `negotiate_protocol`; past the deadline, v1.
    Negotiating {
        deadline: Instant,
    },
    Ready,
    /// Stdout ended; waiting a moment for the exit status.
    Ending {
        deadline: Instant,
    },
    Closed,
}

#[derive(Debug, Clone, PartialEq)]
enum Purpose {
    App,
    Negotiate,
    /// The start-up probe (FRAME-03): its answer only says the agent is there.
    Probe,
    HistoryPage(RequestId),
    HistoryLegacy(RequestId),
}

#[derive(Debug, Clone)]
struct Pending {
    command: String,
    purpose: Purpose,
}

/// The host side of one agent session. See the [module docs](self).
#[derive(Debug)]
pub struct Client {
    config: ClientConfig,
    decoder: StreamDecoder,
    phase: Phase,
    protocol: ProtocolVersion,
    next_id: u64,
    pending: BTreeMap<RequestId, Pending>,
    /// Lines held until the session is ready.
    held: Vec<Held>,
    walks: BTreeMap<RequestId, Walk>,
    /// Prompts acknowledged as agent work, still open to `prompt_result` or a late failure.
    open_prompts: VecDeque<RequestId>,
    /// Open host tool calls, with the source a spilled result names (SPILL-03).
    host_calls: BTreeMap<String, crate::spill::SpillSource>,
    host_uri_requests: BTreeSet<String>,
    dialogs: BTreeMap<String, Option<Instant>>,
    streaming: bool,
    stderr_tail: Vec<u8>,
    actions: VecDeque<Action>,
    /// What the agent's ready frame says it takes (HOST-09).
    agent_limits: limits::AgentLimits,
    /// The ready frame's `readOutput` offer (OUT-10).
    read_output: Option<crate::wire::ReadOutputOffer>,
    /// The owner session of spilled host tool results (SPILL-05): the agent's `sessionId`
    /// as a response last gave it, else the configured one.
    spill_owner: Option<crate::spill::SpillOwner>,
    /// Host tool results waiting for their spill writes.
    spills: crate::spill::Saves<spill::HostSpill>,
    /// HOST-10: the agent is pi with musewire's extension, which carries the host tools.
    tools_via_pi: bool,
    /// HOST-10: open host tool calls that came through the extension: dialog id → toolCallId.
    pi_calls: BTreeMap<String, String>,
}

/// A line held until the session is ready.
#[derive(Debug)]
enum Held {
    /// A line to write as it is, once the session is ready.
    Line(Vec<u8>),
    /// A `set_host_tools`, as itself or through pi's extension (HOST-10): which one is known
    /// once the agent has said whether it has the extension.
    HostTools { native: Vec<u8>, pi: Vec<u8> },
}

/// The start-up probe's request id (FRAME-03): `req_0`, which the counter never gives.
const PROBE: RequestId = RequestId(0);

/// How many acknowledged prompts stay open to a late `prompt_result` or failure.
const OPEN_PROMPTS: usize = 32;

impl Client {
    /// A client for an agent process started at `now`.
    pub fn new(config: ClientConfig, now: Instant) -> Self {
        let mut client = Client {
            decoder: StreamDecoder::new(),
            phase: Phase::Closed,
            protocol: ProtocolVersion::V1,
            next_id: 0,
            pending: BTreeMap::new(),
            held: Vec::new(),
            walks: BTreeMap::new(),
            open_prompts: VecDeque::new(),
            host_calls: BTreeMap::new(),
            host_uri_requests: BTreeSet::new(),
            dialogs: BTreeMap::new(),
            streaming: false,
            stderr_tail: Vec::new(),
            actions: VecDeque::new(),
            agent_limits: limits::AgentLimits::default(),
            read_output: None,
            spill_owner: config.spill_owner.clone(),
            spills: crate::spill::Saves::default(),
            tools_via_pi: false,
            pi_calls: BTreeMap::new(),
            config,
        };
        client.restart(now);
        client
    }

    /// [`Call::Restart`]; also the start of a new client.
    fn restart(&mut self, now: Instant) {
        if self.phase != Phase::Closed {
            self.close(SessionError::Stopped);
            self.actions.push_back(Action::StopAgent);
        }
        self.decoder = StreamDecoder::with_config(DecoderConfig {
            max_frame_bytes: self.config.max_frame_bytes,
            protocol: ProtocolVersion::V1,
            // An observer follows the negotiation it sees on the wire (FRAME-05).
            negotiation: match self.config.observe {
                true => Negotiation::Follow,
                false => Negotiation::Ignore,
            },
        });
        // Every frame gets the typed parse here, which checks its JSON as it reads: the
        // framing layer need not read a plain line first.
        self.decoder.check_late();
        self.protocol = ProtocolVersion::V1;
        self.agent_limits = limits::AgentLimits::default();
        self.read_output = None;
        self.streaming = false;
        self.tools_via_pi = false;
        self.stderr_tail.clear();
        self.phase = if self.config.expect_ready && !self.config.observe {
            Phase::AwaitingReady {
                deadline: now + self.config.ready_timeout,
            }
        } else {
            Phase::Ready
        };
        if self.phase == Phase::Ready {
            self.event(ClientEvent::Ready {
                protocol: ProtocolVersion::V1,
            });
        } else if self.config.start_probe {
            self.probe();
        }
    }

    /// The protocol version in force.
    pub fn protocol(&self) -> ProtocolVersion {
        self.protocol
    }

    /// Whether the agent is streaming a run (between `agent_start` and a terminal `agent_end`).
    pub fn is_streaming(&self) -> bool {
        self.streaming
    }

    /// Bytes of lines held until the session is ready (CALL-05's "held"): a driver that
    /// bounds what waits for the agent's stdin counts them with its own.
    pub fn held_bytes(&self) -> usize {
        self.held
            .iter()
            .map(|held| match held {
                Held::Line(line) | Held::HostTools { native: line, .. } => line.len(),
            })
            .sum()
    }

    /// Whether the session has ended.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// Requests waiting for an answer (the application's and the client's own).
    pub fn pending_requests(&self) -> usize {
        self.pending.len() + self.walks.len()
    }

    /// [`Call::Send`].
    fn send(&mut self, command: Command) -> Result<RequestId, ClientError> {
        if self.phase == Phase::Closed {
            return Err(ClientError::Closed);
        }
        if command.type_name().is_empty() {
            return Err(ClientError::InvalidCommand);
        }
        if let Command::Prompt(prompt) = &command {
            if self.streaming && prompt.streaming_behavior.is_none() {
                return Err(ClientError::StreamingBehaviorRequired);
            }
        }
        self.check_read_output(&command)?;
        Ok(self.request(command, Purpose::App))
    }

    /// [`Call::Prompt`].
    fn prompt(
        &mut self,
        message: &str,
        behavior: Option<StreamingBehavior>,
    ) -> Result<RequestId, ClientError> {
        self.send(Command::Prompt(Prompt {
            message: message.to_owned(),
            streaming_behavior: behavior,
            ..Prompt::default()
        }))
    }

    /// [`Call::SetHostTools`].
    fn set_host_tools(&mut self, tools: &[HostToolDefinition]) -> Result<RequestId, ClientError> {
        let tools = host::checked_host_tools(tools).map_err(ClientError::InvalidHostTool)?;
        if self.phase == Phase::Closed {
            return Err(ClientError::Closed);
        }
        // HOST-10: through pi's extension when the agent announced it; which route a call
        // held before the session is ready takes is settled when it is.
        let id = self.new_id();
        let pi = pi_host_tools::set_line(&id.wire(), &tools);
        let command = Command::SetHostTools(SetHostTools {
            tools,
            ..Default::default()
        });
        let mut native = command.to_vec_with_id(Some(&id.wire()));
        native.push(b'\n');
        let line = Held::HostTools { native, pi };
        self.register(id, command.type_name(), Purpose::App, line);
        Ok(id)
    }

    /// [`Call::SetHostUriSchemes`].
    fn set_host_uri_schemes(
        &mut self,
        schemes: &[HostUriSchemeDefinition],
    ) -> Result<RequestId, ClientError> {
        let schemes =
            host::checked_host_uri_schemes(schemes).map_err(ClientError::InvalidHostUriScheme)?;
        self.send(Command::SetHostUriSchemes(SetHostUriSchemes {
            schemes,
            ..Default::default()
        }))
    }

    /// [`Call::ReadHistory`].
    fn read_history(&mut self) -> Result<RequestId, ClientError> {
        if self.phase == Phase::Closed {
            return Err(ClientError::Closed);
        }
        let walk = self.new_id();
        self.walks
            .insert(walk, Walk::new(self.config.history_page_limit));
        // Before ready the version is not known yet: the walk starts when the session is.
        if self.phase == Phase::Ready {
            self.start_walk(walk);
        }
        Ok(walk)
    }

    /// [`Call::HostToolUpdate`].
    fn host_tool_update(&mut self, id: &str, partial_result: ToolResult) -> bool {
        if !self.host_calls.contains_key(id) {
            return false;
        }
        if self.is_pi_call(id) {
            // HOST-10: pi's extension takes no partial results.
            return true;
        }
        self.write_frame(&HostFrame::HostToolUpdate(HostToolUpdate {
            id: id.to_owned(),
            partial_result,
            ..Default::default()
        }));
        true
    }

    /// [`Call::HostToolResult`].
    fn host_tool_result(&mut self, id: &str, result: ToolResult, is_error: bool) -> bool {
        let Some(source) = self.host_calls.remove(id) else {
            return false;
        };
        if self.phase != Phase::Closed {
            self.send_tool_result(id, source, result, is_error);
        }
        true
    }

    /// [`Call::HostUriResult`].
    fn host_uri_result(&mut self, id: &str, mut result: HostUriResult) -> bool {
        if !self.host_uri_requests.remove(id) {
            return false;
        }
        result.id = id.to_owned();
        if self.phase != Phase::Closed {
            self.write_host_answer(id, HostFrame::HostUriResult(result), |m| {
                limits::uri_refusal(id, m)
            });
        }
        true
    }

    /// [`Call::UiRespond`].
    fn ui_respond(&mut self, id: &str, mut answer: UiResponse) -> bool {
        if self.dialogs.remove(id).is_none() {
            return false;
        }
        answer.id = id.to_owned();
        self.write_frame(&HostFrame::ExtensionUiResponse(answer));
        true
    }

    /// [`Call::RawLine`].
    fn send_raw_line(&mut self, bytes: &[u8]) -> bool {
        let mut line = bytes.to_vec();
        line.push(b'\n');
        match self.phase {
            Phase::Closed => return false,
            Phase::AwaitingReady { .. } | Phase::Negotiating { .. } => {
                self.held.push(Held::Line(line))
            }
            _ => self.actions.push_back(Action::Write { bytes: line }),
        }
        true
    }

    /// [`Call::Stop`].
    fn stop(&mut self) {
        if self.phase != Phase::Closed {
            self.close(SessionError::Stopped);
            self.actions.push_back(Action::StopAgent);
        }
    }

    /// [`Input::Stderr`]: the client keeps a bounded tail for errors.
    fn handle_stderr(&mut self, bytes: &[u8]) {
        self.stderr_tail.extend_from_slice(bytes);
        let keep = self.config.stderr_tail_bytes;
        if self.stderr_tail.len() > keep {
            let mut cut = self.stderr_tail.len() - keep;
            // Start the tail on a character, not inside one.
            while self.stderr_tail.get(cut).is_some_and(|b| b & 0xc0 == 0x80) {
                cut += 1;
            }
            self.stderr_tail.drain(..cut);
        }
    }

    /// The next action, if any.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When [`Input::Timeout`] is next due: the driver hands it in at that time.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let phase = match self.phase {
            Phase::AwaitingReady { deadline }
            | Phase::Negotiating { deadline }
            | Phase::Ending { deadline } => Some(deadline),
            _ => None,
        };
        let dialog = self.dialogs.values().flatten().min().copied();
        phase.into_iter().chain(dialog).min()
    }

    /// [`Input::Timeout`]: the ready timeout, dialog timeouts, the exit grace.
    fn handle_timeout(&mut self, now: Instant) {
        match self.phase {
            Phase::AwaitingReady { deadline } if now >= deadline => {
                self.become_ready(ProtocolVersion::V1)
            }
            Phase::Negotiating { deadline } if now >= deadline => {
                // The agent offered v2 but never answered: go on in v1 rather than hold
                // everything (FRAME-04). A late answer is then unmatched.
                self.pending.retain(|_, p| p.purpose != Purpose::Negotiate);
                self.decoder.set_follow_negotiation(false);
                self.become_ready(ProtocolVersion::V1);
            }
            Phase::Ending { deadline } if now >= deadline => {
                let stderr = self.stderr_text();
                self.close(SessionError::OutputEnded { stderr });
            }
            _ => {}
        }
        let expired: Vec<String> = self
            .dialogs
            .iter()
            .filter(|(_, deadline)| deadline.is_some_and(|d| now >= d))
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            self.dialogs.remove(&id);
            self.event(ClientEvent::UiWithdrawn {
                id,
                timed_out: true,
            });
        }
    }

    /// [`Input::StdoutEnd`]: the session closes when the exit status arrives, or shortly
    /// after without it (CALL-07).
    fn handle_stdout_eof(&mut self, now: Instant) {
        if self.phase == Phase::Closed {
            return;
        }
        self.decoder.handle_eof();
        self.drain_decoder(now);
        if self.phase != Phase::Closed {
            self.phase = Phase::Ending {
                deadline: now + EXIT_GRACE,
            };
        }
    }

    /// [`Input::Exit`]: every pending request fails with an error naming the status and the
    /// stderr tail (CALL-07).
    fn handle_exit(&mut self, status: ExitStatus, stderr_tail: &[u8]) {
        self.handle_stderr(stderr_tail);
        if self.phase != Phase::Closed {
            let stderr = self.stderr_text();
            self.close(SessionError::Exited { status, stderr });
        }
    }

    /// The tail of what the agent wrote on stderr (CALL-07's bound), trimmed.
    pub fn stderr_tail(&self) -> String {
        self.stderr_text()
    }

    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr_tail)
            .trim_end()
            .to_owned()
    }

    fn new_id(&mut self) -> RequestId {
        self.next_id += 1;
        RequestId(self.next_id)
    }

    /// Registers and writes (or holds) a request of the application or the client.
    fn request(&mut self, command: Command, purpose: Purpose) -> RequestId {
        let id = self.new_id();
        let mut line = command.to_vec_with_id(Some(&id.wire()));
        line.push(b'\n');
        self.register(id, command.type_name(), purpose, Held::Line(line));
        id
    }

    /// Registers request `id` (its command `kind`) and writes its line, or holds it until
    /// the session is ready (the client's own negotiation and probe go at once).
    fn register(&mut self, id: RequestId, kind: &str, purpose: Purpose, line: Held) {
        let held = matches!(
            self.phase,
            Phase::AwaitingReady { .. } | Phase::Negotiating { .. }
        ) && !matches!(purpose, Purpose::Negotiate | Purpose::Probe);
        self.pending.insert(
            id,
            Pending {
                command: kind.to_owned(),
                purpose,
            },
        );
        if held {
            self.held.push(line);
        } else {
            let bytes = self.routed(line);
            self.actions.push_back(Action::Write { bytes });
        }
    }

    /// The bytes a held line goes as now: a `set_host_tools` through pi's extension when the
    /// agent announced it (HOST-10), else as itself.
    fn routed(&self, line: Held) -> Vec<u8> {
        match line {
            Held::Line(line) => line,
            Held::HostTools { pi, .. } if self.tools_via_pi => pi,
            Held::HostTools { native, .. } => native,
        }
    }

    /// FRAME-03: as the agent starts, before any ready frame, the client asks it one
    /// question whose answer is harmless in v1: `get_state`, as `req_0` (an id the counter
    /// never gives), a response (never an event) that the agent writes after any ready frame
    /// of its own, since an agent that sends one sends it before it reads its input.
    /// Whatever the agent writes first then settles the version: its ready frame
    /// (negotiation follows, FRAME-04) or, from an agent that sends none, the answer (v1).
    /// Nothing of the application's goes before that, so nothing that could need chunking is
    /// written in v1 (FRAME-05). A probe answer over the v1 limit comes back as the
    /// transport-limit failure (FRAME-12), which settles it the same way.
    fn probe(&mut self) {
        let mut line = Command::from(GetState::default()).to_vec_with_id(Some(&PROBE.wire()));
        line.push(b'\n');
        self.actions.push_back(Action::Write { bytes: line });
        self.pending.insert(
            PROBE,
            Pending {
                command: "get_state".to_owned(),
                purpose: Purpose::Probe,
            },
        );
    }

    fn write_frame(&mut self, frame: &HostFrame) {
        if self.phase == Phase::Closed {
            return;
        }
        let mut line = frame.to_vec();
        line.push(b'\n');
        self.actions.push_back(Action::Write { bytes: line });
    }

    fn event(&mut self, event: ClientEvent) {
        self.actions.push_back(Action::Event(event));
    }

    /// The session is ready in `protocol`: send what was held, start pending history walks.
    fn become_ready(&mut self, protocol: ProtocolVersion) {
        self.phase = Phase::Ready;
        self.protocol = protocol;
        self.event(ClientEvent::Ready { protocol });
        for held in std::mem::take(&mut self.held) {
            let bytes = self.routed(held);
            self.actions.push_back(Action::Write { bytes });
        }
        let waiting: Vec<RequestId> = self
            .walks
            .keys()
            .filter(|walk| !self.pending.values().any(|p| matches!(p.purpose, Purpose::HistoryPage(w) | Purpose::HistoryLegacy(w) if w == **walk)))
            .copied()
            .collect();
        for walk in waiting {
            self.start_walk(walk);
        }
    }

    /// The first request of a walk: a page after v2, `get_messages` on v1 (PAGE-07).
    fn start_walk(&mut self, walk: RequestId) {
        if self.protocol == ProtocolVersion::V2 {
            let limit = self
                .walks
                .get(&walk)
                .map_or(self.config.history_page_limit, Walk::limit);
            self.request(
                history::page_command(None, limit),
                Purpose::HistoryPage(walk),
            );
        } else {
            self.request(history::legacy_command(), Purpose::HistoryLegacy(walk));
        }
    }

    /// Ends the session: fails everything pending, then reports why.
    fn close(&mut self, error: SessionError) {
        self.phase = Phase::Closed;
        let failure = CommandFailure {
            error: error.to_string(),
            code: None,
        };
        for (request, pending) in std::mem::take(&mut self.pending) {
            if pending.purpose == Purpose::App {
                self.event(ClientEvent::Response {
                    request,
                    command: pending.command,
                    outcome: Err(failure.clone()),
                });
            }
        }
        for (request, _) in std::mem::take(&mut self.walks) {
            self.event(ClientEvent::History {
                request,
                source: HistorySource::Pages,
                outcome: Err(failure.clone()),
            });
        }
        self.held.clear();
        self.open_prompts.clear();
        self.host_calls.clear();
        self.pi_calls.clear();
        self.spills.clear();
        self.host_uri_requests.clear();
        self.dialogs.clear();
        self.streaming = false;
        self.event(ClientEvent::Closed { error });
    }
}
