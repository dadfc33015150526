//! `AgentProcess::read_output` and `fetch_output` on the blocking driver (OUT-10, ours),
//! against the stand-in agent `drivers/cli/tests/output_agent.py`.

#[path = "../../cli/tests/output_agent/mod.rs"]
mod output_agent;

use std::time::Duration;

use musewire_core::client::{CallError, ClientError, FetchError, OutputFetch};
use musewire_core::output::{ReadParams, WalkError};
use musewire_mio::AgentProcess;
use musewire_wire::output::OutputErrorCode;
use output_agent::{data, reference};

const WAIT: Duration = Duration::from_secs(20);

/// The stand-in in `mode`, once its session is ready.
fn start(mode: &str, data: &std::path::Path) -> AgentProcess {
    let mut command = std::process::Command::new(output_agent::PROGRAM);
    command.args(output_agent::args(mode, data));
    let agent = AgentProcess::spawn(command, Default::default()).unwrap();
    let mut events = std::iter::from_fn(|| agent.next_event(WAIT));
    assert!(events.any(|e| output_agent::is_ready(&e)), "no ready event");
    agent
}

#[test]
fn out_10_mio_fetch_output_walks_the_pages_into_the_sink() {
    let (path, bytes) = data("fetch");
    let agent = start("serve", &path);
    let mut got = Vec::new();
    let mut last = None;
    let mut sink = |page: &[u8], progress: musewire_core::client::FetchProgress| {
        got.extend_from_slice(page);
        last = Some(progress);
        Ok(())
    };
    let fetch = OutputFetch::new("s-1", "call-1", reference(), 5000)
        .unwrap()
        .expecting(bytes.len() as u64);
    let fetched = agent.fetch_output(fetch, &mut sink, WAIT).unwrap();
    assert_eq!(got, bytes);
    assert_eq!(fetched.byte_len, 100_000);
    assert_eq!(last.unwrap().received, 100_000);
    assert_eq!(last.unwrap().total, Some(100_000));
    let params = ReadParams::from_value(&serde_json::json!({"sessionId": "s-1",
        "itemId": "call-1", "outputRef": "out-0a1b2c3d4e5f6071", "offsetBytes": 100_000}))
    .unwrap();
    let error = agent.read_output(&params, WAIT).unwrap_err();
    assert_eq!(error.output_code(), Some(OutputErrorCode::OffsetOutOfRange));
    agent.shutdown(Duration::from_secs(2)).unwrap();
    let _ = std::fs::remove_file(path);
}

#[test]
fn out_09_mio_fetch_output_stops_at_a_page_that_does_not_fit() {
    let (path, bytes) = data("liar");
    let agent = start("liar", &path);
    let mut got = Vec::new();
    let fetch = OutputFetch::new("s-1", "call-1", reference(), 5000).unwrap();
    let error = agent
        .fetch_output(
            fetch,
            &mut |page: &[u8], _| {
                got.extend_from_slice(page);
                Ok(())
            },
            WAIT,
        )
        .unwrap_err();
    assert!(
        matches!(
            error,
            FetchError::Page {
                error: WalkError::WrongOffset { .. },
                ..
            }
        ),
        "{error}"
    );
    // Only the first page reached the sink.
    assert_eq!(got, bytes[..got.len()]);
    assert!(got.len() < 5000);
    // A sink that fails stops the fetch with its error.
    let fetch = OutputFetch::new("s-1", "call-1", reference(), 5000).unwrap();
    let agent2 = start("serve", &path);
    let error = agent2
        .fetch_output(
            fetch,
            &mut |_: &[u8], _| Err(std::io::Error::other("disk full")),
            WAIT,
        )
        .unwrap_err();
    assert!(matches!(error, FetchError::Sink(_)), "{error}");
    let nooffer = start("nooffer", &path);
    let fetch = OutputFetch::new("s-1", "call-1", reference(), 5000).unwrap();
    let error = nooffer
        .fetch_output(fetch, &mut |_: &[u8], _| Ok(()), WAIT)
        .unwrap_err();
    assert!(matches!(
        error,
        FetchError::Call {
            error: CallError::Refused(ClientError::ReadOutputNotOffered),
            ..
        }
    ));
    for agent in [agent, agent2, nooffer] {
        agent.shutdown(Duration::from_secs(2)).unwrap();
    }
    let _ = std::fs::remove_file(path);
}
