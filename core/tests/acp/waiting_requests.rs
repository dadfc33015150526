//! ACP-23: at most `MAX_WAITING_REQUESTS` editor requests wait on one session's agent; more
//! are refused at once (an agent that does not read would otherwise make the bridge queue
//! them without end).

use crate::support as acp_support;

use crate::pinned::MAX_WAITING_REQUESTS;
use acp_support::Harness;
use musewire_core::acp::{Bridge, BridgeConfig};
use serde_json::json;

#[test]
fn acp_23_reads_past_the_bound_are_refused_at_once() {
    let mut h = Harness::new();
    h.bridge = Bridge::new(BridgeConfig {
        agent_serves_output: true,
        ..BridgeConfig::default()
    });
    h.request(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"_meta": {"muse/output": 1}}}),
    );
    h.request(2, "session/new", json!({"cwd": "/tmp", "mcpServers": []}));
    let session = h.spawned[0].0.clone();
    h.agent_lines(
        &session,
        &[
            json!({"type": "ready", "protocolVersion": 1, "supportedProtocolVersions": [1],
            "readOutput": {"version": 1, "maxLengthBytes": 1048576}}),
        ],
    );
    // ACP-24: what the opening asks.
    h.answer_opening(&session);
    assert!(h.answer(2).unwrap()["result"]["sessionId"] == session.as_str());
    let read = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "_muse/readOutput",
            "params": {"sessionId": session, "itemId": "c1",
                "outputRef": "out-0123456789abcdef", "offsetBytes": 0, "lengthBytes": 5}})
    };
    let first = 100;
    for n in 0..MAX_WAITING_REQUESTS as u64 + 3 {
        h.send(read(first + n));
    }
    let waiting = (0..MAX_WAITING_REQUESTS as u64)
        .filter(|n| h.answer(first + n).is_none())
        .count();
    assert_eq!(
        waiting, MAX_WAITING_REQUESTS,
        "the first ones wait on the agent"
    );
    for n in MAX_WAITING_REQUESTS as u64..MAX_WAITING_REQUESTS as u64 + 3 {
        let refused = h.answer(first + n).expect("refused at once");
        let text = refused["error"]["data"].as_str().unwrap();
        assert!(text.contains("too many requests wait"), "{text}");
    }
}
