//! The read end of one of the agent's output pipes, read only when the reactor says it is
//! readable.
//!
//! `AsyncRead::poll_read` on a child's pipe tries a `read` first on every poll and asks the
//! reactor only when that fails: a driver that waits on stdout, stderr, its stdin, its
//! operations and a timer at once polls every source on every wake, so each wake cost two
//! failed `read` calls (nine reads a round trip, measured). A [`Pipe`] asks the reactor first
//! (no system call while nothing has arrived) and reads once it is readable; after a read
//! that filled the buffer it reads again at once, since more is likely waiting.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::task::{Context, Poll};

use smol::Async;

/// A non-blocking pipe end registered with the reactor.
#[derive(Debug)]
pub(crate) struct Pipe {
    fd: Async<File>,
    /// The last read filled the buffer: read before asking the reactor.
    full: bool,
}

impl Pipe {
    /// The pipe behind `end` (a child's stdout or stderr), registered anew.
    pub(crate) fn new(end: impl TryInto<OwnedFd, Error = io::Error>) -> io::Result<Self> {
        let fd: OwnedFd = end.try_into()?;
        Ok(Pipe {
            fd: Async::new(File::from(fd))?,
            full: false,
        })
    }

    /// Reads what is there into `buf` once the pipe is readable: `Ok(0)` at its end.
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        if self.full {
            self.full = false;
            if let Some(read) = self.try_read(buf) {
                return Poll::Ready(read);
            }
        }
        loop {
            if let Err(error) = std::task::ready!(self.fd.poll_readable(cx)) {
                return Poll::Ready(Err(error));
            }
            // A readiness the read finds gone asks the reactor again (and registers).
            if let Some(read) = self.try_read(buf) {
                return Poll::Ready(read);
            }
        }
    }

    /// One `read`; `None` when it would block.
    fn try_read(&mut self, buf: &mut [u8]) -> Option<io::Result<usize>> {
        let mut file: &File = self.fd.get_ref();
        loop {
            match file.read(buf) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return None,
                read => {
                    self.full = matches!(read, Ok(n) if n == buf.len() && n > 0);
                    return Some(read);
                }
            }
        }
    }
}
