//! ACP-33 (ours): an agent that comes back. When a session's agent has exited between turns
//! (a crash, or stopped for silence: ACP-13, ACP-21), the editor's next `session/prompt` starts
//! a new agent on the same session file, as `session/resume` does (ACP-25: no replay), with
//! the session's MCP servers started again for it (MCP-01); once it is open, the turn says
//! [`RESTARTED_NOTICE`] on a line of its own and the prompt runs. A death mid-turn still ends
//! that turn with the error (ACP-05). Only a session kept in the bridge's session folder
//! comes back (it needs its file); at most [`MAX_RESTARTS`] within [`RESTART_WINDOW`], then
//! the prompt fails with an error that says so. A prompt that comes while the new agent
//! opens is refused as one that comes while a session opens.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, Error, McpServer as McpEntry, PromptRequest, PromptResponse,
    RequestId, SessionUpdate, StopReason, TextContent,
};
use serde_json::json;

use super::load::SwitchFor;
use super::open::is_session_file_name;
use super::{rpc, AgentKey, Bridge};

/// The most times a session's agent is started again within [`RESTART_WINDOW`] (ACP-33).
pub const MAX_RESTARTS: usize = 3;

/// The window [`MAX_RESTARTS`] counts in (ACP-33).
pub const RESTART_WINDOW: Duration = Duration::from_secs(60);

/// The line a turn begins with when its session's agent was started again (ACP-33, in
/// ACP-11's form).
pub const RESTARTED_NOTICE: &str =
    "[agent restarted: its previous process had exited; the session goes on from its file]";

/// What a session keeps to start its agent again (ACP-33): the MCP servers the editor gave
/// it, and when it was last started again. Its `Debug` shows no server's environment or
/// headers (credentials).
#[derive(Default)]
pub(super) struct Restart {
    /// The editor's MCP servers of the session, as given.
    pub(super) mcp: Vec<McpEntry>,
    /// When the agent was started again, within the window, oldest first.
    times: VecDeque<Instant>,
    /// The prompt that started it again, run once the session is open.
    pub(super) prompt: Option<(RequestId, PromptRequest)>,
    /// The editor cancelled the prompt while the agent was being started again.
    pub(super) cancelled: bool,
    /// The session's id names a session file of the folder the agent wrote (its history),
    /// not the bridge's fallback id.
    pub(super) stored: bool,
}

impl std::fmt::Debug for Restart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Restart")
            .field("mcp_servers", &self.mcp.len())
            .field("times", &self.times)
            .field("prompt", &self.prompt.as_ref().map(|(id, _)| id))
            .field("stored", &self.stored)
            .finish()
    }
}

impl Restart {
    /// Counts a start at `now`: false when [`MAX_RESTARTS`] were within the window already.
    fn count(&mut self, now: Instant) -> bool {
        while self
            .times
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= RESTART_WINDOW)
        {
            self.times.pop_front();
        }
        if self.times.len() >= MAX_RESTARTS {
            return false;
        }
        self.times.push_back(now);
        true
    }
}

impl Bridge {
    /// ACP-33: a prompt for a session whose agent has exited between turns starts it again;
    /// `None` when the session is no such one (the prompt goes on as usual).
    pub(super) fn restart_for_prompt(
        &mut self,
        now: Instant,
        id: &RequestId,
        request: &PromptRequest,
    ) -> Option<Result<(), Error>> {
        let key = *self.keys.get(&*request.session_id.0)?;
        let session = self.sessions.get(&key)?;
        // An agent being stopped (ACP-12, ACP-13, ACP-21) is not gone until it exits: its
        // group is still to be killed, and it may still write the file.
        let dead = session.exited;
        let between_turns = session.turn.is_none() && session.queued.is_empty();
        let stored = self.config.session_dir.is_some()
            && session.restart.stored
            && is_session_file_name(&session.acp_id.0);
        if !dead || !between_turns || !stored || self.editor_ended {
            return None;
        }
        let cwd = session.mapper.cwd.clone()?;
        let mut restart = std::mem::take(&mut self.sessions.get_mut(&key)?.restart);
        if !restart.count(now) {
            let message = format!(
                "the session's agent exited {MAX_RESTARTS} times within {}s: it is not started \
                 again; load the session to try once more",
                RESTART_WINDOW.as_secs()
            );
            self.sessions.get_mut(&key)?.restart = restart;
            return Some(Err(Error::internal_error().data(json!(message))));
        }
        self.forget(key);
        let mcp = restart.mcp.clone();
        let session_id = request.session_id.clone();
        restart.prompt = Some((id.clone(), request.clone()));
        self.switch_to(now, id, &session_id, cwd, mcp, SwitchFor::Resume);
        let new = *self.keys.get(&*session_id.0)?;
        if let Some(session) = self.sessions.get_mut(&new) {
            session.restart = restart;
        }
        Some(Ok(()))
    }

    /// ACP-33: the session `key` is open again after its agent was started again for a
    /// prompt: the notice, then the prompt (its refusal answered as the prompt's error).
    /// False when the session was not opened for a prompt.
    pub(super) fn restarted(&mut self, now: Instant, key: AgentKey) -> bool {
        let Some((id, request)) = self
            .sessions
            .get_mut(&key)
            .and_then(|s| s.restart.prompt.take())
        else {
            return false;
        };
        let cancelled = self
            .sessions
            .get_mut(&key)
            .is_some_and(|s| std::mem::take(&mut s.restart.cancelled));
        if cancelled {
            let answer = PromptResponse::new(StopReason::Cancelled);
            self.editor(rpc::result_line(&id, &answer));
            return true;
        }
        let notice = ContentChunk::new(ContentBlock::Text(TextContent::new(format!(
            "{RESTARTED_NOTICE}\n"
        ))));
        self.session_update(key, SessionUpdate::AgentMessageChunk(notice));
        if let Err(error) = self.prompt(now, &id, request) {
            self.editor(rpc::error_line(&id, &error));
        }
        true
    }

    /// A dead session's agent is forgotten: its key and its state go (its process has
    /// exited and its group was killed at the exit, ACP-12).
    fn forget(&mut self, key: AgentKey) {
        self.forget_dialogs(key);
        self.keys.retain(|_, k| *k != key);
        self.sessions.remove(&key);
    }
}
