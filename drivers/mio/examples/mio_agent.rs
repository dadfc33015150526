//! An agent on the mio driver's agent-side stdio loop, blocking: the core's
//! [`parrot`](musewire_core::agent::parrot) program (it answers every command, and says a
//! prompt back in one turn). Try
//! `cargo run -p musewire --release -- prompt hi -- target/release/examples/mio_agent`.
use musewire_core::agent::{parrot, AgentConfig, Ended};
use musewire_mio::agent_stdio::AgentStdio;

fn main() -> std::io::Result<()> {
    // The loop returns once stdin has ended and all is written, or on SIGTERM/SIGINT.
    let ended = AgentStdio::stdio()?.run(&mut parrot(AgentConfig::default()))?;
    if let Ended::Signal(signal) = ended {
        eprintln!("mio_agent: stopped by signal {signal}");
    }
    Ok(())
}
