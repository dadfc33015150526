//! The command table (CALL-01, CALL-06): one typed command per `Command` variant, each writing
//! its own `type`, and every command of omp 18.2.3's RPC set among them.

use musewire_core::client::TypedCommand;
use musewire_core::wire::request::{self, TYPES};
use musewire_core::wire::{Command, ResponseData};

#[test]
fn call_01_every_typed_command_writes_its_own_type_and_every_type_is_one_command() {
    let every = request::every_command();
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
    assert_eq!(request::GetState::TYPE, "get_state");
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
        answer_of(&request::GetState::default()),
        std::any::TypeId::of::<musewire_core::wire::SessionState>()
    );
    assert_eq!(command.clone().into_command(), command);
}
