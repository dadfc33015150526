//! Message paging, agent side: PAGE-01..06 and PAGE-08, through the Agent and the pure
//! `paging` module, with property tests over histories and cursors.

use crate::common as agent_common;

use agent_common::*;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use musewire_core::agent::{AgentError, PageSource};
use musewire_core::paging::{build_page, Cursor, PageError, PageOptions, Snapshot, MAX_PAGE_BYTES};
use proptest::prelude::*;
use serde_json::{json, Value};

fn history(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"role": "user", "content": format!("m{i}")}))
        .collect()
}

const SNAPSHOT: Snapshot<'static> = Snapshot {
    session_id: "session-1",
    leaf_id: Some("leaf-1"),
};

fn options(cursor: Option<Value>, limit: Option<Value>) -> PageOptions {
    PageOptions { cursor, limit }
}

fn cursor_of(json: &str) -> Value {
    Value::String(URL_SAFE_NO_PAD.encode(json))
}

/// Asks one page through the Agent; returns the response frame.
fn ask(h: &mut Harness, command: Value, busy: bool, messages: &[Value]) -> Value {
    let (request, _) = h.command(&command.to_string());
    h.agent
        .respond_messages_page(
            h.now,
            request,
            PageSource {
                busy,
                session_id: "session-1",
                leaf_id: Some("leaf-1"),
                messages,
            },
        )
        .unwrap();
    h.one_frame()
}

#[test]
fn page_01_limit_defaults_to_100_and_must_be_1_to_256() {
    let messages = history(300);
    let page = build_page(&messages, &SNAPSHOT, &PageOptions::default()).unwrap();
    assert_eq!(page.range(), 0..100);
    let page = build_page(&messages, &SNAPSHOT, &options(None, Some(Value::Null))).unwrap();
    assert_eq!(page.range(), 0..100, "null is the default, as ?? reads it");
    for ok in [json!(1), json!(256), json!(5.0), json!(2e2)] {
        assert!(
            build_page(&messages, &SNAPSHOT, &options(None, Some(ok.clone()))).is_ok(),
            "{ok}"
        );
    }
    for bad in [
        json!(0),
        json!(257),
        json!(-1),
        json!(1.5),
        json!("5"),
        json!(true),
        json!([5]),
    ] {
        let error =
            build_page(&messages, &SNAPSHOT, &options(None, Some(bad.clone()))).unwrap_err();
        assert_eq!(error, PageError::LimitOutOfRange, "{bad}");
        assert_eq!(
            error.to_string(),
            "RPC message page limit must be between 1 and 256"
        );
    }
    let mut h = Harness::v2();
    let frame = ask(
        &mut h,
        json!({"id": "p", "type": "get_messages_page", "limit": 0}),
        false,
        &messages,
    );
    assert_eq!(
        frame,
        json!({"id": "p", "type": "response", "command": "get_messages_page", "success": false,
               "error": "RPC message page limit must be between 1 and 256"})
    );
    // An ill-typed limit still reaches the application as a get_messages_page.
    let (_, command) = h.command(r#"{"id":"q","type":"get_messages_page","limit":"5"}"#);
    let musewire_wire::Command::GetMessagesPage(args) = command else {
        panic!()
    };
    assert_eq!(args.extra["limit"], "5");
}

#[test]
fn page_02_a_page_holds_at_most_768_kib_and_at_least_one_message() {
    let big = |kib: usize| json!({"role": "tool", "content": "b".repeat(kib * 1024)});
    let messages = vec![big(300), big(300), big(300), big(900), big(10)];
    let pages: Vec<_> = walk(&messages, 256)
        .into_iter()
        .map(|(range, _)| range)
        .collect();
    assert_eq!(pages, [0..2, 2..3, 3..4, 4..5]);
    // The budget counts "[", "]" and the commas, as JSON.stringify of the array would.
    let exact = |n: usize| json!("x".repeat(n));
    let overhead = serde_json::to_vec(&exact(0)).unwrap().len();
    let half = (MAX_PAGE_BYTES - 3) / 2 - overhead;
    let fits = vec![
        exact(half),
        exact(MAX_PAGE_BYTES - 3 - overhead - half - overhead),
    ];
    assert_eq!(
        build_page(&fits, &SNAPSHOT, &PageOptions::default())
            .unwrap()
            .range(),
        0..2
    );
    let over = vec![
        exact(half),
        exact(MAX_PAGE_BYTES - 3 - overhead - half - overhead + 1),
    ];
    assert_eq!(
        build_page(&over, &SNAPSHOT, &PageOptions::default())
            .unwrap()
            .range(),
        0..1
    );
}

fn walk(messages: &[Value], limit: u64) -> Vec<(std::ops::Range<usize>, Option<String>)> {
    let mut out = Vec::new();
    let mut cursor = None;
    loop {
        let page = build_page(
            messages,
            &SNAPSHOT,
            &options(cursor.clone(), Some(json!(limit))),
        )
        .unwrap();
        out.push((page.range(), page.next_cursor.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(Value::String(next)),
            None => return out,
        }
    }
}

#[test]
fn page_03_the_cursor_is_base64url_json_and_every_field_is_checked() {
    let messages = history(10);
    let valid =
        r#"{"version":1,"sessionId":"session-1","leafId":"leaf-1","messageCount":10,"offset":4}"#;
    let page = build_page(&messages, &SNAPSHOT, &options(Some(cursor_of(valid)), None)).unwrap();
    assert_eq!(page.range(), 4..10);
    // The text we issue is exactly that JSON.
    let issued = walk(&messages, 4)[0].1.clone().unwrap();
    assert_eq!(
        URL_SAFE_NO_PAD.decode(&issued).unwrap(),
        br#"{"version":1,"sessionId":"session-1","leafId":"leaf-1","messageCount":10,"offset":4}"#
    );
    // Accepted as JavaScript reads it: 4.0 is 4, key order and white space do not matter,
    // a BOM is dropped by TextDecoder.
    for ok in [
        r#"{"version":1.0,"sessionId":"session-1","leafId":"leaf-1","messageCount":10,"offset":4.0}"#,
        r#" {"offset":4,"messageCount":10,"leafId":"leaf-1","sessionId":"session-1","version":1,"x":0} "#,
        "\u{feff}{\"version\":1,\"sessionId\":\"session-1\",\"leafId\":\"leaf-1\",\"messageCount\":10,\"offset\":4}",
    ] {
        assert!(build_page(&messages, &SNAPSHOT, &options(Some(cursor_of(ok)), None)).is_ok(), "{ok}");
    }
    let invalid = |cursor: Value| {
        let error =
            build_page(&messages, &SNAPSHOT, &options(Some(cursor.clone()), None)).unwrap_err();
        assert_eq!(error, PageError::InvalidCursor, "{cursor}");
        assert_eq!(error.to_string(), "Invalid RPC message cursor");
        assert_eq!(error.code(), None);
    };
    let valid_text = cursor_of(valid).as_str().unwrap().to_owned();
    invalid(json!(""));
    invalid(json!("A".repeat(2049)));
    invalid(json!(format!("{valid_text}=")));
    invalid(json!(format!("{valid_text}+")));
    invalid(json!(format!("+{}", &valid_text[1..])));
    invalid(json!(format!("{valid_text}A")));
    // Trailing bits that re-encode differently: not canonical.
    let mut noncanonical = URL_SAFE_NO_PAD.encode(b"{}x");
    noncanonical.pop();
    noncanonical.push('z');
    invalid(json!(noncanonical));
    invalid(Value::Null);
    invalid(json!(5));
    invalid(Value::String(URL_SAFE_NO_PAD.encode(b"\xff\xfe")));
    for bad in [
        "not json",
        "[1]",
        "null",
        r#"{"version":2,"sessionId":"session-1","leafId":"leaf-1","messageCount":10,"offset":4}"#,
        r#"{"version":"1","sessionId":"session-1","leafId":"leaf-1","messageCount":10,"offset":4}"#,
        r#"{"sessionId":"session-1","leafId":"leaf-1","messageCount":10,"offset":4}"#,
        r#"{"version":1,"sessionId":"","leafId":"leaf-1","messageCount":10,"offset":4}"#,
        r#"{"version":1,"sessionId":5,"leafId":"leaf-1","messageCount":10,"offset":4}"#,
        r#"{"version":1,"sessionId":"session-1","leafId":"","messageCount":10,"offset":4}"#,
        r#"{"version":1,"sessionId":"session-1","messageCount":10,"offset":4}"#,
        r#"{"version":1,"sessionId":"session-1","leafId":"leaf-1","messageCount":-1,"offset":0}"#,
        r#"{"version":1,"sessionId":"session-1","leafId":"leaf-1","messageCount":10.5,"offset":4}"#,
        r#"{"version":1,"sessionId":"session-1","leafId":"leaf-1","messageCount":9007199254740992,"offset":4}"#,
        r#"{"version":1,"sessionId":"session-1","leafId":"leaf-1","messageCount":10,"offset":11}"#,
        r#"{"version":1,"sessionId":"session-1","leafId":"leaf-1","messageCount":10,"offset":"4"}"#,
        r#"{"version":1,"sessionId":"session-1","leafId":"leaf-1","messageCount":1e400,"offset":4}"#,
    ] {
        invalid(cursor_of(bad));
    }
    // Ids are counted in UTF-16 units: 256 are allowed, 257 are not.
    let id = |units: usize| "é".repeat(units);
    let long = |n: usize| {
        cursor_of(&format!(
            r#"{{"version":1,"sessionId":"{}","leafId":null,"messageCount":0,"offset":0}}"#,
            id(n)
        ))
    };
    let empty: Vec<Value> = Vec::new();
    let snap = Snapshot {
        session_id: "x",
        leaf_id: None,
    };
    assert_eq!(
        build_page(&empty, &snap, &options(Some(long(256)), None)),
        Err(PageError::StaleCursor)
    );
    assert_eq!(
        build_page(&empty, &snap, &options(Some(long(257)), None)),
        Err(PageError::InvalidCursor)
    );
}

#[test]
fn page_04_a_cursor_is_bound_to_session_leaf_and_count() {
    let messages = history(10);
    let (_, cursor) = walk(&messages, 3)[0].clone();
    let cursor = Value::String(cursor.unwrap());
    let stale = |messages: &[Value], snapshot: Snapshot<'_>| {
        let error =
            build_page(messages, &snapshot, &options(Some(cursor.clone()), None)).unwrap_err();
        assert_eq!(error, PageError::StaleCursor);
        assert_eq!(error.to_string(), "RPC message cursor is stale");
        assert_eq!(error.code().unwrap().as_str(), "stale_cursor");
    };
    stale(
        &messages,
        Snapshot {
            session_id: "session-2",
            ..SNAPSHOT
        },
    );
    stale(
        &messages,
        Snapshot {
            leaf_id: Some("leaf-2"),
            ..SNAPSHOT
        },
    );
    stale(
        &messages,
        Snapshot {
            leaf_id: None,
            ..SNAPSHOT
        },
    );
    stale(&history(11), SNAPSHOT);
    // Through the agent: code stale_cursor.
    let mut h = Harness::v2();
    let frame = ask(
        &mut h,
        json!({"id": "p", "type": "get_messages_page", "cursor": cursor}),
        false,
        &history(12),
    );
    assert_eq!(
        frame,
        json!({"id": "p", "type": "response", "command": "get_messages_page", "success": false,
               "error": "RPC message cursor is stale", "code": "stale_cursor"})
    );
}

#[test]
fn page_05_a_busy_session_refuses_pages_before_any_other_check() {
    let mut h = Harness::v2();
    let frame = ask(
        &mut h,
        json!({"id": "p", "type": "get_messages_page", "limit": 0, "cursor": 5}),
        true,
        &history(3),
    );
    assert_eq!(
        frame,
        json!({"id": "p", "type": "response", "command": "get_messages_page", "success": false,
               "error": "Cannot page messages while the session is changing", "code": "session_busy"})
    );
}

#[test]
fn page_06_the_result_has_messages_next_cursor_and_total_and_the_last_page_no_cursor() {
    let messages = history(5);
    let mut h = Harness::v2();
    let first = ask(
        &mut h,
        json!({"id": "1", "type": "get_messages_page", "limit": 3}),
        false,
        &messages,
    );
    let data = &first["data"];
    assert_eq!(data["messages"], json!(messages[..3]));
    assert_eq!(data["totalMessages"], 5);
    let keys: Vec<&String> = data.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["messages", "nextCursor", "totalMessages"]);
    let cursor = data["nextCursor"].clone();
    let last = ask(
        &mut h,
        json!({"id": "2", "type": "get_messages_page", "limit": 3, "cursor": cursor}),
        false,
        &messages,
    );
    assert_eq!(
        last["data"],
        json!({"messages": messages[3..], "totalMessages": 5})
    );
    // An empty history: one empty last page.
    let empty = ask(
        &mut h,
        json!({"id": "3", "type": "get_messages_page"}),
        false,
        &[],
    );
    assert_eq!(empty["data"], json!({"messages": [], "totalMessages": 0}));
    // Only a get_messages_page is answered this way.
    let (request, _) = h.command(r#"{"id":"4","type":"get_messages"}"#);
    let source = PageSource {
        busy: false,
        session_id: "s",
        leaf_id: None,
        messages: &messages,
    };
    assert_eq!(
        h.agent.respond_messages_page(h.now, request, source),
        Err(AgentError::NotAPageCommand(request))
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// PAGE-02, PAGE-06: a walk over any history with any limit returns every message
    /// exactly once, in order.
    #[test]
    fn page_06_a_walk_returns_every_message_exactly_once_in_order(
        sizes in proptest::collection::vec(0usize..40_000, 0..120),
        limit in 1u64..=256,
    ) {
        let messages: Vec<Value> = sizes.iter().enumerate()
            .map(|(i, &n)| json!({"i": i, "pad": "p".repeat(n)}))
            .collect();
        let mut seen = Vec::new();
        for (range, _) in walk(&messages, limit) {
            prop_assert!(range.len() <= limit as usize);
            prop_assert!(!range.is_empty() || messages.is_empty());
            seen.extend(range.map(|i| messages[i]["i"].as_u64().unwrap() as usize));
        }
        prop_assert_eq!(seen, (0..messages.len()).collect::<Vec<_>>());
    }

    /// PAGE-03: encode then decode gives the same cursor, when within the limits.
    #[test]
    fn page_03_cursors_round_trip(
        session_id in "\\PC{1,40}",
        leaf_id in proptest::option::of("\\PC{1,40}"),
        count in 0u64..=9_007_199_254_740_991,
        offset_frac in 0.0f64..=1.0,
    ) {
        let cursor = Cursor {
            session_id,
            leaf_id,
            message_count: count,
            offset: (count as f64 * offset_frac) as u64,
        };
        let cursor = Cursor { offset: cursor.offset.min(count), ..cursor };
        let text = cursor.encode();
        prop_assert!(text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        prop_assert_eq!(Cursor::decode(&text), Ok(cursor));
    }

    /// PAGE-03, PAGE-04: any mutation of a valid cursor is rejected or stale, or names a
    /// page of the same history; never a panic.
    #[test]
    fn page_03_04_mutated_cursors_are_rejected_never_a_panic(
        n in 2usize..60,
        limit in 1u64..10,
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        insert in any::<bool>(),
    ) {
        let messages = history(n);
        let (_, cursor) = walk(&messages, limit)[0].clone();
        let Some(cursor) = cursor else { return Ok(()) };
        let mut bytes = cursor.clone().into_bytes();
        let i = at.index(bytes.len());
        if insert { bytes.insert(i, byte) } else { bytes[i] = byte }
        let Ok(text) = String::from_utf8(bytes) else { return Ok(()) };
        if text == cursor { return Ok(()) }
        match build_page(&messages, &SNAPSHOT, &options(Some(Value::String(text)), None)) {
            Ok(page) => prop_assert!(page.end <= n),
            Err(e) => prop_assert!(matches!(e, PageError::InvalidCursor | PageError::StaleCursor)),
        }
    }
}

#[test]
fn page_08_where_the_reference_relies_on_javascript() {
    let messages = history(10);
    for cursor in [Value::Null, json!(5), json!(["x"]), json!({})] {
        assert_eq!(
            build_page(&messages, &SNAPSHOT, &options(Some(cursor), None)),
            Err(PageError::InvalidCursor)
        );
    }
    let page = build_page(&messages, &SNAPSHOT, &options(None, Some(Value::Null))).unwrap();
    assert_eq!(page.range(), 0..10);
    let surrogate =
        r#"{"version":1,"sessionId":"\ud800","leafId":null,"messageCount":10,"offset":0}"#;
    assert_eq!(
        build_page(
            &messages,
            &SNAPSHOT,
            &options(Some(cursor_of(surrogate)), None)
        ),
        Err(PageError::InvalidCursor)
    );
    // The limit is checked before the cursor.
    assert_eq!(
        build_page(
            &messages,
            &SNAPSHOT,
            &options(Some(json!("!")), Some(json!(0)))
        ),
        Err(PageError::LimitOutOfRange)
    );
}
