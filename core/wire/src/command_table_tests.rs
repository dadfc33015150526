//! The command table (CALL-01, CALL-06): one typed command per `Command` variant, each writing
//! its own `type`, and every command of omp 18.2.3's RPC set among them; each row's response
//! data reads into its `ResponseData` variant, which its answer type takes.

use crate::command::{self, TYPES};
use crate::{AgentFrame, Command, ResponseData};
use crate::{Answered, TypedCommand};
use serde_json::{json, Value};

#[test]
fn call_01_every_typed_command_writes_its_own_type_and_every_type_is_one_command() {
    let every = command::every_command();
    assert_eq!(every.len(), TYPES.len());
    for ((wire, command), listed) in every.into_iter().zip(TYPES) {
        assert_eq!(wire, *listed);
        assert_eq!(command.type_name(), wire);
        // Written and read back, it is the same command: the table is the wire's.
        let line = command.to_vec_with_id(Some("1"));
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["type"], wire);
        let (_, back) = Command::from_value_with_id(value).unwrap();
        assert_eq!(back, command, "{wire}");
    }
    let mut sorted = TYPES.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), TYPES.len(), "each type once");
    assert_eq!(crate::GetState::TYPE, "get_state");
}

#[test]
fn call_01_omp_18_2_3s_commands_are_all_in_the_table() {
    // omp 18.2.3's `RpcCommand` union (src/modes/rpc/rpc-types.ts).
    let omp = [
        "negotiate_protocol",
        "prompt",
        "steer",
        "follow_up",
        "abort",
        "abort_and_prompt",
        "new_session",
        "get_state",
        "set_fast_mode",
        "get_available_commands",
        "set_todos",
        "set_host_tools",
        "set_host_uri_schemes",
        "set_subagent_subscription",
        "get_subagents",
        "get_subagent_messages",
        "set_model",
        "cycle_model",
        "get_available_models",
        "set_thinking_level",
        "cycle_thinking_level",
        "set_steering_mode",
        "set_follow_up_mode",
        "set_interrupt_mode",
        "compact",
        "set_auto_compaction",
        "set_auto_retry",
        "abort_retry",
        "bash",
        "abort_bash",
        "get_session_stats",
        "export_html",
        "switch_session",
        "branch",
        "get_branch_messages",
        "get_last_assistant_text",
        "set_session_name",
        "handoff",
        "get_messages",
        "get_messages_page",
        "get_login_providers",
        "login",
    ];
    for wire in omp {
        assert!(TYPES.contains(&wire), "{wire} is not in the command table");
    }
}

#[test]
fn call_01_a_command_is_its_own_typed_command_answered_as_its_data() {
    fn answer_of<C: TypedCommand>(_: &C) -> std::any::TypeId
    where
        C::Answer: 'static,
    {
        std::any::TypeId::of::<C::Answer>()
    }
    let command = Command::GetState(Default::default());
    assert_eq!(answer_of(&command), std::any::TypeId::of::<ResponseData>());
    assert_eq!(
        answer_of(&crate::GetState::default()),
        std::any::TypeId::of::<crate::SessionState>()
    );
    assert_eq!(command.clone().into_command(), command);
}

/// A typical successful `data` of each command whose data is typed (as omp, pi or the bundled
/// agent sends it).
fn typical_data(type_name: &str) -> Option<Value> {
    Some(match type_name {
        "negotiate_protocol" => json!({"protocolVersion": 2}),
        "prompt" => json!({"agentInvoked": false}),
        "new_session" | "switch_session" | "clone" => json!({"cancelled": false}),
        "get_state" => json!({"model": {"id": "m", "provider": "p"}, "thinkingLevel": "off",
            "isStreaming": false, "sessionId": "s-1", "messageCount": 2}),
        "set_fast_mode" => json!({"enabled": true, "active": false}),
        "get_available_commands" | "get_commands" => {
            json!({"commands": [{"name": "review", "description": "Review the diff"}]})
        }
        "set_todos" => json!({"todoPhases": [{"name": "one", "tasks": []}]}),
        "set_host_tools" => json!({"toolNames": ["host_echo"]}),
        "set_host_uri_schemes" => json!({"schemes": ["notes"]}),
        "set_subagent_subscription" => json!({"level": "progress"}),
        "get_subagents" => json!({"subagents": [{"id": "a-1", "status": "running"}]}),
        "get_subagent_messages" => {
            json!({"sessionFile": "/s/a-1.jsonl", "fromByte": 0, "nextByte": 10, "entries": []})
        }
        "set_model" => json!({"id": "m", "provider": "p", "reasoning": true}),
        "cycle_model" => json!({"model": {"id": "m"}, "thinkingLevel": "high", "isScoped": false}),
        "get_available_models" => json!({"models": [{"id": "m"}, {"id": "n"}]}),
        "cycle_thinking_level" => json!({"level": "high"}),
        "compact" => json!({"summary": "so far", "tokensBefore": 1000}),
        "bash" => json!({"output": "hi\n", "exitCode": 0, "cancelled": false}),
        "get_session_stats" => {
            json!({"sessionId": "s-1", "userMessages": 1, "tokens": {"input": 3, "output": 4}})
        }
        "export_html" => json!({"path": "/tmp/s.html"}),
        "branch" | "fork" => json!({"text": "from here", "cancelled": false}),
        "get_branch_messages" | "get_fork_messages" => {
            json!({"messages": [{"entryId": "e-1", "text": "hi"}]})
        }
        "get_last_assistant_text" => json!({"text": "done"}),
        "handoff" => json!({"savedPath": "/s/handoff.md"}),
        "get_messages" => json!({"messages": [{"role": "user", "content": "hi", "timestamp": 1}]}),
        "get_messages_page" => json!({"messages": [{"role": "user", "content": "hi",
            "timestamp": 1}], "nextCursor": "c", "totalMessages": 2}),
        "get_login_providers" => json!({"providers": [{"id": "p", "available": true}]}),
        "login" => json!({"providerId": "p"}),
        "get_entries" => json!({"entries": [{"type": "message", "id": "e-1", "parentId": null,
            "timestamp": "2026-05-01T10:00:00.000Z", "message": {"role": "user", "content": "hi",
            "timestamp": 1}}], "leafId": "e-1"}),
        "read_output" => json!({"sessionId": "s-1", "itemId": "call-1",
            "outputRef": "out-0a1b2c3d4e5f6071", "content": "hi", "encoding": "utf8",
            "mediaType": "text/plain", "offsetBytes": 0, "byteLen": 2, "eof": true}),
        _ => return None,
    })
}

/// The variant's name, as `Debug` writes it.
fn variant(data: &ResponseData) -> String {
    let debug = format!("{data:?}");
    debug[..debug.find('(').unwrap_or(debug.len())].to_owned()
}

fn read_response(type_name: &str, data: &Value) -> ResponseData {
    let line = json!({"id": "1", "type": "response", "command": type_name, "success": true,
        "data": data})
    .to_string();
    let AgentFrame::Response(response) = AgentFrame::from_slice(line.as_bytes()).unwrap() else {
        panic!("{type_name}: not a response")
    };
    let read = response.data.expect("data");
    // The frame reader and `from_value` read the data alike, and write it back as sent.
    assert_eq!(
        ResponseData::from_value(type_name, data.clone()).unwrap(),
        read,
        "{type_name}"
    );
    assert_eq!(serde_json::to_value(&read).unwrap(), *data, "{type_name}");
    read
}

#[test]
fn call_01_every_rows_data_reads_into_its_variant_and_its_answer_type_takes_it() {
    let rows = command::every_answer();
    assert_eq!(
        rows.iter().map(|row| row.type_name).collect::<Vec<_>>(),
        TYPES
    );
    for row in &rows {
        let wire = row.type_name;
        let (data, expected) = match (row.data, typical_data(wire)) {
            (Some(name), Some(data)) => (data, name),
            (None, None) => (json!({"ok": true}), "Other"),
            (Some(name), None) => panic!("{wire} reads into {name}: give it typical data"),
            (None, Some(_)) => panic!("{wire}'s data is not typed: drop its typical data"),
        };
        let read = read_response(wire, &data);
        assert_eq!(variant(&read), expected, "{wire}");
        (row.read_answer)(Answered::Data(read)).unwrap_or_else(|e| panic!("{wire}: {e:?}"));
        // An answer of another shape is not taken (unless the answer is any data).
        let other = (row.read_answer)(Answered::Data(ResponseData::Other(json!([1]))));
        assert_eq!(
            other.is_ok(),
            row.data.is_none() || wire.starts_with("set_host_"),
            "{wire}"
        );
    }
    // Every variant but `Other` is some row's (the table checks it as it compiles, too: a
    // variant no row reads into does not compile).
    let mut reached: Vec<_> = rows.iter().filter_map(|row| row.data).collect();
    reached.sort_unstable();
    reached.dedup();
    let mut variants = VARIANTS.to_vec();
    variants.sort_unstable();
    assert_eq!(reached, variants);
}

/// `ResponseData`'s variants but `Other`.
const VARIANTS: [&str; 30] = [
    "NegotiateProtocol",
    "Prompt",
    "Cancelled",
    "State",
    "FastMode",
    "Commands",
    "Todos",
    "HostTools",
    "HostUriSchemes",
    "Level",
    "Subagents",
    "SubagentMessages",
    "Model",
    "CycleModel",
    "Models",
    "CycleThinkingLevel",
    "Compaction",
    "Bash",
    "SessionStats",
    "Path",
    "Branch",
    "BranchMessages",
    "LastAssistantText",
    "Handoff",
    "Messages",
    "MessagesPage",
    "LoginProviders",
    "Login",
    "ReadOutput",
    "Entries",
];

#[test]
fn call_01_pi_0_73s_commands_read_as_their_omp_twins_and_unknown_commands_as_other() {
    let twins = [
        ("clone", "new_session"),
        ("get_commands", "get_available_commands"),
        ("fork", "branch"),
        ("get_fork_messages", "get_branch_messages"),
    ];
    for (pi, omp) in twins {
        let data = typical_data(pi).unwrap();
        assert_eq!(read_response(pi, &data), read_response(omp, &data), "{pi}");
    }
    let data = typical_data("clone").unwrap();
    assert!(matches!(
        read_response("clone", &data),
        ResponseData::Cancelled(_)
    ));
    assert!(matches!(
        read_response("get_commands", &typical_data("get_commands").unwrap()),
        ResponseData::Commands(_)
    ));
    assert!(matches!(
        read_response("fork", &typical_data("fork").unwrap()),
        ResponseData::Branch(_)
    ));
    assert!(matches!(
        read_response(
            "get_fork_messages",
            &typical_data("get_fork_messages").unwrap()
        ),
        ResponseData::BranchMessages(_)
    ));
    // A command this version does not know: its data as sent.
    assert_eq!(
        read_response("set_hologram_level", &data),
        ResponseData::Other(data.clone())
    );
}

#[test]
fn call_01_null_data_is_other_but_for_the_answers_that_may_be_null() {
    for row in command::every_answer() {
        let wire = row.type_name;
        let read = read_response(wire, &Value::Null);
        let nullable = ["cycle_model", "cycle_thinking_level", "handoff"].contains(&wire);
        if nullable {
            assert_eq!(variant(&read), row.data.unwrap(), "{wire}");
        } else {
            assert_eq!(read, ResponseData::Other(Value::Null), "{wire}");
        }
        // Null is an answer for the nullable, a prompt (CALL-03) and the untyped answers.
        let taken = (row.read_answer)(Answered::Data(read)).is_ok();
        let untyped = row.data.is_none() || wire.starts_with("set_host_");
        assert_eq!(taken, nullable || wire == "prompt" || untyped, "{wire}");
    }
}
