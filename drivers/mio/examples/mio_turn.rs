//! A host that spawns an agent and prints one turn's assistant text, blocking:
//! `cargo run -p musewire-mio --example mio_turn -- omp --mode rpc` (any agent command).
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (program, rest) = args.split_first().ok_or("usage: mio_turn AGENT [ARGS…]")?;
    let mut command = std::process::Command::new(program);
    command.args(rest);
    let agent = musewire_mio::AgentProcess::spawn(command, Default::default())?;
    agent.prompt("hello", Duration::from_secs(60))?;
    while let Some(event) = agent.next_event(Duration::from_secs(60)) {
        print!("{}", event.text_delta().unwrap_or_default());
        if matches!(event, musewire_core::client::ClientEvent::TurnFinished) {
            break;
        }
    }
    Ok(())
}
