//! A live test of the bundled agent's spill and `read_output`: `musewire agent --mode rpc
//! --max-inline-bytes 4096 --spill-dir DIR` runs a `bash` tool that prints about 10 MB; the
//! model-facing result (`tool_execution_end` and the history) is a preview within the cap with
//! the exact notice and `details.storedOutput` (SPILL-03, OUT-02); the whole output is read
//! back page by page with `read_output` through the reader walk and is the command's output
//! byte for byte (OUT-04, OUT-10); the spill files are private (SPILL-06). Then the agent is
//! restarted on the same `--session-dir` and `--spill-dir`: the reference is unknown to it
//! until `switch_session` loads the session, whose history names the stored output, and the
//! whole output is read again (OUT-08); after a `new_session` the old reference stays readable.

mod process;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use musewire_core::output::{ReaderWalk, MAX_READ_BYTES, TEXT_MEDIA_TYPE};
use musewire_wire::output::{OutputRef, ReadResult};
use process::AgentProcess;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The cap the agent is started with.
const CAP: usize = 4096;

/// About 10 MB of lines, each with a two- and a three-byte character, so pages end inside
/// characters (OUT-05).
const COMMAND: &str = "seq 1 800000 | sed 's/$/ é€/'";

/// The reference in a `storedOutput`.
fn walk_ref(stored: &Value) -> OutputRef {
    serde_json::from_value(stored["outputRef"].clone()).unwrap()
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

/// Checks a spilled text: `head + "\n…\n" + tail`, within the cap, then the exact notice;
/// returns the locator.
fn check_preview(text: &str, output: &str) -> String {
    let (preview, notice) = text.split_once("\n\n(Omitted ").expect("a spill notice");
    assert!(
        preview.len() <= CAP,
        "the preview is within the cap (SPILL-03)"
    );
    let (head, tail) = preview.split_once("\n…\n").expect("head and tail");
    assert!(output.starts_with(head) && output.ends_with(tail));
    let omitted = output.len() - head.len() - tail.len();
    let prefix = format!("{omitted} bytes. Full formatted result stored at: ");
    let hint = ". Use read with offset/limit, or grep this path to search within it.)";
    let locator = notice
        .strip_prefix(&prefix)
        .and_then(|rest| rest.strip_suffix(hint))
        .unwrap_or_else(|| panic!("the exact notice (SPILL-03), not {notice:?}"));
    locator.to_owned()
}

#[test]
fn spill_03_06_out_04_08_10_a_10_mb_bash_output_is_spilled_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let spill_dir = dir.path().join("spill");
    let cap = CAP.to_string();
    let session_dir = dir.path().join("sessions");
    let args = [
        "--max-inline-bytes",
        &cap,
        "--spill-dir",
        spill_dir.to_str().unwrap(),
        "--session-dir",
        session_dir.to_str().unwrap(),
    ];
    let mut agent = AgentProcess::spawn(&args);
    let expected = Command::new("sh").args(["-c", COMMAND]).output().unwrap();
    assert!(expected.status.success());
    let expected = String::from_utf8(expected.stdout).unwrap();
    assert!(expected.len() > 10_000_000, "{}", expected.len());

    // OUT-10: the ready frame offers read_output.
    let ready = agent.wait_frame(|f| f["type"] == "ready");
    assert_eq!(
        ready["readOutput"],
        json!({"version": 1, "maxLengthBytes": 1048576})
    );
    // A 1 MiB page's response is over v1's 1 MiB line limit (FRAME-12): v2 chunks it.
    agent.send(&json!({"id": "v2", "type": "negotiate_protocol", "protocolVersion": 2}));
    let negotiated = agent.wait_frame(|f| f["id"] == "v2");
    assert_eq!(negotiated["success"], true);
    agent.send(&json!({"id": "state", "type": "get_state"}));
    let state = agent.wait_frame(|f| f["id"] == "state");
    let session = state["data"]["sessionId"].as_str().unwrap().to_owned();
    let session_file = state["data"]["sessionFile"].as_str().unwrap().to_owned();

    agent.send(&json!({"id": "p", "type": "prompt", "message": format!("bash {COMMAND}")}));
    let end = agent.wait_frame(|f| f["type"] == "tool_execution_end");
    agent.wait_frame(|f| f["type"] == "agent_end");
    let call_id = end["toolCallId"].as_str().unwrap().to_owned();
    assert_eq!(end["isError"], false);
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    let locator = check_preview(text, &expected);
    let stored = &end["result"]["details"]["storedOutput"];
    assert_eq!(end["result"]["details"]["exitCode"], 0);
    assert_eq!(stored["sessionId"], session.as_str());
    assert_eq!(stored["itemId"], call_id.as_str());
    assert_eq!(stored["byteLen"], expected.len() as u64);
    assert_eq!(stored["mediaType"], TEXT_MEDIA_TYPE);
    assert_eq!(stored["availability"], "available");

    // The history holds the same model-facing result (OUT-02, OUT-08's source).
    agent.send(&json!({"id": "m", "type": "get_messages"}));
    let messages = agent.wait_frame(|f| f["id"] == "m");
    let tool_result = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "toolResult")
        .unwrap()
        .clone();
    assert_eq!(tool_result["content"], end["result"]["content"]);
    assert_eq!(tool_result["details"], end["result"]["details"]);
    assert!(
        !messages
            .to_string()
            .contains(&expected[expected.len() - 100_000..]),
        "the whole output never reaches the history"
    );

    // SPILL-06: the file holds the output, private, under private directories.
    let file = Path::new(&locator);
    assert!(file.starts_with(&spill_dir), "{locator}");
    assert_eq!(std::fs::read(file).unwrap(), expected.as_bytes());
    assert_eq!(mode(file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    assert_eq!(mode(&spill_dir), 0o700);

    // OUT-04, OUT-10: the reader walk, page by page, advancing by the returned byteLen.
    let whole = read_whole(&mut agent, &session, &call_id, stored, "first");
    assert_eq!(whole.len(), expected.len());
    assert_eq!(
        Sha256::digest(&whole),
        Sha256::digest(expected.as_bytes()),
        "the output read back is the command's, byte for byte"
    );

    // OUT-10: a read is answered while a run streams (a shell command runs), starting nothing.
    agent.send(&json!({"id": "p2", "type": "prompt", "message": "bash sleep 1; echo slept"}));
    agent.wait_frame(|f| f["type"] == "tool_execution_start");
    let mut command = ReaderWalk::new(&session, &call_id, walk_ref(stored), 6)
        .unwrap()
        .next_params()
        .unwrap()
        .to_value();
    command["id"] = Value::from("during");
    command["type"] = Value::from("read_output");
    agent.send(&command);
    let during = agent.wait_frame(|f| f["id"] == "during");
    // OUT-05: six bytes end inside `€`: the page stops before it.
    assert_eq!(during["data"]["content"], "1 é");
    assert_eq!(during["data"]["byteLen"], 4);
    agent.wait_frame(|f| f["type"] == "agent_end");
    let position = |wanted: &dyn Fn(&Value) -> bool| agent.frames().iter().position(wanted);
    assert!(
        position(&|f| f["id"] == "during")
            < position(
                &|f| f["type"] == "tool_execution_end" && f["toolCallId"] != call_id.as_str()
            ),
        "answered before the running tool ended"
    );

    // OUT-07 through the process: a path is refused with its code, nothing read.
    agent.send(
        &json!({"id": "bad", "type": "read_output", "sessionId": session,
        "itemId": call_id, "outputRef": locator, "offsetBytes": 0}),
    );
    let bad = agent.wait_frame(|f| f["id"] == "bad");
    assert_eq!(bad["success"], false);
    assert_eq!(bad["code"], "path_not_reference");

    agent.close_stdin();
    assert!(agent.wait_exit(process::WAIT).success());

    // OUT-08: a restarted agent on the same folders. Before the session is loaded the
    // reference is unknown to it; `switch_session` replays the history, which names it.
    let mut agent = AgentProcess::spawn(&args);
    agent.wait_frame(|f| f["type"] == "ready");
    agent.send(&json!({"id": "v2", "type": "negotiate_protocol", "protocolVersion": 2}));
    agent.wait_frame(|f| f["id"] == "v2");
    let mut first = ReaderWalk::new(&session, &call_id, walk_ref(stored), 64)
        .unwrap()
        .next_params()
        .unwrap()
        .to_value();
    first["id"] = Value::from("before");
    first["type"] = Value::from("read_output");
    agent.send(&first);
    let before = agent.wait_frame(|f| f["id"] == "before");
    assert_eq!(before["success"], false);
    assert_eq!(before["code"], "unknown", "{before}");
    agent.send(&json!({"id": "sw", "type": "switch_session", "sessionPath": session_file}));
    let switched = agent.wait_frame(|f| f["id"] == "sw");
    assert_eq!(switched["success"], true, "{switched}");
    let again = read_whole(&mut agent, &session, &call_id, stored, "again");
    assert_eq!(
        Sha256::digest(&again),
        Sha256::digest(expected.as_bytes()),
        "read again after a restart, byte for byte (OUT-08)"
    );
    // Old references stay readable after a new session.
    agent.send(&json!({"id": "new", "type": "new_session"}));
    assert_eq!(agent.wait_frame(|f| f["id"] == "new")["success"], true);
    first["id"] = Value::from("after-new");
    agent.send(&first);
    let after = agent.wait_frame(|f| f["id"] == "after-new");
    assert_eq!(after["success"], true, "{after}");
    assert_eq!(after["data"]["content"].as_str(), Some(&expected[..64]));
    agent.close_stdin();
    assert!(agent.wait_exit(process::WAIT).success());
}

/// Reads a stored output whole with the reader walk, in 1 MiB pages (OUT-04: advancing by
/// the returned byteLen until eof); request ids start with `tag`.
fn read_whole(
    agent: &mut AgentProcess,
    session: &str,
    call_id: &str,
    stored: &Value,
    tag: &str,
) -> Vec<u8> {
    let mut walk = ReaderWalk::new(session, call_id, walk_ref(stored), MAX_READ_BYTES).unwrap();
    let mut whole = Vec::new();
    let mut pages = 0;
    while let Some(params) = walk.next_params() {
        pages += 1;
        let id = format!("{tag}-{pages}");
        let mut command = params.to_value();
        command["id"] = Value::from(id.as_str());
        command["type"] = Value::from("read_output");
        agent.send(&command);
        let response = agent.wait_frame(|f| f["id"] == id.as_str());
        assert_eq!(response["success"], true, "{response}");
        let page: ReadResult = serde_json::from_value(response["data"].clone()).unwrap();
        whole.extend(walk.handle(&page).unwrap());
        assert!(pages < 100, "the walk ends");
    }
    let byte_len = stored["byteLen"].as_u64().unwrap() as usize;
    assert_eq!(pages, byte_len.div_ceil(MAX_READ_BYTES as usize));
    whole
}

#[test]
fn out_10_without_max_inline_bytes_nothing_is_offered_or_spilled() {
    let mut agent = AgentProcess::spawn(&[]);
    let ready = agent.wait_frame(|f| f["type"] == "ready");
    assert!(ready.get("readOutput").is_none(), "{ready}");
    agent.send(&json!({"id": "p", "type": "prompt", "message": "bash seq 1 3000"}));
    let end = agent.wait_frame(|f| f["type"] == "tool_execution_end");
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.ends_with("2999\n3000\n"),
        "SPILL-01: the result is whole"
    );
    assert!(end["result"]["details"].get("storedOutput").is_none());
    agent.send(
        &json!({"id": "r", "type": "read_output", "sessionId": "s", "itemId": "i",
        "outputRef": "out-0000000000000000", "offsetBytes": 0}),
    );
    let answer = agent.wait_frame(|f| f["type"] == "response" && f["command"] == "read_output");
    assert_eq!(answer["error"], "Unknown command: read_output");
    agent.close_stdin();
    assert!(agent.wait_exit(process::WAIT).success());
}

/// OUT-08, SPILL-06: with --session-dir and no --spill-dir the outputs are kept in the
/// session folder's `spill` directory, so a restarted agent on the same folder serves them
/// once `switch_session` loads the session; a file removed meanwhile reads as expired.
#[test]
fn out_07_08_spill_06_without_spill_dir_outputs_live_in_the_session_folder() {
    let dir = tempfile::tempdir().unwrap();
    let session_dir = dir.path().join("sessions");
    let args = [
        "--max-inline-bytes",
        "100",
        "--session-dir",
        session_dir.to_str().unwrap(),
    ];
    let mut agent = AgentProcess::spawn(&args);
    agent.send(&json!({"id": "state", "type": "get_state"}));
    let state = agent.wait_frame(|f| f["id"] == "state");
    let session = state["data"]["sessionId"].as_str().unwrap().to_owned();
    let session_file = state["data"]["sessionFile"].as_str().unwrap().to_owned();
    agent.send(&json!({"id": "p", "type": "prompt", "message": "bash seq 1 3000"}));
    let end = agent.wait_frame(|f| f["type"] == "tool_execution_end");
    agent.wait_frame(|f| f["type"] == "agent_end");
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    let stored = end["result"]["details"]["storedOutput"].clone();
    let call_id = end["toolCallId"].as_str().unwrap().to_owned();
    let (_, notice) = text
        .split_once("Full formatted result stored at: ")
        .unwrap();
    let locator = notice.split(". Use read").next().unwrap().to_owned();
    assert!(
        Path::new(&locator).starts_with(session_dir.join("spill")),
        "{locator}"
    );
    agent.close_stdin();
    assert!(agent.wait_exit(process::WAIT).success());

    let read = |agent: &mut AgentProcess, id: &str| {
        let mut command = ReaderWalk::new(&session, &call_id, walk_ref(&stored), 4096)
            .unwrap()
            .next_params()
            .unwrap()
            .to_value();
        command["id"] = Value::from(id);
        command["type"] = Value::from("read_output");
        agent.send(&command);
        agent.wait_frame(|f| f["id"] == id)
    };
    let mut agent = AgentProcess::spawn(&args);
    agent.send(&json!({"id": "sw", "type": "switch_session", "sessionPath": session_file}));
    assert_eq!(agent.wait_frame(|f| f["id"] == "sw")["success"], true);
    let page = read(&mut agent, "r1");
    assert_eq!(page["success"], true, "{page}");
    let expected: String = (1..=3000).map(|n| format!("{n}\n")).collect();
    assert_eq!(page["data"]["content"].as_str(), Some(&expected[..4096]));
    // OUT-07: the file removed, the reference the history names has expired.
    std::fs::remove_file(&locator).unwrap();
    let gone = read(&mut agent, "r2");
    assert_eq!(gone["success"], false);
    assert_eq!(gone["code"], "expired", "{gone}");
    agent.close_stdin();
    assert!(agent.wait_exit(process::WAIT).success());
}
