//! Single-session host path benchmark: the typed [`Client`](musewire_core::client::Client) fed
//! an agent's stdout from a pipe, as a host does: `cat STREAM | host_stream`.
//!
//! Reads stdin in 64 KiB reads (the drivers' read size), hands each read to the client as
//! [`Input::Stdout`], drains every action (typed [`ClientEvent`]s with [`AgentFrame`]s), and
//! at the end prints one JSON line: bytes read and events by kind. `conformance/bench/run.sh`
//! times it against the reference `RpcClient` reading the same stream
//! (`conformance/bench/host-stream.ts`).
//!
//! The stream is what an agent wrote to a host that negotiated v2 with request `req-0`, so
//! the client reads it as that host did: [`ClientConfig::observe`], which follows the
//! negotiation it sees on the wire (FRAME-05). A default client would send a
//! `negotiate_protocol` of its own and, as nobody answers it, close the session at the first
//! `rpc_chunk` (FRAME-05: no chunk before the negotiation completes); the reference client
//! accepts chunks as soon as the ready frame offers v2. The `get_messages` responses match
//! no request of this client and arrive as [`ClientEvent::Unmatched`] (CALL-02), fully typed.

use std::io::Read;
use std::time::Instant;

use musewire_core::client::{Action, Client, ClientConfig, ClientEvent, Input};
use musewire_wire::{AgentFrame, SessionEvent};

/// Events by kind.
#[derive(Default)]
struct Counts {
    message_updates: u64,
    other_frames: u64,
    unmatched: u64,
    warnings: u64,
    other: u64,
    closed: u64,
}

impl Counts {
    fn drain(&mut self, client: &mut Client) {
        while let Some(action) = client.poll_action() {
            let Action::Event(event) = action else {
                continue;
            };
            match event {
                ClientEvent::Frame {
                    frame: AgentFrame::Event(SessionEvent::MessageUpdate(_)),
                } => self.message_updates += 1,
                ClientEvent::Frame { .. } => self.other_frames += 1,
                ClientEvent::Unmatched { .. } => self.unmatched += 1,
                ClientEvent::ProtocolWarning { .. } => self.warnings += 1,
                ClientEvent::Closed { error } => {
                    eprintln!("host_stream: the session closed: {error}");
                    self.closed += 1;
                }
                _ => self.other += 1,
            }
        }
    }
}

fn main() -> std::io::Result<()> {
    let start = Instant::now();
    let config = ClientConfig {
        observe: true,
        ..ClientConfig::default()
    };
    let mut client = Client::new(config, start);
    let mut counts = Counts::default();
    let mut stdin = std::io::stdin().lock();
    let mut buf = vec![0u8; 64 * 1024];
    let mut bytes = 0u64;
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        bytes += n as u64;
        client.handle(Instant::now(), Input::stdout(&buf[..n]));
        counts.drain(&mut client);
    }
    client.handle(Instant::now(), Input::StdoutEnd);
    counts.drain(&mut client);
    println!(
        "{{\"bytes\":{bytes},\"message_updates\":{},\"unmatched\":{},\"other_frames\":{},\"other_events\":{},\"warnings\":{},\"closed\":{},\"seconds\":{:.4}}}",
        counts.message_updates,
        counts.unmatched,
        counts.other_frames,
        counts.other,
        counts.warnings,
        counts.closed,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
