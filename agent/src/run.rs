//! A run of the scripted model, in the reference's event order: `agent_start`, then per
//! turn `turn_start`, the user message (`message_start`/`message_end`), the assistant
//! message streamed as `message_update` deltas between `message_start` and `message_end`,
//! tool executions and their results, `turn_end`; at last `agent_end` with the run's
//! messages.

use std::time::Instant;

use musewire_core::agent::SettledToolResult;
use musewire_core::spill::{SpillOwner, SpillSource};
use musewire_core::wire::ToolResult;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::app::App;
use crate::messages::{self, text_result};
use crate::script::{quote, words, Script};
use crate::tools::Pending;

/// Longest quote of a tool's result in the model's reply (the result itself is kept whole
/// in the history).
pub const MAX_QUOTE_BYTES: usize = 4096;
/// Most deltas one block is streamed in: longer texts are streamed in groups of words.
pub const MAX_DELTAS: usize = 64;

/// The run in progress.
#[derive(Debug, Default)]
pub(crate) struct Run {
    /// Where this run's messages start in the history (they are the history's tail until the
    /// run ends), for `agent_end`: indices rather than copies of the messages.
    pub(crate) first_message: usize,
    /// The tool call the run waits for.
    pub(crate) waiting: Option<Waiting>,
    /// The tool call whose final result the core is settling (the spill policy, SPILL-01..05),
    /// and whether it is an error.
    pub(crate) settling: Option<(Waiting, bool)>,
}

/// A tool call in flight.
#[derive(Debug, Clone)]
pub(crate) struct ToolCall {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) arguments: Value,
}

/// What a run waits for: a tool call, the assistant message that made it, and what
/// answers it.
#[derive(Debug)]
pub(crate) struct Waiting {
    pub(crate) call: ToolCall,
    pub(crate) assistant: Value,
    pub(crate) on: Pending,
}

/// One block of a streamed assistant message.
enum Block<'a> {
    Thinking(&'a str),
    Text(&'a str),
    ToolCall(&'a ToolCall),
}

impl App {
    /// Starts a run on a prompt.
    pub(crate) fn start_run(&mut self, now: Instant, prompt: String) {
        self.run = Some(Run {
            first_message: self.session.messages.len(),
            ..Run::default()
        });
        self.emit(now, json!({"type": "agent_start"}));
        if self.deadline_passed(now) {
            // Past `--max-time` the reference's loop stops before calling the model: the
            // prompt is recorded and the run ends (AGENT-03).
            let user = messages::user(prompt, self.millis(now));
            self.emit(now, json!({"type": "message_start", "message": user}));
            self.emit(now, json!({"type": "message_end", "message": user}));
            self.push_history(user);
            self.queue.clear();
            self.end_run(now);
            return;
        }
        self.user_turn(now, prompt);
    }

    fn user_turn(&mut self, now: Instant, prompt: String) {
        self.emit(now, json!({"type": "turn_start"}));
        // The script first: the prompt then moves into the history, never copied whole
        // (AGENT-04).
        let script = Script::parse(&prompt);
        let user = messages::user(prompt, self.millis(now));
        self.emit(now, json!({"type": "message_start", "message": user}));
        self.emit(now, json!({"type": "message_end", "message": user}));
        self.push_history(user);
        match script {
            Script::Echo(text) => self.say(now, None, &text),
            Script::Think(text) => self.say(now, Some(&text), &text),
            Script::Call { tool, arguments } => self.call_tool(now, tool, arguments),
        }
    }

    /// The model answers with text (after thinking, when given); the turn ends.
    fn say(&mut self, now: Instant, thinking: Option<&str>, text: &str) {
        let mut blocks = Vec::new();
        blocks.extend(thinking.map(Block::Thinking));
        blocks.push(Block::Text(text));
        let message = self.stream_assistant(now, &blocks, "stop");
        self.push_history(message.clone());
        self.emit(
            now,
            json!({"type": "turn_end", "message": message, "toolResults": []}),
        );
        self.next_turn(now);
    }

    /// A queued prompt starts the next turn; else the run ends.
    fn next_turn(&mut self, now: Instant) {
        match self.queue.pop_front() {
            Some(prompt) => self.user_turn(now, prompt),
            None => self.end_run(now),
        }
    }

    fn end_run(&mut self, now: Instant) {
        let Some(run) = self.run.take() else { return };
        let messages = self
            .session
            .messages
            .get(run.first_message..)
            .unwrap_or_default();
        self.emit(now, json!({"type": "agent_end", "messages": messages}));
        for message in std::mem::take(&mut self.deferred) {
            self.push_history(message);
        }
    }

    /// The model calls a tool: the call is streamed, the tool starts, and the turn goes on
    /// when it has finished.
    fn call_tool(&mut self, now: Instant, name: String, arguments: Value) {
        self.next_call += 1;
        let call = ToolCall {
            id: format!("call-{}", self.next_call),
            name,
            arguments,
        };
        let assistant = self.stream_assistant(now, &[Block::ToolCall(&call)], "toolUse");
        self.push_history(assistant.clone());
        self.emit(
            now,
            json!({"type": "tool_execution_start", "toolCallId": call.id, "toolName": call.name, "args": call.arguments}),
        );
        match self.execute(now, &call) {
            Ok(on) => {
                if let Some(run) = &mut self.run {
                    run.waiting = Some(Waiting {
                        call,
                        assistant,
                        on,
                    });
                }
            }
            Err((result, is_error)) => {
                let waiting = Waiting {
                    call,
                    assistant,
                    on: Pending::Done,
                };
                self.tool_finished(now, waiting, result, is_error);
            }
        }
    }

    /// A tool has finished: its final result goes through the spill policy first (SPILL-01..05:
    /// the core settles it at once, or after the store saved it), then
    /// [`App::on_tool_result_settled`] records it. A result that is not a tool result's shape
    /// is recorded as it is.
    pub(crate) fn tool_finished(
        &mut self,
        now: Instant,
        waiting: Waiting,
        result: Value,
        is_error: bool,
    ) {
        let Ok(typed) = ToolResult::deserialize(&result) else {
            return self.answer_with(now, waiting, &result, is_error);
        };
        let Some(run) = &mut self.run else { return };
        let call = &waiting.call;
        let source = SpillSource::new(&call.name, &call.id, &call.name);
        run.settling = Some((waiting, is_error));
        let owner = Some(SpillOwner::new(self.session.id.clone()));
        self.agent.settle_tool_result(now, source, owner, typed);
    }

    /// The core settled a tool's final result: the preview and reference on a spill, else the
    /// result as it was. That is what the model, `tool_execution_end` and the history get.
    pub(crate) fn on_tool_result_settled(&mut self, now: Instant, settled: SettledToolResult) {
        let Some(run) = &mut self.run else { return };
        if run
            .settling
            .as_ref()
            .is_none_or(|(waiting, _)| waiting.call.id != settled.call_id)
        {
            return;
        }
        let (waiting, is_error) = run.settling.take().expect("checked");
        let result = serde_json::to_value(&settled.result).unwrap_or(Value::Null);
        self.answer_with(now, waiting, &result, is_error);
    }

    /// Records a tool's result; the turn ends, and the model answers with what the tool
    /// returned in a new turn.
    fn answer_with(&mut self, now: Instant, waiting: Waiting, result: &Value, is_error: bool) {
        let text = self.record_tool_result(now, &waiting, result, is_error);
        self.emit(now, json!({"type": "turn_start"}));
        let verb = if is_error { "failed" } else { "returned" };
        let reply = format!(
            "{} {verb}: {}",
            waiting.call.name,
            quote(&text, MAX_QUOTE_BYTES)
        );
        self.say(now, None, &reply);
    }

    /// `tool_execution_end`, the tool result message and `turn_end`; returns the result's
    /// text.
    fn record_tool_result(
        &mut self,
        now: Instant,
        waiting: &Waiting,
        result: &Value,
        is_error: bool,
    ) -> String {
        let call = &waiting.call;
        self.emit(
            now,
            json!({"type": "tool_execution_end", "toolCallId": call.id, "toolName": call.name, "result": result, "isError": is_error}),
        );
        let message =
            messages::tool_result(&call.id, &call.name, result, is_error, self.millis(now));
        self.emit(now, json!({"type": "message_start", "message": message}));
        self.emit(now, json!({"type": "message_end", "message": message}));
        self.push_history(message.clone());
        self.emit(
            now,
            json!({"type": "turn_end", "message": waiting.assistant, "toolResults": [message]}),
        );
        musewire_core::agent::result_text(result)
    }

    /// Aborts the run: the tool it waits for is withdrawn (its result says so), queued
    /// prompts are dropped, and the run ends (once a finished tool's result being settled is
    /// recorded, when there is one).
    pub(crate) fn abort_run(&mut self, now: Instant) {
        let Some(run) = &mut self.run else { return };
        self.queue.clear();
        if run.settling.is_some() {
            // The tool has finished and the core is settling its result (its event is queued,
            // or the loop is saving it): it is recorded when it comes back, the model answers,
            // and with no prompt queued the run then ends.
            return;
        }
        if let Some(waiting) = run.waiting.take() {
            self.withdraw(now, &waiting.on);
            let result = text_result("Tool execution was aborted", None);
            self.record_tool_result(now, &waiting, &result, true);
        }
        self.end_run(now);
    }

    /// Streams an assistant message block by block; returns the final message.
    fn stream_assistant(&mut self, now: Instant, blocks: &[Block<'_>], stop: &str) -> Value {
        let ts = self.millis(now);
        let mut content: Vec<Value> = Vec::new();
        let snapshot =
            |content: &[Value]| messages::assistant(&self.model, content.to_vec(), stop, ts);
        let mut frames = vec![json!({"type": "message_start", "message": snapshot(&content)})];
        for block in blocks {
            let index = content.len();
            let (kind, key, text) = match block {
                Block::Thinking(t) => ("thinking", "thinking", t.to_string()),
                Block::Text(t) => ("text", "text", t.to_string()),
                Block::ToolCall(call) => ("toolcall", "", call.arguments.to_string()),
            };
            content.push(match block {
                Block::ToolCall(call) => {
                    json!({"type": "toolCall", "id": call.id, "name": call.name, "arguments": {}})
                }
                _ => json!({"type": kind, key: ""}),
            });
            let update = |content: &[Value], event: Value| json!({"type": "message_update", "message": snapshot(content), "assistantMessageEvent": event});
            frames.push(update(
                &content,
                json!({"type": format!("{kind}_start"), "contentIndex": index}),
            ));
            let mut so_far = String::new();
            for delta in deltas(&text) {
                so_far.push_str(&delta);
                if !key.is_empty() {
                    content[index][key] = Value::String(so_far.clone());
                }
                frames.push(update(
                    &content,
                    json!({"type": format!("{kind}_delta"), "contentIndex": index, "delta": delta}),
                ));
            }
            let end = match block {
                Block::ToolCall(call) => {
                    content[index]["arguments"] = call.arguments.clone();
                    json!({"type": "toolcall_end", "contentIndex": index, "toolCall": content[index]})
                }
                _ => json!({"type": format!("{kind}_end"), "contentIndex": index, "content": text}),
            };
            frames.push(update(&content, end));
        }
        let message = snapshot(&content);
        frames.push(json!({"type": "message_end", "message": message}));
        for frame in frames {
            self.emit(now, frame);
        }
        message
    }
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
