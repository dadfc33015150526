//! ACP-31 `session/fork` and ACP-32 `session/delete`: the session folder's files are copied
//! and removed by the driver, asked through actions and answered through inputs.

use crate::support as acp_support;

use crate::pinned::MAX_WAITING_FILE_REQUESTS;
use acp_support::Harness;
use musewire_core::acp::{
    Bridge, BridgeConfig, ForkNaming, Input, SessionFileDone, SessionFileFailure,
    SessionFileFailureKind,
};
use musewire_core::client::AgentKind;
use serde_json::{json, Value};

const DIR: &str = "/state/sessions";

fn with_folder(agent: AgentKind) -> Harness {
    let mut h = Harness::new();
    h.bridge = Bridge::new(BridgeConfig {
        session_dir: Some(DIR.into()),
        agent,
        ..BridgeConfig::default()
    });
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    h
}

/// Resumes stored session `id` (request `request`) in a new agent: its agent key.
fn resumed(h: &mut Harness, request: u64, id: &str) -> String {
    h.request(
        request,
        "session/resume",
        json!({"sessionId": id, "cwd": "/work", "mcpServers": []}),
    );
    let key = h.spawned.last().unwrap().0.clone();
    h.answer_opening_after_switch(&key);
    assert!(h.answer(request).unwrap()["result"].is_object());
    key
}

fn failure(kind: SessionFileFailureKind) -> Result<SessionFileDone, SessionFileFailure> {
    Err(SessionFileFailure {
        kind,
        message: "why".into(),
    })
}

#[test]
fn acp_31_32_initialize_advertises_fork_and_delete_with_a_session_folder() {
    let mut h = Harness::new();
    h.request(1, "initialize", json!({"protocolVersion": 1}));
    let caps = &h.answer(1).unwrap()["result"]["agentCapabilities"]["sessionCapabilities"];
    assert!(caps.get("fork").is_none_or(Value::is_null), "{caps}");
    assert!(caps.get("delete").is_none_or(Value::is_null), "{caps}");
    h.request(
        2,
        "session/fork",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    h.request(3, "session/delete", json!({"sessionId": "s-1"}));
    assert_eq!(h.answer(2).unwrap()["error"]["code"], -32601);
    assert_eq!(h.answer(3).unwrap()["error"]["code"], -32601);
    let h = with_folder(AgentKind::Bundled);
    let caps = &h.answer(1).unwrap()["result"]["agentCapabilities"]["sessionCapabilities"];
    assert!(
        caps["fork"].is_object() && caps["delete"].is_object(),
        "{caps}"
    );
}

#[test]
fn acp_31_fork_copies_the_file_and_opens_the_copy_in_its_own_agent() {
    let mut h = with_folder(AgentKind::Bundled);
    let original = resumed(&mut h, 2, "session-1");
    h.request(
        3,
        "session/fork",
        json!({"sessionId": "session-1", "cwd": "/fork", "mcpServers": []}),
    );
    // The driver is asked to copy the file, in the bundled agent's naming.
    let (ticket, dir, source, naming) = h.forks.pop().expect("a fork asked");
    assert_eq!(
        (dir.to_str().unwrap(), source.as_str(), naming),
        (DIR, "session-1.jsonl", ForkNaming::Numbered)
    );
    assert_eq!(h.spawned.len(), 1, "no agent before the copy is made");
    h.bridge.handle(
        h.now,
        Input::SessionFile(
            ticket,
            Ok(SessionFileDone::Forked {
                name: "session-2.jsonl".into(),
            }),
        ),
    );
    h.drain();
    // The copy opens in a new agent in the fork's cwd, switched to the copy, not replayed.
    assert_eq!(h.spawned.len(), 2);
    let fork = h.spawned[1].0.clone();
    assert_eq!(h.spawned[1].1, std::path::PathBuf::from("/fork"));
    h.agent_lines(
        &fork,
        &[json!({"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]})],
    );
    let switch = h.asked("switch_session").unwrap();
    assert_eq!(switch["sessionPath"], "/state/sessions/session-2.jsonl");
    h.answer_opening_after_switch(&fork);
    let answer = h.answer(3).expect("the fork answered");
    assert_eq!(answer["result"]["sessionId"], "session-2", "{answer}");
    assert!(answer["result"]["configOptions"].is_array(), "{answer}");
    assert!(h.asked("get_messages_page").is_none() && h.asked("get_messages").is_none());
    // The fork's turns go to its agent, the original's to its own.
    h.prompt("session-2", "in the fork");
    assert_eq!(h.agent_to.last().unwrap().to_string(), fork);
    h.prompt("session-1", "in the original");
    assert_eq!(h.agent_to.last().unwrap().to_string(), original);
}

#[test]
fn acp_31_fork_naming_follows_the_agent() {
    for (agent, naming) in [
        (AgentKind::Omp, ForkNaming::Timestamped),
        (AgentKind::Pi, ForkNaming::Timestamped),
        (AgentKind::Other, ForkNaming::Timestamped),
        (AgentKind::Bundled, ForkNaming::Numbered),
    ] {
        let mut h = with_folder(agent);
        h.request(
            2,
            "session/fork",
            json!({"sessionId": "a_b", "cwd": "/work", "mcpServers": []}),
        );
        assert_eq!(h.forks[0].3, naming, "{agent:?}");
        assert_eq!(h.forks[0].2, "a_b.jsonl");
    }
}

#[test]
fn acp_31_fork_failures_are_typed() {
    let mut h = with_folder(AgentKind::Bundled);
    h.request(
        2,
        "session/fork",
        json!({"sessionId": "../x", "cwd": "/work", "mcpServers": []}),
    );
    assert_eq!(h.answer(2).unwrap()["error"]["code"], -32002);
    h.request(
        3,
        "session/fork",
        json!({"sessionId": "s-1", "cwd": "relative", "mcpServers": []}),
    );
    assert_eq!(h.answer(3).unwrap()["error"]["code"], -32602);
    assert!(h.forks.is_empty());
    for (id, kind, code) in [
        (4, SessionFileFailureKind::NotFound, -32002),
        (5, SessionFileFailureKind::NotAFile, -32602),
        (6, SessionFileFailureKind::Other, -32603),
    ] {
        h.request(
            id,
            "session/fork",
            json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
        );
        let (ticket, ..) = h.forks.pop().unwrap();
        h.bridge
            .handle(h.now, Input::SessionFile(ticket, failure(kind)));
        h.drain();
        assert_eq!(h.answer(id).unwrap()["error"]["code"], code, "{kind:?}");
    }
    // A copy whose name can't be a session id is not opened.
    h.request(
        7,
        "session/fork",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    let (ticket, ..) = h.forks.pop().unwrap();
    let odd = Ok(SessionFileDone::Forked {
        name: ".hidden.jsonl".into(),
    });
    h.bridge.handle(h.now, Input::SessionFile(ticket, odd));
    h.drain();
    assert_eq!(h.answer(7).unwrap()["error"]["code"], -32603);
    assert!(h.spawned.is_empty());
    // An answer under an unknown ticket is ignored.
    h.bridge.handle(
        h.now,
        Input::SessionFile(
            musewire_core::acp::FileTicket(999),
            Ok(SessionFileDone::Deleted),
        ),
    );
    h.drain();
}

#[test]
fn acp_32_delete_removes_a_stored_session_file() {
    let mut h = with_folder(AgentKind::Omp);
    h.request(2, "session/delete", json!({"sessionId": "s-1"}));
    let (ticket, dir, name) = h.deletes.pop().expect("a delete asked");
    assert_eq!((dir.to_str().unwrap(), name.as_str()), (DIR, "s-1.jsonl"));
    assert!(h.answer(2).is_none());
    h.bridge.handle(
        h.now,
        Input::SessionFile(ticket, Ok(SessionFileDone::Deleted)),
    );
    h.drain();
    assert_eq!(h.answer(2).unwrap()["result"], json!({}));
    // Gone: a load, resume or fork of it is not found, nothing started.
    for (id, method) in [
        (3, "session/load"),
        (4, "session/resume"),
        (5, "session/fork"),
    ] {
        h.request(
            id,
            method,
            json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
        );
        assert_eq!(h.answer(id).unwrap()["error"]["code"], -32002, "{method}");
    }
    assert!(h.spawned.is_empty() && h.forks.is_empty());
}

#[test]
fn acp_32_delete_failures_are_typed() {
    let mut h = with_folder(AgentKind::Omp);
    h.request(
        2,
        "session/delete",
        json!({"sessionId": "../../etc/passwd"}),
    );
    assert_eq!(h.answer(2).unwrap()["error"]["code"], -32002);
    assert!(h.deletes.is_empty());
    for (id, kind, code) in [
        (3, SessionFileFailureKind::NotFound, -32002),
        (4, SessionFileFailureKind::NotAFile, -32602),
        (5, SessionFileFailureKind::Other, -32603),
    ] {
        h.request(id, "session/delete", json!({"sessionId": "s-1"}));
        let (ticket, ..) = h.deletes.pop().unwrap();
        h.bridge
            .handle(h.now, Input::SessionFile(ticket, failure(kind)));
        h.drain();
        assert_eq!(h.answer(id).unwrap()["error"]["code"], code, "{kind:?}");
    }
}

#[test]
fn acp_32_delete_of_an_open_session_closes_it_and_removes_the_file_after_its_agent() {
    let mut h = with_folder(AgentKind::Bundled);
    let key = resumed(&mut h, 2, "session-1");
    h.prompt("session-1", "running");
    h.request(3, "session/delete", json!({"sessionId": "session-1"}));
    // Closed first: its turn cancelled, its agent's stdin closed.
    assert_eq!(h.answer(10).unwrap()["result"]["stopReason"], "cancelled");
    assert_eq!(h.closed, std::slice::from_ref(&key));
    // The file waits for the agent to be gone.
    assert!(h.deletes.is_empty() && h.answer(3).is_none());
    h.agent_exit(&key);
    let (ticket, _, name) = h.deletes.pop().expect("the delete asked after the exit");
    assert_eq!(name, "session-1.jsonl");
    h.bridge.handle(
        h.now,
        Input::SessionFile(ticket, Ok(SessionFileDone::Deleted)),
    );
    h.drain();
    assert_eq!(h.answer(3).unwrap()["result"], json!({}));
    // The session is gone.
    h.request(
        11,
        "session/prompt",
        json!({"sessionId": "session-1", "prompt": [{"type": "text", "text": "hi"}]}),
    );
    assert_eq!(h.answer(11).unwrap()["error"]["code"], -32002);
}

#[test]
fn acp_31_32_waiting_forks_and_deletes_are_bounded() {
    let mut h = with_folder(AgentKind::Bundled);
    for id in 0..MAX_WAITING_FILE_REQUESTS as u64 {
        h.request(100 + id, "session/delete", json!({"sessionId": "s-1"}));
    }
    assert_eq!(h.deletes.len(), MAX_WAITING_FILE_REQUESTS);
    h.request(
        2,
        "session/fork",
        json!({"sessionId": "s-1", "cwd": "/work", "mcpServers": []}),
    );
    assert_eq!(h.answer(2).unwrap()["error"]["code"], -32600);
    assert!(h.forks.is_empty());
}
