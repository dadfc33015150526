//! `musewire messages` against the real reference agent: the paged walk writes the whole
//! history as JSONL (PAGE-07), at any page size, and nothing extra when not on a terminal.

use std::process::Command;

use musewire_live::model_server::ModelServer;
use musewire_live::peers;
use serde_json::Value;

#[test]
fn page_07_messages_writes_the_whole_history_in_pages() {
    if !peers::installed_or_skip() {
        return;
    }
    let server = ModelServer::start().unwrap();
    let dir = peers::scratch("cli-messages");
    let omp = peers::omp(&dir, &server.base_url());
    // The agent is started by a wrapper that first feeds it five bash commands (id-less: their
    // responses reach musewire as unmatched frames), so the history has five messages when
    // musewire asks for it, in pages of 2 (three pages).
    let mut agent_line = vec![omp.get_program().to_string_lossy().into_owned()];
    agent_line.extend(omp.get_args().map(|a| a.to_string_lossy().into_owned()));
    let quoted: Vec<String> = agent_line.iter().map(|a| format!("'{a}'")).collect();
    // Each command leaves a marker; the wrapper waits for all five (and a second for the
    // agent to record them) before it passes musewire's own commands on.
    let marks = dir.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let marks = marks.display();
    let feed: String = (0..5)
        .map(|i| format!("printf '%s\\n' '{{\"type\":\"bash\",\"command\":\"echo line {i}; touch {marks}/{i}\"}}'; "))
        .collect();
    let wait = format!("while [ $(ls {marks} | wc -l) -lt 5 ]; do sleep 0.1; done; sleep 1; ");
    let wrapper = format!("{{ {feed}{wait}cat; }} | {}", quoted.join(" "));
    let out_file = dir.join("messages.jsonl");
    let mut command = Command::new(env!("CARGO_BIN_EXE_musewire"));
    command
        .args(["messages", "--page-size", "2", "-o"])
        .arg(&out_file)
        .args(["--", "sh", "-c", &wrapper]);
    command.env_clear();
    for (key, value) in omp.get_envs() {
        if let Some(value) = value {
            command.env(key, value);
        }
    }
    command.current_dir(omp.get_current_dir().unwrap());
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "nothing extra when not on a terminal"
    );
    let written: Vec<Value> = std::fs::read_to_string(&out_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The agent runs bash commands concurrently: they are recorded in the order they end.
    let mut outputs: Vec<&str> = written
        .iter()
        .filter_map(|m| m["output"].as_str())
        .collect();
    outputs.sort_unstable();
    assert_eq!(
        outputs,
        ["line 0\n", "line 1\n", "line 2\n", "line 3\n", "line 4\n"],
        "{written:?}"
    );
}
