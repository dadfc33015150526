//! The live scenarios, written once over [`Host`](crate::support::Host) and run on both
//! drivers: `tests/mio_scenarios.rs` and `tests/smol_scenarios.rs` are one line each,
//! [`live_scenarios!`](crate::live_scenarios) with the driver. Each scenario names the rules it
//! covers; each wait has a deadline ([`WAIT`](crate::support::WAIT)).

use std::process::Command;
use std::time::{Duration, Instant};

use musewire_core::client::{ClientEvent, SessionError};
use musewire_core::frame::ProtocolVersion;
use musewire_wire::{AgentFrame, ErrorCode, ResponseData, SessionEvent};
use serde_json::{json, Map, Value};

use crate::model_server::ModelServer;
use crate::peers::Pi;
use crate::support::{deltas, frames, text_result, typed_command, Driver, Failure, Session};

/// Generates one `#[test]` per scenario for `$driver` (a [`Driver`]).
#[macro_export]
macro_rules! live_scenarios {
    ($driver:expr) => {
        $crate::live_scenarios!(@tests $driver;
            call_03_09_prompt_turn_streams_text_and_thinking,
            host_01_02_host_tool_call_answered_with_an_update,
            host_03_host_tool_call_cancelled_by_abort,
            host_04_05_host_uri_read_of_db_users_42,
            call_05_abort_bash_while_bash_runs,
            page_01_06_07_paged_history_over_two_pages_equals_get_messages,
            page_04_07_stale_cursor_by_hand_and_busy_walk_falls_back,
            call_02_non_json_line_gets_a_parse_error_and_the_session_goes_on,
            call_07_agent_killed_mid_turn_fails_every_pending_request,
            frame_03_call_02_page_07_pi_0_73_v1_only_turn_unknown_command_and_history,
            frame_03_call_02_page_07_pi_1_6_v1_only_turn_unknown_command_and_history,
            call_03_09_pi_0_73_tool_and_thinking_turns,
            call_03_09_call_06_pi_1_6_tool_and_thinking_turns_then_agent_settled,
        );
    };
    (@tests $driver:expr; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                $crate::scenario::$name($driver)
            }
        )*
    };
}

fn server() -> ModelServer {
    ModelServer::start().expect("model server")
}

/// CALL-03, CALL-09: a prompt is acknowledged as agent work, then the turn streams text
/// deltas until a terminal `agent_end`; a second turn streams thinking before its text.
pub fn call_03_09_prompt_turn_streams_text_and_thinking(driver: Driver) {
    let server = server();
    let Some(s) = Session::omp(driver, "turn", &server) else {
        return;
    };
    let ack = s.prompt("[[text Hello from the scripted model.]]");
    assert_ne!(ack["agentInvoked"], json!(false), "{ack}");
    let turn = s.turn();
    assert!(turn.contains(&ClientEvent::TurnStarted));
    assert_eq!(
        deltas(&turn, "text_delta"),
        "Hello from the scripted model."
    );

    s.prompt("[[think Weighing the options.]] Answer: 42");
    let turn = s.turn();
    assert_eq!(deltas(&turn, "thinking_delta"), "Weighing the options.");
    assert_eq!(deltas(&turn, "text_delta"), "Answer: 42");
    let last = s
        .call(typed_command(json!({"type": "get_last_assistant_text"})))
        .expect("get_last_assistant_text");
    assert_eq!(last["text"], "Answer: 42", "{last}");
    assert_eq!(server.requests().len(), 2);
    s.shutdown();
}

/// Waits for the host tool call the model makes; returns its id.
fn host_tool_call(s: &Session, tool: &str, args: Value) -> String {
    let events = s.until("host tool call", |e| {
        matches!(e, ClientEvent::HostToolCall { .. })
    });
    let Some(ClientEvent::HostToolCall(call)) = events.last().cloned() else {
        unreachable!()
    };
    assert_eq!(call.tool_name, tool);
    assert_eq!(call.arguments, args);
    call.id
}

/// HOST-01, HOST-02: a tool registered by the host is called by the model; the host streams
/// an update and answers; the model's next call sees the result.
pub fn host_01_02_host_tool_call_answered_with_an_update(driver: Driver) {
    let server = server();
    let Some(s) = Session::omp(driver, "hosttool", &server) else {
        return;
    };
    s.register_lookup();
    s.prompt(r#"[[tool lookup {"word":"musewire"}]]"#);
    let id = host_tool_call(&s, "lookup", json!({"word": "musewire"}));
    assert!(s.host.host_tool_update(&id, text_result("looking…")));
    assert!(s
        .host
        .host_tool_result(&id, text_result("a protocol stack"), false));
    // HOST-03: the call is closed; a second result is dropped.
    assert!(!s.host.host_tool_result(&id, text_result("again"), false));
    let turn = s.turn();
    assert_eq!(
        deltas(&turn, "text_delta"),
        "lookup returned: a protocol stack"
    );
    assert!(
        frames(&turn, "tool_execution_update").next().is_some(),
        "the host's update reached the agent"
    );
    s.shutdown();
}

/// HOST-03: `abort` while a host tool call is open: the agent withdraws it
/// (HostToolCancelled), a late result is dropped (the driver says it was not sent), and the
/// session goes on.
pub fn host_03_host_tool_call_cancelled_by_abort(driver: Driver) {
    let server = server();
    let Some(s) = Session::omp(driver, "hostcancel", &server) else {
        return;
    };
    s.register_lookup();
    s.prompt(r#"[[tool lookup {"word":"never"}]]"#);
    let id = host_tool_call(&s, "lookup", json!({"word": "never"}));
    s.call(typed_command(json!({"type": "abort"})))
        .expect("abort");
    let (mut cancelled, mut ended) = (false, false);
    s.until("the cancel and the turn end", |e| {
        match e {
            ClientEvent::HostToolCancelled { id: c } if *c == id => cancelled = true,
            ClientEvent::TurnFinished => ended = true,
            _ => {}
        }
        cancelled && ended
    });
    assert!(!s.host.host_tool_update(&id, text_result("late")));
    assert!(!s.host.host_tool_result(&id, text_result("too late"), false));
    s.prompt("[[text After the abort.]]");
    assert_eq!(deltas(&s.turn(), "text_delta"), "After the abort.");
    s.shutdown();
}

/// HOST-04, HOST-05: the host registers the `db` scheme; the model reads `db://users/42` with
/// omp's `read` tool; the host answers the URI request and the model's next call sees it.
pub fn host_04_05_host_uri_read_of_db_users_42(driver: Driver) {
    let server = server();
    let Some(s) = Session::omp(driver, "hosturi", &server) else {
        return;
    };
    let schemes = s
        .call(typed_command(
            json!({"type": "set_host_uri_schemes", "schemes": [{"scheme": "db"}]}),
        ))
        .expect("set_host_uri_schemes");
    assert!(schemes.to_string().contains("\"db\""), "{schemes}");
    s.prompt(r#"[[tool read {"path":"db://users/42"}]]"#);
    let events = s.until("host URI request", |e| {
        matches!(e, ClientEvent::HostUriRequest { .. })
    });
    let Some(ClientEvent::HostUriRequest(request)) = events.last().cloned() else {
        unreachable!()
    };
    let id = request.id;
    assert_eq!(
        (request.operation.as_str(), request.url.as_str()),
        ("read", "db://users/42")
    );
    let mut fields = Map::new();
    fields.insert(
        "content".into(),
        r#"{"id":42,"name":"Ada Lovelace"}"#.into(),
    );
    fields.insert("contentType".into(), "application/json".into());
    assert!(s.host.host_uri_result(&id, fields));
    let turn = s.turn();
    let text = deltas(&turn, "text_delta");
    assert!(
        text.starts_with("read returned:") && text.contains("Ada Lovelace"),
        "{text}"
    );
    let last = server.requests().pop().expect("a model call");
    assert!(last.to_string().contains("Ada Lovelace"), "{last}");
    s.shutdown();
}

/// CALL-05, CALL-01: `abort_bash` is sent at once while a `bash` is pending; the bash
/// response (matched on id) reports the cancellation long before the command would end.
pub fn call_05_abort_bash_while_bash_runs(driver: Driver) {
    let server = server();
    let Some(s) = Session::omp(driver, "abortbash", &server) else {
        return;
    };
    let start = Instant::now();
    let bash = s.host.send(typed_command(
        json!({"type": "bash", "command": "sleep 120; echo finished"}),
    ));
    // The agent runs bash in the background; an abort_bash that arrives before the shell has
    // started aborts nothing, so it is repeated until the bash response comes.
    let outcome = loop {
        std::thread::sleep(Duration::from_millis(300));
        s.call(typed_command(json!({"type": "abort_bash"})))
            .expect("abort_bash");
        let answered = (0..10).find_map(|_| match s.host.next_event(Duration::from_millis(100)) {
            Some(ClientEvent::Response {
                request, outcome, ..
            }) if request == bash => Some(outcome),
            _ => None,
        });
        if let Some(outcome) = answered {
            break outcome;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "bash was never aborted"
        );
    };
    let data = match outcome.expect("bash answers even when aborted") {
        ResponseData::Bash(data) => data,
        other => panic!("not a bash result: {other:?}"),
    };
    assert_eq!(data.cancelled, Some(true), "{data:?}");
    assert!(!data.output.contains("finished"), "{data:?}");
    // Well short of the command's 120 s: the abort ended it (generous for a loaded machine).
    assert!(start.elapsed() < Duration::from_secs(100));
    s.shutdown();
}

/// Adds `count` bash executions to the history (each is one message), at most 16 in flight.
fn add_bash_messages(s: &Session, count: usize) {
    let mut left = count;
    while left > 0 {
        let mut batch: Vec<_> = (0..left.min(16))
            .map(|i| {
                s.host.send(typed_command(
                    json!({"type": "bash", "command": format!("echo {i}")}),
                ))
            })
            .collect();
        left -= batch.len();
        // Bash runs concurrently: the responses come in any order (CALL-01).
        s.until("the bash responses", |e| {
            if let ClientEvent::Response {
                request, outcome, ..
            } = e
            {
                assert!(outcome.is_ok(), "{outcome:?}");
                batch.retain(|r| r != request);
            }
            batch.is_empty()
        });
    }
}

/// PAGE-01, PAGE-06, PAGE-07: a history of more than 256 messages: the Client's whole-history
/// read (limit 256) takes two pages and equals `get_messages`; the pages by hand show the
/// cursor on the first page only and `totalMessages`.
pub fn page_01_06_07_paged_history_over_two_pages_equals_get_messages(driver: Driver) {
    let server = server();
    let Some(s) = Session::omp(driver, "pages", &server) else {
        return;
    };
    add_bash_messages(&s, 270);
    let messages = s.host.messages().expect("history");
    let legacy = s
        .call(typed_command(json!({"type": "get_messages"})))
        .expect("get_messages");
    assert_eq!(legacy["messages"].as_array(), Some(&messages));
    assert!(messages.len() > 256, "{} messages", messages.len());

    let first = s
        .call(typed_command(
            json!({"type": "get_messages_page", "limit": 256}),
        ))
        .expect("first page");
    assert_eq!(first["messages"].as_array().map(Vec::len), Some(256));
    assert_eq!(first["totalMessages"], messages.len());
    let cursor = first["nextCursor"].as_str().expect("a next cursor");
    let second = s
        .call(typed_command(
            json!({"type": "get_messages_page", "limit": 256, "cursor": cursor}),
        ))
        .expect("second page");
    assert!(
        second.get("nextCursor").is_none(),
        "the last page: {second}"
    );
    let paged: Vec<Value> = [&first, &second]
        .iter()
        .flat_map(|p| p["messages"].as_array().cloned().unwrap_or_default())
        .collect();
    assert_eq!(paged, messages);
    s.shutdown();
}

/// PAGE-04, PAGE-07: by hand, a cursor taken before a new message is stale (code
/// `stale_cursor`), and a direct page call does not fall back. The Client's walk meeting a
/// stale cursor cannot be timed live (the agent would have to add a message between two
/// pages the Client sends back to back): `page-07-stale-cursor-discards-pages.jsonl` covers
/// it. The walk's fallback is shown live on `session_busy` instead: during a slow turn a
/// direct page fails busy while the whole-history read falls back to `get_messages`.
pub fn page_04_07_stale_cursor_by_hand_and_busy_walk_falls_back(driver: Driver) {
    let server = server();
    let Some(s) = Session::omp(driver, "stale", &server) else {
        return;
    };
    add_bash_messages(&s, 3);
    let first = s
        .call(typed_command(
            json!({"type": "get_messages_page", "limit": 1}),
        ))
        .expect("first page");
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next cursor")
        .to_owned();
    add_bash_messages(&s, 1);
    let stale = s.call(typed_command(
        json!({"type": "get_messages_page", "limit": 1, "cursor": cursor}),
    ));
    let failure = stale.as_ref().err().and_then(Failure::agent);
    assert_eq!(
        failure.and_then(|f| f.code.as_ref()),
        Some(&ErrorCode::StaleCursor),
        "{stale:?}"
    );

    let before = s.host.messages().expect("history");
    assert_eq!(before.len(), 4);
    s.prompt("[[slow 400]] Take your time.");
    s.until("turn start", |e| matches!(e, ClientEvent::TurnStarted));
    let busy = s.call(typed_command(json!({"type": "get_messages_page"})));
    let failure = busy.as_ref().err().and_then(Failure::agent);
    assert_eq!(
        failure.and_then(|f| f.code.as_ref()),
        Some(&ErrorCode::SessionBusy),
        "{busy:?}"
    );
    let messages = s
        .host
        .messages()
        .expect("the walk falls back to get_messages");
    assert_eq!(messages.get(..4), Some(&before[..]), "{messages:?}");
    s.turn();
    s.shutdown();
}

/// CALL-02 (agent side of FRAME-13): a line that is not JSON gets an id-less `parse` failure,
/// surfaced (with nothing pending) as unmatched, and the session goes on.
pub fn call_02_non_json_line_gets_a_parse_error_and_the_session_goes_on(driver: Driver) {
    let server = server();
    let Some(s) = Session::omp(driver, "notjson", &server) else {
        return;
    };
    assert!(s.host.send_raw_line(b"this is not JSON {"));
    let events = s.until("the parse error", |e| {
        matches!(e, ClientEvent::Unmatched { .. })
    });
    let Some(ClientEvent::Unmatched {
        frame: AgentFrame::Response(response),
    }) = events.last()
    else {
        unreachable!("{:?}", events.last())
    };
    assert_eq!(response.command, "parse", "{response:?}");
    assert!(!response.success, "{response:?}");
    assert!(response.id.is_none(), "{response:?}");
    assert!(
        response
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with("Failed to parse command")),
        "{response:?}"
    );
    let state = s
        .call(typed_command(json!({"type": "get_state"})))
        .expect("get_state");
    assert!(state["sessionId"].is_string(), "{state}");
    s.shutdown();
}

/// CALL-07: the agent killed in the middle of a slow turn: every pending request fails with
/// the exit status and the stderr tail, the session closes, nothing hangs.
pub fn call_07_agent_killed_mid_turn_fails_every_pending_request(driver: Driver) {
    let server = server();
    let Some(s) = Session::omp(driver, "killturn", &server) else {
        return;
    };
    s.prompt("[[slow 500]] A slow turn, never finished.");
    s.until("turn start", |e| matches!(e, ClientEvent::TurnStarted));
    let pending = [
        s.host.send(typed_command(
            json!({"type": "bash", "command": "sleep 30"}),
        )),
        s.host.send(typed_command(
            json!({"type": "bash", "command": "sleep 31"}),
        )),
    ];
    std::thread::sleep(Duration::from_millis(300));
    Command::new("kill")
        .args(["-9", &s.host.pid().to_string()])
        .status()
        .expect("kill");
    let mut failed = Vec::new();
    let events = s.until("closed", |e| {
        if let ClientEvent::Response {
            request,
            outcome: Err(f),
            ..
        } = e
        {
            failed.push((*request, f.error.clone()));
        }
        matches!(e, ClientEvent::Closed { .. })
    });
    let Some(ClientEvent::Closed { error }) = events.last() else {
        unreachable!()
    };
    let SessionError::Exited { stderr, .. } = error else {
        panic!("{error:?}")
    };
    let expected = format!("Agent process exited with signal 9. Stderr: {stderr}");
    assert_eq!(
        failed,
        pending.map(|r| (r, expected.clone())).to_vec(),
        "every pending request, with the status and the stderr tail"
    );
    assert!(
        s.call(typed_command(json!({"type": "get_state"}))).is_err(),
        "a closed session refuses calls"
    );
}

/// FRAME-03 (no ready frame: v1 at once), CALL-02 (pi's unknown-command failure matched to
/// its request: id-less from pi 0.73, with the id from pi 1.6), a whole turn, PAGE-07 (v1: the
/// history through `get_messages`), against pi 0.73.1.
pub fn frame_03_call_02_page_07_pi_0_73_v1_only_turn_unknown_command_and_history(driver: Driver) {
    pi_v1_only_turn_unknown_command_and_history(driver, Pi::V0_73)
}

/// The same against pi 1.6.0.
pub fn frame_03_call_02_page_07_pi_1_6_v1_only_turn_unknown_command_and_history(driver: Driver) {
    pi_v1_only_turn_unknown_command_and_history(driver, Pi::V1_6)
}

fn pi_v1_only_turn_unknown_command_and_history(driver: Driver, pi: Pi) {
    let server = server();
    let Some(s) = Session::pi(driver, pi, "pi", &server) else {
        return;
    };
    let ready = s.until("ready", |e| matches!(e, ClientEvent::Ready { .. }));
    assert_eq!(
        ready.last(),
        Some(&ClientEvent::Ready {
            protocol: ProtocolVersion::V1
        })
    );
    let unknown = s.call(typed_command(json!({"type": "frobnicate"})));
    assert!(
        unknown
            .as_ref()
            .err()
            .and_then(Failure::agent)
            .is_some_and(|f| f.error.contains("frobnicate")),
        "{unknown:?}"
    );
    s.prompt("[[text Hi from pi.]]");
    assert_eq!(deltas(&s.turn(), "text_delta"), "Hi from pi.");
    let history = s.host.messages().expect("history");
    let legacy = s
        .call(typed_command(json!({"type": "get_messages"})))
        .expect("get_messages");
    assert_eq!(legacy["messages"].as_array(), Some(&history));
    assert!(
        history.iter().any(|m| m["role"] == "assistant"),
        "{history:?}"
    );
    s.shutdown();
}

/// CALL-03, CALL-09 against pi 0.73.1: a `bash` tool turn (the tool's lifecycle, then the
/// model's answer with its output) and a thinking turn; the run ends at `agent_end`.
pub fn call_03_09_pi_0_73_tool_and_thinking_turns(driver: Driver) {
    pi_tool_and_thinking_turns(driver, Pi::V0_73)
}

/// CALL-03, CALL-09, CALL-06 against pi 1.6.0: the same turns; every frame is typed (none
/// unknown: delta-only `message_update`, `agent_settled`), and after each run's terminal
/// `agent_end` comes `agent_settled`, not aborted.
pub fn call_03_09_call_06_pi_1_6_tool_and_thinking_turns_then_agent_settled(driver: Driver) {
    pi_tool_and_thinking_turns(driver, Pi::V1_6)
}

fn pi_tool_and_thinking_turns(driver: Driver, pi: Pi) {
    let server = server();
    let Some(s) = Session::pi(driver, pi, "pitools", &server) else {
        return;
    };
    let mut seen = Vec::new();
    let ack = s.prompt(r#"[[tool bash {"command":"echo hi"}]]"#);
    if pi == Pi::V1_6 {
        assert_eq!(ack["disposition"], "started", "{ack}");
    }
    let turn = s.turn();
    let started: Vec<Value> = frames(&turn, "tool_execution_start").collect();
    assert_eq!(started.len(), 1, "{turn:?}");
    assert_eq!(started[0]["toolName"], "bash");
    assert_eq!(started[0]["args"], json!({"command": "echo hi"}));
    let ended: Vec<Value> = frames(&turn, "tool_execution_end").collect();
    assert_eq!(ended.len(), 1, "{turn:?}");
    assert_eq!(ended[0]["toolCallId"], started[0]["toolCallId"]);
    assert_eq!(ended[0]["isError"], false);
    assert_eq!(deltas(&turn, "text_delta"), "bash returned: hi\n");
    seen.extend(turn);

    s.prompt("[[think Weighing the options.]] Answer: 42");
    let turn = s.turn();
    assert_eq!(deltas(&turn, "thinking_delta"), "Weighing the options.");
    assert_eq!(deltas(&turn, "text_delta"), "Answer: 42");
    seen.extend(turn);
    // What follows the last agent_end: pi 1.6's agent_settled, answered before get_state's
    // response.
    let state = s.host.send(typed_command(json!({"type": "get_state"})));
    seen.extend(s.until(
        "get_state",
        |e| matches!(e, ClientEvent::Response { request, .. } if *request == state),
    ));

    let unknown: Vec<&AgentFrame> = seen
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Frame {
                frame:
                    frame @ (AgentFrame::Unknown(_) | AgentFrame::Event(SessionEvent::Unknown(_))),
            } => Some(frame),
            _ => None,
        })
        .collect();
    assert!(unknown.is_empty(), "CALL-06: untyped frames {unknown:?}");
    let settled: Vec<Option<bool>> = seen
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Frame {
                frame: AgentFrame::Event(SessionEvent::AgentSettled(settled)),
            } => Some(settled.aborted),
            _ => None,
        })
        .collect();
    let expected = match pi {
        Pi::V0_73 => vec![],
        Pi::V1_6 => vec![Some(false); 2],
    };
    assert_eq!(settled, expected, "one agent_settled per run");
    s.shutdown();
}
