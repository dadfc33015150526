//! What the drivers' backpressure tests share about the flooding fake agent (`flood_agent.py`,
//! beside this file): where it is, and how to watch it and this process. Included by each
//! driver's tests with `#[path = "../../flood/probe.rs"] mod probe;`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a test waits for a process to start, answer or end: generous, as the tests run
/// on busy machines (a passing test never waits this long).
pub const BUSY_WAIT: Duration = Duration::from_secs(60);

/// The fake agent (run with `python3`; its docstring lists its modes).
pub const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../flood/flood_agent.py");

/// A fresh scratch folder for one test; the path of the progress file in it.
pub fn scratch(driver: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("musewire-{driver}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("progress")
}

/// What the fake agent has written so far (it says every 256 KiB in its progress file; every 16 KiB in `stream` mode).
pub fn written(progress: &Path) -> u64 {
    std::fs::read_to_string(progress)
        .ok()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or(0)
}

/// This process's peak resident memory (VmHWM), in bytes.
pub fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

/// Waits until the flooding agent has been held back (nothing more written for a second);
/// what it wrote, or `None` when it wrote all of its `flood` bytes (no backpressure) or a
/// minute passed.
pub fn held_back(progress: &Path, flood: u64) -> Option<u64> {
    let started = Instant::now();
    let (mut last, mut since) = (0, Instant::now());
    while started.elapsed() < Duration::from_secs(60) {
        let now = written(progress);
        if now >= flood {
            return None;
        }
        if now != last {
            (last, since) = (now, Instant::now());
        } else if now > 0 && since.elapsed() > Duration::from_secs(1) {
            return Some(now);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// The shell behind the stop tests' agent: it says it is ready (v1), takes nothing for half
/// a second (so a line larger than its pipe waits in the driver's queue), then writes the
/// number of bytes it was given before its end of input to the file `$1`.
pub const COUNTING_AGENT: &str = r#"printf '{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]}\n'; sleep 0.5; wc -c > "$1""#;

/// The shell behind the CALL-07 last-words agent: it says it is ready (v1) and answers each
/// command with an empty success, but `get_last_assistant_text`: that one it answers with a
/// text of `$1` bytes (less than a pipe holds, so the answer is written at once), having made
/// the file `$2` (it has the command) and waited a tenth of a second, and exits: its answer
/// and its exit come together.
pub const LAST_WORDS_AGENT: &str = r#"printf '{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]}\n'
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed 's/.*"id":"\([^"]*\)".*/\1/')
  case "$line" in
    *'"get_last_assistant_text"'*)
      : > "$2"; text=$(head -c "$1" /dev/zero | tr '\0' x); sleep 0.1
      printf '{"type":"response","id":"%s","command":"get_last_assistant_text","success":true,"data":{"text":"%s"}}\n' "$id" "$text"
      exit 0;;
    *)
      command=$(printf '%s' "$line" | sed 's/.*"type":"\([^"]*\)".*/\1/')
      printf '{"type":"response","id":"%s","command":"%s","success":true}\n' "$id" "$command";;
  esac
done"#;

/// The bytes of the last-words agent's answer: less than a pipe holds.
const LAST_WORDS_BYTES: usize = 60_000;

/// CALL-07, each driver's test: an answer the agent writes just before it exits is heard
/// whole, not the exit in its place. `heard` runs the last-words agent (the file it is given
/// is made once the agent has the command), asks it `get_last_assistant_text`, and gives the
/// answer's text length, or what came instead.
pub fn check_answer_before_exit_heard(
    driver: &str,
    heard: impl FnOnce(std::process::Command, &Path) -> Result<usize, String>,
) {
    let took = scratch(driver, "last-words").with_file_name("took");
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(LAST_WORDS_AGENT)
        .arg("sh")
        .arg(LAST_WORDS_BYTES.to_string())
        .arg(&took);
    let answer = heard(command, &took);
    let _ = std::fs::remove_dir_all(took.parent().unwrap());
    assert_eq!(
        answer,
        Ok(LAST_WORDS_BYTES),
        "not the whole answer written before the exit"
    );
}

/// The counting agent, writing its count to `count`.
pub fn counting_agent(count: &Path) -> std::process::Command {
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(COUNTING_AGENT).arg("sh").arg(count);
    command
}

/// A line of JSON larger than a pipe holds (64 KiB on Linux): most of it waits in the
/// driver's queue while the counting agent sleeps.
pub fn large_line() -> String {
    format!("{{\"type\":\"pad\",\"pad\":\"{}\"}}", "a".repeat(1 << 20))
}

/// Checks that the counting agent ended well and was given more than `line` bytes (the
/// probe and the whole line, with its newline: nothing queued was dropped), then removes its
/// scratch folder.
pub fn assert_given_whole(count: &Path, line: usize, status: std::process::ExitStatus) {
    assert!(status.success(), "the agent ended with {status:?}");
    let taken: usize = std::fs::read_to_string(count)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(taken > line, "the agent was given {taken} bytes of {line}");
    let _ = std::fs::remove_dir_all(count.parent().unwrap());
}

/// The shell behind the process-group tests' agent (CALL-11): it says it is ready (v1),
/// leaves a `sleep` running in the background (its pid written to the file `$1`), then
/// either reads its stdin to the end and exits (`$2` = `exits`) or never reads it and runs
/// until it is killed (`$2` = `stays`); with `$2` = `escapes` the sleep runs in a session
/// (and group) of its own, holding the agent's stdout and stderr, and the agent exits at
/// the end of its stdin; `leaves` is `escapes` with the agent exiting a moment later on its
/// own.
pub const GROUP_AGENT: &str = r#"printf '{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]}\n'; if [ "$2" = escapes ] || [ "$2" = leaves ]; then setsid sleep 300 & else sleep 300 & fi; echo $! > "$1.tmp"; mv "$1.tmp" "$1"; if [ "$2" = stays ]; then exec sleep 301; elif [ "$2" = leaves ]; then sleep 0.2; else cat > /dev/null; fi"#;

/// The group agent, writing the pid of what it leaves running to `left`; it `exits` at the
/// end of its stdin, `stays` until killed, `escapes` or `leaves` (see [`GROUP_AGENT`]).
pub fn group_agent(left: &Path, ending: &str) -> std::process::Command {
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(GROUP_AGENT)
        .arg("sh")
        .arg(left)
        .arg(ending);
    command
}

/// The pid the group agent wrote to `left` (waited for up to [`BUSY_WAIT`]).
pub fn left_running(left: &Path) -> i32 {
    let started = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(left)
            .ok()
            .and_then(|p| p.trim().parse().ok())
        {
            return pid;
        }
        assert!(started.elapsed() < BUSY_WAIT, "no pid in {left:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The process group of the process `pid` (field 5 of `/proc/PID/stat`), or `None` once it
/// has ended.
pub fn process_group(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    let mut fields = after_name.split_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    fields.nth(1)?.parse().ok()
}

/// This process's own process group.
pub fn own_process_group() -> i32 {
    process_group(std::process::id() as i32).unwrap()
}

/// Whether the process `pid` ended (or is a zombie) within [`BUSY_WAIT`].
pub fn ends(pid: i32) -> bool {
    let started = Instant::now();
    while started.elapsed() < BUSY_WAIT {
        if process_group(pid).is_none() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// An agent a driver's test started: its pid, and its stop with a grace (`shutdown`).
pub struct Started {
    /// The agent's pid.
    pub pid: u32,
    /// Stops it with the grace given, returning its exit.
    pub stop: Box<dyn FnOnce(Duration) -> std::process::ExitStatus>,
}

/// CALL-11, each driver's test: the agent `start` spawns leads a group of its own, and what
/// it left running there is killed once it has exited at the end of its stdin.
pub fn check_group_ends_at_exit(
    driver: &str,
    start: impl FnOnce(std::process::Command) -> Started,
) {
    let left = scratch(driver, "group-exits").with_file_name("left");
    let agent = start(group_agent(&left, "exits"));
    let leader = agent.pid as i32;
    let sleeper = left_running(&left);
    assert_eq!(process_group(leader), Some(leader));
    assert_eq!(process_group(sleeper), Some(leader));
    assert_ne!(own_process_group(), leader);
    let status = (agent.stop)(BUSY_WAIT);
    assert!(status.success(), "the agent ended with {status:?}");
    assert!(ends(sleeper), "the agent's background sleep outlived it");
}

/// CALL-11, each driver's test: an agent that does not end at the end of its stdin is
/// killed when the stop's grace runs out, and its whole group with it.
pub fn check_stop_kills_group(driver: &str, start: impl FnOnce(std::process::Command) -> Started) {
    let left = scratch(driver, "group-stays").with_file_name("left");
    let agent = start(group_agent(&left, "stays"));
    let sleeper = left_running(&left);
    assert_eq!(process_group(sleeper), Some(agent.pid as i32));
    let status = (agent.stop)(Duration::from_millis(200));
    assert!(
        !status.success(),
        "the agent was to be killed, it ended with {status:?}"
    );
    assert!(ends(sleeper), "the agent's background sleep outlived it");
}

/// CALL-11, each driver's test: a process the agent left outside its group holds its
/// stdout and stderr open after it exits; the session still ends, `grace` (the host kit's
/// `OUTPUT_GRACE`) after the exit, not when that process ends.
pub fn check_output_grace(
    driver: &str,
    grace: Duration,
    start: impl FnOnce(std::process::Command) -> Started,
) {
    let left = scratch(driver, "group-escapes").with_file_name("left");
    let agent = start(group_agent(&left, "escapes"));
    let sleeper = left_running(&left);
    // `setsid` makes the sleeper a group of its own after the agent wrote its pid: on a busy
    // machine the group can still be the agent's for a moment.
    let since = Instant::now();
    while process_group(sleeper) != Some(sleeper) && since.elapsed() < BUSY_WAIT {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(process_group(sleeper), Some(sleeper));
    let started = Instant::now();
    let status = (agent.stop)(BUSY_WAIT);
    let took = started.elapsed();
    let _ = std::process::Command::new("kill")
        .arg(sleeper.to_string())
        .status();
    assert!(status.success(), "the agent ended with {status:?}");
    // Not the sleeper's 300 s.
    assert!(
        took >= grace / 2 && took < BUSY_WAIT,
        "the stop took {took:?}"
    );
}

/// CALL-07, CALL-11, each driver's test: an agent that exits on its own, no stop asked, while
/// a process it left outside its group holds its stdout and stderr open (so no end of output
/// wakes the driver) is still seen to exit: the session closes. `closed` runs the agent until
/// the client's `Closed` event, for up to [`BUSY_WAIT`], and says whether it came.
pub fn check_exit_seen_while_output_held(
    driver: &str,
    closed: impl FnOnce(std::process::Command) -> bool,
) {
    let left = scratch(driver, "group-leaves").with_file_name("left");
    let seen = closed(group_agent(&left, "leaves"));
    let sleeper = left_running(&left);
    let _ = std::process::Command::new("kill")
        .arg(sleeper.to_string())
        .status();
    let _ = std::fs::remove_dir_all(left.parent().unwrap());
    assert!(seen, "the agent's exit was not seen within {BUSY_WAIT:?}");
}
