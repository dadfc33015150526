//! `musewire prompt` against the real reference agent, the LLM played by the scripted model
//! server: a turn in both output modes, and a host tool through `--host-tool`; a turn with each
//! pinned pi.

use std::process::{Command, Output};

use musewire_live::model_server::ModelServer;
use musewire_live::peers::{self, Pi};

/// `musewire prompt ARGS… -- <omp>`, run with the agent's environment and directory.
fn prompt(name: &str, server: &ModelServer, args: &[&str]) -> Output {
    prompt_to(peers::omp(&peers::scratch(name), &server.base_url()), args)
}

/// `musewire prompt ARGS… -- <agent>`, run with the agent's environment and directory.
fn prompt_to(agent: Command, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_musewire"));
    command
        .arg("prompt")
        .args(args)
        .arg("--")
        .arg(agent.get_program())
        .args(agent.get_args());
    command.env_clear();
    for (key, value) in agent.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    if let Some(dir) = agent.get_current_dir() {
        command.current_dir(dir);
    }
    command.output().expect("run musewire prompt")
}

/// CALL-03, CALL-09: the turn streams to stdout and the command exits 0 when it ends.
#[test]
fn prompt_streams_a_turn_as_text_and_as_json() {
    if !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().unwrap();
    let out = prompt(
        "cli-text",
        &server,
        &["[[think Considering.]] Hello from the model."],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("Considering.") && stdout.contains("Hello from the model."),
        "{stdout}"
    );
    assert!(
        !stdout.contains("\x1b["),
        "no colour when stdout is not a terminal"
    );

    let out = prompt("cli-json", &server, &["--json", "[[text Json mode.]]"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    assert!(events.iter().any(|e| e["event"] == "turn_finished"));
    let text: String = events
        .iter()
        .filter(|e| e["frame"]["assistantMessageEvent"]["type"] == "text_delta")
        .filter_map(|e| e["frame"]["assistantMessageEvent"]["delta"].as_str())
        .collect();
    assert_eq!(text, "Json mode.");
}

/// FRAME-03, CALL-03, CALL-09 with each pinned pi (0.73.1, 1.6.0), one `--json` run each:
/// no ready frame, so v1 once `--ready-timeout` passes; the thinking and the text stream as
/// the deltas of pi 1.6's delta-only `message_update`s, the turn finishes and the command
/// exits 0 at its end (pi 1.6's `agent_settled` after it changes nothing). How a turn prints
/// as text is the CLI's, checked over omp and the bundled agent.
#[test]
fn frame_03_call_09_prompt_streams_a_turn_with_each_pinned_pi() {
    if !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().unwrap();
    // Each pi at once, a thread each (their own scratch folders; the scripted server
    // answers each request on its own): one's start-up does not wait for the other's.
    std::thread::scope(|scope| {
        let server = &server;
        let runs: Vec<_> = Pi::ALL
            .into_iter()
            .map(|pi| {
                scope.spawn(move || {
                    let dir = peers::scratch(&format!("cli-{}", pi.name()));
                    let out = prompt_to(
                        peers::pi_version(pi, &dir, &server.base_url()),
                        &[
                            "--ready-timeout",
                            "1",
                            "--json",
                            "[[think Considering.]] Hello from pi.",
                        ],
                    );
                    let stdout = String::from_utf8_lossy(&out.stdout);
                    assert!(
                        out.status.success(),
                        "pi {}: {stdout}\n{}",
                        pi.version(),
                        String::from_utf8_lossy(&out.stderr)
                    );
                    let events: Vec<serde_json::Value> = stdout
                        .lines()
                        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
                        .collect();
                    assert!(
                        events.iter().any(|e| e["event"] == "turn_finished"),
                        "pi {}: {stdout}",
                        pi.version()
                    );
                    let deltas = |kind: &str| -> String {
                        events
                            .iter()
                            .filter(|e| e["frame"]["assistantMessageEvent"]["type"] == kind)
                            .filter_map(|e| e["frame"]["assistantMessageEvent"]["delta"].as_str())
                            .collect()
                    };
                    assert_eq!(
                        deltas("thinking_delta"),
                        "Considering.",
                        "pi {}: {stdout}",
                        pi.version()
                    );
                    assert_eq!(
                        deltas("text_delta").trim(),
                        "Hello from pi.",
                        "pi {}: {stdout}",
                        pi.version()
                    );
                })
            })
            .collect();
        for run in runs {
            if let Err(panic) = run.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// HOST-01, HOST-02: `--host-tool NAME=CMD` runs CMD with the arguments on stdin; its stdout
/// is the result the model sees.
#[test]
fn prompt_host_tool_runs_a_command() {
    if !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().unwrap();
    let out = prompt(
        "cli-hosttool",
        &server,
        &[
            "--host-tool",
            "shout=tr a-z A-Z",
            "[[tool shout {\"word\":\"quiet\"}]]",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("shout returned: {\"WORD\":\"QUIET\"}"),
        "{stdout}"
    );
}

/// A bad agent command fails with one clear line and a non-zero exit.
#[test]
fn prompt_with_a_missing_agent_fails_clearly() {
    let out = Command::new(env!("CARGO_BIN_EXE_musewire"))
        .args([
            "prompt",
            "hi",
            "--timeout",
            "20",
            "--",
            "/nonexistent/agent",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("musewire prompt: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// The README's main job: `musewire prompt TEXT` with no agent command runs the bundled
/// `musewire agent`, whose scripted model echoes a plain prompt; `think` streams thinking.
#[test]
fn prompt_runs_the_bundled_agent_by_default() {
    let out = Command::new(env!("CARGO_BIN_EXE_musewire"))
        .args(["prompt", "hello from musewire", "--timeout", "60"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), "hello from musewire");

    let out = Command::new(env!("CARGO_BIN_EXE_musewire"))
        .args(["prompt", "--json", "think it over", "--timeout", "60"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kinds: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|e| {
            e["frame"]["assistantMessageEvent"]["type"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert!(
        kinds.iter().any(|k| k == "thinking_delta") && kinds.iter().any(|k| k == "text_delta"),
        "{kinds:?}"
    );
}
