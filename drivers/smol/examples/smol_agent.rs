//! An agent that answers prompts, on the smol driver's agent-side stdio loop (async: the loop
//! waits on stdin without blocking the thread, so other work can run beside it): every command
//! gets an empty success, and a prompt is said back word by word, a `text_delta` each. Try
//! `cargo run -p musewire --release -- prompt "hi there" -- target/release/examples/smol_agent`.
use musewire_core::agent::{on_event, Agent, AgentConfig, AgentEvent};
use musewire_core::wire::Command;
use musewire_smol::agent_stdio::AgentStdio;
use serde_json::json;

fn main() -> std::io::Result<()> {
    let mut program = on_event(Agent::new(AgentConfig::default()), |agent, now, event| {
        if let AgentEvent::Command {
            request, command, ..
        } = event
        {
            let answered = agent.respond(now, request, Ok(None));
            if let (Ok(()), Command::Prompt(prompt)) = (answered, command) {
                let message = |text: &str| json!({"role": "assistant", "content": [{"type": "text", "text": text}]});
                let _ = agent.emit(now, json!({"type": "agent_start"}));
                let mut text = String::new();
                for word in prompt.message.split_inclusive(' ') {
                    text.push_str(word);
                    let delta = json!({"type": "text_delta", "contentIndex": 0, "delta": word});
                    let update = json!({"type": "message_update", "message": message(&text), "assistantMessageEvent": delta});
                    let _ = agent.emit(now, update);
                }
                let end = json!({"type": "agent_end", "messages": [message(&text)]});
                let _ = agent.emit(now, end);
            }
        }
    });
    smol::block_on(AgentStdio::stdio()?.run(&mut program)).map(drop)
}
