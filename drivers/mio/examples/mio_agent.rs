//! An agent in a few lines on the mio driver's agent-side stdio loop: it answers `prompt` by
//! saying the prompt back in one turn, and every other command with an empty success. Try
//! `cargo run -p musewire --release -- prompt hi -- target/release/examples/mio_agent`.
use std::time::Instant;

use musewire_core::agent::{Agent, AgentCall, AgentConfig, AgentEvent, Input};
use musewire_core::wire::Command;
use musewire_mio::agent_stdio::{die_of, AgentProgram, AgentStdio, Ended};
use serde_json::json;

struct Parrot(Agent);

impl AgentProgram for Parrot {
    fn agent(&mut self) -> &mut Agent {
        &mut self.0
    }
    fn on_event(&mut self, now: Instant, event: AgentEvent) {
        let AgentEvent::Command {
            request, command, ..
        } = event
        else {
            return;
        };
        self.0
            .handle(now, Input::Call(AgentCall::Respond(request, Ok(None))));
        if let Command::Prompt(prompt) = command {
            let text = prompt.message;
            let said = json!({"role": "assistant", "content": [{"type": "text", "text": text}]});
            let delta = json!({"type": "text_delta", "contentIndex": 0, "delta": text});
            for frame in [
                json!({"type": "agent_start"}),
                json!({"type": "message_update", "message": said, "assistantMessageEvent": delta}),
                json!({"type": "message_end", "message": said}),
                json!({"type": "agent_end", "messages": [said]}),
            ] {
                self.0.handle(now, Input::Call(AgentCall::Emit(frame)));
            }
        }
    }
}

fn main() -> std::io::Result<()> {
    let ended = AgentStdio::stdio()?.run(&mut Parrot(Agent::new(AgentConfig::default())))?;
    if let Ended::Signal(signal) = ended {
        std::process::exit(die_of(signal).into());
    }
    Ok(())
}
