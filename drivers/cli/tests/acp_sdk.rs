//! The official ACP client, `@agentclientprotocol/sdk` 2.4.0 run by node
//! (conformance/reference/acp-client.mjs, the 2.x `client().connectWith(…)` API), drives
//! `musewire acp` over the bundled agent: initialize, session/new, a streamed echo, thinking
//! (ACP-04), a tool call and its update on the same id (ACP-05), a todo plan (ACP-03),
//! `/status` (ACP-01), an unknown method (-32601, ACP-07) and a cancelled prompt.
//!
//! Needs the peers (`bash conformance/peers/install.sh`) and `node`. Without them the test
//! fails, unless `MUSEWIRE_SKIP_PEERS=1` says to skip (`musewire_live::peers::missing`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use musewire_live::model_server::ModelServer;
use musewire_live::peers::{self, Pi};
use serde_json::{json, Value};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The SDK's directory, when it and node are there.
fn sdk() -> Option<PathBuf> {
    let sdk = repo_root().join("conformance/peers/node_modules/@agentclientprotocol/sdk");
    let pinned = std::fs::read_to_string(sdk.join("package.json"))
        .is_ok_and(|p| p.contains("\"version\": \"2.4.0\""));
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if pinned && node {
        return Some(sdk);
    }
    let what = if pinned {
        "node".to_owned()
    } else {
        format!("{} (2.4.0)", sdk.display())
    };
    peers::missing(&what);
    None
}

/// A fresh scratch folder under the target directory.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A real agent (omp or a pinned pi, from conformance/live) on a scripted model server of its
/// own, in a scratch folder (`home/`, and `work/`, its cwd and the sessions' cwd).
struct Live {
    server: ModelServer,
    dir: PathBuf,
    agent: Command,
}

impl Live {
    /// `omp --mode rpc` in scratch folder `tag`; `None` only when the peers are missing and
    /// `MUSEWIRE_SKIP_PEERS=1` (else a missing peer fails the test).
    fn omp(tag: &str) -> Option<Live> {
        Live::start(tag, peers::omp)
    }

    /// `pi --mode rpc` of version `pi`, as [`Live::omp`].
    fn pi(pi: Pi, tag: &str) -> Option<Live> {
        Live::start(tag, |dir, url| peers::pi_version(pi, dir, url))
    }

    fn start(tag: &str, make: impl FnOnce(&Path, &str) -> Command) -> Option<Live> {
        if !peers::installed_or_skip() {
            return None;
        }
        let server = ModelServer::start().expect("model server");
        let dir = peers::scratch(tag);
        let agent = make(&dir, &server.base_url());
        Some(Live { server, dir, agent })
    }

    /// The agent's cwd.
    fn work(&self) -> PathBuf {
        self.dir.join("work")
    }

    /// Gives the agent's models image input (omp drops images for a text-only model).
    fn with_images(self) -> Live {
        let omp = self.dir.join("home/.omp/agent/models.yml");
        let (models, from, to) = if omp.exists() {
            (
                omp,
                "reasoning: false,",
                "reasoning: false, input: [text, image],",
            )
        } else {
            (
                self.dir.join("home/.pi/agent/models.json"),
                "\"reasoning\":false",
                "\"reasoning\":false,\"input\":[\"text\",\"image\"]",
            )
        };
        let text = std::fs::read_to_string(&models).unwrap();
        let text = text.replace(from, to);
        assert!(text.contains("image"), "{text}");
        std::fs::write(&models, text).unwrap();
        self
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        // Kept after a failure, to look at.
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// One run of the official SDK client (conformance/reference/acp-client.mjs): a scenario,
/// the ACP agent it drives (`musewire acp FLAGS… [-- AGENT…]`, or a real agent's own ACP
/// mode) and the environment the scenario reads. [`Sdk::run`] does the shared steps: the
/// SDK checked, the program assembled, the client run, its failure reported with its
/// stderr (the bridge's and the agent's), its summary line parsed.
struct Sdk<'a> {
    scenario: &'a str,
    flags: Vec<OsString>,
    agent: Option<&'a Command>,
    /// The agent's own `--mode acp` instead of `musewire acp -- AGENT --mode rpc`.
    own_acp: bool,
    agent_args: Vec<OsString>,
    env: Vec<(&'a str, OsString)>,
}

impl<'a> Sdk<'a> {
    /// `scenario` over the bundled agent (`musewire acp`).
    fn new(scenario: &'a str) -> Sdk<'a> {
        Sdk {
            scenario,
            flags: Vec::new(),
            agent: None,
            own_acp: false,
            agent_args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// `scenario` over `live`'s agent (`musewire acp -- AGENT…`), in its cwd and with its
    /// environment.
    fn over(scenario: &'a str, live: &'a Live) -> Sdk<'a> {
        Sdk::over_command(scenario, &live.agent)
    }

    fn over_command(scenario: &'a str, agent: &'a Command) -> Sdk<'a> {
        Sdk {
            agent: Some(agent),
            ..Sdk::new(scenario)
        }
    }

    /// `musewire acp`'s flags (before `--`).
    fn flags(mut self, flags: &[&std::ffi::OsStr]) -> Self {
        self.flags.extend(flags.iter().map(|f| f.to_os_string()));
        self
    }

    /// Runs the agent's own ACP mode (`--mode acp`) instead of `musewire acp` over it.
    fn own_acp(mut self, own: bool) -> Self {
        self.own_acp = own;
        self
    }

    /// Arguments after the agent's own.
    fn agent_args(mut self, args: &[&str]) -> Self {
        self.agent_args.extend(args.iter().map(OsString::from));
        self
    }

    /// An environment variable the scenario reads.
    fn env(mut self, key: &'a str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.env.push((key, value.as_ref().to_os_string()));
        self
    }

    /// The ACP agent's program and arguments.
    fn program(&self) -> Vec<OsString> {
        let mut program: Vec<OsString> = Vec::new();
        let agent = self.agent.map(|agent| {
            let args = agent.get_args().map(|a| {
                if self.own_acp && a == "rpc" {
                    "acp".into()
                } else {
                    a.to_os_string()
                }
            });
            std::iter::once(agent.get_program().to_os_string())
                .chain(args)
                .collect::<Vec<_>>()
        });
        if !(self.own_acp && agent.is_some()) {
            program.extend([env!("CARGO_BIN_EXE_musewire").into(), "acp".into()]);
            if agent.is_some() {
                // A real agent's start-up budget is no part of any scenario here: generous,
                // for a loaded machine.
                program.extend(["--ready-timeout".into(), "120".into()]);
            }
            program.extend(self.flags.iter().cloned());
            if agent.is_some() {
                program.push("--".into());
            }
        }
        program.extend(agent.into_iter().flatten());
        program.extend(self.agent_args.iter().cloned());
        program
    }

    /// Runs the client: its summary, or `None` when a peer is missing and
    /// `MUSEWIRE_SKIP_PEERS=1`.
    fn run(&self) -> Option<Value> {
        let sdk = sdk()?;
        let mut node = Command::new("node");
        node.arg(repo_root().join("conformance/reference/acp-client.mjs"))
            .arg(sdk)
            .args(self.program())
            .env("ACP_SCENARIO", self.scenario);
        if let Some(agent) = self.agent {
            let cwd = agent
                .get_current_dir()
                .expect("the agent command has a cwd");
            node.env("ACP_CWD", cwd);
            for (key, value) in agent.get_envs() {
                if let Some(value) = value {
                    node.env(key, value);
                }
            }
        }
        node.envs(self.env.iter().map(|(k, v)| (k, v)));
        let out = node.output().expect("node runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "acp-client.mjs ({} over {:?}) failed: {}\n{stdout}",
            self.scenario,
            self.program(),
            String::from_utf8_lossy(&out.stderr)
        );
        let line = stdout.lines().last().expect("a summary line");
        Some(serde_json::from_str(line).expect("the summary is JSON"))
    }
}

fn kinds(turn: &Value) -> Vec<String> {
    turn["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap().to_owned())
        .collect()
}

fn text_of(turn: &Value, kind: &str) -> String {
    turn["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect()
}

#[test]
fn acp_01_03_04_05_07_the_official_sdk_client_drives_musewire_acp() {
    let sessions = scratch("acp-sdk-sessions");
    let Some(out) = Sdk::new("bundled")
        .flags(&["--session-dir".as_ref(), sessions.as_os_str()])
        .run()
    else {
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

#[test]
fn acp_04_05_the_official_sdk_client_drives_musewire_acp_over_omp_rpc() {
    let Some(omp) = Live::omp("acp-omp-rpc") else {
        return;
    };
    let out = Sdk::over("omp", &omp).run().expect("the SDK is there");
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

/// Side by side: omp's own `omp --mode acp` on the same scripted model and prompts is the
/// structural anchor. Both must give the same update kinds per turn, one call id per tool
/// card and a cancelled stop reason; the differences the seeds make are named below.
#[test]
fn acp_side_by_side_musewire_acp_and_omp_mode_acp_agree_on_structure() {
    let Some(ours_omp) = Live::omp("acp-side-ours") else {
        return;
    };
    let ours = Sdk::over("omp", &ours_omp).run().expect("the SDK is there");
    // omp's own ACP mode, on the same model server.
    let theirs_dir = peers::scratch("acp-side-omp");
    let theirs_agent = peers::omp(&theirs_dir, &ours_omp.server.base_url());
    let theirs = Sdk::over_command("omp", &theirs_agent)
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
            turn_kinds(&ours, turn),
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
    for out in [&ours, &theirs] {
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
    let _ = std::fs::remove_dir_all(&theirs_dir);
}

/// The `tool_call_update`s of a turn that close a card (completed or failed), by call id.
fn closed(turn: &Value) -> Vec<(String, String)> {
    turn["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update")
        .filter(|u| u["status"] == "completed" || u["status"] == "failed")
        .map(|u| {
            (
                u["toolCallId"].as_str().unwrap().to_owned(),
                u["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

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

/// How many updates of a turn are about a dialog's own tool call (`dialog-…`): none since
/// ACP-36.
fn dialog_cards(turn: &Value) -> usize {
    turn["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| {
            u["toolCallId"]
                .as_str()
                .is_some_and(|id| id.starts_with(musewire_core::acp::DIALOG_CALL_PREFIX))
        })
        .count()
}

/// Runs `scenario` (with `env`) over omp with `--approval-mode always-ask` on the scripted
/// model: through `musewire acp`, or omp's own ACP mode when `acp_mode`.
fn approval_scenario(
    scenario: &str,
    tag: &str,
    acp_mode: bool,
    env: &[(&str, &str)],
) -> Option<Value> {
    let omp = Live::omp(tag)?;
    let mut run = Sdk::over(scenario, &omp)
        .own_acp(acp_mode)
        .agent_args(&["--approval-mode", "always-ask"]);
    for (key, value) in env {
        run = run.env(key, value);
    }
    Some(run.run().expect("the SDK is there"))
}

/// ACP-08 through the official client over `omp --mode rpc --approval-mode always-ask`:
/// omp's approval `select` becomes `session/request_permission` about the bash call's own
/// card (its id, title and kind); allow once runs it, reject once fails it, allow always runs
/// it and the next bash call runs unasked.
#[test]
fn acp_08_omp_approvals_reach_the_editor_about_their_call_and_always_is_remembered() {
    let Some(out) = approval_scenario("omp-approval", "acp-omp-approval", false, &[]) else {
        return;
    };
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

/// Side by side (ACP-08, ACP-10): omp's own `omp --mode acp --approval-mode always-ask` on
/// the same scripted turns asks as often and ends each turn as we do, `/session` included.
#[test]
fn acp_08_side_by_side_approvals_musewire_acp_and_omp_mode_acp() {
    let Some(ours) = approval_scenario("omp-approval", "acp-approval-ours", false, &[]) else {
        return;
    };
    let theirs = approval_scenario("omp-approval", "acp-approval-omp", true, &[])
        .expect("the peers were there a moment ago");
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

/// ACP-14, 15, 16, 17, 18 live over `omp --mode rpc` (a model that takes images) with the
/// scripted model server: the image reaches the model request as an `image_url` data uri
/// (the image blob reaches omp as an image too), the embedded context and the link reach its text, audio is noted;
/// a `write` gives a diff from its arguments (no old text), an `edit` (omp's replace mode)
/// a diff of the whole file from its details, a `read` a location with its selector's line.
#[test]
fn acp_14_18_prompt_content_and_cards_live_over_omp_rpc() {
    // A model that takes images (omp drops them for a text-only one), and omp's replace-mode
    // edit (`path`, `old_string`, `new_string`).
    let Some(mut omp) = Live::omp("acp-omp-content").map(Live::with_images) else {
        return;
    };
    omp.agent.env("PI_EDIT_VARIANT", "replace");
    let (server, work) = (&omp.server, omp.work());
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
    check_content_turns(&out);
    assert!(
        text_of(&out["content"], "agent_message_chunk").contains("seen"),
        "{out:#}"
    );
    // The model request of the content turn: its last user message.
    let requests = server.requests();
    let turn = requests
        .iter()
        .find(|r| r.to_string().contains("remember the milk"))
        .expect("a model request with the prompt");
    let user = turn["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap()
        .to_string();
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
    let write = card_updates(&out, 0);
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
    let edit = card_updates(&out, 1);
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
    let read = card_updates(&out, 2);
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
    for pi in Pi::ALL {
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
    }
}

/// ACP-14, 15 side by side with omp's own ACP mode (`omp --mode acp`), the same prompt of
/// text, two images, embedded text and a link through the official client, each over the
/// scripted model server: the model requests carry as many images, and the embedded text
/// in both; ours marks it with its uri and type and keeps the link as a mention.
#[test]
fn acp_14_15_side_by_side_prompt_content_musewire_acp_and_omp_mode_acp() {
    // The last user message of the content turn's model request, for `musewire acp --
    // omp --mode rpc` (`acp_mode` false) or `omp --mode acp`.
    let run = |acp_mode: bool| -> Option<String> {
        let tag = if acp_mode { "theirs" } else { "ours" };
        let omp = Live::omp(&format!("acp-side-content-{tag}"))?.with_images();
        let out = Sdk::over("content", &omp)
            .own_acp(acp_mode)
            .env("ACP_CONTENT_TEXT", "[[text seen]]")
            .run()?;
        assert_eq!(out["content"]["stopReason"], "end_turn", "{tag}: {out:#}");
        let requests = omp.server.requests();
        let turn = requests
            .iter()
            .find(|r| r.to_string().contains("remember the milk"))
            .unwrap_or_else(|| panic!("{tag}: a model request with the prompt"));
        let user = turn["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rfind(|m| m["role"] == "user")
            .unwrap()
            .to_string();
        Some(user)
    };
    let Some(ours) = run(false) else { return };
    let theirs = run(true).expect("the peers were there a moment ago");
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

/// The option of `options` with this id.
fn config_option<'a>(options: &'a Value, id: &str) -> &'a Value {
    options
        .as_array()
        .and_then(|o| o.iter().find(|o| o["id"] == id))
        .unwrap_or_else(|| panic!("no {id} option in {options:#}"))
}

fn option_values(option: &Value) -> Vec<String> {
    option["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap().to_owned())
        .collect()
}

/// ACP-24 through the official client with the bundled agent: session/new offers its two
/// models and omp's thinking levels (it speaks v2); setting the model moves the next turn
/// onto it (`/status` observes it on the assistant message), a level is set, and a value not
/// offered is refused.
#[test]
fn acp_24_the_sdk_client_picks_the_bundled_agents_model_and_thinking_level() {
    let Some(out) = Sdk::new("config")
        .env("ACP_MODEL", "musewire/scripted-large")
        .env("ACP_PROMPT", "hello")
        .run()
    else {
        return;
    };
    let options = &out["configOptions"];
    let models = config_option(options, "model");
    assert_eq!(models["category"], "model");
    assert_eq!(models["currentValue"], "musewire/scripted", "{options:#}");
    assert_eq!(
        option_values(models),
        ["musewire/scripted", "musewire/scripted-large"]
    );
    let thought = config_option(options, "thought_level");
    assert_eq!(option_values(thought).last().unwrap(), "max");
    let set = &out["setModel"]["result"]["configOptions"];
    assert_eq!(
        config_option(set, "model")["currentValue"],
        "musewire/scripted-large",
        "{out:#}"
    );
    let set = &out["setThought"]["result"]["configOptions"];
    assert_eq!(config_option(set, "thought_level")["currentValue"], "high");
    assert_eq!(out["bad"]["code"], -32602, "{out:#}");
    assert_eq!(out["turn"]["stopReason"], "end_turn");
    let status = text_of(&out["status"], "agent_message_chunk");
    assert!(
        status.contains("last observed model: scripted-large"),
        "{status}"
    );
    assert!(status.contains("requested effort: high"), "{status}");
}

/// ACP-24 over a live agent on the scripted model server: the model picked in the editor is
/// the model the next request names.
fn model_switch_reaches_the_model_server(tag: &str, pi: Option<Pi>) {
    let live = match pi {
        None => Live::omp(tag),
        Some(pi) => Live::pi(pi, tag),
    };
    let Some(live) = live else {
        return;
    };
    let out = Sdk::over("config", &live)
        .env("ACP_MODEL", "fake/fake-model-2")
        .env("ACP_PROMPT", "[[text switched]]")
        .run()
        .expect("the SDK is there");
    let server = &live.server;
    let models = config_option(&out["configOptions"], "model");
    assert_eq!(models["currentValue"], "fake/fake-model", "{out:#}");
    assert!(option_values(models).contains(&"fake/fake-model-2".to_owned()));
    let set = &out["setModel"]["result"]["configOptions"];
    assert_eq!(
        config_option(set, "model")["currentValue"],
        "fake/fake-model-2",
        "{out:#}"
    );
    assert_eq!(out["bad"]["code"], -32602, "{out:#}");
    assert_eq!(out["turn"]["stopReason"], "end_turn", "{out:#}");
    let last = server.requests().pop().expect("the model was called");
    assert_eq!(last["model"], "fake-model-2", "{last:#}");
}

#[test]
fn acp_24_the_model_picked_over_omp_rpc_is_the_one_the_model_server_is_asked_for() {
    model_switch_reaches_the_model_server("acp-config-omp", None);
}

#[test]
fn acp_24_the_model_picked_over_pi_rpc_is_the_one_the_model_server_is_asked_for() {
    model_switch_reaches_the_model_server("acp-config-pi", Some(Pi::V1_6));
}

/// Checks the `queue` scenario's log (ACP-27): the prompt sent while the long one ran is
/// shown queued in the running turn and answered after it, its reply (`queued_text`) between
/// the two answers; the one queued behind the cancelled turn is answered `cancelled` after
/// it; the turn after ends `end_turn`.
fn check_queue_log(out: &Value, queued_text: &str) {
    let log = out["log"].as_array().expect("a log");
    let at = |what: &dyn Fn(&Value) -> bool| {
        log.iter()
            .position(what)
            .unwrap_or_else(|| panic!("not in the log: {out:#}"))
    };
    let answer = |name: &str| {
        let i = at(&|e| e["answer"] == name);
        (i, log[i]["stopReason"].as_str().unwrap_or("").to_owned())
    };
    let note = at(&|e| {
        e["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Queued: this prompt runs when the current one ends."))
    });
    let (first, first_reason) = answer("first");
    let (queued, queued_reason) = answer("queued");
    assert!(note < first && first < queued, "{out:#}");
    assert_eq!(first_reason, "end_turn", "{out:#}");
    assert_eq!(queued_reason, "end_turn", "{out:#}");
    let reply: String = log[first..queued]
        .iter()
        .filter(|e| e["update"] == "agent_message_chunk")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(reply.contains(queued_text), "{reply:?}: {out:#}");
    let (cancelled, cancelled_reason) = answer("cancelled");
    let (behind, behind_reason) = answer("behind");
    assert!(queued < cancelled && cancelled < behind, "{out:#}");
    assert_eq!(cancelled_reason, "cancelled", "{out:#}");
    assert_eq!(behind_reason, "cancelled", "{out:#}");
    let (_, after_reason) = answer("after");
    assert_eq!(after_reason, "end_turn", "{out:#}");
    assert_eq!(out["bridgeExit"], 0);
}

/// ACP-27 with the bundled agent: a prompt while a `bash sleep 1` turn runs is queued as a
/// follow-up and answered after it; one behind a cancelled turn is cancelled with it.
#[test]
fn acp_27_a_prompt_while_one_runs_is_queued_bundled_agent() {
    let Some(out) = Sdk::new("queue")
        .env("ACP_QUEUE_LONG", "bash sleep 1")
        .run()
    else {
        return;
    };
    check_queue_log(&out, "hello queued");
    // The bundled agent drops what was queued at an abort: the turn after is its own.
    let after: String = out["log"]
        .as_array()
        .unwrap()
        .iter()
        .skip_while(|e| e["answer"] != "behind")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(!after.contains("never said"), "{after:?}");
}

/// ACP-27 over omp 18.2.3's RPC mode (scripted model): omp takes the follow-up after the
/// running turn, in the same run.
#[test]
fn acp_27_a_prompt_while_one_runs_is_queued_over_omp_rpc() {
    let Some(omp) = Live::omp("acp-omp-queue") else {
        return;
    };
    // The long turn's tool runs long enough for the next prompt to arrive while it runs, on
    // a loaded machine too.
    let out = Sdk::over("queue", &omp)
        .env("ACP_QUEUE_LONG", r#"[[tool bash {"command":"sleep 3"}]]"#)
        .env("ACP_QUEUE_TEXT", "[[text hello queued]]")
        .env("ACP_QUEUE_AFTER", "[[text still here]]")
        .run()
        .expect("the SDK is there");
    check_queue_log(&out, "hello queued");
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
    let Some(out) = Sdk::new("sessions")
        .flags(&["--session-dir".as_ref(), sessions.as_os_str()])
        .run()
    else {
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
    let Some(out) = Sdk::new("fork")
        .flags(&["--session-dir".as_ref(), sessions.as_os_str()])
        .run()
    else {
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
        .flags(&["--session-dir".as_ref(), sessions.as_os_str()])
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
        .flags(&["--session-dir".as_ref(), sessions.as_os_str()])
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

/// ACP-11 over omp 18.2.3's RPC mode: the model server answers the model call 401; the
/// turn shows the provider's error text and ends `end_turn`, and the session goes on.
#[test]
fn acp_11_42_a_providers_401_is_shown_in_the_turn_and_ends_it_auth_required_over_omp_rpc() {
    let Some(omp) = Live::omp("acp-omp-provider-error") else {
        return;
    };
    check_auth_required(&omp);
}

#[test]
fn acp_11_42_a_providers_401_is_shown_in_the_turn_and_ends_it_auth_required_over_pi_rpc() {
    let Some(pi) = Live::pi(Pi::V0_73, "acp-pi-provider-error") else {
        return;
    };
    check_auth_required(&pi);
}

/// ACP-11, ACP-42: the scripted model's 401 shows the provider's text in the turn and fails
/// the prompt with `auth_required` (-32000), so the editor offers sign-in; the next turn runs.
fn check_auth_required(live: &Live) {
    let out = Sdk::over("provider-error", live)
        .env("ACP_PROMPT", "[[status 401 Incorrect API key provided]]")
        .env("ACP_AFTER", "[[text still here]]")
        .run()
        .expect("the SDK is there");
    assert_eq!(out["failed"]["code"], -32000, "{out:#}");
    let shown = text_of(
        &json!({"updates": out["failedUpdates"]}),
        "agent_message_chunk",
    );
    assert!(shown.contains("Incorrect API key provided"), "{shown:?}");
    assert_eq!(out["after"]["result"]["stopReason"], "end_turn", "{out:#}");
    assert_eq!(
        text_of(&out["after"]["result"], "agent_message_chunk"),
        "still here"
    );
}

/// ACP-10, ACP-24 over omp 18.2.3's RPC mode: omp's `/model` builtin is a local turn (its
/// output shown, `end_turn`); the model it switches to moves the editor's model option
/// (`config_option_update`) and is the one the next turn's request names.
#[test]
fn acp_10_24_omps_model_builtin_ends_its_turn_and_moves_the_option() {
    let Some(omp) = Live::omp("acp-omp-model-builtin") else {
        return;
    };
    let out = Sdk::over("omp-model", &omp)
        .env("ACP_MODEL", "fake/fake-model-2")
        .env("ACP_AFTER", "[[text switched by command]]")
        .run()
        .expect("the SDK is there");
    let server = &omp.server;
    let models = config_option(&out["configOptions"], "model");
    assert_eq!(models["currentValue"], "fake/fake-model", "{out:#}");
    let switch = &out["switch"]["result"];
    assert_eq!(switch["stopReason"], "end_turn", "{out:#}");
    assert!(
        text_of(switch, "agent_message_chunk").contains("fake-model-2"),
        "{out:#}"
    );
    let moved = switch["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == "config_option_update")
        .any(|u| {
            config_option(&u["configOptions"], "model")["currentValue"] == "fake/fake-model-2"
        });
    assert!(moved, "the model option moved: {out:#}");
    let after = &out["after"]["result"];
    assert_eq!(after["stopReason"], "end_turn", "{out:#}");
    assert_eq!(text_of(after, "agent_message_chunk"), "switched by command");
    let last = server.requests().pop().expect("the model was called");
    assert_eq!(last["model"], "fake-model-2", "{last:#}");
}

/// ACP-08 over `omp --mode rpc --approval-mode always-ask`: an approval the editor answers
/// `cancelled` denies the call and ends the turn `cancelled`; one it leaves open while it
/// cancels the turn is withdrawn, denied, and the turn ends `cancelled`; the session goes on.
#[test]
fn acp_08_omp_approvals_cancelled_or_left_open_under_a_cancel_end_the_turn_cancelled() {
    let Some(out) = approval_scenario(
        "omp-approval-cancel",
        "acp-omp-approval-cancel",
        false,
        &[("ACP_AFTER", "[[text still here]]")],
    ) else {
        return;
    };
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
    assert!(
        out["held"].is_object(),
        "the open request was asked: {out:#}"
    );
    let after = &out["after"]["result"];
    assert_eq!(after["stopReason"], "end_turn", "{out:#}");
    assert_eq!(text_of(after, "agent_message_chunk"), "still here");
}

/// HOST-10, MCP-03, MCP-05 through the official SDK client: the editor's MCP server
/// (server-everything) reaches each pinned pi through musewire's extension, the scripted model
/// calls its `echo`, the turn's card shows the call, and the result reaches the model.
#[test]
fn host_10_mcp_05_an_editors_mcp_tool_is_called_by_each_pi_through_the_sdk() {
    let everything = peers::mcp_server("everything");
    if !everything.exists() {
        peers::missing("the reference MCP server everything");
        return;
    }
    for pi in Pi::ALL {
        let Some(live) = Live::pi(pi, &format!("acp-sdk-mcp-{}", pi.name())) else {
            return;
        };
        let servers = json!([{"name": "everything", "command": "node",
            "args": [everything.to_string_lossy()], "env": []}])
        .to_string();
        // The MCP server's start-up budget is no part of the scenario: generous, for a
        // loaded machine.
        let out = Sdk::over("mcp", &live)
            .flags(&["--mcp-start-timeout".as_ref(), "60".as_ref()])
            .env("ACP_MCP_SERVERS", &servers)
            .env(
                "ACP_PROMPT",
                r#"[[tool mcp__everything__echo {"message":"through the sdk"}]]"#,
            )
            .run()
            .expect("the SDK is there");
        let server = &live.server;
        let pi = pi.version();
        let turn = &out["turn"]["result"];
        assert_eq!(turn["stopReason"], "end_turn", "pi {pi}: {out:#}");
        let updates = turn["updates"].as_array().expect("updates");
        assert!(
            updates.iter().any(|u| u["sessionUpdate"] == "tool_call"
                && u["title"]
                    .as_str()
                    .is_some_and(|t| t.contains("mcp__everything__echo"))),
            "pi {pi}: the call's card: {out:#}"
        );
        let last = server
            .requests()
            .last()
            .expect("the model was called")
            .to_string();
        assert!(last.contains("Echo: through the sdk"), "pi {pi}: {last}");
        // MCP-01: the editor's end stops the server without a notice to an editor gone.
        assert_eq!(out["bridgeExit"], 0, "pi {pi}: {out:#}");
    }
}

/// Checks the `cancel-next` scenario's log (ACP-28): the next prompt, sent right after the
/// cancel and before the cancelled prompt's answer, is no follow-up (no `Queued` note); the
/// cancelled prompt is answered `cancelled`, then the next one runs as a turn of its own, its
/// reply (`next_text`) between the two answers, and ends `end_turn`; the turn after too.
fn check_cancel_next_log(out: &Value, next_text: &str) {
    let log = out["log"].as_array().expect("a log");
    let at = |what: &dyn Fn(&Value) -> bool| {
        log.iter()
            .position(what)
            .unwrap_or_else(|| panic!("not in the log: {out:#}"))
    };
    let answer = |name: &str| {
        let i = at(&|e| e["answer"] == name);
        (i, log[i]["stopReason"].as_str().unwrap_or("").to_owned())
    };
    let sent = at(&|e| e["sent"] == "next");
    let (cancelled, cancelled_reason) = answer("cancelled");
    let (next, next_reason) = answer("next");
    assert!(
        sent < cancelled,
        "sent before the cancelled answer: {out:#}"
    );
    assert!(cancelled < next, "{out:#}");
    assert_eq!(cancelled_reason, "cancelled", "{out:#}");
    assert_eq!(next_reason, "end_turn", "{out:#}");
    assert!(
        !log.iter()
            .any(|e| e["text"].as_str().is_some_and(|t| t.contains("Queued:"))),
        "no Queued note: {out:#}"
    );
    let reply: String = log[cancelled..next]
        .iter()
        .filter(|e| e["update"] == "agent_message_chunk")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(reply.contains(next_text), "{reply:?}: {out:#}");
    let (_, after_reason) = answer("after");
    assert_eq!(after_reason, "end_turn", "{out:#}");
    assert_eq!(out["bridgeExit"], 0);
}

/// ACP-28 with the bundled agent, as codecompanion.nvim does it: a `bash sleep 5` turn is
/// cancelled and the next prompt sent at once; it runs as the next turn, `end_turn`.
#[test]
fn acp_28_a_prompt_right_after_a_cancel_is_the_next_turn_bundled_agent() {
    let Some(out) = Sdk::new("cancel-next")
        .env("ACP_LONG", "bash sleep 5")
        .env("ACP_NEXT", "hello next")
        .run()
    else {
        return;
    };
    check_cancel_next_log(&out, "hello next");
}

/// The `cancel-next` scenario over `live`'s agent and the scripted model server (ACP-28).
fn cancel_next_over(live: &Live) -> Value {
    Sdk::over("cancel-next", live)
        .env("ACP_LONG", r#"[[tool bash {"command":"sleep 5"}]]"#)
        .env("ACP_NEXT", "[[text hello next]]")
        .env("ACP_AFTER", "[[text still here]]")
        .run()
        .expect("the SDK is there")
}

/// ACP-28 over omp's RPC mode (scripted model): the prompt sent right after the cancel is
/// omp's next run, not a follow-up inside the aborted one.
#[test]
fn acp_28_a_prompt_right_after_a_cancel_is_the_next_turn_over_omp_rpc() {
    let Some(omp) = Live::omp("acp-omp-cancel-next") else {
        return;
    };
    check_cancel_next_log(&cancel_next_over(&omp), "hello next");
}

/// ACP-28 over each pinned `pi --mode rpc` (scripted model).
#[test]
fn acp_28_a_prompt_right_after_a_cancel_is_the_next_turn_over_each_pi_rpc() {
    for pi in Pi::ALL {
        let Some(live) = Live::pi(pi, &format!("acp-{}-cancel-next", pi.name())) else {
            return;
        };
        check_cancel_next_log(&cancel_next_over(&live), "hello next");
    }
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

/// The `turns` scenario's turn `n` (ACP-05).
fn turn_of(out: &Value, n: usize) -> &Value {
    &out["turns"][n]
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

/// The text content of a turn's last finished tool card.
fn card_text(turn: &Value) -> String {
    turn["updates"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed")
        .and_then(|u| u["content"].as_array())
        .and_then(|c| c.iter().find_map(|c| c["content"]["text"].as_str()))
        .unwrap_or_default()
        .to_owned()
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
    for pi in Pi::ALL {
        let Some(live) = Live::pi(pi, &format!("acp-{}-whole-answer", pi.name())) else {
            return;
        };
        check_whole_answer_over(&live, &format!("pi {}", pi.version()));
    }
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
        .flags(&["--session-dir".as_ref(), sessions.as_os_str()])
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
/// before the next prompt); a prompt: it runs in a new agent on the same session file, after
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
        .flags(&["--session-dir".as_ref(), sessions.as_os_str()])
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
    for pi in Pi::ALL {
        let Some(live) = Live::pi(pi, &format!("acp-{}-restart", pi.name())) else {
            return;
        };
        check_restart_between_turns_over(&live, &format!("pi {}", pi.version()));
    }
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
    for terminal in [false, true] {
        let Some(omp) = Live::omp(&format!("acp-omp-command-{terminal}")) else {
            return;
        };
        let out = Sdk::over("command", &omp)
            .env("ACP_COMMAND", &script)
            .env("ACP_TERMINAL", if terminal { "1" } else { "0" })
            .run()
            .expect("the SDK is there");
        check_command_card(&out, terminal);
    }
}

/// ACP-29, ACP-30 over each pi's RPC mode (scripted model), as a terminal.
#[test]
fn acp_29_30_a_commands_output_streams_onto_its_card_over_each_pi_rpc() {
    let script = format!(r#"[[tool bash {{"command":"{COMMAND}"}}]]"#);
    for pi in Pi::ALL {
        let Some(live) = Live::pi(pi, &format!("acp-{}-command", pi.name())) else {
            return;
        };
        let out = Sdk::over("command", &live)
            .env("ACP_COMMAND", &script)
            .env("ACP_TERMINAL", "1")
            .run()
            .expect("the SDK is there");
        check_command_card(&out, true);
    }
}

/// The reference MCP server everything, run over HTTP in `mode` (`streamableHttp`, `sse`)
/// on a free loopback port; killed when dropped.
struct HttpEverything {
    child: std::process::Child,
    port: u16,
}

impl HttpEverything {
    /// Started and listening, or `None` when it is not installed (and skipping is allowed).
    fn start(mode: &str) -> Option<HttpEverything> {
        let script = peers::mcp_server("everything");
        if !script.exists() {
            peers::missing("the reference MCP server everything");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("node")
            .arg(script)
            .arg(mode)
            .env("PORT", port.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("node runs");
        let server = HttpEverything { child, port };
        // Generous: node's start on a loaded 2-core machine.
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(60),
                "server-everything ({mode}) did not listen on {port}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Some(server)
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// MCP-18 through the official SDK client: the editor's server-everything over streamable
/// HTTP (`http`) and over HTTP+SSE (`sse`), with a header the bridge sends but never shows;
/// the bundled agent calls its `echo` and the tool's answer reaches the turn.
#[test]
fn mcp_18_an_editors_http_and_sse_mcp_servers_reach_the_bundled_agent_through_the_sdk() {
    const TOKEN: &str = "Bearer mcp-18-not-shown";
    for (mode, kind, path) in [("streamableHttp", "http", "mcp"), ("sse", "sse", "sse")] {
        let Some(server) = HttpEverything::start(mode) else {
            return;
        };
        let sessions = scratch(&format!("acp-sdk-mcp-{kind}"));
        let url = format!("http://127.0.0.1:{}/{path}", server.port);
        let servers = json!([{"type": kind, "name": "everything", "url": url,
            "headers": [{"name": "Authorization", "value": TOKEN}]}])
        .to_string();
        let message = format!("over {kind}");
        let prompt = format!(
            "call mcp__everything__echo {}",
            json!({ "message": message })
        );
        // The server's start-up budget is no part of the scenario: generous, for a loaded
        // machine.
        let Some(out) = Sdk::new("mcp")
            .flags(&[
                "--mcp-start-timeout".as_ref(),
                "60".as_ref(),
                "--session-dir".as_ref(),
                sessions.as_os_str(),
            ])
            .env("ACP_MCP_SERVERS", &servers)
            .env("ACP_PROMPT", &prompt)
            .run()
        else {
            return;
        };
        // Each step it depends on: http and sse advertised, the session opened, the turn.
        let caps = &out["initialize"]["agentCapabilities"]["mcpCapabilities"];
        assert_eq!(caps, &json!({"http": true, "sse": true}), "{kind}: {out:#}");
        assert!(
            out["turn"]["result"].is_object(),
            "{kind}: the turn was answered: {out:#}"
        );
        let turn = &out["turn"]["result"];
        assert_eq!(turn["stopReason"], "end_turn", "{kind}: {out:#}");
        let text = text_of(turn, "agent_message_chunk");
        assert!(
            text.contains(&format!("mcp__everything__echo returned: Echo: {message}")),
            "{kind}: {text:?}: {out:#}"
        );
        // MCP-15: the header's value never reached the editor.
        assert!(!out.to_string().contains("mcp-18-not-shown"), "{out:#}");
        // The editor's end ends the bridge cleanly, the server's session with it (DELETE).
        assert_eq!(out["bridgeExit"], 0, "{kind}: {out:#}");
        drop(server);
    }
}

/// MCP-18, HOST-10 through the official SDK client: the editor's server-everything over
/// streamable HTTP reaches the newest pinned pi through musewire's extension; the scripted
/// model calls its `echo` and the result reaches the model.
#[test]
fn mcp_18_host_10_an_editors_http_mcp_server_reaches_pi_through_the_sdk() {
    let Some(server) = HttpEverything::start("streamableHttp") else {
        return;
    };
    let pi = *Pi::ALL.last().expect("a pinned pi");
    let Some(live) = Live::pi(pi, "acp-sdk-mcp-http-pi") else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let servers =
        json!([{"type": "http", "name": "everything", "url": url, "headers": []}]).to_string();
    // The MCP server's start-up budget is no part of the scenario: generous, for a loaded
    // machine.
    let out = Sdk::over("mcp", &live)
        .flags(&["--mcp-start-timeout".as_ref(), "60".as_ref()])
        .env("ACP_MCP_SERVERS", &servers)
        .env(
            "ACP_PROMPT",
            r#"[[tool mcp__everything__echo {"message":"over http to pi"}]]"#,
        )
        .run()
        .expect("the SDK is there");
    let pi = pi.version();
    assert!(
        out["turn"]["result"].is_object(),
        "pi {pi}: the turn was answered: {out:#}"
    );
    let turn = &out["turn"]["result"];
    assert_eq!(turn["stopReason"], "end_turn", "pi {pi}: {out:#}");
    let updates = turn["updates"].as_array().expect("updates");
    assert!(
        updates.iter().any(|u| u["sessionUpdate"] == "tool_call"
            && u["title"]
                .as_str()
                .is_some_and(|t| t.contains("mcp__everything__echo"))),
        "pi {pi}: the call's card: {out:#}"
    );
    let last = live
        .server
        .requests()
        .last()
        .expect("the model was called")
        .to_string();
    assert!(last.contains("Echo: over http to pi"), "pi {pi}: {last}");
    assert_eq!(out["bridgeExit"], 0, "pi {pi}: {out:#}");
}

/// ACP-40, ACP-41 over omp 18.2.3's RPC mode through the official SDK, as an editor offering
/// terminal sign-in and url and form elicitation: omp's methods (its own sign-in first, a
/// login per browser provider, the terminal method last); `agent` answers `{}`; the Anthropic
/// login reaches its sign-in page as a URL elicitation tied to `authenticate`, which the editor
/// declines before omp reaches any network: the sign-in is answered -32800.
#[test]
fn acp_40_41_omps_sign_in_methods_and_its_login_page_as_a_url_elicitation_through_the_sdk() {
    let Some(omp) = Live::omp("acp-omp-sign-in") else {
        return;
    };
    let out = Sdk::over("auth", &omp)
        .env("ACP_LOGIN_METHOD", "login-anthropic")
        .run()
        .expect("the SDK is there");
    let methods = out["initialize"]["authMethods"].as_array().unwrap();
    let ids: Vec<&str> = methods.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "agent",
            "login-anthropic",
            "login-openai-codex",
            "login-google-gemini-cli",
            "login-google-antigravity",
            "terminal"
        ],
        "{out:#}"
    );
    assert_eq!(methods[5]["type"], "terminal");
    assert_eq!(methods[5]["args"], json!(["--musewire-terminal-login"]));
    assert_eq!(out["agentMethod"]["result"], json!({}), "{out:#}");
    let page = &out["elicitations"][0];
    assert_eq!(page["mode"], "url", "{out:#}");
    assert!(page["requestId"].is_number(), "{page:#}");
    assert!(
        page["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("https://claude.ai/oauth/authorize")),
        "{page:#}"
    );
    assert_eq!(out["login"]["code"], -32800, "{out:#}");
    assert_eq!(out["bridgeExit"], 0);
}

/// ACP-40 over pi 0.73.1's RPC mode: pi has no RPC login, so its own sign-in and the terminal
/// method, which `musewire acp` runs as pi's interactive mode.
#[test]
fn acp_40_pis_sign_in_methods_through_the_sdk() {
    let Some(pi) = Live::pi(Pi::V0_73, "acp-pi-sign-in") else {
        return;
    };
    let out = Sdk::over("auth", &pi).run().expect("the SDK is there");
    let methods = out["initialize"]["authMethods"].as_array().unwrap();
    let ids: Vec<&str> = methods.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["agent", "terminal"], "{out:#}");
    assert_eq!(out["agentMethod"]["result"], json!({}), "{out:#}");
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
    for pi in Pi::ALL {
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
    for pi in Pi::ALL {
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
    }
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
