//! Allocations per round trip on the host path, end to end: a blocking `get_state` from the
//! handle to the typed answer back in the caller, over the bundled agent (this crate's
//! `bundled_agent` example, a process of its own: only the host's allocations are counted),
//! counted by a counting global allocator and split by thread: the caller's, and the others
//! (the reactor's loop thread). Frees are counted the same way, so the frees on the caller's
//! thread beyond its own allocations are what the loop thread made and the caller let go of
//! (a cross-thread free: glibc takes the allocating arena's lock).
//!
//!   cargo bench -p musewire-mio --bench round_trip_allocs
//!
//! (`cargo bench` builds the example first; `ROUND_TRIP_ALLOCS_TRACE=1` prints instead the
//! stack of each allocation of one round trip, on either side.) Prints one line per case, per round trip:
//! allocations and bytes on each side, frees on each side, and the time a round trip took.
//! Nothing is asserted: the figures are read, and compared before and after a change.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use musewire_core::client::Call;
use musewire_mio::{AgentProcess, Completions};
use musewire_wire::{GetState, SessionState};

/// The bundled agent to run, as the tests run it.
#[path = "../tests/common/mod.rs"]
mod common;
use common::bundled_agent;

/// The system allocator, counting each allocation, its bytes and each free, by thread.
struct Counting;

/// Counters of one side: allocations, bytes allocated, frees.
struct Side {
    allocs: AtomicU64,
    bytes: AtomicU64,
    frees: AtomicU64,
}

static CALLER: Side = Side::new();
static OTHERS: Side = Side::new();

thread_local! {
    /// Whether this thread is the measured caller.
    static IS_CALLER: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread is printing where an allocation came from (its own allocations
    /// are not traced).
    static TRACING: Cell<bool> = const { Cell::new(false) };
}

/// Whether each allocation's stack is printed (`ROUND_TRIP_ALLOCS_TRACE=1`: one round trip).
static TRACE: AtomicBool = AtomicBool::new(false);

/// Prints the stack of an allocation of `size` bytes on `side`, when tracing.
fn trace(side: &str, size: usize) {
    if !TRACE.load(Relaxed) || TRACING.try_with(|t| t.replace(true)) != Ok(false) {
        return;
    }
    let stack = std::backtrace::Backtrace::force_capture().to_string();
    let ours: Vec<&str> = stack
        .lines()
        .filter(|l| !l.contains(" at ") && !l.contains("round_trip_allocs::"))
        .map(str::trim_start)
        .filter(|l| l.contains("musewire") || l.contains("std::"))
        .take(5)
        .collect();
    eprintln!("{side} {size} B\n{}", ours.join("\n"));
    TRACING.with(|t| t.set(false));
}

impl Side {
    const fn new() -> Self {
        Side {
            allocs: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            frees: AtomicU64::new(0),
        }
    }

    /// The side of the running thread (the others' while its thread-local is gone).
    fn here() -> &'static Side {
        match IS_CALLER.try_with(Cell::get) {
            Ok(true) => &CALLER,
            _ => &OTHERS,
        }
    }

    fn name(&self) -> &'static str {
        match std::ptr::eq(self, &CALLER) {
            true => "caller",
            false => "loop",
        }
    }

    fn snapshot(&self) -> [u64; 3] {
        [
            self.allocs.load(Relaxed),
            self.bytes.load(Relaxed),
            self.frees.load(Relaxed),
        ]
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let side = Side::here();
        side.allocs.fetch_add(1, Relaxed);
        side.bytes.fetch_add(layout.size() as u64, Relaxed);
        trace(side.name(), layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        Side::here().frees.fetch_add(1, Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let side = Side::here();
        side.allocs.fetch_add(1, Relaxed);
        side.bytes.fetch_add(new_size as u64, Relaxed);
        trace(side.name(), new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `round` `rounds` times on this thread (after a few unmeasured), and prints the
/// counters' growth per round.
fn case(name: &str, rounds: u64, mut round: impl FnMut()) {
    for _ in 0..50 {
        round();
    }
    IS_CALLER.with(|c| c.set(true));
    let (caller, others) = (CALLER.snapshot(), OTHERS.snapshot());
    let start = Instant::now();
    for _ in 0..rounds {
        round();
    }
    let took = start.elapsed();
    let (caller_after, others_after) = (CALLER.snapshot(), OTHERS.snapshot());
    IS_CALLER.with(|c| c.set(false));
    let per = |after: u64, before: u64| (after - before) as f64 / rounds as f64;
    println!(
        "{name:<34} caller {:>5.1} allocs {:>6.0} B {:>5.1} frees | loop {:>5.1} allocs {:>6.0} B {:>5.1} frees | {:>6.1} us",
        per(caller_after[0], caller[0]),
        per(caller_after[1], caller[1]),
        per(caller_after[2], caller[2]),
        per(others_after[0], others[0]),
        per(others_after[1], others[1]),
        per(others_after[2], others[2]),
        took.as_secs_f64() * 1e6 / rounds as f64,
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let agent = AgentProcess::spawn(bundled_agent(), Default::default()).expect("the agent");
    agent.get_state(TIMEOUT).expect("the first get_state");
    if std::env::var_os("ROUND_TRIP_ALLOCS_TRACE").is_some() {
        // The stack of each allocation of one round trip, then nothing else.
        IS_CALLER.with(|c| c.set(true));
        TRACE.store(true, Relaxed);
        std::hint::black_box(agent.get_state(TIMEOUT).expect("get_state"));
        TRACE.store(false, Relaxed);
        return;
    }
    println!("per round trip (a get_state from the handle to the typed answer in the caller):");
    case("get_state, blocking call", 2000, || {
        std::hint::black_box(agent.get_state(TIMEOUT).expect("get_state"));
    });
    case("submit, then wait", 2000, || {
        let mut pending = agent
            .submit::<SessionState>(Call::Send(GetState::default().into()))
            .expect("submit");
        std::hint::black_box(pending.wait(TIMEOUT).expect("get_state"));
    });
    let done = Completions::new();
    case("submit_to, completions, try_take", 2000, || {
        let mut pending = agent
            .submit_to::<SessionState>(Call::Send(GetState::default().into()), &done, 1)
            .expect("submit_to");
        assert_eq!(done.next(TIMEOUT), Some(1));
        std::hint::black_box(pending.try_take().expect("answered").expect("get_state"));
    });
    agent.shutdown(Duration::from_secs(5)).expect("shutdown");
}
