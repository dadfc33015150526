//! # musewire-core
//!
//! The sans-IO core of musewire: everything the coding-agent RPC protocol
//! (`<agent> --mode rpc`, newline-delimited JSON over stdio, v2 chunking of
//! large frames) requires, with no I/O, no clock reads, no threads and no
//! randomness of its own. Its machines speak the typed wire model of the
//! `musewire-wire` crate (commands, responses, events, messages), as the ACP SDK
//! speaks its schema crate's.
//!
//! ## Features
//!
//! None is on by default: a host that only drives agents ([`client`], with [`frame`],
//! [`paging`], [`output`], [`spill`] and [`blocks`]) and an agent ([`agent`]) build
//! without them.
//!
//! - **`mcp`**: the `mcp` module, a sans-IO client of one MCP server (over stdio, or HTTP
//!   with SSE), whose tools a host can offer its agent as host tools.
//! - **`acp`** (turns on `mcp`): the `acp` module, the [Agent Client
//!   Protocol](https://agentclientprotocol.com) bridge that makes an RPC agent an ACP agent
//!   for editors, and its dependency on the ACP schema (`agent-client-protocol-schema`).
//! - **`fuzzing`**: each module's fuzz bodies (those of `mcp` and `acp` with those features).
//!
//! ## The run-loop contract
//!
//! Every state machine of this crate ([`client::Client`], [`agent::Agent`], and the framing
//! layer under them) has one shape, and every driver runs it the same way:
//!
//! 1. **One input at a time.** Everything the machine learns arrives as one input enum
//!    through one method with the current time: [`client::Client::handle`] takes a
//!    [`client::Input`] (bytes read from the agent's stdout or stderr, the end of stdout, the
//!    agent's exit, a timer, or a call of the application).
//! 2. **Then drain.** After every input the driver calls `poll_action` until it returns
//!    `None`, and performs each action in order (write these bytes, give this event to the
//!    application, stop the agent, save this text and hand the store's answer back in as an
//!    input). Actions own their data.
//! 3. **Then read the timer.** Only after draining, the driver reads `poll_timeout` and
//!    sleeps until the earliest of that instant and the next readiness. When the instant has
//!    come it hands in the timer input (`Input::Timeout`), and drains again.
//!
//! **The time rule:** the core never reads a clock. The driver passes `now` with every input,
//! from a monotonic clock ([`std::time::Instant`]), and `now` never goes backwards; a timer
//! input whose deadline has not come changes nothing. The same inputs at the same times give
//! the same actions, byte for byte, which is what lets a recorded session (its inputs) replay
//! as a conformance transcript.
//!
//! A complete loop over an in-memory agent (a real driver reads pipes instead):
//!
//! ```
//! use std::time::Instant;
//! use musewire_core::client::{Action, Call, Client, ClientEvent, Input};
//!
//! let mut client = Client::new(Default::default(), Instant::now());
//! // What the agent will write, one read at a time (a v1-only agent: no v2 offered).
//! let mut reads: Vec<&[u8]> = vec![
//!     b"{\"type\":\"ready\",\"protocolVersion\":1,\"supportedProtocolVersions\":[1]}\n",
//!     b"{\"id\":\"req_1\",\"type\":\"response\",\"command\":\"prompt\",\"success\":true}\n",
//!     b"{\"type\":\"agent_start\"}\n{\"type\":\"agent_end\",\"messages\":[]}\n",
//! ];
//! reads.reverse();
//! let mut input = Input::Call(Call::Prompt("hello".into(), None));
//! let mut written = Vec::new();
//! let mut finished = false;
//! loop {
//!     // 1. One input, with the time.
//!     client.handle(Instant::now(), input);
//!     // 2. Drain every action, in order.
//!     while let Some(action) = client.poll_action() {
//!         match action {
//!             Action::Write { bytes } => written.extend(bytes),
//!             Action::Event(ClientEvent::TurnFinished) => finished = true,
//!             Action::Event(_) | Action::StopAgent => {}
//!             // Only with a spill policy (`ClientConfig::spill`): save, then hand in
//!             // `Input::SpillDone` with the store's answer.
//!             Action::SpillWrite { .. } => unreachable!("no spill policy here"),
//!         }
//!     }
//!     // 3. Wait for the next readiness or `client.poll_timeout()`, whichever comes first.
//!     input = match reads.pop() {
//!         Some(bytes) => Input::stdout(bytes),
//!         None => break,
//!     };
//! }
//! assert!(finished);
//! // The start-up probe (FRAME-03), then the prompt once the agent was known ready.
//! assert_eq!(written, b"{\"id\":\"req_0\",\"type\":\"get_state\"}\n{\"id\":\"req_1\",\"type\":\"prompt\",\"message\":\"hello\"}\n");
//! ```
//!
//! The framing layer ([`frame`]) follows the same contract on its own:
//!
//! ```
//! use musewire_core::frame::{StreamDecoder, DecodeEvent};
//!
//! let mut decoder = StreamDecoder::new();
//! let mut frames = Vec::new();
//! // The driver reads bytes from the agent's stdout, in any split…
//! for read in [&b"{\"type\":\"ready\",\"protocolVersion\":1}\n{\"type\":\"agent_"[..], b"start\"}\n"] {
//!     decoder.handle_bytes(read);
//!     // …and drains every event before reading again.
//!     while let Some(event) = decoder.poll_event() {
//!         match event {
//!             DecodeEvent::Frame(frame) => frames.push(frame.frame_type().unwrap_or("").to_owned()),
//!             DecodeEvent::Error(error) => panic!("{error}"),
//!         }
//!     }
//! }
//! decoder.handle_eof();
//! assert!(decoder.poll_event().is_none());
//! assert_eq!(frames, ["ready", "agent_start"]);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "acp")]
pub mod acp;
pub mod agent;
pub mod blocks;
pub mod client;
pub mod formats;
pub mod frame;
#[cfg(feature = "mcp")]
pub mod mcp;
mod outcome;
pub mod output;
pub mod paging;
pub mod spill;
use musewire_wire as wire;
