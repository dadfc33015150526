//! The host's spill policy, end to end: a host whose `ClientConfig` sets a spill policy answers
//! a host tool call of the bundled agent with a result far over the cap. Each driver saves it
//! in the local store (SPILL-06: 0600 in 0700 folders, under the agent's session) and the
//! agent's history gets the head/tail preview and the notice naming the stored file (SPILL-03),
//! the whole text byte for byte in the file; the application is told (`HostToolResultSettled`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_core::spill::{Outcome, SpillPolicy};
use musewire_host::HostToolAnswer;
use musewire_wire::{AgentMessage, HostToolDefinition, ToolResult};
use serde_json::json;

const CAP: usize = 4096;
const T: Duration = Duration::from_secs(30);

/// A 200 KB answer, varied so that a wrong slice shows.
fn big_answer() -> String {
    (0..20_000).map(|i| format!("{i:09}\n")).collect()
}

fn config(spill_dir: &Path) -> ClientConfig {
    ClientConfig {
        spill: SpillPolicy {
            max_inline_bytes: Some(CAP),
            has_store: true,
        },
        spill_dir: Some(spill_dir.to_owned()),
        ..ClientConfig::default()
    }
}

fn lookup() -> Vec<HostToolDefinition> {
    vec![serde_json::from_value(
        json!({"name": "lookup", "description": "Look up", "parameters": {"type": "object"}}),
    )
    .unwrap()]
}

fn answer() -> HostToolAnswer {
    HostToolAnswer::ok(ToolResult::text(big_answer()))
}

fn bundled_agent() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_musewire"));
    command.arg("agent");
    command
}

/// The history's host tool result is the preview and the notice; the stored file holds the
/// whole answer, private, under the agent's session.
fn check(messages: &[AgentMessage], events: &[ClientEvent], session: &str, spill_dir: &Path) {
    let text = messages
        .iter()
        .filter(|m| matches!(m, AgentMessage::ToolResult(_)))
        .map(|m| serde_json::to_value(m).unwrap()["content"][0]["text"].clone())
        .find_map(|t| t.as_str().map(str::to_owned))
        .expect("a tool result in the history");
    let (preview, notice) = text.split_once("\n\n(Omitted ").expect("a spill notice");
    assert!(preview.len() <= CAP, "the preview is within the cap");
    let whole = big_answer();
    assert!(whole.starts_with(preview.split("\n…\n").next().unwrap()));
    let locator = notice
        .split_once("stored at: ")
        .and_then(|(_, rest)| rest.split_once(".txt."))
        .map(|(path, _)| PathBuf::from(format!("{path}.txt")))
        .expect("the notice names the stored file");
    assert!(locator.starts_with(spill_dir), "{locator:?}");
    assert_eq!(std::fs::read_to_string(&locator).unwrap(), whole);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&locator), 0o600);
    let session_dir = locator.parent().unwrap();
    assert_eq!(mode(session_dir), 0o700);
    assert_eq!(
        session_dir.file_name().unwrap().to_str().unwrap(),
        musewire_store::session_dir_name(session)
    );
    assert!(events.iter().any(|e| matches!(e,
        ClientEvent::HostToolResultSettled { outcome: Outcome::Spilled(r), .. }
            if Path::new(&r.locator) == locator)));
}

#[test]
fn spill_03_06_mio_host_tool_results_over_the_cap_are_stored_and_previewed() {
    let dir = tempfile::tempdir().unwrap();
    let spill_dir = dir.path().join("spill");
    let agent = musewire_mio::AgentProcess::spawn(bundled_agent(), config(&spill_dir)).unwrap();
    agent.on_host_tool("lookup", |_, _| answer());
    // SPILL-05: the owner is the agent's session, as get_state names it.
    let session = agent
        .get_state(T)
        .unwrap()
        .session_id
        .expect("a session id");
    agent.set_host_tools(lookup(), T).unwrap();
    agent.prompt("call lookup {}", T).unwrap();
    let events: Vec<ClientEvent> = std::iter::from_fn(|| agent.next_event(T))
        .take_while(|e| !matches!(e, ClientEvent::TurnFinished))
        .collect();
    let messages = agent.messages(T).unwrap();
    check(&messages, &events, &session, &spill_dir);
    agent.shutdown(Duration::from_secs(5)).unwrap();
}

#[test]
fn spill_03_06_smol_host_tool_results_over_the_cap_are_stored_and_previewed() {
    smol::block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let spill_dir = dir.path().join("spill");
        let command = bundled_agent();
        let agent = musewire_smol::AgentProcess::spawn(command, config(&spill_dir)).unwrap();
        agent.on_host_tool("lookup", |_, _| async { answer() });
        let session = agent.get_state().await.unwrap().session_id.unwrap();
        agent.set_host_tools(lookup()).await.unwrap();
        agent.prompt("call lookup {}").await.unwrap();
        let mut events = Vec::new();
        while let Some(event) = agent.next_event().await {
            if matches!(event, ClientEvent::TurnFinished) {
                break;
            }
            events.push(event);
        }
        let messages = agent.messages().await.unwrap();
        check(&messages, &events, &session, &spill_dir);
        agent.shutdown(Duration::from_secs(5)).await.unwrap();
    })
}
