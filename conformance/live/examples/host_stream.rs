//! Single-session host path (issue 10 "Keep", issue 13 item 1): the typed
//! [`Client`](musewire_core::client::Client) fed an agent's stdout from a pipe, as a host
//! does: `cat STREAM | host_stream`.
//!
//! Reads stdin in 64 KiB reads (the drivers' read size), hands each read to the client as
//! [`Input::Stdout`], drains every action (typed [`ClientEvent`]s with [`AgentFrame`]s; the
//! client's own `negotiate_protocol` write is dropped, as nobody answers it), and at the end
//! prints one JSON line: bytes read and events by kind. `conformance/bench/run.sh` times it
//! against the reference `RpcClient` reading the same stream (`conformance/bench/host-stream.ts`).
//!
//! The client is a default host (no observe mode): it negotiates v2 when the ready frame
//! offers it, as the reference does; the stream's own negotiation response (`req-0`) is not
//! its request, so it arrives as [`ClientEvent::Unmatched`] and the decoder follows it
//! (FRAME-05), as do the `get_messages` responses (CALL-02).

use std::io::Read;
use std::time::Instant;

use musewire_core::client::{Action, Client, ClientConfig, ClientEvent, Input};
use musewire_core::wire::{AgentEvent, AgentFrame};

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
                    frame: AgentFrame::Event(AgentEvent::MessageUpdate(_)),
                } => self.message_updates += 1,
                ClientEvent::Frame { .. } => self.other_frames += 1,
                ClientEvent::Unmatched { .. } => self.unmatched += 1,
                ClientEvent::ProtocolWarning { .. } => self.warnings += 1,
                ClientEvent::Closed { .. } => self.closed += 1,
                _ => self.other += 1,
            }
        }
    }
}

fn main() -> std::io::Result<()> {
    let start = Instant::now();
    let mut client = Client::new(ClientConfig::default(), start);
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
        "{{\"bytes\":{bytes},\"message_updates\":{},\"unmatched\":{},\"other_frames\":{},\"other_events\":{},\"warnings\":{},\"seconds\":{:.4}}}",
        counts.message_updates,
        counts.unmatched,
        counts.other_frames,
        counts.other,
        counts.warnings,
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
