//! The agents' pipes' own reactor (issue 36): each pipe registered once, edge-triggered, on an
//! epoll of musewire-smol's own (mio's), waited on by a thread of its own; smol stays the
//! executor.
//!
//! smol's reactor (async-io) registers a source one-shot: every wait on a pipe re-arms it
//! (`epoll_ctl`, measured 1.5 a host round trip). Here a pipe is registered when it is made
//! and deregistered when it is dropped, and a task reads or writes until the call would
//! block, and only then leaves its [`Waker`] for the next edge. The thread's wait has no
//! timeout (the drivers' timers stay on smol's), so it re-arms no timer either.
//!
//! The thread is started at the first registration and lives as long as the process; a wake
//! from it reaches the woken task's executor thread like any other cross-thread wake.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use mio::unix::SourceFd;
use mio::{Events, Interest, Registry, Token};
use smol::io::{AsyncRead, AsyncWrite};

/// The events one `epoll_wait` takes at most.
const EVENTS: usize = 256;

/// The reactor, once its thread is started.
static REACTOR: Mutex<Option<Reactor>> = Mutex::new(None);

/// The epoll's registry and the registered sources; its thread waits on the epoll.
#[derive(Clone)]
struct Reactor {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry,
    /// The registered sources, by token.
    sources: Mutex<BTreeMap<usize, Arc<Source>>>,
    /// The next token.
    next: AtomicUsize,
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

impl Reactor {
    /// The reactor, its thread started on first use.
    fn get() -> io::Result<Reactor> {
        let mut reactor = lock(&REACTOR);
        if let Some(reactor) = &*reactor {
            return Ok(reactor.clone());
        }
        let poll = mio::Poll::new()?;
        let started = Reactor {
            inner: Arc::new(Inner {
                registry: poll.registry().try_clone()?,
                sources: Mutex::new(BTreeMap::new()),
                next: AtomicUsize::new(0),
            }),
        };
        let run = started.clone();
        std::thread::Builder::new()
            .name("musewire-smol-pipes".into())
            .spawn(move || run.run(poll))?;
        *reactor = Some(started.clone());
        Ok(started)
    }

    /// The thread: waits on the epoll and hands each event to its source, for ever. A wait
    /// that fails other than by a signal has a bad epoll or event buffer, which this thread
    /// owns and never changes: it cannot happen, and is retried like an interrupted one.
    fn run(self, mut poll: mio::Poll) {
        let mut events = Events::with_capacity(EVENTS);
        loop {
            if poll.poll(&mut events, None).is_err() {
                continue;
            }
            for event in events.iter() {
                self.dispatch(event);
            }
        }
    }

    /// An event for its token: its readiness noted and its waiting tasks woken.
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

/// A pipe end registered with the reactor, edge-triggered, for the lifetime of this value:
/// read or written non-blocking, a task waiting only when a read or write would block.
pub(crate) struct PipeSource {
    file: File,
    token: usize,
    source: Arc<Source>,
    reactor: Reactor,
}

impl PipeSource {
    /// The pipe end `fd`, made non-blocking, registered for reading (a child's stdout or
    /// stderr).
    pub(crate) fn reader(fd: OwnedFd) -> io::Result<Self> {
        Self::new(fd, Interest::READABLE)
    }

    /// The pipe end `fd`, made non-blocking, registered for writing (a child's stdin).
    pub(crate) fn writer(fd: OwnedFd) -> io::Result<Self> {
        Self::new(fd, Interest::WRITABLE)
    }

    fn new(fd: OwnedFd, interest: Interest) -> io::Result<Self> {
        rustix::io::ioctl_fionbio(&fd, true)?;
        let reactor = Reactor::get()?;
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
        Ok(PipeSource {
            file: File::from(fd),
            token,
            source,
            reactor,
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

impl Drop for PipeSource {
    fn drop(&mut self) {
        let inner = &self.reactor.inner;
        let _ = inner
            .registry
            .deregister(&mut SourceFd(&self.file.as_raw_fd()));
        lock(&inner.sources).remove(&self.token);
    }
}

impl AsyncRead for PipeSource {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_op(cx, true, buf.len(), |mut file| file.read(buf))
    }
}

impl AsyncWrite for PipeSource {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_op(cx, false, buf.len(), |mut file| file.write(buf))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
