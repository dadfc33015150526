//! Calls made now and taken later ([`AgentProcess::submit_to`] and [`Completions`]): a
//! pending answer against a fake agent that never answers.

use std::process::Command;
use std::time::Duration;

use musewire_core::client::{Call, CallError};
use musewire_mio::{AgentProcess, Completions};
use musewire_wire::{GetState, SessionState};

const WAIT: Duration = Duration::from_secs(30);

fn get_state() -> Call {
    Call::Send(GetState::default().into())
}

#[test]
fn a_pending_answer_can_wait_again_and_ends_with_its_agent() {
    // A fake agent: its ready frame, then it reads commands and never answers.
    let mut command = Command::new("python3");
    command.args([
        "-c",
        "import sys\nsys.stdout.write('{\"type\":\"ready\",\"protocolVersion\":1,\"supportedProtocolVersions\":[1]}\\n')\nsys.stdout.flush()\nfor _ in sys.stdin: pass\n",
    ]);
    let agent = AgentProcess::spawn(command, Default::default()).expect("spawn");
    let done = Completions::new();
    let mut pending = agent
        .submit_to::<SessionState>(get_state(), &done, 7)
        .expect("made");
    assert!(pending.try_take().is_none(), "no answer yet");
    assert!(matches!(
        pending.wait(Duration::from_millis(50)),
        Err(CallError::Timeout(t)) if t == Duration::from_millis(50)
    ));
    assert_eq!(done.try_next(), None);
    // The agent ends without answering: the call's tag comes, and its answer is the failure
    // the session's end gives every open request, as a blocked call gets.
    let status = Command::new("kill")
        .args(["-KILL", &agent.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    assert_eq!(done.next(WAIT), Some(7));
    let ended = pending.wait(WAIT);
    assert!(
        matches!(&ended, Err(CallError::Failed(f)) if f.error.contains("exited")),
        "{ended:?}"
    );
    // Taken once.
    assert!(matches!(pending.wait(WAIT), Err(CallError::Ended)));
    assert!(pending.is_taken());
}
