//! The read end of one of the agent's output pipes, read only when the reactor says it is
//! readable.
//!
//! `AsyncRead::poll_read` on a child's pipe tries a `read` first on every poll and asks the
//! reactor only when that fails: a driver that waits on stdout, stderr, its stdin, its
//! operations and a timer at once polls every source on every wake, so each wake cost two
//! failed `read` calls (nine reads a round trip, measured). A [`Pipe`] asks the reactor first
//! (no system call while nothing has arrived) and reads once it is readable; after a read
//! that filled the buffer it reads again at once, since more is likely waiting.
//!
//! The ACP server's own wait registers its pipes on an epoll of its own instead
//! ([`Pipe::on`], [`crate::loop_wait`]): edge-triggered, registered once.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::task::{Context, Poll};

use smol::Async;

/// A non-blocking pipe end registered with the reactor.
pub(crate) struct Pipe {
    fd: Fd,
    /// The last read filled the buffer: read before asking the reactor.
    full: bool,
}

/// Where the pipe is registered.
enum Fd {
    /// smol's reactor.
    Smol(Async<File>),
    /// The ACP loop's own wait.
    #[cfg(feature = "acp")]
    Loop(crate::loop_wait::Registered),
}

impl Pipe {
    /// The pipe behind `end` (a child's stdout or stderr), registered anew.
    pub(crate) fn new(end: impl TryInto<OwnedFd, Error = io::Error>) -> io::Result<Self> {
        let fd: OwnedFd = end.try_into()?;
        Ok(Pipe {
            fd: Fd::Smol(Async::new(File::from(fd))?),
            full: false,
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
        Ok(Pipe {
            fd: Fd::Loop(fd),
            full: false,
        })
    }

    /// Reads what is there into `buf` once the pipe is readable: `Ok(0)` at its end.
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        // Without the ACP server there is one place a pipe is registered.
        #[cfg_attr(not(feature = "acp"), allow(clippy::infallible_destructuring_match))]
        let fd = match &mut self.fd {
            Fd::Smol(fd) => fd,
            // Its readiness is kept across reads: it reads until a read would block.
            #[cfg(feature = "acp")]
            Fd::Loop(fd) => return smol::io::AsyncRead::poll_read(std::pin::Pin::new(fd), cx, buf),
        };
        if self.full {
            self.full = false;
            if let Some(read) = try_read(fd, &mut self.full, buf) {
                return Poll::Ready(read);
            }
        }
        loop {
            if let Err(error) = std::task::ready!(fd.poll_readable(cx)) {
                return Poll::Ready(Err(error));
            }
            // A readiness the read finds gone asks the reactor again (and registers).
            if let Some(read) = try_read(fd, &mut self.full, buf) {
                return Poll::Ready(read);
            }
        }
    }
}

/// One `read` of `fd`, noting in `full` whether it filled `buf`; `None` when it would block.
fn try_read(fd: &Async<File>, full: &mut bool, buf: &mut [u8]) -> Option<io::Result<usize>> {
    let mut file: &File = fd.get_ref();
    loop {
        match file.read(buf) {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => return None,
            read => {
                *full = matches!(read, Ok(n) if n == buf.len() && n > 0);
                return Some(read);
            }
        }
    }
}
