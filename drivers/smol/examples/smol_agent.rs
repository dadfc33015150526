//! An agent that answers prompts, on the smol driver's agent-side stdio loop (async: the loop
//! waits on stdin without blocking the thread, so other work can run beside it): every command
//! gets an empty success, and a prompt is said back word by word, a `text_delta` each. Try
//! `cargo run -p musewire --release -- prompt "hi there" -- target/release/examples/smol_agent`.
use musewire_core::agent::{
    on_event, Agent, AgentCall, AgentCallResult, AgentConfig, AgentEvent, Input,
};
use musewire_smol::agent_stdio::AgentStdio;
use musewire_wire::{
    AgentEnd, AgentFrame, AgentMessage, AssistantMessage, AssistantMessageEvent, BlockDelta,
    Command, ContentBlock, Empty, Lazy, MessageUpdate, SessionEvent,
};

/// An assistant message of one text block.
fn message(text: &str) -> AgentMessage {
    AgentMessage::Assistant(Box::new(AssistantMessage {
        content: vec![ContentBlock::text(text)],
        ..AssistantMessage::default()
    }))
}

fn main() -> std::io::Result<()> {
    let mut program = on_event(Agent::new(AgentConfig::default()), |agent, now, event| {
        if let AgentEvent::Command {
            request, command, ..
        } = event
        {
            let answer = AgentCall::Respond(request, Ok(None));
            let answered = agent.handle(now, Input::Call(answer));
            if let (Some(AgentCallResult::Done(Ok(()))), Command::Prompt(prompt)) =
                (answered, command)
            {
                let mut emit = |event: SessionEvent| {
                    agent.handle(now, Input::Call(AgentCall::Emit(AgentFrame::from(event))));
                };
                emit(SessionEvent::AgentStart(Empty::default()));
                let mut text = String::new();
                for word in prompt.message.split_inclusive(' ') {
                    text.push_str(word);
                    let delta = AssistantMessageEvent::TextDelta(BlockDelta {
                        content_index: 0,
                        delta: word.to_owned(),
                        ..BlockDelta::default()
                    });
                    emit(SessionEvent::MessageUpdate(MessageUpdate {
                        message: Lazy::new(&message(&text)).ok(),
                        assistant_message_event: delta,
                        ..MessageUpdate::default()
                    }));
                }
                emit(SessionEvent::AgentEnd(AgentEnd {
                    messages: vec![message(&text)],
                    ..AgentEnd::default()
                }));
            }
        }
    });
    smol::block_on(AgentStdio::stdio()?.run(&mut program)).map(drop)
}
