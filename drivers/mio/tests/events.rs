//! Events reach the application in batches, one a read of the agent's output (one wake of a
//! waiting thread a batch, not one an event), and never behind an answer: every event the agent
//! wrote before a call's answer can be taken once the call returned.

use std::process::Command;
use std::time::Duration;

use musewire_core::client::ClientEvent;
use musewire_mio::AgentProcess;
use musewire_wire::AgentFrame;

const WAIT: Duration = Duration::from_secs(30);

/// A fake agent: its ready frame, then for each command five `note` frames and the
/// command's empty success, all in one write.
const AGENT: &str = r#"
import json, sys
out = sys.stdout.buffer
out.write(b'{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]}\n')
out.flush()
for line in sys.stdin.buffer:
    command = json.loads(line)
    frames = [{"type": "note", "n": n} for n in range(5)]
    frames.append({"id": command["id"], "type": "response", "command": command["type"], "success": True})
    out.write("".join(json.dumps(f) + "\n" for f in frames).encode())
    out.flush()
"#;

/// The `n` of each `note` frame among `events`.
fn notes(events: &[ClientEvent]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|event| match event {
            ClientEvent::Frame {
                frame: AgentFrame::Unknown(value),
            } if value["type"] == "note" => value["n"].as_u64(),
            _ => None,
        })
        .collect()
}

#[test]
fn the_events_before_an_answer_can_be_taken_once_it_is_heard() {
    let mut command = Command::new("python3");
    command.args(["-c", AGENT]);
    let agent = AgentProcess::spawn(command, Default::default()).expect("spawn");
    // The fake answers FRAME-03's start-up probe with its notes too; a first call's answer
    // comes after them, and both sets are taken before the rounds count.
    agent.abort(WAIT).expect("abort answered");
    let warm_up: Vec<ClientEvent> =
        std::iter::from_fn(|| agent.next_event(Duration::ZERO)).collect();
    assert_eq!(notes(&warm_up), vec![0, 1, 2, 3, 4, 0, 1, 2, 3, 4]);
    for round in 0..3 {
        agent.abort(WAIT).expect("abort answered");
        // Not a moment's wait: the five notes were handed over before the answer was.
        let taken: Vec<ClientEvent> =
            std::iter::from_fn(|| agent.next_event(Duration::ZERO)).collect();
        assert_eq!(
            notes(&taken),
            vec![0, 1, 2, 3, 4],
            "round {round}: {taken:?}"
        );
    }
    agent.shutdown(WAIT).expect("shut down");
}
