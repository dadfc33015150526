//! ACP-34, ACP-35 (ours): the approval policy as session modes, owned by the bridge.
//!
//! A session is in one [`PermissionMode`]: [`PermissionMode::Ask`] (the default: every approval the agent asks,
//! ACP-08, goes to the editor), [`PermissionMode::AcceptEdits`] (an approval of a file edit, a call of
//! kind `edit` by ACP-18, is answered `Approve` by the bridge; the rest asks) or
//! [`PermissionMode::AllowAll`] (the bridge answers every approval `Approve`). What the bridge approves
//! says so on the call's card ([`approved_line`]). Dialogs that are no approval (ACP-09) are
//! asked in every mode. None of the agents offers a plan mode over RPC (omp 18.2.3's `/plan`
//! is its TUI's only, pi and the bundled agent have none), so there is none here.
//!
//! The mode is offered twice and kept in step (ACP-35): as ACP v1 `modes` (in the answers to
//! `session/new`, `session/load`, `session/resume` and `session/fork`) with
//! `session/set_mode` and `current_mode_update`, and as the config option [`MODE_OPTION`]
//! (category `mode`, first among the options). Setting either sends both
//! `current_mode_update` and `config_option_update`. The bridge remembers each session's mode
//! by its ACP id for its own lifetime ([`Modes`]), so a session loaded, resumed, started again
//! (ACP-33) or forked (ACP-31: the fork takes the original's) in the same process keeps it;
//! the agent's session file does not hold it, so a new bridge process starts every session in
//! [`PermissionMode::Ask`].

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    ConfigOptionUpdate, ContentBlock, CurrentModeUpdate, Error, RequestId, SessionConfigOption,
    SessionConfigOptionCategory, SessionConfigOptionValue, SessionConfigSelectOption, SessionMode,
    SessionModeState, SessionUpdate, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, SetSessionModeResponse, ToolCallContent, ToolCallStatus, ToolKind,
};
use serde_json::json;

use super::map::{text_content, withhold_credential_uris};
use super::outbox::Outbox;
use super::{notices, rpc, AcpSession, AgentKey, Bridge};

/// The id of the mode config option (ACP-35), as omp's and claude-agent-acp's ACP modes
/// name theirs.
pub(crate) const MODE_OPTION: &str = "mode";

/// The most sessions whose mode (other than [`PermissionMode::Ask`]) the bridge remembers for a later
/// load or resume (ACP-35); past it the oldest is forgotten (that session loads in `Ask`).
pub(crate) const MAX_REMEMBERED_MODES: usize = 1024;

/// A session's approval policy (ACP-34).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum PermissionMode {
    /// Every approval goes to the editor (the default).
    #[default]
    Ask,
    /// An approval of a file edit (kind `edit`) is answered by the bridge; the rest asks.
    AcceptEdits,
    /// The bridge answers every approval itself.
    AllowAll,
}

impl PermissionMode {
    /// Every mode, in the order they are offered.
    pub const ALL: [PermissionMode; 3] = [
        PermissionMode::Ask,
        PermissionMode::AcceptEdits,
        PermissionMode::AllowAll,
    ];

    /// Its id on the wire: claude-agent-acp's ids for the same policies (omp's own ACP mode
    /// calls its default `default` too).
    pub fn id(self) -> &'static str {
        match self {
            PermissionMode::Ask => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::AllowAll => "bypassPermissions",
        }
    }

    /// The name an editor shows (Zed's mode dropdown).
    pub fn name(self) -> &'static str {
        match self {
            PermissionMode::Ask => "Ask",
            PermissionMode::AcceptEdits => "Accept edits",
            PermissionMode::AllowAll => "Allow all",
        }
    }

    /// What it does, one line.
    pub(crate) fn description(self) -> &'static str {
        match self {
            PermissionMode::Ask => "Ask before each tool the agent asks approval for",
            PermissionMode::AcceptEdits => {
                "Approve file edits (write, edit) without asking; ask for the rest"
            }
            PermissionMode::AllowAll => "Approve every tool without asking",
        }
    }

    /// The mode of a wire id, if it is one.
    pub(crate) fn from_id(id: &str) -> Option<PermissionMode> {
        PermissionMode::ALL.into_iter().find(|m| m.id() == id)
    }

    /// Whether the bridge approves, unasked, an approval of a call of `kind` (`None`: tied
    /// to no call, ACP-08).
    fn approves(self, kind: Option<ToolKind>) -> bool {
        match self {
            PermissionMode::Ask => false,
            PermissionMode::AcceptEdits => kind == Some(ToolKind::Edit),
            PermissionMode::AllowAll => true,
        }
    }
}

/// The line a card approved by the mode carries, first in its content, until it ends
/// (ACP-34).
pub fn approved_line(mode: PermissionMode) -> String {
    format!(
        "[approved without asking: the session's mode is {}]",
        mode.name()
    )
}

/// The modes as ACP v1 `modes` (ACP-35).
pub(crate) fn state(mode: PermissionMode) -> SessionModeState {
    let modes = PermissionMode::ALL
        .into_iter()
        .map(|m| SessionMode::new(m.id(), m.name()).description(m.description()))
        .collect();
    SessionModeState::new(mode.id(), modes)
}

/// The modes as the `mode` config option (ACP-35).
pub(crate) fn option(mode: PermissionMode) -> SessionConfigOption {
    let choices: Vec<SessionConfigSelectOption> = PermissionMode::ALL
        .into_iter()
        .map(|m| SessionConfigSelectOption::new(m.id(), m.name()).description(m.description()))
        .collect();
    SessionConfigOption::select(MODE_OPTION, "Mode", mode.id(), choices)
        .category(SessionConfigOptionCategory::Mode)
        .description("When the agent asks to run a tool: ask, or approve without asking")
}

/// The modes the bridge remembers by ACP session id, for a load or resume in this process
/// (ACP-35): only those other than [`PermissionMode::Ask`], at most [`MAX_REMEMBERED_MODES`], the
/// oldest set forgotten first.
#[derive(Debug, Default)]
pub(crate) struct Modes {
    set: VecDeque<(Arc<str>, PermissionMode)>,
}

impl Modes {
    /// The mode session `id` was last in; `Ask` when none is remembered.
    pub(crate) fn recall(&self, id: &str) -> PermissionMode {
        self.set
            .iter()
            .find(|(i, _)| &**i == id)
            .map_or(PermissionMode::Ask, |(_, m)| *m)
    }

    /// Session `id` is in `mode` now.
    pub(crate) fn remember(&mut self, id: &str, mode: PermissionMode) {
        self.set.retain(|(i, _)| &**i != id);
        if mode == PermissionMode::Ask {
            return;
        }
        if self.set.len() >= MAX_REMEMBERED_MODES {
            self.set.pop_front();
        }
        self.set.push_back((id.into(), mode));
    }
}

/// The cards the mode approved, each with its line (ACP-34): every later update that
/// replaces such a card's content keeps the line first, until the card ends.
#[derive(Debug, Default)]
pub(crate) struct CardNotes {
    lines: BTreeMap<String, String>,
}

/// The most cards of a session that carry a mode's line at once.
const MAX_NOTED_CARDS: usize = 256;

impl CardNotes {
    /// Card `id` carries `line` from now on (when there is room).
    pub(crate) fn note(&mut self, id: &str, line: String) {
        if self.lines.len() < MAX_NOTED_CARDS || self.lines.contains_key(id) {
            self.lines.insert(id.to_owned(), line);
        }
    }

    /// Puts each noted card's line first in an update that replaces its content (once), and
    /// forgets a card that ends.
    pub(crate) fn apply(&mut self, updates: &mut [SessionUpdate]) {
        if self.lines.is_empty() {
            return;
        }
        for update in updates {
            let SessionUpdate::ToolCallUpdate(update) = update else {
                continue;
            };
            let id = update.tool_call_id.0.to_string();
            let Some(line) = self.lines.get(&id) else {
                continue;
            };
            if let Some(content) = &mut update.fields.content {
                if !content.first().is_some_and(|c| is_text(c, line)) {
                    content.insert(0, text_content(line.clone()));
                }
            }
            if matches!(
                update.fields.status,
                Some(ToolCallStatus::Completed | ToolCallStatus::Failed)
            ) {
                self.lines.remove(&id);
            }
        }
    }
}

fn is_text(content: &ToolCallContent, text: &str) -> bool {
    matches!(content, ToolCallContent::Content(c)
        if matches!(&c.content, ContentBlock::Text(t) if t.text == text))
}

impl Bridge {
    /// `session/set_mode` (ACP-35): a mode the session offers, else invalid params; then
    /// `current_mode_update` and `config_option_update`, and the answer `{}`. The mode is the
    /// bridge's: the agent is not asked, so a session opening, or whose agent has exited,
    /// takes it too.
    pub(super) fn set_mode(
        &mut self,
        id: &RequestId,
        request: SetSessionModeRequest,
    ) -> Result<(), Error> {
        let key = self.mode_session(&request.session_id)?;
        let mode = offered(&request.mode_id.0)?;
        if let Some(session) = self.sessions.get_mut(&key) {
            self.modes.remember(&session.acp_id.0, mode);
            session.switch_mode(mode, &mut Outbox::new(&mut self.actions));
        }
        self.editor(rpc::result_line(id, &SetSessionModeResponse::new()));
        Ok(())
    }

    /// `session/set_config_option` of [`MODE_OPTION`] (ACP-35): as `session/set_mode`,
    /// answered with every option.
    pub(super) fn set_mode_option(
        &mut self,
        id: &RequestId,
        request: SetSessionConfigOptionRequest,
    ) -> Result<(), Error> {
        let key = self.mode_session(&request.session_id)?;
        let SessionConfigOptionValue::ValueId { value } = &request.value else {
            return Err(Error::invalid_params().data(json!("the mode option takes a value id")));
        };
        let mode = offered(&value.0)?;
        let options = match self.sessions.get_mut(&key) {
            Some(session) => {
                self.modes.remember(&session.acp_id.0, mode);
                session.switch_mode(mode, &mut Outbox::new(&mut self.actions));
                session.config.options()
            }
            None => Vec::new(),
        };
        let response = SetSessionConfigOptionResponse::new(options);
        self.editor(rpc::result_line(id, &response));
        Ok(())
    }

    /// The session a mode is set for: known by its id (else session-not-found).
    fn mode_session(
        &self,
        session_id: &agent_client_protocol_schema::v1::SessionId,
    ) -> Result<AgentKey, Error> {
        self.keys
            .get(&*session_id.0)
            .copied()
            .filter(|key| self.sessions.contains_key(key))
            .ok_or_else(|| Error::session_not_found(session_id.clone()))
    }
}

impl AcpSession {
    /// The session is in `mode` now: shown by `/status`, and the editor told both ways
    /// (ACP-35). The bridge remembers it by the session's id.
    pub(super) fn switch_mode(&mut self, mode: PermissionMode, out: &mut Outbox<'_>) {
        self.config.mode = mode;
        self.mapper.facts.requested(&self.config);
        let current = CurrentModeUpdate::new(mode.id());
        out.update(self, SessionUpdate::CurrentModeUpdate(current));
        let update = ConfigOptionUpdate::new(self.config.options());
        out.update(self, SessionUpdate::ConfigOptionUpdate(update));
    }

    /// ACP-34: whether the session's mode approves, unasked, the approval `title` of a call
    /// of `tool`; when it does, the call's card says so (the card opened first, pending, when
    /// the editor has not seen it), or, for an approval tied to no call, the turn does. The
    /// caller answers `Approve`.
    pub(super) fn approved_by_mode(
        &mut self,
        tool: &str,
        title: &str,
        out: &mut Outbox<'_>,
    ) -> bool {
        let mode = self.config.mode;
        let kind = self.mapper.approval_kind(tool);
        if !mode.approves(kind) {
            return false;
        }
        let line = approved_line(mode);
        let Some((id, mut call, opening)) = self.mapper.approval_target(tool) else {
            let first = withhold_credential_uris(title.lines().next().unwrap_or_default());
            let text = format!("\"{first}\": the session's mode is {}", mode.name());
            let notice = notices::line("approved without asking", &text);
            self.say(&notice, out);
            return true;
        };
        let mut content = self.mapper.card_content(&id);
        content.insert(0, text_content(line.clone()));
        self.mapper.notes.note(&id, line);
        call.fields.content = Some(content);
        if let Some(opening) = opening {
            out.update(self, opening);
        }
        out.update(self, SessionUpdate::ToolCallUpdate(call));
        true
    }
}

/// A mode the sessions offer, else invalid params naming the ids.
fn offered(id: &str) -> Result<PermissionMode, Error> {
    PermissionMode::from_id(id).ok_or_else(|| {
        let ids: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.id()).collect();
        Error::invalid_params().data(json!(format!(
            "mode {id:?} is not one of this session's modes ({})",
            ids.join(", ")
        )))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acp_34_each_mode_approves_what_it_says() {
        for kind in [ToolKind::Execute, ToolKind::Read, ToolKind::Other] {
            assert!(!PermissionMode::AcceptEdits.approves(Some(kind)));
            assert!(PermissionMode::AllowAll.approves(Some(kind)));
        }
        assert!(PermissionMode::AcceptEdits.approves(Some(ToolKind::Edit)));
        assert!(!PermissionMode::AcceptEdits.approves(None));
        assert!(PermissionMode::AllowAll.approves(None));
        assert!(!PermissionMode::Ask.approves(Some(ToolKind::Edit)));
        assert!(!PermissionMode::Ask.approves(None));
    }

    #[test]
    fn acp_35_ids_round_trip_and_the_default_is_ask() {
        for mode in PermissionMode::ALL {
            assert_eq!(PermissionMode::from_id(mode.id()), Some(mode));
        }
        assert_eq!(PermissionMode::default(), PermissionMode::Ask);
        assert_eq!(PermissionMode::from_id("plan"), None);
        assert!(offered("plan").is_err());
    }

    #[test]
    fn acp_35_remembered_modes_are_bounded_and_ask_is_no_entry() {
        let mut modes = Modes::default();
        modes.remember("a", PermissionMode::AllowAll);
        assert_eq!(modes.recall("a"), PermissionMode::AllowAll);
        modes.remember("a", PermissionMode::Ask);
        assert!(modes.set.is_empty());
        for n in 0..=MAX_REMEMBERED_MODES {
            modes.remember(&n.to_string(), PermissionMode::AcceptEdits);
        }
        assert_eq!(modes.set.len(), MAX_REMEMBERED_MODES);
        assert_eq!(modes.recall("0"), PermissionMode::Ask);
        assert_eq!(modes.recall("1"), PermissionMode::AcceptEdits);
    }

    #[test]
    fn acp_34_a_noted_card_keeps_its_line_first_until_it_ends() {
        use agent_client_protocol_schema::v1::{ToolCallUpdate, ToolCallUpdateFields};
        let mut notes = CardNotes::default();
        notes.note("c1", approved_line(PermissionMode::AllowAll));
        let with = |fields| SessionUpdate::ToolCallUpdate(ToolCallUpdate::new("c1", fields));
        let mut updates = vec![
            with(ToolCallUpdateFields::new().content(vec![text_content("out".into())])),
            with(ToolCallUpdateFields::new().status(ToolCallStatus::InProgress)),
        ];
        notes.apply(&mut updates);
        notes.apply(&mut updates);
        let SessionUpdate::ToolCallUpdate(first) = &updates[0] else {
            panic!()
        };
        let content = first.fields.content.as_ref().unwrap();
        assert_eq!(content.len(), 2);
        assert!(is_text(
            &content[0],
            &approved_line(PermissionMode::AllowAll)
        ));
        let SessionUpdate::ToolCallUpdate(second) = &updates[1] else {
            panic!()
        };
        assert!(second.fields.content.is_none());
        let mut end = vec![with(
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::Completed)
                .content(vec![text_content("done".into())]),
        )];
        notes.apply(&mut end);
        assert!(notes.lines.is_empty());
        let SessionUpdate::ToolCallUpdate(end) = &end[0] else {
            panic!()
        };
        assert_eq!(end.fields.content.as_ref().unwrap().len(), 2);
    }
}
