//! The commands the agent answers, and the clear failure for every other command of the
//! wire model.

use std::time::Instant;

use musewire_core::agent::{
    AgentCall, AgentCallResult, CommandFailure, CommandId, Input, PageSource,
};
use musewire_wire::{
    AgentMessage, BashData, BashExecutionMessage, CancelledData, Command, ContentBlock,
    ContextUsage, DumpTool, FollowUp, LastAssistantTextData, Lazy, MessagesData, ModelInfo,
    ModelsData, ResponseData, SessionState, SessionStatsData, SessionTokens, Steer, TodosData,
    Usage,
};
use serde_json::{Map, Number, Value};

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

fn fail(error: String) -> Result<Option<ResponseData>, CommandFailure> {
    Err(CommandFailure { error, code: None })
}

impl App {
    pub(crate) fn on_command(&mut self, now: Instant, request: CommandId, command: Command) {
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
            Command::Steer(Steer {
                message, images, ..
            })
            | Command::FollowUp(FollowUp {
                message, images, ..
            }) => return self.prompt(now, request, UserPrompt::new(message, images.as_deref())),
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
                Ok(Some(not_cancelled()))
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
            Command::GetState(_) => Ok(Some(ResponseData::State(Box::new(self.state())))),
            Command::GetSessionStats(_) => Ok(Some(ResponseData::SessionStats(Box::new(
                self.session_stats(),
            )))),
            Command::SetTodos(todos) => {
                let millis = self.millis(now);
                self.sessions.set_todos(millis, todos.phases, &mut self.io);
                Ok(Some(ResponseData::Todos(TodosData {
                    todo_phases: self.sessions.current.todos.clone(),
                    ..TodosData::default()
                })))
            }
            Command::GetMessages(_) => Ok(Some(ResponseData::Messages(MessagesData {
                messages: self.sessions.current.messages.clone().into(),
                ..MessagesData::default()
            }))),
            Command::GetMessagesPage(_) => {
                let source = PageSource {
                    busy: self.runner.is_streaming(),
                    session_id: &self.sessions.current.id,
                    leaf_id: self.sessions.current.leaf.as_deref(),
                    messages: &self.sessions.current.messages,
                };
                let answered = self.agent.handle(now, Input::MessagesPage(request, source));
                assert_eq!(
                    answered,
                    Some(AgentCallResult::Done(Ok(()))),
                    "a pending page request"
                );
                return;
            }
            Command::GetLastAssistantText(_) => Ok(Some(ResponseData::LastAssistantText(
                LastAssistantTextData {
                    text: messages::last_assistant_text(&self.sessions.current.messages),
                    ..LastAssistantTextData::default()
                },
            ))),
            Command::Bash(bash) => {
                let job = self.tools.jobs.spawn(&bash.command, false);
                self.rpc_bash.insert(job, (request, bash.command));
                return;
            }
            Command::AbortBash(_) => {
                self.tools.jobs.kill_all();
                Ok(None)
            }
            Command::GetAvailableModels(_) => {
                let models = self.models().iter().map(model_info).collect();
                Ok(Some(ResponseData::Models(ModelsData {
                    models,
                    ..ModelsData::default()
                })))
            }
            Command::SetModel(set) => {
                let known = self
                    .models()
                    .into_iter()
                    .find(|m| m.provider == set.provider && m.id == set.model_id);
                match known {
                    Some(model) => {
                        let data = model_info(&model);
                        self.runner.set_model(model);
                        Ok(Some(ResponseData::Model(data)))
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
        request: CommandId,
        outcome: Result<Option<ResponseData>, CommandFailure>,
    ) {
        let answer = AgentCall::Respond(request, outcome);
        let result = crate::drive::call(&mut self.agent, now, answer);
        assert_eq!(
            result,
            AgentCallResult::Done(Ok(())),
            "each command is answered once"
        );
    }

    /// A prompt is acknowledged first (CALL-03); it starts a run, or is queued while one
    /// runs.
    fn prompt(&mut self, now: Instant, request: CommandId, message: UserPrompt) {
        self.respond(now, request, Ok(None));
        let (runner, mut ctx) = self.parts();
        runner.prompt(&mut ctx, now, message);
    }

    /// An RPC `bash` finished: its response, and a `bashExecution` message (added when the
    /// run ends, while one runs).
    pub(crate) fn finish_rpc_bash(
        &mut self,
        now: Instant,
        request: CommandId,
        command: String,
        outcome: BashOutcome,
    ) {
        let truncated = outcome.cut_bytes > 0;
        let exit_code = outcome.exit_code.map(i64::from);
        let data = BashData {
            output: outcome.output.clone(),
            exit_code,
            cancelled: Some(outcome.cancelled),
            truncated: Some(truncated),
            ..BashData::default()
        };
        self.respond(now, request, Ok(Some(ResponseData::Bash(data))));
        let message = AgentMessage::BashExecution(BashExecutionMessage {
            command,
            output: outcome.output,
            exit_code,
            cancelled: Some(outcome.cancelled),
            truncated: Some(truncated),
            timestamp: Some(self.millis(now)),
            ..BashExecutionMessage::default()
        });
        let (runner, mut ctx) = self.parts();
        runner.add_after_run(&mut ctx, now, message);
    }

    /// `get_session_stats`, in omp's shape (`SessionStats`): message counts, and token totals
    /// summed over the history's assistant messages' usage (what the ACP bridge takes as the
    /// cumulative usage, ACP-02); `contextUsage.tokens` is the last call's input + cacheRead +
    /// cacheWrite.
    fn session_stats(&self) -> SessionStatsData {
        let messages = &self.sessions.current.messages;
        let (mut users, mut assistants, mut calls, mut results) = (0u64, 0u64, 0u64, 0u64);
        let mut sum = Usage::default();
        let mut cost = 0f64;
        let mut context = 0u64;
        for message in messages {
            match message {
                AgentMessage::User(_) => users += 1,
                AgentMessage::ToolResult(_) => results += 1,
                AgentMessage::Assistant(assistant) => {
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
        let tokens = SessionTokens {
            input: Some(sum.input.unwrap_or(0)),
            output: Some(sum.output.unwrap_or(0)),
            reasoning: Some(0),
            cache_read: Some(sum.cache_read.unwrap_or(0)),
            cache_write: Some(sum.cache_write.unwrap_or(0)),
            total: Some(sum.total_tokens.unwrap_or(0)),
            ..SessionTokens::default()
        };
        SessionStatsData {
            session_file: self
                .session_file()
                .map(|f| f.to_string_lossy().into_owned()),
            session_id: Some(self.sessions.current.id.clone()),
            user_messages: Some(users),
            assistant_messages: Some(assistants),
            tool_calls: Some(calls),
            tool_results: Some(results),
            total_messages: Some(messages.len() as u64),
            tokens: Some(tokens),
            premium_requests: Some(0),
            cost: Number::from_f64(cost),
            context_usage: Some(ContextUsage {
                tokens: Some(context),
                context_window: Some(CONTEXT_WINDOW),
                percent: Number::from_f64(context as f64 * 100.0 / CONTEXT_WINDOW as f64),
                ..ContextUsage::default()
            }),
            ..SessionStatsData::default()
        }
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

    /// `get_state`, in the reference's members.
    fn state(&self) -> SessionState {
        let object = || {
            let mut schema = Map::new();
            schema.insert("type".into(), "object".into());
            Value::Object(schema)
        };
        let tool = |name: &str, description: &str, parameters: &Value| DumpTool {
            name: Some(name.to_owned()),
            description: Some(description.to_owned()),
            parameters: Some(Lazy::new(parameters).expect("a schema serialises")),
            ..DumpTool::default()
        };
        let mut tools: Vec<DumpTool> = BUILTIN_TOOLS
            .iter()
            .map(|(name, description)| tool(name, description, &object()))
            .collect();
        tools.extend(
            self.agent
                .host_tools()
                .map(|t| tool(&t.name, &t.description, &t.parameters)),
        );
        let session_dir = self
            .options
            .session_dir
            .as_ref()
            .filter(|_| !self.options.no_session);
        let mut state = SessionState {
            model: Some(model_info(self.runner.model())),
            thinking_level: Some(self.options.thinking.as_deref().unwrap_or("off").to_owned()),
            is_streaming: Some(self.runner.is_streaming()),
            is_compacting: Some(false),
            steering_mode: Some("one-at-a-time".into()),
            follow_up_mode: Some("one-at-a-time".into()),
            interrupt_mode: Some("immediate".into()),
            session_file: self
                .session_file()
                .map(|f| f.to_string_lossy().into_owned()),
            session_dir: session_dir.map(|d| d.to_string_lossy().into_owned()),
            session_id: Some(self.sessions.current.id.clone()),
            auto_compaction_enabled: Some(false),
            message_count: Some(self.sessions.current.messages.len() as u64),
            queued_message_count: Some(self.runner.queued() as u64),
            todo_phases: Some(Value::Array(self.sessions.current.todos.clone())),
            fast_mode_enabled: Some(false),
            fast_mode_active: Some(false),
            dump_tools: Lazy::new(&tools).ok(),
            ..SessionState::default()
        };
        // No assistant message has a rate: `null`, as omp sends it.
        state.extra.insert("tokensPerSecond".into(), Value::Null);
        state
    }
}

/// `{cancelled: false}`: a session was started or loaded.
pub(crate) fn not_cancelled() -> ResponseData {
    ResponseData::Cancelled(CancelledData {
        cancelled: false,
        ..CancelledData::default()
    })
}

/// A model as `get_state`, `get_available_models` and `set_model` give it.
fn model_info(model: &Model) -> ModelInfo {
    ModelInfo {
        id: model.id.clone(),
        name: Some(format!("musewire scripted model ({})", model.id)),
        api: Some(messages::API.to_owned()),
        provider: Some(model.provider.clone()),
        reasoning: Some(true),
        context_window: Some(CONTEXT_WINDOW),
        max_tokens: Some(64_000),
        ..ModelInfo::default()
    }
}
