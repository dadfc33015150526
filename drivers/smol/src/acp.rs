//! The ACP loop: runs a [`Bridge`] between an editor (any byte stream, stdio for
//! `musewire acp`) and one agent process per ACP session. Only I/O: it reads the editor and
//! the agents' pipes, hands the bytes in, performs the bridge's actions (write to the
//! editor, spawn an agent in a cwd, write to an agent, close an agent's stdin, kill an
//! agent's process group), and sleeps until the next input or the bridge's next timeout.
//! Each agent is started as the leader of a process group of its own, so that killing the
//! group ends whatever the agent left running in it (ACP-12).
//!
//! Every queue is bounded (ACP-20): one reader task a pipe, each holding at most one chunk
//! it read, in one bounded channel to the loop. The editor's and each agent's stdout reader
//! read a chunk only when the loop has given them a turn (a gate), which it does once the
//! chunk before has been handed in and while the bridge says to read that source
//! ([`Bridge::reads_editor`], [`Bridge::reads_agent`]). The loop never waits on the editor's
//! stdout: it writes what it can while it waits for inputs, and tells the bridge what was
//! written ([`Input::EditorWritten`]). Each agent's stdin is written by its own task, which
//! tells the bridge what it wrote ([`Input::AgentWritten`]): while one agent does not read,
//! what waits for it is bounded by the editor's reads stopping ([`Bridge::reads_editor`]).
//!
//! The editor's HTTP MCP servers (MCP-18) are reached with an
//! [`McpHttpTransport`] each, its exchanges tasks on the
//! loop's executor whose events come back on the loop's bounded channel; a server the options
//! refuse (plain `http` to a host that is not loopback, a bad header) has each of its requests
//! answered as failed, which the bridge notes. When the bridge is finished the loop waits for
//! the stopped servers' DELETEs, within [`DELETE_GRACE`].

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use musewire_core::acp::{
    Action, AgentKey, Bridge, BridgeConfig, EditedFileFailure, FileTicket, Input, McpRead,
    McpServerKey, ProcessKey, ReviewTicket, SessionFile, SessionFileDone, SessionFileFailure,
    SessionFolderError,
};
use musewire_core::client::ExitStatus;
use musewire_host::process_group::kill_group;
use musewire_host::OUTPUT_GRACE;
use signal_hook::iterator::Signals;
use smol::channel;
use smol::stream::Stream;

use crate::orphans::Orphans;
use smol::future;
use smol::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::agent_pipes::{AgentPipes, PipeEvent};
use crate::agent_stdio::TERMINATING_SIGNALS;
use crate::loop_wait::LoopWait;
use crate::mcp_http::{HttpEvent, McpHttpOptions, McpHttpTransport, DELETE_GRACE};
use crate::reactor::Reactor;

/// The bytes one read of a pipe takes at most.
pub(crate) const READ_CHUNK: usize = 64 * 1024;

/// The editor's lines one write takes at most.
const WRITE_LINES: usize = 64;

/// The inputs on their way to the loop, at most (each reader task holds one more).
const EVENT_QUEUE: usize = 64;

/// How long the bridge's last lines may take to reach the editor once it is finished.
const LAST_WRITE_GRACE: Duration = Duration::from_millis(500);

/// What the loop waits for.
enum Event {
    Editor(Vec<u8>),
    EditorEnd,
    Stdout(ProcessKey, Vec<u8>),
    Stderr(ProcessKey, Vec<u8>),
    StdoutEnd(ProcessKey),
    Exit(ProcessKey, ExitStatus),
    /// The loop is told to end (a signal).
    Shutdown,
    /// The session folder was read (ACP-26).
    SessionFolder(Result<Vec<SessionFile>, SessionFolderError>),
    /// A session file was forked or deleted (ACP-31, ACP-32).
    SessionFile(FileTicket, Result<SessionFileDone, SessionFileFailure>),
    /// An edited file was read for the editor's review (ACP-38).
    EditedFile(ReviewTicket, Result<Vec<u8>, EditedFileFailure>),
    /// This many bytes were written to an agent's (or MCP server's) stdin, or dropped with a
    /// closed one (ACP-20).
    Written(ProcessKey, usize),
    /// What came of an HTTP MCP server's exchange (MCP-18).
    Http(McpServerKey, HttpEvent),
}

/// An HTTP MCP server, as the loop knows it (MCP-18).
enum HttpServer {
    /// Its exchanges.
    Open(McpHttpTransport),
    /// The options refuse it: each of its requests fails with this (it names no header
    /// value, MCP-15).
    Refused(String),
}

/// What the loop's wait ended with.
enum Waited {
    Wrote(Wrote),
    WriteFailed(io::Error),
    Event(Event),
    /// The inbox closed (it does not: the loop holds a sender).
    Timeout,
    /// The deadline came: the bridge's may have.
    Tick,
}

/// The bridge's deadline as the loop waits for it.
enum Deadline {
    /// A timer on smol's reactor, re-armed only when the deadline comes before the instant
    /// it is armed for (`at`): a later one (each line an agent writes puts its silence probe
    /// off, ACP-21) or none leaves it armed, and its early wake re-arms it.
    Smol {
        timer: smol::Timer,
        at: Option<Instant>,
    },
    /// The timeout of the loop's own wait: set each wait, no timer.
    Own(LoopWait),
}

impl Deadline {
    /// Before a wait: the bridge's next deadline.
    fn arm(&mut self, next: Option<Instant>) {
        match self {
            Deadline::Smol { timer, at } => {
                if let Some(next) = next {
                    if at.is_none_or(|armed| next < armed) {
                        timer.set_at(next);
                        *at = Some(next);
                    }
                }
            }
            Deadline::Own(wait) => wait.set_deadline(next),
        }
    }

    /// Ready once the deadline armed has come (or an earlier one: the bridge's is checked).
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match self {
            Deadline::Smol { timer, at } => {
                if at.is_some() && Pin::new(timer).poll(cx).is_ready() {
                    *at = None;
                    return Poll::Ready(());
                }
                Poll::Pending
            }
            Deadline::Own(wait) => wait.poll_deadline(cx),
        }
    }
}

/// What the loop asks of one agent's task.
enum AgentOp {
    Write(Vec<u8>),
    /// Close its stdin after what was queued before.
    CloseStdin,
    Kill,
}

/// One session's agent, as the loop knows it.
struct Agent {
    /// Its task's operations.
    ops: channel::Sender<AgentOp>,
    /// Its process group's id: its pid (it leads a group of its own).
    group: u32,
    /// Its stdout reader's turns.
    stdout: Gate,
}

/// A reader's turns to read (ACP-20): the reader reads one chunk a turn; the loop gives it
/// the next once the chunk has been handed in, while the bridge says to read its source.
struct Gate {
    turns: channel::Sender<()>,
    /// Its chunk was handed in and its next turn not given yet.
    owed: bool,
}

impl Gate {
    /// A gate and the reader's end of it, the first turn given.
    fn new() -> (Gate, channel::Receiver<()>) {
        let (turns, rx) = channel::bounded(1);
        let _ = turns.try_send(());
        (Gate { turns, owed: false }, rx)
    }

    /// The reader's chunk was handed in.
    fn handed_in(&mut self) {
        self.owed = true;
    }

    /// Gives the reader its next turn, if owed and `reads`.
    fn open(&mut self, reads: bool) {
        if self.owed && reads {
            self.owed = false;
            let _ = self.turns.try_send(());
        }
    }
}

/// What the loop has for the editor: lines the bridge gave, not yet written.
#[derive(Default)]
struct EditorOut {
    lines: VecDeque<Vec<u8>>,
    /// How much of the first line is written.
    offset: usize,
    /// Written since the last flush.
    unflushed: bool,
}

/// What came of a step of writing to the editor.
enum Wrote {
    /// This many bytes were written.
    Bytes(usize),
    /// The writer was flushed.
    Flushed,
}

impl EditorOut {
    /// Writes some of what waits (or flushes once all is written); pending, with nothing
    /// registered, when there is nothing to do. A write that is not ready wrote nothing.
    fn poll_step<W: AsyncWrite + Unpin>(
        &self,
        cx: &mut Context<'_>,
        out: &mut W,
    ) -> Poll<io::Result<Wrote>> {
        match self.lines.front() {
            Some(line) => {
                // The lines waiting, up to WRITE_LINES of them, in one write where the
                // writer takes several (the loop's own: `writev`).
                let mut slices = [io::IoSlice::new(&[]); WRITE_LINES];
                slices[0] = io::IoSlice::new(&line[self.offset..]);
                let mut count = 1;
                for (slice, line) in slices[1..].iter_mut().zip(self.lines.iter().skip(1)) {
                    *slice = io::IoSlice::new(line);
                    count += 1;
                }
                Pin::new(out)
                    .poll_write_vectored(cx, &slices[..count])
                    .map(|wrote| match wrote? {
                        0 => Err(io::ErrorKind::WriteZero.into()),
                        n => Ok(Wrote::Bytes(n)),
                    })
            }
            None if self.unflushed => Pin::new(out)
                .poll_flush(cx)
                .map(|flushed| flushed.map(|()| Wrote::Flushed)),
            None => Poll::Pending,
        }
    }

    /// Writes all that waits, and flushes.
    async fn drain<W: AsyncWrite + Unpin>(&mut self, out: &mut W) -> io::Result<()> {
        while let Some(line) = self.lines.pop_front() {
            out.write_all(&line[self.offset..]).await?;
            self.offset = 0;
        }
        out.flush().await
    }

    /// `n` bytes of the first line were written.
    fn wrote(&mut self, n: usize) {
        self.offset += n;
        self.unflushed = true;
        while self
            .lines
            .front()
            .is_some_and(|line| self.offset >= line.len())
        {
            let line = self.lines.pop_front().unwrap_or_default();
            self.offset -= line.len();
        }
    }
}

/// What ended [`serve_acp_stdio`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// The editor closed stdin, and every agent has exited (or the shutdown budget passed).
    EditorEnd,
    /// This signal (one of [`TERMINATING_SIGNALS`]) came, and every agent has exited (or the
    /// shutdown budget passed): the caller ends as that signal would
    /// ([`crate::agent_stdio::die_of`]).
    Signal(i32),
}

/// Serves ACP on this process's stdin and stdout, with [`TERMINATING_SIGNALS`] caught from
/// now on: the editor's end or a signal stops every agent (ACP-12) and ends the loop once
/// they have exited.
///
/// It blocks this thread: the loop waits on an epoll of its own, the editor's stdio and the
/// agents' pipes registered there once, edge-triggered, and the bridge's deadline the wait's
/// timeout (issue 36: a wake costs the wait and the reads and writes it is for). What else it
/// runs (the HTTP MCP exchanges, the children's exits, the blocking pool's work) stays on
/// smol's reactor and wakes it from there.
pub fn serve_acp_stdio<F>(
    config: BridgeConfig,
    mcp_http: McpHttpOptions,
    agent: F,
) -> io::Result<Served>
where
    F: Fn(&Path) -> std::process::Command,
{
    let mut signals = Signals::new(TERMINATING_SIGNALS)?;
    let handle = signals.handle();
    let (tx, rx) = channel::bounded::<i32>(1);
    std::thread::Builder::new()
        .name("musewire-acp-signals".into())
        .spawn(move || {
            if let Some(received) = signals.forever().next() {
                let _ = tx.try_send(received);
            }
        })?;
    let caught = Arc::new(AtomicI32::new(0));
    let seen = caught.clone();
    let (wait, mut waiter) = LoopWait::new()?;
    // ACP-22: this process is the bridge's own: its agents' orphans are its to end.
    let tasks = smol::Executor::new();
    let served = tasks.run(serve(
        &tasks,
        (Orphans::adopt(), Some(wait.clone())),
        (config, mcp_http),
        // ACP-20: what is in flight to and from the editor is bounded here too.
        crate::editor_stdio::editor_in(&wait.reactor),
        crate::editor_stdio::editor_out(&wait.reactor),
        agent,
        async move {
            if let Ok(signal) = rx.recv().await {
                seen.store(signal, Ordering::SeqCst);
            }
        },
    ));
    let served = crate::loop_wait::block_on(&wait, &mut waiter, served);
    handle.close();
    served??;
    Ok(match caught.load(Ordering::SeqCst) {
        0 => Served::EditorEnd,
        signal => Served::Signal(signal),
    })
}

/// Serves ACP on `editor_in`/`editor_out` until the editor's input ends (or a write to it
/// fails) and every agent has exited, or the bridge's shutdown budget has passed. `agent(cwd)` gives the command that starts a session's agent; the loop sets
/// its directory, its pipes and its process group.
pub async fn serve_acp<R, W, F>(
    config: BridgeConfig,
    editor_in: R,
    editor_out: W,
    agent: F,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
    F: Fn(&Path) -> std::process::Command,
{
    serve_acp_until(config, editor_in, editor_out, agent, future::pending()).await
}

/// [`serve_acp`], also ending when `shutdown` completes: every agent is then stopped as when
/// the editor's input ends (ACP-12), and the loop ends once they have exited.
pub async fn serve_acp_until<R, W, F, S>(
    config: BridgeConfig,
    editor_in: R,
    editor_out: W,
    agent: F,
    shutdown: S,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
    F: Fn(&Path) -> std::process::Command,
    S: Future<Output = ()> + Send + 'static,
{
    let tasks = smol::Executor::new();
    tasks
        .run(serve(
            &tasks,
            (Orphans::left_alone(), None),
            (config, McpHttpOptions::default()),
            editor_in,
            editor_out,
            agent,
            shutdown,
        ))
        .await
}

/// The loop of [`serve_acp_until`], sweeping `orphans` (ACP-22) when the bridge owns the
/// process, reaching the HTTP MCP servers as `mcp_http` allows (MCP-18), its agents' pipes
/// and its deadline on `wait` when it runs on a wait of its own ([`crate::loop_wait`]),
/// else on smol's.
///
/// The loop and the tasks it starts (the editor's reader, each agent's and MCP server's
/// transport) run on `tasks`, an executor of the loop's own that its caller runs it on
/// (`tasks.run(serve(&tasks, …))`), polled by whatever polls that: one thread. A chunk an
/// agent writes reaches the loop without a hand-over between threads (on smol's global
/// executor each was a futex wake and a wait on either side), and the tasks end with the
/// loop.
async fn serve<R, W, F, S>(
    tasks: &smol::Executor<'static>,
    (orphans, wait): (Orphans, Option<LoopWait>),
    (config, mcp_http): (BridgeConfig, McpHttpOptions),
    mut editor_in: R,
    mut editor_out: W,
    agent: F,
    shutdown: S,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
    F: Fn(&Path) -> std::process::Command,
    S: Future<Output = ()> + Send + 'static,
{
    let (events, inbox) = channel::bounded::<Event>(EVENT_QUEUE);
    // Polled in place (pinned: a receiver is not `Unpin`).
    let mut inbox = Box::pin(inbox);
    let shutdown_events = events.clone();
    tasks
        .spawn(async move {
            shutdown.await;
            let _ = shutdown_events.send(Event::Shutdown).await;
        })
        .detach();
    let editor_events = events.clone();
    let (mut editor_gate, editor_turns) = Gate::new();
    tasks
        .spawn(async move {
            let mut buf = vec![0u8; READ_CHUNK];
            loop {
                if editor_turns.recv().await.is_err() {
                    return;
                }
                match editor_in.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if editor_events
                            .send(Event::Editor(buf[..n].to_vec()))
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                }
            }
            let _ = editor_events.send(Event::EditorEnd).await;
        })
        .detach();

    let mut bridge = Bridge::new(config);
    let mut agents: BTreeMap<AgentKey, Agent> = BTreeMap::new();
    // MCP-01: the sessions' MCP servers, by server key, piped as the agents are.
    let mut servers: BTreeMap<McpServerKey, Agent> = BTreeMap::new();
    // MCP-18: the sessions' HTTP MCP servers, and the DELETEs of those stopped.
    let mut http: BTreeMap<McpServerKey, HttpServer> = BTreeMap::new();
    let mut stopping: Vec<smol::Task<()>> = Vec::new();
    // A failed write to the editor: it has gone, which ends the bridge as its input's end
    // does (ACP-12: the agents are stopped first); the error is returned at the end.
    let mut editor_failed: Option<io::Error> = None;
    let mut out = EditorOut::default();
    // The bridge's next timeout.
    let mut deadline = match &wait {
        Some(wait) => Deadline::Own(wait.clone()),
        None => Deadline::Smol {
            timer: smol::Timer::never(),
            at: None,
        },
    };
    loop {
        while let Some(action) = bridge.poll_action() {
            match action {
                Action::Editor { bytes } => {
                    if editor_failed.is_none() {
                        out.lines.push_back(bytes);
                    }
                }
                // ACP-26: read off the loop, handed back as an event.
                Action::ReadSessionFolder { dir } => {
                    let events = events.clone();
                    tasks
                        .spawn(async move {
                            let files = smol::unblock(move || {
                                crate::session_folder::read_session_folder(&dir)
                            })
                            .await;
                            let _ = events.send(Event::SessionFolder(files)).await;
                        })
                        .detach();
                }
                // ACP-31, ACP-32: the store's work, off the loop, handed back as an event.
                Action::ForkSessionFile {
                    ticket,
                    dir,
                    source,
                    naming,
                } => {
                    let events = events.clone();
                    tasks
                        .spawn(async move {
                            let done = smol::unblock(move || {
                                crate::session_folder::fork_session_file(&dir, &source, naming)
                            })
                            .await;
                            let _ = events.send(Event::SessionFile(ticket, done)).await;
                        })
                        .detach();
                }
                Action::DeleteSessionFile { ticket, dir, name } => {
                    let events = events.clone();
                    tasks
                        .spawn(async move {
                            let done = smol::unblock(move || {
                                crate::session_folder::delete_session_file(&dir, &name)
                            })
                            .await;
                            let _ = events.send(Event::SessionFile(ticket, done)).await;
                        })
                        .detach();
                }
                // ACP-38, ACP-39: read off the loop, handed back as an event.
                Action::ReadEditedFile { ticket, cwd, path } => {
                    let events = events.clone();
                    tasks
                        .spawn(async move {
                            let read = smol::unblock(move || {
                                crate::edited_file::read_edited_file(&cwd, &path)
                            })
                            .await;
                            let _ = events.send(Event::EditedFile(ticket, read)).await;
                        })
                        .detach();
                }
                Action::Spawn { session, cwd } => {
                    let mut command = agent(&cwd);
                    // ACP-12: a group of its own (a std Command's, CALL-11), killed whole
                    // when it is stopped.
                    command.current_dir(&cwd);
                    match start_agent(
                        tasks,
                        wait.as_ref().map(|wait| &wait.reactor),
                        command,
                        session.into(),
                        events.clone(),
                    ) {
                        Ok(started) => {
                            agents.insert(session, started);
                        }
                        Err(error) => {
                            eprintln!(
                                "musewire acp: cannot start the agent in {}: {error}",
                                cwd.display()
                            );
                            let _ =
                                events.try_send(Event::Exit(session.into(), ExitStatus::Unknown));
                        }
                    }
                }
                Action::Agent { session, bytes } => {
                    if let Some(agent) = agents.get(&session) {
                        let _ = agent.ops.try_send(AgentOp::Write(bytes));
                    }
                }
                Action::CloseAgentStdin { session } => {
                    if let Some(agent) = agents.get(&session) {
                        let _ = agent.ops.try_send(AgentOp::CloseStdin);
                    }
                }
                // The last the loop does for this agent: its group killed (it may have
                // exited, leaving processes in its group), then the process itself. The
                // group's id is not reused while a member lives; an empty group is ESRCH,
                // and its number comes round again only after the pid space has.
                Action::StopAgent { session } => {
                    if let Some(agent) = agents.remove(&session) {
                        kill(&agent);
                    }
                }
                // MCP-01: in the session's cwd, a group of its own, killed whole at its stop.
                Action::McpSpawn { server, launch } => {
                    let mut command = std::process::Command::new(&launch.command);
                    command
                        .args(&launch.args)
                        .envs(launch.env.iter().map(|(k, v)| (k, v)))
                        .current_dir(&launch.cwd);
                    match start_agent(
                        tasks,
                        wait.as_ref().map(|wait| &wait.reactor),
                        command,
                        server.into(),
                        events.clone(),
                    ) {
                        Ok(started) => {
                            servers.insert(server, started);
                        }
                        Err(error) => {
                            eprintln!(
                                "musewire acp: cannot start the MCP server {}: {error}",
                                launch.command.display()
                            );
                            let _ =
                                events.try_send(Event::Exit(server.into(), ExitStatus::Unknown));
                        }
                    }
                }
                Action::McpWrite { server, bytes } => {
                    if let Some(server) = servers.get(&server) {
                        let _ = server.ops.try_send(AgentOp::Write(bytes));
                    }
                }
                Action::McpStop { server } => {
                    if let Some(server) = servers.remove(&server) {
                        kill(&server);
                    }
                    // MCP-18: its DELETE finishes on its own; no more of its events are read.
                    if let Some(HttpServer::Open(transport)) = http.remove(&server) {
                        stopping.retain(|task| !task.is_finished());
                        stopping.push(tasks.spawn(transport.finish()));
                    }
                }
                // MCP-17, MCP-18: the options say whether the URL may be used.
                Action::McpHttpOpen { server, launch } => {
                    let opened = McpHttpTransport::new(&launch.url, launch.headers, &mcp_http);
                    let entry = match opened {
                        Ok(transport) => HttpServer::Open(transport),
                        Err(error) => HttpServer::Refused(error.to_string()),
                    };
                    http.insert(server, entry);
                }
                Action::McpHttpSend { server, request } => match http.get_mut(&server) {
                    Some(HttpServer::Open(transport)) => {
                        let wrap = move |event| Event::Http(server, event);
                        transport.send(tasks, request, events.clone(), wrap)
                    }
                    Some(HttpServer::Refused(error)) => {
                        let failed = HttpEvent::Failed {
                            exchange: request.exchange,
                            error: error.clone(),
                        };
                        let events = events.clone();
                        tasks
                            .spawn(async move {
                                let _ = events.send(Event::Http(server, failed)).await;
                            })
                            .detach();
                    }
                    None => {}
                },
                Action::McpHttpAbort { server, exchange } => {
                    if let Some(HttpServer::Open(transport)) = http.get_mut(&server) {
                        transport.abort(exchange);
                    }
                }
            }
        }
        // ACP-20: the readers the bridge reads get their next turn.
        editor_gate.open(bridge.reads_editor());
        for (&key, agent) in agents.iter_mut() {
            agent.stdout.open(bridge.reads_agent(key));
        }
        // An MCP server's lines answer the bridge's own requests and go to an agent, not the
        // editor: always read (their requests bound them, MCP-05).
        for server in servers.values_mut() {
            server.stdout.open(true);
        }
        if bridge.is_finished() {
            sweep(&orphans, &agents, &servers);
            // MCP-18: the stopped servers' DELETEs, within their grace (their events are
            // not read now: the queue holds what they send until the loop's end).
            let deletes = async {
                for task in stopping.drain(..) {
                    task.await;
                }
            };
            future::or(deletes, async {
                smol::Timer::after(DELETE_GRACE).await;
            })
            .await;
            // The bridge's last lines (a prompt failed as its agent stopped) go out, unless
            // the editor does not read them within the grace.
            if editor_failed.is_none() {
                let drain = out.drain(&mut editor_out);
                let grace = async {
                    smol::Timer::after(LAST_WRITE_GRACE).await;
                    Ok(())
                };
                editor_failed = future::or(drain, grace).await.err();
            }
            return editor_failed.map_or(Ok(()), Err);
        }
        deadline.arm(bridge.poll_timeout());
        // The editor's writer, the inbox and the timer are polled in place, wake after wake:
        // a wait registers nothing new and makes no timer.
        let waited = future::poll_fn(|cx| {
            if let Poll::Ready(wrote) = out.poll_step(cx, &mut editor_out) {
                return Poll::Ready(match wrote {
                    Ok(wrote) => Waited::Wrote(wrote),
                    Err(error) => Waited::WriteFailed(error),
                });
            }
            match inbox.as_mut().poll_next(cx) {
                Poll::Ready(Some(event)) => return Poll::Ready(Waited::Event(event)),
                // The loop holds a sender: the inbox does not close.
                Poll::Ready(None) => return Poll::Ready(Waited::Timeout),
                Poll::Pending => {}
            }
            deadline.poll(cx).map(|()| Waited::Tick)
        })
        .await;
        let now = Instant::now();
        let event = match waited {
            Waited::Wrote(Wrote::Bytes(n)) => {
                out.wrote(n);
                bridge.handle(now, Input::EditorWritten(n));
                continue;
            }
            Waited::Wrote(Wrote::Flushed) => {
                out.unflushed = false;
                continue;
            }
            // The editor has gone, which ends the bridge as its input's end does (ACP-12:
            // the agents are stopped first); the error is returned at the end.
            Waited::WriteFailed(error) => {
                editor_failed = Some(error);
                out = EditorOut::default();
                bridge.handle(now, Input::EditorEnd);
                continue;
            }
            Waited::Timeout => {
                bridge.handle(now, Input::Timeout);
                continue;
            }
            // The timer may have been armed for a deadline since put off.
            Waited::Tick => {
                if bridge.poll_timeout().is_some_and(|at| at <= now) {
                    bridge.handle(now, Input::Timeout);
                }
                continue;
            }
            Waited::Event(event) => event,
        };
        use ProcessKey::{Agent as A, McpServer as M};
        match event {
            // MCP-18: an exchange of a server not stopped yet.
            Event::Http(s, event) => {
                let Some(server) = http.get_mut(&s) else {
                    continue;
                };
                if let HttpServer::Open(transport) = server {
                    transport.finished(&event);
                }
                bridge.handle(now, Input::Mcp(s, McpRead::Http(event.as_input())))
            }
            // An MCP server's stderr is its own log: not read.
            Event::Stderr(M(_), _) => {}
            Event::Stdout(M(s), bytes) => {
                if let Some(server) = servers.get_mut(&s) {
                    server.stdout.handed_in();
                }
                bridge.handle(now, Input::Mcp(s, McpRead::Stdout(&bytes)))
            }
            Event::StdoutEnd(M(s)) => bridge.handle(now, Input::Mcp(s, McpRead::StdoutEnd)),
            // MCP-05 bounds what waits for a server: at most 64 calls.
            Event::Written(M(_), _) => {}
            Event::Written(A(s), n) => bridge.handle(now, Input::AgentWritten(s, n)),
            Event::Exit(M(s), _) => {
                sweep(&orphans, &agents, &servers);
                bridge.handle(now, Input::Mcp(s, McpRead::Exit))
            }
            Event::Editor(bytes) => {
                editor_gate.handed_in();
                bridge.handle(now, Input::Editor(&bytes))
            }
            Event::EditorEnd => bridge.handle(now, Input::EditorEnd),
            Event::Shutdown => bridge.handle(now, Input::Shutdown),
            Event::SessionFolder(files) => bridge.handle(now, Input::SessionFolder(files)),
            Event::SessionFile(ticket, done) => {
                bridge.handle(now, Input::SessionFile(ticket, done))
            }
            Event::EditedFile(ticket, read) => bridge.handle(now, Input::EditedFile(ticket, read)),
            Event::Stdout(A(s), bytes) => {
                if let Some(agent) = agents.get_mut(&s) {
                    agent.stdout.handed_in();
                }
                bridge.handle(now, Input::AgentStdout(s, &bytes))
            }
            Event::Stderr(A(s), bytes) => bridge.handle(now, Input::AgentStderr(s, &bytes)),
            Event::StdoutEnd(A(s)) => bridge.handle(now, Input::AgentStdoutEnd(s)),
            // The agent stays known until the bridge kills what is left of its group.
            Event::Exit(A(s), status) => {
                // ACP-22: what it left running ends with it.
                sweep(&orphans, &agents, &servers);
                bridge.handle(now, Input::AgentExit(s, status))
            }
        }
    }
}

/// ACP-22: the bridge's children that are none of its agents or servers are orphans of dead
/// agents: ended (when the bridge adopted them).
fn sweep(
    orphans: &Orphans,
    agents: &BTreeMap<AgentKey, Agent>,
    servers: &BTreeMap<McpServerKey, Agent>,
) {
    let ours = |pid: i32| {
        agents
            .values()
            .chain(servers.values())
            .any(|a| i32::try_from(a.group) == Ok(pid))
    };
    orphans.sweep(ours);
}

/// Kills a process's group, then the process itself. The group's id is not reused while a
/// member lives; an empty group is ESRCH.
fn kill(process: &Agent) {
    kill_group(process.group);
    let _ = process.ops.try_send(AgentOp::Kill);
}

/// Spawns one agent (or MCP server) on its transport ([`AgentPipes`], on `reactor` when the
/// loop has a wait of its own) and the task that runs
/// it: its stdout read on its gate's turns (ACP-20) and stderr whenever the loop takes the
/// events, its stdin written as it takes it (each write reported), killed when asked, and its
/// exit reported once its output has ended (or [`OUTPUT_GRACE`] after the exit).
fn start_agent(
    tasks: &smol::Executor<'static>,
    reactor: Option<&Reactor>,
    command: std::process::Command,
    process: ProcessKey,
    events: channel::Sender<Event>,
) -> io::Result<Agent> {
    let pipes = match reactor {
        Some(reactor) => AgentPipes::spawn_on(command, reactor)?,
        None => AgentPipes::spawn(command)?,
    };
    let group = pipes.pid();
    let (gate, turns) = Gate::new();
    // Bounded by the bridge rather than here (ACP-20): past AGENT_STDIN_HIGH_WATER bytes
    // waiting (each write is reported back) the editor, whose requests are what an agent is
    // written, is not read; ACP-23 bounds the requests that wait, and an MCP server is written
    // only the calls of its session's agent (at most 64, MCP-05).
    let (ops, op_rx) = channel::unbounded::<AgentOp>();
    tasks
        .spawn(run_agent(pipes, process, events, op_rx, turns))
        .detach();
    Ok(Agent {
        ops,
        group,
        stdout: gate,
    })
}

/// What woke an agent's task.
enum AgentWake {
    Op(Option<AgentOp>),
    Pipe(PipeEvent),
    Exited(ExitStatus),
    /// The loop gave up the agent's gate (it stopped the agent): stdout is not read again.
    GateGone,
    /// [`OUTPUT_GRACE`] ran out after the exit.
    Grace,
}

/// Runs one agent's transport until it has exited and its output has ended; see
/// [`start_agent`].
async fn run_agent(
    mut pipes: AgentPipes,
    process: ProcessKey,
    events: channel::Sender<Event>,
    ops: channel::Receiver<AgentOp>,
    turns: channel::Receiver<()>,
) {
    let mut out = vec![0u8; READ_CHUNK];
    let mut err = vec![0u8; READ_CHUNK];
    let (mut ops, mut turns) = (Box::pin(ops), Some(Box::pin(turns)));
    let mut ops_open = true;
    // Whether the gate has given a turn to read stdout (ACP-20).
    let mut turn = false;
    let mut exited: Option<ExitStatus> = None;
    let mut grace: Option<smol::Timer> = None;
    loop {
        let output_open = pipes.stdout_open() || pipes.stderr_open();
        if let (Some(status), false) = (exited, output_open) {
            let _ = events.send(Event::Exit(process, status)).await;
            return;
        }
        let wake = future::poll_fn(|cx| {
            if let (false, Some(gate)) = (turn, &mut turns) {
                match gate.as_mut().poll_next(cx) {
                    Poll::Ready(Some(())) => turn = true,
                    Poll::Ready(None) => return Poll::Ready(AgentWake::GateGone),
                    Poll::Pending => {}
                }
            }
            if ops_open {
                if let Poll::Ready(op) = ops.as_mut().poll_next(cx) {
                    return Poll::Ready(AgentWake::Op(op));
                }
            }
            if let Poll::Ready(event) = pipes.poll(cx, turn, &mut out, &mut err) {
                return Poll::Ready(AgentWake::Pipe(event));
            }
            if exited.is_none() {
                if let Poll::Ready(status) = pipes.poll_exit(cx) {
                    let status = status.map_or(ExitStatus::Unknown, musewire_host::exit_status);
                    return Poll::Ready(AgentWake::Exited(status));
                }
            }
            if let Some(timer) = &mut grace {
                if Pin::new(timer).poll(cx).is_ready() {
                    return Poll::Ready(AgentWake::Grace);
                }
            }
            Poll::Pending
        })
        .await;
        let sent = match wake {
            AgentWake::Op(Some(AgentOp::Write(bytes))) => match pipes.queue(&bytes) {
                true => Ok(()),
                // ACP-20: dropped with a closed stdin: no longer waiting.
                false => events.send(Event::Written(process, bytes.len())).await,
            },
            AgentWake::Op(Some(AgentOp::CloseStdin)) => {
                // After what was queued before (no grace here: the bridge kills it later).
                pipes.close_stdin(Duration::MAX);
                Ok(())
            }
            AgentWake::Op(Some(AgentOp::Kill)) => {
                pipes.kill();
                Ok(())
            }
            // The loop is over (it dropped its sender): stop the agent; its exit follows.
            AgentWake::Op(None) => {
                ops_open = false;
                pipes.kill();
                Ok(())
            }
            AgentWake::Pipe(PipeEvent::Stdout(n)) => {
                turn = false;
                let bytes = out[..n].to_vec();
                events.send(Event::Stdout(process, bytes)).await
            }
            AgentWake::Pipe(PipeEvent::StdoutEnd) => events.send(Event::StdoutEnd(process)).await,
            AgentWake::Pipe(PipeEvent::Stderr(n)) => {
                let bytes = err[..n].to_vec();
                events.send(Event::Stderr(process, bytes)).await
            }
            AgentWake::Pipe(PipeEvent::StderrEnd) => Ok(()),
            // ACP-20: written, or dropped with a stdin the agent closed.
            AgentWake::Pipe(PipeEvent::Written(n)) => events.send(Event::Written(process, n)).await,
            AgentWake::Exited(status) => {
                exited = Some(status);
                grace = Some(smol::Timer::after(OUTPUT_GRACE));
                Ok(())
            }
            AgentWake::GateGone => {
                turns = None;
                pipes.abandon_stdout();
                Ok(())
            }
            AgentWake::Grace => {
                pipes.abandon_stdout();
                pipes.abandon_stderr();
                Ok(())
            }
        };
        // The loop has gone: nothing is listening; the transport kills the child as it drops.
        if sent.is_err() {
            return;
        }
    }
}
