//! Every committed transcript, of every role, replays exactly; the replayer reports mismatches
//! usefully; the committed files are exactly what `bless` writes; the Client's and the
//! Agent's rules are all covered.

use std::collections::BTreeSet;

use musewire_conformance::{replay, transcript, transcript_files, transcripts_dir};

fn all() -> Vec<transcript::Transcript> {
    transcript_files(&transcripts_dir())
        .expect("the transcripts directory")
        .iter()
        .map(|p| transcript::load(p).expect("a transcript parses"))
        .collect()
}

/// FRAME-03..06, FRAME-13, CALL-01..08, HOST-01..06, PAGE-07: each committed transcript
/// replays through the Client (role "client"), the Agent (role "agent") or the ACP Bridge
/// (role "bridge") with exactly the expected actions.
#[test]
fn every_transcript_replays() {
    let transcripts = all();
    assert!(transcripts.len() >= 20, "transcripts are missing");
    let agents = transcripts
        .iter()
        .filter(|t| t.header.role == transcript::Role::Agent)
        .count();
    assert!(agents >= 15, "agent transcripts are missing ({agents})");
    let failures: Vec<String> = transcripts
        .iter()
        .filter_map(|t| {
            replay::replay(t)
                .err()
                .map(|e| format!("{}: {e}", t.path.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn committed_transcripts_are_blessed() {
    for t in all() {
        let text = std::fs::read_to_string(&t.path).unwrap();
        assert_eq!(
            replay::bless(&t).unwrap(),
            text,
            "{} differs from what bless writes",
            t.path.display()
        );
    }
}

#[test]
fn every_client_rule_has_a_transcript() {
    let named: BTreeSet<String> = all().into_iter().flat_map(|t| t.header.rules).collect();
    let mut wanted: Vec<String> = ["FRAME-03", "FRAME-04", "FRAME-05", "FRAME-06", "FRAME-13"]
        .map(String::from)
        .to_vec();
    wanted.extend((1..=8).map(|n| format!("CALL-{n:02}")));
    wanted.extend((1..=6).map(|n| format!("HOST-{n:02}")));
    wanted.push("PAGE-07".into());
    let missing: Vec<&String> = wanted.iter().filter(|id| !named.contains(*id)).collect();
    assert!(missing.is_empty(), "no transcript covers {missing:?}");
}

/// The agent-side rules, each named by an agent transcript's header.
#[test]
fn every_agent_rule_has_an_agent_transcript() {
    let named: BTreeSet<String> = all()
        .into_iter()
        .filter(|t| t.header.role == transcript::Role::Agent)
        .flat_map(|t| t.header.rules)
        .collect();
    let mut wanted: Vec<String> = [
        "FRAME-03", "FRAME-04", "FRAME-05", "FRAME-06", "FRAME-11", "FRAME-12", "FRAME-14",
        "FRAME-16", "CALL-01", "CALL-02", "CALL-06", "CALL-08", "CALL-10", "PAGE-08",
    ]
    .map(String::from)
    .to_vec();
    wanted.extend((1..=6).map(|n| format!("PAGE-{n:02}")));
    wanted.extend((1..=8).map(|n| format!("HOST-{n:02}")));
    let missing: Vec<&String> = wanted.iter().filter(|id| !named.contains(*id)).collect();
    assert!(missing.is_empty(), "no agent transcript covers {missing:?}");
}

/// The ACP bridge's rules, each named by a bridge transcript's header (a core transcript for
/// every ACP and OUT rule the bridge serves).
#[test]
fn every_acp_rule_has_a_bridge_transcript() {
    let named: BTreeSet<String> = all()
        .into_iter()
        .filter(|t| t.header.role == transcript::Role::Bridge)
        .flat_map(|t| t.header.rules)
        .collect();
    let wanted: Vec<String> = [
        "ACP-01", "ACP-02", "ACP-03", "ACP-04", "ACP-05", "ACP-06", "ACP-07", "ACP-12", "ACP-21",
        "OUT-01", "OUT-02", "OUT-06", "OUT-07",
    ]
    .map(String::from)
    .to_vec();
    let missing: Vec<&String> = wanted.iter().filter(|id| !named.contains(*id)).collect();
    assert!(
        missing.is_empty(),
        "no bridge transcript covers {missing:?}"
    );
}

/// An agent transcript's calls read back from what `AgentCall::write` writes, so drivers and
/// the replayer share one vocabulary.
#[test]
fn agent_calls_round_trip_through_step_maps() {
    use musewire_core::agent::AgentCall;
    let mut calls = 0;
    for t in all() {
        for step in &t.steps {
            let transcript::Input::AgentCall(call) = &step.input else {
                continue;
            };
            let mut written = serde_json::Map::new();
            call.write(&mut written);
            assert_eq!(
                &AgentCall::read(&written).unwrap(),
                call,
                "{}",
                step.summary()
            );
            calls += 1;
        }
    }
    assert!(calls >= 50, "{calls} agent calls");
}

#[test]
fn transcripts_captured_from_omp_show_chunking_and_paging() {
    let history = transcript::load(&transcripts_dir().join("omp-history.jsonl")).unwrap();
    let stdout: Vec<u8> = history
        .steps
        .iter()
        .filter_map(|s| match &s.input {
            transcript::Input::Stdout(bytes) => Some(bytes.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    let text = String::from_utf8_lossy(&stdout);
    assert!(
        text.contains("\"type\":\"rpc_chunk\""),
        "a chunked response"
    );
    assert!(text.contains("\"nextCursor\""), "a paged walk");
}

#[test]
fn a_mismatch_names_the_step_and_the_difference() {
    let path = transcripts_dir().join("page-07-walk-two-pages.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let broken = text.replace(
        "\"content\":\"m2\",\"timestamp\":2}]}}]",
        "\"content\":\"m9\",\"timestamp\":2}]}}]",
    );
    assert_ne!(broken, text, "the edit applies");
    let (header, steps) = transcript::parse(&broken, path.parent().unwrap()).unwrap();
    let t = transcript::Transcript {
        path,
        header,
        steps,
    };
    let error = replay::replay(&t).unwrap_err();
    assert!(error.starts_with("step 5 (line 6)"), "{error}");
    assert!(error.contains("[0].outcome.ok[2].content"), "{error}");
    assert!(
        error.contains("expected: \"m9\"") && error.contains("actual:   \"m2\""),
        "{error}"
    );
}

#[test]
fn malformed_steps_are_refused_with_their_line() {
    let dir = std::path::Path::new(".");
    let header = "{\"role\":\"client\"}\n";
    for (step, message) in [
        ("{\"at\":0}", "exactly one input"),
        (
            "{\"at\":0,\"eof\":true,\"timer\":true}",
            "exactly one input",
        ),
        ("{\"at\":0,\"call\":\"fly\"}", "unknown call"),
        (
            "{\"at\":5,\"eof\":true}\n{\"at\":4,\"eof\":true}",
            "back in time",
        ),
        ("{\"at\":0,\"exit\":{}}", "\"exit\" is"),
    ] {
        let error = transcript::parse(&format!("{header}{step}\n"), dir).unwrap_err();
        assert!(error.contains(message), "{step}: {error}");
        assert!(error.starts_with("line "), "{error}");
    }
    assert!(transcript::parse("{\"role\":\"client\",\"config\":{\"typo\":1}}", dir).is_err());
    let agent = "{\"role\":\"agent\"}\n";
    for (step, message) in [
        ("{\"at\":0,\"stdout\":\"x\"}", "exactly one input"),
        (
            "{\"at\":0,\"stdin\":\"x\",\"eof\":true}",
            "exactly one input",
        ),
        (
            "{\"at\":0,\"call\":\"send\",\"command\":{}}",
            "unknown call",
        ),
        ("{\"at\":0,\"call\":\"respond\"}", "needs \"request\""),
        (
            "{\"at\":0,\"call\":\"cancel_host_tool\",\"id\":\"ui-1\"}",
            "host-tool-N",
        ),
        (
            "{\"at\":0,\"call\":\"emit\",\"frame\":{\"$repeat\":\"x\",\"times\":99999999}}",
            "64 MiB",
        ),
    ] {
        let error = transcript::parse(&format!("{agent}{step}\n"), dir).unwrap_err();
        assert!(error.contains(message), "{step}: {error}");
        assert!(error.starts_with("line "), "{error}");
    }
    for header in [
        "{\"role\":\"agent\",\"config\":{\"negotiate_v2\":false}}",
        "{\"role\":\"client\",\"config\":{\"max_input_line_bytes\":5}}",
        "{\"role\":\"agent\",\"config\":{\"unknown_commands\":\"maybe\"}}",
        "{\"role\":\"bridge\",\"config\":{\"unknown_commands\":\"deliver\"}}",
        "{\"role\":\"client\",\"config\":{\"session_dir\":\"/x\"}}",
        "{\"role\":\"robot\"}",
    ] {
        let parsed = transcript::parse(header, dir);
        let built = parsed.and_then(|(header, steps)| {
            replay::run(&transcript::Transcript {
                path: "x".into(),
                header,
                steps,
            })
        });
        assert!(built.is_err(), "{header}");
    }
}

/// A session whose client spills a host tool result, recorded with the core's `Recorder` (as
/// the drivers record), replays exactly: the spill policy is in the header and the driver's
/// `spill_done` answer is an input of the transcript.
#[test]
fn spill_03_a_recorded_client_spill_replays() {
    use std::time::{Duration, Instant};

    use musewire_core::client::{Call, Client, ClientConfig, Input, Recorder};
    use musewire_core::spill::{SaveFailure, SpillOwner, SpillPolicy};
    use musewire_wire::ToolResult;

    let config = ClientConfig {
        expect_ready: false,
        spill: SpillPolicy {
            max_inline_bytes: Some(8),
            has_store: true,
        },
        spill_owner: Some(SpillOwner::new("s-1")),
        ..ClientConfig::default()
    };
    let start = Instant::now();
    let mut client = Client::new(config.clone(), start);
    let mut recorder = Recorder::new(start, &config, &["SPILL-03"], "recorded");
    let call = b"{\"type\":\"host_tool_call\",\"id\":\"h1\",\"toolCallId\":\"c1\",\"toolName\":\"t\",\"arguments\":{}}\n";
    let inputs = [
        Input::stdout(call),
        Input::Call(Call::HostToolResult {
            id: "h1".into(),
            result: ToolResult::text("x".repeat(100)),
            is_error: false,
        }),
        Input::SpillDone(
            musewire_core::spill::SpillId(1),
            Err(SaveFailure::new("disk full")),
        ),
    ];
    let mut spilled = false;
    for (i, input) in inputs.into_iter().enumerate() {
        let now = start + Duration::from_millis(i as u64);
        let returns = client.handle(now, input.clone()).to_json();
        let actions: Vec<_> = std::iter::from_fn(|| client.poll_action()).collect();
        spilled |= actions
            .iter()
            .any(|a| matches!(a, musewire_core::client::Action::SpillWrite { .. }));
        recorder.step(now, &input, returns, &actions);
    }
    assert!(spilled, "the result went through a spill write");
    let text = String::from_utf8(recorder.take()).unwrap();
    let (header, steps) = transcript::parse(&text, std::path::Path::new(".")).unwrap();
    assert!(matches!(&steps[2].input, transcript::Input::SpillDone(..)));
    let recorded = transcript::Transcript {
        path: "recorded.jsonl".into(),
        header,
        steps,
    };
    replay::replay(&recorded).unwrap();
}
