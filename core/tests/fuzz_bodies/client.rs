//! The Client's fuzz body (feature `fuzzing`) on fixed seeds, so `cargo test` keeps it
//! compiling and passing between fuzz runs: FRAME-13 and CALL-07 (every pending request is
//! resolved exactly once when the session closes, nothing hangs), CALL-01 (no request
//! answered twice), PAGE-07 walks, HOST-02..06 routing, all under arbitrary input.
#![cfg(feature = "fuzzing")]

use musewire_core::client::fuzzing::{self, AgentLine, Op};

use crate::seeds;

/// This file's seeds.
fn seeds(count: usize, max_len: usize) -> Vec<Vec<u8>> {
    seeds::seeds(0x2545_f491_4f6c_dd1d, count, max_len)
}

fn frame(f: AgentLine) -> Op {
    Op::Frame(f, 7)
}

fn response(which: u16, ok: bool, cursor: u8, total: u8) -> Op {
    frame(AgentLine::Response {
        which,
        ok,
        code: 0,
        cursor,
        total,
    })
}

/// CALL-07, FRAME-13: random inputs never panic and every request is resolved once.
#[test]
fn call_07_client_session_fuzz_body_on_random_seeds() {
    for input in seeds(400, 600) {
        fuzzing::client_session(&input);
    }
}

/// FRAME-04, PAGE-07, CALL-07: scripted sessions through the fuzz harness: negotiation, a
/// walk over two pages, a fallback, a chunked frame, host calls, dialogs with timeouts, an
/// exit with requests pending, a restart.
#[test]
fn page_07_client_session_fuzz_body_on_scripted_sessions() {
    let handshake = || {
        vec![
            Op::Send(0),
            frame(AgentLine::Ready {
                v2: true,
                over: false,
            }),
            // written: [req_2 negotiate, req_1 get_state]
            response(0, true, 0, 0),
        ]
    };
    // A walk over two pages, then a chunked frame, then answers.
    let mut ops = handshake();
    ops.extend([
        Op::ReadHistory,
        response(2, true, 1, 2),
        response(3, true, 0, 2),
        frame(AgentLine::Big),
        response(1, true, 0, 0),
    ]);
    fuzzing::run(ops);
    // A fallback on session_busy, then an exit with the legacy read pending.
    let mut ops = handshake();
    ops.extend([
        Op::ReadHistory,
        frame(AgentLine::Response {
            which: 2,
            ok: false,
            code: 1,
            cursor: 0,
            total: 0,
        }),
        Op::Exit(3),
        Op::Restart,
        Op::Send(3),
        Op::Advance(u16::MAX),
        Op::Eof,
        Op::Advance(10),
    ]);
    fuzzing::run(ops);
    // Host tools, URIs and dialogs; an invalid chunk ends the session; calls after it.
    let mut ops = handshake();
    ops.extend([
        frame(AgentLine::HostToolCall(1)),
        Op::HostToolUpdate(1),
        Op::HostToolResult(1, false),
        frame(AgentLine::HostUriRequest(2)),
        frame(AgentLine::HostUriCancel(2)),
        Op::HostUriResult(2),
        frame(AgentLine::Ui {
            id: 3,
            method: 1,
            timeout: Some(100),
        }),
        Op::Advance(10),
        Op::UiRespond(3),
        Op::Prompt(None),
        frame(AgentLine::AgentStart),
        Op::Prompt(None),
        Op::Prompt(Some(true)),
        frame(AgentLine::Chunk {
            index: 1,
            count: 3,
            kib: 1100,
            valid: true,
        }),
        Op::Send(0),
        Op::Stop,
    ]);
    fuzzing::run(ops);
}
