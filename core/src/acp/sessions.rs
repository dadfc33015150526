//! The editor's session lifecycle beyond new and load (ACP-25): `session/close` stops a
//! session's agent and forgets the session, `session/resume` switches an agent to a stored
//! session without replaying it, and a `session/load` of an open session loads it again.

use super::AgentKey;
use std::time::Instant;

use agent_client_protocol_schema::v1::{
    CloseSessionRequest, CloseSessionResponse, Error, ListSessionsRequest, PromptResponse,
    RequestId, ResumeSessionRequest, ResumeSessionResponse, SessionId, StopReason,
};
use serde_json::json;

use super::list::{self, SessionFile, SessionFolderError};
use super::load::SwitchFor;
use super::{is_session_file_name, rpc, Action, Bridge};
use crate::client::{self, Call};

impl Bridge {
    /// `session/close` (ACP-25): a running turn ends `cancelled`, what waits on the agent
    /// fails, the editor's open dialogs are withdrawn, and the agent is stopped (ACP-12);
    /// the session is forgotten, so later requests to it are `session not found`.
    pub(super) fn close_session(
        &mut self,
        now: Instant,
        id: &RequestId,
        request: &CloseSessionRequest,
    ) -> Result<(), Error> {
        let key = self
            .keys
            .get(&*request.session_id.0)
            .cloned()
            .ok_or_else(|| Error::session_not_found(request.session_id.clone()))?;
        self.end_session(now, key, "the session was closed");
        self.editor(rpc::result_line(id, &CloseSessionResponse::new()));
        Ok(())
    }

    /// Ends an open session's use: its turn answered `cancelled`, its other waiting requests
    /// failed with `why`, its dialogs withdrawn, its agent stopped, its id forgotten.
    pub(super) fn end_session(&mut self, now: Instant, key: AgentKey, why: &str) {
        self.forget_dialogs(key);
        // ACP-38: the held cards go with the session; the editor's late answers are dropped.
        self.review_forget(key, super::review::HeldCards::Drop);
        self.keys.retain(|_, k| *k != key);
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        let error = Error::invalid_request().data(json!(why));
        let mut waiting: Vec<RequestId> = std::mem::take(&mut session.pending)
            .into_values()
            .filter_map(|p| p.editor().cloned())
            .collect();
        // An opening held for its MCP servers, or a restart's prompt (ACP-33), ends here.
        waiting.extend(session.mcp.take_held_open());
        session.restart.prompt = None;
        // ACP-27: the queued prompts are cancelled with the running one.
        let prompts = super::queue::take_prompts(session);
        for editor in waiting {
            self.editor(rpc::error_line(&editor, &error));
        }
        for editor in prompts {
            let answer = PromptResponse::new(StopReason::Cancelled);
            self.editor(rpc::result_line(&editor, &answer));
        }
        self.session_input(now, key, client::Input::Call(Call::Stop));
        self.on_session(now, key, |session, out| session.stop_agent(now, out));
    }

    /// What `session/load` and `session/resume` check before anything starts (ACP-06,
    /// ACP-25): a session folder (else method not found, naming `what` the bridge cannot
    /// do), an absolute cwd, and an id that names a file of the folder and was not deleted
    /// (ACP-32).
    pub(super) fn check_stored(
        &self,
        session_id: &SessionId,
        cwd: &std::path::Path,
        what: &str,
    ) -> Result<(), Error> {
        if self.config.session_dir.is_none() {
            return Err(Error::method_not_found().data(json!(format!(
                "this agent keeps no sessions the bridge can {what}"
            ))));
        }
        if !cwd.is_absolute() {
            return Err(Error::invalid_params().data(json!("cwd must be an absolute path")));
        }
        // ACP-32: a deleted session is gone, whatever an agent would make of its name.
        if !is_session_file_name(&session_id.0) || self.files.is_deleted(&session_id.0) {
            return Err(Error::session_not_found(session_id.clone()));
        }
        Ok(())
    }

    /// `session/resume` (ACP-25): like `session/load` without the replay. An open session
    /// is answered at once with its options; else an agent is started in the cwd and
    /// switched to the session's file, and the answer carries the options (ACP-24).
    pub(super) fn resume(
        &mut self,
        now: Instant,
        id: &RequestId,
        request: ResumeSessionRequest,
    ) -> Result<(), Error> {
        self.check_stored(&request.session_id, &request.cwd, "resume")?;
        if self.keys.contains_key(&*request.session_id.0) {
            let key = self.usable(&request.session_id)?;
            let options = self
                .sessions
                .get(&key)
                .map(|s| s.config.options())
                .unwrap_or_default();
            let response = ResumeSessionResponse::new().config_options(options);
            self.editor(rpc::result_line(id, &response));
            return Ok(());
        }
        self.switch_to(
            now,
            id,
            &request.session_id,
            request.cwd,
            request.mcp_servers,
            SwitchFor::Resume,
        );
        Ok(())
    }

    /// A `session/load` of a session that is open (ACP-25): the open one is ended (its turn
    /// `cancelled`, its agent stopped), then it is loaded again in a new agent.
    pub(super) fn reload(&mut self, now: Instant, session_id: &SessionId) {
        if let Some(key) = self.keys.get(&*session_id.0).cloned() {
            self.end_session(now, key, "the session was loaded again");
        }
    }
}

impl Bridge {
    /// `session/list` (ACP-26): with a session folder, its files are read (one read for
    /// every list waiting) and each request answered from them.
    pub(super) fn list(
        &mut self,
        id: &RequestId,
        request: ListSessionsRequest,
    ) -> Result<(), Error> {
        let Some(dir) = self.config.session_dir.clone() else {
            return Err(Error::method_not_found()
                .data(json!("this agent keeps no sessions the bridge can list")));
        };
        if request.cwd.as_ref().is_some_and(|c| !c.is_absolute()) {
            return Err(Error::invalid_params().data(json!("cwd must be an absolute path")));
        }
        if self.listing.len() >= MAX_WAITING_LISTS {
            return Err(Error::invalid_request().data(json!("too many session lists waiting")));
        }
        self.listing.push((id.clone(), request));
        if self.listing.len() == 1 {
            self.actions.push_back(Action::ReadSessionFolder { dir });
        }
        Ok(())
    }

    /// The folder was read (ACP-26): every waiting list is answered.
    pub(super) fn listed(&mut self, files: Result<Vec<SessionFile>, SessionFolderError>) {
        for (id, request) in std::mem::take(&mut self.listing) {
            let line = match &files {
                Ok(files) => match list::answer(files, &request) {
                    Ok(response) => rpc::result_line(&id, &response),
                    Err(error) => rpc::error_line(&id, &error),
                },
                Err(why) => rpc::error_line(
                    &id,
                    &Error::internal_error().data(json!(format!(
                        "the session folder could not be read: {why}"
                    ))),
                ),
            };
            self.editor(line);
        }
    }
}

/// The most `session/list` requests waiting for one read of the folder.
const MAX_WAITING_LISTS: usize = 64;
