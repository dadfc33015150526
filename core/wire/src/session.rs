//! Session file entries, as omp and pi keep them (session format version 3, one JSON object
//! a line) and as pi 1.6 sends them over RPC (`get_entries`, and omp's
//! `get_subagent_messages`): the header, then entries linked by `parentId` into a tree
//! whose leaf is the current branch. An entry of a type this version does not know is
//! [`SessionEntry::Unknown`], kept as received (CALL-06).

use serde_json::Value;

use super::codec::{boxed_hooks, wire_enum, wire_struct, BoxedHooks};
use super::message::{AgentMessage, MessageContent, Usage};

wire_struct! {
    /// A session file's first line: `{type:"session", version?, id, timestamp, cwd,
    /// parentSession?}`.
    pub struct SessionHeader {
        /// The format version (3).
        opt version: u64 = "version",
        /// Session id.
        req id: String = "id",
        /// When it was made, ISO 8601.
        req timestamp: String = "timestamp",
        /// Working directory.
        req cwd: String = "cwd",
        /// The session file this one was forked or branched from.
        opt parent_session: String = "parentSession",
    }
}

wire_enum! {
    /// A session file's line read for its header: `{type:"session", …}` is
    /// [`SessionLine::Header`]; any other line (an entry, or the fixed-width title slot omp
    /// 18 writes before the header) is kept as received in [`SessionLine::Unknown`].
    /// Written back, the header's `type` comes first.
    pub enum SessionLine tag "type" {
        /// The header.
        "session" => Header(SessionHeader),
    }
}

wire_struct! {
    /// `message`: a history message.
    pub struct MessageEntry {
        /// The entry's id, unique in its session file.
        req id: String = "id",
        /// The entry before it on its branch (`null` for the first).
        req parent_id: Option<String> = "parentId",
        /// When it was added, ISO 8601.
        req timestamp: String = "timestamp",
        /// The message, as `get_messages` gives it.
        req message: AgentMessage = "message",
    }
}

wire_struct! {
    /// `model_change {provider, modelId}`.
    pub struct ModelChangeEntry {
        /// The entry's id, unique in its session file.
        req id: String = "id",
        /// The entry before it on its branch (`null` for the first).
        req parent_id: Option<String> = "parentId",
        /// When it was added, ISO 8601.
        req timestamp: String = "timestamp",
        /// The provider's id the session switched to.
        req provider: String = "provider",
        /// The model's id within that provider.
        req model_id: String = "modelId",
    }
}

wire_struct! {
    /// `thinking_level_change {thinkingLevel}`.
    pub struct ThinkingLevelChangeEntry {
        /// The entry's id, unique in its session file.
        req id: String = "id",
        /// The entry before it on its branch (`null` for the first).
        req parent_id: Option<String> = "parentId",
        /// When it was added, ISO 8601.
        req timestamp: String = "timestamp",
        /// The thinking level set, as the agent names it (`off`, `low`, `high`, …).
        req thinking_level: String = "thinkingLevel",
    }
}

wire_struct! {
    /// `compaction {summary, firstKeptEntryId, tokensBefore, details?, usage?, fromHook?}`.
    pub struct CompactionEntry {
        /// The entry's id, unique in its session file.
        req id: String = "id",
        /// The entry before it on its branch (`null` for the first).
        req parent_id: Option<String> = "parentId",
        /// When it was added, ISO 8601.
        req timestamp: String = "timestamp",
        /// The summary that replaces the entries before `firstKeptEntryId`.
        req summary: String = "summary",
        /// The first entry kept whole.
        opt first_kept_entry_id: String = "firstKeptEntryId",
        /// Context tokens before.
        opt tokens_before: u64 = "tokensBefore",
        /// The compactor's own details, as sent.
        opt details: Value = "details",
        /// What the summary cost.
        opt usage: Usage = "usage",
        /// Made by an extension.
        opt from_hook: bool = "fromHook",
    }
}

wire_struct! {
    /// `branch_summary {fromId, summary}`: what a branch left behind said, when the session
    /// moved to another branch.
    pub struct BranchSummaryEntry {
        /// The entry's id, unique in its session file.
        req id: String = "id",
        /// The entry before it on its branch (`null` for the first).
        req parent_id: Option<String> = "parentId",
        /// When it was added, ISO 8601.
        req timestamp: String = "timestamp",
        /// The leaf of the branch summarised.
        req from_id: String = "fromId",
        /// The text that stands for the summarised branch in the model's context.
        req summary: String = "summary",
        /// The summariser's own details, as sent.
        opt details: Value = "details",
        /// What the summary cost.
        opt usage: Usage = "usage",
        /// Made by an extension.
        opt from_hook: bool = "fromHook",
    }
}

wire_struct! {
    /// `custom {customType, data?}`: an extension's (or musewire agent's `musewire.todos`)
    /// own state, not sent to the model.
    pub struct CustomEntry {
        /// The entry's id, unique in its session file.
        req id: String = "id",
        /// The entry before it on its branch (`null` for the first).
        req parent_id: Option<String> = "parentId",
        /// When it was added, ISO 8601.
        req timestamp: String = "timestamp",
        /// Whose entry it is.
        req custom_type: String = "customType",
        /// Its data, as sent.
        opt data: Value = "data",
    }
}

wire_struct! {
    /// `custom_message {customType, content, details?, display}`: an extension's message,
    /// sent to the model.
    pub struct CustomMessageEntry {
        /// The entry's id, unique in its session file.
        req id: String = "id",
        /// The entry before it on its branch (`null` for the first).
        req parent_id: Option<String> = "parentId",
        /// When it was added, ISO 8601.
        req timestamp: String = "timestamp",
        /// Whose message it is.
        req custom_type: String = "customType",
        /// A string, or text and image blocks.
        req content: MessageContent = "content",
        /// Its details, as sent.
        opt details: Value = "details",
        /// Whether a UI shows it.
        opt display: bool = "display",
    }
}

wire_struct! {
    /// `label {targetId, label}`: a name for an entry (`label` absent or null removes it).
    pub struct LabelEntry {
        /// The entry's id, unique in its session file.
        req id: String = "id",
        /// The entry before it on its branch (`null` for the first).
        req parent_id: Option<String> = "parentId",
        /// When it was added, ISO 8601.
        req timestamp: String = "timestamp",
        /// The entry named.
        req target_id: String = "targetId",
        /// The name; absent or null: the entry's name is removed.
        opt label: String = "label",
    }
}

wire_struct! {
    /// `session_info {name?}`: the session's name.
    pub struct SessionInfoEntry {
        /// The entry's id, unique in its session file.
        req id: String = "id",
        /// The entry before it on its branch (`null` for the first).
        req parent_id: Option<String> = "parentId",
        /// When it was added, ISO 8601.
        req timestamp: String = "timestamp",
        /// The session's display name (absent: the name was cleared).
        opt name: String = "name",
    }
}

wire_enum! {
    /// One entry of a session file after its header, tagged by `type`.
    pub enum SessionEntry tag "type" {
        /// A history message.
        "message" => Message(Box<MessageEntry>),
        /// The model changed.
        "model_change" => ModelChange(ModelChangeEntry),
        /// The thinking level changed.
        "thinking_level_change" => ThinkingLevelChange(ThinkingLevelChangeEntry),
        /// The context was compacted.
        "compaction" => Compaction(Box<CompactionEntry>),
        /// The session moved off a branch.
        "branch_summary" => BranchSummary(Box<BranchSummaryEntry>),
        /// An extension's state.
        "custom" => Custom(CustomEntry),
        /// An extension's message.
        "custom_message" => CustomMessage(Box<CustomMessageEntry>),
        /// A name for an entry.
        "label" => Label(LabelEntry),
        /// The session's name.
        "session_info" => SessionInfo(SessionInfoEntry),
    }
}

boxed_hooks!(
    MessageEntry,
    CompactionEntry,
    BranchSummaryEntry,
    CustomMessageEntry
);

impl SessionEntry {
    /// The entry's id (`None` for an unknown entry without a string `id`).
    pub fn id(&self) -> Option<&str> {
        self.common().map(|(id, _)| id)
    }

    /// The entry before it on its branch: `Some(None)` for a first entry, `None` for an
    /// unknown entry without a `parentId` string or null.
    pub fn parent_id(&self) -> Option<Option<&str>> {
        self.common().map(|(_, parent)| parent)
    }

    fn common(&self) -> Option<(&str, Option<&str>)> {
        let (id, parent) = match self {
            SessionEntry::Message(e) => (&e.id, &e.parent_id),
            SessionEntry::ModelChange(e) => (&e.id, &e.parent_id),
            SessionEntry::ThinkingLevelChange(e) => (&e.id, &e.parent_id),
            SessionEntry::Compaction(e) => (&e.id, &e.parent_id),
            SessionEntry::BranchSummary(e) => (&e.id, &e.parent_id),
            SessionEntry::Custom(e) => (&e.id, &e.parent_id),
            SessionEntry::CustomMessage(e) => (&e.id, &e.parent_id),
            SessionEntry::Label(e) => (&e.id, &e.parent_id),
            SessionEntry::SessionInfo(e) => (&e.id, &e.parent_id),
            SessionEntry::Unknown(value) => {
                let id = value.get("id")?.as_str()?;
                let parent = match value.get("parentId")? {
                    Value::Null => None,
                    Value::String(parent) => Some(parent.as_str()),
                    _ => return None,
                };
                return Some((id, parent));
            }
        };
        Some((id.as_str(), parent.as_deref()))
    }
}
