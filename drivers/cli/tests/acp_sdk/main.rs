//! The official ACP client, `@agentclientprotocol/sdk` 2.4.0 run by node
//! (conformance/reference/acp-client.mjs, the 2.x `client().connectWith(…)` API), drives
//! `musewire acp` over the bundled agent, omp and each pinned pi on the scripted model server,
//! and omp's own ACP mode beside it. One runner, [`Sdk`], does every run: the program
//! assembled, the client run, a failed step (`initialize`, `session/new`, `session/load`)
//! failing there with the bridge's and the agent's stderr, the summary line parsed. The
//! tests are grouped by topic, one module each (the rule IDs are in each test's name).
//!
//! Needs the peers (`bash conformance/peers/install.sh`) and `node`. Without them the test
//! fails, unless `MUSEWIRE_SKIP_PEERS=1` says to skip (`musewire_live::peers::missing`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use musewire_live::model_server::ModelServer;
use musewire_live::peers::{self, Pi};
use serde_json::{json, Value};

mod config;
mod content;
mod dialogs;
mod mcp;
mod prompts;
mod sessions;
mod turns;

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

    /// `musewire acp --session-dir DIR`: the bridge's session folder (ACP-26).
    fn session_dir(self, dir: &std::path::Path) -> Self {
        self.flags(&["--session-dir".as_ref(), dir.as_os_str()])
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

/// The `turns` scenario's turn `n` (ACP-05).
fn turn_of(out: &Value, n: usize) -> &Value {
    &out["turns"][n]
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

/// Runs `check` for each of `cases` at once, a thread each: for runs that share nothing (each
/// its own agent, model server and scratch folder), so that one run's waits (an agent's
/// start-up, a command's sleep) are not added to the next one's. A failure of any case is the
/// test's failure, with that case's message.
fn each_at_once<T: Sync>(cases: &[T], check: impl Fn(&T) + Sync) {
    std::thread::scope(|scope| {
        let runs: Vec<_> = cases
            .iter()
            .map(|case| scope.spawn(|| check(case)))
            .collect();
        for run in runs {
            if let Err(panic) = run.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}
