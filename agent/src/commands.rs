//! The commands the agent answers, and the clear failure for every other command of the
//! wire model.

use std::time::Instant;

use musewire_core::agent::{CommandFailure, PageSource, RequestId};
use musewire_core::wire::{AgentMessage, Command, ContentBlock, Usage};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::app::App;
use crate::bash::BashOutcome;
use crate::messages::{self, Model};
use crate::options::THINKING_LEVELS;
use crate::run::UserPrompt;
use crate::tools::BUILTIN_TOOLS;

/// The reference's answer to a prompt while a run streams without `streamingBehavior`.
pub const BUSY: &str =
    "Agent is already processing. Use steer() or followUp() to queue messages, or wait for completion.";

/// The scripted models `get_available_models` offers besides the one in use (all under its
/// provider): `set_model` switches between them, and each assistant message names the one
/// in use.
pub const MODEL_IDS: [&str; 2] = ["scripted", "scripted-large"];

/// The scripted model's context window in tokens (`get_state`, `get_session_stats`).
pub const CONTEXT_WINDOW: u64 = 1_000_000;

fn fail(error: String) -> Result<Option<Value>, CommandFailure> {
    Err(CommandFailure { error, code: None })
}

impl App {
    pub(crate) fn on_command(&mut self, now: Instant, request: RequestId, command: Command) {
        let outcome = match command {
            Command::Prompt(prompt) => {
                if self.runner.is_streaming() && prompt.streaming_behavior.is_none() {
                    fail(BUSY.to_owned())
                } else {
                    return self.prompt(
                        now,
                        request,
                        UserPrompt::new(prompt.message, prompt.images.as_deref()),
                    );
                }
            }
            Command::Steer(m) | Command::FollowUp(m) => {
                return self.prompt(
                    now,
                    request,
                    UserPrompt::new(m.message, m.images.as_deref()),
                )
            }
            Command::AbortAndPrompt(m) => {
                self.abort_run(now);
                return self.prompt(
                    now,
                    request,
                    UserPrompt::new(m.message, m.images.as_deref()),
                );
            }
            Command::Abort(_) => {
                self.abort_run(now);
                Ok(None)
            }
            Command::NewSession(_) => {
                self.abort_run(now);
                let millis = self.millis(now);
                self.sessions.start_new(millis, &mut self.io);
                Ok(Some(json!({"cancelled": false})))
            }
            // Answered once the file is read (AGENT-05).
            Command::SwitchSession(switch) => {
                match self
                    .sessions
                    .request_load(request, &switch.session_path, &mut self.io)
                {
                    Ok(()) => return,
                    Err(error) => fail(format!("switch_session: {error}")),
                }
            }
            Command::GetState(_) => Ok(Some(self.state())),
            Command::GetSessionStats(_) => Ok(Some(self.session_stats())),
            Command::SetTodos(todos) => {
                let millis = self.millis(now);
                self.sessions.set_todos(millis, todos.phases, &mut self.io);
                Ok(Some(json!({"todoPhases": self.sessions.current.todos})))
            }
            Command::GetMessages(_) => {
                Ok(Some(json!({"messages": self.sessions.current.messages})))
            }
            Command::GetMessagesPage(_) => {
                let source = PageSource {
                    busy: self.runner.is_streaming(),
                    session_id: &self.sessions.current.id,
                    leaf_id: self.sessions.current.leaf.as_deref(),
                    messages: &self.sessions.current.messages,
                };
                self.agent
                    .respond_messages_page(now, request, source)
                    .expect("a pending page request");
                return;
            }
            Command::GetLastAssistantText(_) => Ok(Some(
                json!({"text": messages::last_assistant_text(&self.sessions.current.messages)}),
            )),
            Command::Bash(bash) => {
                let job = self.tools.jobs.spawn(&bash.command);
                self.rpc_bash.insert(job, (request, bash.command));
                return;
            }
            Command::AbortBash(_) => {
                self.tools.jobs.kill_all();
                Ok(None)
            }
            Command::GetAvailableModels(_) => {
                let models: Vec<Value> = self.models().iter().map(|m| self.model_json(m)).collect();
                Ok(Some(json!({ "models": models })))
            }
            Command::SetModel(set) => {
                let known = self
                    .models()
                    .into_iter()
                    .find(|m| m.provider == set.provider && m.id == set.model_id);
                match known {
                    Some(model) => {
                        let data = self.model_json(&model);
                        self.runner.set_model(model);
                        Ok(Some(data))
                    }
                    None => fail(format!(
                        "Model not found: {}/{}",
                        set.provider, set.model_id
                    )),
                }
            }
            Command::SetThinkingLevel(level) => {
                if THINKING_LEVELS.contains(&level.level.as_str()) {
                    self.options.thinking = Some(level.level);
                    Ok(None)
                } else {
                    fail(format!("Unknown thinking level: {}", level.level))
                }
            }
            other => fail(format!(
                "musewire agent does not support the {} command",
                other.type_name()
            )),
        };
        self.respond(now, request, outcome);
    }

    /// Aborts the run (its tool withdrawn, queued prompts dropped).
    fn abort_run(&mut self, now: Instant) {
        let (runner, mut ctx) = self.parts();
        runner.abort(&mut ctx, now);
    }

    pub(crate) fn respond(
        &mut self,
        now: Instant,
        request: RequestId,
        outcome: Result<Option<Value>, CommandFailure>,
    ) {
        self.agent
            .respond(now, request, outcome)
            .expect("each command is answered once");
    }

    /// A prompt is acknowledged first (CALL-03); it starts a run, or is queued while one
    /// runs.
    fn prompt(&mut self, now: Instant, request: RequestId, message: UserPrompt) {
        self.respond(now, request, Ok(None));
        let (runner, mut ctx) = self.parts();
        runner.prompt(&mut ctx, now, message);
    }

    /// An RPC `bash` finished: its response, and a `bashExecution` message (added when the
    /// run ends, while one runs).
    pub(crate) fn finish_rpc_bash(
        &mut self,
        now: Instant,
        request: RequestId,
        command: String,
        outcome: BashOutcome,
    ) {
        let data = json!({
            "output": outcome.output,
            "exitCode": outcome.exit_code,
            "cancelled": outcome.cancelled,
            "truncated": outcome.cut_bytes > 0,
        });
        self.respond(now, request, Ok(Some(data)));
        let message = json!({
            "role": "bashExecution",
            "command": command,
            "output": outcome.output,
            "exitCode": outcome.exit_code,
            "cancelled": outcome.cancelled,
            "truncated": outcome.cut_bytes > 0,
            "timestamp": self.millis(now),
        });
        let (runner, mut ctx) = self.parts();
        runner.add_after_run(&mut ctx, now, message);
    }

    /// `get_session_stats`, in omp's shape (`SessionStats`): message counts, and token totals
    /// summed over the history's assistant messages' usage (what the ACP bridge takes as the
    /// cumulative usage, ACP-02); `contextUsage.tokens` is the last call's input + cacheRead +
    /// cacheWrite.
    fn session_stats(&self) -> Value {
        let messages = &self.sessions.current.messages;
        let (mut users, mut assistants, mut calls, mut results) = (0u64, 0u64, 0u64, 0u64);
        let mut sum = Usage::default();
        let mut cost = 0f64;
        let mut context = 0u64;
        for message in messages {
            match AgentMessage::deserialize(message) {
                Ok(AgentMessage::User(_)) => users += 1,
                Ok(AgentMessage::ToolResult(_)) => results += 1,
                Ok(AgentMessage::Assistant(assistant)) => {
                    assistants += 1;
                    calls += assistant
                        .content
                        .iter()
                        .filter(|b| matches!(b, ContentBlock::ToolCall(_)))
                        .count() as u64;
                    let Some(usage) = &assistant.usage else {
                        continue;
                    };
                    let add = |total: &mut Option<u64>, n: Option<u64>| {
                        *total = Some(total.unwrap_or(0) + n.unwrap_or(0));
                    };
                    add(&mut sum.input, usage.input);
                    add(&mut sum.output, usage.output);
                    add(&mut sum.cache_read, usage.cache_read);
                    add(&mut sum.cache_write, usage.cache_write);
                    add(&mut sum.total_tokens, usage.total_tokens);
                    cost += usage
                        .cost
                        .as_ref()
                        .and_then(|c| c.total.as_ref())
                        .and_then(serde_json::Number::as_f64)
                        .unwrap_or(0.0);
                    context = usage.input.unwrap_or(0)
                        + usage.cache_read.unwrap_or(0)
                        + usage.cache_write.unwrap_or(0);
                }
                _ => {}
            }
        }
        let mut stats = json!({
            "sessionId": self.sessions.current.id,
            "userMessages": users,
            "assistantMessages": assistants,
            "toolCalls": calls,
            "toolResults": results,
            "totalMessages": messages.len(),
            "tokens": {
                "input": sum.input.unwrap_or(0),
                "output": sum.output.unwrap_or(0),
                "reasoning": 0,
                "cacheRead": sum.cache_read.unwrap_or(0),
                "cacheWrite": sum.cache_write.unwrap_or(0),
                "total": sum.total_tokens.unwrap_or(0),
            },
            "premiumRequests": 0,
            "cost": cost,
            "contextUsage": {
                "tokens": context,
                "contextWindow": CONTEXT_WINDOW,
                "percent": context as f64 * 100.0 / CONTEXT_WINDOW as f64,
            },
        });
        if let Some(file) = self.session_file() {
            stats["sessionFile"] = json!(file.to_string_lossy());
        }
        stats
    }

    /// `get_state`, in the reference's members.
    /// The models `get_available_models` offers: the one in use first, then the rest of
    /// [`MODEL_IDS`] under the same provider.
    fn models(&self) -> Vec<Model> {
        let current = self.runner.model().clone();
        let mut models = vec![current.clone()];
        models.extend(
            MODEL_IDS
                .iter()
                .filter(|id| **id != current.id)
                .map(|id| Model {
                    provider: current.provider.clone(),
                    id: (*id).to_owned(),
                }),
        );
        models
    }

    /// A model as `get_state`, `get_available_models` and `set_model` give it.
    fn model_json(&self, model: &Model) -> Value {
        json!({
            "id": model.id,
            "name": format!("musewire scripted model ({})", model.id),
            "api": messages::API,
            "provider": model.provider,
            "reasoning": true,
            "contextWindow": CONTEXT_WINDOW,
            "maxTokens": 64_000,
        })
    }

    fn state(&self) -> Value {
        let mut tools: Vec<Value> = BUILTIN_TOOLS
            .iter()
            .map(|(name, description)| {
                json!({"name": name, "description": description, "parameters": {"type": "object"}})
            })
            .collect();
        tools.extend(self.agent.host_tools().map(
            |t| json!({"name": t.name, "description": t.description, "parameters": t.parameters}),
        ));
        let mut state = json!({
            "model": self.model_json(self.runner.model()),
            "thinkingLevel": self.options.thinking.as_deref().unwrap_or("off"),
            "isStreaming": self.runner.is_streaming(),
            "isCompacting": false,
            "steeringMode": "one-at-a-time",
            "followUpMode": "one-at-a-time",
            "interruptMode": "immediate",
            "sessionId": self.sessions.current.id,
            "autoCompactionEnabled": false,
            "queuedMessageCount": self.runner.queued(),
            "todoPhases": self.sessions.current.todos,
            "fastModeEnabled": false,
            "fastModeActive": false,
            "tokensPerSecond": null,
            "messageCount": self.sessions.current.messages.len(),
            "dumpTools": tools,
        });
        if let Some(dir) = self
            .options
            .session_dir
            .as_ref()
            .filter(|_| !self.options.no_session)
        {
            state["sessionDir"] = json!(dir.to_string_lossy());
        }
        if let Some(file) = self.session_file() {
            state["sessionFile"] = json!(file.to_string_lossy());
        }
        state
    }
}
