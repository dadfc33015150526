//! The fuzz body for paging (feature `fuzzing`): `fuzz/fuzz_targets/paging_cursor.rs` is a
//! thin wrapper, and `core/tests/fuzz_bodies/agent.rs` runs it on seeds.
//!
//! From the input it reads a cursor text, a snapshot, a history of message sizes, a limit and
//! a mutation, and checks:
//! - decoding any text never panics, and a decoded cursor's offset is within its count;
//! - a cursor built from arbitrary fields decodes to itself when it is within the limits;
//! - a walk over the history with the limit returns every message exactly once, in order,
//!   every page within the limit and the byte budget (or a single message);
//! - a mutated cursor is refused (invalid or stale) or names a page within the history:
//!   never a panic.

use arbitrary::{Arbitrary, Unstructured};
use serde_json::{json, Value};

use super::{build_page, Cursor, PageError, PageOptions, Snapshot, MAX_PAGE_BYTES};

#[derive(Debug, Arbitrary)]
struct Input {
    text: String,
    session_id: String,
    leaf_id: Option<String>,
    sizes: Vec<u16>,
    big: Option<u8>,
    limit: u16,
    message_count: u64,
    offset: u64,
    flip_at: u16,
    flip_to: u8,
}

/// Runs one input. Panics when an invariant breaks.
pub fn paging_cursor(data: &[u8]) {
    let Ok(input) = Input::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    if let Ok(cursor) = Cursor::decode(&input.text) {
        assert!(cursor.offset <= cursor.message_count);
    }
    let built = Cursor {
        session_id: input.session_id.clone(),
        leaf_id: input.leaf_id.clone(),
        message_count: input.message_count,
        offset: input.offset,
    };
    let text = built.encode();
    match Cursor::decode(&text) {
        Ok(decoded) => assert_eq!(decoded, built),
        Err(error) => assert_eq!(error, PageError::InvalidCursor),
    }

    let session_id = if input.session_id.is_empty() {
        "s"
    } else {
        &input.session_id
    };
    let leaf_id = input.leaf_id.as_deref().filter(|l| !l.is_empty());
    let snapshot = Snapshot {
        session_id,
        leaf_id,
    };
    let mut messages: Vec<Value> = input
        .sizes
        .iter()
        .take(600)
        .map(|&n| json!({"role": "user", "content": "x".repeat(usize::from(n) % 4096)}))
        .collect();
    if let Some(at) = input.big {
        let at = usize::from(at) % (messages.len() + 1);
        messages.insert(
            at,
            json!({"role": "assistant", "content": "y".repeat(MAX_PAGE_BYTES)}),
        );
    }
    walk(&messages, &snapshot, u64::from(input.limit) % 258, &input);
}

fn walk(messages: &[Value], snapshot: &Snapshot<'_>, limit: u64, input: &Input) {
    let mut options = PageOptions {
        cursor: None,
        limit: Some(json!(limit)),
    };
    let mut seen = 0;
    loop {
        let page = match build_page(messages, snapshot, &options) {
            Ok(page) => page,
            Err(error) => {
                assert!(!(1..=256).contains(&limit), "{error}");
                assert_eq!(error, PageError::LimitOutOfRange);
                return;
            }
        };
        assert_eq!(page.start, seen, "pages follow each other");
        assert!(page.end > page.start || messages.is_empty());
        assert!(page.end - page.start <= limit as usize);
        let bytes: usize = messages[page.range()]
            .iter()
            .map(|m| serde_json::to_vec(m).unwrap().len() + 1)
            .sum::<usize>()
            + 1;
        assert!(page.end - page.start == 1 || bytes <= MAX_PAGE_BYTES);
        assert_eq!(page.total_messages, messages.len());
        seen = page.end;
        let Some(cursor) = page.next_cursor else {
            break;
        };
        // A mutation of the cursor: refused, or a page within the history.
        let mut mutated = cursor.clone().into_bytes();
        let at = usize::from(input.flip_at) % mutated.len();
        mutated[at] = input.flip_to;
        if let Ok(text) = String::from_utf8(mutated) {
            if text != cursor {
                let probe = PageOptions {
                    cursor: Some(Value::String(text)),
                    limit: options.limit.clone(),
                };
                match build_page(messages, snapshot, &probe) {
                    Ok(page) => assert!(page.end <= messages.len()),
                    Err(error) => assert!(matches!(
                        error,
                        PageError::InvalidCursor | PageError::StaleCursor
                    )),
                }
            }
        }
        options.cursor = Some(Value::String(cursor));
    }
    assert_eq!(seen, messages.len(), "every message exactly once");
}
