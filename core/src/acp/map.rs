//! One session's agent events as ACP `session/update`s (ACP-03..05, ACP-17..19).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, Meta, SessionUpdate, StopReason, TextContent, ToolCall,
    ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;

use super::bound::{bound_snapshot, bound_tail, cut_to_bytes, whole};
use super::card::{
    argument_diffs, argument_locations, diff_content, raw_output, result_diffs, result_locations,
};
use super::command::{self, is_command_tool, CommandDisplay, ToolResultKind};
use super::kind::tool_kind;
use super::plan::{plan_from_phases, plan_from_tasks};
use super::status::Facts;
use crate::blocks::{show_tool_result, uri_may_carry_credential, RawToolResult, Source};
use crate::wire::{
    AgentMessage, AssistantMessageEvent, ContentBlock as WireBlock, MessageContent, SessionEvent,
};

/// The longest tool card title, in bytes.
const MAX_TITLE_BYTES: usize = 256;

/// A tool call of the assistant message being streamed (ACP-08).
#[derive(Debug)]
struct MessageCall {
    id: String,
    name: String,
    arguments: Value,
    intent: Option<String>,
    /// An approval dialog was tied to it already.
    asked: bool,
}

/// The most calls of one assistant message an approval can be tied to.
const MAX_MESSAGE_CALLS: usize = 256;

/// A tool card the editor has open (ACP-05).
#[derive(Debug, Default)]
struct OpenCard {
    /// The card is `pending`: its arguments stream, or it waits for its approval (ACP-08,
    /// ACP-19); it turns `in_progress` when the tool runs.
    pending: bool,
    name: String,
    /// The call's arguments, once known: its diffs and locations come from them (ACP-17,
    /// ACP-18).
    args: Option<Value>,
    /// The output shown so far while it runs: the text content last sent, or the tail the
    /// terminal's output so far came from (ACP-30).
    sent: String,
    /// A newer output tail not sent yet: the agent sent more than one in a row, and only
    /// the last goes (ACP-30).
    held: Option<String>,
}

/// Whether the editor cancelled a turn (`session/cancel`): a cancelled turn, and what was
/// queued behind it, ends `cancelled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Cancel {
    /// The turn runs on.
    #[default]
    NotRequested,
    /// The editor cancelled it; the agent was told to abort.
    Requested,
}

/// Maps one session's agent events to `session/update`s.
#[derive(Debug, Default)]
pub(crate) struct Mapper {
    /// Thinking blocks of the current message that streamed deltas (ACP-04: a completion-only
    /// block is shown once, at its end).
    thinking_streamed: BTreeSet<u64>,
    /// Tool cards open, by call id (ACP-05).
    tools: BTreeMap<String, OpenCard>,
    /// The tool calls of the current assistant message that have not finished, in order:
    /// what an approval dialog can be about (ACP-08).
    calls: Vec<MessageCall>,
    /// A failed message's error text was shown this turn (ACP-11).
    error_shown: bool,
    /// The last text the turn showed did not end its line: a notice starts on a line of its
    /// own (ACP-11).
    mid_line: bool,
    /// Cards of unknown item kinds shown, by id (ACP-05).
    unknown_items: BTreeSet<String>,
    /// Unknown items shown without an id of their own.
    unnamed_items: u64,
    /// The last assistant message's `stopReason` this turn.
    stop_reason: Option<String>,
    /// The last assistant message failed with a content filter's or a refusal's error
    /// (ACP-11, as omp's own ACP mode reads it).
    refused: bool,
    /// The last assistant message failed for want of credentials: its error text (ACP-42).
    sign_in: Option<String>,
    /// Prompts started, for the `turnId` of usage (ACP-02).
    turns: u64,
    /// Whether the editor opted into `muse/usage` metadata (ACP-02).
    pub usage_meta: bool,
    /// The editor's session id when tool cards carry stored-output handles (OUT-02: the
    /// editor opted in and the agent serves reads); `None` for no handles.
    pub output_session: Option<String>,
    /// What the session has observed (ACP-01, ACP-02).
    pub facts: Facts,
    /// How a command's output reaches the editor: text, or a terminal for an editor that
    /// opted in (ACP-30).
    pub(crate) command_display: CommandDisplay,
    /// The session's working directory: card paths are made absolute against it (ACP-17,
    /// ACP-18).
    pub cwd: Option<PathBuf>,
    /// The cards the session's mode approved, whose line stays first (ACP-34).
    pub(crate) notes: super::mode::CardNotes,
    /// Calls whose final update is to be held, not sent, when they end (ACP-38: it waits
    /// for the editor's writes of their files).
    hold: BTreeSet<String>,
    /// The final updates held, by call id (ACP-38).
    held: BTreeMap<String, SessionUpdate>,
}

impl Mapper {
    /// A mapper with nothing seen.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A turn starts: the last stop reason is forgotten.
    pub(crate) fn start_turn(&mut self) {
        self.stop_reason = None;
        self.error_shown = false;
        self.mid_line = false;
        self.turns += 1;
    }

    /// The arguments of an open card's call, once known (ACP-38: the files a write or an
    /// edit names).
    pub(crate) fn card_args(&self, id: &str) -> Option<&Value> {
        self.tools.get(id).and_then(|card| card.args.as_ref())
    }

    /// The final update of call `id` is held when it ends, until [`Mapper::release_final`]
    /// (ACP-38).
    pub(crate) fn hold_final(&mut self, id: &str) {
        self.hold.insert(id.to_owned());
    }

    /// The held final update of call `id`, if any, no longer held (ACP-38).
    pub(crate) fn release_final(&mut self, id: &str) -> Option<SessionUpdate> {
        self.hold.remove(id);
        self.held.remove(id)
    }

    /// Every held final update, no longer held, in call id order (ACP-38).
    pub(crate) fn release_all(&mut self) -> Vec<SessionUpdate> {
        self.hold.clear();
        std::mem::take(&mut self.held).into_values().collect()
    }

    /// A short notice as an `agent_message_chunk` on a line of its own (ACP-10, ACP-11).
    pub(crate) fn notice(&mut self, line: &str) -> SessionUpdate {
        let text = if self.mid_line {
            format!("\n{line}\n")
        } else {
            format!("{line}\n")
        };
        self.mid_line = false;
        SessionUpdate::AgentMessageChunk(chunk(text))
    }

    /// Ties an approval dialog for tool `name` to its call (ACP-08): the first call of that
    /// name in the assistant message being streamed that has not finished and that no
    /// approval was tied to yet. Gives the call id, the request's `toolCall` (title, kind,
    /// raw input; `pending` when the card opens now) and the card's opening when the editor
    /// has not seen it yet; `None` when no call fits.
    pub(crate) fn approval_target(
        &mut self,
        name: &str,
    ) -> Option<(String, ToolCallUpdate, Option<SessionUpdate>)> {
        let call = self.calls.iter_mut().find(|c| c.name == name && !c.asked)?;
        call.asked = true;
        let id = call.id.clone();
        let title = title(&call.name, Some(&call.arguments), call.intent.as_deref());
        let mut fields = ToolCallUpdateFields::new()
            .title(title)
            .kind(tool_kind(&call.name, Some(&call.arguments)))
            .raw_input(withhold_in_value(&call.arguments));
        let opening = if let Some(card) = self.tools.get(&id) {
            if card.pending {
                fields = fields.status(ToolCallStatus::Pending);
            }
            None
        } else {
            let name = call.name.clone();
            let args = call.arguments.clone();
            let intent = call.intent.clone();
            self.tools.insert(
                id.clone(),
                OpenCard {
                    pending: true,
                    name: name.clone(),
                    args: Some(args.clone()),
                    ..OpenCard::default()
                },
            );
            fields = fields.status(ToolCallStatus::Pending);
            let card = self.opening(&id, &name, Some(&args), intent.as_deref());
            Some(SessionUpdate::ToolCall(
                card.status(ToolCallStatus::Pending),
            ))
        };
        Some((id.clone(), ToolCallUpdate::new(id, fields), opening))
    }

    /// The kind of the call an approval for tool `name` would be tied to (ACP-08, ACP-18),
    /// without tying it; `None` when no call fits.
    pub(crate) fn approval_kind(&self, name: &str) -> Option<ToolKind> {
        let call = self.calls.iter().find(|c| c.name == name && !c.asked)?;
        Some(tool_kind(&call.name, Some(&call.arguments)))
    }

    /// ACP-43: the name of the one call of the assistant message being streamed that has
    /// started (its card open and running), has not finished, has no approval tied yet and
    /// has shown no output, and is no `ask` (a tool whose dialogs are its questions);
    /// `None` when no call, or more than one, fits.
    pub(crate) fn confirm_target(&self) -> Option<&str> {
        let mut fits = self.calls.iter().filter(|c| {
            !c.asked
                && c.name != super::confirm::QUESTION_TOOL
                && self.tools.get(&c.id).is_some_and(|card| {
                    !card.pending && card.sent.is_empty() && card.held.is_none()
                })
        });
        let call = fits.next()?;
        fits.next().is_none().then_some(call.name.as_str())
    }

    /// What an open card shows before it runs: a command's terminal (ACP-30), else its
    /// arguments' diffs (ACP-17) and the output shown so far.
    pub(crate) fn card_content(&self, id: &str) -> Vec<ToolCallContent> {
        let Some(card) = self.tools.get(id) else {
            return Vec::new();
        };
        if self.is_terminal(&card.name) {
            return vec![command::terminal_content(id)];
        }
        let diffs = argument_diffs(&card.name, card.args.as_ref(), self.cwd.as_deref());
        let mut content = diff_content(diffs);
        if !card.sent.is_empty() {
            content.push(text_content(card.sent.clone()));
        }
        content
    }

    /// Notes a tool call block of the assistant message being streamed (ACP-08).
    fn note_call(&mut self, call: &crate::wire::ToolCall) {
        if self.calls.iter().any(|c| c.id == call.id) || self.calls.len() >= MAX_MESSAGE_CALLS {
            return;
        }
        self.calls.push(MessageCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            intent: call.intent.clone(),
            asked: false,
        });
    }

    /// A failed message's error text, once a turn (ACP-11: as omp's own ACP mode shows it).
    fn message_error(&mut self, message: &AgentMessage, out: &mut Vec<SessionUpdate>) {
        let AgentMessage::Assistant(assistant) = message else {
            return;
        };
        if self.error_shown || assistant.stop_reason.as_deref() != Some("error") {
            return;
        }
        if let Some(error) = assistant.error_message.as_deref().filter(|e| !e.is_empty()) {
            self.error_shown = true;
            out.push(self.notice(&super::notices::line("error", error)));
        }
    }

    /// The ACP stop reason of the turn that just ended: `aborted` → `cancelled`, `length` →
    /// `max_tokens`, `error` → `refusal` when its error names a content filter or a refusal
    /// (ACP-11), anything else `end_turn`; `cancelled` whenever the editor cancelled.
    pub(crate) fn stop_reason(&self, cancel: Cancel) -> StopReason {
        match self.stop_reason.as_deref() {
            _ if cancel == Cancel::Requested => StopReason::Cancelled,
            Some("aborted") => StopReason::Cancelled,
            Some("length") => StopReason::MaxTokens,
            Some("error") if self.refused => StopReason::Refusal,
            _ => StopReason::EndTurn,
        }
    }

    /// The error text of a turn that failed for want of credentials (ACP-42): its last
    /// assistant message's, when that failed so; the prompt is answered `auth_required`.
    pub(crate) fn sign_in_error(&self) -> Option<&str> {
        self.sign_in
            .as_deref()
            .filter(|_| self.stop_reason.as_deref() == Some("error"))
    }

    /// The updates one agent event gives, in order.
    pub(crate) fn event(&mut self, event: &SessionEvent) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        // ACP-30: output held from a run of updates goes before anything else.
        if !matches!(event, SessionEvent::ToolExecutionUpdate(_)) {
            out.extend(self.held_output());
        }
        match event {
            SessionEvent::MessageStart(start) => {
                self.thinking_streamed.clear();
                if matches!(start.message, AgentMessage::Assistant(_)) {
                    self.calls.clear();
                }
            }
            SessionEvent::MessageUpdate(update) => {
                match &update.assistant_message_event {
                    AssistantMessageEvent::ToolCallStart(start) => {
                        // The partial message is typed only here, once a call starts.
                        let partial = start.partial.as_ref().and_then(|p| p.get().ok());
                        let message = update.message.as_ref().and_then(|m| m.get().ok());
                        let partial = partial.as_ref().map(|p| &p.content[..]);
                        let message = match &message {
                            Some(AgentMessage::Assistant(m)) => Some(&m.content[..]),
                            _ => None,
                        };
                        let block = start.content_index.and_then(|i| {
                            let i = usize::try_from(i).ok()?;
                            partial.or(message)?.get(i)
                        });
                        let named = match block {
                            Some(WireBlock::ToolCall(call)) => {
                                Some((call.id.as_str(), call.name.as_str()))
                            }
                            _ => start.id.as_deref().zip(start.tool_name.as_deref()),
                        };
                        if let Some((id, name)) = named.filter(|(id, _)| !id.is_empty()) {
                            self.streaming_call(id, name, &mut out);
                        }
                    }
                    AssistantMessageEvent::ToolCallEnd(end) => {
                        self.note_call(&end.tool_call);
                        self.streamed_call(&end.tool_call, &mut out);
                    }
                    _ => {}
                }
                self.message_update(&update.assistant_message_event, &mut out)
            }
            SessionEvent::MessageEnd(end) => {
                self.note_stop(&end.message);
                if let AgentMessage::Assistant(assistant) = &end.message {
                    for block in &assistant.content {
                        if let WireBlock::ToolCall(call) = block {
                            self.note_call(call);
                        }
                    }
                }
                self.message_error(&end.message, &mut out);
                // ACP-02: each message's usage is counted once, here.
                let turn_id = format!("turn-{}", self.turns);
                let counted = self.facts.assistant_message(&end.message, &turn_id);
                if self.usage_meta && counted {
                    if let Some(update) = self.facts.usage_update() {
                        out.push(SessionUpdate::SessionInfoUpdate(update));
                    }
                }
            }
            SessionEvent::ThinkingLevelChanged(level) => {
                if let Some(effort) = level.thinking_level.as_ref().or(level.level.as_ref()) {
                    self.facts.effort = Some(effort.clone());
                }
            }
            SessionEvent::AgentEnd(end) => {
                // ACP-19: a call still pending when the run ends never ran.
                let never_ran: Vec<String> = self
                    .tools
                    .iter()
                    .filter(|(_, card)| card.pending)
                    .map(|(id, _)| id.clone())
                    .collect();
                for id in never_ran {
                    self.tools.remove(&id);
                    let fields = ToolCallUpdateFields::new().status(ToolCallStatus::Failed);
                    out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                        id, fields,
                    )));
                }
                if let Some(message) = end
                    .messages
                    .iter()
                    .rev()
                    .find(|m| matches!(m, AgentMessage::Assistant(_)))
                {
                    self.note_stop(message);
                    self.message_error(message, &mut out);
                }
            }
            SessionEvent::ToolExecutionStart(start) => {
                self.run_tool(&start.tool_call_id, start.args.as_ref(), &mut out);
                self.open_tool(
                    &start.tool_call_id,
                    &start.tool_name,
                    start.args.as_ref(),
                    start.intent.as_deref(),
                    &mut out,
                );
            }
            SessionEvent::ToolExecutionUpdate(update) => {
                self.run_tool(&update.tool_call_id, update.args.as_ref(), &mut out);
                self.open_tool(
                    &update.tool_call_id,
                    &update.tool_name,
                    update.args.as_ref(),
                    None,
                    &mut out,
                );
                // ACP-05, ACP-30: an output delta updates the original call id; it is held
                // until something else comes, so a run of them is one update.
                if let Some(text) = update
                    .partial_result
                    .as_ref()
                    .and_then(|r| result_text(r, ToolResultKind::Ok))
                {
                    let terminal = self.is_terminal(&update.tool_name);
                    if let Some(card) = self.tools.get_mut(&update.tool_call_id) {
                        card.held = Some(if terminal {
                            command::remembered(&text)
                        } else {
                            bound_tail(&text)
                        });
                    }
                }
            }
            SessionEvent::ToolExecutionEnd(end) => {
                self.open_tool(&end.tool_call_id, &end.tool_name, None, None, &mut out);
                let card = self.tools.remove(&end.tool_call_id).unwrap_or_default();
                self.calls.retain(|c| c.id != end.tool_call_id);
                let kind = ToolResultKind::of(end.is_error);
                let details = end.result.as_ref().and_then(|r| r.get("details"));
                let mut finished = finished_card(
                    &Finished {
                        id: &end.tool_call_id,
                        name: &end.tool_name,
                        args: card.args.as_ref(),
                        kind,
                        result: end.result.as_ref(),
                        details,
                        cwd: self.cwd.as_deref(),
                    },
                    self.output_session.as_deref(),
                );
                if let SessionUpdate::ToolCallUpdate(update) = &mut finished {
                    if self.is_terminal(&end.tool_name) {
                        let text = end.result.as_ref().and_then(|r| result_text(r, kind));
                        terminal_end(update, &card.sent, text.as_deref(), details, kind);
                    }
                }
                // ACP-38: held while its files go to the editor.
                if self.hold.remove(&end.tool_call_id) {
                    self.held.insert(end.tool_call_id.clone(), finished);
                } else {
                    out.push(finished);
                }
                // ACP-03: the todo tool's phases replace the plan.
                if end.tool_name == "todo" && kind == ToolResultKind::Ok {
                    if let Some(phases) = end
                        .result
                        .as_ref()
                        .and_then(|r| r.pointer("/details/phases"))
                        .and_then(Value::as_array)
                    {
                        out.push(SessionUpdate::Plan(plan_from_phases(phases)));
                    }
                }
            }
            SessionEvent::TodoReminder(reminder) => {
                let todos = reminder.todos.as_deref().unwrap_or(&[]);
                out.push(SessionUpdate::Plan(plan_from_tasks(todos)));
            }
            SessionEvent::TodoAutoClear(_) => out.push(SessionUpdate::Plan(plan_from_tasks([]))),
            // ACP-11: retries, compactions and notices as short lines.
            other => {
                if let Some(line) = super::notices::event(other) {
                    out.push(self.notice(&line));
                }
            }
        }
        for update in &out {
            if let SessionUpdate::Plan(plan) = update {
                self.facts.plan_size = Some(plan.entries.len());
            }
        }
        // ACP-34: a card the mode approved keeps saying so.
        self.notes.apply(&mut out);
        out
    }

    /// An agent frame of a kind this version does not know (`type` not one of the wire
    /// model's), shown as a card with its kind, status and a fallback text (ACP-05,
    /// seed 003: "public unknown item kinds display kind/status/fallback text"). A frame with
    /// no string `type`, or a known type whose members did not parse, is not an item and
    /// shows nothing. The card's id is the item's `id` (or `itemId`), so a later frame of the
    /// same item updates it; without one each frame is a card of its own.
    pub(crate) fn unknown_item(&mut self, item: &Value) -> Vec<SessionUpdate> {
        let Some(kind) = item.get("type").and_then(Value::as_str) else {
            return Vec::new();
        };
        if crate::wire::AgentFrame::is_known_tag(kind) {
            return Vec::new();
        }
        let status_word = item.get("status").and_then(Value::as_str);
        let status = match status_word {
            Some("pending" | "queued") => ToolCallStatus::Pending,
            Some("in_progress" | "inProgress" | "running" | "started") => {
                ToolCallStatus::InProgress
            }
            Some("failed" | "error" | "errored") => ToolCallStatus::Failed,
            // A one-off item with no status, or one this version does not know, is shown
            // done: nothing will close it later.
            _ => ToolCallStatus::Completed,
        };
        let id = ["id", "itemId"]
            .iter()
            .find_map(|k| item.get(*k).and_then(Value::as_str))
            .map(|id| format!("item-{}", cut_to_bytes(id, MAX_TITLE_BYTES)))
            .unwrap_or_else(|| {
                self.unnamed_items += 1;
                format!("item-{}", self.unnamed_items)
            });
        let notice =
            format!(
            "[unknown item \"{}\", status {}: this adapter does not know this kind; shown as text]",
            visible_label(kind),
            status_word.map_or("unknown".to_owned(), |s| format!("\"{}\"", visible_label(s))),
        );
        let fallback = ["text", "message", "summary", "title"]
            .iter()
            .find_map(|k| item.get(*k).and_then(Value::as_str))
            .filter(|t| !t.is_empty());
        let text = match fallback {
            Some(text) => format!("{notice}\n{}", withhold_credential_uris(text)),
            None => notice,
        };
        let content = vec![text_content(bound_snapshot(&text))];
        if self.unknown_items.insert(id.clone()) {
            vec![SessionUpdate::ToolCall(
                ToolCall::new(id, title(kind, None, None))
                    .kind(ToolKind::Other)
                    .status(status)
                    .content(content),
            )]
        } else {
            let fields = ToolCallUpdateFields::new().status(status).content(content);
            vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                id, fields,
            ))]
        }
    }

    fn message_update(&mut self, event: &AssistantMessageEvent, out: &mut Vec<SessionUpdate>) {
        match event {
            AssistantMessageEvent::TextDelta(delta) => {
                if let Some(text) = whole(&delta.delta) {
                    if !text.is_empty() {
                        self.mid_line = !text.ends_with('\n');
                    }
                    out.push(SessionUpdate::AgentMessageChunk(chunk(text)));
                }
            }
            // ACP-04: thinking deltas are the public reasoning the agent streams; signatures
            // and redacted blocks live in other fields, never read here.
            AssistantMessageEvent::ThinkingDelta(delta) => {
                self.thinking_streamed.insert(delta.content_index);
                if let Some(text) = whole(&delta.delta) {
                    out.push(SessionUpdate::AgentThoughtChunk(chunk(text)));
                }
            }
            // ACP-04: a completion-only summary (no deltas) is shown once, in part order.
            AssistantMessageEvent::ThinkingEnd(end)
                if self.thinking_streamed.insert(end.content_index) =>
            {
                if let Some(text) = whole(&end.content) {
                    out.push(SessionUpdate::AgentThoughtChunk(chunk(text)));
                }
            }
            _ => {}
        }
    }

    fn note_stop(&mut self, message: &AgentMessage) {
        if let AgentMessage::Assistant(assistant) = message {
            if let Some(reason) = &assistant.stop_reason {
                self.stop_reason = Some(reason.clone());
                self.refused = reason == "error"
                    && assistant
                        .error_message
                        .as_deref()
                        .is_some_and(names_refusal);
                // ACP-42: a turn that failed for want of credentials.
                self.sign_in = assistant
                    .error_message
                    .clone()
                    .filter(|e| reason == "error" && super::auth::names_missing_credentials(e));
            }
        }
    }

    /// A card that was pending (its arguments streamed, or it waited for its approval) runs
    /// now: `in_progress` (ACP-08, ACP-19); with what the arguments show when the card had
    /// none yet.
    fn run_tool(&mut self, id: &str, args: Option<&Value>, out: &mut Vec<SessionUpdate>) {
        let cwd = self.cwd.clone();
        if let Some(card) = self.tools.get_mut(id).filter(|c| c.pending) {
            card.pending = false;
            let mut fields = ToolCallUpdateFields::new().status(ToolCallStatus::InProgress);
            if let (None, Some(args)) = (&card.args, args) {
                card.args = Some(args.clone());
                fields = described(fields, &card.name, args, None, cwd.as_deref());
            }
            out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                id.to_owned(),
                fields,
            )));
        }
    }

    /// The model starts streaming a call's arguments: its card opens `pending`, titled with
    /// the tool's name (ACP-19).
    fn streaming_call(&mut self, id: &str, name: &str, out: &mut Vec<SessionUpdate>) {
        if self.tools.contains_key(id) {
            return;
        }
        self.tools.insert(
            id.to_owned(),
            OpenCard {
                pending: true,
                name: name.to_owned(),
                ..OpenCard::default()
            },
        );
        let card = ToolCall::new(id.to_owned(), title(name, None, None))
            .kind(tool_kind(name, None))
            .status(ToolCallStatus::Pending);
        out.push(SessionUpdate::ToolCall(self.as_terminal(id, name, card)));
    }

    /// A call's arguments are complete (`toolcall_end`): its card, still `pending`, gets its
    /// title, kind, raw input, locations and argument diffs (ACP-17..19); opened so when the
    /// editor has not seen it.
    fn streamed_call(&mut self, call: &crate::wire::ToolCall, out: &mut Vec<SessionUpdate>) {
        let cwd = self.cwd.clone();
        let Some(card) = self.tools.get_mut(&call.id) else {
            self.tools.insert(
                call.id.clone(),
                OpenCard {
                    pending: true,
                    name: call.name.clone(),
                    args: Some(call.arguments.clone()),
                    ..OpenCard::default()
                },
            );
            let card = self.opening(
                &call.id,
                &call.name,
                Some(&call.arguments),
                call.intent.as_deref(),
            );
            out.push(SessionUpdate::ToolCall(
                card.status(ToolCallStatus::Pending),
            ));
            return;
        };
        if card.args.is_some() {
            return;
        }
        card.args = Some(call.arguments.clone());
        let fields = described(
            ToolCallUpdateFields::new(),
            &call.name,
            &call.arguments,
            call.intent.as_deref(),
            cwd.as_deref(),
        );
        out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call.id.clone(),
            fields,
        )));
    }

    /// Opens the card of a call id not seen yet (ACP-05: every update goes to a card the
    /// editor has).
    fn open_tool(
        &mut self,
        id: &str,
        name: &str,
        args: Option<&Value>,
        intent: Option<&str>,
        out: &mut Vec<SessionUpdate>,
    ) {
        if self.tools.contains_key(id) {
            return;
        }
        self.tools.insert(
            id.to_owned(),
            OpenCard {
                pending: false,
                name: name.to_owned(),
                args: args.cloned(),
                ..OpenCard::default()
            },
        );
        let card = self.opening(id, name, args, intent);
        out.push(SessionUpdate::ToolCall(card));
    }

    /// A live card's opening (ACP-05), a terminal for a command when the editor opted in
    /// (ACP-30).
    fn opening(
        &self,
        id: &str,
        name: &str,
        args: Option<&Value>,
        intent: Option<&str>,
    ) -> ToolCall {
        let card = opening_call(id, name, args, intent, self.cwd.as_deref());
        self.as_terminal(id, name, card)
    }

    /// Whether a call of tool `name` shows its output as a terminal (ACP-30).
    fn is_terminal(&self, name: &str) -> bool {
        self.command_display == CommandDisplay::Terminal && is_command_tool(name)
    }

    /// A command card's opening as a terminal when the editor opted in (ACP-30): its content
    /// `{type: "terminal", terminalId}` (the call id) and `_meta.terminal_info`.
    fn as_terminal(&self, id: &str, name: &str, mut card: ToolCall) -> ToolCall {
        if !self.is_terminal(name) {
            return card;
        }
        let mut meta = card.meta.take().unwrap_or_default();
        meta.extend(command::info_meta(id, self.cwd.as_deref()));
        card.content(vec![command::terminal_content(id)]).meta(meta)
    }

    /// The output tails held for running cards, each an update (ACP-30): as text, the
    /// card's content when it changed; as a terminal, `_meta.terminal_output` with the bytes
    /// not sent yet, when there are any. The bridge asks after each read of the agent's
    /// output, and before any other event is mapped.
    pub(crate) fn held_output(&mut self) -> Vec<SessionUpdate> {
        let terminal = self.command_display == CommandDisplay::Terminal;
        let mut out = Vec::new();
        for (id, card) in &mut self.tools {
            let Some(text) = card.held.take() else {
                continue;
            };
            if terminal && is_command_tool(&card.name) {
                let data = command::new_bytes(&card.sent, &text);
                if !data.is_empty() {
                    let mut meta = Meta::new();
                    command::add_output(&mut meta, id, data);
                    let update = ToolCallUpdate::new(id.clone(), ToolCallUpdateFields::new());
                    out.push(SessionUpdate::ToolCallUpdate(update.meta(meta)));
                }
            } else if text != card.sent {
                let fields = ToolCallUpdateFields::new().content(vec![text_content(text.clone())]);
                out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id.clone(),
                    fields,
                )));
            }
            card.sent = text;
        }
        self.notes.apply(&mut out);
        out
    }
}

/// A command card's final update as a terminal (ACP-30): its content stays the terminal,
/// `_meta.terminal_output` carries the result's text not sent yet and `_meta.terminal_exit`
/// the exit code the details give (0 for a call that did not fail, else `null`).
fn terminal_end(
    update: &mut ToolCallUpdate,
    sent: &str,
    text: Option<&str>,
    details: Option<&Value>,
    kind: ToolResultKind,
) {
    let id = update.tool_call_id.to_string();
    let mut meta = update.meta.take().unwrap_or_default();
    let data = command::new_bytes(sent, text.unwrap_or(""));
    if !data.is_empty() {
        command::add_output(&mut meta, &id, data);
    }
    command::add_exit(&mut meta, &id, command::exit_code(details, kind));
    update.meta = Some(meta);
    update.fields.content = Some(vec![command::terminal_content(&id)]);
}

/// An update's fields with what a call's arguments show: its title, kind, raw input
/// (credentials withheld), locations (ACP-18) and argument diffs (ACP-17).
fn described(
    fields: ToolCallUpdateFields,
    name: &str,
    args: &Value,
    intent: Option<&str>,
    cwd: Option<&Path>,
) -> ToolCallUpdateFields {
    let kind = tool_kind(name, Some(args));
    let mut fields = fields
        .title(title(name, Some(args), intent))
        .kind(kind)
        .raw_input(withhold_in_value(args));
    let locations = argument_locations(kind, Some(args), cwd);
    if !locations.is_empty() {
        fields = fields.locations(locations);
    }
    let diffs = argument_diffs(name, Some(args), cwd);
    if !diffs.is_empty() {
        fields = fields.content(diff_content(diffs));
    }
    fields
}

/// A tool card as it opens, live or replayed (ACP-05): its title, kind (ACP-18), in
/// progress, its arguments with credentials withheld, the locations and diffs they give
/// (ACP-17, ACP-18).
fn opening_card(
    id: &str,
    name: &str,
    args: Option<&Value>,
    intent: Option<&str>,
    cwd: Option<&Path>,
) -> SessionUpdate {
    SessionUpdate::ToolCall(opening_call(id, name, args, intent, cwd))
}

/// The `tool_call` of [`opening_card`].
fn opening_call(
    id: &str,
    name: &str,
    args: Option<&Value>,
    intent: Option<&str>,
    cwd: Option<&Path>,
) -> ToolCall {
    let kind = tool_kind(name, args);
    let mut call = ToolCall::new(id.to_owned(), title(name, args, intent))
        .kind(kind)
        .status(ToolCallStatus::InProgress);
    if let Some(args) = args {
        call = call.raw_input(withhold_in_value(args));
    }
    let locations = argument_locations(kind, args, cwd);
    if !locations.is_empty() {
        call = call.locations(locations);
    }
    let diffs = argument_diffs(name, args, cwd);
    if !diffs.is_empty() {
        call = call.content(diff_content(diffs));
    }
    call
}

/// What a tool card's final update is made of.
struct Finished<'a> {
    id: &'a str,
    name: &'a str,
    /// The call's arguments, when known.
    args: Option<&'a Value>,
    kind: ToolResultKind,
    result: Option<&'a Value>,
    details: Option<&'a Value>,
    cwd: Option<&'a Path>,
}

/// A tool card's final update, live (`tool_execution_end`) or replayed (a `toolResult`):
/// completed or failed; the diffs (ACP-17: the details', else the arguments', none for a
/// failed call) and the result's text, bounded, replace the content (ACP-05: with neither,
/// what was seen stays, so no content field); the locations of the arguments and details
/// (ACP-18); the result as `rawOutput`, bounded (ACP-19); the stored output's handle on the
/// card when the editor negotiated it (`output_session`, OUT-02).
fn finished_card(card: &Finished<'_>, output_session: Option<&str>) -> SessionUpdate {
    let Finished {
        id,
        name,
        args,
        kind,
        result,
        details,
        cwd,
    } = *card;
    let status = if kind == ToolResultKind::Error {
        ToolCallStatus::Failed
    } else {
        ToolCallStatus::Completed
    };
    let mut fields = ToolCallUpdateFields::new().status(status);
    let mut content = Vec::new();
    if kind == ToolResultKind::Ok {
        let mut diffs = result_diffs(details, cwd);
        if diffs.is_empty() {
            diffs = argument_diffs(name, args, cwd);
        }
        content = diff_content(diffs);
    }
    if let Some(text) = result.and_then(|r| result_text(r, kind)) {
        content.push(text_content(bound_snapshot(&text)));
    }
    if !content.is_empty() {
        fields = fields.content(content);
    }
    let locations = result_locations(
        details,
        argument_locations(tool_kind(name, args), args, cwd),
        cwd,
    );
    if !locations.is_empty() {
        fields = fields.locations(locations);
    }
    if let Some(result) = result {
        fields = fields.raw_output(raw_output(result));
    }
    let mut update = ToolCallUpdate::new(id.to_owned(), fields);
    if let (Some(session), Some(stored)) = (output_session, super::history::stored_output(details))
    {
        update = update.meta(super::output::card_meta(session, &stored));
    }
    SessionUpdate::ToolCallUpdate(update)
}

/// Whether a failed message's error names a content filter or a refusal (`content_filter`,
/// `content filter`, `refusal`, `refused`, any case), as omp's own ACP mode reads it.
fn names_refusal(error: &str) -> bool {
    let error = error.to_ascii_lowercase();
    [
        "content_filter",
        "contentfilter",
        "content filter",
        "refusal",
        "refused",
    ]
    .iter()
    .any(|w| error.contains(w))
}

pub(crate) fn chunk(text: String) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

pub(crate) fn text_content(text: String) -> ToolCallContent {
    ToolCallContent::Content(agent_client_protocol_schema::v1::Content::new(
        ContentBlock::Text(TextContent::new(text)),
    ))
}

/// A tool result's text as the blocks lane shows it (BLOCK-*, so no credential-bearing uri
/// reaches the editor); `None` when it has no content or only empty text.
fn result_text(result: &Value, kind: ToolResultKind) -> Option<String> {
    let content = result.get("content")?;
    if content.is_null() || content.as_array().is_some_and(Vec::is_empty) {
        return None;
    }
    let shown = show_tool_result(
        &RawToolResult {
            content: content.clone(),
            is_error: kind == ToolResultKind::Error,
            data_is_content: true,
        },
        &Source::Local,
        usize::MAX,
    );
    let text = shown.copies.stored;
    (!text.is_empty()).then_some(text)
}

/// A tool card's title (ACP-29): what the call does, with no `NAME: ` prefix an editor
/// could cut the rest at. A command tool's command line (as claude-agent-acp and codex-acp
/// show it); the `path` of a call that reads or changes one file (kinds read, edit, delete,
/// move); else the agent's own label of the call (`intent`, omp); else the tool's name and
/// its subject (`command`, `path`, `pattern`, `url`, `query`) after a space; else the name.
/// Credential-bearing uris withheld, control characters as spaces, at most 256 bytes.
pub(crate) fn title(name: &str, args: Option<&Value>, intent: Option<&str>) -> String {
    let arg = |key: &str| {
        args.and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    };
    let one_file = matches!(
        tool_kind(name, args),
        ToolKind::Read | ToolKind::Edit | ToolKind::Delete | ToolKind::Move
    );
    let title = if let Some(command) = arg("command").filter(|_| is_command_tool(name)) {
        command.to_owned()
    } else if let Some(path) = arg("path").filter(|_| one_file) {
        path.to_owned()
    } else if let Some(intent) = intent.map(str::trim).filter(|i| !i.is_empty()) {
        intent.to_owned()
    } else if let Some(subject) = ["command", "path", "pattern", "url", "query"]
        .into_iter()
        .find_map(arg)
    {
        format!("{name} {subject}")
    } else {
        name.to_owned()
    };
    let title: String = withhold_credential_uris(&title)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    cut_to_bytes(title.trim(), MAX_TITLE_BYTES).to_owned()
}

/// A kind or status word for a notice: at most 64 characters, control characters and quotes
/// dropped.
fn visible_label(word: &str) -> String {
    word.chars()
        .filter(|c| !c.is_control() && *c != '"')
        .take(64)
        .collect()
}

/// The text with every word that is a uri which may carry a credential replaced by a
/// marker (BLOCK-03's check), so a card's title never shows one.
pub(crate) fn withhold_credential_uris(text: &str) -> String {
    let withheld = |word: &str| {
        let word = word.trim_matches(|c| matches!(c, '"' | '\'' | '(' | ')' | '<' | '>'));
        word.contains(':') && uri_may_carry_credential(word)
    };
    if !text.split_whitespace().any(withheld) {
        return text.to_owned();
    }
    text.split_whitespace()
        .map(|word| {
            if withheld(word) {
                "[uri withheld]"
            } else {
                word
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A JSON value with [`withhold_credential_uris`] applied to every string in it.
pub(crate) fn withhold_in_value(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(withhold_credential_uris(text)),
        Value::Array(items) => Value::Array(items.iter().map(withhold_in_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), withhold_in_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A loaded session's conversation as `session/update`s (ACP-06 replay, as the ACP spec asks
/// of `session/load` and omp's own `--mode acp` does): user text → `user_message_chunk`,
/// assistant text → `agent_message_chunk`, thinking text → `agent_thought_chunk` (ACP-04: the
/// thinking text only, never signatures or redacted blocks), the user's text bounded to 64 KiB
/// per message and the assistant's whole, as it was said (ACP-05); a tool call → `tool_call`, its result → a completed or failed
/// `tool_call_update` on the same id, its content through `core::blocks` and bounded, with the
/// stored output's handle when negotiated (OUT-02, OUT-08). Plans are not replayed one by one:
/// the load shows the latest plan once.
#[derive(Debug, Default)]
pub(crate) struct Replay {
    /// Tool cards opened by the replay, so a result does not open its call twice.
    opened: BTreeSet<String>,
    /// The calls opened whose results have not come yet: their name and arguments, for the
    /// result's diffs and locations (ACP-17, ACP-18).
    calls: BTreeMap<String, (String, Value)>,
    /// The editor's session id when cards carry stored-output handles (OUT-02).
    pub(crate) output_session: Option<String>,
    /// The session's working directory (ACP-17, ACP-18).
    pub(crate) cwd: Option<PathBuf>,
}

/// The most replayed tool call ids remembered (each at most one card either way).
const MAX_REPLAY_OPENED: usize = 4096;

impl Replay {
    /// The updates of one history message, in order.
    pub(crate) fn message(&mut self, message: &AgentMessage) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        match message {
            AgentMessage::User(user) => {
                let text = match &user.content {
                    MessageContent::Text(text) => text.clone(),
                    MessageContent::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(|b| match b {
                            WireBlock::Text(t) => Some(t.text.as_str()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                };
                if !text.is_empty() {
                    out.push(SessionUpdate::UserMessageChunk(chunk(bound_snapshot(
                        &text,
                    ))));
                }
            }
            AgentMessage::Assistant(assistant) => {
                for block in &assistant.content {
                    match block {
                        WireBlock::Text(t) => {
                            if let Some(t) = whole(&t.text) {
                                out.push(SessionUpdate::AgentMessageChunk(chunk(t)));
                            }
                        }
                        WireBlock::Thinking(t) => {
                            if let Some(t) = whole(&t.thinking) {
                                out.push(SessionUpdate::AgentThoughtChunk(chunk(t)));
                            }
                        }
                        WireBlock::ToolCall(call) => {
                            self.open(
                                &call.id,
                                &call.name,
                                Some(&call.arguments),
                                call.intent.as_deref(),
                                &mut out,
                            );
                        }
                        _ => {}
                    }
                }
            }
            AgentMessage::ToolResult(result) => {
                self.open(
                    &result.tool_call_id,
                    &result.tool_name,
                    None,
                    None,
                    &mut out,
                );
                let mut content = serde_json::json!({"content": result.content});
                if let Some(details) = &result.details {
                    content["details"] = details.clone();
                }
                let call = self.calls.remove(&result.tool_call_id);
                out.push(finished_card(
                    &Finished {
                        id: &result.tool_call_id,
                        name: &result.tool_name,
                        args: call.as_ref().map(|(_, args)| args),
                        kind: ToolResultKind::of(result.is_error),
                        result: Some(&content),
                        details: result.details.as_ref(),
                        cwd: self.cwd.as_deref(),
                    },
                    self.output_session.as_deref(),
                ));
            }
            _ => {}
        }
        out
    }

    /// A `tool_call` for an id the replay has not shown yet.
    fn open(
        &mut self,
        id: &str,
        name: &str,
        args: Option<&Value>,
        intent: Option<&str>,
        out: &mut Vec<SessionUpdate>,
    ) {
        if self.opened.contains(id) {
            return;
        }
        if self.opened.len() < MAX_REPLAY_OPENED {
            self.opened.insert(id.to_owned());
            if let Some(args) = args {
                self.calls
                    .insert(id.to_owned(), (name.to_owned(), args.clone()));
            }
        }
        out.push(opening_card(id, name, args, intent, self.cwd.as_deref()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(value: Value) -> AgentMessage {
        serde_json::from_value(value).expect("a history message")
    }

    #[test]
    fn acp_17_18_19_a_replayed_card_carries_diffs_locations_and_raw_output() {
        let mut replay = Replay {
            cwd: Some(PathBuf::from("/work")),
            ..Replay::default()
        };
        let call = message(json!({"role": "assistant", "content": [{"type": "toolCall",
            "id": "w1", "name": "write", "arguments": {"path": "a.txt", "content": "hi\n"}}]}));
        let opened = serde_json::to_value(replay.message(&call)).unwrap();
        assert_eq!(opened[0]["locations"], json!([{"path": "/work/a.txt"}]));
        let result = message(
            json!({"role": "toolResult", "toolCallId": "w1", "toolName": "write",
            "content": [{"type": "text", "text": "ok"}], "isError": false}),
        );
        let done = serde_json::to_value(replay.message(&result)).unwrap();
        let done = &done[0];
        assert_eq!(done["status"], "completed");
        assert_eq!(
            done["content"][0],
            json!({"type": "diff", "path": "/work/a.txt", "newText": "hi\n"})
        );
        assert_eq!(done["locations"], json!([{"path": "/work/a.txt"}]));
        assert_eq!(done["rawOutput"]["content"][0]["text"], "ok");
    }
}
