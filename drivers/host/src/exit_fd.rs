//! A file that becomes readable when a child process exits (a Linux pidfd), so that a driver
//! is woken by the exit instead of asking for it: register it for readability with the
//! driver's poll, and ask for the exit (`wait4`) only once it has been reported readable
//! ([`ExitWatch::Told`](crate::ExitWatch::Told)).
//!
//! Where the system has none (Linux before 5.3, other systems), [`open`] fails and the driver
//! asks for the exit as [`ExitWatch::Asked`](crate::ExitWatch::Asked) says.

use std::io;
use std::os::fd::OwnedFd;

/// A pidfd for the child `pid`, which must be the caller's unreaped child: a pid already
/// reaped may belong to another process by now. It stays readable from the child's exit on,
/// reaped or not.
#[cfg(target_os = "linux")]
pub fn open(pid: u32) -> io::Result<OwnedFd> {
    use rustix::process::{pidfd_open, Pid, PidfdFlags};
    let pid = i32::try_from(pid)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a process id"))?;
    Ok(pidfd_open(pid, PidfdFlags::empty())?)
}

/// No pidfd on this system: the driver asks for the exit instead.
#[cfg(not(target_os = "linux"))]
pub fn open(_pid: u32) -> io::Result<OwnedFd> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "no pidfd on this system",
    ))
}
