//! The session's model and thinking level as ACP config options (ACP-24): a `model` select
//! from the agent's `get_available_models`, the current one from `get_state`, and a
//! `thought_level` select from the levels the agent takes. A `session/set_config_option`
//! becomes `set_model` or `set_thinking_level`, and a change the agent makes itself
//! (`config_update`, `thinking_level_changed`) a `config_option_update`.

use std::time::Instant;

use agent_client_protocol_schema::v1::{
    ConfigOptionUpdate, Error, RequestId, SessionConfigOption, SessionConfigOptionCategory,
    SessionConfigOptionValue, SessionConfigSelectOption, SessionUpdate,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
};
use serde_json::{json, Value};

use super::outbox::Outbox;
use super::{rpc, Bridge, Pending};
use crate::client::CommandFailure;
use crate::frame::ProtocolVersion;
use crate::wire::{
    Command, ConfigUpdate, ModelInfo, ResponseData, SessionState, SetModel, SetThinkingLevel,
};

/// The id of the model option.
pub(crate) const MODEL_OPTION: &str = "model";

/// The id of the thinking level option.
pub(crate) const THOUGHT_OPTION: &str = "thought_level";

/// The thinking levels oh-my-pi's `set_thinking_level` takes (an agent that negotiated
/// protocol v2, as omp and the bundled agent do).
pub(crate) const OMP_THINKING_LEVELS: [&str; 7] =
    ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// The thinking levels pi's `set_thinking_level` takes (an agent that stays on protocol v1).
pub(crate) const PI_THINKING_LEVELS: [&str; 6] =
    ["off", "minimal", "low", "medium", "high", "xhigh"];

/// The most models a `model` select offers; the agent's list is cut there.
pub(crate) const MAX_MODELS: usize = 256;

/// The approval policy an agent command names (omp's `--approval-mode MODE` or
/// `--approval-mode=MODE`), for [`super::BridgeConfig::approval_policy`]: the last one given.
pub fn approval_policy_of(agent: &[String]) -> Option<String> {
    let mut policy = None;
    let mut args = agent.iter();
    while let Some(arg) = args.next() {
        if arg == "--approval-mode" {
            policy = args.next().cloned();
        } else if let Some(mode) = arg.strip_prefix("--approval-mode=") {
            policy = Some(mode.to_owned());
        }
    }
    policy.filter(|p| !p.is_empty())
}

/// What the bridge knows of one session's model and thinking level.
#[derive(Debug, Clone, Default)]
pub(crate) struct Config {
    /// The model in use: its option value (`provider/id`, or `id` with no provider).
    model: Option<String>,
    /// The thinking level in use.
    thinking: Option<String>,
    /// The models the agent offers, as option values and names; empty when it offers none
    /// (then no `model` option).
    models: Vec<(String, String, Option<String>)>,
    /// The levels the agent takes; empty until the protocol is known.
    levels: &'static [&'static str],
    /// The approval policy the agent was started with ([`super::BridgeConfig`]), for
    /// `/status`.
    pub(crate) approval_policy: Option<String>,
    /// ACP-34, ACP-35: the bridge's own approval policy for the session, its first option.
    pub(crate) mode: super::mode::PermissionMode,
}

/// A model's option value: `provider/id`, or its id alone when it names no provider.
fn model_value(model: &ModelInfo) -> String {
    match model.provider.as_deref().filter(|p| !p.is_empty()) {
        Some(provider) => format!("{provider}/{}", model.id),
        None => model.id.clone(),
    }
}

impl Config {
    /// Nothing known yet but the approval policy the agent was started with.
    pub(crate) fn new(approval_policy: Option<String>) -> Self {
        Config {
            approval_policy,
            ..Config::default()
        }
    }

    /// The levels by the agent's protocol: oh-my-pi's for v2, pi's for v1.
    pub(crate) fn set_protocol(&mut self, protocol: ProtocolVersion) {
        self.levels = match protocol {
            ProtocolVersion::V2 => &OMP_THINKING_LEVELS,
            ProtocolVersion::V1 => &PI_THINKING_LEVELS,
        };
    }

    /// `get_state`: the model and thinking level in use.
    pub(crate) fn state(&mut self, state: &SessionState) {
        if let Some(model) = &state.model {
            self.model = Some(model_value(model));
        }
        if let Some(level) = &state.thinking_level {
            self.thinking = Some(level.clone());
        }
    }

    /// `get_available_models`: the models offered (the first [`MAX_MODELS`]).
    pub(crate) fn models(&mut self, models: &[ModelInfo]) {
        self.models = models
            .iter()
            .take(MAX_MODELS)
            .map(|m| {
                let value = model_value(m);
                let name = m.name.clone().unwrap_or_else(|| m.id.clone());
                (value, name, m.provider.clone())
            })
            .collect();
    }

    /// The model and provider in use, for `/status` (ACP-01).
    pub(crate) fn model(&self) -> Option<(&str, Option<&str>)> {
        let value = self.model.as_deref()?;
        Some(match value.split_once('/') {
            Some((provider, id)) => (id, Some(provider)),
            None => (value, None),
        })
    }

    /// The thinking level in use, for `/status` (ACP-01).
    pub(crate) fn thinking(&self) -> Option<&str> {
        self.thinking.as_deref()
    }

    /// A change the agent made (`config_update`); whether anything changed.
    pub(crate) fn update(&mut self, update: &ConfigUpdate) -> bool {
        let before = (self.model.clone(), self.thinking.clone());
        match &update.model {
            Some(Value::Object(_)) => {
                if let Some(model) = update
                    .model
                    .clone()
                    .and_then(|m| serde_json::from_value::<ModelInfo>(m).ok())
                {
                    self.model = Some(model_value(&model));
                }
            }
            Some(Value::String(id)) => self.model = Some(id.clone()),
            _ => {}
        }
        if let Some(level) = &update.thinking_level {
            self.thinking = Some(level.clone());
        }
        before != (self.model.clone(), self.thinking.clone())
    }

    /// A thinking level the agent reported (`thinking_level_changed`); whether it changed.
    pub(crate) fn thinking_changed(&mut self, level: &str) -> bool {
        if self.thinking.as_deref() == Some(level) {
            return false;
        }
        self.thinking = Some(level.to_owned());
        true
    }

    /// The options to show: the mode (ACP-35), the model select when the agent offers
    /// models, then the thinking level select once the protocol is known.
    pub(crate) fn options(&self) -> Vec<SessionConfigOption> {
        let mut options = vec![super::mode::option(self.mode)];
        if !self.models.is_empty() {
            let current = self
                .model
                .clone()
                .filter(|m| self.models.iter().any(|(v, _, _)| v == m))
                .unwrap_or_else(|| self.models[0].0.clone());
            let choices: Vec<SessionConfigSelectOption> = self
                .models
                .iter()
                .map(|(value, name, _)| {
                    SessionConfigSelectOption::new(value.clone(), name.clone())
                        .description(value.clone())
                })
                .collect();
            options.push(
                SessionConfigOption::select(MODEL_OPTION, "Model", current, choices)
                    .category(SessionConfigOptionCategory::Model),
            );
        }
        if !self.levels.is_empty() {
            let current = self
                .thinking
                .clone()
                .filter(|t| self.levels.contains(&t.as_str()))
                .unwrap_or_else(|| "off".to_owned());
            let choices: Vec<SessionConfigSelectOption> = self
                .levels
                .iter()
                .map(|level| SessionConfigSelectOption::new(level.to_string(), level.to_string()))
                .collect();
            options.push(
                SessionConfigOption::select(THOUGHT_OPTION, "Thinking", current, choices)
                    .category(SessionConfigOptionCategory::ThoughtLevel),
            );
        }
        options
    }

    /// The agent command a `session/set_config_option` asks for, checked against what was
    /// offered: an unknown option or a value not offered is an invalid-params error and
    /// nothing is sent.
    pub(crate) fn command(&self, config_id: &str, value: &str) -> Result<Command, Error> {
        match config_id {
            MODEL_OPTION if !self.models.is_empty() => {
                let Some((_, _, provider)) = self.models.iter().find(|(v, _, _)| v == value) else {
                    return Err(Error::invalid_params()
                        .data(json!(format!("model {value:?} is not one of the options"))));
                };
                let id = match provider.as_deref().filter(|p| !p.is_empty()) {
                    Some(p) => value
                        .strip_prefix(p)
                        .and_then(|rest| rest.strip_prefix('/'))
                        .unwrap_or(value),
                    None => value,
                };
                Ok(Command::SetModel(SetModel {
                    provider: provider.clone().unwrap_or_default(),
                    model_id: id.to_owned(),
                    ..SetModel::default()
                }))
            }
            THOUGHT_OPTION if !self.levels.is_empty() => {
                if !self.levels.contains(&value) {
                    return Err(Error::invalid_params().data(json!(format!(
                        "thinking level {value:?} is not one of the options"
                    ))));
                }
                Ok(Command::SetThinkingLevel(SetThinkingLevel {
                    level: value.to_owned(),
                    ..SetThinkingLevel::default()
                }))
            }
            other => Err(Error::invalid_params()
                .data(json!(format!("no config option {other:?} in this session")))),
        }
    }
}

impl super::AcpSession {
    /// ACP-24: the levels by the protocol the agent settled on.
    pub(super) fn learn_protocol(&mut self) {
        self.config.set_protocol(self.client.protocol());
    }

    /// ACP-24: a `get_state` answer's model and level, which `/status` shows too (ACP-01).
    pub(super) fn learn_state(&mut self, state: &SessionState) {
        self.config.state(state);
        self.mapper.facts.requested(&self.config);
    }
}

impl Bridge {
    /// `session/set_config_option` (ACP-24): the option and value checked against what was
    /// offered (else invalid params and nothing sent), then `set_model` or
    /// `set_thinking_level`, then `get_state`; answered with the options then in effect.
    pub(super) fn set_config_option(
        &mut self,
        now: Instant,
        id: &RequestId,
        request: SetSessionConfigOptionRequest,
    ) -> Result<(), Error> {
        // ACP-35: the mode is the bridge's, not the agent's.
        if &*request.config_id.0 == super::mode::MODE_OPTION {
            return self.set_mode_option(id, request);
        }
        let key = self.usable(&request.session_id)?;
        let Some(session) = self.sessions.get(&key) else {
            return Err(Error::session_not_found(request.session_id));
        };
        let SessionConfigOptionValue::ValueId { value } = &request.value else {
            return Err(Error::invalid_params().data(json!("these options take a value id")));
        };
        let command = session.config.command(&request.config_id.0, &value.0)?;
        self.send(
            now,
            key,
            command,
            |editor| Pending::SetConfig { editor },
            id,
        );
        Ok(())
    }
}

impl super::AcpSession {
    /// ACP-24: the models asked beside a load; a load already answered learns of them by an
    /// update.
    pub(super) fn models_answered(
        &mut self,
        outcome: Result<ResponseData, CommandFailure>,
        out: &mut Outbox<'_>,
    ) {
        if let Ok(ResponseData::Models(models)) = &outcome {
            self.config.models(&models.models);
            if !self.pending.values().any(Pending::is_opening) {
                let update = ConfigOptionUpdate::new(self.config.options());
                out.update(self, SessionUpdate::ConfigOptionUpdate(update));
            }
        }
    }

    /// ACP-24: what a change left in effect answers `session/set_config_option`.
    pub(super) fn config_state(
        &mut self,
        editor: RequestId,
        outcome: Result<ResponseData, CommandFailure>,
        out: &mut Outbox<'_>,
    ) {
        if let Ok(ResponseData::State(state)) = &outcome {
            self.learn_state(state);
        }
        let response = SetSessionConfigOptionResponse::new(self.config.options());
        out.editor(rpc::result_line(&editor, &response));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: &str, id: &str) -> ModelInfo {
        serde_json::from_value(json!({"id": id, "provider": provider, "name": id})).unwrap()
    }

    #[test]
    fn acp_24_model_values_name_the_provider_and_map_back_to_set_model() {
        let mut config = Config::default();
        config.set_protocol(ProtocolVersion::V2);
        config.models(&[model("fake", "a"), model("fake", "b/c")]);
        let Command::SetModel(set) = config.command(MODEL_OPTION, "fake/b/c").unwrap() else {
            panic!("not set_model");
        };
        assert_eq!(
            (set.provider.as_str(), set.model_id.as_str()),
            ("fake", "b/c")
        );
        assert!(config.command(MODEL_OPTION, "fake/d").is_err());
        assert!(config.command("mode", "x").is_err());
        assert!(config.command(THOUGHT_OPTION, "max").is_ok());
        config.set_protocol(ProtocolVersion::V1);
        assert!(config.command(THOUGHT_OPTION, "max").is_err());
    }

    #[test]
    fn acp_24_the_approval_policy_is_the_last_approval_mode_flag() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(approval_policy_of(&args(&["omp", "--mode", "rpc"])), None);
        assert_eq!(
            approval_policy_of(&args(&["omp", "--approval-mode", "always-ask"])),
            Some("always-ask".into())
        );
        assert_eq!(
            approval_policy_of(&args(&[
                "omp",
                "--approval-mode=never",
                "--approval-mode",
                "x"
            ])),
            Some("x".into())
        );
        assert_eq!(approval_policy_of(&args(&["omp", "--approval-mode"])), None);
    }

    #[test]
    fn acp_24_no_models_no_model_option() {
        let mut config = Config::default();
        let options = config.options();
        assert_eq!(options.len(), 1);
        assert_eq!(&*options[0].id.0, super::super::mode::MODE_OPTION);
        config.set_protocol(ProtocolVersion::V1);
        let options = config.options();
        assert_eq!(options.len(), 2);
        assert_eq!(&*options[1].id.0, THOUGHT_OPTION);
        assert!(config.command(MODEL_OPTION, "x/y").is_err());
    }
}
