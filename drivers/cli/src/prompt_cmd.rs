//! `musewire prompt TEXT [-- AGENT…]`: one prompt turn, streamed to the terminal.

use std::io::Write;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_core::wire::{
    AgentEvent, AgentFrame, ContentBlock, HostToolDefinition, HostUriResult, ToolResult, UiRequest,
    UiResponse,
};
use musewire_mio::Agent;
use serde_json::{json, Value};

use crate::agent_command::{agent_command, colour};

/// Arguments of `musewire prompt`.
#[derive(clap::Args)]
pub struct PromptArgs {
    /// The prompt.
    text: String,
    /// Print every event as one JSON line instead of the streamed turn.
    #[arg(long)]
    json: bool,
    /// Register a host tool NAME whose calls run CMD (with `sh -c`), the call's arguments as
    /// JSON on its stdin and its stdout as the result. Any number.
    #[arg(long = "host-tool", value_name = "NAME=CMD")]
    host_tools: Vec<String>,
    /// Give up when the turn has not ended after this many seconds.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// The agent command (default: the bundled `musewire agent`).
    #[arg(last = true, value_name = "AGENT")]
    agent: Vec<String>,
}

/// Runs `musewire prompt`.
pub fn run(args: PromptArgs) -> ExitCode {
    match prompt(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("musewire prompt: {e}");
            ExitCode::FAILURE
        }
    }
}

struct HostTool {
    name: String,
    command: String,
}

fn parse_host_tools(specs: &[String]) -> Result<Vec<HostTool>, String> {
    specs
        .iter()
        .map(|spec| match spec.split_once('=') {
            Some((name, command)) if !name.trim().is_empty() && !command.trim().is_empty() => {
                Ok(HostTool {
                    name: name.trim().to_owned(),
                    command: command.to_owned(),
                })
            }
            _ => Err(format!("--host-tool wants NAME=CMD, got {spec:?}")),
        })
        .collect()
}

/// Runs a host tool's command: arguments as JSON on stdin, stdout as the result's text.
fn run_host_tool(tool: &HostTool, arguments: &Value) -> (ToolResult, bool) {
    let output = std::process::Command::new("sh")
        .args(["-c", &tool.command])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(arguments.to_string().as_bytes());
            }
            child.wait_with_output()
        });
    match output {
        Ok(out) if out.status.success() => {
            (text_result(&String::from_utf8_lossy(&out.stdout)), false)
        }
        Ok(out) => {
            let text = format!(
                "{} exited with {}: {}",
                tool.command,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
            (text_result(&text), true)
        }
        Err(e) => (
            text_result(&format!("{} could not run: {e}", tool.command)),
            true,
        ),
    }
}

fn text_result(text: &str) -> ToolResult {
    ToolResult::text(text)
}

struct Screen {
    json: bool,
    colour: bool,
    out: std::io::Stdout,
}

impl Screen {
    fn dim(&mut self, text: &str) {
        let _ = if self.colour {
            write!(self.out, "\x1b[2m{text}\x1b[0m")
        } else {
            write!(self.out, "{text}")
        };
        let _ = self.out.flush();
    }

    fn text(&mut self, text: &str) {
        let _ = write!(self.out, "{text}");
        let _ = self.out.flush();
    }

    fn note(&mut self, text: &str) {
        self.dim(&format!("\n{text}\n"));
    }

    fn event(&mut self, event: &ClientEvent) {
        if self.json {
            let _ = writeln!(
                self.out,
                "{}",
                serde_json::to_string(event).unwrap_or_default()
            );
            return;
        }
        if let Some(text) = event.text_delta() {
            return self.text(text);
        }
        if let Some(thinking) = event.thinking_delta() {
            return self.dim(thinking);
        }
        let ClientEvent::Frame {
            frame: AgentFrame::Event(event),
        } = event
        else {
            return;
        };
        match event {
            AgentEvent::ToolExecutionStart(start) => {
                let args = start
                    .args
                    .as_ref()
                    .map(Value::to_string)
                    .unwrap_or_default();
                self.note(&format!("→ {}({})", start.tool_name, shorten(&args, 120)));
            }
            AgentEvent::ToolExecutionEnd(end) => {
                // The result is the tool's own (`{content, details?}`), kept as sent.
                let text = end
                    .result
                    .clone()
                    .and_then(|r| serde_json::from_value::<ToolResult>(r).ok())
                    .map(|r| {
                        r.content
                            .iter()
                            .filter_map(|b| match b {
                                ContentBlock::Text(t) => Some(t.text.as_str()),
                                _ => None,
                            })
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .unwrap_or_default();
                let mark = if end.is_error == Some(true) {
                    "✗"
                } else {
                    "←"
                };
                self.note(&format!(
                    "{mark} {}: {}",
                    end.tool_name,
                    shorten(text.trim(), 200)
                ));
            }
            _ => {}
        }
    }
}

fn shorten(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > max || text.lines().nth(1).is_some() {
        format!("{}…", line.chars().take(max).collect::<String>())
    } else {
        line.to_owned()
    }
}

fn prompt(args: PromptArgs) -> Result<(), String> {
    let tools = parse_host_tools(&args.host_tools)?;
    let agent = Agent::spawn(agent_command(&args.agent)?, ClientConfig::default())
        .map_err(|e| format!("cannot start the agent: {e}"))?;
    let wait = Duration::from_secs(args.timeout);
    let deadline = Instant::now() + wait;
    let mut screen = Screen {
        json: args.json,
        colour: colour(),
        out: std::io::stdout(),
    };
    if !tools.is_empty() {
        let definitions: Vec<HostToolDefinition> = tools
            .iter()
            .map(|t| HostToolDefinition {
                name: t.name.clone(),
                description: format!("Host tool {} (runs `{}` on the host).", t.name, t.command),
                parameters: json!({"type": "object", "additionalProperties": true}),
                ..Default::default()
            })
            .collect();
        agent
            .set_host_tools(definitions, wait)
            .map_err(|e| format!("set_host_tools: {e}"))?;
    }
    agent
        .prompt(&args.text, wait)
        .map_err(|e| format!("prompt: {e}"))?;
    let outcome = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(event) = agent.next_event(left) else {
            break Err(format!("the turn did not end within {}s", args.timeout));
        };
        screen.event(&event);
        match event {
            ClientEvent::TurnFinished => break Ok(()),
            ClientEvent::Closed { error } => break Err(format!("the session ended: {error}")),
            ClientEvent::PromptFailed { failure, .. } => {
                break Err(format!("the prompt failed: {}", failure.error))
            }
            ClientEvent::PromptLocalOnly { .. } => break Ok(()),
            ClientEvent::HostToolCall(call) => {
                let (result, is_error) = match tools.iter().find(|t| t.name == call.tool_name) {
                    Some(tool) => run_host_tool(tool, &call.arguments),
                    None => (
                        text_result(&format!("no host tool {:?}", call.tool_name)),
                        true,
                    ),
                };
                let _ = agent.host_tool_result(&call.id, result, is_error);
            }
            ClientEvent::HostUriRequest(request) => {
                if !args.json {
                    screen.note(&format!(
                        "host URI {} {}: no handler here",
                        request.operation, request.url
                    ));
                }
                let result = HostUriResult {
                    is_error: Some(true),
                    error: Some(format!(
                        "musewire prompt serves no host URIs ({})",
                        request.url
                    )),
                    ..Default::default()
                };
                let _ = agent.host_uri_result(&request.id, result);
            }
            ClientEvent::UiRequest(request) => {
                if !args.json {
                    screen.note(&format!(
                        "[{}] {}",
                        request.method().unwrap_or("?"),
                        ui_text(&request)
                    ));
                }
                if let (true, Some(id)) = (request.is_dialog(), request.id()) {
                    let _ = agent.ui_respond(id, UiResponse::cancelled(id, false));
                }
            }
            _ => {}
        }
    };
    if !args.json {
        screen.text("\n");
    }
    let _ = agent.shutdown(Duration::from_secs(5));
    outcome
}

/// What a person reads of a UI request: its title, or its message.
fn ui_text(request: &UiRequest) -> &str {
    match request {
        UiRequest::Select(r) => &r.title,
        UiRequest::Confirm(r) => &r.title,
        UiRequest::Input(r) => &r.title,
        UiRequest::Editor(r) => &r.title,
        UiRequest::Notify(r) => &r.message,
        _ => "",
    }
}
