//! `musewire prompt TEXT [-- AGENT…]`: one prompt turn, streamed to the terminal.

use std::io::Write;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use musewire_core::client::{ClientConfig, ClientEvent};
use musewire_mio::{AgentProcess, CallError};
use musewire_wire::output::{Availability, StoredOutput};
use musewire_wire::{
    AgentFrame, ContentBlock, HostToolDefinition, HostUriResult, SessionEvent, ToolResult,
    UiRequest, UiResponse,
};
use serde_json::{json, Value};

use crate::agent_command::{agent_command, colour};
use crate::session::{self, Deadline};
use crate::visible::visible;

/// Arguments of `musewire prompt`.
#[derive(clap::Args)]
pub struct PromptArgs {
    /// The text sent as the prompt (the bundled agent echoes it or runs the script it names).
    text: String,
    /// Print every event as one JSON line instead of the streamed turn.
    #[arg(long)]
    json: bool,
    /// Register a host tool NAME whose calls run CMD (with `sh -c`), the call's arguments as
    /// JSON on its stdin and its stdout as the result. Any number.
    #[arg(long = "host-tool", value_name = "NAME=CMD", value_parser = parse_host_tool)]
    host_tools: Vec<HostTool>,
    /// Give up when the turn has not ended after this many seconds; 0 waits as long as the
    /// turn takes.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// How many seconds an agent that says nothing at all (no ready frame, no answer to the
    /// start-up probe) gets before it is treated as a v1 agent (FRAME-03). An agent that
    /// answers, with a ready frame or without one (pi), is known at once.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    ready_timeout: u64,
    /// The agent command (default: the bundled `musewire agent`).
    #[arg(last = true, value_name = "AGENT")]
    agent: Vec<String>,
}

/// Runs `musewire prompt`.
pub fn run(args: PromptArgs) -> ExitCode {
    match prompt(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("musewire prompt: {}", visible(&e));
            ExitCode::FAILURE
        }
    }
}

/// A host tool given with `--host-tool NAME=CMD`.
#[derive(Clone)]
pub struct HostTool {
    name: String,
    command: String,
}

/// `NAME=CMD`, both non-empty; a usage error (exit 2) otherwise.
fn parse_host_tool(spec: &str) -> Result<HostTool, String> {
    match spec.split_once('=') {
        Some((name, command)) if !name.trim().is_empty() && !command.trim().is_empty() => {
            Ok(HostTool {
                name: name.trim().to_owned(),
                command: command.to_owned(),
            })
        }
        _ => Err(format!("wants NAME=CMD, got {spec:?}")),
    }
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
    /// The first write that failed: the turn stops and the command fails (a write failure is an
    /// error, never ignored).
    failed: Option<std::io::Error>,
}

impl Screen {
    /// Writes, then flushes, keeping the first error.
    fn write(&mut self, text: &str) {
        if self.failed.is_none() {
            if let Err(e) = self
                .out
                .write_all(text.as_bytes())
                .and_then(|()| self.out.flush())
            {
                self.failed = Some(e);
            }
        }
    }

    /// The agent's text, dimmed on a terminal, control characters made visible.
    fn dim(&mut self, text: &str) {
        let text = visible(text);
        if self.colour {
            self.write(&format!("\x1b[2m{text}\x1b[0m"));
        } else {
            self.write(&text);
        }
    }

    /// The agent's text, control characters made visible.
    fn text(&mut self, text: &str) {
        self.write(&visible(text));
    }

    fn note(&mut self, text: &str) {
        self.dim(&format!("\n{text}\n"));
    }

    /// What went wrong writing, if anything did.
    fn check(&self) -> Result<(), String> {
        match &self.failed {
            Some(e) => Err(format!("writing the output: {e}")),
            None => Ok(()),
        }
    }

    fn event(&mut self, event: &ClientEvent) {
        report(event);
        if self.json {
            let line = serde_json::to_string(event).unwrap_or_default();
            self.write(&format!("{line}\n"));
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
            SessionEvent::ToolExecutionStart(start) => {
                let args = start
                    .args
                    .as_ref()
                    .map(Value::to_string)
                    .unwrap_or_default();
                self.note(&format!("→ {}({})", start.tool_name, shorten(&args, 120)));
            }
            SessionEvent::ToolExecutionEnd(end) => {
                // The result is the tool's own (`{content, details?}`), kept as sent.
                let result = end
                    .result
                    .clone()
                    .and_then(|r| serde_json::from_value::<ToolResult>(r).ok());
                let text = result
                    .as_ref()
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
                // A spilled result names where its whole text was stored (OUT-02).
                if let Some(stored) = result.as_ref().and_then(ToolResult::stored_output) {
                    self.note(&stored_output_line(&stored));
                }
            }
            _ => {}
        }
    }
}

/// The line that says where a spilled tool result was stored and how to fetch it whole
/// (`musewire fetch-output`).
fn stored_output_line(stored: &StoredOutput) -> String {
    let availability = match stored.availability {
        Availability::Available => String::new(),
        other => format!(
            " ({})",
            serde_json::to_value(other)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        ),
    };
    format!(
        "  full output stored as {} ({} bytes, {}){availability}; fetch it with: musewire \
         fetch-output --session-id {} --item-id {} --output-ref {} --byte-len {} -o FILE",
        stored.output_ref,
        stored.byte_len,
        stored.media_type,
        shell_word(&stored.session_id),
        shell_word(&stored.item_id),
        stored.output_ref,
        stored.byte_len,
    )
}

/// `text` as one shell word: as it is when it is made of safe characters, single-quoted
/// otherwise.
fn shell_word(text: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_.:/@+=,".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// What a person must see on stderr whatever the mode, `--json` or not: framing warnings
/// (FRAME-02, lines that are not JSON, garbage before `ready`) and responses that match no
/// request (CALL-02).
fn report(event: &ClientEvent) {
    match event {
        ClientEvent::ProtocolWarning {
            rule,
            message,
            detail,
            prefix,
        } => {
            let detail = detail
                .as_ref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            let prefix = prefix
                .as_ref()
                .map(|p| format!(" (line starts {p:?})"))
                .unwrap_or_default();
            eprintln!(
                "musewire prompt: agent: {rule} {}",
                visible(&format!("{message}{detail}{prefix}"))
            );
        }
        ClientEvent::Unmatched { frame } => eprintln!(
            "musewire prompt: agent: CALL-02 a response that matches no request: {}",
            visible(&shorten(&frame.to_value().to_string(), 200))
        ),
        _ => {}
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

/// How long after start a silent agent gets a word on stderr (FRAME-03: what it waits for).
const READY_NOTICE_AFTER: Duration = Duration::from_secs(1);

fn prompt(args: PromptArgs) -> Result<(), String> {
    let deadline = Deadline::after_secs(args.timeout);
    let config = ClientConfig {
        ready_timeout: Duration::from_secs(args.ready_timeout),
        ..ClientConfig::default()
    };
    let agent = session::spawn(agent_command(&args.agent)?, config)?;
    let mut screen = Screen {
        json: args.json,
        colour: colour(),
        out: std::io::stdout(),
        failed: None,
    };
    let outcome = turn(&agent, &args, &mut screen, deadline);
    if !args.json && screen.failed.is_none() {
        screen.text("\n");
    }
    // After a turn that ended well the agent may finish in its own time; otherwise (a
    // timeout, an error, an agent that stopped reading) it is stopped at once, so that
    // `--timeout` holds with no grace added on top.
    session::end(agent, &outcome);
    outcome.and_then(|()| screen.check())
}

/// Waits for the session to be ready, saying on stderr what the wait is when the agent is
/// silent (a v1 agent sends no ready frame: FRAME-03).
fn ready(
    agent: &AgentProcess,
    args: &PromptArgs,
    screen: &mut Screen,
    deadline: Deadline,
) -> Result<(), String> {
    let started = Instant::now();
    let mut told = false;
    loop {
        let mut wait = deadline.left();
        if !told {
            wait = wait.min(READY_NOTICE_AFTER.saturating_sub(started.elapsed()));
        }
        match agent.next_event(wait) {
            Some(event) => {
                screen.event(&event);
                match event {
                    ClientEvent::Ready { .. } => return Ok(()),
                    ClientEvent::Closed { error } => {
                        return Err(format!("the session ended: {error}"))
                    }
                    _ => {}
                }
            }
            None if !told => {
                told = true;
                if args.ready_timeout > READY_NOTICE_AFTER.as_secs() {
                    eprintln!(
                        "musewire prompt: no ready frame from the agent yet, nor any answer; \
                         waiting up to {}s before going on with it as a v1 agent (--ready-timeout)",
                        args.ready_timeout
                    );
                }
            }
            None => return Err(format!("the agent was not ready within {}s", args.timeout)),
        }
        screen.check()?;
    }
}

/// Why a call made no progress, said once (never `musewire prompt: prompt: …`).
fn failed(args: &PromptArgs, command: &str, error: CallError) -> String {
    match error {
        CallError::Timeout(_) => format!("no answer to {command} within {}s", args.timeout),
        e => format!("{command} failed: {e}"),
    }
}

fn turn(
    agent: &AgentProcess,
    args: &PromptArgs,
    screen: &mut Screen,
    deadline: Deadline,
) -> Result<(), String> {
    let tools = &args.host_tools;
    ready(agent, args, screen, deadline)?;
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
            .set_host_tools(definitions, deadline.left())
            .map_err(|e| failed(args, "set_host_tools", e))?;
    }
    agent
        .prompt(&args.text, deadline.left())
        .map_err(|e| failed(args, "prompt", e))?;
    loop {
        let Some(event) = agent.next_event(deadline.left()) else {
            return Err(format!("the turn did not end within {}s", args.timeout));
        };
        screen.event(&event);
        screen.check()?;
        match event {
            ClientEvent::TurnFinished => return Ok(()),
            ClientEvent::Closed { error } => return Err(format!("the session ended: {error}")),
            ClientEvent::PromptFailed { failure, .. } => {
                return Err(format!("the prompt failed: {}", failure.error))
            }
            ClientEvent::PromptLocalOnly { .. } => return Ok(()),
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
                    let _ = agent.ui_respond(id, UiResponse::cancelled(id));
                }
            }
            _ => {}
        }
    }
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
