//! Backpressure on events, written once for every driver:
//! when the application stops taking events, the driver's loop stops reading the agent's
//! stdout once it has read [`BACKLOG_BYTES`] past the last event taken, so the agent's pipe
//! fills and the agent waits, instead of the events piling up in memory. Reading goes on
//! while a caller waits for a call's answer (its answer must be able to arrive: responses
//! are routed to waiting callers, never held behind the events) and while the agent is being
//! stopped.
//!
//! The application's side counts what it takes in a shared [`Flow`] (atomics only: the core
//! starts no thread and reads no clock); the loop keeps a [`Backlog`] of what it read and
//! sent, and asks [`Backlog::pause`] before each read.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};

/// How many bytes of stdout the loop reads past the last event the application took, while
/// events it sent wait untaken.
pub const BACKLOG_BYTES: u64 = 2 << 20;

/// What the application's side and the loop share.
#[derive(Debug, Default)]
pub struct Flow {
    /// Events the application has taken.
    taken: AtomicU64,
    /// Callers blocked on a call.
    waiting: AtomicUsize,
    /// The loop has stopped reading and wants a wake when an event is taken.
    paused: AtomicBool,
}

impl Flow {
    /// The application took an event; true when the loop must be woken to read again.
    pub fn took(&self) -> bool {
        self.taken.fetch_add(1, SeqCst);
        self.unpause()
    }

    /// A caller blocks on a call until the guard drops. A loop whose calls may wait before
    /// they reach it (a bounded queue) wakes it when [`Flow::unpause`] says so.
    pub fn waiting(&self) -> Waiting<'_> {
        self.waiting.fetch_add(1, SeqCst);
        Waiting(self)
    }

    /// [`Flow::waiting`] for a call waited for later than it was made (a guard that owns
    /// its share of the flow): until it drops, the loop reads on as for a blocked caller.
    pub fn waiting_owned(self: &std::sync::Arc<Self>) -> WaitingOwned {
        self.waiting.fetch_add(1, SeqCst);
        WaitingOwned(std::sync::Arc::clone(self))
    }

    /// True when the loop had stopped reading and must be woken to look again.
    pub fn unpause(&self) -> bool {
        self.paused.swap(false, SeqCst)
    }
}

/// A caller blocked on a call (see [`Flow::waiting`]).
#[derive(Debug)]
pub struct Waiting<'a>(&'a Flow);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, SeqCst);
    }
}

/// A call waited for later than it was made (see [`Flow::waiting_owned`]).
#[derive(Debug)]
pub struct WaitingOwned(std::sync::Arc<Flow>);

impl Drop for WaitingOwned {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, SeqCst);
    }
}

/// The loop's count of what it read and sent.
#[derive(Debug, Default)]
pub struct Backlog {
    /// Events sent to the application.
    sent: u64,
    /// Bytes of stdout read.
    read: u64,
    /// Bytes of stdout read when the last event the application took was sent.
    taken_at: u64,
    /// For each event sent and not yet known taken: its number and `read` when it was sent.
    stamps: VecDeque<(u64, u64)>,
}

impl Backlog {
    /// `n` bytes of stdout were read.
    pub fn read(&mut self, n: usize) {
        self.read += n as u64;
    }

    /// An event went to the application.
    pub fn sent(&mut self) {
        self.stamps.push_back((self.sent, self.read));
        self.sent += 1;
    }

    fn full(&mut self, flow: &Flow) -> bool {
        if flow.waiting.load(SeqCst) > 0 {
            return false;
        }
        let taken = flow.taken.load(SeqCst);
        while let Some(&(number, read)) = self.stamps.front() {
            if number >= taken {
                break;
            }
            self.taken_at = read;
            self.stamps.pop_front();
        }
        taken < self.sent && self.read - self.taken_at > BACKLOG_BYTES
    }

    /// Whether to stop reading stdout now. When it says so the application's next take wakes
    /// the loop (said before a last look, so a take in between is never missed).
    pub fn pause(&mut self, flow: &Flow) -> bool {
        if !self.full(flow) {
            return false;
        }
        flow.paused.store(true, SeqCst);
        if self.full(flow) {
            return true;
        }
        flow.paused.store(false, SeqCst);
        false
    }
}
