//! What a session has observed, for `/status` (ACP-01) and the `muse/usage` metadata
//! (ACP-02). Nothing here is estimated: a fact not observed is `None` and shows as
//! "unknown".

use agent_client_protocol_schema::v1::{AvailableCommand, Meta, SessionInfoUpdate, UsageUpdate};
use serde_json::{json, Value};

use crate::wire::{AgentMessage, SessionStatsData, SessionTokens, Usage};

/// The name of the local status command (ACP-01).
pub(crate) const STATUS_COMMAND: &str = "status";

/// Root-session token totals, host-computed: each assistant message's usage counted once.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tokens {
    /// Prompt tokens: input plus cache reads and writes.
    pub prompt: u64,
    /// Output tokens.
    pub output: u64,
    /// Total tokens as the agent reports them (or prompt + output when it does not).
    pub total: u64,
}

/// The facts one session has observed (ACP-01, ACP-02).
#[derive(Debug, Default, Clone)]
pub(crate) struct Facts {
    /// The last model an assistant message named.
    pub model: Option<String>,
    /// Its provider.
    pub provider: Option<String>,
    /// The last thinking level the agent reported.
    pub effort: Option<String>,
    /// Cumulative tokens (ACP-02: replacements, never increments).
    pub cumulative: Option<Tokens>,
    /// The last model call's usage as the agent reported it, and the turn it was in.
    pub last_call: Option<(String, Usage)>,
    /// The model's context window in tokens, as `get_state` reported it (ACP-02).
    pub context_window: Option<u64>,
    /// The context the last model call used: its input + cacheRead + cacheWrite tokens
    /// (ACP-02, the prompt tokens omp anchors its context usage on).
    pub context_used: Option<u64>,
    /// Entries of the last plan sent.
    pub plan_size: Option<usize>,
    /// The agent's own commands, last advertised.
    pub agent_commands: Vec<AvailableCommand>,
    /// The model the session is set to (`get_state`, `set_model`, `config_update`: ACP-24).
    pub requested_model: Option<String>,
    /// Its provider.
    pub requested_provider: Option<String>,
    /// The thinking level the session is set to (ACP-24).
    pub requested_effort: Option<String>,
    /// The approval policy the agent was started with (`--approval-mode`), when known.
    pub approval_policy: Option<String>,
    /// The session's mode (ACP-34): its name and id.
    pub requested_mode: Option<String>,
    /// The time of the last assistant message (ms since the Unix epoch, as the agent
    /// stamped it): the session's `updatedAt` at a turn's end (ACP-26).
    pub last_message_ms: Option<u64>,
}

impl Facts {
    /// Takes the model, provider, thinking level, approval policy (ACP-24) and mode (ACP-34)
    /// the session is set to, for `/status`.
    pub(crate) fn requested(&mut self, config: &super::config::Config) {
        if let Some((model, provider)) = config.model() {
            self.requested_model = Some(model.to_owned());
            self.requested_provider = provider.map(str::to_owned);
        }
        if let Some(level) = config.thinking() {
            self.requested_effort = Some(level.to_owned());
        }
        if let Some(policy) = &config.approval_policy {
            self.approval_policy = Some(policy.clone());
        }
        self.requested_mode = Some(format!("{} ({})", config.mode.name(), config.mode.id()));
    }

    /// Takes an assistant message's model and usage, once per message (at `message_end`);
    /// true when it carried usage.
    pub(crate) fn assistant_message(&mut self, message: &AgentMessage, turn_id: &str) -> bool {
        let AgentMessage::Assistant(assistant) = message else {
            return false;
        };
        if let Some(model) = &assistant.model {
            self.model = Some(model.clone());
        }
        if let Some(provider) = &assistant.provider {
            self.provider = Some(provider.clone());
        }
        if assistant.timestamp.is_some() {
            self.last_message_ms = assistant.timestamp;
        }
        if let Some(usage) = &assistant.usage {
            let prompt = usage.input.unwrap_or(0)
                + usage.cache_read.unwrap_or(0)
                + usage.cache_write.unwrap_or(0);
            let output = usage.output.unwrap_or(0);
            let total = usage.total_tokens.unwrap_or(prompt + output);
            self.context_used = Some(prompt);
            let sum = self.cumulative.get_or_insert_with(Tokens::default);
            sum.prompt += prompt;
            sum.output += output;
            sum.total += total;
            self.last_call = Some((turn_id.to_owned(), usage.clone()));
            return true;
        }
        false
    }

    /// Takes what `get_session_stats` reports (ACP-02): its token totals replace the
    /// cumulative values, and its `contextUsage.contextWindow`, when positive, is the window
    /// (the model may have changed since `get_state`).
    pub(crate) fn session_stats(&mut self, stats: &SessionStatsData) {
        if let Some(tokens) = &stats.tokens {
            self.replace_cumulative(tokens);
        }
        if let Some(window) = stats
            .context_usage
            .as_ref()
            .and_then(|c| c.context_window)
            .filter(|w| *w > 0)
        {
            self.context_window = Some(window);
        }
    }

    /// Takes the agent's own totals (`get_session_stats`' `tokens`) as the cumulative values
    /// (ACP-02: they replace, never add): prompt = input + cacheRead + cacheWrite, output,
    /// total (else prompt + output).
    pub(crate) fn replace_cumulative(&mut self, tokens: &SessionTokens) {
        let prompt = tokens.input.unwrap_or(0)
            + tokens.cache_read.unwrap_or(0)
            + tokens.cache_write.unwrap_or(0);
        let output = tokens.output.unwrap_or(0);
        self.cumulative = Some(Tokens {
            prompt,
            output,
            total: tokens.total.unwrap_or(prompt + output),
        });
    }

    /// The standard `usage_update` (ACP-02): only when both the window and the last call's
    /// context are known; no cost.
    pub(crate) fn context_update(&self) -> Option<UsageUpdate> {
        let size = self.context_window.filter(|s| *s > 0)?;
        Some(UsageUpdate::new(self.context_used?, size))
    }

    /// The `session_info_update` carrying `_meta["muse/usage"]` (ACP-02), when there is
    /// usage to report.
    pub(crate) fn usage_update(&self) -> Option<SessionInfoUpdate> {
        let cumulative = self.cumulative?;
        let mut usage = json!({
            "scope": "rootSession",
            "cumulative": {
                "promptTokens": cumulative.prompt,
                "outputTokens": cumulative.output,
                "totalTokens": cumulative.total,
            },
        });
        if let Some((turn_id, last)) = &self.last_call {
            // Raw last-call counters, in the agent's own cache convention.
            let mut call = json!({"turnId": turn_id});
            let fields = [
                ("promptTokens", last.input),
                ("outputTokens", last.output),
                ("cacheReadTokens", last.cache_read),
                ("cacheWriteTokens", last.cache_write),
                ("totalTokens", last.total_tokens),
            ];
            for (name, value) in fields {
                if let Some(value) = value {
                    call[name] = json!(value);
                }
            }
            usage["lastModelCall"] = call;
        }
        let mut meta = Meta::new();
        meta.insert("muse/usage".into(), usage);
        Some(SessionInfoUpdate::new().meta(meta))
    }

    /// The `/status` text (ACP-01): every line a fact or "unknown".
    pub(crate) fn status_text(&self) -> String {
        let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
        let tokens = match self.cumulative {
            Some(t) => format!(
                "prompt {}, output {}, total {}",
                t.prompt, t.output, t.total
            ),
            None => "unknown".into(),
        };
        let plan = match self.plan_size {
            Some(n) => format!("{n} entries"),
            None => "unknown".into(),
        };
        [
            "Status (local command: no model turn was started)".to_owned(),
            format!("requested model: {}", or_unknown(&self.requested_model)),
            format!(
                "requested provider: {}",
                or_unknown(&self.requested_provider)
            ),
            format!("requested effort: {}", or_unknown(&self.requested_effort)),
            format!("requested mode: {}", or_unknown(&self.requested_mode)),
            format!("last observed model: {}", or_unknown(&self.model)),
            format!("last observed provider: {}", or_unknown(&self.provider)),
            format!("last observed effort: {}", or_unknown(&self.effort)),
            format!("approval policy: {}", or_unknown(&self.approval_policy)),
            format!("root-session tokens: {tokens}"),
            format!("context pressure: {}", self.pressure()),
            format!("plan size: {plan}"),
        ]
        .join("\n")
    }

    /// The context pressure line (ACP-01, ACP-02): from the same figures as `usage_update`.
    fn pressure(&self) -> String {
        match (self.context_used, self.context_window.filter(|s| *s > 0)) {
            (Some(used), Some(size)) => {
                let permille = u128::from(used) * 1000 / u128::from(size);
                format!(
                    "{used} of {size} tokens ({}.{}%)",
                    permille / 10,
                    permille % 10
                )
            }
            (None, Some(size)) => {
                format!("unknown (context window {size} tokens; no model call observed)")
            }
            _ => "unknown (no context window size reported)".into(),
        }
    }

    /// The commands to advertise: `/status` beside the agent's own (ACP-01).
    pub(crate) fn commands(&self) -> Vec<AvailableCommand> {
        let mut commands = vec![AvailableCommand::new(
            STATUS_COMMAND,
            "Show the session's model, usage and plan (local; starts no model turn)",
        )];
        commands.extend(
            self.agent_commands
                .iter()
                .filter(|c| c.name != STATUS_COMMAND)
                .cloned(),
        );
        commands
    }
}

/// Whether a prompt is the `/status` command: its text starts with `/status` and then ends
/// or has whitespace (ACP-01). Whatever follows is not executed.
pub(crate) fn is_status_prompt(text: &str) -> bool {
    let rest = text.trim_start().strip_prefix("/status");
    rest.is_some_and(|r| r.is_empty() || r.starts_with(char::is_whitespace))
}

/// The agent's slash commands as ACP commands.
pub(crate) fn agent_commands(commands: &[crate::wire::SlashCommand]) -> Vec<AvailableCommand> {
    commands
        .iter()
        .map(|c| AvailableCommand::new(c.name.clone(), c.description.clone().unwrap_or_default()))
        .collect()
}

/// Whether `_meta["muse/usage"]` of the client capabilities is 1 (ACP-02).
pub(crate) fn usage_opt_in(meta: Option<&Meta>) -> bool {
    meta.and_then(|m| m.get("muse/usage")) == Some(&Value::from(1))
}
