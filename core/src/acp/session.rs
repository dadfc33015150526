//! One ACP session's state ([`AcpSession`]), what it waits for from its agent ([`Pending`]),
//! the prompt it answers ([`Turn`]), and its timer table ([`Timer`]): every timer a session
//! has is a variant, its deadline read from the session by [`AcpSession::deadline`] and its
//! expiry dispatched by `Bridge::expire`, both exhaustive matches, so `poll_timeout` and
//! the `Timeout` input cannot fall out of step.

use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

use agent_client_protocol_schema::v1::{RequestId, SessionId};

use super::history::Walk;
use super::load::LoadStep;
use super::{config, map::Mapper, mcp, next, silence, start, stop};
use crate::client::{AgentKind, Client, RequestId as AgentRequest};
use crate::output::{ReadParams, StoredOutput};

/// A session's timers, in the order a `Timeout` input runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Timer {
    /// ACP-13: the agent's start-up budget, while it has said nothing.
    Start,
    /// ACP-21: the silence probe at half the budget, then the budget.
    Silence,
    /// ACP-12: a stop's grace before the agent's group is killed.
    Stop,
    /// ACP-02: a turn's `get_session_stats` budget.
    Stats,
    /// ACP-24: an opening's `get_available_models` budget.
    Models,
    /// OUT-07: a `read_output`'s budget.
    Read,
    /// ACP-39: a held card's budget for its files' writes by the editor.
    Review,
    /// MCP-05, MCP-06: the session's MCP servers' calls and start-up.
    Mcp,
    /// The session's client's own timer (its start-up probe, FRAME-03, and call budgets).
    Client,
}

impl Timer {
    /// Every timer, in the order a `Timeout` input runs them (the order the bridge ran its
    /// expiries in before the table).
    pub(super) const ALL: [Timer; 9] = [
        Timer::Start,
        Timer::Silence,
        Timer::Stop,
        Timer::Stats,
        Timer::Models,
        Timer::Read,
        Timer::Review,
        Timer::Mcp,
        Timer::Client,
    ];
}

/// What a session's deadlines depend on beyond the session: whether the bridge holds every
/// agent's stdout unread (ACP-20: an agent not read is not silent) and the silence budget.
#[derive(Clone, Copy, Debug)]
pub(super) struct TimerContext {
    pub(super) agents_held: bool,
    pub(super) silence_budget: silence::SilenceBudget,
}

/// A prompt being answered.
#[derive(Debug)]
pub(super) struct Turn {
    /// The editor's `session/prompt` request.
    pub(super) editor: RequestId,
    /// Our `prompt` command to the agent.
    pub(super) prompt: AgentRequest,
    /// Whether the editor cancelled it.
    pub(super) cancel: super::map::Cancel,
    /// Its user message's `message_start` was seen (ACP-27: the next user message of the
    /// run is a queued prompt's).
    pub(super) user_seen: bool,
}

/// What the bridge waits for from a session's agent, by our request to it.
#[derive(Debug)]
pub(super) enum Pending {
    /// `session/new`: `get_state` gives the model and thinking level (ACP-24) and, with a
    /// session folder, names the agent's session file, whose name becomes the ACP session id
    /// (ACP-06).
    NewState { editor: RequestId },
    /// `session/new`: `get_available_models` for the model option (ACP-24); the session is
    /// answered with its id once it comes, or at `deadline` without the model option (then
    /// a later answer is a `config_option_update`, as [`Pending::Models`]).
    NewModels {
        editor: RequestId,
        acp_id: SessionId,
        deadline: Instant,
        opening: super::open::Opening,
    },
    /// `session/load`: `get_available_models` (ACP-24), asked beside the history walk; its
    /// answer after the load's is a `config_option_update`.
    Models,
    /// `session/set_config_option`: `set_model` or `set_thinking_level` (ACP-24).
    SetConfig { editor: RequestId },
    /// `session/set_config_option`: `get_state` for what the change left in effect (ACP-24).
    ConfigState { editor: RequestId },
    /// `session/load` or `session/resume` (ACP-06, ACP-25): the step its chain is at, which
    /// [`Bridge::load_step`] takes on from the agent's answer.
    Load { editor: RequestId, step: LoadStep },
    /// A turn ended: `get_session_stats` for the cumulative usage before the prompt is
    /// answered (ACP-02), due by `deadline` (then the bridge's own sum stands). The prompt's
    /// editor id stays in the session's turn.
    TurnStats { deadline: Instant },
    /// `_muse/readOutput`: a history page checked for the reference (OUT-06).
    ReadCheck {
        editor: RequestId,
        params: ReadParams,
        walk: Walk,
    },
    /// `_muse/readOutput`: the agent's `read_output`, due by `deadline` (OUT-07).
    Read {
        editor: RequestId,
        params: ReadParams,
        deadline: Instant,
    },
    /// ACP-21: `get_state` asked of an agent silent for half its budget; the answer (any
    /// byte) only shows it is alive.
    Probe,
    /// ACP-41: `login`, for `authenticate`.
    Login { editor: RequestId },
}

impl Pending {
    /// The editor's request this answers, if one of its own.
    pub(super) fn editor(&self) -> Option<&RequestId> {
        match self {
            Pending::NewState { editor }
            | Pending::NewModels { editor, .. }
            | Pending::SetConfig { editor }
            | Pending::ConfigState { editor }
            | Pending::Load { editor, .. }
            | Pending::ReadCheck { editor, .. }
            | Pending::Read { editor, .. }
            | Pending::Login { editor } => Some(editor),
            Pending::TurnStats { .. } | Pending::Models | Pending::Probe => None,
        }
    }

    /// The budget it is due by: a turn's stats (ACP-02), an opening's models (ACP-24), a
    /// read (OUT-07).
    pub(super) fn deadline(&self) -> Option<Instant> {
        match self {
            Pending::Read { deadline, .. }
            | Pending::TurnStats { deadline }
            | Pending::NewModels { deadline, .. } => Some(*deadline),
            _ => None,
        }
    }

    /// Whether the session is being opened (new or load): no prompt yet.
    pub(super) fn is_opening(&self) -> bool {
        matches!(
            self,
            Pending::NewState { .. } | Pending::NewModels { .. } | Pending::Load { .. }
        )
    }
}

impl AcpSession {
    /// Our requests of the kind `which` says whose [`Pending::deadline`] has passed.
    pub(super) fn past_due(&self, now: Instant, which: fn(&Pending) -> bool) -> Vec<AgentRequest> {
        self.pending
            .iter()
            .filter(|(_, p)| which(p) && p.deadline().is_some_and(|d| d <= now))
            .map(|(r, _)| *r)
            .collect()
    }
}

#[derive(Debug)]
pub(super) struct AcpSession {
    /// The key of its agent process, which its actions name.
    pub(super) key: super::AgentKey,
    /// The editor's id of the session (its file's name with a session folder, else the
    /// agent key); empty while `session/new` waits for it.
    pub(super) acp_id: SessionId,
    /// Which agent it runs, decided once (from the bridge's configuration).
    pub(super) agent: AgentKind,
    pub(super) client: Client,
    pub(super) mapper: Mapper,
    pub(super) turn: Option<Turn>,
    /// ACP-27: prompts sent as follow-ups behind the turn, oldest first.
    pub(super) queued: VecDeque<Turn>,
    /// ACP-28: prompts that came after the turn was cancelled, held for the next turn.
    pub(super) held: VecDeque<next::Held>,
    /// Our requests to the agent that the bridge answers the editor from.
    pub(super) pending: BTreeMap<AgentRequest, Pending>,
    /// Stored outputs this session's tool results showed, by reference: the live evidence
    /// a read falls back on while the agent cannot page (OUT-06 note).
    pub(super) seen_outputs: BTreeMap<String, StoredOutput>,
    /// The agent exited or was stopped.
    pub(super) exited: bool,
    /// ACP-12: where its agent is in being stopped.
    pub(super) stop: stop::Stop,
    /// ACP-13: until when its agent may stay silent.
    pub(super) start: start::StartBudget,
    /// ACP-24: its model and thinking level.
    pub(super) config: config::Config,
    /// ACP-26: the title the agent's stream last gave.
    pub(super) title: Option<String>,
    /// ACP-21: since when its agent has said nothing.
    pub(super) silence: silence::Silence,
    /// MCP-01: the editor's MCP servers of this session.
    pub(super) mcp: mcp::SessionMcp,
    /// ACP-33: what starting its agent again needs.
    pub(super) restart: super::restart::Restart,
    /// ACP-20: bytes given the driver for the agent's stdin and not yet reported written.
    pub(super) stdin_waiting: usize,
    /// ACP-37: omp's subagents' cards.
    pub(super) subagents: super::subagent::Subagents,
    /// ACP-38: its cards held while their files go to the editor.
    pub(super) review: super::review::Held,
}

impl AcpSession {
    /// When `timer` is next due, or `None` while it does not run.
    pub(super) fn deadline(&self, timer: Timer, context: TimerContext) -> Option<Instant> {
        let pending = |kind: fn(&Pending) -> bool| {
            self.pending
                .values()
                .filter(|p| kind(p))
                .filter_map(Pending::deadline)
                .min()
        };
        match timer {
            Timer::Start if self.exited || context.agents_held => None,
            Timer::Start => self.start.timeout(),
            Timer::Silence => self
                .silence_counts(context)
                .then(|| self.silence.timeout(context.silence_budget)),
            Timer::Stop => self.stop.timeout(),
            Timer::Stats => pending(|p| matches!(p, Pending::TurnStats { .. })),
            Timer::Models => pending(|p| matches!(p, Pending::NewModels { .. })),
            Timer::Read => pending(|p| matches!(p, Pending::Read { .. })),
            Timer::Review => self.review.timeout(),
            Timer::Mcp => self.mcp.poll_timeout(),
            Timer::Client => self.client.poll_timeout(),
        }
    }

    /// The earliest of the session's timers.
    pub(super) fn poll_timeout(&self, context: TimerContext) -> Option<Instant> {
        Timer::ALL
            .into_iter()
            .filter_map(|timer| self.deadline(timer, context))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::Timer;

    /// `Timer::ALL` names every timer once: a variant added to the enum and not to the list
    /// fails here (the match is exhaustive).
    #[test]
    fn every_timer_is_in_the_table_once() {
        for (at, timer) in Timer::ALL.into_iter().enumerate() {
            let index = match timer {
                Timer::Start => 0,
                Timer::Silence => 1,
                Timer::Stop => 2,
                Timer::Stats => 3,
                Timer::Models => 4,
                Timer::Read => 5,
                Timer::Review => 6,
                Timer::Mcp => 7,
                Timer::Client => 8,
            };
            assert_eq!(index, at, "{timer:?}");
        }
    }
}
