//! The stdio loop: the [`App`] on mio, stdin non-blocking and readable, stdout writable with
//! backpressure (a line is taken from the app only when the last one has been written, and
//! stdin is read only then), timers from [`App::poll_timeout`], and a waker for finished
//! shell commands. A stdin that cannot be polled (a regular file) is read on a thread.
//!
//! The processes the agent starts end with it (AGENT-02): the end of stdin kills every shell
//! command's process group, and so does SIGTERM, SIGINT or SIGHUP ([`TERMINATING_SIGNALS`]),
//! after which the process dies of that signal.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use mio::unix::pipe::{Receiver, Sender};
use mio::{Events, Interest, Poll, Token, Waker};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::{App, Options};

const STDIN: Token = Token(0);
const STDOUT: Token = Token(1);
const WAKE: Token = Token(2);
const READ_BYTES: usize = 64 * 1024;

/// The signals that end the agent and every shell command it runs (AGENT-02).
pub const TERMINATING_SIGNALS: [i32; 3] = [SIGTERM, SIGINT, SIGHUP];

/// How [`serve`] ended.
enum Ended {
    /// Stdin ended and everything owed was written.
    Done,
    /// A terminating signal arrived; the shell commands are killed.
    Signal(i32),
}

/// Where stdin comes from.
enum Input {
    Pipe(Receiver),
    /// A thread reads it (`None` at the end).
    Thread(mpsc::Receiver<io::Result<Vec<u8>>>),
    Closed,
}

/// Runs the agent on this process's stdin and stdout until stdin ends and everything owed
/// has been written. Returns the exit code. On SIGTERM, SIGINT or SIGHUP every shell
/// command's process group is killed and the process then dies of that signal (AGENT-02);
/// should the signal's default action not end it, the code is 128 + the signal's number.
pub fn run(options: Options) -> io::Result<u8> {
    let mut poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
    let signal = Arc::new(AtomicI32::new(0));
    let mut signals = Signals::new(TERMINATING_SIGNALS)?;
    let signals_handle = signals.handle();
    {
        let (signal, waker) = (signal.clone(), waker.clone());
        std::thread::Builder::new()
            .name("musewire-agent-signals".into())
            .spawn(move || {
                if let Some(received) = signals.forever().next() {
                    signal.store(received, Ordering::SeqCst);
                    let _ = waker.wake();
                }
            })?;
    }
    let notify_waker = waker.clone();
    let mut app = App::new(
        options,
        Instant::now(),
        Arc::new(move || {
            let _ = notify_waker.wake();
        }),
    );
    let stdout_fd: OwnedFd = io::stdout().as_fd().try_clone_to_owned()?;
    let mut stdout = Sender::from(stdout_fd);
    stdout.set_nonblocking(true)?;
    let mut input = open_stdin(&poll, waker)?;
    let result = serve(&mut app, &mut poll, &mut input, &mut stdout, &signal);
    // Whatever way the loop ended, no shell command outlives it (AGENT-02).
    app.terminate();
    let _ = stdout.set_nonblocking(false);
    if let Input::Pipe(pipe) = &input {
        let _ = pipe.set_nonblocking(false);
    }
    signals_handle.close();
    match result? {
        Ended::Done => Ok(0),
        Ended::Signal(received) => {
            let _ = signal_hook::low_level::emulate_default_handler(received);
            Ok(128u8.saturating_add(u8::try_from(received).unwrap_or(0)))
        }
    }
}

fn open_stdin(poll: &Poll, waker: Arc<Waker>) -> io::Result<Input> {
    let fd: OwnedFd = io::stdin().as_fd().try_clone_to_owned()?;
    let mut pipe = Receiver::from(fd);
    pipe.set_nonblocking(true)?;
    match poll
        .registry()
        .register(&mut pipe, STDIN, Interest::READABLE)
    {
        Ok(()) => Ok(Input::Pipe(pipe)),
        Err(_) => {
            // Not pollable (a regular file, /dev/null): read it on a thread, blocking.
            pipe.set_nonblocking(false)?;
            let (tx, rx) = mpsc::channel();
            std::thread::Builder::new()
                .name("musewire-agent-stdin".into())
                .spawn(move || {
                    let mut buf = vec![0u8; READ_BYTES];
                    loop {
                        let read = pipe.read(&mut buf).map(|n| buf[..n].to_vec());
                        let end = !matches!(&read, Ok(b) if !b.is_empty());
                        if tx.send(read).is_err() || waker.wake().is_err() || end {
                            return;
                        }
                    }
                })?;
            Ok(Input::Thread(rx))
        }
    }
}

fn serve(
    app: &mut App,
    poll: &mut Poll,
    input: &mut Input,
    stdout: &mut Sender,
    signal: &AtomicI32,
) -> io::Result<Ended> {
    let mut events = Events::with_capacity(16);
    let mut buf = vec![0u8; READ_BYTES];
    // The line being written, and how much of it is out.
    let mut pending: Option<(Vec<u8>, usize)> = None;
    let mut stdin_ready = true;
    let mut stdout_registered = false;
    loop {
        let received = signal.load(Ordering::SeqCst);
        if received != 0 {
            app.terminate();
            return Ok(Ended::Signal(received));
        }
        let now = Instant::now();
        app.handle_jobs(now);
        if app.poll_timeout().is_some_and(|t| t <= now) {
            app.handle_timeout(now);
        }
        // Write while stdout accepts.
        loop {
            if pending.is_none() {
                pending = app.poll_write(now).map(|line| (line, 0));
            }
            let Some((line, written)) = &mut pending else {
                break;
            };
            match stdout.write(&line[*written..]) {
                Ok(n) => {
                    *written += n;
                    if *written == line.len() {
                        pending = None;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !stdout_registered {
                        poll.registry()
                            .register(stdout, STDOUT, Interest::WRITABLE)?;
                        stdout_registered = true;
                    }
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The host stopped reading: nothing more can reach it.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    app.handle_stdin_eof(now);
                    while app.poll_write(now).is_some() {}
                    return Ok(Ended::Done);
                }
                Err(e) => return Err(e),
            }
        }
        // Read only when the last line is out (backpressure).
        if pending.is_none() && stdin_ready {
            match read_input(input, poll, &mut buf)? {
                Some(bytes) if bytes.is_empty() => {
                    // HOST-07/08: the end of stdin rejects what is pending with the host;
                    // the events that follow (the run ending, shells killed) are taken by
                    // the write loop before the loop may wait, else nothing would wake it.
                    app.handle_stdin_eof(now);
                    stdin_ready = false;
                    continue;
                }
                Some(bytes) => {
                    app.handle_stdin(now, &bytes);
                    continue;
                }
                None => stdin_ready = false,
            }
        }
        if matches!(input, Input::Closed) && pending.is_none() && app.is_finished() {
            // Nothing pending means poll_write has returned None: all is written.
            return stdout.flush().map(|()| Ended::Done);
        }
        let timeout = app
            .poll_timeout()
            .map(|t| t.saturating_duration_since(Instant::now()));
        match poll.poll(&mut events, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        for event in events.iter() {
            if event.token() == STDIN || event.token() == WAKE {
                stdin_ready = true;
            }
        }
    }
}

/// One read: `Some(bytes)` (empty at the end, after which the input is closed), or `None`
/// when nothing is available now.
fn read_input(input: &mut Input, poll: &Poll, buf: &mut [u8]) -> io::Result<Option<Vec<u8>>> {
    let read = match input {
        Input::Closed => return Ok(None),
        Input::Pipe(pipe) => loop {
            match pipe.read(buf) {
                Ok(n) => break Ok(buf[..n].to_vec()),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        },
        Input::Thread(rx) => match rx.try_recv() {
            Ok(read) => read,
            Err(mpsc::TryRecvError::Empty) => return Ok(None),
            Err(mpsc::TryRecvError::Disconnected) => Ok(Vec::new()),
        },
    };
    // A read error ends the input like EOF does.
    let bytes = read.unwrap_or_default();
    if bytes.is_empty() {
        if let Input::Pipe(pipe) = input {
            let _ = poll.registry().deregister(pipe);
        }
        *input = Input::Closed;
    }
    Ok(Some(bytes))
}
