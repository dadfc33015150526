//! What a turn shows the editor, over the bundled agent, omp and each pi: text, thought, tool
//! cards on one call id and plans (ACP-01..05, ACP-07); answers and thoughts of 100 KB whole,
//! a tool output cut (ACP-05); a command's output streamed onto its card, as text or a
//! terminal (ACP-29, ACP-30); a subagent's card (ACP-37); a stored output read back page by
//! page (OUT-01..07); and omp's own ACP mode side by side.

use super::*;

#[test]
fn acp_01_03_04_05_07_the_official_sdk_client_drives_musewire_acp() {
    let sessions = scratch("acp-sdk-sessions");
    let Some(out) = Sdk::new("bundled").session_dir(&sessions).run() else {
        return;
    };

    // initialize: protocol version 1, our name.
    assert_eq!(out["initialize"]["protocolVersion"], 1, "{out:#}");
    assert_eq!(out["initialize"]["agentInfo"]["name"], "musewire");
    assert!(out["sessionId"].as_str().is_some_and(|s| !s.is_empty()));

    // A prompt streams the echo as agent_message_chunk and ends with end_turn.
    assert_eq!(out["echo"]["stopReason"], "end_turn");
    assert!(kinds(&out["echo"])
        .iter()
        .all(|k| k == "agent_message_chunk" || k == "usage_update" || k == "session_info_update"));
    // ACP-02: the bundled agent reports its window, so the turn ends with a standard
    // usage_update (no cost).
    let usage: Vec<&Value> = out["echo"]["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == "usage_update")
        .collect();
    assert_eq!(usage.len(), 1, "{out:#}");
    assert_eq!(usage[0]["size"], 1_000_000);
    assert!(usage[0]["used"].is_u64() && usage[0].get("cost").is_none());
    assert_eq!(
        text_of(&out["echo"], "agent_message_chunk"),
        "hello from the sdk"
    );

    // ACP-04: thinking deltas are thought chunks, then the text.
    assert_eq!(out["think"]["stopReason"], "end_turn");
    assert_eq!(text_of(&out["think"], "agent_thought_chunk"), "about it");
    assert_eq!(text_of(&out["think"], "agent_message_chunk"), "about it");

    // ACP-05: tool_call then tool_call_update on the same id, the output as content.
    let bash = out["bash"]["updates"].as_array().unwrap();
    let call = bash
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .expect("a tool_call");
    // The last update closes the card (ACP-19: the ones before it describe the call as its
    // arguments complete, then run it).
    let done = bash
        .iter()
        .rfind(|u| u["sessionUpdate"] == "tool_call_update")
        .expect("an update");
    assert_eq!(call["toolCallId"], done["toolCallId"]);
    assert_eq!(call["kind"], "execute");
    assert_eq!(done["status"], "completed");
    assert_eq!(done["content"][0]["content"]["text"], "hi\n");

    // ACP-03: the todo tool gives the whole plan.
    let plan = out["todo"]["updates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["sessionUpdate"] == "plan")
        .expect("a plan");
    assert_eq!(
        plan["entries"],
        json!([
            {"content": "A", "priority": "medium", "status": "in_progress"},
            {"content": "B", "priority": "medium", "status": "pending"}
        ])
    );

    // ACP-01: /status is advertised and answered locally: the text after it is not run.
    assert_eq!(out["commands"][0], "status", "{out:#}");
    assert_eq!(out["status"]["stopReason"], "end_turn");
    assert_eq!(kinds(&out["status"]), ["agent_message_chunk"]);
    let status = text_of(&out["status"], "agent_message_chunk");
    assert!(status.contains("plan size: 2 entries"), "{status}");
    assert!(status.contains("approval policy: unknown"), "{status}");
    assert!(!status.contains("not-run"), "{status}");

    // ACP-07: an unknown method is -32601.
    assert_eq!(out["unknown"]["code"], -32601, "{:#}", out["unknown"]);

    // A cancelled long turn ends cancelled, well before the command would have.
    assert_eq!(
        out["cancel"]["stopReason"], "cancelled",
        "{:#}",
        out["cancel"]
    );
    assert!(out["cancel"]["ms"].as_u64().unwrap() < 4000);
    let cancel = out["cancel"]["updates"].as_array().unwrap();
    assert_eq!(cancel[0]["sessionUpdate"], "tool_call");
    // Every tool update goes to the one call id; the turn's end adds its usage_update and
    // its updatedAt (ACP-26).
    assert!(cancel
        .iter()
        .filter(
            |u| u["sessionUpdate"] != "usage_update" && u["sessionUpdate"] != "session_info_update"
        )
        .all(|u| u["toolCallId"] == cancel[0]["toolCallId"]));

    // The bridge ends when the editor closes its input.
    assert_eq!(out["bridgeExit"], 0);
}

/// The `omp` scenario through `musewire acp -- omp --mode rpc`, run once for the two tests
/// that read it (ACP-04, ACP-05 and the side by side with omp's own ACP mode): one omp
/// start-up, not two. `None` when the peers are missing and `MUSEWIRE_SKIP_PEERS=1`.
fn omp_scenario_through_musewire() -> Option<&'static Value> {
    static RUN: OnceLock<Option<Value>> = OnceLock::new();
    RUN.get_or_init(|| {
        let omp = Live::omp("acp-omp-rpc")?;
        Some(Sdk::over("omp", &omp).run().expect("the SDK is there"))
    })
    .as_ref()
}

#[test]
fn acp_04_05_the_official_sdk_client_drives_musewire_acp_over_omp_rpc() {
    let Some(out) = omp_scenario_through_musewire() else {
        return;
    };
    assert_eq!(out["initialize"]["protocolVersion"], 1, "{out:#}");
    assert_eq!(out["echo"]["stopReason"], "end_turn", "{out:#}");
    assert_eq!(
        text_of(&out["echo"], "agent_message_chunk"),
        "hello from the sdk"
    );
    // ACP-04: omp's reasoning deltas become thought chunks.
    assert_eq!(
        text_of(&out["think"], "agent_thought_chunk").trim(),
        "about it"
    );
    assert_eq!(text_of(&out["think"], "agent_message_chunk").trim(), "done");
    // ACP-05: one id from tool_call to its completion.
    let bash = out["bash"]["updates"].as_array().unwrap();
    let call = bash
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .expect("a tool_call");
    let updates: Vec<&Value> = bash
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update")
        .collect();
    assert!(!updates.is_empty(), "{out:#}");
    assert!(updates
        .iter()
        .all(|u| u["toolCallId"] == call["toolCallId"]));
    assert_eq!(updates.last().unwrap()["status"], "completed");
    assert!(serde_json::to_string(updates.last().unwrap())
        .unwrap()
        .contains("hi"));
    assert_eq!(out["unknown"]["code"], -32601);
    assert_eq!(
        out["cancel"]["stopReason"], "cancelled",
        "{:#}",
        out["cancel"]
    );
    assert_eq!(out["bridgeExit"], 0);
}

/// Side by side: omp's own `omp --mode acp` on the same scripted model and prompts is the
/// structural anchor. Both must give the same update kinds per turn, one call id per tool
/// card and a cancelled stop reason; the differences the seeds make are named below.
#[test]
fn acp_side_by_side_musewire_acp_and_omp_mode_acp_agree_on_structure() {
    let Some(ours) = omp_scenario_through_musewire() else {
        return;
    };
    // omp's own ACP mode, on a scripted model server of its own (the same script).
    let theirs_omp = Live::omp("acp-side-omp").expect("the peers were there a moment ago");
    let theirs = Sdk::over("omp", &theirs_omp)
        .own_acp(true)
        .run()
        .expect("the SDK is there");

    // Update kinds per turn, with omp's session-state updates (commands, session info,
    // usage) left aside: they are not turn content.
    let turn_kinds = |out: &Value, turn: &str| -> Vec<String> {
        let mut kinds: Vec<String> = kinds(&out[turn])
            .into_iter()
            .filter(|k| {
                !matches!(
                    k.as_str(),
                    "available_commands_update" | "session_info_update" | "usage_update"
                )
            })
            .collect();
        kinds.dedup();
        kinds
    };
    for turn in ["echo", "think", "bash"] {
        assert_eq!(
            turn_kinds(ours, turn),
            turn_kinds(&theirs, turn),
            "{turn}: ours {:#} theirs {:#}",
            ours[turn],
            theirs[turn]
        );
        assert_eq!(
            ours[turn]["stopReason"], theirs[turn]["stopReason"],
            "{turn}"
        );
    }
    assert_eq!(
        text_of(&ours["echo"], "agent_message_chunk"),
        text_of(&theirs["echo"], "agent_message_chunk")
    );
    // Call-id continuity in both.
    for out in [ours, &theirs] {
        let cards: Vec<&Value> = out["bash"]["updates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["toolCallId"].is_string())
            .collect();
        assert!(cards
            .iter()
            .all(|u| u["toolCallId"] == cards[0]["toolCallId"]));
    }
    // Cancel: both end the turn cancelled.
    assert_eq!(
        ours["cancel"]["stopReason"], "cancelled",
        "{:#}",
        ours["cancel"]
    );
    assert_eq!(
        theirs["cancel"]["stopReason"], "cancelled",
        "{:#}",
        theirs["cancel"]
    );
    // Difference: omp's own ACP mode asks the editor before it runs a tool
    // (`session/request_permission`; the client allows once). Unanswered, its tool failed at
    // once and the long turn could end before the cancel arrived.
    assert!(
        theirs["permissions"].as_u64().is_some_and(|n| n >= 1),
        "{:#}",
        theirs["permissions"]
    );
    // Difference (ACP-07, ours): an unknown method is -32601 (JSON-RPC's "method not
    // found") from us; omp 18.2.3's own ACP mode answers -32603 (internal error).
    assert_eq!(ours["unknown"]["code"], -32601);
    assert_eq!(theirs["unknown"]["code"], -32603, "{:#}", theirs["unknown"]);
}

/// 100,000 bytes of words of 1,000 bytes each, their letters pseudo-random: no word repeats
/// (omp's loop guard stops a model that repeats itself) (ACP-05's long answers).
fn hundred_kb_of_words() -> String {
    let mut state: u32 = 34;
    let mut text = String::with_capacity(100_000);
    for _ in 0..100 {
        for _ in 0..999 {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            text.push(char::from(b'a' + ((state >> 16) % 26) as u8));
        }
        text.push(' ');
    }
    text
}

/// ACP-05 with the bundled agent: its scripted model says at most 64 KiB of a prompt and the
/// number of bytes left (its own cap, AGENT-04), so a 100 KB prompt's echo and thought are
/// over 64 KiB: they reach the editor whole, no bridge notice; a 100 KB `bash` output's card
/// is cut to 64 KiB with the notice.
#[test]
fn acp_05_the_whole_answer_and_thought_and_a_cut_tool_output_bundled_agent() {
    use musewire_core::acp::{MAX_SURFACE_BYTES, TRUNCATION_NOTICE};
    let big = hundred_kb_of_words();
    let prompts = json!([
        big,
        format!("think {big}"),
        "bash head -c 100000 /dev/zero | tr '\\0' x"
    ])
    .to_string();
    let file = scratch("acp-sdk-whole-answer").join("prompts.json");
    std::fs::write(&file, prompts).unwrap();
    let Some(out) = Sdk::new("turns").env("ACP_PROMPTS_FILE", &file).run() else {
        return;
    };
    let said = |quoted: &str| {
        let left = quoted.len() - MAX_SURFACE_BYTES;
        format!("{}… ({left} more bytes)", &quoted[..MAX_SURFACE_BYTES])
    };
    let echo = turn_of(&out, 0);
    assert_eq!(echo["stopReason"], "end_turn");
    let text = text_of(echo, "agent_message_chunk");
    assert!(text.len() > MAX_SURFACE_BYTES, "{}", text.len());
    assert_eq!(text, said(&big), "the echo, whole");
    let think = turn_of(&out, 1);
    let thought = text_of(think, "agent_thought_chunk");
    let quoted = big.trim();
    assert_eq!(thought, said(quoted), "the thought, whole");
    assert_eq!(text_of(think, "agent_message_chunk"), said(quoted));
    let bash = card_text(turn_of(&out, 2));
    assert_eq!(bash.len(), MAX_SURFACE_BYTES, "the tool output, cut");
    assert!(bash.ends_with(TRUNCATION_NOTICE));
    assert_eq!(out["bridgeExit"], 0);
}

/// ACP-05 over the scripted model: a 100 KB answer and a 100 KB thought reach the editor
/// whole through `musewire acp -- AGENT`.
fn check_whole_answer_over(live: &Live, what: &str) {
    let big = hundred_kb_of_words();
    let prompts = json!([format!("[[text {big}]]"), format!("[[think {big}]] done")]).to_string();
    let file = live.work().join("prompts.json");
    std::fs::write(&file, prompts).unwrap();
    let out = Sdk::over("turns", live)
        .env("ACP_PROMPTS_FILE", &file)
        .run()
        .expect("the SDK is there");
    let answer = turn_of(&out, 0);
    assert_eq!(answer["stopReason"], "end_turn", "{what}");
    let text = text_of(answer, "agent_message_chunk");
    assert_eq!(
        text.trim().len(),
        big.trim().len(),
        "{what}: the answer, whole: {text:?}"
    );
    assert_eq!(text.trim(), big.trim(), "{what}");
    let think = turn_of(&out, 1);
    let thought = text_of(think, "agent_thought_chunk");
    assert_eq!(thought.trim(), big.trim(), "{what}: the thought, whole");
    assert_eq!(
        text_of(think, "agent_message_chunk").trim(),
        "done",
        "{what}"
    );
    assert_eq!(out["bridgeExit"], 0, "{what}");
}

/// ACP-05 over omp's RPC mode: a 100 KB answer and thought, whole.
#[test]
fn acp_05_a_100_kb_answer_and_thought_arrive_whole_over_omp_rpc() {
    let Some(omp) = Live::omp("acp-omp-whole-answer") else {
        return;
    };
    check_whole_answer_over(&omp, "omp");
}

/// ACP-05 over each pinned `pi --mode rpc`: a 100 KB answer and thought, whole.
#[test]
fn acp_05_a_100_kb_answer_and_thought_arrive_whole_over_each_pi_rpc() {
    each_at_once(&Pi::ALL, |&pi| {
        let Some(live) = Live::pi(pi, &format!("acp-{}-whole-answer", pi.name())) else {
            return;
        };
        check_whole_answer_over(&live, &format!("pi {}", pi.version()));
    });
}

/// The command both ACP-30 scenarios run: it prints, sleeps, prints.
const COMMAND: &str = "echo one; sleep 2; echo two";

/// What an update shows of the command's output: its text content, or the terminal output
/// its `_meta` carries.
fn shown_output(update: &Value) -> String {
    let mut text = String::new();
    if let Some(content) = update["content"].as_array() {
        for item in content {
            text.push_str(item["content"]["text"].as_str().unwrap_or(""));
        }
    }
    text.push_str(
        update["_meta"]["terminal_output"]["data"]
            .as_str()
            .unwrap_or(""),
    );
    text
}

/// ACP-29, ACP-30: the command's card is titled with the command, its first line reached
/// the card well before the card completed (the command sleeps 2 s between its lines), and
/// with `terminal` the card is a terminal (`terminal_info`, each chunk's new bytes once,
/// `terminal_exit` 0), without it no terminal `_meta` at all.
fn check_command_card(out: &Value, terminal: bool) {
    assert_eq!(out["stopReason"], "end_turn", "{out:#}");
    let log = out["log"].as_array().expect("the updates");
    let opening = log
        .iter()
        .find(|e| e["update"]["sessionUpdate"] == "tool_call")
        .unwrap_or_else(|| panic!("a tool_call: {out:#}"));
    let id = opening["update"]["toolCallId"].clone();
    let card: Vec<&Value> = log
        .iter()
        .filter(|e| e["update"]["toolCallId"] == id)
        .collect();
    // ACP-29: the title is the command; the kind execute.
    let titles: Vec<&str> = card
        .iter()
        .filter_map(|e| e["update"]["title"].as_str())
        .collect();
    assert_eq!(titles.last(), Some(&COMMAND), "{out:#}");
    assert_eq!(opening["update"]["kind"], "execute", "{out:#}");
    let done = card
        .iter()
        .find(|e| e["update"]["status"] == "completed")
        .unwrap_or_else(|| panic!("the card completed: {out:#}"));
    let first = card
        .iter()
        .find(|e| shown_output(&e["update"]).contains("one"))
        .unwrap_or_else(|| panic!("the first line on the card: {out:#}"));
    assert!(
        !shown_output(&first["update"]).contains("two"),
        "the first line came alone: {out:#}"
    );
    let (first_ms, done_ms) = (first["ms"].as_u64().unwrap(), done["ms"].as_u64().unwrap());
    assert!(
        first_ms + 500 <= done_ms,
        "the first line reached the card before the command ended ({first_ms} ms, done at \
         {done_ms} ms): {out:#}"
    );
    assert!(done_ms <= out["answeredMs"].as_u64().unwrap());
    let metas = card
        .iter()
        .filter(|e| {
            e["update"]["_meta"].get("terminal_output").is_some()
                || e["update"]["_meta"].get("terminal_info").is_some()
                || e["update"]["_meta"].get("terminal_exit").is_some()
        })
        .count();
    if !terminal {
        assert_eq!(metas, 0, "no terminal meta without the opt-in: {out:#}");
        assert!(shown_output(&done["update"]).contains("two"), "{out:#}");
        return;
    }
    let info = &opening["update"]["_meta"]["terminal_info"];
    assert_eq!(info["terminal_id"], id, "{out:#}");
    assert_eq!(
        opening["update"]["content"],
        json!([{"type": "terminal", "terminalId": id}]),
        "{out:#}"
    );
    let data: String = card
        .iter()
        .filter_map(|e| e["update"]["_meta"]["terminal_output"]["data"].as_str())
        .collect();
    assert_eq!(data.matches("one").count(), 1, "{data:?}");
    assert_eq!(data.matches("two").count(), 1, "{data:?}");
    assert_eq!(
        done["update"]["_meta"]["terminal_exit"],
        json!({"terminal_id": id, "exit_code": 0, "signal": null}),
        "{out:#}"
    );
    assert_eq!(
        done["update"]["content"],
        json!([{"type": "terminal", "terminalId": id}])
    );
}

/// ACP-29, ACP-30 through the official SDK client over the bundled agent (its bash streams,
/// AGENT-06): as text, then as a terminal for an editor that opted in.
#[test]
fn acp_29_30_a_commands_output_streams_onto_its_card_bundled_agent() {
    let prompt = format!("bash {COMMAND}");
    for terminal in [false, true] {
        let Some(out) = Sdk::new("command")
            .env("ACP_COMMAND", &prompt)
            .env("ACP_TERMINAL", if terminal { "1" } else { "0" })
            .run()
        else {
            return;
        };
        check_command_card(&out, terminal);
    }
}

/// ACP-29, ACP-30 over omp 18.2.3's RPC mode (scripted model): omp's `partialResult`s.
#[test]
fn acp_29_30_a_commands_output_streams_onto_its_card_over_omp_rpc() {
    let script = format!(r#"[[tool bash {{"command":"{COMMAND}"}}]]"#);
    each_at_once(&[false, true], |&terminal| {
        let Some(omp) = Live::omp(&format!("acp-omp-command-{terminal}")) else {
            return;
        };
        let out = Sdk::over("command", &omp)
            .env("ACP_COMMAND", &script)
            .env("ACP_TERMINAL", if terminal { "1" } else { "0" })
            .run()
            .expect("the SDK is there");
        check_command_card(&out, terminal);
    });
}

/// ACP-29, ACP-30 over each pi's RPC mode (scripted model), as a terminal.
#[test]
fn acp_29_30_a_commands_output_streams_onto_its_card_over_each_pi_rpc() {
    let script = format!(r#"[[tool bash {{"command":"{COMMAND}"}}]]"#);
    each_at_once(&Pi::ALL, |&pi| {
        let Some(live) = Live::pi(pi, &format!("acp-{}-command", pi.name())) else {
            return;
        };
        let out = Sdk::over("command", &live)
            .env("ACP_COMMAND", &script)
            .env("ACP_TERMINAL", "1")
            .run()
            .expect("the SDK is there");
        check_command_card(&out, true);
    });
}

/// ACP-37 over `omp --mode rpc` on the scripted model: the model calls omp's `task` tool, and
/// the subagent it starts (whose own model call the task's text scripts: a `yield` of data,
/// or of an error) is a card of its own, titled with its task, that ends `completed` (or
/// `failed`) within the turn; the `task` call's own card completes too.
#[test]
fn acp_37_a_subagent_of_omp_is_a_card_that_ends_completed_or_failed() {
    let Some(omp) = Live::omp("acp-sdk-subagent") else {
        return;
    };
    // The subagent's task scripts its model: brackets escaped in the JSON, so the parent's
    // marker ends where it should.
    let task = |answer: &str| {
        format!(
            r#"[[tool task {{"agent":"task","task":"\u005b\u005btool yield {answer}\u005d\u005d"}}]]"#
        )
    };
    let prompts = json!([
        task(r#"{\"data\":\"found it\"}"#),
        task(r#"{\"error\":\"no luck\"}"#)
    ])
    .to_string();
    let file = omp.work().join("prompts.json");
    std::fs::write(&file, prompts).unwrap();
    let out = Sdk::over("turns", &omp)
        .env("ACP_PROMPTS_FILE", &file)
        .run()
        .expect("the SDK is there");
    for (n, ending) in [(0, "completed"), (1, "failed")] {
        let turn = turn_of(&out, n);
        assert_eq!(turn["stopReason"], "end_turn", "turn {n}: {out:#}");
        let updates = turn["updates"].as_array().unwrap();
        let subagent = |u: &&Value| {
            u["toolCallId"]
                .as_str()
                .is_some_and(|id| id.starts_with(musewire_core::acp::SUBAGENT_CALL_PREFIX))
        };
        let opened: Vec<&Value> = updates
            .iter()
            .filter(subagent)
            .filter(|u| u["sessionUpdate"] == "tool_call")
            .collect();
        assert_eq!(opened.len(), 1, "turn {n}: {out:#}");
        assert_eq!(opened[0]["status"], "in_progress");
        // Titled with its description, else its assignment (not omp's prompt around it).
        let title = updates
            .iter()
            .filter(subagent)
            .filter_map(|u| u["title"].as_str())
            .next_back()
            .unwrap();
        assert!(
            !title.is_empty() && !title.starts_with("Complete assignment"),
            "{title}: {out:#}"
        );
        let last = updates
            .iter()
            .filter(subagent)
            .rfind(|u| u.get("status").is_some())
            .unwrap();
        assert_eq!(last["status"], ending, "turn {n}: {out:#}");
    }
    assert_eq!(out["bridgeExit"], 0);
}

/// OUT-01, 02, 04, 06, 07 through the official client: the bundled agent run with
/// `--max-inline-bytes` stores a 1.99 MB `bash` output; the tool card carries its handle; the
/// client reads it back page by page (1 MiB pages, advancing by byteLen), byte-identical to
/// the command's output; bad params, a foreign item and a path as reference are refused
/// with typed errors.
#[test]
fn out_01_07_stored_output_read_back_page_by_page_bundled_agent() {
    let dir = scratch("acp-sdk-output");
    let file = dir.join("read-back.bin");
    let args = [
        "--session-dir".as_ref(),
        dir.as_os_str(),
        "--max-inline-bytes".as_ref(),
        "4096".as_ref(),
    ];
    let Some(out) = Sdk::new("output")
        .flags(&args)
        .env("ACP_OUTPUT_PROMPT", "bash seq 1 300000")
        .env("ACP_OUT_FILE", &file)
        .run()
    else {
        return;
    };
    let advertised = &out["initialize"]["_meta"]["muse/output"];
    assert_eq!(advertised["version"], 1, "{out:#}");
    assert_eq!(advertised["method"], "_muse/readOutput");
    assert_eq!(advertised["maxLengthBytes"], 1_048_576);
    let handle = &out["handle"];
    assert_eq!(handle["availability"], "available", "{out:#}");
    assert_eq!(handle["method"], "_muse/readOutput");
    assert_eq!(handle["sessionId"], out["sessionId"]);
    let expected: String = (1..=300_000).map(|n| format!("{n}\n")).collect();
    assert_eq!(handle["byteLen"], expected.len());
    let read = std::fs::read(&file).expect("the client wrote what it read");
    assert!(
        read == expected.as_bytes(),
        "read back {} bytes",
        read.len()
    );
    assert!(
        out["pages"].as_array().unwrap().len() >= 2,
        "{:#}",
        out["pages"]
    );
    assert_eq!(out["badParams"]["code"], -32602, "{:#}", out["badParams"]);
    assert_eq!(out["badParams"]["data"]["code"], "invalid_params");
    assert_eq!(
        out["foreign"]["data"]["code"], "foreign",
        "{:#}",
        out["foreign"]
    );
    assert_eq!(out["path"]["data"]["code"], "path_not_reference");
}
