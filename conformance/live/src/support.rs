//! One blocking face for both drivers, so a live scenario is written once and run on each:
//! [`Host`] is what a scenario may do with an agent (the host kit's [`BlockingHandle`], which
//! both drivers' handles implement), [`Driver`] picks the driver behind it,
//! and [`Session`] adds the waits every scenario needs. Every wait has a deadline ([`WAIT`]):
//! a quiet agent fails the test, it never hangs it.

use std::process::Command;
use std::time::{Duration, Instant};

use musewire_core::client::{
    Call, CallError, ClientConfig, ClientEvent, CommandFailure, RequestId,
};
use musewire_core::frame::ProtocolVersion;
use musewire_host::{AsyncHandle, BlockingHandle};
use musewire_wire::Answered;
use musewire_wire::{
    AgentMessage, Command as WireCommand, HostUriResult, ResponseData, ToolResult,
};
use serde_json::{json, Map, Value};

use crate::model_server::ModelServer;
use crate::peers::{self, Pi};

/// How long any one wait of a live scenario may take.
pub const WAIT: Duration = Duration::from_secs(60);

/// Why a call returned no data.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The agent answered with a failure (or the session failed the request: CALL-07).
    Agent(CommandFailure),
    /// The driver refused the call, the session had ended, or the deadline passed.
    Driver(String),
}

impl Failure {
    /// The agent's failure, if that is what it was.
    pub fn agent(&self) -> Option<&CommandFailure> {
        match self {
            Failure::Agent(f) => Some(f),
            Failure::Driver(_) => None,
        }
    }
}

/// What a scenario does with an agent: the host kit's blocking handle, which both drivers'
/// handles implement ([`BlockingHandle`]; the async driver's through [`SmolHost`]), with the
/// stop and the driver's own agent. The scenarios' calls (`pid`,
/// `call_json`, …, on `dyn Host`) are written once over it, each with a deadline ([`WAIT`]).
pub trait Host: BlockingHandle {
    /// Closes stdin and waits for the agent (killed after a grace period).
    fn shutdown(self: Box<Self>);
    /// The driver's own agent, for what only one driver offers (see [`Session::smol`]).
    fn as_any(&self) -> &dyn std::any::Any;
}

impl dyn Host {
    /// The agent's process id.
    pub fn pid(&self) -> u32 {
        self.id()
    }

    /// Sends a command and waits for its response's data, as JSON.
    pub fn call_json(&self, command: WireCommand) -> Result<Value, Failure> {
        let answered = self.answered(Call::Send(command), WAIT).map_err(failure)?;
        let data = CallError::read::<ResponseData>(answered).map_err(failure)?;
        Ok(to_json(&data))
    }

    /// Sends a command; its response arrives as an event.
    pub fn send(&self, command: WireCommand) -> RequestId {
        self.send_call(Call::Send(command)).expect("send")
    }

    /// Writes a line unchecked (`Call::RawLine`).
    pub fn send_raw_line(&self, line: &[u8]) -> bool {
        self.answer(Call::RawLine(line.to_vec()))
            .expect("send_raw_line")
    }

    /// The whole history (PAGE-07).
    pub fn messages(&self) -> Result<Vec<Value>, Failure> {
        let answered = self.answered(Call::ReadHistory, WAIT).map_err(failure)?;
        let messages = CallError::read::<Vec<AgentMessage>>(answered).map_err(failure)?;
        Ok(messages.iter().map(to_json).collect())
    }

    /// `host_tool_update`; whether it was sent.
    pub fn host_tool_update(&self, id: &str, partial: ToolResult) -> bool {
        self.answer(Call::HostToolUpdate(id.into(), partial))
            .expect("host_tool_update")
    }

    /// `host_tool_result`; whether it was sent.
    pub fn host_tool_result(&self, id: &str, result: ToolResult, is_error: bool) -> bool {
        self.answer(Call::HostToolResult {
            id: id.into(),
            result,
            is_error,
        })
        .expect("host_tool_result")
    }

    /// `host_uri_result`; whether it was sent.
    pub fn host_uri_result(&self, id: &str, fields: Map<String, Value>) -> bool {
        self.answer(Call::HostUriResult(id.into(), uri_result(id, fields)))
            .expect("host_uri_result")
    }
}

/// Which driver a scenario runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// `musewire_mio::AgentProcess`, the blocking driver.
    Mio,
    /// `musewire_smol::AgentProcess`, the async driver (each call run to completion with a deadline).
    Smol,
}

impl Driver {
    /// Spawns `command` on this driver.
    pub fn spawn(self, command: Command, config: ClientConfig) -> Box<dyn Host> {
        match self {
            Driver::Mio => {
                Box::new(musewire_mio::AgentProcess::spawn(command, config).expect("spawn"))
            }
            Driver::Smol => Box::new(SmolHost(
                musewire_smol::AgentProcess::spawn(command, config).expect("spawn"),
            )),
        }
    }

    /// A short name for scratch directories.
    pub fn name(self) -> &'static str {
        match self {
            Driver::Mio => "mio",
            Driver::Smol => "smol",
        }
    }
}

fn failure(e: CallError) -> Failure {
    match e {
        CallError::Failed(f) => Failure::Agent(f),
        other => Failure::Driver(other.to_string()),
    }
}

impl Host for musewire_mio::AgentProcess {
    fn shutdown(self: Box<Self>) {
        musewire_mio::AgentProcess::shutdown(*self, Duration::from_secs(5)).expect("shutdown");
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The async driver behind the blocking face: its [`AsyncHandle`] run to completion, each
/// call with a deadline.
pub struct SmolHost(pub musewire_smol::AgentProcess);

/// Runs `f` to completion, or fails the test after `limit`.
pub fn within<T>(what: &str, limit: Duration, f: impl std::future::Future<Output = T>) -> T {
    smol::block_on(smol::future::or(f, async {
        smol::Timer::after(limit).await;
        panic!("the agent went quiet: no {what} within {limit:?}")
    }))
}

impl BlockingHandle for SmolHost {
    fn id(&self) -> u32 {
        AsyncHandle::id(&self.0)
    }
    fn answered(&self, call: Call, timeout: Duration) -> Result<Answered, CallError> {
        within("answer", timeout, AsyncHandle::answered(&self.0, call))
    }
    fn send_call(&self, call: Call) -> Result<RequestId, CallError> {
        within("send", WAIT, AsyncHandle::send_call(&self.0, call))
    }
    fn answer(&self, call: Call) -> Result<bool, CallError> {
        within("answer", WAIT, AsyncHandle::answer(&self.0, call))
    }
    fn next_event(&self, timeout: Duration) -> Option<ClientEvent> {
        smol::block_on(smol::future::or(AsyncHandle::next_event(&self.0), async {
            smol::Timer::after(timeout).await;
            None
        }))
    }
}

impl Host for SmolHost {
    fn shutdown(self: Box<Self>) {
        within("exit", WAIT, self.0.shutdown(Duration::from_secs(5))).expect("shutdown");
    }
    fn as_any(&self) -> &dyn std::any::Any {
        &self.0
    }
}

/// A live agent with the waits scenarios need.
pub struct Session {
    /// The agent, on one of the drivers.
    pub host: Box<dyn Host>,
}

impl Session {
    /// `omp --mode rpc` on `driver`, ready in v2, auto-compaction off. `None` when the agents
    /// are not installed and `MUSEWIRE_SKIP_PEERS=1` (see [`peers::installed_or_skip`]).
    pub fn omp(driver: Driver, name: &str, server: &ModelServer) -> Option<Session> {
        if !peers::installed_or_skip() {
            return None;
        }
        let dir = peers::scratch(&format!("{}-{name}", driver.name()));
        let session = Session {
            host: driver.spawn(
                peers::omp(&dir, &server.base_url()),
                ClientConfig::default(),
            ),
        };
        let ready = session.until("ready", |e| matches!(e, ClientEvent::Ready { .. }));
        assert_eq!(
            ready.last(),
            Some(&ClientEvent::Ready {
                protocol: ProtocolVersion::V2
            })
        );
        session
            .call(typed_command(
                json!({"type": "set_auto_compaction", "enabled": false}),
            ))
            .expect("set_auto_compaction");
        Some(session)
    }

    /// `pi --mode rpc` of version `pi` on `driver` (no ready frame: v1 at once). `None` as
    /// for [`Session::omp`].
    pub fn pi(driver: Driver, pi: Pi, name: &str, server: &ModelServer) -> Option<Session> {
        if !peers::installed_or_skip() {
            return None;
        }
        let dir = peers::scratch(&format!("{}-{}-{name}", driver.name(), pi.name()));
        let config = ClientConfig {
            expect_ready: false,
            ..ClientConfig::default()
        };
        Some(Session {
            host: driver.spawn(peers::pi_version(pi, &dir, &server.base_url()), config),
        })
    }

    /// Collects events until `done` says so; panics when [`WAIT`] passes first.
    pub fn until(
        &self,
        what: &str,
        mut done: impl FnMut(&ClientEvent) -> bool,
    ) -> Vec<ClientEvent> {
        let deadline = Instant::now() + WAIT;
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            if let Some(event) = self.host.next_event(Duration::from_millis(100)) {
                let stop = done(&event);
                seen.push(event);
                if stop {
                    return seen;
                }
            }
        }
        panic!(
            "the agent went quiet: no {what} within {WAIT:?}; saw {} events: {:?}",
            seen.len(),
            seen.iter().rev().take(5).collect::<Vec<_>>()
        );
    }

    /// The events up to the end of the current turn (CALL-09).
    pub fn turn(&self) -> Vec<ClientEvent> {
        self.until("turn end", |e| matches!(e, ClientEvent::TurnFinished))
    }

    /// Sends a command and waits for its data.
    pub fn call(&self, command: WireCommand) -> Result<Value, Failure> {
        self.host.call_json(command)
    }

    /// Sends a prompt and waits for its acknowledgement (CALL-03).
    pub fn prompt(&self, message: &str) -> Value {
        self.call(typed_command(json!({"type": "prompt", "message": message})))
            .expect("prompt")
    }

    /// Waits for the response to `request` (sent with `send` on `dyn Host`).
    pub fn response(&self, request: RequestId) -> Result<Value, CommandFailure> {
        let events = self.until(
            "response",
            |e| matches!(e, ClientEvent::Response { request: r, .. } if *r == request),
        );
        match events.into_iter().last() {
            Some(ClientEvent::Response { outcome, .. }) => outcome.map(|data| to_json(&data)),
            _ => unreachable!(),
        }
    }

    /// Registers one host tool `lookup {word}` (HOST-01).
    pub fn register_lookup(&self) {
        let tools = self
            .call(typed_command(json!({"type": "set_host_tools", "tools": [{"name": "lookup", "description": "Looks a word up.",
                "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}]})))
            .expect("set_host_tools");
        assert_eq!(tools["toolNames"], json!(["lookup"]));
    }

    /// The blocking driver's agent; panics on the other driver.
    pub fn mio(&self) -> &musewire_mio::AgentProcess {
        self.host
            .as_any()
            .downcast_ref()
            .expect("a session on the mio driver")
    }

    /// The async driver's agent; panics on the other driver.
    pub fn smol(&self) -> &musewire_smol::AgentProcess {
        self.host
            .as_any()
            .downcast_ref()
            .expect("a session on the smol driver")
    }

    /// Ends the session.
    pub fn shutdown(self) {
        self.host.shutdown();
    }
}

/// The frames of `kind` among `events`, as JSON (what the scenarios assert on).
pub fn frames<'a>(events: &'a [ClientEvent], kind: &'a str) -> impl Iterator<Item = Value> + 'a {
    events.iter().filter_map(move |e| match e {
        ClientEvent::Frame { frame } if frame.type_name() == Some(kind) => Some(frame.to_value()),
        _ => None,
    })
}

/// The deltas of `delta_type` (`text_delta`, `thinking_delta`) in a turn's events, joined,
/// read through the typed model ([`ClientEvent::text_delta`], [`ClientEvent::thinking_delta`]).
pub fn deltas(events: &[ClientEvent], delta_type: &str) -> String {
    events
        .iter()
        .filter_map(|e| match delta_type {
            "text_delta" => e.text_delta(),
            "thinking_delta" => e.thinking_delta(),
            other => panic!("no typed accessor for {other}"),
        })
        .collect()
}

/// A command written as JSON, typed as the drivers take it.
pub fn typed_command(command: Value) -> WireCommand {
    WireCommand::from_value_with_id(command)
        .expect("a command object")
        .1
}

/// A wire value written as JSON, typed.
pub fn typed<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a value of the wire model's shape")
}

/// A typed wire value as JSON (what the scenarios assert on).
pub fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("a wire value serialises")
}

/// A host URI result from its members.
pub fn uri_result(id: &str, mut fields: Map<String, Value>) -> HostUriResult {
    fields.insert("id".into(), id.into());
    typed(Value::Object(fields))
}

/// A tool result whose content is one text block.
pub fn text_result(text: &str) -> ToolResult {
    ToolResult::text(text)
}
