//! Sessions: loaded after a restart of the bridge (ACP-06), the session folder's checks,
//! listed, closed and resumed (ACP-25, ACP-26), forked and deleted (ACP-31, ACP-32), and the
//! agent that died between turns or in one (ACP-33).

use super::*;

/// ACP-06 through the official client, after a restart of the bridge: a session with a plan
/// and usage is made by one `musewire acp`, the bridge ends, a second one (same session
/// folder) loads it by id: the agent's session id is the ACP id, the obsolete plan is
/// cleared, then the latest plan and usage come back from history, `/status` shows them,
/// and no model turn is started (no message chunk but `/status`'s).
#[test]
fn acp_06_session_load_after_restarting_the_bridge_bundled_agent() {
    let sessions = scratch("acp-sdk-load");
    let args = ["--session-dir".as_ref(), sessions.as_os_str()];
    let Some(first) = Sdk::new("load-create").flags(&args).run() else {
        return;
    };
    let id = first["sessionId"]
        .as_str()
        .expect("a session id")
        .to_owned();
    assert!(
        sessions.join(format!("{id}.jsonl")).is_file(),
        "the agent keeps the session as <dir>/<id>.jsonl: {first:#}"
    );
    assert_eq!(
        first["initialize"]["agentCapabilities"]["loadSession"],
        true
    );
    let second = Sdk::new("load-resume")
        .flags(&args)
        .env("ACP_SESSION", &id)
        .run()
        .expect("the SDK was there a moment ago");
    // ACP-24: the load answers with the session's options.
    assert!(
        second["load"]["result"]["configOptions"].is_array(),
        "{second:#}"
    );
    let loaded = second["loadUpdates"].as_array().unwrap();
    let plans: Vec<&Value> = loaded
        .iter()
        .filter(|u| u["sessionUpdate"] == "plan")
        .collect();
    assert_eq!(plans.len(), 2, "cleared, then rebuilt: {second:#}");
    assert_eq!(plans[0]["entries"], json!([]));
    assert_eq!(
        plans[1]["entries"],
        json!([
            {"content": "A", "priority": "medium", "status": "in_progress"},
            {"content": "B", "priority": "medium", "status": "pending"}
        ])
    );
    // ACP-06: the conversation is replayed before the answer: the two prompts as user
    // chunks (and nothing else: no model turn), the todo call as a completed card.
    let said: Vec<&str> = loaded
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(said, ["todo A; B", "hello again"], "{second:#}");
    assert!(loaded
        .iter()
        .any(|u| u["sessionUpdate"] == "agent_message_chunk"));
    assert!(loaded
        .iter()
        .any(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed"));
    assert!(loaded
        .iter()
        .any(|u| u["_meta"]["muse/usage"]["cumulative"].is_object()));
    // ACP-02: get_state's window, so a standard usage_update.
    assert!(loaded
        .iter()
        .any(|u| u["sessionUpdate"] == "usage_update" && u["size"] == 1_000_000));
    let status = text_of(&second["status"], "agent_message_chunk");
    assert!(status.contains("plan size: 2 entries"), "{status}");
    assert!(status.contains("of 1000000 tokens"), "{status}");
    assert!(status.contains("last observed model: scripted"), "{status}");
}

/// ACP-06 over omp through `switch_session`: `musewire acp --session-dir DIR -- omp --mode
/// rpc` makes a session (omp keeps it as `DIR/<timestamp>_<id>.jsonl`, and that file name is
/// the ACP session id), the bridge ends, a second bridge loads it: the plan is cleared,
/// the conversation is replayed, usage and model come back from omp's history, no model turn
/// is started.
#[test]
fn acp_06_session_load_over_omp_rpc_after_restarting_the_bridge() {
    let Some(omp) = Live::omp("acp-omp-load") else {
        return;
    };
    let sessions = omp.dir.join("acp-sessions");
    let args = ["--session-dir".as_ref(), sessions.as_os_str()];
    let first = Sdk::over("omp-load-create", &omp)
        .flags(&args)
        .run()
        .expect("the SDK is there");
    assert_eq!(
        first["initialize"]["agentCapabilities"]["loadSession"],
        true
    );
    assert_eq!(first["echo"]["stopReason"], "end_turn", "{first:#}");
    let id = first["sessionId"]
        .as_str()
        .expect("a session id")
        .to_owned();
    assert!(
        sessions.join(format!("{id}.jsonl")).is_file(),
        "omp keeps the session as DIR/<ACP id>.jsonl: {first:#}"
    );
    let second = Sdk::over("load-resume", &omp)
        .flags(&args)
        .env("ACP_SESSION", &id)
        .run()
        .expect("the SDK was there a moment ago");
    // ACP-24: the load answers with the session's options.
    assert!(
        second["load"]["result"]["configOptions"].is_array(),
        "{second:#}"
    );
    let loaded = second["loadUpdates"].as_array().unwrap();
    assert_eq!(loaded[0]["sessionUpdate"], "plan", "{second:#}");
    assert_eq!(loaded[0]["entries"], json!([]));
    // ACP-06: omp's history replayed (the prompt as a user chunk, the scripted reply as an
    // agent chunk), as omp's own ACP mode does; no model turn.
    let said: Vec<&str> = loaded
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(said, ["[[text hello from the sdk]]"], "{second:#}");
    assert!(loaded
        .iter()
        .any(|u| u["sessionUpdate"] == "agent_message_chunk"));
    let status = text_of(&second["status"], "agent_message_chunk");
    assert!(
        status.contains("last observed model: fake-model"),
        "{status}"
    );
    assert!(!status.contains("root-session tokens: unknown"), "{status}");
}

/// `musewire acp`'s flags: `--max-inline-bytes` is for the bundled agent
/// only; the session folder is created private (0700); a symlink there is refused.
#[cfg(unix)]
#[test]
fn acp_06_cli_session_folder_is_private_and_flags_are_checked() {
    use std::os::unix::fs::PermissionsExt;
    use std::process::Stdio;
    let acp = |args: &[&std::ffi::OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_musewire"))
            .arg("acp")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("musewire runs")
    };
    let out = acp(&[
        "--max-inline-bytes".as_ref(),
        "5".as_ref(),
        "--".as_ref(),
        "sh".as_ref(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bundled agent only"));

    let dir = scratch("acp-cli-folder");
    let fresh = dir.join("a/b/sessions");
    let out = acp(&["--session-dir".as_ref(), fresh.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);

    let link = dir.join("link");
    std::os::unix::fs::symlink(&fresh, &link).unwrap();
    let out = acp(&["--session-dir".as_ref(), link.as_os_str()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("symlink is refused"));
}

/// ACP-26: the `sessions` scenario's list. Each of `titled` (the scenario's session name in
/// `out`, the title it must have) is listed once with that title and an RFC 3339 `updatedAt`,
/// newest first; the session never prompted is not; a list elsewhere is empty.
fn check_listed(out: &Value, titled: &[(&str, &str)]) {
    let listed = out["list"]["result"]["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("listed: {out:#}"));
    for (name, title) in titled {
        let id = out[*name]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: {out:#}"));
        let found: Vec<&Value> = listed.iter().filter(|s| s["sessionId"] == id).collect();
        assert_eq!(found.len(), 1, "{name} listed once: {out:#}");
        assert_eq!(found[0]["title"], *title, "{name}'s title: {out:#}");
    }
    let idle = out["idle"].as_str().expect("the idle session's id");
    assert!(
        listed.iter().all(|s| s["sessionId"] != idle),
        "a session never prompted is not listed: {out:#}"
    );
    let dates: Vec<&str> = listed
        .iter()
        .map(|s| {
            s["updatedAt"]
                .as_str()
                .filter(|t| t.ends_with('Z') && t.len() == "2026-12-01T10:00:00.000Z".len())
                .unwrap_or_else(|| panic!("updatedAt, RFC 3339: {s}"))
        })
        .collect();
    assert!(
        dates.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {dates:?}"
    );
    assert_eq!(
        out["listElsewhere"]["result"]["sessions"],
        json!([]),
        "{out:#}"
    );
}

/// ACP-25, ACP-26 through the official SDK client, bundled agent with a session folder: two
/// sessions listed (newest first, titled by their first prompt, dated; one opened and never
/// prompted not listed), one closed (its id unknown from then on),
/// the other resumed without a replay, loaded again while open (replayed), prompted after
/// each; a list elsewhere is empty and a foreign cursor invalid params.
#[test]
fn acp_25_26_sessions_listed_closed_resumed_and_reloaded_bundled_agent() {
    let sessions = scratch("acp-sdk-session-life");
    let Some(out) = Sdk::new("sessions").session_dir(&sessions).run() else {
        return;
    };
    let caps = &out["initialize"]["agentCapabilities"]["sessionCapabilities"];
    for cap in ["list", "close", "resume"] {
        assert!(caps[cap].is_object(), "{cap} advertised: {caps}");
    }
    for turn in ["promptA", "promptB", "afterResume", "afterReload"] {
        assert_eq!(out[turn]["stopReason"], "end_turn", "{turn}: {out:#}");
    }
    check_listed(&out, &[("a", "hello from a"), ("b", "hello from b")]);
    assert!(out["close"]["result"].is_object(), "{out:#}");
    assert_eq!(out["promptClosed"]["code"], -32002, "{out:#}");
    // The bridge answers a second close -32002 (the core tests see it); the SDK takes a
    // close's -32002 as success, as ACP recommends (the same end state).
    assert!(out["closeAgain"]["result"].is_object(), "{out:#}");
    assert!(out["resume"]["result"].is_object(), "{out:#}");
    let replayed = |updates: &Value| {
        updates
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["sessionUpdate"] == "user_message_chunk")
    };
    assert!(
        !replayed(&out["resumeUpdates"]),
        "resume replays nothing: {out:#}"
    );
    assert!(out["reload"]["result"].is_object(), "{out:#}");
    assert!(replayed(&out["reloadUpdates"]), "a load replays: {out:#}");
    let replay: String = out["reloadUpdates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(
        replay.contains("hello from a") && replay.contains("after resume"),
        "{replay:?}"
    );
    assert_eq!(out["badCursor"]["code"], -32602, "{out:#}");
    assert_eq!(out["bridgeExit"], 0);
    let _ = std::fs::remove_dir_all(&sessions);
}

/// ACP-25, ACP-26 over omp 18.2.3 (`musewire acp --session-dir DIR -- omp --mode rpc`): its
/// session files in our folder are listed, each titled by the session's name where omp set
/// one, else by its first prompt; the session opened and never prompted is not listed; the
/// rest of the scenario (close, resume, load while open) as over the bundled agent.
#[test]
fn acp_26_sessions_listed_with_titles_over_omp_rpc() {
    let Some(omp) = Live::omp("acp-omp-session-list") else {
        return;
    };
    let sessions = omp.dir.join("sessions");
    let out = Sdk::over("sessions", &omp)
        .session_dir(&sessions)
        .run()
        .expect("the SDK is there");
    for turn in ["promptA", "promptB", "afterResume", "afterReload"] {
        assert_eq!(out[turn]["stopReason"], "end_turn", "{turn}: {out:#}");
    }
    check_listed(&out, &[("a", "hello from a"), ("b", "hello from b")]);
    assert!(out["resume"]["result"].is_object(), "{out:#}");
    assert!(out["reload"]["result"].is_object(), "{out:#}");
    assert_eq!(out["badCursor"]["code"], -32602, "{out:#}");
    assert_eq!(out["bridgeExit"], 0);
}

/// The session ids a `session/list` answer holds.
fn listed_ids(list: &Value) -> Vec<String> {
    list["result"]["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {list}"))
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap().to_owned())
        .collect()
}

/// What the `fork` scenario shows of ACP-31 and ACP-32 over any agent: each step answered,
/// the fork's history the original's and its own, the original's without the fork's, the
/// deleted fork neither listed nor loadable, the original still there.
fn check_fork_and_delete(out: &Value, sessions: &Path) {
    let caps = &out["initialize"]["agentCapabilities"]["sessionCapabilities"];
    assert!(
        caps["fork"].is_object() && caps["delete"].is_object(),
        "{caps}"
    );
    let original = out["original"].as_str().unwrap();
    let fork = out["fork"]["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("forked: {out:#}"));
    assert_ne!(fork, original);
    assert!(out["fork"]["result"]["configOptions"].is_array(), "{out:#}");
    for turn in ["promptA", "promptB", "promptC", "afterDelete"] {
        assert_eq!(out[turn]["stopReason"], "end_turn", "{turn}: {out:#}");
    }
    assert!(out["loadFork"]["result"].is_object(), "{out:#}");
    assert!(out["loadOriginal"]["result"].is_object(), "{out:#}");
    let said = |key: &str| -> String {
        out[key]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|")
    };
    let (fork_said, original_said) = (said("forkSaid"), said("originalSaid"));
    assert!(
        fork_said.contains("alpha") && fork_said.contains("beta") && !fork_said.contains("gamma"),
        "the fork's history: {fork_said:?}"
    );
    assert!(
        original_said.contains("alpha")
            && original_said.contains("gamma")
            && !original_said.contains("beta"),
        "the original's history: {original_said:?}"
    );
    // The copy is the store's: private, beside the original.
    let copy = std::fs::read_dir(sessions)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .collect::<Vec<_>>();
    assert!(
        !copy.contains(&format!("{fork}.jsonl")),
        "the deleted fork's file is gone: {copy:?}"
    );
    let before = listed_ids(&out["listBefore"]);
    assert!(
        before.iter().any(|s| s == fork) && before.iter().any(|s| s == original),
        "{before:?}"
    );
    assert_eq!(out["delete"]["result"], json!({}), "{out:#}");
    let after = listed_ids(&out["listAfter"]);
    assert!(
        !after.iter().any(|s| s == fork) && after.iter().any(|s| s == original),
        "{after:?}"
    );
    assert_eq!(out["loadDeleted"]["code"], -32002, "{out:#}");
    // The bridge answers a second delete -32002 (the core tests see it); the SDK takes it
    // as success, as it does a close's (the same end state).
    assert!(
        out["deleteAgain"]["result"].is_object() || out["deleteAgain"]["code"] == -32002,
        "{out:#}"
    );
    assert_eq!(out["bridgeExit"], 0);
}

/// ACP-31, ACP-32 through the official SDK client, bundled agent: A in the original, a
/// fork, B in the fork, C in the original; each loaded back shows its own history (the
/// fork's A and B, the original's A and C); the fork deleted is no longer listed nor
/// loadable, its file gone.
#[test]
fn acp_31_32_fork_carries_the_history_and_delete_removes_it_bundled_agent() {
    let sessions = scratch("acp-sdk-fork");
    let Some(out) = Sdk::new("fork").session_dir(&sessions).run() else {
        return;
    };
    check_fork_and_delete(&out, &sessions);
    let _ = std::fs::remove_dir_all(&sessions);
}

/// ACP-31, ACP-32 over omp 18.2.3 (`musewire acp --session-dir DIR -- omp --mode rpc`), the
/// scenario as over the bundled agent; and what the model server was sent: the fork's turn
/// carries the original's first prompt, the original's next turn does not carry the fork's.
#[test]
fn acp_31_32_fork_carries_the_history_and_delete_removes_it_over_omp_rpc() {
    let Some(omp) = Live::omp("acp-omp-fork") else {
        return;
    };
    let sessions = omp.dir.join("sessions");
    let out = Sdk::over("fork", &omp)
        .session_dir(&sessions)
        .env("ACP_PROMPT_A", "[[text alpha]]")
        .env("ACP_PROMPT_B", "[[text beta]]")
        .env("ACP_PROMPT_C", "[[text gamma]]")
        .run()
        .expect("the SDK is there");
    check_fork_and_delete(&out, &sessions);
    let sent: Vec<String> = omp
        .server
        .requests()
        .iter()
        .map(|r| r.to_string())
        .collect();
    let beta = sent
        .iter()
        .find(|r| r.contains("[[text beta]]"))
        .expect("the fork's turn reached the model");
    assert!(beta.contains("[[text alpha]]"), "{beta}");
    let gamma = sent
        .iter()
        .find(|r| r.contains("[[text gamma]]"))
        .expect("the original's turn reached the model");
    assert!(
        gamma.contains("[[text alpha]]") && !gamma.contains("[[text beta]]"),
        "{gamma}"
    );
}

/// ACP-33 with the bundled agent, as an editor meets it: a turn, then a turn whose command
/// kills the agent (`kill -9` of the shell's parent: the turn fails with the error), then a
/// prompt: a new agent on the same session file runs it, after the restart notice.
#[test]
fn acp_33_the_prompt_after_the_agent_died_runs_in_a_new_agent_bundled_agent() {
    use musewire_core::acp::RESTARTED_NOTICE;
    let dir = scratch("acp-sdk-restart");
    let sessions = dir.join("sessions");
    let file = dir.join("prompts.json");
    std::fs::write(
        &file,
        json!(["hello one", "bash kill -9 $PPID", "hello two"]).to_string(),
    )
    .unwrap();
    let Some(out) = Sdk::new("turns")
        .session_dir(&sessions)
        .env("ACP_PROMPTS_FILE", &file)
        .run()
    else {
        return;
    };
    let first = turn_of(&out, 0);
    assert_eq!(first["stopReason"], "end_turn", "{out:#}");
    assert!(text_of(first, "agent_message_chunk").contains("hello one"));
    let killed = turn_of(&out, 1);
    assert!(
        killed["error"].is_object(),
        "the turn the agent died in fails: {out:#}"
    );
    let after = turn_of(&out, 2);
    assert_eq!(after["stopReason"], "end_turn", "{out:#}");
    let text = text_of(after, "agent_message_chunk");
    assert!(text.starts_with(RESTARTED_NOTICE), "{text:?}");
    assert!(text.contains("hello two"), "{text:?}");
    assert_eq!(out["bridgeExit"], 0, "{out:#}");
}

/// ACP-33 over a real agent (`musewire acp --session-dir DIR -- AGENT --mode rpc`), as issue
/// 34 asks: a turn; the agent's process group killed between turns (SIGKILL; the agent reaped
/// and its exit taken in by the bridge before the next prompt); a prompt: it runs in a new agent on the same session file, after
/// the restart notice, and the model is sent the first prompt with it (the history).
fn check_restart_between_turns_over(live: &Live, what: &str) {
    use musewire_core::acp::RESTARTED_NOTICE;
    let sessions = live.dir.join("sessions");
    let file = live.dir.join("prompts.json");
    std::fs::write(
        &file,
        json!(["[[text alpha]]", {"kill": true}, "[[text beta]]"]).to_string(),
    )
    .unwrap();
    let out = Sdk::over("turns", live)
        .session_dir(&sessions)
        .env("ACP_PROMPTS_FILE", &file)
        .run()
        .expect("the SDK is there");
    assert!(out["sessionId"].is_string(), "{what}: session/new: {out:#}");
    let first = turn_of(&out, 0);
    assert_eq!(first["stopReason"], "end_turn", "{what}: {out:#}");
    assert_eq!(
        text_of(first, "agent_message_chunk").trim(),
        "alpha",
        "{what}"
    );
    let killed = &turn_of(&out, 1)["killed"];
    assert!(killed["pid"].is_u64(), "{what}: one agent to kill: {out:#}");
    assert_eq!(killed["gone"], true, "{what}: the agent exited: {out:#}");
    assert_eq!(
        killed["exitTakenIn"], true,
        "{what}: the bridge took the exit in before the next prompt: {out:#}"
    );
    let after = turn_of(&out, 2);
    assert_eq!(after["stopReason"], "end_turn", "{what}: {out:#}");
    let text = text_of(after, "agent_message_chunk");
    let rest = text
        .strip_prefix(RESTARTED_NOTICE)
        .and_then(|rest| rest.strip_prefix('\n'))
        .unwrap_or_else(|| panic!("{what}: the notice on a line first: {text:?}"));
    assert_eq!(rest.trim(), "beta", "{what}");
    let sent: Vec<String> = live
        .server
        .requests()
        .iter()
        .map(|r| r.to_string())
        .collect();
    let beta = sent
        .iter()
        .find(|r| r.contains("[[text beta]]"))
        .unwrap_or_else(|| panic!("{what}: the second turn reached the model"));
    assert!(
        beta.contains("[[text alpha]]"),
        "{what}: the history: {beta}"
    );
    assert_eq!(out["bridgeExit"], 0, "{what}: {out:#}");
}

/// ACP-33 over omp 18.2.3's RPC mode: the agent killed between turns, the next prompt
/// answered in a new agent with the history.
#[test]
fn acp_33_the_agent_killed_between_turns_comes_back_with_the_history_over_omp_rpc() {
    let Some(omp) = Live::omp("acp-omp-restart") else {
        return;
    };
    check_restart_between_turns_over(&omp, "omp");
}

/// ACP-33 over each pinned `pi --mode rpc`, as over omp.
#[test]
fn acp_33_the_agent_killed_between_turns_comes_back_with_the_history_over_each_pi_rpc() {
    each_at_once(&Pi::ALL, |&pi| {
        let Some(live) = Live::pi(pi, &format!("acp-{}-restart", pi.name())) else {
            return;
        };
        check_restart_between_turns_over(&live, &format!("pi {}", pi.version()));
    });
}
