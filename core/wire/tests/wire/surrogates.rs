//! Lone surrogates (CALL-06): every frame `JSON.parse` accepts is typed.
//! A lone surrogate escape (`"\ud83d"`, what `JSON.stringify` writes for a cut emoji) is held
//! by the typed model and written back unchanged, as `JSON.stringify(JSON.parse(text))`
//! writes it.

use musewire_wire::{
    self, display_text, lone_surrogate, stand_in, AgentFrame, AgentMessage, Command, ContentBlock,
    HostFrame, SessionEvent,
};
use proptest::prelude::*;

/// Parses `json` as an agent frame and checks it writes back byte for byte.
fn agent_exact(json: &str) -> AgentFrame {
    let frame = AgentFrame::from_slice(json.as_bytes()).unwrap_or_else(|e| panic!("{json}: {e}"));
    assert!(!matches!(frame, AgentFrame::Unknown(_)), "{json}");
    assert_eq!(String::from_utf8(frame.to_vec()).unwrap(), json);
    assert_eq!(
        AgentFrame::from_slice_lenient(json.as_bytes()).unwrap(),
        frame
    );
    // The model form survives `to_value` / `from_value`.
    assert_eq!(AgentFrame::from_value(frame.to_value()).unwrap(), frame);
    frame
}

fn message_end_text(frame: &AgentFrame) -> Vec<String> {
    let AgentFrame::Event(SessionEvent::MessageEnd(end)) = frame else {
        panic!("{frame:?}")
    };
    let AgentMessage::Assistant(message) = &end.message else {
        panic!("{end:?}")
    };
    message
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => text.text.clone(),
            other => panic!("{other:?}"),
        })
        .collect()
}

fn message_end(texts: &[&str]) -> String {
    let content: Vec<String> = texts
        .iter()
        .map(|t| format!(r#"{{"type":"text","text":"{t}"}}"#))
        .collect();
    format!(
        r#"{{"type":"message_end","message":{{"role":"assistant","content":[{}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1}}}}"#,
        content.join(",")
    )
}

#[test]
fn call_06_lone_high_surrogate_in_nested_message_content_is_typed_and_written_back() {
    let json = message_end(&[r"cut \ud83d"]);
    let frame = agent_exact(&json);
    let texts = message_end_text(&frame);
    assert_eq!(display_text(&texts[0]), "cut \u{FFFD}");
    assert_eq!(
        texts[0].chars().last().and_then(lone_surrogate),
        Some(0xD83D)
    );
}

#[test]
fn call_06_lone_low_reversed_pairs_and_pairs_split_across_fields() {
    // A lone low surrogate, a reversed pair, two highs in a row, and a pair split across
    // two content blocks: each written back as the escapes it was.
    let json = message_end(&[
        r"\ude00 low",
        r"\ude00\ud83d reversed",
        r"\ud83d\ud83d",
        r"split \ud83d",
        r"\ude00 across",
    ]);
    let frame = agent_exact(&json);
    let shown: Vec<String> = message_end_text(&frame)
        .iter()
        .map(|t| display_text(t).into_owned())
        .collect();
    assert_eq!(
        shown,
        [
            "\u{FFFD} low",
            "\u{FFFD}\u{FFFD} reversed",
            "\u{FFFD}\u{FFFD}",
            "split \u{FFFD}",
            "\u{FFFD} across"
        ]
    );
}

#[test]
fn call_06_lone_surrogates_in_values_member_names_and_unknown_frames() {
    // Tool arguments (a `Value`), an unknown member's name and value, a text delta.
    agent_exact(
        r#"{"type":"message_update","message":{"role":"assistant","content":[{"type":"toolCall","id":"t\udc00","name":"write","arguments":{"path\ud800":["\udfff",{"k":"\ud83d"}]}}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1},"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"\ud83d"},"new\udbff":"\udc00x"}"#,
    );
    // A frame type this version does not know keeps them too.
    let unknown = r#"{"type":"a","t":"\ud83d"}"#;
    let frame = AgentFrame::from_slice(unknown.as_bytes()).unwrap();
    assert!(matches!(frame, AgentFrame::Unknown(_)));
    assert_eq!(frame.to_vec(), unknown.as_bytes());
}

#[test]
fn call_06_escapes_are_written_as_json_stringify_writes_them() {
    // Uppercase hex and escaped pairs are read; the write is JSON.stringify's: a lone
    // surrogate as a lowercase escape, a pair as its character.
    let frame = AgentFrame::from_slice(
        br#"{"type":"command_output","text":"\uD83D \ud83d\ude00 \uDBFF\uDFFF"}"#,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(frame.to_vec()).unwrap(),
        "{\"type\":\"command_output\",\"text\":\"\\ud83d \u{1F600} \u{10FFFF}\"}"
    );
}

#[test]
fn call_06_real_characters_of_the_stand_in_range_are_not_taken_for_surrogates() {
    let json = "{\"type\":\"command_output\",\"text\":\"\u{10F7FF}\u{10F800}\u{10FFFF} \\ud800\"}";
    let frame = agent_exact(json);
    let AgentFrame::CommandOutput(output) = &frame else {
        panic!()
    };
    assert_eq!(
        display_text(&output.text),
        "\u{10F7FF}\u{10F800}\u{10FFFF} \u{FFFD}"
    );
}

#[test]
fn frame_14_commands_and_host_frames_with_lone_surrogates_are_typed_and_written_back() {
    let json = r#"{"id":"p\ud83d","type":"prompt","message":"cut \ud83d and \ude00"}"#;
    let (id, command) = Command::from_slice_with_id(json.as_bytes()).unwrap();
    let Command::Prompt(prompt) = &command else {
        panic!("{command:?}")
    };
    assert_eq!(display_text(&prompt.message), "cut \u{FFFD} and \u{FFFD}");
    assert_eq!(display_text(id.as_deref().unwrap()), "p\u{FFFD}");
    assert_eq!(command.to_vec_with_id(id.as_deref()), json.as_bytes());

    let json = r#"{"type":"extension_ui_response","id":"u1","value":"\udc00"}"#;
    let frame = HostFrame::from_slice(json.as_bytes()).unwrap();
    assert!(!matches!(frame, HostFrame::Unknown(_)));
    assert_eq!(frame.to_vec(), json.as_bytes());
}

#[test]
fn a_host_builds_text_with_a_lone_surrogate_through_stand_in() {
    let message = format!("half {}", stand_in(0xD83D).unwrap());
    let command = Command::Prompt(musewire_wire::Prompt {
        message,
        ..Default::default()
    });
    assert_eq!(
        command.to_vec_with_id(Some("1")),
        br#"{"id":"1","type":"prompt","message":"half \ud83d"}"#
    );
    assert_eq!(stand_in(0x41), None);
}

/// One piece of a JavaScript string, and how a writer may spell it.
#[derive(Debug, Clone)]
enum Piece {
    /// A character, written raw or escaped (as a pair when supplementary).
    Char(char, bool),
    /// A lone surrogate code unit, its escape in upper or lower case.
    Lone(u16, bool),
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        4 => (any::<char>(), any::<bool>()).prop_map(|(c, e)| Piece::Char(c, e)),
        // Characters of the stand-in range and the mark, the edge of the mapping.
        1 => (0x10F7FEu32..=0x10FFFF, any::<bool>())
            .prop_map(|(c, e)| Piece::Char(char::from_u32(c).unwrap(), e)),
        1 => (prop_oneof![Just(0xD800u16), Just(0xDBFF), Just(0xDC00), Just(0xDFFF), Just(0xD83D), 0xD800u16..=0xDFFF], any::<bool>())
            .prop_map(|(u, upper)| Piece::Lone(u, upper)),
        1 => Just(Piece::Char('"', false)),
        1 => Just(Piece::Char('\\', false)),
    ]
}

/// The UTF-16 code units of the string the pieces make.
fn units(pieces: &[Piece]) -> Vec<u16> {
    let mut units = Vec::new();
    for piece in pieces {
        match *piece {
            Piece::Char(c, _) => units.extend(c.encode_utf16(&mut [0; 2]).iter()),
            Piece::Lone(u, _) => units.push(u),
        }
    }
    units
}

/// A JSON string literal spelling the pieces in any of the ways a writer may.
fn any_spelling(pieces: &[Piece]) -> String {
    let mut out = String::from("\"");
    for piece in pieces {
        match *piece {
            Piece::Char(c, true) => {
                for u in c.encode_utf16(&mut [0; 2]) {
                    out.push_str(&format!("\\u{:04X}", u));
                }
            }
            Piece::Char(c, false) => {
                let quoted = serde_json::to_string(&c.to_string()).unwrap();
                out.push_str(&quoted[1..quoted.len() - 1]);
            }
            Piece::Lone(u, upper) => {
                if upper {
                    out.push_str(&format!("\\u{:04X}", u));
                } else {
                    out.push_str(&format!("\\u{:04x}", u));
                }
            }
        }
    }
    out.push('"');
    out
}

/// `JSON.stringify` of a string given as UTF-16 code units (ES2019 well-formed
/// stringify): lone surrogates as lowercase escapes, control characters as serde_json and
/// JavaScript both escape them, everything else raw.
fn js_stringify(units: &[u16]) -> String {
    let mut out = String::from("\"");
    for unit in char::decode_utf16(units.iter().copied()) {
        match unit {
            Ok(c) => {
                let quoted = serde_json::to_string(&c.to_string()).unwrap();
                out.push_str(&quoted[1..quoted.len() - 1]);
            }
            Err(lone) => out.push_str(&format!("\\u{:04x}", lone.unpaired_surrogate())),
        }
    }
    out.push('"');
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The mapping never panics on any input, and leaves alone every text serde_json reads
    /// that holds no plane-16 character (no panics on bad input).
    #[test]
    fn the_surrogate_mapping_is_total_and_changes_nothing_else(
        text in "[\\\\\"{}:,a-fu0-9D\u{10F7FF}\u{10FFFF}\u{1F600} ]{0,24}",
        bytes in proptest::collection::vec(any::<u8>(), 0..24),
    ) {
        for input in [text.as_bytes(), &bytes[..]] {
            let ours = musewire_wire::parse_value(input);
            let _ = AgentFrame::from_slice_lenient(input);
            let _ = Command::from_slice_with_id(input);
            if let Ok(theirs) = serde_json::from_slice::<serde_json::Value>(input) {
                if !input.contains(&0xF4) {
                    prop_assert_eq!(ours.unwrap(), theirs);
                }
            }
        }
    }

    /// CALL-06: any string of code units, however a writer escapes it, is typed in a prompt
    /// command and in nested message content, shown with each lone surrogate as U+FFFD, and
    /// written back as JSON.stringify writes it.
    #[test]
    fn call_06_any_surrogate_escapes_round_trip(pieces in proptest::collection::vec(piece(), 0..12)) {
        let units = units(&pieces);
        let literal = any_spelling(&pieces);
        let canonical = js_stringify(&units);
        let lossy = String::from_utf16_lossy(&units);

        let line = format!(r#"{{"id":"1","type":"prompt","message":{literal}}}"#);
        let (id, command) = Command::from_slice_with_id(line.as_bytes()).unwrap();
        let Command::Prompt(prompt) = &command else { panic!("{command:?}") };
        prop_assert_eq!(display_text(&prompt.message), lossy.as_str());
        prop_assert_eq!(
            String::from_utf8(command.to_vec_with_id(id.as_deref())).unwrap(),
            format!(r#"{{"id":"1","type":"prompt","message":{canonical}}}"#)
        );

        let frame = format!(
            r#"{{"type":"message_end","message":{{"role":"assistant","content":[{{"type":"text","text":{literal}}}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1}}}}"#
        );
        let typed = AgentFrame::from_slice(frame.as_bytes()).unwrap();
        let texts = message_end_text(&typed);
        prop_assert_eq!(display_text(&texts[0]), lossy.as_str());
        let expected = format!(
            r#"{{"type":"message_end","message":{{"role":"assistant","content":[{{"type":"text","text":{canonical}}}],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1}}}}"#
        );
        prop_assert_eq!(String::from_utf8(typed.to_vec()).unwrap(), expected.clone());
        // And the canonical form is a fixed point.
        prop_assert_eq!(
            AgentFrame::from_slice(expected.as_bytes()).unwrap().to_vec(),
            expected.into_bytes()
        );
    }
}
