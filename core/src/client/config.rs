//! How a [`Client`](super::Client) starts.

use std::path::PathBuf;
use std::time::Duration;

use crate::frame::{MAX_FRAME_BYTES, MAX_REASSEMBLED_FRAME_BYTES};
use crate::spill::{SpillOwner, SpillPolicy};

/// Configuration of a [`Client`](super::Client).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// Largest physical frame the client accepts (FRAME-02, FRAME-04). Default 1 MiB.
    pub max_frame_bytes: usize,
    /// Largest reassembled frame the client accepts (FRAME-04). Default 64 MiB.
    pub max_reassembled_frame_bytes: usize,
    /// Negotiate protocol v2 when the ready frame offers it (FRAME-04). Default true.
    pub negotiate_v2: bool,
    /// How long an agent that says nothing at all gets before it is treated as v1-only
    /// (FRAME-03). Commands sent before the session is ready are held and go out once it is.
    /// An agent that answers the start-up probe ([`ClientConfig::start_probe`]) is known
    /// sooner: this is only the bound for a silent one. Default 30 s.
    pub ready_timeout: Duration,
    /// As the agent starts, before any ready frame, ask it one question whose answer is
    /// harmless in v1 (`{"id":"req_0","type":"get_state"}`): an agent that sends no ready frame
    /// (pi) answers it and is taken as v1 at once, instead of after
    /// [`ClientConfig::ready_timeout`]; an agent that sends one (omp) has sent it before it
    /// reads the question, and negotiates v2 as before (FRAME-03, RULES.md). Default true.
    pub start_probe: bool,
    /// Whether the agent sends a ready frame at all. When false the session is ready at once,
    /// in v1. Default true.
    pub expect_ready: bool,
    /// How many bytes of the agent's stderr the closing error quotes (CALL-07). Default 4 KiB.
    pub stderr_tail_bytes: usize,
    /// Page size of the whole-history read (PAGE-07). Default 256, the most an agent serves.
    pub history_page_limit: u64,
    /// Observe a session another host drives (as `musewire tap` does): the client is ready at
    /// once, never negotiates itself, and follows a negotiation it sees on the wire, so it
    /// reads the agent's stream as that host does. Default false.
    pub observe: bool,
    /// The spill policy applied to host tool results before they are sent (SPILL-01..05):
    /// `max_inline_bytes` (`None`, the default: off) and whether the driver has a store to
    /// perform [`Action::SpillWrite`](super::Action::SpillWrite) with.
    pub spill: SpillPolicy,
    /// Where the driver's local store keeps spilled host tool results (SPILL-06): `None`, a
    /// private directory made in the temp dir on first use. The core never opens it.
    pub spill_dir: Option<PathBuf>,
    /// The owner session of spilled host tool results until a `get_state` or
    /// `get_session_stats` response names the agent's own (SPILL-05). Default none.
    pub spill_owner: Option<SpillOwner>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            max_frame_bytes: MAX_FRAME_BYTES,
            max_reassembled_frame_bytes: MAX_REASSEMBLED_FRAME_BYTES,
            negotiate_v2: true,
            ready_timeout: Duration::from_secs(30),
            expect_ready: true,
            start_probe: true,
            stderr_tail_bytes: 4096,
            history_page_limit: crate::paging::MAX_PAGE_MESSAGES,
            observe: false,
            spill: SpillPolicy::default(),
            spill_dir: None,
            spill_owner: None,
        }
    }
}
