//! CALL-06: what a bridge needs for sign-in, subagents and forking is typed, as omp 18.2.3
//! and pi 1.6 write it (the shapes read from their RPC modes), and round-trips with unknown
//! members kept: omp's login flow (`get_login_providers`, `login`, and the `open_url`,
//! `notify` and `input` UI requests it makes while `login` is pending), omp's subagent
//! frames under `set_subagent_subscription`, and the session entries of pi 1.6's
//! `get_entries` (and omp's `get_subagent_messages`), with fork and branch beside them.

use musewire_wire::{
    AgentFrame, Command, ResponseData, SessionEntry, SessionHeader, SubagentProgress, UiRequest,
};
use serde_json::{json, Value};

/// Parses an agent line, checks it round-trips (with a member from the future kept), and
/// returns it.
fn agent(line: &str) -> AgentFrame {
    let frame = AgentFrame::from_slice(line.as_bytes()).unwrap();
    assert!(!matches!(frame, AgentFrame::Unknown(_)), "{line}");
    let value: Value = serde_json::from_str(line).unwrap();
    assert_eq!(frame.to_value(), value, "round trip");
    let mut future = value.clone();
    future["zzFuture"] = json!({"a": [1]});
    assert_eq!(
        AgentFrame::from_value(future.clone()).unwrap().to_value(),
        future
    );
    frame
}

fn data(line: &str) -> ResponseData {
    match agent(line) {
        AgentFrame::Response(response) => response.data.expect("data"),
        other => panic!("not a response: {other:?}"),
    }
}

/// A command line, written back byte for byte.
fn command(line: &str) -> Command {
    let (id, command) = Command::from_slice_with_id(line.as_bytes()).unwrap();
    assert!(!matches!(command, Command::Unknown(_)), "{line}");
    assert_eq!(
        String::from_utf8(command.to_vec_with_id(id.as_deref())).unwrap(),
        line
    );
    command
}

#[test]
fn call_06_omps_login_flow_is_typed() {
    let Command::GetLoginProviders(_) = command(r#"{"id":"req-1","type":"get_login_providers"}"#)
    else {
        panic!()
    };
    let ResponseData::LoginProviders(providers) = data(
        r#"{"id":"req-1","type":"response","command":"get_login_providers","success":true,"data":{"providers":[{"id":"anthropic","name":"Anthropic (Claude Pro/Max)","available":true,"authenticated":false},{"id":"openai-codex","name":"ChatGPT Plus/Pro (Codex Subscription)","available":true,"authenticated":true}]}}"#,
    ) else {
        panic!()
    };
    assert_eq!(providers.providers[1].authenticated, Some(true));
    let Command::Login(login) =
        command(r#"{"id":"req-2","type":"login","providerId":"anthropic"}"#)
    else {
        panic!()
    };
    assert_eq!(login.provider_id, "anthropic");
    // While `login` is pending: the URL to open, progress notes, and a code to type in
    // (an `input` dialog with omp's 10-minute timeout).
    let AgentFrame::ExtensionUiRequest(UiRequest::OpenUrl(open)) = agent(
        r#"{"type":"extension_ui_request","id":"01JZ0000000000000000000001","method":"open_url","url":"https://claude.ai/oauth/authorize?code=true&client_id=x","launchUrl":"http://localhost:54545/launch","instructions":"Open the link, then paste the code"}"#,
    ) else {
        panic!()
    };
    assert_eq!(
        open.launch_url.as_deref(),
        Some("http://localhost:54545/launch")
    );
    let AgentFrame::ExtensionUiRequest(UiRequest::Notify(_)) = agent(
        r#"{"type":"extension_ui_request","id":"01JZ0000000000000000000002","method":"notify","message":"Waiting for the browser…","notifyType":"info"}"#,
    ) else {
        panic!()
    };
    let AgentFrame::ExtensionUiRequest(UiRequest::Input(input)) = agent(
        r#"{"type":"extension_ui_request","id":"01JZ0000000000000000000003","method":"input","title":"Paste the authorization code:","placeholder":"code#state","timeout":600000}"#,
    ) else {
        panic!()
    };
    assert_eq!(input.title, "Paste the authorization code:");
    let ResponseData::Login(done) = data(
        r#"{"id":"req-2","type":"response","command":"login","success":true,"data":{"providerId":"anthropic"}}"#,
    ) else {
        panic!()
    };
    assert_eq!(done.provider_id, "anthropic");
    // An unknown provider fails with omp's text (no data).
    let AgentFrame::Response(failed) = agent(
        r#"{"id":"req-3","type":"response","command":"login","success":false,"error":"Unknown OAuth provider: nope"}"#,
    ) else {
        panic!()
    };
    assert!(failed.data.is_none());
}

#[test]
fn call_06_omps_subagent_frames_are_typed() {
    let Command::SetSubagentSubscription(level) =
        command(r#"{"id":"req-1","type":"set_subagent_subscription","level":"progress"}"#)
    else {
        panic!()
    };
    assert_eq!(level.level, "progress");
    let AgentFrame::SubagentLifecycle(started) = agent(
        r#"{"type":"subagent_lifecycle","payload":{"id":"0-Explore","agent":"explore","parentToolCallId":"toolu_01","detached":false,"agentSource":"bundled","description":"Find callers","status":"started","sessionFile":"/s/0-Explore.jsonl","index":0}}"#,
    ) else {
        panic!()
    };
    assert!(!started.payload.has_ended());
    assert_eq!(
        started.payload.parent_tool_call_id.as_deref(),
        Some("toolu_01")
    );
    let AgentFrame::SubagentLifecycle(ended) = agent(
        r#"{"type":"subagent_lifecycle","payload":{"id":"0-Explore","agent":"explore","agentSource":"bundled","status":"aborted","index":0}}"#,
    ) else {
        panic!()
    };
    assert!(ended.payload.has_ended());
    let AgentFrame::SubagentProgress(update) = agent(
        r#"{"type":"subagent_progress","payload":{"index":0,"agent":"explore","agentSource":"bundled","task":"Find the callers of parse","parentToolCallId":"toolu_01","detached":false,"progress":{"index":0,"id":"0-Explore","agent":"explore","agentSource":"bundled","status":"running","task":"Find the callers of parse","description":"Find callers","recentTools":[],"recentOutput":["src/a.rs:3: parse(x)"],"toolCount":2,"requests":3,"tokens":1543,"cost":0.0123,"durationMs":2345,"currentTool":"grep"},"sessionFile":"/s/0-Explore.jsonl"}}"#,
    ) else {
        panic!()
    };
    let progress: &SubagentProgress = &update.payload.progress;
    assert_eq!(progress.id, "0-Explore");
    assert_eq!(progress.tool_count, Some(2));
    assert_eq!(progress.current_tool.as_deref(), Some("grep"));
    assert_eq!(
        progress.cost.as_ref().and_then(|c| c.as_f64()),
        Some(0.0123)
    );
    // get_subagents' snapshots carry the same progress, typed.
    let ResponseData::Subagents(list) = data(
        r#"{"id":"req-4","type":"response","command":"get_subagents","success":true,"data":{"subagents":[{"id":"0-Explore","index":0,"agent":"explore","agentSource":"bundled","description":"Find callers","status":"running","task":"t","assignment":"a","sessionFile":"/s/0-Explore.jsonl","parentToolCallId":"toolu_01","lastUpdate":1777629601000,"progress":{"id":"0-Explore","status":"running","toolCount":2}}]}}"#,
    ) else {
        panic!()
    };
    let snapshot = &list.subagents[0];
    assert_eq!(snapshot.assignment.as_deref(), Some("a"));
    assert_eq!(
        snapshot.progress.as_ref().map(|p| p.id.as_str()),
        Some("0-Explore")
    );
}

#[test]
fn call_06_session_entries_are_typed_for_fork_and_branch() {
    let Command::GetEntries(get) = command(r#"{"id":"req-1","type":"get_entries","since":"a1"}"#)
    else {
        panic!()
    };
    assert_eq!(get.since.as_deref(), Some("a1"));
    let ResponseData::Entries(entries) = data(
        r#"{"id":"req-1","type":"response","command":"get_entries","success":true,"data":{"entries":[{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-05-01T10:00:01.000Z","message":{"role":"user","content":"fix it","timestamp":1777629601000}},{"type":"label","id":"a3","parentId":"a2","timestamp":"2026-05-01T10:00:02.000Z","targetId":"a2","label":null},{"type":"context_edit","id":"a4","parentId":"a3","timestamp":"2026-05-01T10:00:03.000Z","targetId":"a2","replacement":null}],"leafId":"a4"}}"#,
    ) else {
        panic!()
    };
    assert_eq!(entries.leaf_id.as_deref(), Some("a4"));
    let [SessionEntry::Message(message), SessionEntry::Label(label), unknown @ SessionEntry::Unknown(_)] =
        entries.entries.as_slice()
    else {
        panic!("{:?}", entries.entries)
    };
    assert_eq!(message.parent_id.as_deref(), Some("a1"));
    assert_eq!(
        label.label, None,
        "null: the name removed (and written back as null)"
    );
    // The tree is walked by id and parentId, whatever the entry's type.
    assert_eq!(unknown.id(), Some("a4"));
    assert_eq!(unknown.parent_id(), Some(Some("a3")));
    // The header of a session file (the bundled agent's), and a first entry.
    let header: SessionHeader = serde_json::from_str(
        r#"{"type":"session","version":3,"id":"session-1","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/w"}"#,
    )
    .unwrap();
    assert_eq!((header.id.as_str(), header.version), ("session-1", Some(3)));
    let first: SessionEntry = serde_json::from_str(
        r#"{"type":"custom","id":"e1","parentId":null,"timestamp":"2026-05-01T10:00:00.000Z","customType":"musewire.todos","data":{"phases":[]}}"#,
    )
    .unwrap();
    assert_eq!(first.parent_id(), Some(None));
    // omp's branch and pi's fork: from a user entry, answered with its text.
    let Command::Branch(branch) = command(r#"{"id":"req-2","type":"branch","entryId":"a2"}"#)
    else {
        panic!()
    };
    assert_eq!(branch.entry_id, "a2");
    let Command::Fork(_) = command(r#"{"id":"req-3","type":"fork","entryId":"a2"}"#) else {
        panic!()
    };
    let ResponseData::Branch(forked) = data(
        r#"{"id":"req-3","type":"response","command":"fork","success":true,"data":{"text":"fix it","cancelled":false}}"#,
    ) else {
        panic!()
    };
    assert_eq!(
        (forked.text.as_deref(), forked.cancelled),
        (Some("fix it"), false)
    );
}
