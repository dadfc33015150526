//! omp's subagents on cards of their own (ACP-37). A session whose agent is omp
//! ([`AgentKind::Omp`]) asks it at its start for `set_subagent_subscription {level:
//! "progress"}`; omp 18.2.3 then writes `subagent_lifecycle` (a subagent `started`, then
//! `completed`, `failed` or `aborted`; a frame with no status shows nothing) and `subagent_progress` (what it does, at most one per
//! 150 ms per subagent) frames, and each subagent becomes a tool card: opened `in_progress`
//! at its start (or its first progress), titled with its description (omp's label of the
//! task, which may come with a later progress frame) or its assignment, its content the progress
//! (what it says it does, its latest output lines, its counts) bounded to the last 64 KiB
//! (ACP-05), sent only when it changed, and closed `completed` or `failed` (`aborted`
//! too) when it ends, or `failed` when the agent exits. No other agent is asked; an omp that
//! refuses the subscription sends no frames and gets no cards.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

use agent_client_protocol_schema::v1::{
    SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};

use super::bound::{bound_tail, cut_to_bytes};
use super::elicit::label;
use super::map::{text_content, withhold_credential_uris};
use super::session::AcpSession;
use crate::client::{self, AgentKind, Call, ClientEvent, RequestId};
use crate::wire::{
    AgentFrame, Command, SetSubagentSubscription, SubagentLifecyclePayload, SubagentProgress,
    SubagentProgressPayload,
};

/// The prefix of a subagent card's tool call id: `subagent-N-ID`, N counting the session's
/// subagent cards from 1 and ID omp's subagent id (at most 128 bytes of it).
pub const SUBAGENT_CALL_PREFIX: &str = "subagent-";

/// The level the bridge subscribes omp to: lifecycle and progress frames, not the
/// subagents' raw session events.
pub(crate) const SUBAGENT_SUBSCRIPTION_LEVEL: &str = "progress";

/// The most subagent cards a session keeps open at once; a subagent past them gets none.
pub(crate) const MAX_SUBAGENT_CARDS: usize = 256;

/// The most ended subagents a session remembers (a late progress frame of one opens no card
/// again).
const MAX_ENDED: usize = 256;

/// A subagent's card the editor has open.
#[derive(Debug)]
struct Card {
    /// Its tool call id.
    call: String,
    title: String,
    /// The content text last sent.
    sent: String,
    /// Where its title came from: a lifecycle frame's `description` wins over the
    /// progress's.
    titled_by: TitledBy,
}

/// Where a subagent card's title came from (ACP-37).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TitledBy {
    /// A lifecycle frame's `description`: it stays.
    Description,
    /// Progress frames, or the agent's name: a later description replaces it.
    Progress,
}

impl TitledBy {
    /// By whether the lifecycle frame gave a description.
    fn of(description: Option<&str>) -> Self {
        if description.is_some() {
            TitledBy::Description
        } else {
            TitledBy::Progress
        }
    }
}

/// A session's subagent cards (ACP-37).
#[derive(Debug, Default)]
pub(super) struct Subagents {
    /// The subscription asked, while unanswered.
    asked: Option<RequestId>,
    /// Cards made so far.
    made: u64,
    /// Open cards, by omp's subagent id.
    open: BTreeMap<String, Card>,
    /// Subagents that ended, oldest first (at most [`MAX_ENDED`]).
    ended: VecDeque<String>,
    ended_set: BTreeSet<String>,
}

/// ACP-37: a session of omp asks for its subagents' lifecycle and progress, once, as its
/// agent starts (the command waits for the ready frame, FRAME-03).
pub(super) fn subscribe(session: &mut AcpSession, now: Instant) {
    if session.agent != AgentKind::Omp {
        return;
    }
    let command = Command::SetSubagentSubscription(SetSubagentSubscription {
        level: SUBAGENT_SUBSCRIPTION_LEVEL.to_owned(),
        ..SetSubagentSubscription::default()
    });
    let sent = session
        .client
        .handle(now, client::Input::Call(Call::Send(command)));
    session.subagents.asked = sent.request();
}

/// The agent's answer to the subscription, taken (true) when `event` is it: accepted or
/// refused, nothing is shown.
pub(super) fn subscription_answer(session: &mut AcpSession, event: &ClientEvent) -> bool {
    let ClientEvent::Response { request, .. } = event else {
        return false;
    };
    if session.subagents.asked != Some(*request) {
        return false;
    }
    session.subagents.asked = None;
    true
}

impl Subagents {
    /// The updates a subagent frame gives; nothing for any other frame.
    pub(super) fn frame(&mut self, frame: &AgentFrame) -> Vec<SessionUpdate> {
        match frame {
            AgentFrame::SubagentLifecycle(frame) => self.lifecycle(&frame.payload),
            AgentFrame::SubagentProgress(frame) => self.progress(&frame.payload),
            _ => Vec::new(),
        }
    }

    /// The agent is gone: every open card is closed `failed`.
    pub(super) fn agent_gone(&mut self) -> Vec<SessionUpdate> {
        let open = std::mem::take(&mut self.open);
        open.into_iter()
            .map(|(id, card)| {
                self.remember_ended(id);
                close(&card, ToolCallStatus::Failed, None)
            })
            .collect()
    }

    fn lifecycle(&mut self, payload: &SubagentLifecyclePayload) -> Vec<SessionUpdate> {
        let description = nonempty(payload.description.as_deref());
        if payload.status.as_deref() == Some("started") {
            // A subagent of that id started again: a card of its own.
            self.forget_ended(&payload.id);
            let title = title_of(description, None, payload.agent.as_deref());
            if let Some(card) = self.open.get_mut(&payload.id) {
                return retitle(card, title, TitledBy::of(description));
            }
            return self.open_card(&payload.id, title, TitledBy::of(description));
        }
        if !payload.has_ended() {
            // No status: not a lifecycle step this version knows.
            return Vec::new();
        }
        let Some(card) = self.open.remove(&payload.id) else {
            // Never shown (past the cards' bound, or before the subscription): nothing.
            return Vec::new();
        };
        self.remember_ended(payload.id.clone());
        let status = match payload.status.as_deref() {
            Some("completed") => ToolCallStatus::Completed,
            _ => ToolCallStatus::Failed,
        };
        vec![close(&card, status, None)]
    }

    fn progress(&mut self, payload: &SubagentProgressPayload) -> Vec<SessionUpdate> {
        let progress = &payload.progress;
        let id = &progress.id;
        if self.ended_set.contains(id) {
            return Vec::new();
        }
        // omp's `task` is its prompt (`Complete assignment thoroughly:` and the assignment);
        // the assignment is the task the model gave.
        let task = [
            &payload.assignment,
            &progress.assignment,
            &payload.task,
            &progress.task,
        ]
        .into_iter()
        .find_map(|t| nonempty(t.as_deref()));
        let description = nonempty(progress.description.as_deref());
        let agent = payload.agent.as_deref().or(progress.agent.as_deref());
        let title = title_of(description, task, agent);
        let mut out = Vec::new();
        if !self.open.contains_key(id) {
            out = self.open_card(id, title.clone(), TitledBy::Progress);
        }
        let Some(card) = self.open.get_mut(id) else {
            return out;
        };
        let mut fields = ToolCallUpdateFields::new();
        let mut changed = false;
        if card.titled_by == TitledBy::Progress && card.title != title {
            card.title = title.clone();
            fields = fields.title(title);
            changed = true;
        }
        let text = render(progress);
        if text != card.sent {
            card.sent = text.clone();
            fields = fields.content(vec![text_content(text)]);
            changed = true;
        }
        let status = match progress.status.as_deref() {
            Some("completed") => Some(ToolCallStatus::Completed),
            Some("failed" | "aborted") => Some(ToolCallStatus::Failed),
            _ => None,
        };
        if let Some(status) = status {
            // Ended: closed now; its lifecycle frame finds it closed.
            let card = self.open.remove(id).expect("open");
            self.remember_ended(id.clone());
            out.push(close(&card, status, changed.then_some(fields)));
            return out;
        }
        if changed {
            let update = ToolCallUpdate::new(card.call.clone(), fields);
            out.push(SessionUpdate::ToolCallUpdate(update));
        }
        out
    }

    fn open_card(&mut self, id: &str, title: String, titled_by: TitledBy) -> Vec<SessionUpdate> {
        if self.open.len() >= MAX_SUBAGENT_CARDS {
            return Vec::new();
        }
        self.made += 1;
        let call = format!(
            "{SUBAGENT_CALL_PREFIX}{}-{}",
            self.made,
            cut_to_bytes(id, 128)
        );
        let opening = ToolCall::new(call.clone(), title.clone())
            .kind(ToolKind::Other)
            .status(ToolCallStatus::InProgress);
        self.open.insert(
            id.to_owned(),
            Card {
                call,
                title,
                sent: String::new(),
                titled_by,
            },
        );
        vec![SessionUpdate::ToolCall(opening)]
    }

    fn remember_ended(&mut self, id: String) {
        if self.ended_set.insert(id.clone()) {
            self.ended.push_back(id);
        }
        while self.ended.len() > MAX_ENDED {
            if let Some(old) = self.ended.pop_front() {
                self.ended_set.remove(&old);
            }
        }
    }

    fn forget_ended(&mut self, id: &str) {
        if self.ended_set.remove(id) {
            self.ended.retain(|e| e != id);
        }
    }
}

/// A card's title update when the lifecycle frame gives a description: it wins over what
/// progress frames gave.
fn retitle(card: &mut Card, title: String, titled_by: TitledBy) -> Vec<SessionUpdate> {
    if titled_by == TitledBy::Progress || card.title == title {
        return Vec::new();
    }
    card.title = title.clone();
    card.titled_by = TitledBy::Description;
    let fields = ToolCallUpdateFields::new().title(title);
    vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        card.call.clone(),
        fields,
    ))]
}

/// The card's closing update: its status, with what else changed.
fn close(
    card: &Card,
    status: ToolCallStatus,
    fields: Option<ToolCallUpdateFields>,
) -> SessionUpdate {
    let fields = fields.unwrap_or_default().status(status);
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(card.call.clone(), fields))
}

fn nonempty(text: Option<&str>) -> Option<&str> {
    text.filter(|t| !t.trim().is_empty())
}

/// A subagent card's title: its description, else its assignment's (else its task's) first
/// line, else its agent's
/// name, else `subagent`; as a tool card's title is made (ACP-29: no `NAME: ` prefix,
/// credential-bearing uris withheld, control characters as spaces, at most 256 bytes).
fn title_of(description: Option<&str>, task: Option<&str>, agent: Option<&str>) -> String {
    let first_line = task.and_then(|t| t.lines().map(str::trim).find(|l| !l.is_empty()));
    let text = description
        .or(first_line)
        .or(nonempty(agent))
        .unwrap_or("subagent");
    label(text)
}

/// A subagent's progress as its card's text: what it says it does (else the tool it runs),
/// its latest output lines oldest first, and its tool calls and model requests so far;
/// credential-bearing uris withheld, the last 64 KiB kept (ACP-05).
fn render(progress: &SubagentProgress) -> String {
    let mut lines: Vec<String> = Vec::new();
    if let Some(intent) = nonempty(progress.last_intent.as_deref()) {
        lines.push(intent.to_owned());
    } else if let Some(tool) = nonempty(progress.current_tool.as_deref()) {
        lines.push(format!("running {tool}"));
    }
    if let Some(output) = &progress.recent_output {
        lines.extend(output.iter().rev().cloned());
    }
    let counts: Vec<String> = [
        (progress.tool_count, "tool call"),
        (progress.requests, "model request"),
    ]
    .into_iter()
    .filter_map(|(n, what)| n.map(|n| format!("{n} {what}{}", if n == 1 { "" } else { "s" })))
    .collect();
    if !counts.is_empty() {
        lines.push(counts.join(", "));
    }
    let text = lines
        .iter()
        .map(|line| withhold_credential_uris(line))
        .collect::<Vec<_>>()
        .join("\n");
    bound_tail(&text)
}
