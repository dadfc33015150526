//! The editor's stdin and stdout for [`serve_acp_stdio`](crate::acp::serve_acp_stdio). A pipe
//! or a socket (how an editor starts an ACP agent) is read and written non-blocking on the
//! loop's own wait ([`crate::reactor`]), like the agents' pipes: a line to the editor is one `write` on the loop's own
//! thread, not a hand-over to the blocking pool and back (the ACP bench's profile: a few futex
//! wakes and task switches an update). Anything else (a terminal, a file) goes through the
//! blocking pool, with the loop's [`READ_CHUNK`]-byte buffer, so that a terminal shared with a shell is
//! never switched to non-blocking.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use mio::Interest;
use rustix::fs::FileType;
use smol::io::{AsyncRead, AsyncWrite};

use crate::acp::READ_CHUNK;
use crate::reactor::{Reactor, Registered};

/// The editor's input.
pub(crate) type EditorIn = Box<dyn AsyncRead + Send + Unpin>;

/// The editor's output.
pub(crate) type EditorOut = Box<dyn AsyncWrite + Send + Unpin>;

/// This process's stdin as the editor's input.
pub(crate) fn editor_in(reactor: &Reactor) -> EditorIn {
    let stdin = io::stdin();
    match on_reactor(reactor, stdin.as_fd(), Interest::READABLE) {
        Some(pipe) => Box::new(pipe),
        None => Box::new(smol::Unblock::with_capacity(READ_CHUNK, stdin)),
    }
}

/// This process's stdout as the editor's output. A stdout that is also stderr (`2>&1` into
/// one pipe) stays blocking: a non-blocking stderr would fail the bridge's own messages when
/// that pipe is full.
pub(crate) fn editor_out(reactor: &Reactor) -> EditorOut {
    let stdout = io::stdout();
    let shared = same_file(stdout.as_fd(), io::stderr().as_fd());
    // Checked first: registering a pipe makes its file description non-blocking.
    let pipe = if shared {
        None
    } else {
        on_reactor(reactor, stdout.as_fd(), Interest::WRITABLE)
    };
    match pipe {
        Some(pipe) => Box::new(pipe),
        None => Box::new(smol::Unblock::with_capacity(READ_CHUNK, stdout)),
    }
}

/// `fd`, when it is a pipe or a socket, as a copy (close-on-exec, so no agent inherits it)
/// registered with `reactor` for `interest`, which makes it non-blocking.
fn on_reactor(reactor: &Reactor, fd: BorrowedFd<'_>, interest: Interest) -> Option<Registered> {
    let stat = rustix::fs::fstat(fd).ok()?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::Fifo | FileType::Socket => {}
        _ => return None,
    }
    let copy = rustix::io::fcntl_dupfd_cloexec(fd, 0).ok()?;
    Registered::new(reactor, copy, interest).ok()
}

/// Whether `a` and `b` are the same file (a pipe's inode: `2>&1` into one pipe).
fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    match (rustix::fs::fstat(a), rustix::fs::fstat(b)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}
