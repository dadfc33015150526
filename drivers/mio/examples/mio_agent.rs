//! An agent that answers prompts, on the mio driver's agent-side stdio loop (blocking): every
//! command gets an empty success, and a prompt is said back in one turn (`agent_start`, one
//! `text_delta`, `agent_end`). Try
//! `cargo run -p musewire --release -- prompt hi -- target/release/examples/mio_agent`.
use musewire_core::agent::{on_event, Agent, AgentConfig, AgentEvent, Ended};
use musewire_core::wire::Command;
use musewire_mio::agent_stdio::AgentStdio;
use serde_json::json;

fn main() -> std::io::Result<()> {
    let mut program = on_event(Agent::new(AgentConfig::default()), |agent, now, event| {
        let AgentEvent::Command {
            request, command, ..
        } = event
        else {
            return;
        };
        let answered = agent.respond(now, request, Ok(None));
        if let (Ok(()), Command::Prompt(prompt)) = (answered, command) {
            let text = prompt.message;
            let said = json!({"role": "assistant", "content": [{"type": "text", "text": text}]});
            let delta = json!({"type": "text_delta", "contentIndex": 0, "delta": text});
            let update =
                json!({"type": "message_update", "message": said, "assistantMessageEvent": delta});
            let _ = agent.emit(now, json!({"type": "agent_start"}));
            let _ = agent.emit(now, update);
            let _ = agent.emit(now, json!({"type": "agent_end", "messages": [said]}));
        }
    });
    // The loop returns once stdin has ended and all is written, or on SIGTERM/SIGINT.
    if let Ended::Signal(signal) = AgentStdio::stdio()?.run(&mut program)? {
        eprintln!("mio_agent: stopped by signal {signal}");
    }
    Ok(())
}
