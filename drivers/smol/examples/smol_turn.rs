//! A host that spawns an agent and streams one turn, async on smol.
//!
//! `cargo run -p musewire-smol --example smol_turn -- omp --mode rpc` (any agent command; the
//! prompt is the `PROMPT` environment variable, "hello" by default).

use std::time::Duration;

use musewire_core::client::ClientEvent;
use musewire_smol::Agent;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (program, rest) = args.split_first().ok_or("usage: turn AGENT [ARGS…]")?;
    smol::block_on(async {
        let mut command = smol::process::Command::new(program);
        command.args(rest);
        let agent = Agent::spawn(command, Default::default())?;
        agent
            .prompt(&std::env::var("PROMPT").unwrap_or_else(|_| "hello".into()))
            .await?;
        while let Some(event) = agent.next_event().await {
            match event {
                ClientEvent::Frame { frame } if frame["type"] == "message_update" => {
                    print!(
                        "{}",
                        frame["assistantMessageEvent"]["delta"]
                            .as_str()
                            .unwrap_or("")
                    );
                }
                ClientEvent::TurnFinished | ClientEvent::Closed { .. } => break,
                _ => {}
            }
        }
        println!();
        agent.shutdown(Duration::from_secs(2)).await?;
        Ok(())
    })
}
