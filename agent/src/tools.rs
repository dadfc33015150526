//! The model's tools: `bash` (a shell command), `read` (a file, or a URI of a scheme the
//! host registered: HOST-05), `todo`, and the host's own tools (HOST-02).

use std::time::Instant;

use musewire_core::agent::{
    DialogId, DialogOutcome, HostCallId, HostUriContent, HostUriId, HostUriOperation,
};
use serde_json::{json, Value};

use crate::app::{App, IoFor};
use crate::bash::{BashOutcome, JobId};
use crate::io::{IoId, IoOutcome, IoWork};
use crate::messages::text_result;
use crate::read::{self, ReadWindow};
use crate::run::ToolCall;
use crate::todo;

/// The names of the built-in tools, with their descriptions.
pub const BUILTIN_TOOLS: [(&str, &str); 3] = [
    (
        "bash",
        "Run a shell command with sh -c; the first 2 MiB of its output are kept",
    ),
    (
        "read",
        "Read a file (offset: the first line, 1-based; limit: how many lines), or a URI of a scheme the host serves",
    ),
    ("todo", "Set the todo list (op \"init\")"),
];

/// What answers a tool call that did not finish at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pending {
    /// A shell command.
    Bash(JobId),
    /// A host tool call.
    Host(HostCallId),
    /// A host URI read.
    Uri(HostUriId),
    /// An extension UI dialog.
    Dialog(DialogId),
    /// File work handed out to the loop (a local `read`).
    Io(IoId),
    /// Nothing: the result is known.
    Done,
}

/// A finished tool: its result and whether it is an error.
pub(crate) type Finished = (Value, bool);

/// How long the `ask` tool's dialog waits for the host unless its `timeout` argument
/// (milliseconds) says otherwise.
const ASK_TIMEOUT_MS: u64 = 60_000;

fn failure(text: impl Into<String>) -> Finished {
    (text_result(text, None), true)
}

impl App {
    /// Starts a tool call: `Ok` with what will answer it, or `Err` with the result when it
    /// is known at once.
    pub(crate) fn execute(&mut self, now: Instant, call: &ToolCall) -> Result<Pending, Finished> {
        let args = &call.arguments;
        let arg = |key: &str| args.get(key).and_then(Value::as_str);
        match call.name.as_str() {
            "bash" => match arg("command") {
                Some(command) => Ok(Pending::Bash(self.jobs.spawn(command))),
                None => Err(failure("bash needs a string \"command\"")),
            },
            "read" => match (arg("path"), ReadWindow::of_arguments(args)) {
                (Some(path), Ok(window)) => self.read(now, path, window),
                (None, _) => Err(failure("read needs a string \"path\"")),
                (_, Err(error)) => Err(failure(error)),
            },
            "ask" => match arg("question") {
                Some(question) => {
                    let timeout = args.get("timeout").and_then(Value::as_u64);
                    self.ask(now, question, timeout.unwrap_or(ASK_TIMEOUT_MS))
                }
                None => Err(failure("ask needs a string \"question\"")),
            },
            "todo" => match todo::run(args) {
                Ok((result, phases)) => {
                    self.set_todos(now, phases);
                    Err((result, false))
                }
                Err(error) => Err(failure(error)),
            },
            name if self.agent.host_tools().any(|t| t.name == name) => {
                match self.agent.call_host_tool(now, &call.id, name, args.clone()) {
                    Ok(host) => Ok(Pending::Host(host)),
                    Err(error) => Err(failure(error.to_string())),
                }
            }
            name => Err(failure(format!("Tool {name} not found"))),
        }
    }

    /// `ask`: a `confirm` dialog for the host (HOST-06), answered yes or no, or "timed out"
    /// when its timeout (`timeout_ms`, the argument `timeout`, 60 s by default) passes.
    fn ask(&mut self, now: Instant, question: &str, timeout_ms: u64) -> Result<Pending, Finished> {
        let request = json!({"type": "extension_ui_request", "id": "", "method": "confirm", "title": question, "message": question, "timeout": timeout_ms});
        let request = serde_json::from_value(request).map_err(|e| failure(e.to_string()))?;
        match self.agent.ui_dialog(now, request) {
            Ok(dialog) => Ok(Pending::Dialog(dialog)),
            Err(error) => Err(failure(error.to_string())),
        }
    }

    /// A dialog of the `ask` tool was resolved.
    pub(crate) fn on_dialog_resolved(
        &mut self,
        now: Instant,
        dialog: DialogId,
        outcome: DialogOutcome,
    ) {
        let answer = match outcome {
            DialogOutcome::Disconnected => "disconnected",
            ref o if o.timed_out() || o == &DialogOutcome::TimedOut => "timed out",
            ref o if o.confirmed() => "yes",
            _ => "no",
        };
        self.answer_tool(
            now,
            Pending::Dialog(dialog),
            (text_result(answer, None), false),
        );
    }

    /// `read`: a URI of a scheme the host registered goes to the host; anything else is a
    /// local path (`file://` stripped), read by the loop ([`IoWork::ReadFile`]): the lines
    /// of `window` (`offset`/`limit`, for a URI ignored).
    fn read(&mut self, now: Instant, path: &str, window: ReadWindow) -> Result<Pending, Finished> {
        let scheme = path
            .split_once(':')
            .map(|(s, _)| s.to_ascii_lowercase())
            .unwrap_or_default();
        if self.agent.host_uri_schemes().any(|s| s.scheme == scheme) {
            return match self
                .agent
                .request_host_uri(now, path, HostUriOperation::Read)
            {
                Ok(request) => Ok(Pending::Uri(request)),
                Err(error) => Err(failure(error.to_string())),
            };
        }
        let file = path.strip_prefix("file://").unwrap_or(path);
        let work = IoWork::ReadFile {
            path: file.into(),
            window,
        };
        let purpose = IoFor::Read {
            path: file.to_owned(),
            window,
        };
        Ok(Pending::Io(self.request_io(work, purpose)))
    }

    /// The loop read a file for the `read` tool.
    pub(crate) fn on_read(
        &mut self,
        now: Instant,
        id: IoId,
        path: &str,
        window: &ReadWindow,
        outcome: IoOutcome,
    ) {
        let finished = match outcome {
            IoOutcome::Read(found) => match read::result(path, window, found) {
                Ok(result) => (result, false),
                Err(error) => failure(error),
            },
            IoOutcome::Failed(error) => failure(error),
            other => failure(format!("unexpected answer to a read: {other:?}")),
        };
        self.answer_tool(now, Pending::Io(id), finished);
    }

    /// Withdraws what a tool call waits for (abort).
    pub(crate) fn withdraw(&mut self, now: Instant, on: &Pending) {
        match *on {
            Pending::Bash(job) => self.jobs.kill(job),
            Pending::Host(call) => {
                self.agent.cancel_host_tool(now, call);
            }
            Pending::Uri(request) => {
                self.agent.cancel_host_uri(now, request);
            }
            Pending::Dialog(dialog) => {
                self.agent.ui_cancel(now, dialog);
            }
            // The read's answer finds nothing waiting for it.
            Pending::Io(_) | Pending::Done => {}
        }
    }

    /// Finishes the waiting tool call when `on` is what it waits for.
    fn answer_tool(&mut self, now: Instant, on: Pending, (result, is_error): Finished) {
        let Some(run) = &mut self.run else { return };
        if run.waiting.as_ref().is_none_or(|w| w.on != on) {
            return;
        }
        let waiting = run.waiting.take().expect("checked");
        self.tool_finished(now, waiting, result, is_error);
    }

    /// A shell command of the model's `bash` tool finished (or one abandoned by an abort).
    pub(crate) fn on_tool_job(&mut self, now: Instant, job: JobId, outcome: BashOutcome) {
        let mut text = outcome.output.clone();
        let is_error = outcome.cancelled || outcome.exit_code != Some(0);
        if text.is_empty() {
            text.push_str("(no output)");
        }
        if outcome.cancelled {
            text.push_str("\n\nCommand aborted");
        } else if let Some(code) = outcome.exit_code.filter(|c| *c != 0) {
            text.push_str(&format!("\n\nCommand exited with code {code}"));
        }
        let mut details = json!({"exitCode": outcome.exit_code, "cancelled": outcome.cancelled});
        if outcome.cut_bytes > 0 {
            details["truncated"] = json!(true);
            details["cutBytes"] = json!(outcome.cut_bytes);
        }
        self.answer_tool(
            now,
            Pending::Bash(job),
            (text_result(text, Some(details)), is_error),
        );
    }

    /// A partial result of a host tool: `tool_execution_update`.
    pub(crate) fn on_host_tool_update(&mut self, now: Instant, host: HostCallId, partial: Value) {
        let Some(waiting) = self.run.as_ref().and_then(|r| r.waiting.as_ref()) else {
            return;
        };
        if waiting.on != Pending::Host(host) {
            return;
        }
        let call = waiting.call.clone();
        self.emit(
            now,
            json!({"type": "tool_execution_update", "toolCallId": call.id, "toolName": call.name, "args": call.arguments, "partialResult": partial}),
        );
    }

    /// A host tool's result (HOST-02) or its failure (HOST-07).
    pub(crate) fn on_host_tool_finished(
        &mut self,
        now: Instant,
        host: HostCallId,
        outcome: Result<Value, String>,
    ) {
        let finished = match outcome {
            Ok(result) => (result, false),
            Err(error) => failure(error),
        };
        self.answer_tool(now, Pending::Host(host), finished);
    }

    /// A host URI read's content (HOST-05) or its failure.
    pub(crate) fn on_host_uri_finished(
        &mut self,
        now: Instant,
        request: HostUriId,
        outcome: Result<HostUriContent, String>,
    ) {
        let finished = match outcome {
            Ok(content) => {
                let mut details = json!({
                    "contentType": content.content_type,
                    "immutable": content.immutable,
                });
                if let Some(notes) = content.notes {
                    details["notes"] = json!(notes);
                }
                (text_result(content.content, Some(details)), false)
            }
            Err(error) => failure(error),
        };
        self.answer_tool(now, Pending::Uri(request), finished);
    }
}
