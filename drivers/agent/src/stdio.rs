//! The stdio loop: the [`App`] on mio, stdin non-blocking and readable, stdout writable with
//! backpressure (a line is taken from the app only when the last one has been written, and
//! stdin is read only then), timers from [`App::poll_timeout`], and a waker for finished
//! shell commands. A stdin that cannot be polled (a regular file) is read on a thread.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use mio::unix::pipe::{Receiver, Sender};
use mio::{Events, Interest, Poll, Token, Waker};

use crate::{App, Options};

const STDIN: Token = Token(0);
const STDOUT: Token = Token(1);
const WAKE: Token = Token(2);
const READ_BYTES: usize = 64 * 1024;

/// Where stdin comes from.
enum Input {
    Pipe(Receiver),
    /// A thread reads it (`None` at the end).
    Thread(mpsc::Receiver<io::Result<Vec<u8>>>),
    Closed,
}

/// Runs the agent on this process's stdin and stdout until stdin ends and everything owed
/// has been written. Returns the exit code.
pub fn run(options: Options) -> io::Result<u8> {
    let mut poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
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
    let result = serve(&mut app, &mut poll, &mut input, &mut stdout);
    let _ = stdout.set_nonblocking(false);
    if let Input::Pipe(pipe) = &input {
        let _ = pipe.set_nonblocking(false);
    }
    result.map(|()| 0)
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

fn serve(app: &mut App, poll: &mut Poll, input: &mut Input, stdout: &mut Sender) -> io::Result<()> {
    let mut events = Events::with_capacity(16);
    let mut buf = vec![0u8; READ_BYTES];
    // The line being written, and how much of it is out.
    let mut pending: Option<(Vec<u8>, usize)> = None;
    let mut stdin_ready = true;
    let mut stdout_registered = false;
    loop {
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
                    return Ok(());
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
            return stdout.flush();
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
