//! FRAME-01/05/09 through the Client: however the agent's stdout is cut into reads, the
//! client's actions are the same. Checked on every committed transcript (random cut points in
//! each stdout step; for agent transcripts, each stdin step: FRAME-14/16, the Agent's reading
//! of the host's lines) and on generated sessions (ready, negotiation, plain and chunked
//! frames, responses, non-JSON lines, CRLF, cut anywhere).

use std::sync::OnceLock;
use std::time::Instant;

use musewire_conformance::replay::{self, Outcome};
use musewire_conformance::{transcript, transcript_files, transcripts_dir};
use musewire_core::client::{Action, Call, Client, ClientConfig, ExitStatus, Input};
use musewire_core::frame::{FrameEncoder, ProtocolVersion};
use musewire_wire::GetState;
use proptest::prelude::*;
use serde_json::{json, Value};

struct Loaded {
    transcript: transcript::Transcript,
    whole: Vec<Outcome>,
}

fn loaded() -> &'static [Loaded] {
    static ALL: OnceLock<Vec<Loaded>> = OnceLock::new();
    ALL.get_or_init(|| {
        transcript_files(&transcripts_dir())
            .unwrap()
            .iter()
            .map(|p| {
                let transcript = transcript::load(p).unwrap();
                let whole = replay::run(&transcript).unwrap();
                Loaded { transcript, whole }
            })
            .collect()
    })
}

/// A few cut points in `0..len`, derived from `seed`; the cuts cluster near the start for
/// small steps and spread out in large ones, and sometimes cut every byte of a short step.
fn cuts(seed: &mut u64, len: usize) -> Vec<usize> {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    if len == 0 {
        return Vec::new();
    }
    if len < 600 && next() % 5 == 0 {
        return (1..len).collect();
    }
    let count = (next() % 12) as usize;
    let mut cuts: Vec<usize> = (0..count).map(|_| (next() as usize) % (len + 1)).collect();
    cuts.sort_unstable();
    cuts
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// FRAME-01/09: each transcript's stdout steps, cut into random reads, give the same
    /// actions as handed in whole.
    #[test]
    fn frame_01_09_transcript_stdout_split_anywhere_gives_the_same_actions(
        which in any::<prop::sample::Index>(),
        mut seed in 1u64..,
    ) {
        let all = loaded();
        let one = &all[which.index(all.len())];
        let split = replay::run_with(&one.transcript, &mut |_, len| cuts(&mut seed, len)).unwrap();
        for (i, (whole, split)) in one.whole.iter().zip(&split).enumerate() {
            prop_assert_eq!(whole, split, "{} step {}", one.transcript.path.display(), i + 1);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// FRAME-14/16 on the agent side: each agent transcript's stdin steps, cut into random
    /// reads, give the same actions as handed in whole.
    #[test]
    fn frame_14_16_agent_transcript_stdin_split_anywhere_gives_the_same_actions(
        which in any::<prop::sample::Index>(),
        mut seed in 1u64..,
    ) {
        let agents: Vec<&Loaded> = loaded()
            .iter()
            .filter(|l| l.transcript.header.role == transcript::Role::Agent)
            .collect();
        prop_assert!(!agents.is_empty());
        let one = agents[which.index(agents.len())];
        let split = replay::run_with(&one.transcript, &mut |_, len| cuts(&mut seed, len)).unwrap();
        for (i, (whole, split)) in one.whole.iter().zip(&split).enumerate() {
            prop_assert_eq!(whole, split, "{} step {}", one.transcript.path.display(), i + 1);
        }
    }
}

#[test]
fn every_transcript_survives_byte_by_byte_reads_of_small_steps() {
    for one in loaded() {
        let split = replay::run_with(&one.transcript, &mut |_, len| {
            if len <= 20_000 {
                (1..len).collect()
            } else {
                (0..len).step_by(4093).collect()
            }
        })
        .unwrap();
        assert_eq!(one.whole, split, "{}", one.transcript.path.display());
    }
}

/// What a generated agent writes after the handshake.
#[derive(Debug, Clone)]
enum Out {
    Frame(Value),
    /// A frame over 1 MiB: chunked in v2.
    Big(usize),
    NotJson(String),
    Blank,
    Crlf(Value),
}

fn frame() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "agent_start"})),
        any::<Option<bool>>().prop_map(|t| match t {
            Some(t) => json!({"type": "agent_end", "messages": [], "isTerminal": t}),
            None => json!({"type": "agent_end", "messages": []}),
        }),
        "[a-z \u{e9}\u{2028}]{0,40}".prop_map(|s| json!({"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "delta": s}})),
        (0u8..4).prop_map(|n| json!({"type": "host_tool_call", "id": format!("h{n}"), "toolCallId": "c", "toolName": "t", "arguments": {}})),
        (0u8..4).prop_map(|n| json!({"type": "host_tool_cancel", "id": "x", "targetId": format!("h{n}")})),
        (0u8..4, 0u32..5000).prop_map(|(n, t)| json!({"type": "extension_ui_request", "id": format!("d{n}"), "method": "confirm", "timeout": t})),
        (1u8..5, any::<bool>()).prop_map(|(n, ok)| if ok {
            json!({"id": format!("req_{n}"), "type": "response", "command": "get_state", "success": true, "data": {}})
        } else {
            json!({"type": "response", "command": "get_state", "success": false, "error": "nope"})
        }),
        Just(json!({"type": "prompt_result", "id": "req_3", "agentInvoked": false})),
        Just(json!({"type": "brand_new_frame", "x": [1, 2, 3]})),
    ]
}

fn out() -> impl Strategy<Value = Out> {
    prop_oneof![
        10 => frame().prop_map(Out::Frame),
        1 => (1_048_600usize..1_300_000).prop_map(Out::Big),
        1 => "[^\n]{0,30}".prop_map(Out::NotJson),
        1 => Just(Out::Blank),
        1 => frame().prop_map(Out::Crlf),
    ]
}

/// The agent's stdout for a session: ready, the negotiation response (`req_2`; `req_1` is a
/// get_state sent before ready), then `outs`, encoded as a v2 agent would.
fn agent_stdout(outs: &[Out], negotiate: bool) -> Vec<u8> {
    let mut encoder = FrameEncoder::new();
    let mut bytes = Vec::new();
    let ready = json!({"type": "ready", "protocolVersion": 1, "supportedProtocolVersions": [1, 2], "maxFrameBytes": 1048576, "maxReassembledFrameBytes": 67108864});
    bytes.extend(encoder.encode_to_vec(&ready));
    if negotiate {
        bytes.extend(encoder.encode_to_vec(&json!({"id": "req_2", "type": "response", "command": "negotiate_protocol", "success": true, "data": {"protocolVersion": 2}})));
        encoder.set_protocol(ProtocolVersion::V2);
    } else {
        bytes.extend(encoder.encode_to_vec(&json!({"id": "req_2", "type": "response", "command": "negotiate_protocol", "success": false, "error": "Unsupported RPC protocol version: 2"})));
    }
    for out in outs {
        match out {
            Out::Frame(f) => bytes.extend(encoder.encode_to_vec(f)),
            Out::Big(n) => bytes.extend(encoder.encode_to_vec(
                &json!({"type": "message_end", "message": {"role": "assistant", "text": "y".repeat(*n)}}),
            )),
            Out::NotJson(s) => {
                bytes.extend(s.as_bytes());
                bytes.push(b'\n');
            }
            Out::Blank => bytes.extend(b"\r\n\n"),
            Out::Crlf(f) => {
                let mut line = encoder.encode_to_vec(f);
                line.pop();
                line.extend(b"\r\n");
                bytes.extend(line);
            }
        }
    }
    bytes
}

/// The actions of a client fed `stdout` in reads ending at `cut_at` (and at the end). A read
/// always ends with the ready frame's line: the negotiation response that follows it is the
/// agent's answer to the request the client writes on reading the ready frame, so it can
/// never arrive in the same read as the ready frame (and the client turns on following the
/// negotiation only then, FRAME-04/05).
fn session(stdout: &[u8], cut_at: &[usize]) -> Vec<Value> {
    let ready_end = stdout.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut cuts = cut_at.to_vec();
    cuts.push(ready_end);
    cuts.sort_unstable();
    let cut_at = &cuts[..];
    let now = Instant::now();
    let mut client = Client::new(ClientConfig::default(), now);
    let sent = client.handle(now, Input::Call(Call::Send(GetState::default().into())));
    assert!(sent.request().is_some(), "{sent:?}");
    let mut actions: Vec<Action> = Vec::new();
    let mut from = 0;
    for &to in cut_at.iter().chain(std::iter::once(&stdout.len())) {
        let to = to.clamp(from, stdout.len());
        client.handle(now, Input::stdout(&stdout[from..to]));
        from = to;
        actions.extend(std::iter::from_fn(|| client.poll_action()));
    }
    client.handle(now, Input::StdoutEnd);
    client.handle(now, Input::exit(ExitStatus::Code(0)));
    actions.extend(std::iter::from_fn(|| client.poll_action()));
    actions
        .iter()
        .map(|a| serde_json::to_value(a).unwrap())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// FRAME-01/05/09: a generated session gives the same actions whatever the reads.
    #[test]
    fn frame_05_09_generated_session_split_anywhere_gives_the_same_actions(
        outs in prop::collection::vec(out(), 0..16),
        negotiate in prop::bool::weighted(0.85),
        cut_at in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
    ) {
        let stdout = agent_stdout(&outs, negotiate);
        let mut cut_at: Vec<usize> = cut_at.iter().map(|i| i.index(stdout.len() + 1)).collect();
        cut_at.sort_unstable();
        let whole = session(&stdout, &[]);
        let split = session(&stdout, &cut_at);
        prop_assert_eq!(whole.len(), split.len());
        for (w, s) in whole.iter().zip(&split) {
            prop_assert_eq!(w, s);
        }
        // The session ended exactly once, the first request was answered exactly once.
        let closed = whole.iter().filter(|a| a["event"] == "closed").count();
        prop_assert_eq!(closed, 1);
        let answered = whole.iter().filter(|a| a["event"] == "response" && a["request"] == 1).count();
        prop_assert_eq!(answered, 1);
    }
}
