//! Prompt content and cards: images, embedded context, links and audio in a prompt
//! (ACP-14..16), a tool's diff and location (ACP-17..19), and an agent's writes reaching an
//! editor that offers them (ACP-38, ACP-39).

use super::*;

/// Checks the `content` scenario's prompt turns, for any agent: the typed refusal of 21
/// images (ACP-14), the audio note (ACP-16), and a turn after the refusal.
fn check_content_turns(out: &Value) {
    let caps = &out["initialize"]["agentCapabilities"]["promptCapabilities"];
    assert_eq!(caps["image"], true, "{out:#}");
    assert_eq!(caps["embeddedContext"], true);
    assert_eq!(caps["audio"], false);
    assert_eq!(out["content"]["stopReason"], "end_turn", "{out:#}");
    let said = text_of(&out["content"], "agent_message_chunk");
    assert!(
        said.contains("[audio not sent: this agent's prompts carry text and images only]"),
        "{said}"
    );
    assert_eq!(out["tooMany"]["code"], -32602, "{:#}", out["tooMany"]);
    assert_eq!(out["tooMany"]["data"]["code"], "too_many_images");
    assert_eq!(out["tooMany"]["data"]["limit"], 20);
    assert_eq!(out["after"]["stopReason"], "end_turn", "{out:#}");
}

/// The updates of card turn `n` of the `content` scenario for the card of tool kind `kind`.
fn card_updates(out: &Value, n: usize) -> Vec<Value> {
    out["cards"][n]["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["toolCallId"].is_string())
        .cloned()
        .collect()
}

/// ACP-14, 15, 16, 18, 19 through the official client over the bundled agent: images (an
/// image block and an image blob) reach the agent, whose echo says what it saw; embedded
/// text and a resource link reach it as context and a mention; audio is noted; 21 images
/// are refused with a typed error and the next turn runs; a `read` card carries its file as
/// a location with the line, opened pending and run in progress.
#[test]
fn acp_14_16_18_19_prompt_content_and_cards_through_the_sdk_bundled_agent() {
    let dir = scratch("acp-sdk-content");
    std::fs::write(dir.join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    let cards = json!([r#"call read {"path":"notes.txt","offset":2,"limit":1}"#]).to_string();
    let Some(out) = Sdk::new("content")
        .env("ACP_CWD", &dir)
        .env("ACP_CONTENT_TEXT", "look")
        .env("ACP_CARD_PROMPTS", &cards)
        .run()
    else {
        return;
    };
    check_content_turns(&out);
    let echo = text_of(&out["content"], "agent_message_chunk");
    assert!(echo.contains("[image: image/png, 70 bytes]"), "{echo}");
    assert!(echo.contains("[image: image/jpeg, 2 bytes]"), "{echo}");
    assert!(
        echo.contains("<context uri=\"file:///work/notes.md\" mimeType=\"text/markdown\">\nremember the milk\n</context>"),
        "{echo}"
    );
    assert!(
        echo.contains("[@lib.rs](file:///work/lib.rs) (\"Library\", 42 bytes)"),
        "{echo}"
    );
    assert_eq!(text_of(&out["after"], "agent_message_chunk"), "look");
    let read = card_updates(&out, 0);
    let path = dir.join("notes.txt");
    let with_location = read
        .iter()
        .find(|u| u["locations"].is_array())
        .expect("a location");
    assert_eq!(
        with_location["locations"],
        json!([{"path": path, "line": 2}]),
        "{read:#?}"
    );
    assert_eq!(read[0]["kind"], "read");
    assert!(
        read.iter().any(|u| u["status"] == "in_progress"),
        "{read:#?}"
    );
    let last = read.last().unwrap();
    assert_eq!(last["status"], "completed", "{read:#?}");
    assert!(last["rawOutput"]["content"].is_array(), "{last:#}");
}

/// The `content` scenario through `musewire acp -- omp --mode rpc` (a model that takes
/// images, omp's replace-mode edit, three card prompts), with what the model server was sent
/// and the agent's cwd: run once for the two tests that read it (ACP-14..18, and the side by
/// side with omp's own ACP mode), one omp start-up, not two.
struct OmpContent {
    out: Value,
    requests: Vec<Value>,
    work: PathBuf,
}

fn omp_content_through_musewire() -> Option<&'static OmpContent> {
    static RUN: OnceLock<Option<OmpContent>> = OnceLock::new();
    RUN.get_or_init(|| {
        // A model that takes images (omp drops them for a text-only one), and omp's
        // replace-mode edit (`path`, `old_string`, `new_string`).
        let mut omp = Live::omp("acp-omp-content").map(Live::with_images)?;
        omp.agent.env("PI_EDIT_VARIANT", "replace");
        let work = omp.work();
        std::fs::write(work.join("old.txt"), "alpha\nbeta\n").unwrap();
        let cards = json!([
            r#"[[tool write {"path":"new.txt","content":"fresh\n"}]]"#,
            r#"[[tool edit {"path":"old.txt","old_string":"beta","new_string":"gamma"}]]"#,
            r#"[[tool read {"path":"old.txt:2"}]]"#,
        ])
        .to_string();
        let out = Sdk::over("content", &omp)
            .env("ACP_CONTENT_TEXT", "[[text seen]]")
            .env("ACP_CARD_PROMPTS", &cards)
            .run()
            .expect("the SDK is there");
        let requests = omp.server.requests();
        Some(OmpContent {
            out,
            requests,
            work,
        })
    })
    .as_ref()
}

/// The last user message of the `content` turn's model request (the one with the embedded
/// text), as JSON text.
fn content_turn_user_message(requests: &[Value], who: &str) -> String {
    let turn = requests
        .iter()
        .find(|r| r.to_string().contains("remember the milk"))
        .unwrap_or_else(|| panic!("{who}: a model request with the prompt"));
    turn["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap()
        .to_string()
}

/// ACP-14, 15, 16, 17, 18 live over `omp --mode rpc` (a model that takes images) with the
/// scripted model server: the image reaches the model request as an `image_url` data uri
/// (the image blob reaches omp as an image too), the embedded context and the link reach its text, audio is noted;
/// a `write` gives a diff from its arguments (no old text), an `edit` (omp's replace mode)
/// a diff of the whole file from its details, a `read` a location with its selector's line.
#[test]
fn acp_14_18_prompt_content_and_cards_live_over_omp_rpc() {
    // A model that takes images (omp drops them for a text-only one), and omp's replace-mode
    // edit (`path`, `old_string`, `new_string`).
    let Some(OmpContent {
        out,
        requests,
        work,
    }) = omp_content_through_musewire()
    else {
        return;
    };
    check_content_turns(out);
    assert!(
        text_of(&out["content"], "agent_message_chunk").contains("seen"),
        "{out:#}"
    );
    let user = content_turn_user_message(requests, "ours");
    // omp re-encodes the PNG (as WebP) before it reaches the model; the two-byte "JPEG"
    // blob reached omp as an image, which omp says it could not decode.
    assert!(
        user.contains(r#"{"type":"image_url","image_url":{"url":"data:image/"#),
        "the image reached the model: {user}"
    );
    assert!(user.contains("undecodable image/jpeg data"), "{user}");
    assert!(
        user.contains(r#"<context uri=\"file:///work/notes.md\" mimeType=\"text/markdown\">"#),
        "{user}"
    );
    assert!(user.contains("[@lib.rs](file:///work/lib.rs)"), "{user}");
    assert!(
        !requests
            .iter()
            .any(|r| r.to_string().matches("image_url").count() >= 21),
        "the refused prompt reached no model"
    );

    // ACP-17: the write's diff from its arguments.
    let write = card_updates(out, 0);
    let new_path = work.join("new.txt");
    let done = write.last().expect("the write's card");
    assert_eq!(done["status"], "completed", "{write:#?}");
    let diff = done["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "diff")
        .unwrap_or_else(|| panic!("a diff: {write:#?}"));
    assert_eq!(diff["path"], json!(new_path));
    assert_eq!(diff["newText"], "fresh\n");
    assert!(diff.get("oldText").is_none_or(Value::is_null));
    assert_eq!(write[0]["kind"], "edit");
    // ACP-17: the edit's diff of the whole file, from omp's details.
    let edit = card_updates(out, 1);
    let done = edit.last().expect("the edit's card");
    assert_eq!(done["status"], "completed", "{edit:#?}");
    let diff = done["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "diff")
        .unwrap_or_else(|| panic!("a diff: {edit:#?}"));
    assert_eq!(diff["path"], json!(work.join("old.txt")), "{edit:#?}");
    assert_eq!(diff["oldText"], "alpha\nbeta\n", "{edit:#?}");
    assert_eq!(diff["newText"], "alpha\ngamma\n", "{edit:#?}");
    // ACP-18: the read's location, with the selector's line.
    let read = card_updates(out, 2);
    assert!(
        read.iter()
            .any(|u| u["locations"] == json!([{"path": work.join("old.txt"), "line": 2}])),
        "{read:#?}"
    );
    assert_eq!(out["bridgeExit"], 0);
}

/// ACP-14, 15, 17, 18 live over each pinned `pi --mode rpc` (a model that takes images)
/// with the scripted model server: the image reaches the model request as an `image_url`,
/// the embedded context and the link reach its text; pi's `write` gives a diff from its
/// arguments, its `edit` a diff of each replacement from its `edits[]` and the first changed
/// line as the location's line; a `read`'s `offset` is the location's line.
#[test]
fn acp_14_18_prompt_content_and_cards_live_over_each_pi_rpc() {
    each_at_once(&Pi::ALL, |&pi| {
        // A model that takes images.
        let Some(live) = Live::pi(pi, &format!("acp-{}-content", pi.name())).map(Live::with_images)
        else {
            return;
        };
        let (server, work) = (&live.server, live.work());
        std::fs::write(work.join("old.txt"), "alpha\nbeta\ngamma\n").unwrap();
        let cards = json!([
            r#"[[tool write {"path":"new.txt","content":"fresh\n"}]]"#,
            r#"[[tool edit {"path":"old.txt","edits":[{"oldText":"gamma","newText":"delta"}]}]]"#,
            r#"[[tool read {"path":"old.txt","offset":2}]]"#,
        ])
        .to_string();
        let out = Sdk::over("content", &live)
            .env("ACP_CONTENT_TEXT", "[[text seen]]")
            .env("ACP_CARD_PROMPTS", &cards)
            .run()
            .expect("the SDK is there");
        let pi = pi.version();
        check_content_turns(&out);
        let requests = server.requests();
        let turn = requests
            .iter()
            .find(|r| r.to_string().contains("remember the milk"))
            .unwrap_or_else(|| panic!("pi {pi}: a model request with the prompt"));
        let user = turn["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rfind(|m| m["role"] == "user")
            .unwrap()
            .to_string();
        assert!(
            user.contains(r#""type":"image_url""#) && user.contains("data:image/"),
            "pi {pi}: the image reached the model: {user}"
        );
        assert!(user.contains("<context uri="), "pi {pi}: {user}");
        assert!(
            user.contains("[@lib.rs](file:///work/lib.rs)"),
            "pi {pi}: {user}"
        );

        let diff_of = |n: usize| -> (Vec<Value>, Value) {
            let updates = card_updates(&out, n);
            let done = updates.last().cloned().expect("a card");
            let diffs = done["content"]
                .as_array()
                .map(|c| c.iter().filter(|c| c["type"] == "diff").cloned().collect())
                .unwrap_or_default();
            (diffs, done)
        };
        let (diffs, done) = diff_of(0);
        assert_eq!(done["status"], "completed", "pi {pi}: {done:#}");
        assert_eq!(diffs.len(), 1, "pi {pi}: {done:#}");
        assert_eq!(diffs[0]["path"], json!(work.join("new.txt")));
        assert_eq!(diffs[0]["newText"], "fresh\n");
        let (diffs, done) = diff_of(1);
        assert_eq!(done["status"], "completed", "pi {pi}: {done:#}");
        assert_eq!(diffs.len(), 1, "pi {pi}: {done:#}");
        assert_eq!(diffs[0]["path"], json!(work.join("old.txt")));
        assert_eq!(diffs[0]["oldText"], "gamma");
        assert_eq!(diffs[0]["newText"], "delta");
        assert_eq!(
            done["locations"],
            json!([{"path": work.join("old.txt"), "line": 3}]),
            "pi {pi}: {done:#}"
        );
        let read = card_updates(&out, 2);
        assert!(
            read.iter()
                .any(|u| u["locations"] == json!([{"path": work.join("old.txt"), "line": 2}])),
            "pi {pi}: {read:#?}"
        );
        assert_eq!(out["bridgeExit"], 0);
    });
}

/// ACP-14, 15 side by side with omp's own ACP mode (`omp --mode acp`), the same prompt of
/// text, two images, embedded text and a link through the official client, each over the
/// scripted model server: the model requests carry as many images, and the embedded text
/// in both; ours marks it with its uri and type and keeps the link as a mention.
#[test]
fn acp_14_15_side_by_side_prompt_content_musewire_acp_and_omp_mode_acp() {
    // The last user message of the content turn's model request: ours (`musewire acp --
    // omp --mode rpc`, the run the test above reads) and omp's own `omp --mode acp`.
    let Some(OmpContent { out, requests, .. }) = omp_content_through_musewire() else {
        return;
    };
    assert_eq!(out["content"]["stopReason"], "end_turn", "ours: {out:#}");
    let ours = content_turn_user_message(requests, "ours");
    let omp = Live::omp("acp-side-content-theirs")
        .expect("the peers were there a moment ago")
        .with_images();
    let theirs_out = Sdk::over("content", &omp)
        .own_acp(true)
        .env("ACP_CONTENT_TEXT", "[[text seen]]")
        .run()
        .expect("the SDK is there");
    assert_eq!(
        theirs_out["content"]["stopReason"], "end_turn",
        "theirs: {theirs_out:#}"
    );
    let theirs = content_turn_user_message(&omp.server.requests(), "theirs");
    let images = |user: &str| user.matches(r#""type":"image_url""#).count();
    assert!(images(&ours) >= 1, "{ours}");
    assert_eq!(
        images(&ours),
        images(&theirs),
        "ours {ours}\ntheirs {theirs}"
    );
    assert_eq!(
        ours.contains("undecodable image/jpeg"),
        theirs.contains("undecodable image/jpeg"),
        "the blob went as an image in both"
    );
    assert!(theirs.contains("remember the milk"), "{theirs}");
    assert!(
        ours.contains(r#"<context uri=\"file:///work/notes.md\""#),
        "{ours}"
    );
    assert!(ours.contains("[@lib.rs](file:///work/lib.rs)"), "{ours}");
}

/// ACP-38: one `review` turn (one tool call): the editor got `fs/write_text_file` for `path`
/// with `content`, in the session, before the call's card completed; the turn ended.
fn check_review_turn(turn: &Value, session: &Value, path: &Path, content: &str, who: &str) {
    let log = turn["log"]
        .as_array()
        .unwrap_or_else(|| panic!("{who}: {turn:#}"));
    let write = log
        .iter()
        .position(|e| e["write"] == json!(path))
        .unwrap_or_else(|| panic!("{who}: no write of {}: {turn:#}", path.display()));
    assert_eq!(log[write]["content"], content, "{who}: {turn:#}");
    assert_eq!(&log[write]["sessionId"], session, "{who}");
    let completed = log
        .iter()
        .rposition(|e| e["status"] == "completed")
        .unwrap_or_else(|| panic!("{who}: the card completed: {turn:#}"));
    assert!(
        write < completed,
        "{who}: written before the card completed: {turn:#}"
    );
    assert_eq!(turn["stopReason"], "end_turn", "{who}: {turn:#}");
}

/// ACP-38 through the official SDK: an editor that offers `fs.writeTextFile` gets the
/// bundled agent's `write` and `edit` as `fs/write_text_file` with the file's content,
/// each before its card completes.
#[test]
fn acp_38_the_bundled_agents_write_and_edit_reach_the_editor() {
    let work = scratch("acp-38-bundled");
    let prompts = json!([
        r#"call write {"path":"notes/new.txt","content":"fresh\n"}"#,
        r#"call edit {"path":"notes/new.txt","edits":[{"oldText":"fresh","newText":"edited"}]}"#,
    ]);
    let Some(out) = Sdk::new("review")
        .env("ACP_CWD", &work)
        .env("ACP_PROMPTS", prompts.to_string())
        .run()
    else {
        return;
    };
    let file = work.join("notes/new.txt");
    let turns = out["turns"].as_array().unwrap();
    check_review_turn(&turns[0], &out["sessionId"], &file, "fresh\n", "write");
    check_review_turn(&turns[1], &out["sessionId"], &file, "edited\n", "edit");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "edited\n");
    assert_eq!(out["bridgeExit"], 0);
}

/// ACP-39 through the official SDK: an editor that refuses the write: the turn says so,
/// ends as usual, and the file on disk is as the agent wrote it.
#[test]
fn acp_39_a_write_the_editor_refuses_is_said_and_the_file_stays_bundled_agent() {
    let work = scratch("acp-39-refused");
    let prompts = json!([r#"call write {"path":"kept.txt","content":"agent's\n"}"#]);
    let Some(out) = Sdk::new("review")
        .env("ACP_CWD", &work)
        .env("ACP_PROMPTS", prompts.to_string())
        .env("ACP_REFUSE_WRITES", "1")
        .run()
    else {
        return;
    };
    let file = work.join("kept.txt");
    let turn = &out["turns"][0];
    check_review_turn(turn, &out["sessionId"], &file, "agent's\n", "refused");
    let said = text_of(turn, "agent_message_chunk");
    assert!(
        said.contains(&format!(
            "[the editor refused the edit: {}: Internal error (refused by the test editor); the file on disk is as the agent wrote it]",
            file.display()
        )),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "agent's\n");
    assert_eq!(out["bridgeExit"], 0);
}

/// ACP-38 over `omp --mode rpc` on the scripted model server: omp's `write` and its
/// replace-mode `edit` reach the editor as `fs/write_text_file` with the file's content.
#[test]
fn acp_38_omps_write_and_edit_reach_the_editor() {
    let Some(mut omp) = Live::omp("acp-38-omp") else {
        return;
    };
    omp.agent.env("PI_EDIT_VARIANT", "replace");
    let work = omp.work();
    std::fs::write(work.join("old.txt"), "alpha\nbeta\n").unwrap();
    let prompts = json!([
        r#"[[tool write {"path":"new.txt","content":"fresh\n"}]]"#,
        r#"[[tool edit {"path":"old.txt","old_string":"beta","new_string":"gamma"}]]"#,
    ]);
    let out = Sdk::over("review", &omp)
        .env("ACP_PROMPTS", prompts.to_string())
        .run()
        .expect("the SDK is there");
    let turns = out["turns"].as_array().unwrap();
    let session = &out["sessionId"];
    check_review_turn(
        &turns[0],
        session,
        &work.join("new.txt"),
        "fresh\n",
        "omp write",
    );
    let edited = work.join("old.txt");
    check_review_turn(&turns[1], session, &edited, "alpha\ngamma\n", "omp edit");
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), "alpha\ngamma\n");
    assert_eq!(out["bridgeExit"], 0);
}

/// ACP-38 over each pinned `pi --mode rpc`: pi's `write` and its `edit` (`edits[]`) reach the
/// editor as `fs/write_text_file` with the file's content.
#[test]
fn acp_38_each_pis_write_and_edit_reach_the_editor() {
    each_at_once(&Pi::ALL, |&pi| {
        let Some(live) = Live::pi(pi, &format!("acp-38-{}", pi.name())) else {
            return;
        };
        let work = live.work();
        std::fs::write(work.join("old.txt"), "alpha\nbeta\n").unwrap();
        let prompts = json!([
            r#"[[tool write {"path":"new.txt","content":"fresh\n"}]]"#,
            r#"[[tool edit {"path":"old.txt","edits":[{"oldText":"beta","newText":"gamma"}]}]]"#,
        ]);
        let out = Sdk::over("review", &live)
            .env("ACP_PROMPTS", prompts.to_string())
            .run()
            .expect("the SDK is there");
        let who = format!("pi {}", pi.version());
        let turns = out["turns"].as_array().unwrap();
        let session = &out["sessionId"];
        let new = work.join("new.txt");
        check_review_turn(&turns[0], session, &new, "fresh\n", &format!("{who} write"));
        let edited = work.join("old.txt");
        let edit = format!("{who} edit");
        check_review_turn(&turns[1], session, &edited, "alpha\ngamma\n", &edit);
        assert_eq!(out["bridgeExit"], 0);
    });
}
