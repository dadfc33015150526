//! A host that spawns an agent and prints one turn's assistant text, blocking:
//! `cargo run -p musewire-mio --example mio_turn -- omp --mode rpc` (any agent command).
use std::time::Duration;

use musewire_core::client::ClientEvent;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut command = std::process::Command::new(args.next().ok_or("usage: mio_turn AGENT…")?);
    command.args(args);
    let agent = musewire_mio::AgentProcess::spawn(command, Default::default())?;
    agent.prompt("hello", Duration::from_secs(60))?;
    let turn = |e: &ClientEvent| *e != ClientEvent::TurnFinished;
    while let Some(event) = agent.next_event(Duration::from_secs(60)).filter(turn) {
        print!("{}", event.text_delta().unwrap_or_default());
    }
    Ok(())
}
