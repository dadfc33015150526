//! The smol driver's own reactor (issue 36): files registered once, edge-triggered, on an
//! epoll of its own (mio's), read and written until a call would block, and only then waited
//! on; smol stays the executor.
//!
//! smol's reactor (async-io) registers a source one-shot: every wait on a pipe re-arms it
//! (`epoll_ctl`), and polling's wait re-arms a timerfd and its notifier before each
//! `epoll_wait` whether or not a timer is due (`timerfd_settime` and two `epoll_ctl`). A wake
//! here costs the `epoll_wait` and the reads and writes it is for.
//!
//! Two kinds are made of it:
//! - **The shared one** ([`Reactor::shared`]): the agents' pipes of the host kit, waited on by a
//!   thread of its own, started at the first registration, that lives as long as the process.
//!   Its wait has no timeout (the host's timers stay on smol's), so it re-arms no timer either;
//!   a wake from it reaches the woken task's executor thread like any other cross-thread wake.
//! - **The ACP server loop's** ([`Reactor::new`]): waited on by the loop's own thread between
//!   polls of the loop, with the bridge's deadline as the wait's timeout
//!   ([`crate::loop_wait`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Events, Interest, Registry, Token};
use smol::io::{AsyncRead, AsyncWrite};

/// The token no source gets: the waiter's owner's cross-thread wake (an `eventfd`), whose
/// events the wait passes over.
pub(crate) const WAKE: Token = Token(0);

/// The events one `epoll_wait` takes at most.
const EVENTS: usize = 256;

/// The shared reactor, once its thread is started.
static SHARED: Mutex<Option<Reactor>> = Mutex::new(None);

/// An epoll: where its sources are registered. Cloned into the tasks that register sources.
#[derive(Clone)]
pub(crate) struct Reactor {
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

/// The mutex's guard, poisoned or not.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The epoll itself, waited on by the thread that runs the ACP loop
/// ([`block_on`](crate::loop_wait::block_on)) or by the shared reactor's thread.
pub(crate) struct Waiter {
    poll: mio::Poll,
    events: Events,
}

impl Reactor {
    /// A reactor and its waiter.
    pub(crate) fn new() -> io::Result<(Reactor, Waiter)> {
        let poll = mio::Poll::new()?;
        let inner = Inner {
            registry: poll.registry().try_clone()?,
            sources: Mutex::new(BTreeMap::new()),
            next: AtomicUsize::new(WAKE.0 + 1),
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

    /// Its epoll's registry (for a wake of the waiter's owner, under [`WAKE`]).
    #[cfg(feature = "acp")]
    pub(crate) fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The shared reactor, its thread started on first use.
    pub(crate) fn shared() -> io::Result<Reactor> {
        let mut shared = lock(&SHARED);
        if let Some(reactor) = &*shared {
            return Ok(reactor.clone());
        }
        let (reactor, mut waiter) = Reactor::new()?;
        let run = reactor.clone();
        std::thread::Builder::new()
            .name("musewire-smol-pipes".into())
            // A wait that fails other than by a signal has a bad epoll or event buffer,
            // which this thread owns and never changes: it cannot happen, and is retried
            // like an interrupted one.
            .spawn(move || loop {
                if waiter.wait(None).is_ok() {
                    waiter.dispatch(&run);
                }
            })?;
        *shared = Some(reactor.clone());
        Ok(reactor)
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

impl Waiter {
    /// Waits on the epoll for up to `timeout` (`None`: until an event). A signal ends the
    /// wait early without an error. The events are handed out by [`Waiter::dispatch`].
    pub(crate) fn wait(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        match self.poll.poll(&mut self.events, timeout) {
            // mio empties the events before each wait: none are left from the last.
            Err(error) if error.kind() == io::ErrorKind::Interrupted => Ok(()),
            waited => waited,
        }
    }

    /// Hands each event of the last wait to its source of `reactor` (the waiter's), waking
    /// the tasks waiting on it.
    pub(crate) fn dispatch(&self, reactor: &Reactor) {
        for event in self.events.iter() {
            if event.token() != WAKE {
                reactor.dispatch(event);
            }
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
    /// What the file is registered for while its writes go through ([`idle`]).
    idle: Interest,
    /// Registered for writability too: a write would have blocked, or came up short, and
    /// no full write has gone through since.
    write_armed: bool,
}

/// What a file registered for `interest` is registered for while its writes go through:
/// without writability, so that a reader taking what was written (each line an editor or an
/// agent reads) is no wake-up here. A write end alone is registered for priority data,
/// which a pipe never has: only its errors and hang-ups are reported (epoll reports them
/// whatever the interest).
fn idle(interest: Interest) -> Interest {
    interest
        .remove(Interest::WRITABLE)
        .unwrap_or(Interest::PRIORITY)
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
        let idle = idle(interest);
        let registered =
            inner
                .registry
                .register(&mut SourceFd(&fd.as_raw_fd()), Token(token), idle);
        if let Err(error) = registered {
            lock(&inner.sources).remove(&token);
            return Err(error);
        }
        Ok(Registered {
            file: File::from(fd),
            token,
            source,
            reactor: reactor.clone(),
            idle,
            write_armed: false,
        })
    }

    /// Registers the file for writability too (`armed`) or not: an edge-triggered
    /// registration made while the file is writable reports it at once, so a write that
    /// blocked just before is woken.
    fn arm_writes(&mut self, armed: bool) -> io::Result<()> {
        if self.write_armed == armed {
            return Ok(());
        }
        let interest = match armed {
            true => self.idle.add(Interest::WRITABLE),
            false => self.idle,
        };
        self.reactor.inner.registry.reregister(
            &mut SourceFd(&self.file.as_raw_fd()),
            Token(self.token),
            interest,
        )?;
        self.write_armed = armed;
        Ok(())
    }

    /// For a file waited on and never read (a pidfd): ready with the count of reports so far
    /// once it was reported readable (from the registration on it counts as readable) and
    /// [`Registered::not_readable`] has not cleared that since; else the task is woken at the
    /// next report.
    pub(crate) fn poll_readable(&mut self, cx: &mut Context<'_>) -> Poll<u64> {
        let mut ready = lock(&self.source.ready);
        if ready.readable {
            return Poll::Ready(ready.events);
        }
        if !ready
            .reader
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            ready.reader = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// The count of reports so far, when the file counts as readable
    /// ([`Registered::poll_readable`] without a task to wake).
    pub(crate) fn readable(&self) -> Option<u64> {
        let ready = lock(&self.source.ready);
        ready.readable.then_some(ready.events)
    }

    /// What the file was ready for was not there when looked at after `seen` reports: it no
    /// longer counts as readable, unless a report came since.
    pub(crate) fn not_readable(&self, seen: u64) {
        let mut ready = lock(&self.source.ready);
        if ready.events == seen {
            ready.readable = false;
        }
    }

    /// Does `op` once the file is ready for it (`read`: readable, else writable): until it
    /// would block, after which the task waits for the next edge. An `op` that moved fewer
    /// bytes than asked (`asked`) drained the pipe or filled it: the next one waits for an
    /// edge too, without a `read` or `write` that would block. Writability is waited for
    /// only from such a write on, until a write goes through whole ([`Registered::arm_writes`]).
    fn poll_op(
        &mut self,
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
            if !read {
                let whole = matches!(done, Ok(n) if n == asked);
                if spent || whole {
                    self.arm_writes(spent)?;
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
        self.get_mut()
            .poll_op(cx, true, buf.len(), |mut file| file.read(buf))
    }
}

impl AsyncWrite for Registered {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .poll_op(cx, false, buf.len(), |mut file| file.write(buf))
    }

    /// `writev`: the lines waiting go out in one system call.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let asked = bufs.iter().map(|b| b.len()).sum();
        self.get_mut()
            .poll_op(cx, false, asked, |mut file| file.write_vectored(bufs))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::time::Duration;

    use smol::io::AsyncWriteExt;

    use super::*;

    /// More than a pipe holds, so that a write blocks.
    const OVER_A_PIPE: usize = 1 << 20;

    /// `write` within a budget far beyond what it needs: a write never woken fails here
    /// instead of hanging the run.
    fn within_budget(write: impl std::future::Future<Output = io::Result<()>>) -> io::Result<()> {
        smol::block_on(smol::future::or(write, async {
            smol::Timer::after(Duration::from_secs(60)).await;
            panic!("the write was never woken");
        }))
    }

    /// A write end is registered without writability until a write blocks; the write that
    /// filled the pipe is woken when the reader takes what it holds, and goes on to the end.
    #[test]
    fn a_write_that_fills_the_pipe_is_woken_when_the_reader_drains_it() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let reactor = Reactor::shared().unwrap();
        let mut writer = Registered::new(&reactor, writer.into(), Interest::WRITABLE).unwrap();
        assert!(!writer.write_armed);
        let drain = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            let mut all = Vec::new();
            reader.read_to_end(&mut all).map(|_| all.len())
        });
        within_budget(writer.write_all(&vec![7; OVER_A_PIPE])).unwrap();
        // The last write went through whole: writability is no longer waited for.
        assert!(!writer.write_armed);
        drop(writer);
        assert_eq!(drain.join().unwrap().unwrap(), OVER_A_PIPE);
    }

    /// A write blocked on a full pipe is woken by its reader's going (an error event, which
    /// epoll reports whatever the registration), and fails with a broken pipe.
    #[test]
    fn a_blocked_write_is_woken_by_the_reader_closing() {
        let (reader, writer) = std::io::pipe().unwrap();
        let reactor = Reactor::shared().unwrap();
        let mut writer = Registered::new(&reactor, writer.into(), Interest::WRITABLE).unwrap();
        let close = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(reader);
        });
        let wrote = within_budget(writer.write_all(&vec![7; OVER_A_PIPE]));
        assert_eq!(wrote.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        close.join().unwrap();
    }
}
