//! One child process and its pipes, registered once: the transport every smol loop uses,
//! written once. The host driver's task ([`AgentProcess`](crate::AgentProcess)) and the ACP
//! server ([`acp`](crate::acp): each session's agent, each MCP server) run their children on
//! it.
//!
//! - **Spawn**: the command with its three pipes, killed if the transport is dropped. A
//!   [`std::process::Command`] starts as the leader of a process group of its own, killed
//!   whole with the child and once the child has exited (CALL-11, the host kit's
//!   `process_group`; the ACP server's agents, ACP-12, and MCP servers, MCP-01); a
//!   [`smol::process::Command`] starts as it is (see [`AgentCommand`]).
//! - **Reads**: stdout and stderr read until a read would block ([`Pipe`]), into the
//!   caller's buffers; stdout only when the caller says so (its backpressure: the host kit's
//!   `Driven::hold_stdout`, the bridge's ACP-20 turns).
//! - **Stdin**: a queue written as the child takes it, never waited on; the caller bounds
//!   it by [`AgentPipes::queued`] (the host kit's `Driven::takes_ops`, the bridge's ACP-20
//!   count of what it gave, from the [`PipeEvent::Written`] reports).
//! - **Closing stdin** has one meaning in every driver ([`AgentPipes::close_stdin`]): once
//!   what is queued is written, or at once, the queue dropped, with no grace.
//! - **Where**: on the driver's shared reactor ([`AgentPipes::spawn`]) or the ACP loop's
//!   ([`AgentPipes::spawn_on`]), [`crate::reactor`]: either way registered once,
//!   edge-triggered, with smol as the executor.
//! - **The exit**: asked ([`AgentPipes::try_exit`], the host kit's reaping, woken by
//!   [`AgentPipes::poll_exit_reported`]) or awaited ([`AgentPipes::poll_exit`]). Where the
//!   system has pidfds (Linux), the child's is registered with the pipes, so its exit wakes
//!   the task and the system is asked for the exit (`wait4`) only then; elsewhere the exit
//!   is asked for as the host kit's `ExitWatch::Asked` says, or awaited through
//!   async-process.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use musewire_host::process_group::{kill_group, lead_own_group};
use musewire_host::ExitWatch;
use smol::io::AsyncWrite;
use smol::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};

use crate::pipe::Pipe;
use crate::reactor::{Reactor, Registered};

/// What a poll of the pipes gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PipeEvent {
    /// This many bytes of stdout were read into the stdout buffer.
    Stdout(usize),
    /// Stdout ended (or failed): it is not read again.
    StdoutEnd,
    /// This many bytes of stderr were read into the stderr buffer.
    Stderr(usize),
    /// Stderr ended (or failed): it is not read again.
    StderrEnd,
    /// This many queued bytes left the queue: written to stdin, or dropped because the child
    /// closed it.
    Written(usize),
}

/// A child's exit, awaited without borrowing the child, polled only when it woke its task
/// ([`ExitWake`]).
struct Exit {
    status: Pin<Box<dyn Future<Output = io::Result<std::process::ExitStatus>> + Send>>,
    wake: Arc<ExitWake>,
    /// `wake` as a waker, made once.
    waker: Waker,
}

/// The waker the exit future is polled with: it notes that the future woke the task, then
/// wakes it. A loop that polls every source on every wake then asks for the exit only when
/// the exit said so: async-process's status future asks the system (`wait4`) each time it is
/// polled, which was one system call for every chunk an agent wrote.
struct ExitWake {
    woken: AtomicBool,
    task: Mutex<Waker>,
}

impl Wake for ExitWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .wake_by_ref();
    }
}

/// What the smol driver starts as an agent ([`AgentProcess::spawn`](crate::AgentProcess::spawn)).
///
/// From a [`std::process::Command`] the agent leads a process group of its own (CALL-11):
/// the group is killed whole when the driver kills the agent and once the agent has exited,
/// and a terminal's Ctrl-C does not reach it. smol's [`Command`](smol::process::Command) has
/// no way to set a process group, so one is started as it is, in the host's group, and only
/// the agent itself is killed; pass a `std::process::Command` to have the group.
#[derive(Debug)]
pub struct AgentCommand {
    command: Command,
    /// The child leads a group of its own (started from a `std::process::Command`).
    own_group: bool,
}

impl From<std::process::Command> for AgentCommand {
    fn from(mut command: std::process::Command) -> Self {
        lead_own_group(&mut command);
        AgentCommand {
            command: command.into(),
            own_group: true,
        }
    }
}

impl From<Command> for AgentCommand {
    fn from(command: Command) -> Self {
        AgentCommand {
            command,
            own_group: false,
        }
    }
}

/// A spawned child and its pipes. See the [module docs](self).
pub(crate) struct AgentPipes {
    child: Child,
    /// The group the child leads (its pid), until the group is killed at the child's exit
    /// (CALL-11); `None` for a child started in the host's group.
    group: Option<u32>,
    stdin: Option<Registered>,
    /// Bytes waiting for stdin, written as the child takes them.
    queue: VecDeque<u8>,
    /// Close stdin once the queue is written.
    closing: bool,
    /// Whether the write to stdin goes before the reads at the next poll (they take turns).
    write_first: bool,
    stdout: Option<Pipe>,
    stderr: Option<Pipe>,
    /// The child's pidfd, registered for readability until the child's exit is seen
    /// (`None` where the system has none): the exit wakes the task.
    exit_fd: Option<Registered>,
    /// Asks for the exit put off in a row because output was still to be read.
    exit_waits: u32,
    /// Without a pidfd, the exit awaited through async-process, from the first
    /// [`AgentPipes::poll_exit`] on (a loop that reaps by asking never makes it).
    exit: Option<Exit>,
}

/// The asks for the exit in a row [`AgentPipes::try_exit`] puts off while output waits to be
/// read: each is a wake that read a buffer, so the exit waits for up to this many buffers
/// (4 KiB to 64 KiB each) of what the agent wrote before it.
const EXIT_WAITS_FOR_OUTPUT: u32 = 1024;

impl AgentPipes {
    /// Spawns `command` with piped stdin, stdout and stderr, on the shared reactor.
    pub(crate) fn spawn(command: impl Into<AgentCommand>) -> io::Result<Self> {
        Self::spawn_on(command, &Reactor::shared()?)
    }

    /// Spawns `command` with piped stdin, stdout and stderr, registered with `reactor`.
    pub(crate) fn spawn_on(
        command: impl Into<AgentCommand>,
        reactor: &Reactor,
    ) -> io::Result<Self> {
        let (child, group, (stdin, stdout, stderr)) = spawn_piped(command.into())?;
        let stdin = Registered::new(reactor, stdin.try_into()?, mio::Interest::WRITABLE)?;
        let (stdout, stderr) = (Pipe::on(reactor, stdout)?, Pipe::on(reactor, stderr)?);
        // Without a pidfd (or one the reactor would not take) the exit is asked for instead.
        let exit_fd = musewire_host::exit_fd::open(child.id())
            .and_then(|fd| Registered::new(reactor, fd, mio::Interest::READABLE))
            .ok();
        Ok(Self::with(child, group, stdin, stdout, stderr, exit_fd))
    }

    fn with(
        child: Child,
        group: Option<u32>,
        stdin: Registered,
        stdout: Pipe,
        stderr: Pipe,
        exit_fd: Option<Registered>,
    ) -> Self {
        AgentPipes {
            child,
            group,
            exit_fd,
            stdin: Some(stdin),
            queue: VecDeque::new(),
            closing: false,
            write_first: false,
            stdout: Some(stdout),
            stderr: Some(stderr),
            exit_waits: 0,
            exit: None,
        }
    }

    /// The child's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Queues `bytes` for stdin; false (nothing queued) once stdin is closed or closing.
    pub(crate) fn queue(&mut self, bytes: &[u8]) -> bool {
        if self.stdin.is_none() || self.closing {
            return false;
        }
        self.queue.extend(bytes);
        true
    }

    /// How many bytes wait for stdin.
    pub(crate) fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Closes stdin once what is queued is written (nothing more is queued), or at once with
    /// no `grace`, the queue dropped: there is no time to write it.
    pub(crate) fn close_stdin(&mut self, grace: Duration) {
        self.closing = true;
        if grace.is_zero() {
            self.queue.clear();
        }
        if self.queue.is_empty() {
            self.stdin = None;
        }
    }

    /// Kills the child (it may have exited) and its group (CALL-11), the group first while
    /// its leader is not yet reaped.
    pub(crate) fn kill(&mut self) {
        if let Some(group) = self.group {
            kill_group(group);
        }
        let _ = self.child.kill();
    }

    /// The child's exit status, if it has exited; what is left of its group is killed as
    /// its exit is seen (CALL-11). With a pidfd the system is asked only once the pidfd was
    /// reported readable ([`AgentPipes::poll_exit_reported`]): else the child runs.
    ///
    /// Not while stdout or stderr may hold bytes not yet read (CALL-07: all of the output
    /// goes in before the exit; a wake reads one buffer, and the agent's last lines and its
    /// exit are reported together), for at most [`EXIT_WAITS_FOR_OUTPUT`] asks in a row: a
    /// pipe that what the agent left behind keeps full does not hold the exit back for ever.
    pub(crate) fn try_exit(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        let seen = match &self.exit_fd {
            Some(fd) => match fd.readable() {
                Some(seen) => Some(seen),
                None => return Ok(None),
            },
            None => None,
        };
        let unread = |pipe: &Option<Pipe>| pipe.as_ref().is_some_and(Pipe::may_hold_more);
        if (unread(&self.stdout) || unread(&self.stderr)) && self.exit_waits < EXIT_WAITS_FOR_OUTPUT
        {
            self.exit_waits += 1;
            return Ok(None);
        }
        self.exit_waits = 0;
        let exit = self.child.try_status();
        self.after_exit_asked(&exit, seen);
        exit
    }

    /// How the host kit learns of the exit: told by the pidfd, or asking.
    pub(crate) fn exit_watch(&self) -> ExitWatch {
        match self.exit_fd {
            Some(_) => ExitWatch::Told,
            None => ExitWatch::Asked,
        }
    }

    /// Ready once the child's pidfd was reported readable, its exit not yet seen: a
    /// [`AgentPipes::try_exit`] is due. Never without a pidfd, nor once the exit is seen.
    pub(crate) fn poll_exit_reported(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.exit_fd {
            Some(fd) => fd.poll_readable(cx).map(drop),
            None => Poll::Pending,
        }
    }

    /// After the system was asked for the exit with the pidfd's `seen` reports: the pidfd
    /// and the group (CALL-11) done with at the exit, the pidfd's readiness cleared without
    /// it.
    fn after_exit_asked(
        &mut self,
        exit: &io::Result<Option<std::process::ExitStatus>>,
        seen: Option<u64>,
    ) {
        match exit {
            Ok(Some(_)) => {
                self.exit_fd = None;
                self.end_group();
            }
            Ok(None) => {
                if let (Some(fd), Some(seen)) = (&self.exit_fd, seen) {
                    fd.not_readable(seen);
                }
            }
            Err(_) => {}
        }
    }

    /// CALL-11: kills what is left of the child's group, once (at the child's exit seen, or
    /// at the transport's drop).
    fn end_group(&mut self) {
        if let Some(group) = self.group.take() {
            kill_group(group);
        }
    }

    /// The child's exit, once it has exited.
    pub(crate) fn poll_exit(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<std::process::ExitStatus>> {
        while let Some(fd) = &mut self.exit_fd {
            let Poll::Ready(seen) = fd.poll_readable(cx) else {
                return Poll::Pending;
            };
            let exit = self.child.try_status();
            self.after_exit_asked(&exit, Some(seen));
            match exit {
                Ok(Some(status)) => return Poll::Ready(Ok(status)),
                Err(error) => return Poll::Ready(Err(error)),
                // Not yet: the next poll waits for the next report.
                Ok(None) => {}
            }
        }
        // Its stdin was taken out at the spawn, so asking for the status closes nothing.
        let child = &mut self.child;
        let exit = self.exit.get_or_insert_with(|| {
            let wake = Arc::new(ExitWake {
                woken: AtomicBool::new(true),
                task: Mutex::new(cx.waker().clone()),
            });
            Exit {
                status: Box::pin(child.status()),
                waker: Waker::from(Arc::clone(&wake)),
                wake,
            }
        });
        {
            let mut task = exit.wake.task.lock().unwrap_or_else(|e| e.into_inner());
            if !task.will_wake(cx.waker()) {
                task.clone_from(cx.waker());
            }
        }
        if !exit.wake.woken.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        let exit = exit
            .status
            .as_mut()
            .poll(&mut Context::from_waker(&exit.waker));
        if let Poll::Ready(Ok(_)) = exit {
            self.end_group();
        }
        exit
    }

    /// Whether stdout is still read (it has not ended).
    pub(crate) fn stdout_open(&self) -> bool {
        self.stdout.is_some()
    }

    /// Whether stderr is still read (it has not ended).
    pub(crate) fn stderr_open(&self) -> bool {
        self.stderr.is_some()
    }

    /// Stops reading stdout, without its end: what the child writes there is not read.
    pub(crate) fn abandon_stdout(&mut self) {
        self.stdout = None;
    }

    /// Stops reading stderr, without its end.
    pub(crate) fn abandon_stderr(&mut self) {
        self.stderr = None;
    }

    /// What comes first: stdout (when `read_stdout`) into `out`, stderr into `err`, or room
    /// in stdin for some of the queue. Every source stays registered across polls, so a wake
    /// costs no failed reads.
    ///
    /// The write and the reads take turns going first: a pipe keeps its readiness until a
    /// read or write would block, so an agent that writes faster than it is read keeps
    /// stdout ready at every poll, and a write tried only once the reads would block would
    /// never be tried. An agent that reads its stdin only between writes to its stdout (the
    /// backpressure tests' `lockstep`) then floods on while its stdin is never written (the
    /// updates of a host tool handler held back for ever). A write tried while stdin is not
    /// ready costs no system call.
    pub(crate) fn poll(
        &mut self,
        cx: &mut Context<'_>,
        read_stdout: bool,
        out: &mut [u8],
        err: &mut [u8],
    ) -> Poll<PipeEvent> {
        self.write_first = !self.write_first;
        if self.write_first {
            if let Poll::Ready(event) = self.poll_write(cx) {
                return Poll::Ready(event);
            }
        }
        if let Poll::Ready(event) = self.poll_reads(cx, read_stdout, out, err) {
            return Poll::Ready(event);
        }
        if !self.write_first {
            return self.poll_write(cx);
        }
        Poll::Pending
    }

    /// Stdout (when `read_stdout`) into `out`, else stderr into `err`, whichever is read
    /// first.
    fn poll_reads(
        &mut self,
        cx: &mut Context<'_>,
        read_stdout: bool,
        out: &mut [u8],
        err: &mut [u8],
    ) -> Poll<PipeEvent> {
        if read_stdout {
            let read = poll_read(
                &mut self.stdout,
                cx,
                out,
                PipeEvent::Stdout,
                PipeEvent::StdoutEnd,
            );
            if read.is_ready() {
                return read;
            }
        }
        poll_read(
            &mut self.stderr,
            cx,
            err,
            PipeEvent::Stderr,
            PipeEvent::StderrEnd,
        )
    }

    /// Some of the queue written to stdin, once it has room.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<PipeEvent> {
        // A write is tried only with bytes to write; one that would block writes nothing.
        if let (Some(pipe), false) = (&mut self.stdin, self.queue.is_empty()) {
            if let Poll::Ready(wrote) = Pin::new(pipe).poll_write(cx, self.queue.as_slices().0) {
                let n = match wrote {
                    Ok(n) => {
                        self.queue.drain(..n);
                        n
                    }
                    // The child closed its stdin: it is ending; what waits is dropped.
                    Err(_) => {
                        self.stdin = None;
                        std::mem::take(&mut self.queue).len()
                    }
                };
                if self.closing && self.queue.is_empty() {
                    self.stdin = None;
                }
                return Poll::Ready(PipeEvent::Written(n));
            }
        }
        Poll::Pending
    }
}

/// The child's pipes as spawned.
type Piped = (ChildStdin, ChildStdout, ChildStderr);

/// Spawns `command` with its three pipes, killed if dropped; the group it leads, if it does.
fn spawn_piped(command: AgentCommand) -> io::Result<(Child, Option<u32>, Piped)> {
    let AgentCommand {
        mut command,
        own_group,
    } = command;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let missing = |p: &str| io::Error::other(format!("the child has no {p} pipe"));
    let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
    let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
    let stderr = child.stderr.take().ok_or_else(|| missing("stderr"))?;
    let group = own_group.then(|| child.id());
    Ok((child, group, (stdin, stdout, stderr)))
}

/// A transport dropped before its child's exit was seen kills the child's group (CALL-11),
/// then the child (`kill_on_drop`).
impl Drop for AgentPipes {
    fn drop(&mut self) {
        self.end_group();
    }
}

/// A read of `pipe` into `buf`, once it is readable: `read(n)` for `n` bytes, or `end` at its
/// end (or a failure), after which it is not read again.
fn poll_read(
    pipe: &mut Option<Pipe>,
    cx: &mut Context<'_>,
    buf: &mut [u8],
    read: fn(usize) -> PipeEvent,
    end: PipeEvent,
) -> Poll<PipeEvent> {
    let Some(open) = pipe else {
        return Poll::Pending;
    };
    Poll::Ready(match std::task::ready!(open.poll_read(cx, buf)) {
        Ok(n) if n > 0 => read(n),
        _ => {
            *pipe = None;
            end
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An agent that floods its stdout faster than it is read keeps stdout ready at every
    /// poll: the queue for its stdin is still written, within a poll or two (before the
    /// write and the reads took turns, it was written only once a read would block, which
    /// with a full pipe and small reads was never).
    #[test]
    fn stdin_is_written_while_stdout_is_always_ready() {
        // `yes` floods stdout (an asynchronous list keeps it), `cat` takes stdin.
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "yes & exec cat >/dev/null"]);
        let mut pipes = AgentPipes::spawn(command).unwrap();
        let (mut out, mut err) = ([0u8; 1024], [0u8; 1024]);
        let mut cx = Context::from_waker(Waker::noop());
        // Stdout is full before anything is queued: every 1 KiB read below finds more.
        let started = std::time::Instant::now();
        let mut read = 0;
        while read < 64 * 1024 {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "stdout never filled"
            );
            match pipes.poll(&mut cx, true, &mut out, &mut err) {
                Poll::Ready(PipeEvent::Stdout(n)) => read += n,
                Poll::Ready(event) => panic!("{event:?} before anything was queued"),
                Poll::Pending => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        std::thread::sleep(Duration::from_millis(100));
        assert!(pipes.queue(b"written\n"));
        let mut polls = Vec::new();
        for _ in 0..8 {
            let event = pipes.poll(&mut cx, true, &mut out, &mut err);
            polls.push(event);
            if event == Poll::Ready(PipeEvent::Written(8)) {
                pipes.kill();
                return;
            }
        }
        panic!("the queue was not written while stdout was ready: {polls:?}");
    }
}
