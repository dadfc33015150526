//! The bundled agent's tool results through the core's spill policy, in process. The in-process driver (`AgentProgram::next_line` on `musewire_agent::App`) has no spill store, so
//! an over-cap result keeps its whole text (SPILL-05); the store's side is the live test
//! `drivers/cli/tests/agent_spill.rs`.

mod common;

use common::{types, Pair};
use musewire_agent::Options;

fn tool_end(frames: &[serde_json::Value]) -> &serde_json::Value {
    frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .expect("tool_execution_end")
}

#[test]
fn spill_05_without_a_store_an_over_cap_result_goes_on_whole() {
    let mut pair = Pair::with_options(Options {
        max_inline_bytes: Some(16),
        ..Options::default()
    });
    let frames = pair.turn("bash seq 1 100");
    let end = tool_end(&frames);
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("1\n2\n") && text.ends_with("99\n100\n"),
        "{text}"
    );
    assert!(end["result"]["details"].get("storedOutput").is_none());
    assert_eq!(end["isError"], false);
    // The order of a tool turn is unchanged by the settling step.
    let order = types(&frames);
    let at = |t: &str| order.iter().position(|x| *x == t).unwrap();
    assert!(at("tool_execution_start") < at("tool_execution_end"));
    assert_eq!(order[at("tool_execution_end") + 1], "message_start");
}

#[test]
fn spill_02_within_the_cap_the_result_is_unchanged() {
    let mut pair = Pair::with_options(Options {
        max_inline_bytes: Some(4096),
        ..Options::default()
    });
    let frames = pair.turn("bash echo small");
    let end = tool_end(&frames);
    assert_eq!(end["result"]["content"][0]["text"], "small\n");
    assert_eq!(end["result"]["details"]["exitCode"], 0);
}
