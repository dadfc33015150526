//! A host that offers the agent one tool of its own, answered by an async handler that
//! streams an update, and prints the turn that uses it.
//!
//! `cargo run -p musewire-smol --example smol_host_tool -- omp --mode rpc` (any agent command;
//! the prompt is the `PROMPT` environment variable).

use std::time::Duration;

use musewire_core::client::ClientEvent;
use musewire_smol::AgentProcess;
use musewire_wire::{AgentFrame, HostToolDefinition, SessionEvent, ToolResult};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (program, rest) = args.split_first().ok_or("usage: host_tool AGENT [ARGS…]")?;
    smol::block_on(async {
        let mut command = std::process::Command::new(program);
        command.args(rest);
        let agent = AgentProcess::spawn(command, Default::default())?;
        agent
            .set_host_tools(vec![HostToolDefinition {
                name: "clock".into(),
                description: "The host's time, in seconds since the epoch.".into(),
                parameters: json!({"type": "object", "properties": {}}),
                ..Default::default()
            }])
            .await?;
        agent.on_host_tool("clock", |_call, updates| async move {
            updates.send(ToolResult::text("reading the clock…")).await;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            ToolResult::text(now.as_secs().to_string()).into()
        });
        let prompt = std::env::var("PROMPT")
            .unwrap_or_else(|_| "What time is it? Use the clock tool.".into());
        agent.prompt(&prompt).await?;
        while let Some(event) = agent.next_event().await {
            if let Some(text) = event.text_delta() {
                print!("{text}");
            }
            match event {
                ClientEvent::Frame {
                    frame: AgentFrame::Event(SessionEvent::ToolExecutionEnd(end)),
                } => println!("\n[{} → {:?}]", end.tool_name, end.result),
                ClientEvent::TurnFinished | ClientEvent::Closed { .. } => break,
                _ => {}
            }
        }
        println!();
        agent.shutdown(Duration::from_secs(2)).await?;
        Ok(())
    })
}
