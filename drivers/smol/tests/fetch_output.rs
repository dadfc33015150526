//! `AgentProcess::read_output` and `fetch_output` on the async driver (OUT-10, ours), against
//! the stand-in agent `drivers/cli/tests/output_agent.py`.

#[path = "../../cli/tests/output_agent/mod.rs"]
mod output_agent;

use musewire_core::client::{CallError, ClientError, FetchError, OutputFetch};
use musewire_core::output::ReadParams;
use musewire_smol::AgentProcess;
use musewire_wire::output::OutputErrorCode;
use output_agent::{data, reference};
use smol::stream::StreamExt;

/// The stand-in in `mode`, once its session is ready.
async fn start(mode: &str, data: &std::path::Path) -> AgentProcess {
    let mut command = smol::process::Command::new(output_agent::PROGRAM);
    command.args(output_agent::args(mode, data));
    let agent = AgentProcess::spawn(command, Default::default()).unwrap();
    let ready = agent.events().any(|e| output_agent::is_ready(&e)).await;
    assert!(ready, "no ready event");
    agent
}

#[test]
fn out_10_smol_fetch_output_walks_the_pages_into_the_sink() {
    smol::block_on(async {
        let (path, bytes) = data("fetch");
        let agent = start("serve", &path).await;
        let mut got = Vec::new();
        let mut seen = Vec::new();
        let mut sink = |page: &[u8], progress: musewire_core::client::FetchProgress| {
            got.extend_from_slice(page);
            seen.push(progress);
            Ok(())
        };
        let fetch = OutputFetch::new("s-1", "call-1", reference(), 4096)
            .unwrap()
            .expecting(bytes.len() as u64);
        let fetched = agent.fetch_output(fetch, &mut sink).await.unwrap();
        assert_eq!(got, bytes);
        assert_eq!(fetched.byte_len, bytes.len() as u64);
        assert_eq!(fetched.pages, seen.len() as u64);
        // The stand-in's pages are shorter than asked: the walk advanced by what came
        // (OUT-04), not by the 4096 asked.
        assert!(
            seen.iter()
                .any(|p| p.received % 4096 != 0 && p.received != 100_000),
            "{seen:?}"
        );
        // One page, typed; a failure's code typed.
        let params = ReadParams::from_value(&serde_json::json!({"sessionId": "s-1",
            "itemId": "call-1", "outputRef": "out-0a1b2c3d4e5f6071", "offsetBytes": 10,
            "lengthBytes": 100}))
        .unwrap();
        let page = agent.read_output(&params).await.unwrap();
        assert_eq!(page.offset_bytes, 10);
        assert_eq!(
            page.bytes().unwrap(),
            bytes[10..10 + page.byte_len as usize]
        );
        let mut foreign = params.clone();
        foreign.item_id = "call-2".into();
        let error = agent.read_output(&foreign).await.unwrap_err();
        assert_eq!(error.output_code(), Some(OutputErrorCode::Foreign));
        agent
            .shutdown(std::time::Duration::from_secs(2))
            .await
            .unwrap();
        let _ = std::fs::remove_file(path);
    })
}

#[test]
fn out_10_smol_read_output_to_an_agent_without_the_offer_is_refused() {
    smol::block_on(async {
        let (path, _) = data("nooffer");
        let agent = start("nooffer", &path).await;
        let fetch = OutputFetch::new("s-1", "call-1", reference(), 4096).unwrap();
        let error = agent
            .fetch_output(fetch, &mut |_: &[u8], _| Ok(()))
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                FetchError::Call {
                    error: CallError::Refused(ClientError::ReadOutputNotOffered),
                    ..
                }
            ),
            "{error}"
        );
        agent
            .shutdown(std::time::Duration::from_secs(2))
            .await
            .unwrap();
        let _ = std::fs::remove_file(path);
    })
}
