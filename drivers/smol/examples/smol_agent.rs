//! An agent on the smol driver's agent-side stdio loop, async: the core's
//! [`parrot`](musewire_core::agent::parrot) program (it answers every command, and says a
//! prompt back in one turn), with other work beside it on the same thread. Try
//! `cargo run -p musewire --release -- prompt hi -- target/release/examples/smol_agent`.
use std::time::Duration;

use musewire_core::agent::{parrot, AgentConfig};
use musewire_smol::agent_stdio::AgentStdio;

fn main() -> std::io::Result<()> {
    let stdio = AgentStdio::stdio()?;
    let mut program = parrot(AgentConfig::default());
    smol::block_on(async {
        // The loop waits on stdin without blocking the thread: a heartbeat runs beside it.
        let heartbeat = async {
            loop {
                smol::Timer::after(Duration::from_secs(60)).await;
                eprintln!("smol_agent: waiting for the host");
            }
        };
        smol::future::or(stdio.run(&mut program), heartbeat).await?;
        Ok(())
    })
}
