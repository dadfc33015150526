//! The read end of one of the agent's output pipes, read until a read would block and only
//! then waited on, registered once (edge-triggered) with one of the driver's reactors
//! ([`crate::reactor`]).

use std::io;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use smol::io::AsyncRead;

use crate::reactor::{Reactor, Registered};

/// A non-blocking pipe end registered with a reactor.
pub(crate) struct Pipe {
    fd: Registered,
}

impl Pipe {
    /// The pipe behind `end` (a child's stdout or stderr), registered with `reactor`.
    pub(crate) fn on(
        reactor: &Reactor,
        end: impl TryInto<OwnedFd, Error = io::Error>,
    ) -> io::Result<Self> {
        let fd = Registered::new(reactor, end.try_into()?, mio::Interest::READABLE)?;
        Ok(Pipe { fd })
    }

    /// Reads what is there into `buf` once the pipe is readable: `Ok(0)` at its end. Its
    /// readiness is kept across reads: it reads until a read would block.
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.fd).poll_read(cx, buf)
    }

    /// Whether the pipe counts as readable: reported so, and no read since came up short or
    /// would have blocked (it may hold bytes, or its end, not yet read).
    pub(crate) fn may_hold_more(&self) -> bool {
        self.fd.readable().is_some()
    }
}
