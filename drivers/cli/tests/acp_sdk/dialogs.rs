//! Dialogs and approvals: an agent's ask as a permission request or a form (ACP-09, ACP-36),
//! omp's approvals about their call (ACP-08), and the session modes that ask, approve edits or
//! approve all (ACP-34, ACP-35, ACP-43, AGENT-07).

use super::*;

/// ACP-09 through the official client: the bundled agent's `ask` (a `confirm`) reaches the
/// editor as `session/request_permission` with `yes`/`no`, and the client's choice is the
/// tool's answer.
#[test]
fn acp_09_the_bundled_agents_ask_reaches_the_editor_and_its_choice_answers() {
    let Some(out) = Sdk::new("ask").run() else {
        return;
    };
    let requests = out["permissionRequests"].as_array().expect("asked");
    assert_eq!(requests.len(), 2, "{out:#}");
    let first = &requests[0];
    assert_eq!(first["toolCall"]["title"], "Proceed?", "{first:#}");
    let ids: Vec<&str> = first["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["yes", "no"]);
    for (turn, answer) in [("yes", "yes"), ("no", "no")] {
        assert_eq!(out[turn]["stopReason"], "end_turn", "{turn}: {out:#}");
        // The dialog's own card closes completed; the ask tool's result is the answer.
        let updates = out[turn]["updates"].as_array().unwrap();
        let result = updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "tool_call_update")
            .filter(|u| !u["toolCallId"].as_str().unwrap().starts_with("dialog-"))
            .find(|u| u["status"] == "completed")
            .expect("the ask tool completed");
        assert_eq!(result["content"][0]["content"]["text"], answer, "{turn}");
        // ACP-36: the request is the dialog's one item: no card of its own.
        assert_eq!(dialog_cards(&out[turn]), 0, "{turn}: {out:#}");
    }
}

/// ACP-09, ACP-36 through the official SDK client, bundled agent: each dialog shows once. With
/// form elicitation offered, an `input` (the text typed answers it), a `select` (a titled
/// one-of of its options) and a `confirm` (a one-of of yes and no) are one form each and no
/// permission request; without it, the `input` is answered cancelled, said in the turn, and
/// the `select` and the `confirm`s are one permission request each with no card of their own.
#[test]
fn acp_09_36_each_dialog_shows_once_with_and_without_form_elicitation_bundled_agent() {
    for forms in [true, false] {
        let Some(out) = Sdk::new("elicit")
            .env("ACP_FORMS", if forms { "1" } else { "0" })
            .env("ACP_TEXT", "Ada Lovelace")
            .run()
        else {
            return;
        };
        let said = |turn: &str| text_of(&out[turn], "agent_message_chunk");
        let turns = ["input", "select", "confirm", "refuse"];
        for turn in turns {
            assert_eq!(out[turn]["stopReason"], "end_turn", "{turn}: {out:#}");
            assert_eq!(dialog_cards(&out[turn]), 0, "{turn}: {out:#}");
        }
        let elicitations = out["elicitations"].as_array().cloned().unwrap_or_default();
        let requests = out["permissionRequests"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if forms {
            assert_eq!(elicitations.len(), 4, "{out:#}");
            assert!(requests.is_empty(), "{out:#}");
            assert_eq!(elicitations[0]["message"], "Your name?");
            let select = &elicitations[1];
            assert_eq!(select["message"], "Pick one", "{select:#}");
            let titles: Vec<&str> = select["requestedSchema"]["properties"]["value"]["oneOf"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["title"].as_str().unwrap())
                .collect();
            assert_eq!(titles, ["red", "green", "blue"], "{select:#}");
            let confirm = &elicitations[2]["requestedSchema"]["properties"]["value"];
            assert_eq!(
                confirm["oneOf"],
                json!([{"const": "yes", "title": "Yes"}, {"const": "no", "title": "No"}])
            );
            assert!(
                said("input").contains("ask returned: Ada Lovelace"),
                "{out:#}"
            );
        } else {
            assert!(elicitations.is_empty(), "{out:#}");
            assert_eq!(requests.len(), 3, "{out:#}");
            let input = said("input");
            assert!(
                input.contains("dialog answered as cancelled") && input.contains("Your name?"),
                "{input:?}"
            );
            assert!(input.contains("ask returned: no"), "{input:?}");
            let select = &requests[0];
            assert_eq!(select["toolCall"]["title"], "Pick one", "{select:#}");
            let names: Vec<&str> = select["options"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["red", "green", "blue"], "{select:#}");
        }
        assert!(said("select").contains("ask returned: green"), "{out:#}");
        assert!(said("confirm").contains("ask returned: yes"), "{out:#}");
        assert!(said("refuse").contains("ask returned: no"), "{out:#}");
        assert_eq!(out["bridgeExit"], 0);
    }
}

/// ACP-08, ACP-10 over `omp --mode rpc --approval-mode always-ask` on the scripted model, and
/// side by side with omp's own `omp --mode acp --approval-mode always-ask` on the same turns
/// (the two runs at once): see [`check_omp_approvals`], [`check_omp_approvals_cancelled`] and
/// [`check_side_by_side`].
#[test]
fn acp_08_10_omp_approvals_about_their_call_cancelled_and_side_by_side_with_omp_mode_acp() {
    // Each run its own omp, model server and scratch folder: `musewire acp` over `omp --mode
    // rpc` with the cancels, omp's own ACP mode without them.
    let run = |tag: &str, own_acp: bool| -> Option<Value> {
        let omp = Live::omp(tag)?;
        let run = Sdk::over("omp-approval", &omp)
            .own_acp(own_acp)
            .agent_args(&["--approval-mode", "always-ask"]);
        let run = if own_acp {
            run
        } else {
            run.env("ACP_CANCELS", "1")
        };
        Some(run.run().expect("the SDK is there"))
    };
    let (ours, theirs) = std::thread::scope(|scope| {
        let theirs = scope.spawn(|| run("acp-approval-omp", true));
        let ours = run("acp-omp-approval", false);
        let theirs = theirs
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (ours, theirs)
    });
    let Some(ours) = ours else {
        return;
    };
    let theirs = theirs.expect("the peers were there for our run");
    check_omp_approvals(&ours);
    check_omp_approvals_cancelled(&ours);
    check_side_by_side(&ours, &theirs);
}

/// ACP-08: omp's approval `select` becomes `session/request_permission` about the bash call's
/// own card (its id, title and kind); allow once runs it, reject once fails it, allow always
/// runs it and the next bash call runs unasked. ACP-10: `/session`, answered by omp itself,
/// ends its turn and the next prompt runs.
fn check_omp_approvals(out: &Value) {
    for (turn, asked, status) in [
        ("allow", 1, "completed"),
        ("reject", 1, "failed"),
        ("always", 1, "completed"),
        ("remembered", 0, "completed"),
    ] {
        assert_eq!(out[turn]["asked"], asked, "{turn}: {out:#}");
        assert_eq!(out[turn]["stopReason"], "end_turn", "{turn}");
        let closed = closed(&out[turn]);
        assert_eq!(closed.len(), 1, "{turn}: {:#}", out[turn]);
        assert_eq!(closed[0].1, status, "{turn}: {:#}", out[turn]);
        let call = out[turn]["updates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["sessionUpdate"] == "tool_call")
            .expect("a tool_call");
        assert_eq!(call["toolCallId"].as_str(), Some(closed[0].0.as_str()));
        assert_eq!(call["kind"], "execute");
    }
    let requests = out["permissionRequests"].as_array().unwrap();
    assert_eq!(requests.len(), 3, "{out:#}");
    for request in requests {
        let call = &request["toolCall"];
        assert!(!call["toolCallId"].as_str().unwrap().starts_with("dialog-"));
        assert_eq!(call["kind"], "execute");
        assert!(
            call["title"].as_str().unwrap().starts_with("echo"),
            "{call:#}"
        );
        let kinds: Vec<&str> = request["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["allow_once", "allow_always", "reject_once", "reject_always"]
        );
    }
    // The request names the card of the turn it came in.
    let allow_call = out["allow"]["updates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .unwrap()["toolCallId"]
        .clone();
    assert_eq!(requests[0]["toolCall"]["toolCallId"], allow_call);
    // omp asks before `tool_execution_start`: the card opens pending (ACP's default, so no
    // status), then runs.
    let allow = out["allow"]["updates"].as_array().unwrap();
    let opened = allow
        .iter()
        .position(|u| u["sessionUpdate"] == "tool_call")
        .unwrap();
    assert!(allow[opened].get("status").is_none(), "{:#}", allow[opened]);
    assert_eq!(requests[0]["toolCall"]["status"], "pending");
    // ACP-19: the next status of the card is in_progress (updates without one describe the
    // call as its arguments complete).
    let next_status = allow[opened + 1..]
        .iter()
        .find(|u| u.get("status").is_some())
        .expect("the card runs");
    assert_eq!(next_status["status"], "in_progress", "{:#}", out["allow"]);
    assert!(serde_json::to_string(&out["allow"])
        .unwrap()
        .contains("allowed"));
    // ACP-10: `/session` is answered by omp itself (`agentInvoked: false`): its output is the
    // turn's text, the turn ends, and the next prompt runs.
    assert_eq!(out["local"]["stopReason"], "end_turn", "{:#}", out["local"]);
    let said = text_of(&out["local"], "agent_message_chunk");
    assert!(said.contains("Session: "), "{said}");
    assert_eq!(
        out["after"]["result"]["stopReason"], "end_turn",
        "{:#}",
        out["after"]
    );
    assert_eq!(
        text_of(&out["after"]["result"], "agent_message_chunk"),
        "still here"
    );
}

/// ACP-08: an approval the editor answers `cancelled` denies the call and ends the turn
/// `cancelled`; one it leaves open while it cancels the turn is withdrawn, denied, and the
/// turn ends `cancelled`; the session goes on. Its permission requests are kept apart
/// (`cancelRequests`).
fn check_omp_approvals_cancelled(out: &Value) {
    for turn in ["cancelledOutcome", "cancelledWhileAsked"] {
        assert_eq!(
            out[turn]["result"]["stopReason"], "cancelled",
            "{turn}: {out:#}"
        );
        // The call never ran: no card of it completed.
        let completed = out[turn]["result"]["updates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["sessionUpdate"] == "tool_call_update")
            .filter(|u| {
                !u["toolCallId"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("dialog-")
            })
            .any(|u| u["status"] == "completed");
        assert!(!completed, "{turn}: {out:#}");
    }
    let cancelled = out["cancelRequests"].as_array().expect("asked");
    assert_eq!(cancelled.len(), 1, "the one answered cancelled: {out:#}");
    assert!(
        out["held"].is_object(),
        "the open request was asked: {out:#}"
    );
    let after = &out["afterCancels"]["result"];
    assert_eq!(after["stopReason"], "end_turn", "{out:#}");
    assert_eq!(
        text_of(after, "agent_message_chunk"),
        "still here after the cancels"
    );
}

/// ACP-08, ACP-10 side by side: omp's own ACP mode on the same scripted turns asks as often
/// and ends each turn as we do, `/session` included.
fn check_side_by_side(ours: &Value, theirs: &Value) {
    for turn in ["allow", "reject", "always", "remembered"] {
        assert_eq!(
            ours[turn]["asked"], theirs[turn]["asked"],
            "{turn}: theirs {theirs:#}"
        );
        assert_eq!(
            ours[turn]["stopReason"], theirs[turn]["stopReason"],
            "{turn}"
        );
    }
    assert_eq!(
        ours["local"]["stopReason"], theirs["local"]["stopReason"],
        "theirs {:#}",
        theirs["local"]
    );
    assert_eq!(
        ours["after"]["result"]["stopReason"],
        theirs["after"]["result"]["stopReason"]
    );
}

/// The line a card the mode approved carries first (ACP-34).
fn approved_line(mode: &str) -> String {
    format!("[approved without asking: the session's mode is {mode}]")
}

/// Whether a turn shows a card whose content begins with the mode's line (ACP-34).
fn card_says(turn: &Value, mode: &str) -> bool {
    let line = approved_line(mode);
    turn["updates"].as_array().unwrap().iter().any(|u| {
        u["sessionUpdate"] == "tool_call_update"
            && u["content"][0]["content"]["text"].as_str() == Some(line.as_str())
    })
}

/// A `modes` run (ACP-34, ACP-35): the modes offered both ways, the permission requests each
/// turn made (asked in Ask, an edit not asked in Accept edits where `edit`, the gated tool
/// still asked there, nothing asked in Allow all, asked again back in Ask), each change
/// announced both ways, the approved cards' line, `/status`, a mode not offered refused.
fn check_modes(out: &Value, edit: bool) {
    assert_eq!(out["modes"]["currentModeId"], "default", "{out:#}");
    let ids: Vec<&str> = out["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["default", "acceptEdits", "bypassPermissions"]);
    let option = config_option(&out["configOptions"], "mode");
    assert_eq!(option["category"], "mode");
    assert_eq!(option["currentValue"], "default");
    let mut turns = vec![("ask", 1), ("acceptGated", 1), ("allowAll", 0), ("back", 1)];
    if edit {
        turns.push(("acceptEdit", 0));
    }
    for (turn, asked) in turns {
        assert_eq!(out[turn]["asked"], asked, "{turn}: {out:#}");
        assert_eq!(out[turn]["stopReason"], "end_turn", "{turn}: {out:#}");
        let closed = closed(&out[turn]);
        assert!(
            closed.iter().any(|(_, status)| status == "completed"),
            "{turn}: the approved call ran: {out:#}"
        );
    }
    assert!(card_says(&out["allowAll"], "Allow all"), "{out:#}");
    if edit {
        assert!(card_says(&out["acceptEdit"], "Accept edits"), "{out:#}");
    }
    for turn in ["ask", "acceptGated", "back"] {
        assert!(!card_says(&out[turn], "Allow all") && !card_says(&out[turn], "Accept edits"));
    }
    for (set, mode) in [
        ("setAcceptEdits", "acceptEdits"),
        ("setAllowAll", "bypassPermissions"),
        ("setAsk", "default"),
    ] {
        assert!(out[set]["result"].is_object(), "{set}: {out:#}");
        let updates = out[set]["updates"].as_array().unwrap();
        let current = updates
            .iter()
            .find(|u| u["sessionUpdate"] == "current_mode_update")
            .unwrap_or_else(|| panic!("{set}: {out:#}"));
        assert_eq!(current["currentModeId"], mode, "{set}");
        let options = updates
            .iter()
            .find(|u| u["sessionUpdate"] == "config_option_update")
            .unwrap_or_else(|| panic!("{set}: {out:#}"));
        assert_eq!(
            config_option(&options["configOptions"], "mode")["currentValue"],
            mode,
            "{set}"
        );
    }
    assert_eq!(
        config_option(&out["setAllowAll"]["result"]["configOptions"], "mode")["currentValue"],
        "bypassPermissions"
    );
    let status = text_of(&out["status"], "agent_message_chunk");
    assert!(
        status.contains("requested mode: Allow all (bypassPermissions)"),
        "{status}"
    );
    assert_eq!(out["setPlan"]["code"], -32602, "{out:#}");
}

/// ACP-34, ACP-35 through the official client over `omp --mode rpc --approval-mode
/// always-ask`: a bash call is asked in Ask; in Accept edits a write runs unasked (its card
/// says so, the file is written) and bash is asked; in Allow all bash runs unasked; back in
/// Ask it is asked again.
#[test]
fn acp_34_35_modes_over_omp_rpc_asked_not_asked_and_back_to_asking() {
    let Some(omp) = Live::omp("acp-omp-modes") else {
        return;
    };
    let out = Sdk::over("modes", &omp)
        .agent_args(&["--approval-mode", "always-ask"])
        .env("ACP_GATED", r#"[[tool bash {"command":"echo gated"}]]"#)
        .env(
            "ACP_EDIT",
            r#"[[tool write {"path":"by-mode.txt","content":"fresh\n"}]]"#,
        )
        .run()
        .expect("the SDK is there");
    check_modes(&out, true);
    let written = std::fs::read_to_string(omp.work().join("by-mode.txt"));
    assert_eq!(written.ok().as_deref(), Some("fresh\n"), "{out:#}");
}

/// ACP-34, ACP-35 through the official client over the bundled agent: its `ask` tool asking
/// in omp's approval form (`Allow tool: ask`, Approve or Deny) is asked in Ask and in Accept
/// edits (it is no edit), answered by the bridge in Allow all, and asked again in Ask.
#[test]
fn acp_34_35_modes_over_the_bundled_agents_ask_asked_not_asked_and_back_to_asking() {
    let gated = r#"call ask {"question":"Allow tool: ask\nfrom the bundled agent","kind":"select","options":["Approve","Deny"]}"#;
    let Some(out) = Sdk::new("modes").env("ACP_GATED", gated).run() else {
        return;
    };
    check_modes(&out, false);
    for turn in ["ask", "acceptGated", "allowAll", "back"] {
        assert!(
            text_of(&out[turn], "agent_message_chunk").contains("ask returned: Approve"),
            "{turn}: {out:#}"
        );
    }
}

/// ACP-34, ACP-35, AGENT-07 through the official client over `musewire agent
/// --approval-mode always-ask`: its `bash` and `write` ask omp's approval select; bash is
/// asked in Ask and in Accept edits, where a write runs unasked (its card says so, the file
/// is written), answered by the bridge in Allow all, asked again back in Ask; each approved
/// command ran.
#[test]
fn acp_34_35_agent_07_modes_over_the_bundled_agent_under_always_ask() {
    let work = scratch("acp-bundled-always-ask");
    let mut agent = Command::new(env!("CARGO_BIN_EXE_musewire"));
    agent.args(["agent", "--mode", "rpc"]).current_dir(&work);
    let Some(out) = Sdk::over_command("modes", &agent)
        .agent_args(&["--approval-mode", "always-ask"])
        .env("ACP_GATED", "bash echo gated")
        .env(
            "ACP_EDIT",
            r#"call write {"path":"by-mode.txt","content":"fresh\n"}"#,
        )
        .run()
    else {
        return;
    };
    check_modes(&out, true);
    asked_about_the_call(&out);
    let written = std::fs::read_to_string(work.join("by-mode.txt"));
    assert_eq!(written.ok().as_deref(), Some("fresh\n"), "{out:#}");
    for turn in ["ask", "acceptGated", "allowAll", "back"] {
        assert!(
            text_of(&out[turn], "agent_message_chunk").contains("bash returned: gated"),
            "{turn}: {out:#}"
        );
    }
}

/// ACP-43's test extension for pi: confirms before `write` and `bash` from its `tool_call`
/// handler, as a pi permission gate does, and blocks the call on `false`.
const CONFIRM_GATE: &str = r#"export default function (pi) {
  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName !== "write" && event.toolName !== "bash") return undefined;
    const ok = await ctx.ui.confirm(`Allow ${event.toolName}?`, JSON.stringify(event.input));
    return ok ? undefined : { block: true, reason: "Blocked by the gate extension" };
  });
}
"#;

/// ACP-34, ACP-35, ACP-43 through the official client over each pinned `pi --mode rpc` with
/// an extension that confirms before `write` and `bash`: the bash confirm is asked in Ask;
/// in Accept edits a write runs unasked (its card says so, the file is written) and bash is
/// asked; in Allow all bash runs unasked; back in Ask it is asked again.
#[test]
fn acp_34_35_43_modes_over_each_pi_with_a_confirming_extension() {
    each_at_once(&Pi::ALL, |&pi| {
        let Some(live) = Live::pi(pi, &format!("acp-{}-confirm-modes", pi.name())) else {
            return;
        };
        let gate = live.dir.join("confirm-gate.ts");
        std::fs::write(&gate, CONFIRM_GATE).unwrap();
        let gate = gate.to_str().unwrap().to_owned();
        let out = Sdk::over("modes", &live)
            .agent_args(&["-e", &gate])
            .env("ACP_GATED", r#"[[tool bash {"command":"echo gated"}]]"#)
            .env(
                "ACP_EDIT",
                r#"[[tool write {"path":"by-mode.txt","content":"fresh\n"}]]"#,
            )
            .run()
            .expect("the SDK is there");
        check_modes(&out, true);
        asked_about_the_call(&out);
        let written = std::fs::read_to_string(live.work().join("by-mode.txt"));
        assert_eq!(
            written.ok().as_deref(),
            Some("fresh\n"),
            "{}: {out:#}",
            pi.name()
        );
    });
}

/// Every permission request of a run named the gated call's own card (ACP-08, ACP-43), a
/// bash one, never a dialog card of its own.
fn asked_about_the_call(out: &Value) {
    let requests = out["permissionRequests"].as_array().expect("asked");
    assert_eq!(requests.len(), 3, "{out:#}");
    for request in requests {
        let call = &request["toolCall"];
        assert!(
            !call["toolCallId"].as_str().unwrap().starts_with("dialog-"),
            "{out:#}"
        );
        assert_eq!(call["kind"], "execute", "{out:#}");
    }
}
