//! A host that spawns an agent and prints one turn's assistant text, async on smol:
//! `cargo run -p musewire-smol --example smol_turn -- omp --mode rpc` (any agent command).
use musewire_core::client::ClientEvent;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut command = std::process::Command::new(args.next().ok_or("usage: smol_turn AGENT…")?);
    command.args(args);
    smol::block_on(async {
        let agent = musewire_smol::AgentProcess::spawn(command, Default::default())?;
        agent.prompt("hello").await?;
        let turn = |e: &ClientEvent| *e != ClientEvent::TurnFinished;
        while let Some(event) = agent.next_event().await.filter(turn) {
            print!("{}", event.text_delta().unwrap_or_default());
        }
        Ok(())
    })
}
