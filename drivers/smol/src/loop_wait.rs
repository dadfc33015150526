//! The ACP server loop's own wait ([`serve_acp_stdio`](crate::acp::serve_acp_stdio), issue
//! 36): the editor's stdio and the agents' pipes registered once, edge-triggered, on an epoll
//! of the loop's own (mio's), and the bridge's deadline passed as the wait's timeout.
//!
//! smol's reactor (async-io) registers a source one-shot: every wait on a pipe re-arms it
//! (`epoll_ctl`), and polling's wait re-arms a timerfd and its notifier before each
//! `epoll_wait` whether or not a timer is due (`timerfd_settime` and two `epoll_ctl`). A wake
//! here costs the `epoll_wait` and the reads and writes it is for.
//!
//! [`block_on`] runs one future (the loop's executor running the loop) on this thread, waiting
//! on that epoll between polls. What is not registered here keeps working on smol's reactor
//! (async-io's own thread drives it while this thread waits here): the children's exits, the
//! HTTP MCP exchanges, the blocking pool's work and smol's timers wake their tasks from other
//! threads through an `eventfd` registered with the epoll. A wake from this thread (a task
//! sending the loop an event) costs no system call.

use std::collections::BTreeMap;
use std::fs::File;
use std::future::Future;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Registry, Token};
use smol::io::{AsyncRead, AsyncWrite};

/// The token of the cross-thread wake's `eventfd`.
const WAKE: Token = Token(0);

/// How many times [`block_on`] polls its future, woken each time, before it looks at the
/// epoll.
const POLLS_A_LOOK: u32 = 64;

/// The events one `epoll_wait` takes at most.
const EVENTS: usize = 64;

/// The loop's epoll: where its sources are registered and its deadline is kept. Cloned into
/// the tasks that register sources.
#[derive(Clone)]
pub(crate) struct Reactor {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry,
    /// The wake of the future [`block_on`] runs.
    wake: Arc<LoopWake>,
    /// The registered sources, by token.
    sources: Mutex<BTreeMap<usize, Arc<Source>>>,
    /// The next token.
    next: AtomicUsize,
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

/// One registered file's readiness and the tasks waiting for it.
#[derive(Default)]
struct Source {
    ready: Mutex<Ready>,
}

#[derive(Default)]
struct Ready {
    readable: bool,
    writable: bool,
    /// Counts the events: a read that would block clears readiness only when no event came
    /// since it looked.
    events: u64,
    reader: Option<Waker>,
    writer: Option<Waker>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The epoll itself, waited on by [`block_on`] on the thread that made it.
pub(crate) struct Waiter {
    poll: mio::Poll,
    events: Events,
}

impl Reactor {
    /// A reactor and its waiter.
    pub(crate) fn new() -> io::Result<(Reactor, Waiter)> {
        let poll = mio::Poll::new()?;
        let registry = poll.registry().try_clone()?;
        let eventfd = mio::Waker::new(&registry, WAKE)?;
        let inner = Inner {
            registry,
            wake: Arc::new(LoopWake {
                woken: AtomicBool::new(true),
                sleeping: AtomicBool::new(false),
                eventfd,
            }),
            sources: Mutex::new(BTreeMap::new()),
            next: AtomicUsize::new(WAKE.0 + 1),
            deadline: Mutex::new(Deadline::default()),
        };
        let waiter = Waiter {
            poll,
            events: Events::with_capacity(EVENTS),
        };
        Ok((
            Reactor {
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

    /// An event for `token`: its readiness noted and its waiting tasks woken.
    fn dispatch(&self, event: &mio::event::Event) {
        let source = lock(&self.inner.sources).get(&event.token().0).cloned();
        let Some(source) = source else {
            return;
        };
        let (reader, writer) = {
            let mut ready = lock(&source.ready);
            ready.events += 1;
            let (mut reader, mut writer) = (None, None);
            if event.is_readable() || event.is_read_closed() || event.is_error() {
                ready.readable = true;
                reader = ready.reader.take();
            }
            if event.is_writable() || event.is_write_closed() || event.is_error() {
                ready.writable = true;
                writer = ready.writer.take();
            }
            (reader, writer)
        };
        reader.into_iter().chain(writer).for_each(Waker::wake);
    }
}

/// Runs `future` to its end on this thread, waiting on `waiter`'s epoll while it is pending;
/// `reactor` is `waiter`'s.
pub(crate) fn block_on<T>(
    reactor: &Reactor,
    waiter: &mut Waiter,
    future: impl Future<Output = T>,
) -> io::Result<T> {
    let wake = reactor.inner.wake.clone();
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
            false => reactor.timeout(Instant::now()),
        };
        let waited = waiter.poll.poll(&mut waiter.events, timeout);
        wake.sleeping.store(false, Ordering::SeqCst);
        match waited {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
            Ok(()) => {}
        }
        for event in waiter.events.iter() {
            if event.token() != WAKE {
                reactor.dispatch(event);
            }
        }
        if timeout.is_some() {
            reactor.check_deadline(Instant::now());
        }
    }
}

/// A file registered with a [`Reactor`], edge-triggered, for the lifetime of this value:
/// read and written non-blocking, a task waiting only when a read or write would block.
pub(crate) struct Registered {
    file: File,
    token: usize,
    source: Arc<Source>,
    reactor: Reactor,
}

impl Registered {
    /// `fd`, made non-blocking, registered with `reactor` for `interest`.
    pub(crate) fn new(reactor: &Reactor, fd: OwnedFd, interest: Interest) -> io::Result<Self> {
        rustix::io::ioctl_fionbio(&fd, true)?;
        let inner = &reactor.inner;
        let token = inner.next.fetch_add(1, Ordering::Relaxed);
        // Ready until a read or write says otherwise: an edge before the registration is
        // not reported.
        let source = Arc::new(Source {
            ready: Mutex::new(Ready {
                readable: true,
                writable: true,
                ..Ready::default()
            }),
        });
        lock(&inner.sources).insert(token, source.clone());
        let registered =
            inner
                .registry
                .register(&mut SourceFd(&fd.as_raw_fd()), Token(token), interest);
        if let Err(error) = registered {
            lock(&inner.sources).remove(&token);
            return Err(error);
        }
        Ok(Registered {
            file: File::from(fd),
            token,
            source,
            reactor: reactor.clone(),
        })
    }

    /// Does `op` once the file is ready for it (`read`: readable, else writable): until it
    /// would block, after which the task waits for the next edge. An `op` that moved fewer
    /// bytes than asked (`asked`) drained the pipe or filled it: the next one waits for an
    /// edge too, without a `read` or `write` that would block.
    fn poll_op(
        &self,
        cx: &mut Context<'_>,
        read: bool,
        asked: usize,
        mut op: impl FnMut(&File) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        loop {
            let seen = {
                let mut ready = lock(&self.source.ready);
                let (flag, waiting) = match read {
                    true => (ready.readable, &mut ready.reader),
                    false => (ready.writable, &mut ready.writer),
                };
                if !flag {
                    if !waiting.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                        *waiting = Some(cx.waker().clone());
                    }
                    return Poll::Pending;
                }
                ready.events
            };
            let done = op(&self.file);
            let spent = match &done {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => e.kind() == io::ErrorKind::WouldBlock,
                Ok(n) => *n > 0 && *n < asked,
            };
            if spent {
                let mut ready = lock(&self.source.ready);
                if ready.events == seen {
                    match read {
                        true => ready.readable = false,
                        false => ready.writable = false,
                    }
                }
            }
            match done {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                done => return Poll::Ready(done),
            }
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let inner = &self.reactor.inner;
        let _ = inner
            .registry
            .deregister(&mut SourceFd(&self.file.as_raw_fd()));
        lock(&inner.sources).remove(&self.token);
    }
}

impl AsyncRead for Registered {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_op(cx, true, buf.len(), |mut file| file.read(buf))
    }
}

impl AsyncWrite for Registered {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_op(cx, false, buf.len(), |mut file| file.write(buf))
    }

    /// `writev`: the lines waiting go out in one system call.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let asked = bufs.iter().map(|b| b.len()).sum();
        self.poll_op(cx, false, asked, |mut file| file.write_vectored(bufs))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
