//! The ACP server loop's own wait ([`serve_acp_stdio`](crate::acp::serve_acp_stdio), issue
//! 36): the editor's stdio and the agents' pipes registered once, edge-triggered, on a
//! [`Reactor`] of the loop's own, and the bridge's deadline passed as the wait's timeout.
//!
//! [`block_on`] runs one future (the loop's executor running the loop) on this thread, waiting
//! on that reactor's epoll between polls. What is not registered there keeps working on
//! smol's reactor (async-io's own thread drives it while this thread waits here): the
//! children's exits, the HTTP MCP exchanges, the blocking pool's work and smol's timers wake
//! their tasks from other threads through an `eventfd` registered with the epoll. A wake from
//! this thread (a task sending the loop an event) costs no system call.

use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use crate::reactor::{lock, Reactor, Waiter, WAKE};

/// How many times [`block_on`] polls its future, woken each time, before it looks at the
/// epoll.
const POLLS_A_LOOK: u32 = 64;

/// The loop's reactor, the wake of the future [`block_on`] runs, and the loop's deadline.
/// Cloned into the tasks that register sources or set the deadline.
#[derive(Clone)]
pub(crate) struct LoopWait {
    /// Where the loop's editor stdio and agents' pipes are registered.
    pub(crate) reactor: Reactor,
    inner: Arc<Inner>,
}

struct Inner {
    wake: Arc<LoopWake>,
    deadline: Mutex<Deadline>,
}

/// The loop's deadline: the wait's timeout.
#[derive(Default)]
struct Deadline {
    at: Option<Instant>,
    /// It came (and was not taken yet).
    due: bool,
    waker: Option<Waker>,
}

/// The wake of the future [`block_on`] runs: a flag, and the `eventfd` written only when the
/// thread is waiting (a wake from another thread while it sleeps).
struct LoopWake {
    woken: AtomicBool,
    sleeping: AtomicBool,
    eventfd: mio::Waker,
}

impl Wake for LoopWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Either the waiting thread sees `woken` before it sleeps, or this sees `sleeping`.
        if !self.woken.swap(true, Ordering::SeqCst) && self.sleeping.load(Ordering::SeqCst) {
            let _ = self.eventfd.wake();
        }
    }
}

impl LoopWait {
    /// A loop's wait on a reactor of its own, and that reactor's waiter.
    pub(crate) fn new() -> io::Result<(LoopWait, Waiter)> {
        let (reactor, waiter) = Reactor::new()?;
        let eventfd = mio::Waker::new(reactor.registry(), WAKE)?;
        let inner = Inner {
            wake: Arc::new(LoopWake {
                woken: AtomicBool::new(true),
                sleeping: AtomicBool::new(false),
                eventfd,
            }),
            deadline: Mutex::new(Deadline::default()),
        };
        Ok((
            LoopWait {
                reactor,
                inner: Arc::new(inner),
            },
            waiter,
        ))
    }

    /// The loop's next deadline (`None`: none): the wait ends by then.
    pub(crate) fn set_deadline(&self, at: Option<Instant>) {
        let mut deadline = lock(&self.inner.deadline);
        deadline.at = at;
        if at.is_none() {
            deadline.due = false;
        }
    }

    /// Ready once the deadline set last has come.
    pub(crate) fn poll_deadline(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut deadline = lock(&self.inner.deadline);
        if std::mem::take(&mut deadline.due) {
            return Poll::Ready(());
        }
        if !deadline
            .waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            deadline.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// The wait's timeout, or its deadline seen to have come (`now` and later).
    fn timeout(&self, now: Instant) -> Option<Duration> {
        lock(&self.inner.deadline)
            .at
            .map(|at| at.saturating_duration_since(now))
    }

    /// Notes the deadline come, if it has by `now`.
    fn check_deadline(&self, now: Instant) {
        let waker = {
            let mut deadline = lock(&self.inner.deadline);
            match deadline.at {
                Some(at) if at <= now => {
                    deadline.at = None;
                    deadline.due = true;
                    deadline.waker.take()
                }
                _ => None,
            }
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// Runs `future` to its end on this thread, waiting on `waiter`'s epoll while it is pending;
/// `wait` is `waiter`'s.
pub(crate) fn block_on<T>(
    wait: &LoopWait,
    waiter: &mut Waiter,
    future: impl Future<Output = T>,
) -> io::Result<T> {
    let wake = wait.inner.wake.clone();
    let waker = Waker::from(wake.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    // Polls since the last look at the epoll: a future woken again and again still lets the
    // registered sources' events in.
    let mut polls = 0;
    loop {
        if wake.woken.swap(false, Ordering::SeqCst) {
            if let Poll::Ready(done) = future.as_mut().poll(&mut cx) {
                return Ok(done);
            }
            polls += 1;
            if polls < POLLS_A_LOOK {
                continue;
            }
        }
        polls = 0;
        wake.sleeping.store(true, Ordering::SeqCst);
        // Woken (here, or from another thread as it went to sleep): only a look.
        let timeout = match wake.woken.load(Ordering::SeqCst) {
            true => Some(Duration::ZERO),
            false => wait.timeout(Instant::now()),
        };
        let waited = waiter.wait(timeout);
        // Awake before the events wake their tasks: a wake from here writes no `eventfd`.
        wake.sleeping.store(false, Ordering::SeqCst);
        waited?;
        waiter.dispatch(&wait.reactor);
        if timeout.is_some() {
            wait.check_deadline(Instant::now());
        }
    }
}
