//! The read end of one of the agent's output pipes, read until a read would block and only
//! then waited on, registered once (edge-triggered): with the pipes' own reactor
//! ([`Pipe::new`], [`crate::pipe_reactor`]), or the ACP server's own wait ([`Pipe::on`],
//! [`crate::loop_wait`]).

use std::io;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use smol::io::AsyncRead;

use crate::pipe_reactor::PipeSource;

/// A non-blocking pipe end registered with a reactor.
pub(crate) struct Pipe {
    fd: Fd,
}

/// Where the pipe is registered.
enum Fd {
    /// The pipes' own reactor.
    Own(PipeSource),
    /// The ACP loop's own wait.
    #[cfg(feature = "acp")]
    Loop(crate::loop_wait::Registered),
}

impl Pipe {
    /// The pipe behind `end` (a child's stdout or stderr), registered with the pipes' own
    /// reactor.
    pub(crate) fn new(end: impl TryInto<OwnedFd, Error = io::Error>) -> io::Result<Self> {
        Ok(Pipe {
            fd: Fd::Own(PipeSource::reader(end.try_into()?)?),
        })
    }

    /// The pipe behind `end`, registered with the ACP loop's own wait (edge-triggered).
    #[cfg(feature = "acp")]
    pub(crate) fn on(
        reactor: &crate::loop_wait::Reactor,
        end: impl TryInto<OwnedFd, Error = io::Error>,
    ) -> io::Result<Self> {
        let fd =
            crate::loop_wait::Registered::new(reactor, end.try_into()?, mio::Interest::READABLE)?;
        Ok(Pipe { fd: Fd::Loop(fd) })
    }

    /// Reads what is there into `buf` once the pipe is readable: `Ok(0)` at its end. Its
    /// readiness is kept across reads: it reads until a read would block.
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.fd {
            Fd::Own(fd) => Pin::new(fd).poll_read(cx, buf),
            #[cfg(feature = "acp")]
            Fd::Loop(fd) => Pin::new(fd).poll_read(cx, buf),
        }
    }
}
