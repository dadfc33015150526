//! A host that spawns an agent and prints one turn's assistant text, async on smol:
//! `cargo run -p musewire-smol --example smol_turn -- omp --mode rpc` (any agent command).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (program, rest) = args.split_first().ok_or("usage: smol_turn AGENT [ARGS…]")?;
    smol::block_on(async {
        let mut command = smol::process::Command::new(program);
        command.args(rest);
        let agent = musewire_smol::AgentProcess::spawn(command, Default::default())?;
        agent.prompt("hello").await?;
        while let Some(event) = agent.next_event().await {
            print!("{}", event.text_delta().unwrap_or_default());
            if matches!(event, musewire_core::client::ClientEvent::TurnFinished) {
                break;
            }
        }
        Ok(())
    })
}
