//! The reference agent's runs, one per script form, driven in memory by a `Client`: the
//! event order of the reference (agent_start, turn_start, user message, streamed assistant
//! message, tools, turn_end, agent_end), the model's deltas, and the tools' results
//! (HOST-02 host tools, HOST-05 host URIs, CALL-03 the prompt's acknowledgement).

mod common;

use common::{cmd, deltas, types, wire_value, Pair, CLOCK_MS};
use musewire_core::client::{Call, ClientEvent};
use musewire_wire::{AgentFrame, HostUriResult};
use serde_json::{json, Value};

/// Every frame parses in the typed wire model (CALL-06: nothing is unknown).
fn typed(frames: &[Value]) {
    for frame in frames {
        let typed = AgentFrame::from_value(frame.clone());
        assert!(typed.is_ok(), "{frame}");
    }
}

#[test]
fn call_03_an_echo_streams_the_prompt_word_by_word_between_message_start_and_end() {
    let mut pair = Pair::new();
    let frames = pair.turn("hello  brave new world");
    typed(&frames);
    assert_eq!(
        types(&frames),
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_update",
            "message_update",
            "message_update",
            "message_update",
            "message_update",
            "message_update",
            "message_end",
            "turn_end",
            "agent_end"
        ]
    );
    assert_eq!(
        deltas(&frames, "text_delta"),
        ["hello  ", "brave ", "new ", "world"]
    );
    assert_eq!(frames[2]["message"]["role"], "user");
    assert_eq!(frames[2]["message"]["timestamp"], CLOCK_MS);
    let end = &frames[11]["message"];
    assert_eq!(
        end["content"],
        json!([{"type": "text", "text": "hello  brave new world"}])
    );
    assert_eq!(end["stopReason"], "stop");
    assert_eq!(frames[13]["messages"].as_array().unwrap().len(), 2);
    let text = pair
        .call(json!({"type": "get_last_assistant_text"}))
        .unwrap();
    assert_eq!(text, json!({"text": "hello  brave new world"}));
    let state = pair.call(json!({"type": "get_state"})).unwrap();
    assert_eq!(state["messageCount"], 2);
    assert_eq!(state["isStreaming"], false);
    assert_eq!(state["sessionId"], "session-1");
}

/// The echo says what it saw of each attached image (ACP-14's test double): its media type
/// and decoded size, after the prompt's text; a steered prompt's images too.
#[test]
fn acp_14_the_echo_says_each_image() {
    let mut pair = Pair::new();
    pair.events.clear();
    let command = json!({"type": "prompt", "message": "look", "images": [
        {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
        {"type": "image", "data": "aGk=", "mimeType": "image/jpeg"}]});
    pair.request(Call::Send(cmd(command))).unwrap();
    pair.drive_until(|events| events.contains(&ClientEvent::TurnFinished));
    let frames = pair.frames();
    assert_eq!(
        deltas(&frames, "text_delta").concat(),
        "look\n[image: image/png, 5 bytes]\n[image: image/jpeg, 2 bytes]"
    );
}

#[test]
fn think_streams_thinking_deltas_then_the_text() {
    let mut pair = Pair::new();
    let frames = pair.turn("think about it");
    typed(&frames);
    assert_eq!(deltas(&frames, "thinking_delta"), ["about ", "it"]);
    assert_eq!(deltas(&frames, "text_delta"), ["about ", "it"]);
    let end = frames.iter().rfind(|f| f["type"] == "message_end").unwrap();
    assert_eq!(
        end["message"]["content"],
        json!([{"type": "thinking", "thinking": "about it"}, {"type": "text", "text": "about it"}])
    );
}

#[test]
fn bash_runs_the_tool_then_the_model_says_what_it_returned() {
    let mut pair = Pair::new();
    let frames = pair.turn("bash printf 'a b'; exit 0");
    typed(&frames);
    let kinds = types(&frames);
    let at = |t: &str| kinds.iter().position(|k| *k == t).unwrap();
    assert!(at("tool_execution_start") < at("tool_execution_end"));
    assert_eq!(kinds.iter().filter(|k| **k == "turn_start").count(), 2);
    assert_eq!(kinds.iter().filter(|k| **k == "turn_end").count(), 2);
    let end = &frames[at("tool_execution_end")];
    assert_eq!(end["toolName"], "bash");
    assert_eq!(end["isError"], false);
    assert_eq!(end["result"]["content"][0]["text"], "a b");
    let first_turn = frames.iter().find(|f| f["type"] == "turn_end").unwrap();
    assert_eq!(first_turn["message"]["stopReason"], "toolUse");
    assert_eq!(first_turn["toolResults"][0]["role"], "toolResult");
    let agent_end = frames.last().unwrap();
    let roles: Vec<&str> = agent_end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
    let text = pair
        .call(json!({"type": "get_last_assistant_text"}))
        .unwrap();
    assert_eq!(text["text"], "bash returned: a b");
    // A failing command is an error result, and the model says so.
    let frames = pair.turn("bash echo no; exit 4");
    let end = frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["isError"], true);
    assert_eq!(end["result"]["details"]["exitCode"], 4);
    let text = pair
        .call(json!({"type": "get_last_assistant_text"}))
        .unwrap();
    assert_eq!(
        text["text"],
        "bash failed: no\n\n\nCommand exited with code 4"
    );
}

#[test]
fn read_reads_a_file() {
    let dir = std::env::temp_dir().join(format!("musewire-agent-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("note.txt");
    std::fs::write(&path, "line one\nline two\n").unwrap();
    let mut pair = Pair::new();
    let frames = pair.turn(&format!("read {}", path.display()));
    let end = frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["toolName"], "read");
    assert_eq!(end["result"]["content"][0]["text"], "line one\nline two\n");
    let frames = pair.turn(&format!("read {}", dir.join("missing").display()));
    let end = frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["isError"], true);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn host_04_05_read_of_a_host_uri_goes_to_the_host() {
    let mut pair = Pair::new();
    let schemes = pair
        .call(json!({"type": "set_host_uri_schemes", "schemes": [{"scheme": "Notes"}]}))
        .unwrap();
    assert_eq!(schemes, json!({"schemes": ["notes"]}));
    pair.events.clear();
    pair.request(Call::Send(cmd(
        json!({"type": "prompt", "message": "read notes://today"}),
    )))
    .unwrap();
    pair.drive();
    let id = pair
        .events
        .iter()
        .find_map(|e| match e {
            ClientEvent::HostUriRequest(request) => {
                assert_eq!(
                    (request.operation.as_str(), request.url.as_str()),
                    ("read", "notes://today")
                );
                Some(request.id.clone())
            }
            _ => None,
        })
        .expect("a host URI request");
    // While the read is open the session streams: pages are refused (PAGE-05).
    let busy = pair.call(json!({"type": "get_messages_page"})).unwrap_err();
    assert_eq!(busy.1.as_deref(), Some("session_busy"));
    let answer = HostUriResult {
        content: Some("buy milk".into()),
        ..Default::default()
    };
    assert!(pair.reply(Call::HostUriResult(id.clone(), answer)));
    pair.drive_until(|e| e.contains(&ClientEvent::TurnFinished));
    let frames = pair.frames();
    let end = frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["result"]["content"][0]["text"], "buy milk");
    assert_eq!(end["result"]["details"]["contentType"], "text/plain");
    let text = pair
        .call(json!({"type": "get_last_assistant_text"}))
        .unwrap();
    assert_eq!(text["text"], "read returned: buy milk");
}

#[test]
fn host_01_02_call_runs_a_host_tool_with_its_updates() {
    let mut pair = Pair::new();
    let tools =
        [json!({"name": "lookup", "description": "Look up", "parameters": {"type": "object"}})];
    pair.request(Call::SetHostTools(wire_value(json!(tools))))
        .unwrap();
    pair.drive();
    pair.events.clear();
    pair.request(Call::Send(cmd(
        json!({"type": "prompt", "message": "call lookup {\"q\": \"x\"}"}),
    )))
    .unwrap();
    pair.drive();
    let (id, tool_call_id) = pair
        .events
        .iter()
        .find_map(|e| match e {
            ClientEvent::HostToolCall(call) => {
                assert_eq!(
                    (call.tool_name.as_str(), &call.arguments),
                    ("lookup", &json!({"q": "x"}))
                );
                Some((call.id.clone(), call.tool_call_id.clone()))
            }
            _ => None,
        })
        .expect("a host tool call");
    assert_eq!(tool_call_id, "call-1");
    let partial = json!({"content": [{"type": "text", "text": "looking"}]});
    assert!(pair.reply(Call::HostToolUpdate(
        id.clone(),
        wire_value(partial.clone())
    )));
    let result = json!({"content": [{"type": "text", "text": "found it"}]});
    assert!(pair.reply(Call::HostToolResult {
        id: id.clone(),
        result: wire_value(result),
        is_error: false
    }));
    pair.drive_until(|e| e.contains(&ClientEvent::TurnFinished));
    let frames = pair.frames();
    let update = frames
        .iter()
        .find(|f| f["type"] == "tool_execution_update")
        .unwrap();
    assert_eq!(update["partialResult"], partial);
    assert_eq!(update["toolCallId"], "call-1");
    let text = pair
        .call(json!({"type": "get_last_assistant_text"}))
        .unwrap();
    assert_eq!(text["text"], "lookup returned: found it");
    // A tool nobody has fails at once.
    let frames = pair.turn("call nothing {}");
    let end = frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(
        end["result"]["content"][0]["text"],
        "Tool nothing not found"
    );
}

#[test]
fn todo_emits_the_todo_tool_with_its_phases_and_sets_the_todos() {
    let mut pair = Pair::new();
    let frames = pair.turn("todo write tests; run them; ship");
    typed(&frames);
    let end = frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["toolName"], "todo");
    let phases = json!([{"name": "Tasks", "tasks": [
        {"content": "write tests", "status": "in_progress"},
        {"content": "run them", "status": "pending"},
        {"content": "ship", "status": "pending"},
    ]}]);
    assert_eq!(end["result"]["details"]["phases"], phases);
    assert_eq!(end["result"]["details"]["op"], "init");
    let state = pair.call(json!({"type": "get_state"})).unwrap();
    assert_eq!(state["todoPhases"], phases);
    let set = pair
        .call(json!({"type": "set_todos", "phases": []}))
        .unwrap();
    assert_eq!(set, json!({"todoPhases": []}));
}

#[test]
fn call_04_a_prompt_while_streaming_needs_a_streaming_behavior_and_is_then_queued() {
    let mut pair = Pair::new();
    let tools = [json!({"name": "wait", "description": "Waits", "parameters": {}})];
    pair.request(Call::SetHostTools(wire_value(json!(tools))))
        .unwrap();
    pair.drive();
    pair.events.clear();
    pair.send(json!({"type": "prompt", "message": "call wait {}"}));
    // The Client refuses to send it (CALL-04); written raw, the agent refuses it too.
    assert!(pair
        .request(Call::Send(cmd(
            json!({"type": "prompt", "message": "again"})
        )))
        .is_err());
    assert!(pair.reply(Call::RawLine(
        br#"{"id":"raw-1","type":"prompt","message":"again"}"#.to_vec()
    )));
    pair.drive();
    assert!(pair.events.iter().any(|e| matches!(e,
        ClientEvent::Unmatched { frame } if frame.to_value()["error"] == musewire_agent::BUSY && frame.to_value()["id"] == "raw-1")));
    pair.call(json!({"type": "prompt", "message": "later", "streamingBehavior": "followUp"}))
        .unwrap();
    let id = pair
        .events
        .iter()
        .find_map(|e| match e {
            ClientEvent::HostToolCall(call) => Some(call.id.clone()),
            _ => None,
        })
        .unwrap();
    let result = json!({"content": [{"type": "text", "text": "done"}]});
    pair.reply(Call::HostToolResult {
        id: id.clone(),
        result: wire_value(result),
        is_error: false,
    });
    pair.drive_until(|e| e.contains(&ClientEvent::TurnFinished));
    let frames = pair.frames();
    assert_eq!(
        types(&frames).iter().filter(|t| **t == "agent_end").count(),
        1
    );
    assert_eq!(
        types(&frames)
            .iter()
            .filter(|t| **t == "turn_start")
            .count(),
        3
    );
    let text = pair
        .call(json!({"type": "get_last_assistant_text"}))
        .unwrap();
    assert_eq!(
        text["text"], "later",
        "the queued prompt ran in the same run"
    );
}

#[test]
fn host_03_abort_withdraws_the_host_tool_and_ends_the_run() {
    let mut pair = Pair::new();
    let tools = [json!({"name": "wait", "description": "Waits", "parameters": {}})];
    pair.request(Call::SetHostTools(wire_value(json!(tools))))
        .unwrap();
    pair.drive();
    pair.events.clear();
    pair.send(json!({"type": "prompt", "message": "call wait {}"}));
    pair.call(json!({"type": "abort"})).unwrap();
    assert!(pair.events.contains(&ClientEvent::TurnFinished));
    assert!(pair
        .events
        .iter()
        .any(|e| matches!(e, ClientEvent::HostToolCancelled { .. })));
    let frames = pair.frames();
    let end = frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["isError"], true);
    let state = pair.call(json!({"type": "get_state"})).unwrap();
    assert_eq!(state["isStreaming"], false);
}

#[test]
fn call_08_every_other_command_fails_clearly() {
    let mut pair = Pair::new();
    for command in [
        json!({"type": "compact"}),
        json!({"type": "cycle_model"}),
        json!({"type": "export_html"}),
        json!({"type": "login", "providerId": "x"}),
        json!({"type": "get_fork_messages"}),
    ] {
        let kind = command["type"].as_str().unwrap().to_owned();
        let (error, code) = pair.call(command).unwrap_err();
        assert_eq!(
            error,
            format!("musewire agent does not support the {kind} command")
        );
        assert_eq!(code, None);
    }
}

/// ACP-02: `get_session_stats` in omp's shape, its token totals summed over the
/// history's assistant messages' usage, so the ACP bridge takes them as the cumulative usage.
#[test]
fn acp_02_get_session_stats_sums_the_history_usage_in_omps_shape() {
    let mut pair = Pair::new();
    let empty = pair.call(json!({"type": "get_session_stats"})).unwrap();
    assert_eq!(empty["tokens"]["total"], 0);
    assert_eq!(empty["assistantMessages"], 0);
    pair.turn("hello  brave new world");
    pair.turn("bash printf 'a b'; exit 0");
    let messages = pair.call(json!({"type": "get_messages"})).unwrap()["messages"].clone();
    let messages = messages.as_array().unwrap();
    let assistants: Vec<&Value> = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    let sum = |key: &str| -> u64 {
        assistants
            .iter()
            .map(|m| m["usage"][key].as_u64().unwrap())
            .sum()
    };
    assert!(sum("output") > 0);
    let stats = pair.call(json!({"type": "get_session_stats"})).unwrap();
    assert_eq!(
        stats["tokens"],
        json!({"input": sum("input"), "output": sum("output"), "reasoning": 0,
            "cacheRead": sum("cacheRead"), "cacheWrite": sum("cacheWrite"),
            "total": sum("totalTokens")})
    );
    assert_eq!(stats["userMessages"], 2);
    assert_eq!(stats["assistantMessages"], assistants.len());
    assert_eq!(stats["toolCalls"], 1);
    assert_eq!(stats["toolResults"], 1);
    assert_eq!(stats["totalMessages"], messages.len());
    assert_eq!(stats["contextUsage"]["contextWindow"], 1_000_000);
    // The core's wire model reads it typed (what the bridge uses).
    let typed: musewire_wire::SessionStatsData = wire_value(stats);
    assert_eq!(typed.tokens.unwrap().output, Some(sum("output")));
}
