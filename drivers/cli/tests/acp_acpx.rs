//! acpx 0.19.1, openclaw's headless ACP command-line client, as the editor: it drives the built
//! `musewire acp` (`acpx --agent "musewire acp" …`) over the bundled agent: one-shot `exec`
//! turns (text, a tool call, a todo plan, `/status`), a persistent session (`sessions new`, a
//! prompt, `sessions list`, `sessions close`), `cancel` of a long turn; a text turn over
//! `omp --mode rpc` and a tool turn over each pinned `pi --mode rpc` on the scripted model. The assertions are on what acpx prints and its exit
//! status.
//!
//! acpx keeps its state under `~/.acpx`: each test points HOME and the XDG folders at a scratch
//! folder of its own. acpx needs node >= 22.13; under an older node it runs under the pinned bun
//! (`musewire_live::peers::modern_runtime`). Needs the peers (`bash conformance/peers/install.sh`);
//! without them the test fails, unless `MUSEWIRE_SKIP_PEERS=1` says to skip.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use musewire_live::peers::{self, Pi};

/// The longest any one acpx run may take.
const DEADLINE: Duration = Duration::from_secs(180);

/// acpx with its scratch home, the agent command it starts and the environment both get.
struct Acpx {
    work: PathBuf,
    agent: String,
    env: Vec<(OsString, OsString)>,
}

/// Whether the peers (the agents and acpx) are installed; a missing one fails the test
/// unless `MUSEWIRE_SKIP_PEERS=1` ([`peers::missing`]).
fn acpx_or_skip() -> bool {
    if !peers::installed_or_skip() {
        return false;
    }
    let ok = peers::acpx_cli().exists();
    if !ok {
        peers::missing("acpx");
    }
    ok
}

/// A fresh scratch folder under the target directory, with `home/` and `work/`.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("home")).unwrap();
    std::fs::create_dir_all(dir.join("work")).unwrap();
    dir
}

/// One word of an acpx `--agent` command line, quoted as acpx's splitter reads it.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The `--agent` command line for `program args…`.
fn command_line<'a>(words: impl IntoIterator<Item = &'a std::ffi::OsStr>) -> String {
    words
        .into_iter()
        .map(|w| quote(&w.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn musewire() -> &'static std::ffi::OsStr {
    env!("CARGO_BIN_EXE_musewire").as_ref()
}

impl Acpx {
    /// acpx driving `musewire acp` over the bundled agent, in a scratch home of its own.
    fn bundled(name: &str) -> Acpx {
        let dir = scratch(name);
        let agent = command_line([musewire(), "acp".as_ref()]);
        Acpx::with_home(&dir.join("home"), dir.join("work"), agent, Vec::new())
    }

    fn with_home(
        home: &Path,
        work: PathBuf,
        agent: String,
        mut env: Vec<(OsString, OsString)>,
    ) -> Acpx {
        env.push(("PATH".into(), std::env::var_os("PATH").unwrap_or_default()));
        env.push(("HOME".into(), home.into()));
        for (key, sub) in [
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_STATE_HOME", ".local/state"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_CACHE_HOME", ".cache"),
        ] {
            env.push((key.into(), home.join(sub).into()));
        }
        env.push(("NO_COLOR".into(), "1".into()));
        Acpx { work, agent, env }
    }

    /// `acpx --cwd WORK --agent AGENT --approve-all … ARGS…`, not yet started.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(peers::modern_runtime());
        command
            .arg(peers::acpx_cli())
            .arg("--cwd")
            .arg(&self.work)
            .args(["--approve-all", "--timeout", "120", "--ttl", "2"])
            .arg("--agent")
            .arg(&self.agent)
            .args(args)
            .current_dir(&self.work)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null());
        command
    }

    /// Runs acpx to its end (killed past [`DEADLINE`]).
    fn run(&self, args: &[&str]) -> Run {
        let child = self
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("acpx starts");
        Run::finish(child)
    }
}

/// What one acpx run printed, and how it ended.
struct Run {
    output: Output,
}

impl Run {
    fn finish(mut child: Child) -> Run {
        let start = Instant::now();
        while child.try_wait().expect("wait").is_none() {
            if start.elapsed() > DEADLINE {
                let _ = child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Run {
            output: child.wait_with_output().expect("acpx output"),
        }
    }

    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    /// The run succeeded; its stdout.
    fn ok(&self) -> String {
        assert!(
            self.output.status.success(),
            "acpx failed ({}): stdout {}\nstderr {}",
            self.output.status,
            self.stdout(),
            String::from_utf8_lossy(&self.output.stderr)
        );
        self.stdout()
    }
}

fn assert_has(out: &str, wanted: &[&str]) {
    for w in wanted {
        assert!(out.contains(w), "no {w:?} in acpx's output:\n{out}");
    }
}

/// ACP-01, ACP-03, ACP-05 through acpx's one-shot `exec`: the echo as the only text, a tool
/// call's card from running to completed with its output, the todo plan's entries, and
/// `/status` answered locally.
#[test]
fn acp_01_03_05_acpx_exec_text_tool_plan_and_status_over_the_bundled_agent() {
    if !acpx_or_skip() {
        return;
    }
    let acpx = Acpx::bundled("acpx-exec");

    let quiet = acpx
        .run(&["--format", "quiet", "exec", "hello from acpx"])
        .ok();
    assert_eq!(quiet.trim(), "hello from acpx");
    let text = acpx.run(&["exec", "hello from acpx"]).ok();
    assert_has(&text, &["hello from acpx", "[done] end_turn"]);

    let tool = acpx.run(&["exec", "bash echo hi"]).ok();
    assert_has(
        &tool,
        &[
            // ACP-19: the card opens pending, titled with the tool's name, as the model
            // streams the arguments (acpx prints the first title it sees, as running).
            "[tool] bash (running)",
            "[tool] echo hi (completed)",
            "kind: execute",
            "bash returned: hi",
            "[done] end_turn",
        ],
    );

    let plan = acpx.run(&["exec", "todo A; B"]).ok();
    assert_has(
        &plan,
        &[
            "[tool] todo (completed)",
            "[plan]",
            "- [in_progress] A",
            "- [pending] B",
            "[done] end_turn",
        ],
    );

    let status = acpx.run(&["exec", "/status bash echo not-run"]).ok();
    assert_has(
        &status,
        &[
            "Status (local command: no model turn was started)",
            "approval policy: unknown",
            "[done] end_turn",
        ],
    );
    assert!(!status.contains("[tool]"), "{status}");
    assert!(!status.contains("not-run"), "{status}");
}

/// ACP-06, ACP-05 through acpx's persistent session: `sessions new` names the bridge's
/// session, a prompt runs in it (acpx loads it), `sessions list` shows it, a long tool turn is
/// cancelled by `acpx cancel` (the card fails, the turn ends `cancelled`), and `sessions
/// close` marks it closed.
#[test]
fn acp_05_06_acpx_persistent_session_prompt_list_cancel_and_close() {
    if !acpx_or_skip() {
        return;
    }
    let acpx = Acpx::bundled("acpx-sessions");

    let id = acpx.run(&["sessions", "new"]).ok().trim().to_owned();
    assert!(id.starts_with("session-"), "{id}");
    let said = acpx.run(&["hello persistent"]).ok();
    assert_has(&said, &["hello persistent", "[done] end_turn"]);
    let listed = acpx.run(&["sessions", "list"]).ok();
    let row = listed
        .lines()
        .find(|l| l.starts_with(&id))
        .unwrap_or_else(|| panic!("{id} not listed:\n{listed}"));
    assert!(!row.contains("[closed]"), "{row}");
    assert!(row.contains(&*acpx.work.to_string_lossy()), "{row}");

    // A long turn, cancelled once its tool card shows.
    let mut long = acpx
        .command(&["bash sleep 20"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("acpx starts");
    let (lines, seen) = mpsc::channel();
    let stdout = long.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = lines.send(line);
        }
        all
    });
    // ACP-19: opened pending with the tool's name (acpx shows it as running).
    let running = "[tool] bash (running)";
    let start = Instant::now();
    loop {
        match seen.recv_timeout(Duration::from_millis(200)) {
            Ok(line) if line.contains(running) => break,
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let out = long.wait_with_output().expect("acpx ends");
                panic!(
                    "the long turn ended early ({}): {}\n{}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr),
                    reader.join().unwrap_or_default()
                );
            }
        }
        assert!(start.elapsed() < DEADLINE, "no running tool card");
    }
    let cancel = acpx.run(&["cancel"]).ok();
    assert_has(&cancel, &["cancel requested"]);
    let long = Run::finish(long);
    let printed = reader.join().unwrap();
    assert!(long.output.status.success(), "{printed}");
    assert_has(&printed, &["[tool] sleep 20 (failed)", "[done] cancelled"]);

    let closed = acpx.run(&["sessions", "close"]).ok();
    assert_eq!(closed.trim(), id);
    // ACP-26: with `sessionCapabilities.list` advertised acpx lists through the agent's
    // `session/list`: the closed session is still stored there (and loadable), with its cwd
    // and its `updatedAt`. An acpx that lists its own records marks it closed.
    let listed = acpx.run(&["sessions", "list"]).ok();
    let work = acpx.work.to_string_lossy().into_owned();
    assert!(
        listed.lines().any(|l| {
            l.starts_with(&format!("{id} [closed]"))
                || (l.starts_with(&format!("{id}\t")) && l.contains(&work) && l.contains("Z"))
        }),
        "{listed}"
    );
}

/// acpx driving `musewire acp -- AGENT…` for a live peer's command (its environment, less
/// HOME and PATH, which acpx's scratch home sets, and its working directory).
fn over_peer(dir: &Path, agent: &Command) -> Acpx {
    // The agent's start-up budget (ACP-13) is no part of these runs: a pi started beside
    // another on a loaded 2-core machine has taken over the default 30 s.
    let mut words: Vec<&std::ffi::OsStr> = vec![
        musewire(),
        "acp".as_ref(),
        "--ready-timeout".as_ref(),
        "120".as_ref(),
        "--".as_ref(),
    ];
    words.push(agent.get_program());
    words.extend(agent.get_args());
    let env: Vec<(OsString, OsString)> = agent
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
        .filter(|(k, _)| k != "HOME" && k != "PATH")
        .collect();
    let work = agent
        .get_current_dir()
        .expect("the peer's command has a cwd")
        .to_owned();
    Acpx::with_home(&dir.join("home"), work, command_line(words), env)
}

/// ACP-04 through acpx over `musewire acp -- omp --mode rpc` on the scripted model: the
/// scripted text as the turn's only text, and a thought shown, ended `end_turn`.
#[test]
fn acp_04_acpx_exec_text_turn_over_omp_rpc() {
    if !acpx_or_skip() {
        return;
    }
    let server = musewire_live::model_server::ModelServer::start().expect("model server");
    let dir = peers::scratch("acpx-omp");
    let acpx = over_peer(&dir, &peers::omp(&dir, &server.base_url()));
    let quiet = acpx
        .run(&[
            "--format",
            "quiet",
            "exec",
            "[[text hello from acpx over omp]]",
        ])
        .ok();
    assert_eq!(quiet.trim(), "hello from acpx over omp");
    let text = acpx.run(&["exec", "[[think weighing it]] done"]).ok();
    assert_has(&text, &["done", "[done] end_turn"]);
    assert!(text.contains("weighing it"), "the thought is shown: {text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// ACP-05, CALL-06 (pi versions) through acpx over `musewire acp -- pi --mode rpc`, each
/// pinned pi at once: a `bash` tool call's card from running to completed with its output,
/// the model's answer, `end_turn`, and no unknown item card (pi 1.6's `agent_settled` and
/// delta-only updates are known frames).
#[test]
fn acp_05_call_06_acpx_exec_tool_turn_over_each_pinned_pi() {
    if !acpx_or_skip() {
        return;
    }
    let server = musewire_live::model_server::ModelServer::start().expect("model server");
    let base_url = server.base_url();
    let runs: Vec<_> = Pi::ALL
        .into_iter()
        .map(|pi| {
            let base_url = base_url.clone();
            std::thread::spawn(move || {
                let dir = peers::scratch(&format!("acpx-{}", pi.name()));
                let acpx = over_peer(&dir, &peers::pi_version(pi, &dir, &base_url));
                let out = acpx
                    .run(&["exec", r#"[[tool bash {"command":"echo hi"}]]"#])
                    .ok();
                let _ = std::fs::remove_dir_all(&dir);
                (pi, out)
            })
        })
        .collect();
    for run in runs {
        let (pi, out) = run.join().expect("the acpx run");
        assert_has(
            &out,
            &[
                // ACP-19: the card opens pending, titled with the tool's name, as the model
                // streams the arguments (acpx prints the first title it sees, as running).
                "[tool] bash (running)",
                "[tool] echo hi (completed)",
                "kind: execute",
                "bash returned: hi",
                "[done] end_turn",
            ],
        );
        assert!(!out.contains("unknown item"), "pi {}: {out}", pi.version());
        assert_eq!(
            out.matches("[tool]").count(),
            2,
            "pi {}: {out}",
            pi.version()
        );
    }
}
