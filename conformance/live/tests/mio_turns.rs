//! Live, blocking driver: whole prompt turns against the real agents, the LLM played by the
//! scripted model server. Every wait has a deadline: a quiet agent fails, never hangs.

use std::time::{Duration, Instant};

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_core::frame::ProtocolVersion;
use musewire_live::model_server::ModelServer;
use musewire_live::peers;
use musewire_mio::Agent;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(90);

/// Collects events until `done` says so; panics when the deadline passes first.
fn until(
    agent: &Agent,
    what: &str,
    mut done: impl FnMut(&ClientEvent) -> bool,
) -> Vec<ClientEvent> {
    let deadline = Instant::now() + WAIT;
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        if let Some(event) = agent.next_event(Duration::from_millis(100)) {
            let stop = done(&event);
            seen.push(event);
            if stop {
                return seen;
            }
        }
    }
    panic!(
        "the agent went quiet: no {what} within {WAIT:?}; saw {} events",
        seen.len()
    );
}

fn frames<'a>(events: &'a [ClientEvent], kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    events.iter().filter_map(move |e| match e {
        ClientEvent::Frame { frame } if frame["type"] == kind => Some(frame),
        _ => None,
    })
}

/// The text deltas of a turn, joined.
fn text_deltas(events: &[ClientEvent], delta_type: &str) -> String {
    frames(events, "message_update")
        .filter(|f| f["assistantMessageEvent"]["type"] == delta_type)
        .filter_map(|f| f["assistantMessageEvent"]["delta"].as_str())
        .collect()
}

fn start_omp(name: &str, server: &ModelServer) -> Option<Agent> {
    if !peers::installed_or_skip() {
        return None;
    }
    let dir = peers::scratch(name);
    let agent = Agent::spawn(
        peers::omp(&dir, &server.base_url()),
        ClientConfig::default(),
    )
    .expect("spawn omp");
    let ready = until(&agent, "ready", |e| matches!(e, ClientEvent::Ready { .. }));
    assert_eq!(
        ready.last(),
        Some(&ClientEvent::Ready {
            protocol: ProtocolVersion::V2
        })
    );
    agent
        .call(
            json!({"type": "set_auto_compaction", "enabled": false}),
            WAIT,
        )
        .expect("set_auto_compaction");
    Some(agent)
}

/// CALL-03: a prompt is acknowledged, then the turn streams text deltas until a terminal
/// agent_end.
#[test]
fn omp_prompt_turn_streams_text_and_thinking() {
    let server = ModelServer::start().unwrap();
    let Some(agent) = start_omp("turn", &server) else {
        return;
    };
    let ack = agent
        .call(
            json!({"type": "prompt", "message": "[[text Hello from the scripted model.]]"}),
            WAIT,
        )
        .expect("prompt");
    assert_ne!(ack["agentInvoked"], json!(false), "{ack}");
    let turn = until(&agent, "turn end", |e| {
        matches!(e, ClientEvent::TurnFinished)
    });
    assert_eq!(
        text_deltas(&turn, "text_delta"),
        "Hello from the scripted model."
    );
    assert!(turn.contains(&ClientEvent::TurnStarted));

    agent
        .call(
            json!({"type": "prompt", "message": "[[think Weighing the options.]] Answer: 42"}),
            WAIT,
        )
        .expect("prompt");
    let turn = until(&agent, "turn end", |e| {
        matches!(e, ClientEvent::TurnFinished)
    });
    assert_eq!(
        text_deltas(&turn, "thinking_delta"),
        "Weighing the options."
    );
    assert_eq!(text_deltas(&turn, "text_delta"), "Answer: 42");
    let last = agent
        .call(json!({"type": "get_last_assistant_text"}), WAIT)
        .expect("last text");
    assert_eq!(last["text"], "Answer: 42", "{last}");
    assert_eq!(server.requests().len(), 2);
    agent.shutdown(Duration::from_secs(5)).expect("shutdown");
}

/// HOST-01/02: a host tool registered by the host is called by the model; the host streams an
/// update and answers; the model's next call sees the result.
#[test]
fn omp_host_tool_call_is_answered_by_the_host() {
    let server = ModelServer::start().unwrap();
    let Some(agent) = start_omp("hosttool", &server) else {
        return;
    };
    let tools = agent.call(json!({"type": "set_host_tools", "tools": [{"name": "lookup", "description": "Looks a word up.", "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}]}), WAIT).expect("set_host_tools");
    assert_eq!(tools["toolNames"], json!(["lookup"]));
    agent
        .call(
            json!({"type": "prompt", "message": "[[tool lookup {\"word\":\"musewire\"}]]"}),
            WAIT,
        )
        .expect("prompt");
    let call = until(&agent, "host tool call", |e| {
        matches!(e, ClientEvent::HostToolCall { .. })
    });
    let Some(ClientEvent::HostToolCall {
        id,
        tool_name,
        arguments,
        ..
    }) = call.last().cloned()
    else {
        unreachable!()
    };
    assert_eq!(tool_name, "lookup");
    assert_eq!(arguments, json!({"word": "musewire"}));
    agent
        .host_tool_update(
            &id,
            json!({"content": [{"type": "text", "text": "looking…"}]}),
        )
        .unwrap();
    agent
        .host_tool_result(
            &id,
            json!({"content": [{"type": "text", "text": "a protocol stack"}]}),
            false,
        )
        .unwrap();
    let turn = until(&agent, "turn end", |e| {
        matches!(e, ClientEvent::TurnFinished)
    });
    assert_eq!(
        text_deltas(&turn, "text_delta"),
        "lookup returned: a protocol stack"
    );
    let updates: Vec<&Value> = frames(&turn, "tool_execution_update").collect();
    assert!(!updates.is_empty(), "the host's update reached the agent");
    agent.shutdown(Duration::from_secs(5)).expect("shutdown");
}

/// FRAME-03 (no ready frame), CALL-02 (id-less failure), PAGE-07 (v1: get_messages), and a
/// whole turn against the v1-only agent.
#[test]
fn pi_v1_only_turn_unknown_command_and_history() {
    let server = ModelServer::start().unwrap();
    if !peers::installed_or_skip() {
        return;
    }
    let dir = peers::scratch("pi");
    let config = ClientConfig {
        expect_ready: false,
        ..ClientConfig::default()
    };
    let agent = Agent::spawn(peers::pi(&dir, &server.base_url()), config).expect("spawn pi");
    let ready = until(&agent, "ready", |e| matches!(e, ClientEvent::Ready { .. }));
    assert_eq!(
        ready.last(),
        Some(&ClientEvent::Ready {
            protocol: ProtocolVersion::V1
        })
    );
    let unknown = agent.call(json!({"type": "frobnicate"}), WAIT);
    assert!(
        matches!(&unknown, Err(musewire_mio::CallError::Failed(f)) if f.error.contains("frobnicate")),
        "{unknown:?}"
    );
    agent
        .call(
            json!({"type": "prompt", "message": "[[text Hi from pi.]]"}),
            WAIT,
        )
        .expect("prompt");
    let turn = until(&agent, "turn end", |e| {
        matches!(e, ClientEvent::TurnFinished)
    });
    assert_eq!(text_deltas(&turn, "text_delta"), "Hi from pi.");
    let history = agent.messages(WAIT).expect("history");
    assert!(
        history.iter().any(|m| m["role"] == "assistant"),
        "{history:?}"
    );
    agent.shutdown(Duration::from_secs(5)).expect("shutdown");
}
