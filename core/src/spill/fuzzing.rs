//! The fuzz body for the spill policy (feature `fuzzing`): `fuzz/fuzz_targets/spill_policy.rs`
//! is a thin wrapper, and `core/tests/fuzz_bodies/spill_output.rs` runs it on seeds.
//!
//! From the input it builds a tool result (text and image blocks), a cap, a tool name, an
//! owner and a store answer, and checks (SPILL-01..05):
//! - nothing panics;
//! - a result that is not spilled goes on exactly as it came;
//! - a spilled one is one text block: a preview of at most the cap's bytes (a prefix of the
//!   text, the cut mark, a suffix, cut on character boundaries), a blank line and the exact
//!   notice, whose `N` is the bytes the preview does not show;
//! - a failed or mis-sized save gives back the original result.

use arbitrary::{Arbitrary, Unstructured};

use super::{
    complete, notice, plan, text_len, Decision, KeptInline, Outcome, SaveFailure, SpillOwner,
    SpillPolicy, SpillRef, SpillSource, CUT_MARK, NOTICE_SEPARATOR,
};
use crate::wire::{ContentBlock, ToolResult};

#[derive(Debug, Arbitrary)]
struct Input {
    texts: Vec<String>,
    cap: u16,
    /// Which one thing is off, if any: 0 no cap, 1 the `read` tool, 2 an image block, 3 no
    /// owner, 4 an empty owner, 5 no store; otherwise all on.
    off: u8,
    answer: Answer,
    is_error: bool,
}

#[derive(Debug, Arbitrary)]
enum Answer {
    Saved { locator: String, hint: String },
    Missized { locator: String, delta: u8 },
    Failed(String),
}

/// Runs one input. Panics when an invariant breaks.
pub fn spill_policy(data: &[u8]) {
    let Ok(input) = Input::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    let off = input.off % 8;
    let mut content: Vec<ContentBlock> = input.texts.into_iter().map(ContentBlock::text).collect();
    if off == 2 {
        content.insert(content.len() / 2, ContentBlock::image("AAAA", "image/png"));
    }
    let original = ToolResult {
        content,
        is_error: input.is_error.then_some(true),
        ..Default::default()
    };
    // A cap near the text's size, so that both sides of it are reached.
    let reach = text_len(&original) + 2 * CUT_MARK.len() + 1;
    let cap = (off != 0).then_some(usize::from(input.cap) % reach);
    let owner = match off {
        3 => None,
        4 => Some(SpillOwner::new("")),
        _ => Some(SpillOwner::new("s")),
    };
    let policy = SpillPolicy {
        max_inline_bytes: cap,
        has_store: off != 5,
    };
    let tool = if off == 1 { "read" } else { "bash" };
    let decision = plan(
        &policy,
        original.clone(),
        SpillSource::new(tool, "c1", tool),
        owner,
    );
    let pending = match decision {
        Decision::Settled(settled) => {
            assert_eq!(settled.result, original);
            assert!(matches!(settled.outcome, Outcome::Kept(_)));
            return;
        }
        Decision::Save(pending) => pending,
    };
    let cap = cap.expect("a save needs a cap");
    assert!(off > 5, "saved with {off} off");
    assert_ne!(tool, "read");
    assert!(original.content.iter().all(|b| b.as_text().is_some()));
    let text = pending.write.content.clone();
    assert_eq!(text.len(), text_len(&original));
    assert!(text.len() > cap);
    let bytes = text.len() as u64;
    let (answer, saved) = match input.answer {
        Answer::Saved { locator, hint } => {
            let saved = SpillRef {
                locator,
                bytes,
                retrieval_hint: hint,
            };
            (Ok(saved.clone()), Some(saved))
        }
        Answer::Missized { locator, delta } => (
            Ok(SpillRef {
                locator,
                bytes: bytes.wrapping_add(u64::from(delta) + 1),
                retrieval_hint: String::new(),
            }),
            None,
        ),
        Answer::Failed(reason) => (Err(SaveFailure::new(reason)), None),
    };
    let settled = complete(pending, answer);
    let Some(saved) = saved else {
        assert_eq!(settled.result, original);
        let Outcome::Kept(why) = settled.outcome else {
            panic!("a failed save spilled")
        };
        assert!(why.is_failure());
        assert!(matches!(
            why,
            KeptInline::SaveFailed { .. } | KeptInline::SizeMismatch { .. }
        ));
        return;
    };
    assert_eq!(settled.outcome, Outcome::Spilled(saved.clone()));
    assert_eq!(settled.result.is_error, original.is_error);
    assert_eq!(settled.result.content.len(), 1);
    let shown = settled.result.content[0].as_text().expect("a text block");
    // Find the preview: the notice is the exact suffix, for some N.
    let (preview, omitted) = split_notice(shown, &saved);
    assert!(
        preview.len() <= cap,
        "preview {} > cap {cap}",
        preview.len()
    );
    let (head, tail) = match preview.find(CUT_MARK) {
        Some(_) if cap >= CUT_MARK.len() => {
            // The head is a prefix of the text, so the first mark after it is the cut.
            let mut found = None;
            for (at, _) in preview.match_indices(CUT_MARK) {
                let (head, rest) = (&preview[..at], &preview[at + CUT_MARK.len()..]);
                if text.starts_with(head) && text.ends_with(rest) {
                    found = Some((head, rest));
                    break;
                }
            }
            found.expect("head + mark + tail")
        }
        _ => (preview, ""),
    };
    assert!(text.starts_with(head) && text.ends_with(tail));
    assert!(head.len() + tail.len() < text.len());
    assert_eq!(omitted, text.len() - head.len() - tail.len());
}

/// Splits a spilled text into its preview and the `N` of its notice, checking the notice is
/// exact.
fn split_notice<'a>(shown: &'a str, saved: &SpillRef) -> (&'a str, usize) {
    let end = format!(
        " bytes. Full formatted result stored at: {}. {})",
        saved.locator, saved.retrieval_hint
    );
    let before = shown.strip_suffix(&end).expect("the notice's end");
    let digits = before.len() - before.bytes().rev().take_while(u8::is_ascii_digit).count();
    let omitted: usize = before[digits..].parse().expect("N");
    let before = before[..digits]
        .strip_suffix("(Omitted ")
        .expect("the notice's start");
    assert_eq!(&shown[before.len()..], notice(omitted, saved));
    if before.is_empty() {
        return (before, omitted);
    }
    let preview = before
        .strip_suffix(NOTICE_SEPARATOR)
        .expect("a blank line before the notice");
    assert!(!preview.is_empty());
    (preview, omitted)
}
