//! Bounded reads of the agent's history (ACP-06, OUT-06): at most [`MAX_HISTORY_PAGES`]
//! pages of [`WALK_PAGE_MESSAGES`] messages through `get_messages_page`, each page's
//! `nextCursor` relayed as the agent wrote it, never made up.
//!
//! omp's and the bundled agent's pages run forward from the oldest message and their cursors
//! are opaque, so the bridge cannot start at the newest page without inventing a cursor. A
//! load therefore reads forward within the budget, replaying the conversation as it goes, and
//! takes the facts only when it reached the end (the latest facts are then the last seen); a
//! longer history leaves them unknown and its replay stops at the budget (RULES.md, note on
//! ACP-06). A stored-output check stops at the first page that settles it.

use std::collections::BTreeSet;

use agent_client_protocol_schema::v1::{Plan, SessionUpdate};
use serde_json::Value;

use super::map::Replay;
use super::plan::plan_from_phases;
use super::status::Facts;
use crate::client::fnv1a64;
use crate::output::{OutputError, OutputRef, StoredOutput};
use crate::wire::{AgentMessage, Command, GetMessagesPage, MessagesPageData};

/// The most pages a walk reads (ACP-06, OUT-06).
pub(crate) const MAX_HISTORY_PAGES: u32 = 20;
/// The messages the bridge asks for per page of a walk: a load's replay (ACP-06) or a read's
/// check (OUT-06).
pub(crate) const WALK_PAGE_MESSAGES: u32 = 100;
/// The most messages a load replays, paged or not (ACP-06): the pages' budget.
pub(crate) const MAX_REPLAY_MESSAGES: usize = (MAX_HISTORY_PAGES * WALK_PAGE_MESSAGES) as usize;

/// Where a walk goes after a page.
#[derive(Debug, PartialEq)]
pub(crate) enum Next {
    /// Ask for the next page with this command (the agent's cursor, relayed).
    Page(Command),
    /// That was the last page.
    End,
    /// The budget is spent and the history goes on.
    OutOfBudget,
}

/// A walk's page count.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    pages: u32,
}

impl Walk {
    /// The first page's command.
    pub(crate) fn first() -> Command {
        Command::from(GetMessagesPage::new(None, Some(WALK_PAGE_MESSAGES)))
    }

    /// Counts a page and says what comes next.
    pub(crate) fn after(&mut self, page: &MessagesPageData) -> Next {
        self.pages += 1;
        match &page.next_cursor {
            None => Next::End,
            Some(_) if self.pages >= MAX_HISTORY_PAGES => Next::OutOfBudget,
            Some(cursor) => Next::Page(Command::from(GetMessagesPage::new(
                Some(cursor),
                Some(WALK_PAGE_MESSAGES),
            ))),
        }
    }
}

/// The facts a load rebuilds from history (ACP-06): usage and model from the assistant
/// messages, the latest plan from the `todo` tool's results, and the conversation replayed.
/// A message seen twice (the same JSON) is counted and replayed once.
#[derive(Debug, Default)]
pub(crate) struct Rebuild {
    pub(crate) facts: Facts,
    pub(crate) plan: Option<Plan>,
    /// `get_state`'s `todoPhases`, when an array: the plan when the history shows no `todo`
    /// result (ACP-06).
    pub(crate) state_plan: Option<Plan>,
    /// `get_state`'s model's context window (ACP-02).
    pub(crate) context_window: Option<u64>,
    /// The conversation's replay (ACP-06).
    pub(crate) replay: Replay,
    seen: BTreeSet<u64>,
}

impl Rebuild {
    /// Takes one page's messages, in order; the replay's updates.
    pub(crate) fn page<'a>(
        &mut self,
        messages: impl IntoIterator<Item = &'a AgentMessage>,
    ) -> Vec<SessionUpdate> {
        let mut updates = Vec::new();
        for message in messages {
            let key = fnv1a64(&serde_json::to_vec(message).unwrap_or_default());
            if !self.seen.insert(key) {
                continue;
            }
            updates.extend(self.replay.message(message));
            match message {
                AgentMessage::Assistant(_) => {
                    self.facts.assistant_message(message, "history");
                }
                AgentMessage::ToolResult(result)
                    if result.tool_name == "todo" && result.is_error != Some(true) =>
                {
                    if let Some(phases) = result
                        .details
                        .as_ref()
                        .and_then(|d| d.get("phases"))
                        .and_then(Value::as_array)
                    {
                        self.plan = Some(plan_from_phases(phases));
                    }
                }
                _ => {}
            }
        }
        updates
    }
}

/// A tool result's stored output (the `details.storedOutput` field an agent that spills
/// large output sets on the result), when it has one that reads.
pub(crate) fn stored_output(details: Option<&Value>) -> Option<StoredOutput> {
    crate::wire::ToolResultDetails::from_details(details?)?.stored_output
}

/// Looks for a reference among a page's tool results (OUT-06): its record when it belongs
/// to `item_id`, [`OutputError::Foreign`] when it belongs to another item, `None` when the
/// page does not name it.
pub(crate) fn find_stored<'a>(
    messages: impl IntoIterator<Item = &'a AgentMessage>,
    item_id: &str,
    output_ref: &OutputRef,
) -> Option<Result<StoredOutput, OutputError>> {
    messages.into_iter().find_map(|message| {
        let AgentMessage::ToolResult(result) = message else {
            return None;
        };
        let stored = stored_output(result.details.as_ref())?;
        if stored.output_ref != *output_ref {
            return None;
        }
        if stored.item_id == item_id && result.tool_call_id == item_id {
            Some(Ok(stored))
        } else {
            Some(Err(OutputError::Foreign))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Availability;
    use serde_json::json;

    #[test]
    fn acp_06_the_replay_cut_notice_names_the_walk_budget() {
        let budget = format!("{MAX_HISTORY_PAGES} pages of {WALK_PAGE_MESSAGES} messages");
        assert!(super::super::REPLAY_CUT_NOTICE.contains(&budget));
    }

    fn page(messages: Value, next: Option<&str>) -> MessagesPageData {
        let mut data = json!({"messages": messages, "totalMessages": 1000});
        if let Some(next) = next {
            data["nextCursor"] = json!(next);
        }
        serde_json::from_value(data).unwrap()
    }

    #[test]
    fn acp_06_out_06_a_walk_relays_cursors_and_stops_after_20_pages() {
        let mut walk = Walk::default();
        for n in 1..MAX_HISTORY_PAGES {
            let cursor = format!("opaque-{n}");
            let next = walk.after(&page(json!([]), Some(&cursor)));
            assert_eq!(
                next,
                Next::Page(Command::from(GetMessagesPage::new(
                    Some(&cursor),
                    Some(100)
                )))
            );
        }
        assert_eq!(
            walk.after(&page(json!([]), Some("more"))),
            Next::OutOfBudget
        );
        assert_eq!(Walk::default().after(&page(json!([]), None)), Next::End);
    }

    #[test]
    fn out_06_a_reference_is_found_for_its_item_only() {
        let stored = json!({"sessionId": "s", "itemId": "c1", "outputRef": "out-0123456789abcdef",
            "byteLen": 3, "mediaType": "text/plain", "availability": "available"});
        let messages: Vec<AgentMessage> = serde_json::from_value(json!([
            {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": [],
             "details": {"storedOutput": stored}}
        ]))
        .unwrap();
        let r = OutputRef::parse("out-0123456789abcdef").unwrap();
        let found = find_stored(&messages, "c1", &r).unwrap().unwrap();
        assert_eq!(found.availability, Availability::Available);
        assert_eq!(
            find_stored(&messages, "c2", &r),
            Some(Err(OutputError::Foreign))
        );
        let other = OutputRef::parse("out-1111111111111111").unwrap();
        assert_eq!(find_stored(&messages, "c1", &other), None);
    }

    #[test]
    fn acp_06_a_message_seen_twice_is_counted_once() {
        let messages: Vec<AgentMessage> = serde_json::from_value(json!([
            {"role": "assistant", "content": [], "usage": {"input": 5, "output": 2}},
            {"role": "assistant", "content": [], "usage": {"input": 5, "output": 2}}
        ]))
        .unwrap();
        let mut rebuild = Rebuild::default();
        rebuild.page(&messages);
        rebuild.page(&messages[..1]);
        let tokens = rebuild.facts.cumulative.unwrap();
        assert_eq!((tokens.prompt, tokens.output, tokens.total), (5, 2, 7));
    }

    #[test]
    fn acp_05_06_replay_gives_what_the_assistant_said_whole_cuts_tool_output_and_repeats_nothing() {
        let big = "x".repeat(100 * 1024);
        let messages: Vec<AgentMessage> = serde_json::from_value(json!([
            {"role": "assistant", "content": [{"type": "thinking", "thinking": big},
                {"type": "text", "text": big},
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}]},
            {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
             "content": [{"type": "text", "text": big}]}
        ]))
        .unwrap();
        let mut rebuild = Rebuild::default();
        let updates = rebuild.page(&messages);
        let updates: Vec<Value> = updates
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect();
        let kinds: Vec<&str> = updates
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "agent_thought_chunk",
                "agent_message_chunk",
                "tool_call",
                "tool_call_update"
            ]
        );
        // ACP-05: what the assistant said and thought is replayed whole; its tool's output
        // is cut.
        assert_eq!(updates[0]["content"]["text"], big.as_str());
        assert_eq!(updates[1]["content"]["text"], big.as_str());
        let result = updates[3]["content"][0]["content"]["text"]
            .as_str()
            .unwrap();
        assert!(result.len() <= crate::acp::MAX_SURFACE_BYTES);
        assert!(result.ends_with(crate::acp::TRUNCATION_NOTICE));
        // No stored-output negotiation: no handle.
        assert!(updates[3].get("_meta").is_none());
        // The same messages on the next page: nothing replayed twice.
        assert!(rebuild.page(&messages).is_empty());
    }
}
