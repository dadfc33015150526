//! Interop: the reference agent's own TypeScript client, `RpcClient` of oh-my-pi 18.2.3 run by
//! the pinned bun (conformance/reference/interop.ts), drives `musewire agent`: start and
//! automatic v2 negotiation (FRAME-03..05), prompts to the end of the turn (CALL-03, CALL-09),
//! a host tool it registers and our model calls (HOST-01, HOST-02), `bash` over 1 MiB
//! (FRAME-11) and `abortBash` (CALL-05), the paged `getMessages()` drain over a history larger
//! than 1 MiB (PAGE-01..07), a failure for an unsupported command (CALL-08) and `newSession`.
//!
//! Needs the peers (`bash conformance/peers/install.sh`). Without them the test fails,
//! unless `MUSEWIRE_SKIP_PEERS=1` says to skip (`musewire_live::peers::missing`).

use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bun() -> Option<PathBuf> {
    let bun = repo_root().join("conformance/peers/node_modules/.bin/bun");
    if bun.exists() {
        return Some(bun);
    }
    musewire_live::peers::missing(&bun.display().to_string());
    None
}

#[test]
fn frame_03_04_05_11_call_03_05_08_host_01_02_page_07_the_reference_client_drives_musewire_agent() {
    let Some(bun) = bun() else { return };
    let out = Command::new(bun)
        .arg(repo_root().join("conformance/reference/interop.ts"))
        .arg(env!("CARGO_BIN_EXE_musewire"))
        .output()
        .expect("bun runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "interop.ts failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().expect("a summary line");
    let summary: Value = serde_json::from_str(line).expect("the summary is JSON");
    assert_eq!(summary["errors"], json!({}), "{summary:#}");
    assert_eq!(summary["start"], true);
    assert_eq!(summary["state"]["model"]["id"], "interop-model");
    assert_eq!(summary["state"]["model"]["provider"], "interop-provider");
    let echo = &summary["echo"];
    assert_eq!(echo["types"][0], "agent_start");
    assert_eq!(
        echo["types"].as_array().unwrap().last().unwrap(),
        "agent_end"
    );
    assert_eq!(
        echo["textDeltas"],
        json!(["hello ", "from ", "the ", "reference ", "client"])
    );
    let host = &summary["hostTool"];
    assert_eq!(host["hostCalls"], json!([{"q": "musewire"}]));
    assert_eq!(host["lastText"], "lookup returned: definition of musewire");
    assert!(host["types"]
        .as_array()
        .unwrap()
        .contains(&json!("tool_execution_update")));
    assert_eq!(
        summary["todo"]["todoPhases"][0]["tasks"][1]["content"],
        "two"
    );
    // 1.2 MB in one response: only v2 chunking carries it (v1 would refuse it, FRAME-12).
    assert_eq!(
        summary["bigBash"],
        json!({"outputBytes": 1_200_000, "exitCode": 0, "cancelled": false})
    );
    assert_eq!(
        summary["abortBash"],
        json!({"output": "started\n", "cancelled": true, "exitCode": null, "fast": true})
    );
    let messages = &summary["messages"];
    assert_eq!(messages["count"], messages["messageCount"]);
    assert_eq!(messages["count"], 14);
    assert!(messages["serializedBytes"].as_u64().unwrap() > 1 << 20);
    assert_eq!(messages["largestBashOutput"], 1_200_000);
    assert_eq!(
        summary["page"],
        json!({"count": 3, "total": 14, "hasNext": true})
    );
    assert_eq!(
        summary["unsupported"],
        "musewire agent does not support the compact command"
    );
    assert_eq!(
        summary["newSession"],
        json!({"cancelled": false, "sessionId": "session-2", "messageCount": 0})
    );
}

/// The same session through `musewire tap`: the reference client talks to the tap as if it were
/// the agent, and the tap's recording replays through the core with no mismatch.
#[test]
fn the_reference_client_through_musewire_tap_records_a_session_that_replays() {
    let Some(bun) = bun() else { return };
    let dir = std::env::temp_dir().join(format!("musewire-interop-tap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let transcript = dir.join("tap.jsonl");
    let me = env!("CARGO_BIN_EXE_musewire");
    let command = json!([me, "tap", "-o", transcript, "--", me, "agent"]);
    let out = Command::new(bun)
        .arg(repo_root().join("conformance/reference/interop.ts"))
        .arg(me)
        .env("INTEROP_COMMAND", command.to_string())
        .output()
        .expect("bun runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "interop.ts failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value =
        serde_json::from_str(stdout.lines().last().expect("a summary line")).unwrap();
    assert_eq!(summary["errors"], json!({}), "{summary:#}");
    let replay = Command::new(me)
        .arg("replay")
        .arg(&transcript)
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stdout)
    );
    let steps = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .count();
    assert!(steps > 20, "a whole session was recorded ({steps} lines)");
}
