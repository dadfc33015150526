//! CALL-06 (pi versions): what pi 1.6.0 sends, recorded live against the scripted model
//! (`conformance/samples/pi-1.6-session.jsonl`: `get_state`, a text turn, a `bash` tool turn,
//! a thinking turn, an unknown command, `get_messages`), is typed by the wire model, and over
//! the ACP bridge its turns show as chunks and tool cards, while `agent_settled` and pi's
//! other run bookkeeping show nothing (ACP-03..05: no "unknown item" card).

use crate::support as acp_support;

use acp_support::Harness;
use musewire_wire::{AgentFrame, AssistantMessageEvent, ResponseData, SessionEvent};
use serde_json::{json, Value};

const SESSION: &str = include_str!("../../../conformance/samples/pi-1.6-session.jsonl");

fn frames() -> Vec<Value> {
    SESSION
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// The frames of the `n`th prompt's run (1-based): after its response, up to and with its
/// `agent_settled`.
fn run(n: usize) -> Vec<Value> {
    let all = frames();
    let id = format!("p{n}");
    let start = all.iter().position(|f| f["id"] == id.as_str()).unwrap() + 1;
    let len = all[start..]
        .iter()
        .position(|f| f["type"] == "agent_settled")
        .unwrap()
        + 1;
    all[start..start + len].to_vec()
}

#[test]
fn call_06_every_frame_pi_1_6_sent_is_typed() {
    for line in SESSION.lines() {
        let frame = AgentFrame::from_slice(line.as_bytes())
            .unwrap_or_else(|e| panic!("strict parse failed ({e}): {line:.200}"));
        assert!(
            !matches!(
                frame,
                AgentFrame::Unknown(_) | AgentFrame::Event(SessionEvent::Unknown(_))
            ),
            "an unknown frame: {line:.200}"
        );
        assert_eq!(
            serde_json::to_value(&frame).unwrap(),
            serde_json::from_str::<Value>(line).unwrap(),
            "CALL-06: kept as received"
        );
    }
}

#[test]
fn call_06_pi_1_6_agent_settled_and_delta_only_updates_are_typed() {
    let settled = AgentFrame::from_slice(br#"{"type":"agent_settled","aborted":true}"#).unwrap();
    let AgentFrame::Event(SessionEvent::AgentSettled(settled)) = settled else {
        panic!("{settled:?}")
    };
    assert_eq!(settled.aborted, Some(true));

    let mut deltas = String::new();
    let mut tool_start = None;
    for frame in run(2).iter().chain(&run(1)) {
        let typed = AgentFrame::from_value(frame.clone()).unwrap();
        match typed {
            AgentFrame::Event(SessionEvent::MessageUpdate(update)) => {
                // pi 1.6 sends the delta only: no message snapshot, the usage beside it.
                assert!(update.message.is_none());
                assert!(update.usage.is_some());
                match update.assistant_message_event {
                    AssistantMessageEvent::TextDelta(d) => deltas.push_str(&d.delta),
                    AssistantMessageEvent::ToolCallStart(start) => tool_start = Some(start),
                    _ => {}
                }
            }
            AgentFrame::Event(SessionEvent::AgentEnd(end)) => {
                assert_eq!(end.will_retry, Some(false));
                assert!(end.is_terminal());
            }
            AgentFrame::Event(SessionEvent::ToolExecutionEnd(end)) => {
                assert!(end.duration_ms.is_some(), "{end:?}");
            }
            _ => {}
        }
    }
    assert_eq!(deltas, "bash returned: hi\nHi from pi.");
    let start = tool_start.expect("a toolcall_start");
    assert_eq!(start.tool_name.as_deref(), Some("bash"));
    assert!(start.id.is_some_and(|id| !id.is_empty()));

    let ack = AgentFrame::from_value(frames()[1].clone()).unwrap();
    let AgentFrame::Response(ack) = ack else {
        panic!("{ack:?}")
    };
    let Some(ResponseData::Prompt(data)) = &ack.data else {
        panic!("{ack:?}")
    };
    assert_eq!(data.disposition.as_deref(), Some("started"));
    assert!(!data.is_local());
}

#[test]
fn acp_call_06_pi_1_6_turns_over_the_bridge_show_no_unknown_item_card() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "[[text Hi from pi.]]");
    // The run after `agent_start` (which the harness sends with the acknowledgement).
    h.agent_lines(&s, &run(1)[1..]);
    let updates = h.updates();
    let text: String = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hi from pi.", "{updates:#?}");
    assert!(
        updates
            .iter()
            .all(|u| u["sessionUpdate"] == "agent_message_chunk"),
        "only the text, no card for agent_settled: {updates:#?}"
    );
}

#[test]
fn acp_05_call_06_pi_1_6_tool_turn_opens_one_card_and_settles_silently() {
    let mut h = Harness::new();
    let s = h.session();
    h.prompt(&s, "[[tool bash]]");
    let mut frames = run(2)[1..].to_vec();
    // A frame type no version knows still shows as an unknown item card (the control).
    frames.push(json!({"type": "brand_new_item", "id": "n1", "status": "running", "text": "new"}));
    h.agent_lines(&s, &frames);
    let updates = h.updates();
    let cards: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .collect();
    assert_eq!(cards.len(), 2, "{updates:#?}");
    // ACP-19: opened pending as the arguments stream, titled when they are complete.
    assert_eq!(cards[0]["title"], "bash");
    assert_eq!(cards[0]["kind"], "execute");
    assert!(
        updates
            .iter()
            .any(|u| u["toolCallId"] == cards[0]["toolCallId"] && u["title"] == "echo hi"),
        "{updates:#?}"
    );
    assert_eq!(cards[1]["toolCallId"], "item-n1");
    let done = updates
        .iter()
        .rfind(|u| {
            u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == cards[0]["toolCallId"]
        })
        .expect("the bash card's end");
    assert_eq!(done["status"], "completed");
}
