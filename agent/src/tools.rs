//! The model's tools: `bash` (a shell command), `read` (a file, or a URI of a scheme the
//! host registered: HOST-05), `write` and `edit` (a file, as pi's take them), `todo`, and
//! the host's own tools (HOST-02).
//!
//! [`Tools`] is the App's tools part: it owns the shell commands running, starts a tool
//! call (answered at once, or [`Pending`] on a shell command, the host, a dialog or file
//! work), withdraws one, and turns each kind of answer into the tool's result
//! ([`Finished`]); the run ([`crate::run`]) decides what the result does next.

use std::time::Instant;

use musewire_core::agent::{
    Agent, AgentCall, AgentCallResult, DialogId, DialogOutcome, HostCallId, HostFailure,
    HostUriContent, HostUriId, HostUriOperation,
};
use musewire_wire::{ConfirmRequest, InputRequest, SelectRequest, ToolCall, ToolResult, UiRequest};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::bash::{BashOutcome, JobId, Jobs, OutputTail};
use crate::drive;
use crate::io::{IoFor, IoId, IoOutcome, IoQueue, IoWork};
use crate::messages::text_result;
use crate::options::ApprovalMode;
use crate::read::{self, ReadWindow};
use crate::session::Sessions;
use crate::todo;

/// The names of the built-in tools, with their descriptions.
pub const BUILTIN_TOOLS: [(&str, &str); 5] = [
    (
        "bash",
        "Run a shell command with sh -c; the first 2 MiB of its output are kept",
    ),
    (
        "read",
        "Read a file (offset: the first line, 1-based; limit: how many lines), or a URI of a scheme the host serves",
    ),
    ("todo", "Set the todo list (op \"init\")"),
    (
        "write",
        "Write a file (path, content), making its folders; never through a symlink",
    ),
    (
        "edit",
        "Replace text in a file (path, edits: [{oldText, newText}], or one oldText and newText); each oldText must occur exactly once",
    ),
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
    /// The approval asked before the tool runs (AGENT-07): the tool has not started.
    Approval(DialogId),
    /// File work handed out to the loop (a local `read`).
    Io(IoId),
    /// Nothing: the result is known.
    Done,
}

/// A finished tool: its result and whether it is an error.
pub(crate) type Finished = (ToolResult, bool);

/// How long the `ask` tool's dialog waits for the host unless its `timeout` argument
/// (milliseconds) says otherwise.
const ASK_TIMEOUT_MS: u64 = 60_000;

fn failure(text: impl Into<String>) -> Finished {
    (text_result(text, None), true)
}

/// The tools part of the App: the shell commands running (the model's and the RPC `bash`
/// command's).
#[derive(Debug)]
pub(crate) struct Tools {
    pub(crate) jobs: Jobs,
}

/// What a tool call may use besides the tools part: the core agent (host tools, host URIs,
/// dialogs), the session (the todo list) and the file work queue.
pub(crate) struct ToolCtx<'a> {
    pub(crate) agent: &'a mut Agent,
    pub(crate) sessions: &'a mut Sessions,
    pub(crate) io: &'a mut IoQueue,
    /// The timestamp of now, for the entries the tool adds.
    pub(crate) millis: u64,
}

impl Tools {
    /// Starts a tool call: `Ok` with what will answer it, or `Err` with the result when it
    /// is known at once (boxed: a result is large beside what answers a call).
    pub(crate) fn execute(
        &mut self,
        now: Instant,
        ctx: ToolCtx<'_>,
        call: &ToolCall,
    ) -> Result<Pending, Box<Finished>> {
        let args = &call.arguments;
        let arg = |key: &str| args.get(key).and_then(Value::as_str);
        match call.name.as_str() {
            "bash" => match arg("command") {
                Some(command) => Ok(Pending::Bash(self.jobs.spawn(command, true))),
                None => Err(Box::new(failure("bash needs a string \"command\""))),
            },
            "read" => match (arg("path"), ReadWindow::of_arguments(args)) {
                (Some(path), Ok(window)) => read(now, ctx, path, window),
                (None, _) => Err(Box::new(failure("read needs a string \"path\""))),
                (_, Err(error)) => Err(Box::new(failure(error))),
            },
            "ask" => match arg("question") {
                Some(question) => {
                    let timeout = args.get("timeout").and_then(Value::as_u64);
                    let timeout = timeout.unwrap_or(ASK_TIMEOUT_MS);
                    match dialog(question, arg("kind"), args.get("options"), timeout) {
                        Ok(request) => ask(now, ctx.agent, request),
                        Err(error) => Err(Box::new(failure(error))),
                    }
                }
                None => Err(Box::new(failure("ask needs a string \"question\""))),
            },
            "write" => match (arg("path"), arg("content")) {
                (Some(path), Some(content)) => {
                    let work = IoWork::WriteFile {
                        path: path.into(),
                        bytes: content.as_bytes().to_vec(),
                    };
                    Ok(change(ctx.io, work, path))
                }
                _ => Err(Box::new(failure(
                    "write needs a string \"path\" and a string \"content\"",
                ))),
            },
            "edit" => match (arg("path"), edits_of(args)) {
                (Some(path), Some(edits)) => {
                    let work = IoWork::EditFile {
                        path: path.into(),
                        edits,
                    };
                    Ok(change(ctx.io, work, path))
                }
                _ => Err(Box::new(failure(
                    "edit needs a string \"path\" and \"edits\" [{oldText, newText}] (or one oldText and newText)",
                ))),
            },
            "todo" => match todo::run(args) {
                Ok((result, phases)) => {
                    ctx.sessions.set_todos(ctx.millis, phases, ctx.io);
                    Err(Box::new((result, false)))
                }
                Err(error) => Err(Box::new(failure(error))),
            },
            name if ctx.agent.host_tools().any(|t| t.name == name) => {
                let host = AgentCall::CallHostTool {
                    tool_call_id: call.id.clone(),
                    name: name.to_owned(),
                    arguments: args.clone(),
                };
                let AgentCallResult::HostCall(made) = drive::call(ctx.agent, now, host) else {
                    unreachable!("a host tool call returns a host call")
                };
                match made {
                    Ok(host) => Ok(Pending::Host(host)),
                    Err(error) => Err(Box::new(failure(error.to_string()))),
                }
            }
            name => Err(Box::new(failure(format!("Tool {name} not found")))),
        }
    }

    /// Withdraws what a tool call waits for (abort).
    pub(crate) fn withdraw(&mut self, now: Instant, agent: &mut Agent, on: &Pending) {
        match *on {
            Pending::Bash(job) => self.jobs.kill(job),
            Pending::Host(call) => {
                drive::call(agent, now, AgentCall::CancelHostTool(call));
            }
            Pending::Uri(request) => {
                drive::call(agent, now, AgentCall::CancelHostUri(request));
            }
            Pending::Dialog(dialog) | Pending::Approval(dialog) => {
                drive::call(agent, now, AgentCall::UiCancel(dialog));
            }
            // The read's answer finds nothing waiting for it.
            Pending::Io(_) | Pending::Done => {}
        }
    }
}

/// `ask`'s dialog (HOST-06): by its `kind`, a `confirm` (the default), an `input`, or a
/// `select` of `options` (strings), with the question as its title and a timeout of
/// `timeout_ms` (the argument `timeout`, 60 s by default).
fn dialog(
    question: &str,
    kind: Option<&str>,
    options: Option<&Value>,
    timeout_ms: u64,
) -> Result<UiRequest, String> {
    let title = question.to_owned();
    let timeout = Some(timeout_ms.into());
    match kind.unwrap_or("confirm") {
        "confirm" => Ok(UiRequest::Confirm(ConfirmRequest {
            title,
            message: Some(question.to_owned()),
            timeout,
            ..ConfirmRequest::default()
        })),
        "input" => Ok(UiRequest::Input(InputRequest {
            title,
            timeout,
            ..InputRequest::default()
        })),
        "select" => {
            let options: Option<Vec<String>> = options
                .and_then(Value::as_array)
                .and_then(|o| o.iter().map(|v| v.as_str().map(str::to_owned)).collect());
            match options {
                Some(options) if !options.is_empty() => Ok(UiRequest::Select(SelectRequest {
                    title,
                    options,
                    timeout,
                    ..SelectRequest::default()
                })),
                _ => Err("ask's select needs \"options\", a list of strings".to_owned()),
            }
        }
        other => Err(format!(
            "ask's kind is confirm, input or select, not {other:?}"
        )),
    }
}

/// The option of an approval that lets the tool run (AGENT-07, omp's).
pub(crate) const APPROVE: &str = "Approve";
/// The option of an approval that refuses it.
pub(crate) const DENY: &str = "Deny";
/// How much of a command an approval's title quotes (omp's `truncateForPrompt`), in
/// characters.
const APPROVAL_QUOTE_CHARS: usize = 2000;

/// Whether a call of `name` asks the host before it runs under `mode` (AGENT-07), as omp's
/// tiers say: `bash` (omp's `exec` tier) unless nothing asks, `write` and `edit` (its
/// `write` tier) under [`ApprovalMode::AskBeforeChanges`] only.
pub(crate) fn asks_first(mode: ApprovalMode, name: &str) -> bool {
    match mode {
        ApprovalMode::Unasked => false,
        ApprovalMode::AskBeforeBash => name == "bash",
        ApprovalMode::AskBeforeChanges => matches!(name, "bash" | "write" | "edit"),
    }
}

/// The approval of `call` (AGENT-07): omp 18.2.3's `select`, titled by its
/// `formatApprovalPrompt` (`Allow tool: NAME`, then the tool's `formatApprovalDetails`
/// lines: `Command: …` for bash, `Path: …` and `Content:` then the content for write,
/// `File: …` for edit), options `Approve` and `Deny`, no timeout.
pub(crate) fn approval(call: &ToolCall) -> UiRequest {
    let text = |key: &str| call.arguments.get(key).and_then(Value::as_str);
    let mut title = format!("Allow tool: {}", call.name);
    match call.name.as_str() {
        "bash" => {
            title.push_str("\nCommand: ");
            title.push_str(&quote_for_prompt(text("command").unwrap_or("(missing)")));
        }
        "write" => {
            title.push_str("\nPath: ");
            title.push_str(&quote_for_prompt(text("path").unwrap_or("(missing)")));
            title.push_str("\nContent:\n");
            title.push_str(&quote_for_prompt(text("content").unwrap_or_default()));
        }
        "edit" => {
            title.push_str("\nFile: ");
            title.push_str(&quote_for_prompt(text("path").unwrap_or("(unknown)")));
        }
        _ => {}
    }
    UiRequest::Select(SelectRequest {
        title,
        options: vec![APPROVE.to_owned(), DENY.to_owned()],
        ..SelectRequest::default()
    })
}

/// omp's `truncateForPrompt`: the first [`APPROVAL_QUOTE_CHARS`] characters, then
/// `[…Nch elided…]`.
fn quote_for_prompt(text: &str) -> String {
    let total = text.chars().count();
    if total <= APPROVAL_QUOTE_CHARS {
        return text.to_owned();
    }
    let kept: String = text.chars().take(APPROVAL_QUOTE_CHARS).collect();
    format!("{kept}[…{}ch elided…]", total - APPROVAL_QUOTE_CHARS)
}

/// Whether the host's answer to an approval lets the tool run: `Approve` chosen. Anything
/// else (`Deny`, a cancel, a timeout, a closed host) refuses it, as omp's does.
pub(crate) fn approved(outcome: &DialogOutcome) -> bool {
    outcome.value() == Some(APPROVE)
}

/// The result of a call the host refused (AGENT-07): omp's error, `Tool call denied by
/// user: NAME`.
pub(crate) fn denied(name: &str) -> Finished {
    failure(format!("Tool call denied by user: {name}"))
}

/// `ask`: the dialog for the host (HOST-06), answered with the text or choice (yes or no for
/// a confirm), or "timed out" when its timeout passes.
fn ask(now: Instant, agent: &mut Agent, request: UiRequest) -> Result<Pending, Box<Finished>> {
    let AgentCallResult::Dialog(opened) = drive::call(agent, now, AgentCall::UiDialog(request))
    else {
        unreachable!("a dialog call returns a dialog")
    };
    match opened {
        Ok(dialog) => Ok(Pending::Dialog(dialog)),
        Err(error) => Err(Box::new(failure(error.to_string()))),
    }
}

/// `read`: a URI of a scheme the host registered goes to the host; anything else is a local
/// path (`file://` stripped), read by the loop ([`IoWork::ReadFile`]): the lines of `window`
/// (`offset`/`limit`, for a URI ignored).
fn read(
    now: Instant,
    ctx: ToolCtx<'_>,
    path: &str,
    window: ReadWindow,
) -> Result<Pending, Box<Finished>> {
    let scheme = path
        .split_once(':')
        .map(|(s, _)| s.to_ascii_lowercase())
        .unwrap_or_default();
    if ctx.agent.host_uri_schemes().any(|s| s.scheme == scheme) {
        let uri = AgentCall::RequestHostUri(path.to_owned(), HostUriOperation::Read);
        let AgentCallResult::HostUri(made) = drive::call(ctx.agent, now, uri) else {
            unreachable!("a host URI call returns a request")
        };
        return match made {
            Ok(request) => Ok(Pending::Uri(request)),
            Err(error) => Err(Box::new(failure(error.to_string()))),
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
    Ok(Pending::Io(ctx.io.request(work, purpose)))
}

/// A `write` or `edit` of `path`: the file work, handed to the loop.
fn change(io: &mut IoQueue, work: IoWork, path: &str) -> Pending {
    let purpose = IoFor::Change {
        path: path.to_owned(),
    };
    Pending::Io(io.request(work, purpose))
}

/// An `edit`'s replacements: `edits: [{oldText, newText}]`, or one `oldText` and `newText`;
/// `None` when they are not strings, or there is none.
fn edits_of(args: &Value) -> Option<Vec<(String, String)>> {
    let pair = |edit: &Value| {
        let text = |key: &str| edit.get(key).and_then(Value::as_str).map(str::to_owned);
        Some((text("oldText")?, text("newText")?))
    };
    let edits: Vec<(String, String)> = match args.get("edits") {
        Some(Value::Array(edits)) => edits.iter().map(pair).collect::<Option<_>>()?,
        Some(_) => return None,
        None => vec![pair(args)?],
    };
    (!edits.is_empty()).then_some(edits)
}

/// The result of a `write` or `edit`, from the loop's answer.
pub(crate) fn change_finished(path: &str, outcome: IoOutcome) -> Finished {
    match outcome {
        IoOutcome::Changed(bytes) => (
            text_result(format!("Wrote {bytes} bytes to {path}"), None),
            false,
        ),
        IoOutcome::Failed(error) => failure(error),
        other => failure(format!("unexpected answer to a change: {other:?}")),
    }
}

/// The result of a local `read`, from the loop's answer.
pub(crate) fn read_finished(path: &str, window: &ReadWindow, outcome: IoOutcome) -> Finished {
    match outcome {
        IoOutcome::Read(found) => match read::result(path, window, found) {
            Ok(result) => (result, false),
            Err(error) => failure(error.to_string()),
        },
        IoOutcome::Failed(error) => failure(error),
        other => failure(format!("unexpected answer to a read: {other:?}")),
    }
}

/// The result of the `ask` tool's dialog.
pub(crate) fn dialog_finished(outcome: DialogOutcome) -> Finished {
    let answer = match outcome {
        DialogOutcome::Disconnected => "disconnected",
        // An input's text or a select's choice.
        ref o if o.value().is_some() => o.value().unwrap_or_default(),
        ref o if o.timed_out() || o == &DialogOutcome::TimedOut => "timed out",
        ref o if o.confirmed() => "yes",
        _ => "no",
    };
    (text_result(answer, None), false)
}

/// The result of the model's `bash` tool (or of one abandoned by an abort).
pub(crate) fn bash_finished(outcome: BashOutcome) -> Finished {
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
    let cut = outcome.cut_bytes > 0;
    let details = BashDetails {
        exit_code: outcome.exit_code,
        cancelled: outcome.cancelled,
        truncated: cut.then_some(true),
        cut_bytes: cut.then_some(outcome.cut_bytes),
    };
    (text_result(text, Some(details_json(&details))), is_error)
}

/// The partial result of the model's running `bash` call (AGENT-06): as omp's,
/// `{content:[{type:"text",text}], details:{}}` with the tail of the output so far as the
/// text; when that is not the whole output, `details` says so (`{truncated:true,cutBytes}`,
/// the bytes before the text).
pub(crate) fn bash_update(output: OutputTail) -> Value {
    let cut = output.cut_bytes > 0;
    let details = BashUpdateDetails {
        truncated: cut.then_some(true),
        cut_bytes: cut.then_some(output.cut_bytes),
    };
    let result = text_result(output.text, Some(details_json(&details)));
    serde_json::to_value(result).expect("a tool result serialises")
}

/// The `details` of a running `bash` call's update.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BashUpdateDetails {
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cut_bytes: Option<u64>,
}

/// The `details` of the model's `bash` tool's result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BashDetails {
    exit_code: Option<i32>,
    cancelled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cut_bytes: Option<u64>,
}

/// A tool's own `details`, as the JSON a tool result carries.
pub(crate) fn details_json(details: &impl Serialize) -> Value {
    serde_json::to_value(details).expect("tool details serialise")
}

/// A host tool's result (HOST-02) or its failure (HOST-07). A result without the shape of
/// a tool result keeps its members (`details` among them) beside an empty `content`.
pub(crate) fn host_tool_finished(outcome: Result<Value, HostFailure>) -> Finished {
    match outcome {
        Ok(result) => (tool_result_of(result), false),
        Err(error) => failure(error.to_string()),
    }
}

fn tool_result_of(result: Value) -> ToolResult {
    match serde_json::from_value::<ToolResult>(result.clone()) {
        Ok(typed) => typed,
        Err(_) => {
            let mut extra = match result {
                Value::Object(members) => members,
                _ => Map::new(),
            };
            extra.shift_remove("content");
            ToolResult {
                details: extra.shift_remove("details"),
                extra,
                ..ToolResult::default()
            }
        }
    }
}

/// A host URI read's content (HOST-05) or its failure.
pub(crate) fn host_uri_finished(outcome: Result<HostUriContent, HostFailure>) -> Finished {
    match outcome {
        Ok(content) => {
            let details = UriDetails {
                content_type: content.content_type,
                immutable: content.immutable,
                notes: content.notes,
            };
            (
                text_result(content.content, Some(details_json(&details))),
                false,
            )
        }
        Err(error) => failure(error.to_string()),
    }
}

/// The `details` of a host URI `read`'s result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UriDetails {
    content_type: String,
    immutable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    notes: Option<Vec<String>>,
}
