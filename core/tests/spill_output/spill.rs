//! The spill policy (SPILL-01..05, seed 002): `cargo test -p musewire-core --test spill`.

use musewire_core::spill::{
    plan, preview, Decision, KeptInline, Outcome, PendingSpill, SaveFailure, Settled, SpillOwner,
    SpillPolicy, SpillRef, SpillSource,
};
use musewire_wire::{ContentBlock, TextContent, ToolResult};
use proptest::prelude::*;
use serde_json::json;

/// The marker a cut preview carries between its head and tail, pinned by value.
const CUT_MARK: &str = "\n…\n";

const HINT: &str = "Use read with offset/limit, or grep this path to search within it.";

fn policy(cap: Option<usize>) -> SpillPolicy {
    SpillPolicy {
        max_inline_bytes: cap,
        has_store: true,
    }
}

fn text_result(text: &str) -> ToolResult {
    ToolResult {
        content: vec![ContentBlock::text(text)],
        ..Default::default()
    }
}

fn bash() -> SpillSource {
    SpillSource::new("bash", "call-7", "Bash")
}

fn owner() -> Option<SpillOwner> {
    Some(SpillOwner::new("sess-1"))
}

fn saved(locator: &str, bytes: usize) -> SpillRef {
    SpillRef {
        locator: locator.into(),
        bytes: bytes as u64,
        retrieval_hint: HINT.into(),
    }
}

fn settled(decision: Decision) -> Settled {
    match decision {
        Decision::Settled(settled) => settled,
        Decision::Save(pending) => panic!("expected no save, got {:?}", pending.write),
    }
}

fn pending(decision: Decision) -> PendingSpill {
    match decision {
        Decision::Save(pending) => pending,
        Decision::Settled(settled) => panic!("expected a save, got {settled:?}"),
    }
}

#[test]
fn spill_01_no_max_inline_bytes_is_a_no_op() {
    let result = text_result(&"x".repeat(10_000_000));
    let settled = settled(plan(&policy(None), result.clone(), bash(), owner()));
    assert_eq!(settled.result, result);
    assert_eq!(settled.outcome, Outcome::Kept(KeptInline::Disabled));
}

#[test]
fn spill_02_at_or_under_the_cap_in_utf8_bytes_passes_unchanged() {
    // Five 'é' are five characters but ten bytes: the cap counts bytes.
    let result = text_result("ééééé");
    let at = settled(plan(&policy(Some(10)), result.clone(), bash(), owner()));
    assert_eq!(at.result, result);
    assert_eq!(at.outcome, Outcome::Kept(KeptInline::WithinCap));
    let over = pending(plan(&policy(Some(9)), result, bash(), owner()));
    assert_eq!(over.write.content, "ééééé");
}

#[test]
fn spill_02_a_result_with_a_non_text_block_passes_unchanged() {
    let result = ToolResult {
        content: vec![
            ContentBlock::text("x".repeat(1000)),
            ContentBlock::image("AAAA", "image/png"),
        ],
        ..Default::default()
    };
    let settled = settled(plan(&policy(Some(10)), result.clone(), bash(), owner()));
    assert_eq!(settled.result, result);
    assert_eq!(settled.outcome, Outcome::Kept(KeptInline::NotAllText));
}

#[test]
fn spill_02_07_text_blocks_are_joined_by_a_newline_and_counted_with_it() {
    let result = ToolResult {
        content: vec![ContentBlock::text("abcd"), ContentBlock::text("efgh")],
        ..Default::default()
    };
    // 4 + 1 + 4 = 9 bytes.
    assert!(matches!(
        plan(&policy(Some(9)), result.clone(), bash(), owner()),
        Decision::Settled(_)
    ));
    let pending = pending(plan(&policy(Some(8)), result, bash(), owner()));
    assert_eq!(pending.write.content, "abcd\nefgh");
}

#[test]
fn spill_03_the_save_request_carries_owner_source_name_and_the_full_text() {
    let text = "line\n".repeat(100);
    let pending = pending(plan(&policy(Some(50)), text_result(&text), bash(), owner()));
    assert_eq!(
        serde_json::to_value(&pending.write).unwrap(),
        json!({
            "owner": {"sessionId": "sess-1"},
            "source": {"toolName": "bash", "callId": "call-7", "label": "Bash"},
            "suggestedName": "bash-call-7.txt",
            "content": text,
        })
    );
}

#[test]
fn spill_03_07_preview_and_the_exact_notice() {
    let text: String = (0..100).map(|i| format!("{i:02}")).collect(); // 200 bytes
    let pending = pending(plan(&policy(Some(25)), text_result(&text), bash(), owner()));
    let done = pending.complete(Ok(saved("/r/session-ab/0011-bash-call-7.txt", 200)));
    // Cap 25: mark 5, head 10, tail 10; 180 bytes omitted.
    assert_eq!(
        done.result.content,
        vec![ContentBlock::text(
            "0001020304\n…\n9596979899\n\n(Omitted 180 bytes. Full formatted result stored at: \
             /r/session-ab/0011-bash-call-7.txt. Use read with offset/limit, or grep this path to \
             search within it.)"
        )]
    );
    assert_eq!(
        done.outcome,
        Outcome::Spilled(saved("/r/session-ab/0011-bash-call-7.txt", 200))
    );
}

#[test]
fn spill_03_07_a_cap_under_the_cut_mark_keeps_a_head_only_and_zero_keeps_the_notice_only() {
    let text = "abcdefghij";
    let done = pending(plan(&policy(Some(3)), text_result(text), bash(), owner()))
        .complete(Ok(saved("L", 10)));
    assert_eq!(
        done.result.content[0].as_text().unwrap(),
        format!("abc\n\n(Omitted 7 bytes. Full formatted result stored at: L. {HINT})")
    );
    let done = pending(plan(&policy(Some(0)), text_result(text), bash(), owner()))
        .complete(Ok(saved("L", 10)));
    assert_eq!(
        done.result.content[0].as_text().unwrap(),
        format!("(Omitted 10 bytes. Full formatted result stored at: L. {HINT})")
    );
}

#[test]
fn spill_03_details_is_error_and_unknown_members_are_kept() {
    let mut result = text_result(&"y".repeat(100));
    result.details = Some(json!({"exitCode": 0}));
    result.is_error = Some(true);
    result.extra.insert("x-ours".into(), json!(1));
    let done =
        pending(plan(&policy(Some(10)), result, bash(), owner())).complete(Ok(saved("L", 100)));
    assert_eq!(done.result.details, Some(json!({"exitCode": 0})));
    assert_eq!(done.result.is_error, Some(true));
    assert_eq!(done.result.extra.get("x-ours"), Some(&json!(1)));
}

#[test]
fn spill_04_read_results_are_never_spilled() {
    let result = text_result(&"z".repeat(1000));
    let settled = settled(plan(
        &policy(Some(10)),
        result.clone(),
        SpillSource::new("read", "c", "Read"),
        owner(),
    ));
    assert_eq!(settled.result, result);
    assert_eq!(settled.outcome, Outcome::Kept(KeptInline::NeverSpilled));
}

#[test]
fn spill_05_no_owner_or_an_empty_one_keeps_the_result_and_says_why() {
    let result = text_result(&"z".repeat(1000));
    for owner in [None, Some(SpillOwner::new(""))] {
        let settled = settled(plan(&policy(Some(10)), result.clone(), bash(), owner));
        assert_eq!(settled.result, result);
        assert_eq!(settled.outcome, Outcome::Kept(KeptInline::NoOwner));
        assert!(matches!(&settled.outcome, Outcome::Kept(why) if why.is_failure()));
    }
}

#[test]
fn spill_05_no_store_keeps_the_result() {
    let result = text_result(&"z".repeat(1000));
    let no_store = SpillPolicy {
        max_inline_bytes: Some(10),
        has_store: false,
    };
    let settled = settled(plan(&no_store, result.clone(), bash(), owner()));
    assert_eq!(settled.result, result);
    assert_eq!(settled.outcome, Outcome::Kept(KeptInline::NoStore));
}

/// A result with several blocks, signatures and unknown members: a failed save must give it
/// back exactly.
fn rich_result() -> ToolResult {
    let mut first = TextContent {
        text: "héllo ".repeat(20),
        text_signature: Some("sig".into()),
        ..Default::default()
    };
    first.extra.insert("x-a".into(), json!([1, 2]));
    ToolResult {
        content: vec![
            ContentBlock::Text(first),
            ContentBlock::text(""),
            ContentBlock::text("wörld\n".repeat(30)),
        ],
        details: Some(json!({"k": "v"})),
        is_error: Some(false),
        ..Default::default()
    }
}

#[test]
fn spill_05_a_failed_save_gives_the_original_result_never_an_error() {
    let result = rich_result();
    let pending = pending(plan(&policy(Some(16)), result.clone(), bash(), owner()));
    let done = pending.complete(Err(SaveFailure::new(
        "No space left on device (os error 28)",
    )));
    assert_eq!(done.result, result);
    assert_eq!(done.result.is_error, Some(false));
    assert_eq!(
        done.outcome,
        Outcome::Kept(KeptInline::SaveFailed {
            reason: "No space left on device (os error 28)".into()
        })
    );
}

#[test]
fn spill_05_07_a_store_reporting_another_size_counts_as_failed() {
    let result = rich_result();
    let pending = pending(plan(&policy(Some(16)), result.clone(), bash(), owner()));
    let bytes = pending.write.content.len();
    let done = pending.complete(Ok(saved("L", bytes - 1)));
    assert_eq!(done.result, result);
    assert!(matches!(
        done.outcome,
        Outcome::Kept(KeptInline::SizeMismatch { .. })
    ));
}

#[test]
fn spill_03_a_pending_spill_survives_a_transcript_round_trip() {
    let result = rich_result();
    let pending = pending(plan(&policy(Some(16)), result.clone(), bash(), owner()));
    let json = serde_json::to_string(&pending).unwrap();
    let back: PendingSpill = serde_json::from_str(&json).unwrap();
    assert_eq!(back, pending);
    assert_eq!(back.complete(Err(SaveFailure::new("x"))).result, result);
}

proptest! {
    /// SPILL-03: the preview is within the cap, a prefix and a suffix of the text cut on
    /// character boundaries (slicing a `str` would panic otherwise), and N is exact.
    #[test]
    fn spill_03_07_preview_within_cap_on_char_boundaries(
        text in "(.|\n){0,300}",
        cap in 0usize..400,
    ) {
        let p = preview(&text, cap);
        let shown = p.text();
        prop_assert!(shown.len() <= cap || text.len() <= cap);
        prop_assert!(text.starts_with(p.head));
        prop_assert!(text.ends_with(p.tail));
        if text.len() > cap {
            prop_assert!(p.head.len() + p.tail.len() < text.len());
            prop_assert_eq!(p.marked, cap >= CUT_MARK.len());
            // The head is as long as its half allows, less at most one character.
            if p.marked {
                let half = (cap - CUT_MARK.len()) / 2;
                prop_assert!(p.head.len() <= half && half - p.head.len() < 4);
            }
        } else {
            prop_assert_eq!(shown, text);
        }
    }

    /// SPILL-03/05 on whole results: spilled text is preview + blank line + exact notice;
    /// a failed save restores the result exactly.
    #[test]
    fn spill_03_05_whole_results(
        texts in proptest::collection::vec("(.|\n){0,80}", 1..4),
        cap in 0usize..120,
        fail in any::<bool>(),
    ) {
        let result = ToolResult {
            content: texts.iter().map(ContentBlock::text).collect(),
            ..Default::default()
        };
        let joined = texts.join("\n");
        match plan(&policy(Some(cap)), result.clone(), bash(), owner()) {
            Decision::Settled(s) => {
                prop_assert!(joined.len() <= cap);
                prop_assert_eq!(s.result, result);
            }
            Decision::Save(pending) => {
                prop_assert!(joined.len() > cap);
                prop_assert_eq!(&pending.write.content, &joined);
                if fail {
                    let done = pending.complete(Err(SaveFailure::new("disk full")));
                    prop_assert_eq!(done.result, result);
                } else {
                    let done = pending.complete(Ok(saved("/s/x", joined.len())));
                    let p = preview(&joined, cap);
                    let notice = format!(
                        "(Omitted {} bytes. Full formatted result stored at: /s/x. {HINT})",
                        joined.len() - p.head.len() - p.tail.len()
                    );
                    let shown = done.result.content[0].as_text().unwrap().to_owned();
                    prop_assert!(shown.ends_with(&notice));
                    let before = &shown[..shown.len() - notice.len()];
                    let preview_text = before.strip_suffix("\n\n").unwrap_or(before);
                    prop_assert!(preview_text.len() <= cap);
                    prop_assert_eq!(preview_text, p.text());
                }
            }
        }
    }
}
