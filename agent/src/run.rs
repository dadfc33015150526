//! A run of the scripted model, in the reference's event order: `agent_start`, then per
//! turn `turn_start`, the user message (`message_start`/`message_end`), the assistant
//! message streamed as `message_update` deltas between `message_start` and `message_end`,
//! tool executions and their results, `turn_end`; at last `agent_end` with the run's
//! messages.
//!
//! [`Runner`] is the App's run part: it owns the run in progress, the prompts queued behind
//! it, the messages deferred to its end, the model and the session's deadline; it reaches
//! the other parts through a [`Ctx`].

use std::collections::VecDeque;
use std::time::Instant;

use musewire_core::agent::{
    Agent, AgentCall, AgentCallResult, DialogId, DialogOutcome, SettledToolResult,
};
use musewire_core::spill::{SpillOwner, SpillSource};
use musewire_wire::{
    AgentEnd, AgentFrame, AgentMessage, AssistantMessageEvent, BlockDelta, BlockEnd, BlockStart,
    ContentBlock, Empty, Lazy, MessageEvent, MessageUpdate, SessionEvent, ThinkingContent,
    ToolCall, ToolCallEnd, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate, ToolResult,
    TurnEnd,
};
use serde_json::{Map, Value};

use crate::drive;
use crate::io::IoQueue;
use crate::messages::{self, text_result, Model};
use crate::options::ApprovalMode;
use crate::options::Clock;
use crate::script::{quote, words, Script};
use crate::session::Sessions;
use crate::tools::{self, Finished, Pending, ToolCtx, Tools};

/// Longest quote of a tool's result in the model's reply (the result itself is kept whole
/// in the history).
pub const MAX_QUOTE_BYTES: usize = 4096;
/// Most deltas one block is streamed in: longer texts are streamed in groups of words.
pub const MAX_DELTAS: usize = 64;

/// The run in progress.
#[derive(Debug, Default)]
struct Run {
    /// Where this run's messages start in the history (they are the history's tail until the
    /// run ends), for `agent_end`: indices rather than copies of the messages.
    first_message: usize,
    /// The tool call the run waits for.
    waiting: Option<Waiting>,
    /// The tool call whose final result the core is settling (the spill policy, SPILL-01..05),
    /// and whether it is an error.
    settling: Option<(Waiting, bool)>,
}

/// What a run waits for: a tool call, the assistant message that made it, and what
/// answers it.
#[derive(Debug)]
struct Waiting {
    call: ToolCall,
    assistant: AgentMessage,
    on: Pending,
}

/// One block of a streamed assistant message.
enum Block<'a> {
    Thinking(&'a str),
    Text(&'a str),
    ToolCall(&'a ToolCall),
}

/// The other parts of the App a run reaches: the core agent (frames out), the sessions (the
/// history), the tools, the file work queue, and the clock.
pub(crate) struct Ctx<'a> {
    pub(crate) agent: &'a mut Agent,
    pub(crate) sessions: &'a mut Sessions,
    pub(crate) tools: &'a mut Tools,
    pub(crate) io: &'a mut IoQueue,
    pub(crate) clock: Clock,
}

impl Ctx<'_> {
    /// Emits a session event of the run.
    fn emit(&mut self, now: Instant, event: SessionEvent) {
        let result = drive::call(self.agent, now, AgentCall::Emit(AgentFrame::Event(event)));
        assert_eq!(
            result,
            AgentCallResult::Done(Ok(())),
            "a typed frame is written"
        );
    }

    fn millis(&self, now: Instant) -> u64 {
        self.clock.millis(now)
    }

    /// Adds a message to the history (a run's messages are the history's tail).
    pub(crate) fn push_history(&mut self, now: Instant, message: AgentMessage) {
        let millis = self.millis(now);
        self.sessions.push(millis, message, self.io);
    }
}

/// A user prompt: its text, and what the model sees of each attached image (the echo says
/// `[image: MIME, N bytes]` per image, N its decoded bytes, so a host can see images arrive).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct UserPrompt {
    pub(crate) text: String,
    pub(crate) images: Vec<String>,
}

impl UserPrompt {
    /// A prompt of `text` with these `images` (`{type:"image", data, mimeType}` blocks).
    pub(crate) fn new(text: String, images: Option<&[ContentBlock]>) -> Self {
        let images = images
            .unwrap_or_default()
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Image(image) => Some(format!(
                    "[image: {}, {} bytes]",
                    image
                        .mime_type
                        .chars()
                        .filter(|c| !c.is_control())
                        .take(128)
                        .collect::<String>(),
                    musewire_core::formats::base64_decoded_len(&image.data)
                )),
                _ => None,
            })
            .collect();
        UserPrompt { text, images }
    }
}

/// The run part of the App. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct Runner {
    run: Option<Run>,
    /// Prompts queued while a run streams (`streamingBehavior`, `steer`, `follow_up`).
    queue: VecDeque<UserPrompt>,
    /// `bashExecution` messages finished during a run, added when it ends.
    deferred: Vec<AgentMessage>,
    next_call: u64,
    model: Model,
    /// The session's deadline (`--max-time`, AGENT-03).
    deadline: Option<Instant>,
    /// Which tools ask the host first (`--approval-mode`, AGENT-07).
    approval_mode: ApprovalMode,
}

impl Runner {
    /// No run yet, for `model`, with the session's deadline and approval mode.
    pub(crate) fn new(
        model: Model,
        deadline: Option<Instant>,
        approval_mode: ApprovalMode,
    ) -> Self {
        Runner {
            approval_mode,
            run: None,
            queue: VecDeque::new(),
            deferred: Vec::new(),
            next_call: 0,
            model,
            deadline,
        }
    }

    /// Whether a run is in progress.
    pub(crate) fn is_streaming(&self) -> bool {
        self.run.is_some()
    }

    /// How many prompts wait for the run.
    pub(crate) fn queued(&self) -> usize {
        self.queue.len()
    }

    /// The model the run reports.
    pub(crate) fn model(&self) -> &Model {
        &self.model
    }

    /// `set_model`: the model later messages report.
    pub(crate) fn set_model(&mut self, model: Model) {
        self.model = model;
    }

    /// The run's own timer: the session's deadline while a run goes.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        self.deadline.filter(|_| self.run.is_some())
    }

    /// Whether the session's deadline (`--max-time`) has passed.
    pub(crate) fn deadline_passed(&self, now: Instant) -> bool {
        self.deadline.is_some_and(|deadline| now >= deadline)
    }

    /// The run's timer is due: a run past the session's deadline is aborted.
    pub(crate) fn handle_timeout(&mut self, ctx: &mut Ctx<'_>, now: Instant) {
        if self.deadline_passed(now) {
            self.abort(ctx, now);
        }
    }

    /// A prompt: it starts a run, or is queued while one runs.
    pub(crate) fn prompt(&mut self, ctx: &mut Ctx<'_>, now: Instant, message: UserPrompt) {
        if self.run.is_some() {
            self.queue.push_back(message);
        } else {
            self.start(ctx, now, message);
        }
    }

    /// Adds a message to the history, or, while a run goes, when it ends (`bashExecution`).
    pub(crate) fn add_after_run(&mut self, ctx: &mut Ctx<'_>, now: Instant, message: AgentMessage) {
        if self.run.is_some() {
            self.deferred.push(message);
        } else {
            ctx.push_history(now, message);
        }
    }

    /// Starts a run on a prompt.
    fn start(&mut self, ctx: &mut Ctx<'_>, now: Instant, prompt: UserPrompt) {
        self.run = Some(Run {
            first_message: ctx.sessions.current.messages.len(),
            ..Run::default()
        });
        ctx.emit(now, SessionEvent::AgentStart(Empty::default()));
        if self.deadline_passed(now) {
            // Past `--max-time` the reference's loop stops before calling the model: the
            // prompt is recorded and the run ends (AGENT-03).
            let user = messages::user(prompt.text, ctx.millis(now));
            emit_message(ctx, now, &user);
            ctx.push_history(now, user);
            self.queue.clear();
            self.end(ctx, now);
            return;
        }
        self.user_turn(ctx, now, prompt);
    }

    fn user_turn(&mut self, ctx: &mut Ctx<'_>, now: Instant, prompt: UserPrompt) {
        ctx.emit(now, SessionEvent::TurnStart(Empty::default()));
        // The script first: the prompt then moves into the history, never copied whole
        // (AGENT-04).
        let mut script = Script::parse(&prompt.text);
        if let Script::Echo(text) = &mut script {
            // The echo says what it saw of each image (ACP-14's test double).
            for image in &prompt.images {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(image);
            }
        }
        let user = messages::user(prompt.text, ctx.millis(now));
        emit_message(ctx, now, &user);
        ctx.push_history(now, user);
        match script {
            Script::Echo(text) => self.say(ctx, now, None, &text),
            Script::Think(text) => self.say(ctx, now, Some(&text), &text),
            Script::Call { tool, arguments } => self.call_tool(ctx, now, tool, arguments),
        }
    }

    /// The model answers with text (after thinking, when given); the turn ends.
    fn say(&mut self, ctx: &mut Ctx<'_>, now: Instant, thinking: Option<&str>, text: &str) {
        let mut blocks = Vec::new();
        blocks.extend(thinking.map(Block::Thinking));
        blocks.push(Block::Text(text));
        let message = self.stream_assistant(ctx, now, &blocks, "stop");
        ctx.push_history(now, message.clone());
        ctx.emit(
            now,
            SessionEvent::TurnEnd(TurnEnd {
                message,
                tool_results: Some(Vec::new()),
                ..TurnEnd::default()
            }),
        );
        self.next_turn(ctx, now);
    }

    /// A queued prompt starts the next turn; else the run ends.
    fn next_turn(&mut self, ctx: &mut Ctx<'_>, now: Instant) {
        match self.queue.pop_front() {
            Some(prompt) => self.user_turn(ctx, now, prompt),
            None => self.end(ctx, now),
        }
    }

    fn end(&mut self, ctx: &mut Ctx<'_>, now: Instant) {
        let Some(run) = self.run.take() else { return };
        let messages = ctx
            .sessions
            .current
            .messages
            .get(run.first_message..)
            .unwrap_or_default();
        let end = AgentEnd {
            messages: messages.to_vec(),
            ..AgentEnd::default()
        };
        ctx.emit(now, SessionEvent::AgentEnd(end));
        for message in std::mem::take(&mut self.deferred) {
            ctx.push_history(now, message);
        }
        // Whole lines are in the file already; the finished run is synced too.
        ctx.sessions.sync(ctx.io);
    }

    /// The model calls a tool: the call is streamed, the tool starts, and the turn goes on
    /// when it has finished.
    fn call_tool(&mut self, ctx: &mut Ctx<'_>, now: Instant, name: String, arguments: Value) {
        self.next_call += 1;
        let call = ToolCall {
            id: format!("call-{}", self.next_call),
            name,
            arguments,
            ..ToolCall::default()
        };
        let assistant = self.stream_assistant(ctx, now, &[Block::ToolCall(&call)], "toolUse");
        ctx.push_history(now, assistant.clone());
        if tools::asks_first(self.approval_mode, &call.name) {
            // AGENT-07: the host is asked before the tool starts, as omp asks.
            let ask = AgentCall::UiDialog(tools::approval(&call));
            let AgentCallResult::Dialog(opened) = drive::call(ctx.agent, now, ask) else {
                unreachable!("a dialog call returns a dialog")
            };
            match opened {
                Ok(dialog) => {
                    if let Some(run) = &mut self.run {
                        run.waiting = Some(Waiting {
                            call,
                            assistant,
                            on: Pending::Approval(dialog),
                        });
                    }
                }
                Err(error) => {
                    let finished = (text_result(error.to_string(), None), true);
                    self.refuse(ctx, now, call, assistant, finished);
                }
            }
            return;
        }
        self.start_tool(ctx, now, call, assistant);
    }

    /// The host answered the approval `dialog` the run waits for (AGENT-07): `Approve`
    /// starts the tool; anything else ends it refused, the tool not run. False when the run
    /// waits for no such approval.
    pub(crate) fn approval_answered(
        &mut self,
        ctx: &mut Ctx<'_>,
        now: Instant,
        dialog: DialogId,
        outcome: &DialogOutcome,
    ) -> bool {
        let Some(run) = &mut self.run else {
            return false;
        };
        if run
            .waiting
            .as_ref()
            .is_none_or(|w| w.on != Pending::Approval(dialog))
        {
            return false;
        }
        let waiting = run.waiting.take().expect("checked");
        if tools::approved(outcome) {
            self.start_tool(ctx, now, waiting.call, waiting.assistant);
        } else {
            let finished = tools::denied(&waiting.call.name);
            self.refuse(ctx, now, waiting.call, waiting.assistant, finished);
        }
        true
    }

    /// A call that does not run: it starts and ends with `finished`, an error.
    fn refuse(
        &mut self,
        ctx: &mut Ctx<'_>,
        now: Instant,
        call: ToolCall,
        assistant: AgentMessage,
        finished: Finished,
    ) {
        emit_start(ctx, now, &call);
        let waiting = Waiting {
            call,
            assistant,
            on: Pending::Done,
        };
        self.tool_finished(ctx, now, waiting, finished);
    }

    /// Starts the tool of `call`; the turn goes on when it has finished.
    fn start_tool(
        &mut self,
        ctx: &mut Ctx<'_>,
        now: Instant,
        call: ToolCall,
        assistant: AgentMessage,
    ) {
        emit_start(ctx, now, &call);
        let tool_ctx = ToolCtx {
            agent: ctx.agent,
            sessions: ctx.sessions,
            io: ctx.io,
            millis: ctx.clock.millis(now),
        };
        match ctx.tools.execute(now, tool_ctx, &call) {
            Ok(on) => {
                if let Some(run) = &mut self.run {
                    run.waiting = Some(Waiting {
                        call,
                        assistant,
                        on,
                    });
                }
            }
            Err(finished) => {
                let waiting = Waiting {
                    call,
                    assistant,
                    on: Pending::Done,
                };
                self.tool_finished(ctx, now, waiting, *finished);
            }
        }
    }

    /// Finishes the waiting tool call when `on` is what it waits for.
    pub(crate) fn answer_tool(
        &mut self,
        ctx: &mut Ctx<'_>,
        now: Instant,
        on: Pending,
        finished: Finished,
    ) {
        let Some(run) = &mut self.run else { return };
        if run.waiting.as_ref().is_none_or(|w| w.on != on) {
            return;
        }
        let waiting = run.waiting.take().expect("checked");
        self.tool_finished(ctx, now, waiting, finished);
    }

    /// A partial result of what the run waits for (`on`: a host tool's update, HOST-02, or a
    /// shell command's output so far, AGENT-06): `tool_execution_update`. Nothing when the
    /// run waits for something else.
    pub(crate) fn tool_update(
        &mut self,
        ctx: &mut Ctx<'_>,
        now: Instant,
        on: Pending,
        partial: Value,
    ) {
        let Some(waiting) = self.run.as_ref().and_then(|r| r.waiting.as_ref()) else {
            return;
        };
        if waiting.on != on {
            return;
        }
        let call = &waiting.call;
        let update = ToolExecutionUpdate {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: Some(call.arguments.clone()),
            partial_result: Some(partial),
            ..ToolExecutionUpdate::default()
        };
        ctx.emit(now, SessionEvent::ToolExecutionUpdate(update));
    }

    /// A tool has finished: its final result goes through the spill policy first (SPILL-01..05:
    /// the core settles it at once, or after the store saved it), then
    /// [`Runner::tool_result_settled`] records it.
    fn tool_finished(
        &mut self,
        ctx: &mut Ctx<'_>,
        now: Instant,
        waiting: Waiting,
        (result, is_error): Finished,
    ) {
        let Some(run) = &mut self.run else { return };
        let call = &waiting.call;
        let source = SpillSource::new(&call.name, &call.id, &call.name);
        run.settling = Some((waiting, is_error));
        let owner = Some(SpillOwner::new(ctx.sessions.current.id.clone()));
        let settle = AgentCall::SettleToolResult {
            source,
            owner,
            result,
        };
        drive::call(ctx.agent, now, settle);
    }

    /// The core settled a tool's final result: the preview and reference on a spill, else the
    /// result as it was. That is what the model, `tool_execution_end` and the history get.
    pub(crate) fn tool_result_settled(
        &mut self,
        ctx: &mut Ctx<'_>,
        now: Instant,
        settled: SettledToolResult,
    ) {
        let Some(run) = &mut self.run else { return };
        if run
            .settling
            .as_ref()
            .is_none_or(|(waiting, _)| waiting.call.id != settled.call_id)
        {
            return;
        }
        let (waiting, is_error) = run.settling.take().expect("checked");
        self.answer_with(ctx, now, waiting, &settled.result, is_error);
    }

    /// Records a tool's result; the turn ends, and the model answers with what the tool
    /// returned in a new turn.
    fn answer_with(
        &mut self,
        ctx: &mut Ctx<'_>,
        now: Instant,
        waiting: Waiting,
        result: &ToolResult,
        is_error: bool,
    ) {
        let text = record_tool_result(ctx, now, &waiting, result, is_error);
        ctx.emit(now, SessionEvent::TurnStart(Empty::default()));
        let verb = if is_error { "failed" } else { "returned" };
        let reply = format!(
            "{} {verb}: {}",
            waiting.call.name,
            quote(&text, MAX_QUOTE_BYTES)
        );
        self.say(ctx, now, None, &reply);
    }

    /// Aborts the run: the tool it waits for is withdrawn (its result says so), queued
    /// prompts are dropped, and the run ends (once a finished tool's result being settled is
    /// recorded, when there is one).
    pub(crate) fn abort(&mut self, ctx: &mut Ctx<'_>, now: Instant) {
        let Some(run) = &mut self.run else { return };
        self.queue.clear();
        if run.settling.is_some() {
            // The tool has finished and the core is settling its result (its event is queued,
            // or the loop is saving it): it is recorded when it comes back, the model answers,
            // and with no prompt queued the run then ends.
            return;
        }
        if let Some(waiting) = run.waiting.take() {
            ctx.tools.withdraw(now, ctx.agent, &waiting.on);
            let result = text_result("Tool execution was aborted", None);
            record_tool_result(ctx, now, &waiting, &result, true);
        }
        self.end(ctx, now);
    }

    /// Streams an assistant message block by block; returns the final message.
    fn stream_assistant(
        &self,
        ctx: &mut Ctx<'_>,
        now: Instant,
        blocks: &[Block<'_>],
        stop: &str,
    ) -> AgentMessage {
        let ts = ctx.millis(now);
        let mut content: Vec<ContentBlock> = Vec::new();
        let snapshot = |content: &[ContentBlock]| {
            AgentMessage::Assistant(Box::new(messages::assistant(
                &self.model,
                content.to_vec(),
                stop,
                ts,
            )))
        };
        let update = |content: &[ContentBlock], event: AssistantMessageEvent| {
            SessionEvent::MessageUpdate(MessageUpdate {
                message: Some(Lazy::new(&snapshot(content)).expect("a message serialises")),
                assistant_message_event: event,
                ..MessageUpdate::default()
            })
        };
        let mut events = vec![SessionEvent::MessageStart(message_event(snapshot(
            &content,
        )))];
        for block in blocks {
            let index = content.len();
            let content_index = index as u64;
            let text = match block {
                Block::Thinking(t) | Block::Text(t) => t.to_string(),
                Block::ToolCall(call) => call.arguments.to_string(),
            };
            content.push(match block {
                Block::Thinking(_) => ContentBlock::Thinking(ThinkingContent::default()),
                Block::Text(_) => ContentBlock::text(""),
                // Its arguments arrive as deltas: `{}` until the block ends.
                Block::ToolCall(call) => ContentBlock::ToolCall(Box::new(ToolCall {
                    arguments: Value::Object(Map::new()),
                    ..(*call).clone()
                })),
            });
            let start = BlockStart {
                content_index: Some(content_index),
                ..BlockStart::default()
            };
            events.push(update(
                &content,
                match block {
                    Block::Thinking(_) => AssistantMessageEvent::ThinkingStart(start),
                    Block::Text(_) => AssistantMessageEvent::TextStart(start),
                    Block::ToolCall(_) => AssistantMessageEvent::ToolCallStart(start),
                },
            ));
            let mut so_far = String::new();
            for delta in deltas(&text) {
                so_far.push_str(&delta);
                match &mut content[index] {
                    ContentBlock::Thinking(thinking) => thinking.thinking.clone_from(&so_far),
                    ContentBlock::Text(text) => text.text.clone_from(&so_far),
                    _ => {}
                }
                let delta = BlockDelta {
                    content_index,
                    delta,
                    ..BlockDelta::default()
                };
                events.push(update(
                    &content,
                    match block {
                        Block::Thinking(_) => AssistantMessageEvent::ThinkingDelta(delta),
                        Block::Text(_) => AssistantMessageEvent::TextDelta(delta),
                        Block::ToolCall(_) => AssistantMessageEvent::ToolCallDelta(delta),
                    },
                ));
            }
            let end = match block {
                Block::ToolCall(call) => {
                    content[index] = ContentBlock::ToolCall(Box::new((*call).clone()));
                    // The block whole, its `type` after its members, where omp writes it.
                    let mut whole = (*call).clone();
                    whole.extra.insert("type".into(), "toolCall".into());
                    AssistantMessageEvent::ToolCallEnd(ToolCallEnd {
                        content_index,
                        tool_call: Box::new(whole),
                        ..ToolCallEnd::default()
                    })
                }
                Block::Thinking(_) | Block::Text(_) => {
                    let end = BlockEnd {
                        content_index,
                        content: text,
                        ..BlockEnd::default()
                    };
                    match block {
                        Block::Thinking(_) => AssistantMessageEvent::ThinkingEnd(end),
                        _ => AssistantMessageEvent::TextEnd(end),
                    }
                }
            };
            events.push(update(&content, end));
        }
        let message = snapshot(&content);
        events.push(SessionEvent::MessageEnd(message_event(message.clone())));
        for event in events {
            ctx.emit(now, event);
        }
        message
    }
}

/// `message_start` or `message_end` of `message`.
/// `tool_execution_start` of `call`.
fn emit_start(ctx: &mut Ctx<'_>, now: Instant, call: &ToolCall) {
    let start = ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: Some(call.arguments.clone()),
        ..ToolExecutionStart::default()
    };
    ctx.emit(now, SessionEvent::ToolExecutionStart(start));
}

fn message_event(message: AgentMessage) -> MessageEvent {
    MessageEvent {
        message,
        ..MessageEvent::default()
    }
}

/// A message that is whole at once: `message_start` and `message_end`.
fn emit_message(ctx: &mut Ctx<'_>, now: Instant, message: &AgentMessage) {
    ctx.emit(
        now,
        SessionEvent::MessageStart(message_event(message.clone())),
    );
    ctx.emit(
        now,
        SessionEvent::MessageEnd(message_event(message.clone())),
    );
}

/// `tool_execution_end`, the tool result message and `turn_end`; returns the result's
/// text.
fn record_tool_result(
    ctx: &mut Ctx<'_>,
    now: Instant,
    waiting: &Waiting,
    result: &ToolResult,
    is_error: bool,
) -> String {
    let call = &waiting.call;
    let result_json = serde_json::to_value(result).expect("a tool result serialises");
    let text = musewire_core::agent::result_text(&result_json);
    let end = ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: Some(result_json),
        is_error: Some(is_error),
        ..ToolExecutionEnd::default()
    };
    ctx.emit(now, SessionEvent::ToolExecutionEnd(end));
    let message = messages::tool_result(&call.id, &call.name, result, is_error, ctx.millis(now));
    let message = AgentMessage::ToolResult(message);
    emit_message(ctx, now, &message);
    ctx.push_history(now, message.clone());
    let turn_end = TurnEnd {
        message: waiting.assistant.clone(),
        tool_results: Some(vec![message]),
        ..TurnEnd::default()
    };
    ctx.emit(now, SessionEvent::TurnEnd(turn_end));
    text
}

/// The deltas of a text: word by word, or in at most [`MAX_DELTAS`] groups of words.
fn deltas(text: &str) -> Vec<String> {
    let words = words(text);
    if words.len() <= MAX_DELTAS {
        return words.into_iter().map(str::to_owned).collect();
    }
    let per = words.len().div_ceil(MAX_DELTAS);
    words.chunks(per).map(|group| group.concat()).collect()
}
