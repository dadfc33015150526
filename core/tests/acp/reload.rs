//! ACP-22: a session whose agent died is loaded again in a new agent; one whose agent runs
//! is ended and loaded again too (ACP-25).

use crate::support as acp_support;

use acp_support::Harness;
use musewire_core::acp::{Bridge, BridgeConfig};
use serde_json::json;

fn loading() -> Harness {
    let mut h = Harness::new();
    h.bridge = Bridge::new(BridgeConfig {
        session_dir: Some("/state/sessions".into()),
        ..BridgeConfig::default()
    });
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h
}

fn load(h: &mut Harness, id: u64) {
    h.request(
        id,
        "session/load",
        json!({"sessionId": "session-1", "cwd": "/tmp", "mcpServers": []}),
    );
}

#[test]
fn acp_22_a_session_whose_agent_died_loads_again_in_a_new_agent() {
    let mut h = loading();
    load(&mut h, 2);
    assert_eq!(h.spawned.len(), 1);
    let first = h.spawned[0].0.clone();
    h.agent_exit(&first);
    assert!(h.answer(2).unwrap()["error"].is_object(), "the load failed");
    load(&mut h, 4);
    assert_eq!(h.spawned.len(), 2, "a new agent for the session");
    assert_ne!(h.spawned[1].0, first);
    assert!(h.answer(4).is_none(), "the load runs");
}
