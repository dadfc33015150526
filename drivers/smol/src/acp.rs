//! The ACP loop: runs a [`Bridge`] between an editor (any byte stream, stdio for
//! `musewire acp`) and one agent process per ACP session. Only I/O: it reads the editor and
//! the agents' pipes, hands the bytes in, performs the bridge's actions (write to the
//! editor, spawn an agent in a cwd, write to an agent, close an agent's stdin, kill an
//! agent's process group), and sleeps until the next input or the bridge's next timeout.
//! Each agent is started as the leader of a process group of its own, so that killing the
//! group ends whatever the agent left running in it (ACP-12).

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use musewire_core::acp::{is_mcp_server_key, Action, Bridge, BridgeConfig, Input, McpRead};
use musewire_core::client::ExitStatus;
use rustix::process::{kill_process_group, Pid, Signal};
use signal_hook::iterator::Signals;
use smol::channel;
use smol::future;
use smol::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use smol::process::{Command, Stdio};

use crate::agent_stdio::TERMINATING_SIGNALS;

/// How long an exited agent's stdout may stay open (a grandchild holding it) before the
/// exit is reported anyway.
const STDOUT_GRACE: Duration = Duration::from_secs(2);

type SessionId = musewire_core::acp::SessionId;

/// What the loop waits for.
enum Event {
    Editor(Vec<u8>),
    EditorEnd,
    Stdout(Arc<str>, Vec<u8>),
    Stderr(Arc<str>, Vec<u8>),
    StdoutEnd(Arc<str>),
    Exit(Arc<str>, ExitStatus),
    /// The loop is told to end (a signal).
    Shutdown,
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
    /// Its process group (its pid: it leads a group of its own).
    group: Option<Pid>,
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
pub async fn serve_acp_stdio<F>(config: BridgeConfig, agent: F) -> io::Result<Served>
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
    let served = serve_acp_until(
        config,
        smol::Unblock::new(io::stdin()),
        smol::Unblock::new(io::stdout()),
        agent,
        async move {
            if let Ok(signal) = rx.recv().await {
                seen.store(signal, Ordering::SeqCst);
            }
        },
    )
    .await;
    handle.close();
    served?;
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
    let (events, inbox) = channel::unbounded::<Event>();
    let shutdown_events = events.clone();
    smol::spawn(async move {
        shutdown.await;
        let _ = shutdown_events.send(Event::Shutdown).await;
    })
    .detach();
    let editor_events = events.clone();
    smol::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
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
    let mut agents: BTreeMap<Arc<str>, Agent> = BTreeMap::new();
    // MCP-01: the sessions' MCP servers, by server key, piped as the agents are.
    let mut servers: BTreeMap<Arc<str>, Agent> = BTreeMap::new();
    // A failed write to the editor: it has gone, which ends the bridge as its input's end
    // does (ACP-12: the agents are stopped first); the error is returned at the end.
    let mut editor_failed: Option<io::Error> = None;
    loop {
        let mut editor_gone = false;
        while let Some(action) = bridge.poll_action() {
            match action {
                Action::Editor { bytes } => {
                    if editor_failed.is_some() {
                        continue;
                    }
                    let written = async {
                        editor_out.write_all(&bytes).await?;
                        editor_out.flush().await
                    };
                    if let Err(error) = written.await {
                        editor_failed = Some(error);
                        editor_gone = true;
                    }
                }
                Action::Spawn { session, cwd } => {
                    let mut command = agent(&cwd);
                    // ACP-12: a group of its own, killed whole when it is stopped.
                    command.current_dir(&cwd).process_group(0);
                    match start_agent(command.into(), session.0.clone(), events.clone()) {
                        Ok(started) => {
                            agents.insert(session.0.clone(), started);
                        }
                        Err(error) => {
                            eprintln!(
                                "musewire acp: cannot start the agent in {}: {error}",
                                cwd.display()
                            );
                            let _ = events
                                .try_send(Event::Exit(session.0.clone(), ExitStatus::Unknown));
                        }
                    }
                }
                Action::Agent { session, bytes } => {
                    if let Some(agent) = agents.get(&session.0) {
                        let _ = agent.ops.try_send(AgentOp::Write(bytes));
                    }
                }
                Action::CloseAgentStdin { session } => {
                    if let Some(agent) = agents.get(&session.0) {
                        let _ = agent.ops.try_send(AgentOp::CloseStdin);
                    }
                }
                // The last the loop does for this agent: its group killed (it may have
                // exited, leaving processes in its group), then the process itself. The
                // group's id is not reused while a member lives; an empty group is ESRCH,
                // and its number comes round again only after the pid space has.
                Action::StopAgent { session } => {
                    if let Some(agent) = agents.remove(&session.0) {
                        kill(&agent);
                    }
                }
                // MCP-01: in the session's cwd, a group of its own, killed whole at its stop.
                Action::McpSpawn { server, launch } => {
                    let key: Arc<str> = server.into();
                    let mut command = std::process::Command::new(&launch.command);
                    command
                        .args(&launch.args)
                        .envs(launch.env.iter().map(|(k, v)| (k, v)))
                        .current_dir(&launch.cwd)
                        .process_group(0);
                    match start_agent(command.into(), key.clone(), events.clone()) {
                        Ok(started) => {
                            servers.insert(key, started);
                        }
                        Err(error) => {
                            eprintln!(
                                "musewire acp: cannot start the MCP server {}: {error}",
                                launch.command.display()
                            );
                            let _ = events.try_send(Event::Exit(key, ExitStatus::Unknown));
                        }
                    }
                }
                Action::McpWrite { server, bytes } => {
                    if let Some(server) = servers.get(server.as_str()) {
                        let _ = server.ops.try_send(AgentOp::Write(bytes));
                    }
                }
                Action::McpStop { server } => {
                    if let Some(server) = servers.remove(server.as_str()) {
                        kill(&server);
                    }
                }
            }
        }
        if editor_gone {
            bridge.handle(Instant::now(), Input::EditorEnd);
            continue;
        }
        if bridge.is_finished() {
            return editor_failed.map_or(Ok(()), Err);
        }
        let event = match bridge.poll_timeout() {
            Some(at) => {
                future::or(async { inbox.recv().await.ok() }, async {
                    smol::Timer::at(at).await;
                    None
                })
                .await
            }
            None => inbox.recv().await.ok(),
        };
        let now = Instant::now();
        let Some(event) = event else {
            bridge.handle(now, Input::Timeout);
            continue;
        };
        let id = |s: &Arc<str>| SessionId::new(s.clone());
        match event {
            // An MCP server's stderr is its own log: not read.
            Event::Stderr(s, _) if is_mcp_server_key(&s) => {}
            Event::Stdout(s, bytes) if is_mcp_server_key(&s) => {
                bridge.handle(now, Input::Mcp(&s, McpRead::Stdout(&bytes)))
            }
            Event::StdoutEnd(s) if is_mcp_server_key(&s) => {
                bridge.handle(now, Input::Mcp(&s, McpRead::StdoutEnd))
            }
            Event::Exit(s, _) if is_mcp_server_key(&s) => {
                bridge.handle(now, Input::Mcp(&s, McpRead::Exit))
            }
            Event::Editor(bytes) => bridge.handle(now, Input::Editor(&bytes)),
            Event::EditorEnd => bridge.handle(now, Input::EditorEnd),
            Event::Shutdown => bridge.handle(now, Input::Shutdown),
            Event::Stdout(s, bytes) => bridge.handle(now, Input::AgentStdout(id(&s), &bytes)),
            Event::Stderr(s, bytes) => bridge.handle(now, Input::AgentStderr(id(&s), &bytes)),
            Event::StdoutEnd(s) => bridge.handle(now, Input::AgentStdoutEnd(id(&s))),
            // The agent stays known until the bridge kills what is left of its group.
            Event::Exit(s, status) => bridge.handle(now, Input::AgentExit(id(&s), status)),
        }
    }
}

/// Kills a process's group, then the process itself. The group's id is not reused while a
/// member lives; an empty group is ESRCH.
fn kill(process: &Agent) {
    if let Some(group) = process.group {
        let _ = kill_process_group(group, Signal::KILL);
    }
    let _ = process.ops.try_send(AgentOp::Kill);
}

/// Spawns one agent (or MCP server) and the tasks that pipe it: stdout and stderr readers, and a task that
/// writes its stdin, kills it when asked, and reports its exit after its stdout has ended.
fn start_agent(
    mut command: Command,
    session: Arc<str>,
    events: channel::Sender<Event>,
) -> io::Result<Agent> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let group = i32::try_from(child.id()).ok().and_then(Pid::from_raw);
    let missing = |p: &str| io::Error::other(format!("the child has no {p} pipe"));
    let mut stdin = Some(child.stdin.take().ok_or_else(|| missing("stdin"))?);
    let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
    let stderr = child.stderr.take().ok_or_else(|| missing("stderr"))?;
    let (stdout_done_tx, stdout_done) = channel::bounded::<()>(1);
    pipe(
        stdout,
        session.clone(),
        events.clone(),
        Event::Stdout,
        Some(stdout_done_tx),
    );
    pipe(stderr, session.clone(), events.clone(), Event::Stderr, None);
    let (ops, op_rx) = channel::unbounded::<AgentOp>();
    smol::spawn(async move {
        let status = loop {
            let next = future::or(async { Ok(op_rx.recv().await) }, async {
                Err(child.status().await)
            })
            .await;
            match next {
                Ok(Ok(AgentOp::Write(bytes))) => {
                    // A failed write means the agent stopped reading; its exit follows.
                    if let Some(stdin) = stdin.as_mut() {
                        let _ = stdin.write_all(&bytes).await;
                        let _ = stdin.flush().await;
                    }
                }
                Ok(Ok(AgentOp::CloseStdin)) => stdin = None,
                Ok(Ok(AgentOp::Kill)) => {
                    let _ = child.kill();
                }
                // The loop is over (it dropped its sender): stop the agent and reap it.
                Ok(Err(_)) => {
                    let _ = child.kill();
                    break child.status().await;
                }
                Err(status) => break status,
            }
        };
        let status = match status {
            Ok(status) => status.into(),
            Err(_) => ExitStatus::Unknown,
        };
        future::or(
            async {
                let _ = stdout_done.recv().await;
            },
            async {
                smol::Timer::after(STDOUT_GRACE).await;
            },
        )
        .await;
        let _ = events.send(Event::Exit(session, status)).await;
    })
    .detach();
    Ok(Agent { ops, group })
}

type Wrap = fn(Arc<str>, Vec<u8>) -> Event;

fn pipe<R: AsyncRead + Unpin + Send + 'static>(
    mut from: R,
    session: Arc<str>,
    events: channel::Sender<Event>,
    wrap: Wrap,
    done: Option<channel::Sender<()>>,
) {
    smol::spawn(async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if events
                        .send(wrap(session.clone(), buf[..n].to_vec()))
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            }
        }
        if let Some(done) = done {
            let _ = events.send(Event::StdoutEnd(session)).await;
            drop(done);
        }
    })
    .detach();
}
