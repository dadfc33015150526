//! An agent on the mio driver's agent-side stdio loop: it answers `prompt` by saying the
//! prompt back in one turn, and every other command with an empty success. Try
//! `cargo run -p musewire --release -- prompt hi -- target/release/examples/mio_agent`.
use std::time::Instant;

use musewire_core::agent::{on_event, Agent, AgentConfig, AgentError, AgentEvent};
use musewire_core::wire::Command;
use musewire_mio::agent_stdio::AgentStdio;
use serde_json::json;

/// Says `text` as the assistant, in one turn.
fn say(agent: &mut Agent, now: Instant, text: &str) -> Result<(), AgentError> {
    let said = json!({"role": "assistant", "content": [{"type": "text", "text": text}]});
    let delta = json!({"type": "text_delta", "contentIndex": 0, "delta": text});
    let update = json!({"type": "message_update", "message": said, "assistantMessageEvent": delta});
    agent.emit(now, json!({"type": "agent_start"}))?;
    agent.emit(now, update)?;
    agent.emit(now, json!({"type": "agent_end", "messages": [said]}))
}

fn main() -> std::io::Result<()> {
    let mut parrot = on_event(Agent::new(AgentConfig::default()), |agent, now, event| {
        if let AgentEvent::Command {
            request, command, ..
        } = event
        {
            let answered = agent.respond(now, request, Ok(None));
            if let (Ok(()), Command::Prompt(prompt)) = (answered, command) {
                let _ = say(agent, now, &prompt.message);
            }
        }
    });
    AgentStdio::stdio()?.run(&mut parrot)?;
    Ok(())
}
