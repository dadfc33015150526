//! The driver task: reads the agent's pipes, feeds the core, performs its actions, sleeps
//! until the next input or the core's next timeout. A writer task of its own writes to the
//! agent's stdin, so a slow reader on the agent's side never stops this task from reading.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use musewire_core::client::{
    CallResult, Client, ClientConfig, ClientEvent, Driven, Input as ClientInput, Recorder, Work,
};
use smol::channel;
use smol::future;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::process::{Child, ChildStderr, ChildStdout, Command, Stdio};

use crate::handlers::{self, Handlers, Running};
use crate::{Op, Reply};

const REAP_TICK: Duration = Duration::from_millis(5);

type Started = (
    u32,
    channel::Sender<Op>,
    channel::Receiver<ClientEvent>,
    smol::Task<io::Result<std::process::ExitStatus>>,
);

pub(crate) fn start(
    mut command: Command,
    config: ClientConfig,
    record: Option<&std::path::Path>,
    handlers: Arc<Mutex<Handlers>>,
) -> io::Result<Started> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let pid = child.id();
    let missing = |p: &str| io::Error::other(format!("the child has no {p} pipe"));
    let mut stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
    let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
    let stderr = child.stderr.take().ok_or_else(|| missing("stderr"))?;
    let (writes, to_write) = channel::unbounded::<Vec<u8>>();
    // The writer ends, closing the agent's stdin, when the driver drops its sender.
    smol::spawn(async move {
        while let Ok(bytes) = to_write.recv().await {
            if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
                break;
            }
        }
    })
    .detach();
    let (ops_tx, ops) = channel::unbounded();
    let (events_tx, events) = channel::unbounded();
    let now = Instant::now();
    let (recorder, recording) = match record {
        Some(path) => (
            Some(Recorder::new(
                now,
                &config,
                &[],
                "recorded live by musewire-smol",
            )),
            Some(std::fs::File::create(path)?),
        ),
        None => (None, None),
    };
    let state = Driver {
        driven: Driven::new(Client::new(config, now), recorder),
        recording,
        child,
        writes: Some(writes),
        stdout: Some(stdout),
        stderr: Some(stderr),
        events: events_tx,
        handlers,
        running: Running::default(),
        handler_ops: ops_tx.downgrade(),
        ops,
        exited: None,
        kill_at: None,
    };
    Ok((pid, ops_tx, events, smol::spawn(state.run())))
}

struct Driver {
    driven: Driven<channel::Sender<Reply>>,
    /// The transcript file, when recording.
    recording: Option<std::fs::File>,
    child: Child,
    writes: Option<channel::Sender<Vec<u8>>>,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    events: channel::Sender<ClientEvent>,
    ops: channel::Receiver<Op>,
    exited: Option<std::process::ExitStatus>,
    kill_at: Option<Instant>,
    /// The application's host handlers, and the ones running.
    handlers: Arc<Mutex<Handlers>>,
    running: Running,
    /// Where running handlers send their answers; weak, so that the ops channel still closes
    /// when the `Agent` is gone.
    handler_ops: channel::WeakSender<Op>,
}

/// What woke the task. An op is moved once; boxing it would cost an allocation per call.
#[allow(clippy::large_enum_variant)]
enum Wake {
    Stdout(io::Result<usize>),
    Stderr(io::Result<usize>),
    Op(Op),
    OpsClosed,
    Tick,
}

async fn read_from<R: smol::io::AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> io::Result<usize> {
    match pipe {
        Some(p) => p.read(buf).await,
        None => future::pending().await,
    }
}

impl Driver {
    async fn run(mut self) -> io::Result<std::process::ExitStatus> {
        let mut out_buf = vec![0u8; 64 * 1024];
        let mut err_buf = vec![0u8; 16 * 1024];
        // What the client says at construction is recorded as a timer step at time zero.
        let now = Instant::now();
        self.after(now, ClientInput::Timeout)?;
        loop {
            if let Some(status) = self.exited {
                if self.stdout.is_none() && self.stderr.is_none() {
                    // Ops still queued would keep their callers waiting: the channel outlives
                    // this task while the Agent holds a sender. Close it and drop them.
                    self.ops.close();
                    while self.ops.try_recv().is_ok() {}
                    return Ok(status);
                }
            }
            let now = Instant::now();
            let mut deadline = self.driven.client.poll_timeout();
            if self.stdout.is_none() || self.driven.client.is_closed() || self.kill_at.is_some() {
                deadline = Some(deadline.map_or(now + REAP_TICK, |d| d.min(now + REAP_TICK)));
            }
            let input = {
                let stdout =
                    async { Wake::Stdout(read_from(&mut self.stdout, &mut out_buf).await) };
                let stderr =
                    async { Wake::Stderr(read_from(&mut self.stderr, &mut err_buf).await) };
                let ops = async {
                    match self.ops.recv().await {
                        Ok(op) => Wake::Op(op),
                        Err(_) => Wake::OpsClosed,
                    }
                };
                let tick = async {
                    match deadline {
                        Some(d) => {
                            smol::Timer::at(d).await;
                            Wake::Tick
                        }
                        None => future::pending().await,
                    }
                };
                future::or(future::or(stdout, stderr), future::or(ops, tick)).await
            };
            let now = Instant::now();
            match input {
                Wake::Stdout(Ok(0)) | Wake::Stdout(Err(_)) => {
                    self.stdout = None;
                    self.after(now, ClientInput::StdoutEnd)?;
                }
                Wake::Stdout(Ok(n)) => {
                    self.after(now, ClientInput::stdout(&out_buf[..n]))?;
                }
                Wake::Stderr(Ok(0)) | Wake::Stderr(Err(_)) => self.stderr = None,
                Wake::Stderr(Ok(n)) => {
                    self.after(now, ClientInput::stderr(&err_buf[..n]))?;
                }
                Wake::Op(op) => self.op(now, op)?,
                Wake::OpsClosed => {
                    // The Agent handle is gone: stop the agent.
                    self.writes = None;
                    self.kill_at.get_or_insert(now);
                }
                Wake::Tick => {}
            }
            if self.driven.client.poll_timeout().is_some_and(|t| t <= now) {
                self.after(now, ClientInput::Timeout)?;
            }
            self.reap(now)?;
        }
    }

    fn op(&mut self, now: Instant, op: Op) -> io::Result<()> {
        match op {
            Op::Call { call, wait, reply } => {
                let mut waiter = None;
                let result = self.handle(now, ClientInput::Call(call), || {
                    wait.then(|| {
                        let (tx, rx) = channel::bounded(1);
                        waiter = Some(rx);
                        tx
                    })
                })?;
                let _ = reply.try_send((result, waiter));
                Ok(())
            }
            Op::Shutdown { grace } => {
                self.writes = None;
                self.kill_at.get_or_insert(now + grace);
                Ok(())
            }
            Op::Finished { key, call } => {
                // The task is ending on its own: let it, rather than cancel it.
                if let Some(task) = self.running.finished(&key) {
                    task.detach();
                }
                match call {
                    Some(call) => self.after(now, ClientInput::Call(call)),
                    None => Ok(()),
                }
            }
        }
    }

    fn reap(&mut self, now: Instant) -> io::Result<()> {
        if self.exited.is_none() {
            if self.kill_at.is_some_and(|t| now >= t) {
                let _ = self.child.kill();
            }
            if let Some(status) = self.child.try_status()? {
                self.exited = Some(status);
                let status = status.into();
                self.after(now, ClientInput::exit(status))?;
            }
        }
        Ok(())
    }

    /// After an input: records it with the work it produced, then does the work in order.
    fn after(&mut self, now: Instant, input: ClientInput<'_>) -> io::Result<()> {
        self.handle(now, input, || None).map(drop)
    }

    /// Hands in an input (recorded when recording) and performs the work it gave, in order.
    fn handle(
        &mut self,
        now: Instant,
        input: ClientInput<'_>,
        waiter: impl FnOnce() -> Option<channel::Sender<crate::Reply>>,
    ) -> io::Result<CallResult> {
        let (result, recorded, work) = self.driven.handle(now, input, waiter);
        if let Some(file) = &mut self.recording {
            use std::io::Write as _;
            file.write_all(&recorded)?;
        }
        for item in work {
            match item {
                Work::Write(bytes) => {
                    if let Some(writes) = &self.writes {
                        let _ = writes.try_send(bytes);
                    }
                }
                Work::StopAgent => {
                    let _ = self.child.kill();
                }
                Work::Event(event) => {
                    let event = handlers::dispatch(
                        &mut self.running,
                        &self.handlers,
                        &self.handler_ops,
                        event,
                    );
                    if let Some(event) = event {
                        let _ = self.events.try_send(event);
                    }
                }
                Work::Answer(waiter, answer) => {
                    let _ = waiter.try_send(answer);
                }
            }
        }
        Ok(result)
    }
}
