//! The tool-output spill policy (SPILL-01..05, seed `002_291f022216ca153c.txt`), pure.
//!
//! A final tool result whose text is larger than `maxInlineBytes` is saved whole through a
//! spill store and reaches the model as a head/tail preview plus a notice saying where the
//! whole text is:
//!
//! ```text
//! <head>
//! …
//! <tail>
//!
//! (Omitted N bytes. Full formatted result stored at: LOCATOR. RETRIEVAL_HINT)
//! ```
//!
//! The save is an action: [`plan`] either settles the result at once ([`Decision::Settled`])
//! or asks for a [`SpillWrite`] ([`Decision::Save`]); the driver performs the write with its
//! store (`musewire-store` for the local one) and answers the [`PendingSpill`] with the
//! store's [`SpillRef`] or a [`SaveFailure`]; [`PendingSpill::complete`] then gives the
//! result to send on. Nothing here reads a clock, touches a file or draws a random number.
//!
//! ## Where spill sits relative to [`crate::blocks`]
//!
//! [`crate::blocks`] is the *formatting* stage: it turns a tool's raw content (MCP blocks,
//! module data) into the content the model reads. Spill is the *budget* stage after it: it
//! sees only the final [`ToolResult`] (content blocks as [`musewire_wire`] types them), the
//! one that would go to the model and the history, and never looks inside blocks. A result
//! with any block that is not text (an image, for one, even one that `blocks` sent
//! natively) passes unchanged (SPILL-02). So the spill file holds exactly the formatted text
//! the model would have read, never the tool's raw data (as the seed says: "the full
//! formatted result the tool returned").
//!
//! ## Decisions written down (ours, see `conformance/RULES.md` SPILL-07)
//!
//! * The text of an all-text result is its text blocks joined by `\n` (as the stored copy of
//!   [`crate::blocks`] joins them); its size is that string's UTF-8 length.
//! * The *preview* is everything before the blank line that precedes the notice; it is at
//!   most `maxInlineBytes` bytes, cut marker included. With a cap of at least
//!   5 bytes (the cut marker `\n…\n`) it is head, marker and tail, the head taking half of the
//!   bytes left after the mark (rounded down to a character boundary) and the tail the rest
//!   (rounded up to a character boundary); with a smaller cap it is the head alone. The
//!   notice's `N` is the number of bytes of the text that the preview does not show.
//! * The settled result is one text block `preview + "\n\n" + notice` (the notice alone
//!   when the preview is empty); `details`, `isError` and unknown members are kept.
//! * A store whose reported `bytes` differ from the text's length is treated as a failed
//!   save: the original result goes on.
//!
//! ```
//! use musewire_core::spill::{plan, Decision, SpillOwner, SpillPolicy, SpillRef, SpillSource};
//! use musewire_wire::{ContentBlock, ToolResult};
//!
//! let policy = SpillPolicy { max_inline_bytes: Some(16), has_store: true };
//! let result = ToolResult { content: vec![ContentBlock::text("0123456789".repeat(4))], ..Default::default() };
//! let source = SpillSource::new("bash", "call-1", "Bash");
//! let owner = Some(SpillOwner::new("session-a"));
//! let Decision::Save(pending) = plan(&policy, result, source, owner) else { panic!() };
//! assert_eq!(pending.write.content.len(), 40);
//! // The driver saves `pending.write` and answers:
//! let saved = SpillRef {
//!     locator: "/tmp/s/ab-bash-call-1.txt".into(),
//!     bytes: 40,
//!     retrieval_hint: "Use read with offset/limit, or grep this path to search within it.".into(),
//! };
//! let settled = pending.complete(Ok(saved));
//! assert_eq!(
//!     settled.result.content[0].as_text().unwrap(),
//!     "01234\n…\n456789\n\n(Omitted 29 bytes. Full formatted result stored at: \
//!      /tmp/s/ab-bash-call-1.txt. Use read with offset/limit, or grep this path to search within it.)"
//! );
//! ```

#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod saves;

pub use saves::Saves;

use serde::{Deserialize, Serialize};

use crate::output::StoredOutput;
use crate::wire::{ContentBlock, TextContent, ToolResult};

/// Tools whose results are never spilled (SPILL-04): spilling `read` would loop
/// read → spill file → read again.
pub(crate) const NEVER_SPILLED: &[&str] = &["read"];

/// The line that marks where the preview's head ends and its tail begins (counted within
/// the cap).
pub(crate) const CUT_MARK: &str = "\n…\n";

/// Put between the preview and the notice (not counted within the cap).
pub(crate) const NOTICE_SEPARATOR: &str = "\n\n";

/// How the policy is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpillPolicy {
    /// The largest text, in UTF-8 bytes, that goes inline; `None`: the policy does nothing
    /// (SPILL-01).
    pub max_inline_bytes: Option<usize>,
    /// Whether a spill store is there to save to (SPILL-05).
    pub has_store: bool,
}

/// The save-time storage namespace: the session the call belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpillOwner {
    /// The owner session's id.
    pub session_id: String,
}

impl SpillOwner {
    /// An owner.
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
        }
    }
}

/// Which call a spilled result came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpillSource {
    /// The tool's name.
    pub tool_name: String,
    /// The tool call's id.
    pub call_id: String,
    /// A label for people (the tool's label, or its name).
    pub label: String,
}

impl SpillSource {
    /// A source.
    pub fn new(
        tool_name: impl Into<String>,
        call_id: impl Into<String>,
        label: impl Into<String>,
    ) -> Self {
        Self {
            tool_name: tool_name.into(),
            call_id: call_id.into(),
            label: label.into(),
        }
    }

    /// The name the store is asked to use: `TOOL-CALL.txt` (the store makes it one safe
    /// path segment).
    pub(crate) fn suggested_name(&self) -> String {
        format!("{}-{}.txt", self.tool_name, self.call_id)
    }
}

/// A spill write a core asked its driver for (SPILL-03): the agent for its tools' results,
/// the client for the host's; the driver answers with the same id. A counter, so runs are
/// reproducible; in actions and transcripts `spill-N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SpillId(pub u64);

impl SpillId {
    /// The id as actions and transcripts write it.
    pub fn wire(self) -> String {
        format!("spill-{}", self.0)
    }

    /// The id `id` names, when it is one [`SpillId::wire`] writes.
    pub fn from_wire(id: &str) -> Option<Self> {
        let n: u64 = id.strip_prefix("spill-")?.parse().ok()?;
        (Self(n).wire() == id).then_some(Self(n))
    }
}

impl Serialize for SpillId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.wire())
    }
}

/// The action: save `content` for `owner` (the seed's `SaveTextSpill`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpillWrite {
    /// The owner session.
    pub owner: SpillOwner,
    /// Where the text came from.
    pub source: SpillSource,
    /// A name for the stored text, before the store makes it safe.
    pub suggested_name: String,
    /// The full text.
    pub content: String,
}

/// A store's answer to a save: an opaque locator and how to read it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpillRef {
    /// Where the text is (the local store: its path), opaque to the policy.
    pub locator: String,
    /// How many bytes were stored.
    pub bytes: u64,
    /// One sentence telling the model how to read the locator.
    pub retrieval_hint: String,
}

/// A store's whole answer to a save: the [`SpillRef`] for the policy and the stored
/// output's metadata for reads (OUT-02). `musewire-store`'s `LocalStore::save` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Saved {
    /// For [`PendingSpill::complete`].
    pub spill_ref: SpillRef,
    /// The stored output: session, item (the call id), reference, length, media type.
    pub output: crate::output::StoredOutput,
}

/// A save that did not happen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{reason}")]
pub struct SaveFailure {
    /// Why, for the log.
    pub reason: String,
}

impl SaveFailure {
    /// A failure.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }

    /// The answer of a driver with no spill store (SPILL-05: the original result goes on).
    pub fn no_store() -> Self {
        Self::new("no spill store")
    }
}

/// Why a result went on unchanged. The failures ([`KeptInline::is_failure`]) are the ones
/// to log (SPILL-05).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "kept", rename_all = "camelCase")]
pub enum KeptInline {
    /// No `maxInlineBytes` (SPILL-01).
    #[error("no maxInlineBytes: the spill policy is off")]
    Disabled,
    /// The tool is never spilled (SPILL-04).
    #[error("results of this tool are never spilled")]
    NeverSpilled,
    /// A block is not text (SPILL-02).
    #[error("the result has a block that is not text")]
    NotAllText,
    /// At or under the cap (SPILL-02).
    #[error("the result is within maxInlineBytes")]
    WithinCap,
    /// The call has no owner session (SPILL-05).
    #[error("spill skipped: the call has no owner session")]
    NoOwner,
    /// No store to save to (SPILL-05).
    #[error("spill skipped: no spill store")]
    NoStore,
    /// The store failed (SPILL-05).
    #[error("spill save failed: {reason}")]
    SaveFailed {
        /// The store's reason.
        reason: String,
    },
    /// The store reported another size than the text's (SPILL-05, ours).
    #[error("spill save reported {reported} bytes for a {expected}-byte text")]
    SizeMismatch {
        /// The text's UTF-8 length.
        expected: u64,
        /// What the store said it wrote.
        reported: u64,
    },
}

impl KeptInline {
    /// Whether the result was kept because a spill could not happen (to be logged).
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            KeptInline::NoOwner
                | KeptInline::NoStore
                | KeptInline::SaveFailed { .. }
                | KeptInline::SizeMismatch { .. }
        )
    }
}

/// What happened to a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// Replaced by a preview; the whole text is at the reference.
    Spilled(SpillRef),
    /// Unchanged, and why.
    Kept(KeptInline),
}

/// A result ready to go on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settled {
    /// The result to send on (to the model and the history).
    pub result: ToolResult,
    /// What the policy did.
    pub outcome: Outcome,
}

/// The policy's answer for a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Decision {
    /// Send this on now.
    Settled(Settled),
    /// Perform the write, then [`PendingSpill::complete`].
    Save(PendingSpill),
}

/// A spill waiting for its save. It keeps the result's other parts and the length of each
/// text block, not a second copy of the text: the original result is rebuilt from
/// `write.content` when the save fails.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingSpill {
    /// The action to perform.
    pub write: SpillWrite,
    /// The original result with every text block's text emptied.
    skeleton: ToolResult,
    /// The byte length of each text block's text, in order.
    lengths: Vec<usize>,
    /// The `maxInlineBytes` the result was measured against (SPILL-02, SPILL-07).
    max_inline_bytes: usize,
}

/// Decides what happens to a final tool result (SPILL-01..05): settled at once, or saved
/// first.
pub fn plan(
    policy: &SpillPolicy,
    result: ToolResult,
    source: SpillSource,
    owner: Option<SpillOwner>,
) -> Decision {
    let kept = |result, why| {
        Decision::Settled(Settled {
            result,
            outcome: Outcome::Kept(why),
        })
    };
    // SPILL-01
    let Some(cap) = policy.max_inline_bytes else {
        return kept(result, KeptInline::Disabled);
    };
    // SPILL-04
    if NEVER_SPILLED.contains(&source.tool_name.as_str()) {
        return kept(result, KeptInline::NeverSpilled);
    }
    // SPILL-02
    if !result
        .content
        .iter()
        .all(|block| matches!(block, ContentBlock::Text(_)))
    {
        return kept(result, KeptInline::NotAllText);
    }
    if text_len(&result) <= cap {
        return kept(result, KeptInline::WithinCap);
    }
    // SPILL-05
    let owner = match owner {
        Some(owner) if !owner.session_id.is_empty() => owner,
        _ => return kept(result, KeptInline::NoOwner),
    };
    if !policy.has_store {
        return kept(result, KeptInline::NoStore);
    }
    // SPILL-03
    let mut skeleton = result;
    let mut content = String::new();
    let mut lengths = Vec::with_capacity(skeleton.content.len());
    for (i, block) in skeleton.content.iter_mut().enumerate() {
        if let ContentBlock::Text(text) = block {
            if i > 0 {
                content.push('\n');
            }
            lengths.push(text.text.len());
            content.push_str(&text.text);
            text.text = String::new();
        }
    }
    Decision::Save(PendingSpill {
        write: SpillWrite {
            owner,
            suggested_name: source.suggested_name(),
            source,
            content,
        },
        skeleton,
        lengths,
        max_inline_bytes: cap,
    })
}

impl PendingSpill {
    /// The result to send on once the store answered (SPILL-03, SPILL-05): the preview and
    /// notice when saved, the original result when not.
    pub fn complete(self, saved: Result<SpillRef, SaveFailure>) -> Settled {
        complete(self, saved)
    }

    /// As [`PendingSpill::complete`], with the store's whole answer: a record naming another
    /// session, item (the call id) or length than the write's is a failed save (SPILL-05,
    /// ours). The stored output comes back only when the result was spilled, for the reads
    /// of an agent that serves them (OUT-02).
    pub fn settle(self, saved: Result<Saved, SaveFailure>) -> (Settled, Option<StoredOutput>) {
        let write = &self.write;
        let (spill_ref, output) = match saved {
            Ok(Saved { spill_ref, output })
                if output.session_id == write.owner.session_id
                    && output.item_id == write.source.call_id
                    && output.byte_len == spill_ref.bytes =>
            {
                (Ok(spill_ref), Some(output))
            }
            Ok(_) => (
                Err(SaveFailure::new(
                    "the store's record names another session, item or length",
                )),
                None,
            ),
            Err(failure) => (Err(failure), None),
        };
        let settled = self.complete(spill_ref);
        let output = output.filter(|_| matches!(settled.outcome, Outcome::Spilled(_)));
        (settled, output)
    }
}

/// The result to send on once the store answered: see [`PendingSpill::complete`].
pub fn complete(pending: PendingSpill, saved: Result<SpillRef, SaveFailure>) -> Settled {
    let expected = pending.write.content.len() as u64;
    let why = match saved {
        Ok(saved) if saved.bytes == expected => {
            let text = spilled_text(&pending.write.content, pending.max_inline_bytes, &saved);
            let mut result = pending.skeleton;
            result.content = vec![ContentBlock::text(text)];
            return Settled {
                result,
                outcome: Outcome::Spilled(saved),
            };
        }
        Ok(saved) => KeptInline::SizeMismatch {
            expected,
            reported: saved.bytes,
        },
        Err(failure) => KeptInline::SaveFailed {
            reason: failure.reason,
        },
    };
    Settled {
        result: pending.restore(),
        outcome: Outcome::Kept(why),
    }
}

impl PendingSpill {
    /// The original result, rebuilt from the skeleton and the text.
    fn restore(self) -> ToolResult {
        let PendingSpill {
            write,
            mut skeleton,
            lengths,
            ..
        } = self;
        let mut at = 0usize;
        let mut lengths = lengths.into_iter();
        for (i, block) in skeleton.content.iter_mut().enumerate() {
            if let ContentBlock::Text(TextContent { text, .. }) = block {
                if i > 0 {
                    at += 1; // the '\n' joining blocks
                }
                let len = lengths.next().unwrap_or(0);
                // Lengths were taken from these very blocks: the range is in bounds and on
                // character boundaries; `get` keeps a corrupted (deserialised) one from
                // panicking.
                *text = write.content.get(at..at + len).unwrap_or("").to_owned();
                at += len;
            }
        }
        skeleton
    }
}

/// The UTF-8 length of an all-text result's text (blocks joined by `\n`).
pub(crate) fn text_len(result: &ToolResult) -> usize {
    let texts: usize = result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(str::len)
        .sum();
    texts + result.content.len().saturating_sub(1)
}

/// A head/tail preview of a text (SPILL-03).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preview<'a> {
    /// The text's first bytes.
    pub head: &'a str,
    /// The text's last bytes (empty when the cap is under the cut marker's 5 bytes).
    pub tail: &'a str,
    /// Whether the cut marker (`\n…\n`) goes between them.
    pub marked: bool,
}

impl Preview<'_> {
    /// The bytes of the text the preview doesn't show, for a text of `total` bytes.
    pub(crate) fn omitted(&self, total: usize) -> usize {
        total - self.head.len() - self.tail.len()
    }

    /// The preview's text: at most the cap's bytes.
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(self.head.len() + CUT_MARK.len() + self.tail.len());
        out.push_str(self.head);
        if self.marked {
            out.push_str(CUT_MARK);
        }
        out.push_str(self.tail);
        out
    }
}

/// The head/tail preview of a text larger than `cap` bytes, cut on character boundaries
/// within `cap` bytes (cut mark included). A text within the cap is its own head.
pub fn preview(text: &str, cap: usize) -> Preview<'_> {
    if text.len() <= cap {
        return Preview {
            head: text,
            tail: "",
            marked: false,
        };
    }
    if cap < CUT_MARK.len() {
        return Preview {
            head: &text[..floor_boundary(text, cap)],
            tail: "",
            marked: false,
        };
    }
    let budget = cap - CUT_MARK.len();
    let head = &text[..floor_boundary(text, budget / 2)];
    let tail_budget = budget - head.len();
    let tail = &text[ceil_boundary(text, text.len() - tail_budget)..];
    Preview {
        head,
        tail,
        marked: true,
    }
}

/// The notice after a preview (SPILL-03).
pub fn notice(omitted: usize, saved: &SpillRef) -> String {
    format!(
        "(Omitted {omitted} bytes. Full formatted result stored at: {}. {})",
        saved.locator, saved.retrieval_hint
    )
}

/// The model-facing text of a spilled result: preview, a blank line, the notice.
pub fn spilled_text(text: &str, cap: usize, saved: &SpillRef) -> String {
    let preview = preview(text, cap);
    let notice = notice(preview.omitted(text.len()), saved);
    let mut out = preview.text();
    if !out.is_empty() {
        out.push_str(NOTICE_SEPARATOR);
    }
    out.push_str(&notice);
    out
}

/// The largest character boundary at or below `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest character boundary at or above `at`.
fn ceil_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spill_03_preview_boundaries() {
        // 'é' is two bytes: a cut never splits it.
        let text = "éééééééééé"; // 20 bytes
        let p = preview(text, 10);
        assert!(p.text().len() <= 10);
        assert_eq!(p.head, "é"); // budget 5 → head ≤ 2
        assert_eq!(p.tail, "é"); // 3 left → tail ≤ 3 → 2
        assert_eq!(p.omitted(text.len()), 16);
        let p = preview(text, 3);
        assert_eq!((p.head, p.tail, p.marked), ("é", "", false));
        let p = preview(text, 0);
        assert_eq!(p.text(), "");
    }
}
