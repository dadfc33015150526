//! A `Client` and an `Agent` wired back to back in memory, stepped against each other with a
//! virtual clock until neither has anything left to do (a `Pair`, in the manner of
//! quinn-proto's tests): negotiation (FRAME-04, 05), a chunked response (FRAME-11), the
//! Client's whole-history walk over the Agent's pages (PAGE-07 against PAGE-01..06), host tool
//! calls (HOST-01..03), host URIs (HOST-04, 05), dialogs (HOST-06) and the end of input
//! (HOST-07).

use std::time::{Duration, Instant};

use crate::common::Through;
use musewire_core::agent::{
    Agent, AgentAction, AgentConfig, AgentEvent, CommandId, DialogOutcome, HostFailure,
    HostUriOperation, PageSource,
};
use musewire_core::client::{
    Action, Call, CallResult, Client, ClientConfig, ClientError, ClientEvent, HistorySource, Input,
    RequestId,
};
use musewire_core::frame::ProtocolVersion;
use musewire_core::spill::{
    Outcome, SaveFailure, Saved, SpillId, SpillOwner, SpillPolicy, SpillRef, SpillWrite,
};
use musewire_wire::output::StoredOutput;
use musewire_wire::{
    Bash, BashData, Command, GetState, HostToolCall, HostUriRequest, HostUriResult, ResponseData,
    SelectRequest, UiRequest, UiResponse,
};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// `get_messages`' answer: the history, typed as the wire model reads it.
fn messages_data(history: &[Value]) -> ResponseData {
    ResponseData::from_value("get_messages", json!({ "messages": history })).unwrap()
}

/// A wire value written as JSON (a host tool definition, a tool result, …).
fn wire<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("the test's value has the wire model's shape")
}

struct Pair {
    client: Client,
    agent: Agent,
    now: Instant,
    client_events: Vec<ClientEvent>,
    agent_events: Vec<AgentEvent>,
    /// The agent application's history and state.
    history: Vec<Value>,
    busy: bool,
    /// After this many pages, the history grows by one message (a stale cursor follows).
    grow_after_pages: Option<usize>,
    pages_served: usize,
    /// Physical lines the agent wrote, and how many were chunks.
    agent_lines: usize,
    chunk_lines: usize,
    held_bash: Vec<CommandId>,
    /// Spill writes the client asked for, unanswered.
    client_spills: Vec<(SpillId, SpillWrite)>,
    /// What the agent answers `get_state` with.
    state: Value,
}

impl Pair {
    fn new() -> Self {
        let now = Instant::now();
        let mut pair = Pair {
            client: Client::new(ClientConfig::default(), now),
            agent: Agent::new(AgentConfig::default()),
            now,
            client_events: Vec::new(),
            agent_events: Vec::new(),
            history: Vec::new(),
            busy: false,
            grow_after_pages: None,
            pages_served: 0,
            agent_lines: 0,
            chunk_lines: 0,
            held_bash: Vec::new(),
            client_spills: Vec::new(),
            state: json!({}),
        };
        pair.drive();
        // FRAME-03: the client's start-up probe reaches the agent's application (answered
        // like any get_state), then the negotiation.
        let start = pair.take_agent_events();
        assert!(
            matches!(
                &start[..],
                [
                    AgentEvent::Command {
                        command: Command::GetState(_),
                        ..
                    },
                    AgentEvent::ProtocolChanged {
                        protocol: ProtocolVersion::V2
                    }
                ]
            ),
            "{start:?}"
        );
        pair
    }

    /// Steps both sides until neither has anything to do.
    fn drive(&mut self) {
        for _ in 0..100_000 {
            let mut progressed = false;
            while let Some(action) = self.client.poll_action() {
                progressed = true;
                match action {
                    Action::Write { bytes } => self.agent.handle_stdin(self.now, &bytes),
                    Action::Event(event) => self.client_events.push(event),
                    Action::StopAgent => self.agent.handle_stdin_eof(self.now),
                    Action::SpillWrite { id, write } => self.client_spills.push((id, write)),
                }
            }
            while let Some(action) = self.agent.poll_action() {
                progressed = true;
                match action {
                    AgentAction::Write(line) => {
                        self.agent_lines += 1;
                        if line.starts_with(br#"{"type":"rpc_chunk""#) {
                            self.chunk_lines += 1;
                        }
                        self.client.handle(self.now, Input::stdout(&line));
                    }
                    AgentAction::Event(event) => self.application(event),
                    other => panic!("no spill or output read without a store: {other:?}"),
                }
            }
            if !progressed {
                return;
            }
        }
        panic!("the pair did not settle");
    }

    /// Hands in one input to the client at the pair's time.
    fn input(&mut self, input: Input<'_>) -> CallResult {
        self.client.handle(self.now, input)
    }

    /// Makes a call that asks for a request: the request made, or why it was refused.
    fn request(&mut self, call: Call) -> Result<RequestId, ClientError> {
        match self.input(Input::Call(call)) {
            CallResult::Request(result) => result,
            other => panic!("a request call returned {other:?}"),
        }
    }

    /// Makes a call that answers the agent: whether the answer went out.
    fn answer(&mut self, call: Call) -> bool {
        match self.input(Input::Call(call)) {
            CallResult::Sent => true,
            CallResult::NotOpen => false,
            other => panic!("an answer call returned {other:?}"),
        }
    }

    fn advance(&mut self, ms: u64) {
        self.now += Duration::from_millis(ms);
        self.client.handle(self.now, Input::Timeout);
        self.agent.handle_timeout(self.now);
        self.drive();
    }

    /// A small scripted agent application.
    fn application(&mut self, event: AgentEvent) {
        let AgentEvent::Command {
            request, command, ..
        } = &event
        else {
            self.agent_events.push(event);
            return;
        };
        let request = *request;
        let now = self.now;
        match command {
            Command::GetMessagesPage(_) => {
                let source = PageSource {
                    busy: self.busy,
                    session_id: "session",
                    leaf_id: Some("leaf"),
                    messages: &self.history,
                };
                self.agent
                    .respond_messages_page(now, request, source)
                    .unwrap();
                self.pages_served += 1;
                if Some(self.pages_served) == self.grow_after_pages {
                    self.history
                        .push(json!({"role": "user", "content": "late"}));
                }
            }
            Command::GetMessages(_) => self
                .agent
                .respond(now, request, Ok(Some(messages_data(&self.history))))
                .unwrap(),
            Command::Bash(_) => self.held_bash.push(request),
            Command::GetState(_) => self
                .agent
                .respond(
                    now,
                    request,
                    Ok(Some(ResponseData::Other(self.state.clone()))),
                )
                .unwrap(),
            _ => self
                .agent
                .respond(now, request, Ok(Some(ResponseData::Other(json!({})))))
                .unwrap(),
        }
        self.agent_events.push(event);
    }

    fn take_client_events(&mut self) -> Vec<ClientEvent> {
        std::mem::take(&mut self.client_events)
    }

    fn take_agent_events(&mut self) -> Vec<AgentEvent> {
        std::mem::take(&mut self.agent_events)
    }

    fn response(
        &mut self,
        request: musewire_core::client::RequestId,
    ) -> Result<ResponseData, String> {
        self.client_events
            .iter()
            .find_map(|e| match e {
                ClientEvent::Response {
                    request: r,
                    outcome,
                    ..
                } if *r == request => Some(outcome.clone().map_err(|f| f.error)),
                _ => None,
            })
            .expect("answered")
    }

    /// The history read, its messages serialised back to JSON.
    fn history_result(&mut self) -> (HistorySource, Result<Vec<Value>, String>) {
        self.client_events
            .iter()
            .find_map(|e| match e {
                ClientEvent::History {
                    source, outcome, ..
                } => Some((
                    *source,
                    outcome
                        .as_ref()
                        .map(|messages| messages.iter().map(to_json).collect())
                        .map_err(|f| f.error.clone()),
                )),
                _ => None,
            })
            .expect("a history result")
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("a wire value serialises")
}

/// `n` user and assistant messages of varied sizes (a few over 1 MiB).
fn varied_history(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let size = match i % 97 {
                0 => 300_000,
                7 => 1_200_000,
                _ => (i * 37) % 2000,
            };
            let text = "c".repeat(size);
            if i % 2 == 0 {
                json!({"role": "user", "i": i, "content": text})
            } else {
                json!({"role": "assistant", "i": i, "content": [{"type": "text", "text": text}]})
            }
        })
        .collect()
}

#[test]
fn frame_04_05_11_pair_negotiates_v2_and_a_large_response_arrives_chunked() {
    let mut pair = Pair::new();
    assert_eq!(pair.client.protocol(), ProtocolVersion::V2);
    assert_eq!(pair.agent.protocol(), ProtocolVersion::V2);
    assert!(pair.take_client_events().contains(&ClientEvent::Ready {
        protocol: ProtocolVersion::V2
    }));
    pair.history = vec![json!({"role": "user", "content": "z".repeat(3 << 20)})];
    let request = pair
        .request(Call::Send(Command::GetMessages(Default::default())))
        .unwrap();
    pair.drive();
    let Ok(ResponseData::Messages(data)) = pair.response(request) else {
        panic!("typed get_messages data")
    };
    assert!(
        to_json(&data.messages) == json!(pair.history),
        "the whole history"
    );
    assert!(pair.chunk_lines >= 12, "sent as rpc_chunk lines");
    // CALL-01 across the pair: a bash answered after a later command.
    let bash = pair.request(Call::Send(Bash::new("true").into())).unwrap();
    let state = pair
        .request(Call::Send(GetState::default().into()))
        .unwrap();
    pair.drive();
    assert!(pair.response(state).is_ok());
    let held = pair.held_bash.pop().unwrap();
    pair.agent
        .respond(
            pair.now,
            held,
            Ok(Some(ResponseData::Bash(BashData {
                exit_code: Some(0),
                ..BashData::default()
            }))),
        )
        .unwrap();
    pair.drive();
    let data = pair.response(bash).unwrap();
    assert!(matches!(data, ResponseData::Bash(_)), "{data:?}");
    assert_eq!(to_json(&data)["exitCode"], 0);
}

#[test]
fn page_07_pair_the_clients_walk_drains_the_agents_pages_into_the_whole_history() {
    let mut pair = Pair::new();
    pair.history = varied_history(700);
    pair.request(Call::ReadHistory).unwrap();
    pair.drive();
    let (source, outcome) = pair.history_result();
    assert_eq!(source, HistorySource::Pages);
    let messages = outcome.unwrap();
    assert!(messages == pair.history, "every message once, in order");
    assert!(
        pair.pages_served >= 10,
        "limit 256 and the 768 KiB budget: {}",
        pair.pages_served
    );
}

#[test]
fn page_07_pair_busy_or_stale_pages_fall_back_to_get_messages() {
    let mut pair = Pair::new();
    pair.history = varied_history(300);
    pair.busy = true;
    pair.request(Call::ReadHistory).unwrap();
    pair.drive();
    let (source, outcome) = pair.history_result();
    assert_eq!(source, HistorySource::Legacy, "session_busy falls back");
    assert_eq!(outcome.unwrap().len(), 300);

    let mut pair = Pair::new();
    pair.history = varied_history(600);
    pair.grow_after_pages = Some(1);
    pair.request(Call::ReadHistory).unwrap();
    pair.drive();
    let (source, outcome) = pair.history_result();
    assert_eq!(source, HistorySource::Legacy, "stale_cursor falls back");
    assert_eq!(outcome.unwrap().len(), 601);
}

#[test]
fn host_01_02_03_pair_host_tools_are_registered_called_updated_and_cancelled() {
    let mut pair = Pair::new();
    let tools = [wire(
        json!({"name": "lookup", "description": "Look up", "parameters": {"type": "object"}}),
    )];
    let set = pair.request(Call::SetHostTools(tools.to_vec())).unwrap();
    pair.drive();
    let data = pair.response(set).unwrap();
    assert!(matches!(data, ResponseData::HostTools(_)), "{data:?}");
    assert_eq!(to_json(&data), json!({"toolNames": ["lookup"]}));
    assert!(
        matches!(&pair.take_agent_events()[..], [AgentEvent::HostToolsChanged { tools }] if tools[0].name == "lookup")
    );
    let call = pair
        .agent
        .call_host_tool(pair.now, "tc-1", "lookup", json!({"q": "x"}))
        .unwrap();
    pair.drive();
    let events = pair.take_client_events();
    let Some(ClientEvent::HostToolCall(HostToolCall {
        id,
        tool_name,
        arguments,
        ..
    })) = events.last()
    else {
        panic!("{events:?}")
    };
    assert_eq!(
        (tool_name.as_str(), arguments),
        ("lookup", &json!({"q": "x"}))
    );
    let id = id.clone();
    assert!(pair.answer(Call::HostToolUpdate(
        id.clone(),
        wire(json!({"content": [{"type": "text", "text": "…"}]}))
    )));
    assert!(pair.answer(Call::HostToolResult {
        id: id.clone(),
        result: wire(json!({"content": [{"type": "text", "text": "no such row"}]})),
        is_error: true
    }));
    pair.drive();
    assert_eq!(
        pair.take_agent_events(),
        [
            AgentEvent::HostToolUpdate {
                call,
                partial_result: json!({"content": [{"type": "text", "text": "…"}]})
            },
            AgentEvent::HostToolFinished {
                call,
                outcome: Err(HostFailure::Failed("no such row".into()))
            },
        ]
    );
    // Cancelled by the agent: the host is told, and its late result goes nowhere.
    let call = pair
        .agent
        .call_host_tool(pair.now, "tc-2", "lookup", json!({}))
        .unwrap();
    pair.drive();
    assert!(pair.agent.cancel_host_tool(pair.now, call));
    pair.drive();
    let events = pair.take_client_events();
    assert!(
        matches!(events.last(), Some(ClientEvent::HostToolCancelled { id }) if *id == call.wire())
    );
    assert!(!pair.answer(Call::HostToolResult {
        id: call.wire(),
        result: wire(json!({"content": []})),
        is_error: false
    }));
}

#[test]
fn host_04_05_pair_host_uris_are_read_and_written() {
    let mut pair = Pair::new();
    let set = pair
        .request(Call::SetHostUriSchemes(vec![wire(
            json!({"scheme": "Notes", "writable": true}),
        )]))
        .unwrap();
    pair.drive();
    let data = pair.response(set).unwrap();
    assert!(matches!(data, ResponseData::HostUriSchemes(_)), "{data:?}");
    assert_eq!(to_json(&data), json!({"schemes": ["notes"]}));
    pair.take_agent_events();
    let write = pair
        .agent
        .request_host_uri(
            pair.now,
            "notes://a",
            HostUriOperation::Write("hello".into()),
        )
        .unwrap();
    pair.drive();
    let events = pair.take_client_events();
    assert!(
        matches!(events.last(), Some(ClientEvent::HostUriRequest(HostUriRequest { operation, content: Some(c), .. })) if operation == "write" && c == "hello")
    );
    let answer = HostUriResult {
        content: Some("ok".into()),
        ..Default::default()
    };
    assert!(pair.answer(Call::HostUriResult(write.wire(), answer)));
    pair.drive();
    let events = pair.take_agent_events();
    assert!(
        matches!(&events[..], [AgentEvent::HostUriFinished { request, outcome: Ok(c) }] if *request == write && c.content == "ok")
    );
}

#[test]
fn host_06_pair_dialogs_are_answered_or_time_out_on_both_sides() {
    let mut pair = Pair::new();
    let select = |timeout: Option<u64>| {
        UiRequest::Select(SelectRequest {
            title: "Pick".into(),
            options: vec!["a".into(), "b".into()],
            timeout: timeout.map(Into::into),
            ..SelectRequest::default()
        })
    };
    let dialog = pair.agent.ui_dialog(pair.now, select(None)).unwrap();
    pair.drive();
    let events = pair.take_client_events();
    let Some(ClientEvent::UiRequest(request)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(request.method(), Some("select"));
    assert!(
        matches!(request, UiRequest::Select(s) if s.options == ["a", "b"]),
        "{request:?}"
    );
    let id = request.id().expect("a dialog has an id").to_owned();
    assert!(pair.answer(Call::UiRespond(id.clone(), UiResponse::value(&id, "b"))));
    pair.drive();
    let events = pair.take_agent_events();
    let [AgentEvent::DialogResolved { dialog: d, outcome }] = &events[..] else {
        panic!("{events:?}")
    };
    assert_eq!((*d, outcome.value()), (dialog, Some("b")));
    // With a timeout: both sides let it go at the same time.
    let dialog = pair.agent.ui_dialog(pair.now, select(Some(500))).unwrap();
    pair.drive();
    pair.take_client_events();
    pair.advance(500);
    assert_eq!(
        pair.take_agent_events(),
        [AgentEvent::DialogResolved {
            dialog,
            outcome: DialogOutcome::TimedOut
        }]
    );
    assert!(pair
        .take_client_events()
        .contains(&ClientEvent::UiWithdrawn {
            id: dialog.wire(),
            timed_out: true
        }));
}

#[test]
fn host_07_pair_the_hosts_stop_rejects_what_the_agent_waits_for() {
    let mut pair = Pair::new();
    pair.request(Call::SetHostTools(vec![wire(
        json!({"name": "t", "description": "d", "parameters": {}}),
    )]))
    .unwrap();
    pair.drive();
    let call = pair
        .agent
        .call_host_tool(pair.now, "tc", "t", json!({}))
        .unwrap();
    pair.drive();
    pair.take_agent_events();
    pair.input(Input::Call(Call::Stop));
    pair.drive();
    assert_eq!(
        pair.take_agent_events(),
        [
            AgentEvent::HostToolFinished {
                call,
                outcome: Err(HostFailure::Disconnected(
                    crate::common::HOST_TOOL_DISCONNECTED
                ))
            },
            AgentEvent::InputClosed,
        ]
    );
}

/// The client applies the spill policy to a host tool result before it is sent. Over the cap it
/// asks its driver for a spill write (SPILL-03: owner, source from the call, the full text),
/// and the agent receives the preview and the notice once the save is answered; a failed save
/// sends the original result (SPILL-05); within the cap nothing is asked; a cancel while saving
/// sends nothing (HOST-03).
#[test]
fn spill_03_05_pair_host_tool_results_over_the_cap_are_spilled_by_the_client() {
    let mut pair = Pair::new();
    let mut config = ClientConfig {
        spill: SpillPolicy {
            max_inline_bytes: Some(32),
            has_store: true,
        },
        spill_owner: Some(SpillOwner::new("configured")),
        ..ClientConfig::default()
    };
    pair.client = Client::new(config.clone(), pair.now);
    pair.agent = Agent::new(AgentConfig::default());
    pair.drive();
    pair.take_agent_events();
    let tools = [wire(
        json!({"name": "dump", "description": "Dump", "parameters": {"type": "object"}}),
    )];
    pair.request(Call::SetHostTools(tools.to_vec())).unwrap();
    pair.drive();
    pair.take_agent_events();
    let text = "0123456789".repeat(100);
    let result = |text: &str| wire(json!({"content": [{"type": "text", "text": text}]}));
    let call_host = |pair: &mut Pair, call_id: &str| {
        let call = pair
            .agent
            .call_host_tool(pair.now, call_id, "dump", json!({}))
            .unwrap();
        pair.drive();
        pair.take_client_events();
        call
    };

    // Spilled: the write names the owner and the call; nothing is sent until it is answered.
    let call = call_host(&mut pair, "tc-1");
    assert!(pair.answer(Call::HostToolResult {
        id: call.wire(),
        result: result(&text),
        is_error: false
    }));
    pair.drive();
    assert_eq!(pair.take_agent_events(), []);
    let (id, write) = pair.client_spills.pop().expect("a spill write");
    assert_eq!(write.owner.session_id, "configured");
    assert_eq!(
        (
            write.source.tool_name.as_str(),
            write.source.call_id.as_str()
        ),
        ("dump", "tc-1")
    );
    assert_eq!(write.suggested_name, "dump-tc-1.txt");
    assert_eq!(write.content, text);
    let spill_ref = SpillRef {
        locator: "/store/x-dump-tc-1.txt".into(),
        bytes: 1000,
        retrieval_hint: "Read it.".into(),
    };
    let saved = Saved {
        spill_ref: spill_ref.clone(),
        output: wire::<StoredOutput>(json!({
            "sessionId": "configured", "itemId": "tc-1", "outputRef": "out-00000000000000a1",
            "byteLen": 1000, "mediaType": "text/plain; charset=utf-8", "availability": "available"
        })),
    };
    pair.client
        .handle(pair.now, Input::SpillDone(id, Ok(saved)));
    pair.drive();
    let expected = musewire_core::spill::spilled_text(&text, 32, &spill_ref);
    assert!(expected.len() < text.len() && expected.contains("(Omitted"));
    assert_eq!(
        pair.take_agent_events(),
        [AgentEvent::HostToolFinished {
            call,
            outcome: Ok(json!({"content": [{"type": "text", "text": expected}]}))
        }]
    );
    assert!(matches!(
        &pair.take_client_events()[..],
        [ClientEvent::HostToolResultSettled { id, outcome: Outcome::Spilled(r) }]
            if *id == call.wire() && *r == spill_ref
    ));

    // A failed save: the original result goes on, as a success (SPILL-05), and is logged.
    let call = call_host(&mut pair, "tc-2");
    pair.answer(Call::HostToolResult {
        id: call.wire(),
        result: result(&text),
        is_error: false,
    });
    pair.drive();
    let (id, _) = pair.client_spills.pop().expect("a spill write");
    pair.client.handle(
        pair.now,
        Input::SpillDone(id, Err(SaveFailure::new("disk full"))),
    );
    pair.drive();
    assert_eq!(
        pair.take_agent_events(),
        [AgentEvent::HostToolFinished {
            call,
            outcome: Ok(json!({"content": [{"type": "text", "text": text}]}))
        }]
    );
    assert!(matches!(
        &pair.take_client_events()[..],
        [ClientEvent::HostToolResultSettled { outcome: Outcome::Kept(why), .. }] if why.is_failure()
    ));

    // Within the cap: sent at once, nothing asked, nothing logged.
    let call = call_host(&mut pair, "tc-3");
    pair.answer(Call::HostToolResult {
        id: call.wire(),
        result: result("short"),
        is_error: false,
    });
    pair.drive();
    assert!(pair.client_spills.is_empty());
    assert_eq!(pair.take_agent_events().len(), 1);
    assert_eq!(pair.take_client_events(), []);

    // Cancelled while saving: the host hears of it, and the save's answer sends nothing.
    let call = call_host(&mut pair, "tc-4");
    pair.answer(Call::HostToolResult {
        id: call.wire(),
        result: result(&text),
        is_error: false,
    });
    pair.drive();
    assert!(pair.agent.cancel_host_tool(pair.now, call));
    pair.drive();
    assert!(matches!(
        &pair.take_client_events()[..],
        [ClientEvent::HostToolCancelled { id }] if *id == call.wire()
    ));
    let (id, _) = pair.client_spills.pop().expect("a spill write");
    let written = pair.agent_lines;
    pair.client
        .handle(pair.now, Input::SpillDone(id, Err(SaveFailure::no_store())));
    assert!(
        std::iter::from_fn(|| pair.client.poll_action())
            .all(|a| !matches!(a, Action::Write { .. })),
        "nothing is sent for a withdrawn call"
    );
    pair.drive();
    assert_eq!(pair.agent_lines, written);
    assert_eq!(pair.take_agent_events(), []);
    assert_eq!(pair.client.pending_spills(), 0);

    // The agent's own session id, once a get_state names it, owns later spills; with no
    // owner at all the result goes on unchanged and the skip is logged (SPILL-05).
    config.spill_owner = None;
    pair.client = Client::new(config, pair.now);
    pair.agent = Agent::new(AgentConfig::default());
    pair.drive();
    pair.request(Call::SetHostTools(tools.to_vec())).unwrap();
    pair.drive();
    pair.take_agent_events();
    pair.take_client_events();
    let call = call_host(&mut pair, "tc-5");
    pair.answer(Call::HostToolResult {
        id: call.wire(),
        result: result(&text),
        is_error: false,
    });
    pair.drive();
    assert!(pair.client_spills.is_empty());
    assert!(matches!(
        &pair.take_client_events()[..],
        [ClientEvent::HostToolResultSettled { outcome: Outcome::Kept(why), .. }]
            if *why == musewire_core::spill::KeptInline::NoOwner
    ));
    pair.take_agent_events();
    pair.state = json!({"sessionId": "agent-session"});
    let state = pair
        .request(Call::Send(GetState::default().into()))
        .unwrap();
    pair.drive();
    assert!(pair.response(state).is_ok());
    let call = call_host(&mut pair, "tc-6");
    pair.answer(Call::HostToolResult {
        id: call.wire(),
        result: result(&text),
        is_error: false,
    });
    pair.drive();
    let (_, write) = pair.client_spills.pop().expect("a spill write");
    assert_eq!(write.owner.session_id, "agent-session");
}
