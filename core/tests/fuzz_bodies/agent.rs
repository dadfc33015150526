//! The Agent's and the pager's fuzz bodies (feature `fuzzing`) on fixed seeds, so `cargo test`
//! keeps them compiling and passing between fuzz runs: FRAME-11 and FRAME-14 (every line
//! written is one valid frame), CALL-01 (every command answered at most once), HOST-07
//! (every host request resolved exactly once after stdin ends), PAGE-01..06 (walks, cursor
//! round trips and mutations).
#![cfg(feature = "fuzzing")]

use musewire_core::agent::fuzzing::{self, HostLine, Op};
use musewire_core::agent::UnknownCommands;

use crate::seeds;

/// This file's seeds.
fn seeds(count: usize, max_len: usize) -> Vec<Vec<u8>> {
    seeds::seeds(0x9e37_79b9_7f4a_7c15, count, max_len)
}

/// HOST-07, CALL-01: random sessions never panic and keep every invariant.
#[test]
fn host_07_agent_session_fuzz_body_on_random_seeds() {
    for input in seeds(100, 800) {
        fuzzing::agent_session(&input);
    }
}

/// FRAME-05, FRAME-11, PAGE-04, HOST-02..07: a scripted session through the fuzz harness.
#[test]
fn frame_11_agent_session_fuzz_body_on_a_scripted_session() {
    let line = |l: HostLine| Op::Line(l, 3);
    fuzzing::run(
        vec![
            line(HostLine::Negotiate(2)),
            Op::Emit(true),
            line(HostLine::SetHostTools(true)),
            line(HostLine::SetHostUriSchemes(true)),
            line(HostLine::Command(1, 1)),
            line(HostLine::Command(0, 2)),
            Op::Respond(1, true),
            Op::Respond(0, false),
            line(HostLine::Page(None, 7)),
            Op::RespondPage(0, false, false),
            line(HostLine::Page(Some(0), 7)),
            Op::RespondPage(0, false, true),
            line(HostLine::Page(Some(1), 7)),
            Op::RespondPage(0, false, false),
            Op::CallTool,
            line(HostLine::ToolUpdate(0)),
            line(HostLine::ToolResult(0, true)),
            Op::CallTool,
            Op::CancelTool(1),
            line(HostLine::ToolResult(1, false)),
            Op::RequestUri(true),
            line(HostLine::UriResult(0, true)),
            Op::RequestUri(false),
            Op::Dialog(Some(10)),
            Op::Dialog(None),
            line(HostLine::UiResponse(1)),
            Op::Advance(5),
            Op::Notice,
            Op::CallTool,
            Op::Raw(b"not json\n{\"type\":".to_vec()),
            Op::Eof,
            Op::CallTool,
        ],
        UnknownCommands::Reject,
    );
}

/// PAGE-01..06: random inputs to the paging body.
#[test]
fn page_03_paging_cursor_fuzz_body_on_random_seeds() {
    for input in seeds(100, 400) {
        musewire_core::paging::fuzzing::paging_cursor(&input);
    }
}
