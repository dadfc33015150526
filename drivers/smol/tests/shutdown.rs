//! A stop with a grace (`AgentProcess::shutdown`) closes the agent's stdin only once what was
//! queued for it is written (`Plumbing::close_stdin`, one meaning in every driver): a line the
//! agent had not yet taken when the stop came still reaches it before its end of input. The
//! agent here is a shell that takes nothing for half a second, so a line larger than the
//! pipe waits in the driver's queue when the stop comes, then counts the bytes it is given.

use smol::process::Command;
use std::path::PathBuf;
use std::time::Duration;

use musewire_smol::AgentProcess;

/// Larger than a pipe holds (64 KiB on Linux), so most of it waits in the driver's queue.
const LINE: usize = 1 << 20;

fn counting_agent(count: &PathBuf) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(r#"printf '{"type":"ready","protocolVersion":1,"supportedProtocolVersions":[1]}\n'; sleep 0.5; wc -c > "$1""#)
        .arg("sh")
        .arg(count);
    command
}

#[test]
fn shutdown_with_a_grace_writes_the_queued_stdin_before_closing_it() {
    let dir = std::env::temp_dir().join(format!("musewire-smol-shutdown-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let count = dir.join("count");
    let line = format!("{{\"type\":\"pad\",\"pad\":\"{}\"}}", "a".repeat(LINE));
    let status = smol::block_on(async {
        let agent = AgentProcess::spawn(counting_agent(&count), Default::default()).unwrap();
        assert!(agent.send_raw_line(line.as_bytes()).await.unwrap());
        agent.shutdown(Duration::from_secs(10)).await.unwrap()
    });
    assert!(status.success(), "the agent ended with {status:?}");
    let taken: usize = std::fs::read_to_string(&count)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The probe and the whole line, with its newline: nothing queued was dropped.
    assert!(
        taken > line.len(),
        "the agent was given {taken} bytes of {}",
        line.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
