//! An agent on the mio driver's agent-side stdio loop: it answers `prompt` by saying the
//! prompt back in one turn, and every other command with an empty success. Try
//! `cargo run -p musewire --release -- prompt hi -- target/release/examples/mio_agent`.
use std::time::Instant;

use musewire_core::agent::{Agent, AgentCall, AgentConfig, AgentEvent, Input};
use musewire_core::wire::Command;
use musewire_mio::agent_stdio::{AgentProgram, AgentStdio};
use serde_json::json;

struct Parrot(Agent);

impl AgentProgram for Parrot {
    fn agent(&mut self) -> &mut Agent {
        &mut self.0
    }
    fn on_event(&mut self, now: Instant, event: AgentEvent) {
        if let AgentEvent::Command {
            request, command, ..
        } = event
        {
            self.0
                .handle(now, Input::Call(AgentCall::Respond(request, Ok(None))));
            if let Command::Prompt(p) = command {
                let said =
                    json!({"role": "assistant", "content": [{"type": "text", "text": p.message}]});
                let delta = json!({"type": "text_delta", "contentIndex": 0, "delta": p.message});
                let update = json!({"type": "message_update", "message": said, "assistantMessageEvent": delta});
                for frame in [
                    json!({"type": "agent_start"}),
                    update,
                    json!({"type": "agent_end", "messages": [said]}),
                ] {
                    self.0.handle(now, Input::Call(AgentCall::Emit(frame)));
                }
            }
        }
    }
}

fn main() -> std::io::Result<()> {
    AgentStdio::stdio()?.run(&mut Parrot(Agent::new(AgentConfig::default())))?;
    Ok(())
}
