//! An agent that answers prompts, on the mio driver's agent-side stdio loop (blocking): every
//! command gets an empty success, and a prompt is said back in one turn (`agent_start`, one
//! `text_delta`, `agent_end`). Try
//! `cargo run -p musewire --release -- prompt hi -- target/release/examples/mio_agent`.
use musewire_core::agent::{
    on_event, Agent, AgentCall, AgentCallResult, AgentConfig, AgentEvent, Ended, Input,
};
use musewire_mio::agent_stdio::AgentStdio;
use musewire_wire::{
    AgentEnd, AgentFrame, AgentMessage, AssistantMessage, AssistantMessageEvent, BlockDelta,
    Command, ContentBlock, Empty, Lazy, MessageUpdate, SessionEvent,
};

fn main() -> std::io::Result<()> {
    let mut program = on_event(Agent::new(AgentConfig::default()), |agent, now, event| {
        let AgentEvent::Command {
            request, command, ..
        } = event
        else {
            return;
        };
        let answer = AgentCall::Respond(request, Ok(None));
        let answered = agent.handle(now, Input::Call(answer));
        if let (Some(AgentCallResult::Done(Ok(()))), Command::Prompt(prompt)) = (answered, command)
        {
            let text = prompt.message;
            let said = AgentMessage::Assistant(Box::new(AssistantMessage {
                content: vec![ContentBlock::text(text.as_str())],
                ..AssistantMessage::default()
            }));
            let delta = AssistantMessageEvent::TextDelta(BlockDelta {
                content_index: 0,
                delta: text,
                ..BlockDelta::default()
            });
            let update = SessionEvent::MessageUpdate(MessageUpdate {
                message: Lazy::new(&said).ok(),
                assistant_message_event: delta,
                ..MessageUpdate::default()
            });
            let end = SessionEvent::AgentEnd(AgentEnd {
                messages: vec![said],
                ..AgentEnd::default()
            });
            for event in [SessionEvent::AgentStart(Empty::default()), update, end] {
                agent.handle(now, Input::Call(AgentCall::Emit(AgentFrame::from(event))));
            }
        }
    });
    // The loop returns once stdin has ended and all is written, or on SIGTERM/SIGINT.
    if let Ended::Signal(signal) = AgentStdio::stdio()?.run(&mut program)? {
        eprintln!("mio_agent: stopped by signal {signal}");
    }
    Ok(())
}
