//! The ACP loop: runs a [`Bridge`] between an editor (any byte stream, stdio for
//! `musewire acp`) and one agent process per ACP session. Only I/O: it reads the editor and
//! the agents' pipes, hands the bytes in, performs the bridge's actions (write to the
//! editor, spawn an agent in a cwd, write to an agent, stop an agent), and sleeps until the
//! next input or the bridge's next timeout.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use musewire_core::acp::{Action, Bridge, BridgeConfig, Input};
use musewire_core::client::ExitStatus;
use smol::channel;
use smol::future;
use smol::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use smol::process::{Command, Stdio};

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
}

/// What the loop asks of one agent's task.
enum AgentOp {
    Write(Vec<u8>),
    Kill,
}

/// Serves ACP on `editor_in`/`editor_out` until the editor's input ends and every agent
/// has exited. `agent(cwd)` gives the command that starts a session's agent; the loop sets
/// its directory and pipes.
pub async fn serve_acp<R, W, F>(
    config: BridgeConfig,
    mut editor_in: R,
    mut editor_out: W,
    agent: F,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
    F: Fn(&Path) -> Command,
{
    let (events, inbox) = channel::unbounded::<Event>();
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
    let mut agents: BTreeMap<Arc<str>, channel::Sender<AgentOp>> = BTreeMap::new();
    loop {
        while let Some(action) = bridge.poll_action() {
            match action {
                Action::Editor { bytes } => {
                    editor_out.write_all(&bytes).await?;
                    editor_out.flush().await?;
                }
                Action::Spawn { session, cwd } => {
                    let mut command = agent(&cwd);
                    command.current_dir(&cwd);
                    match start_agent(command, session.0.clone(), events.clone()) {
                        Ok(ops) => {
                            agents.insert(session.0.clone(), ops);
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
                    if let Some(ops) = agents.get(&session.0) {
                        let _ = ops.try_send(AgentOp::Write(bytes));
                    }
                }
                Action::StopAgent { session } => {
                    if let Some(ops) = agents.get(&session.0) {
                        let _ = ops.try_send(AgentOp::Kill);
                    }
                }
            }
        }
        if bridge.is_finished() {
            return Ok(());
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
            Event::Editor(bytes) => bridge.handle(now, Input::Editor(&bytes)),
            Event::EditorEnd => bridge.handle(now, Input::EditorEnd),
            Event::Stdout(s, bytes) => bridge.handle(now, Input::AgentStdout(id(&s), &bytes)),
            Event::Stderr(s, bytes) => bridge.handle(now, Input::AgentStderr(id(&s), &bytes)),
            Event::StdoutEnd(s) => bridge.handle(now, Input::AgentStdoutEnd(id(&s))),
            Event::Exit(s, status) => {
                agents.remove(&s);
                bridge.handle(now, Input::AgentExit(id(&s), status))
            }
        }
    }
}

/// Spawns one agent and the tasks that pipe it: stdout and stderr readers, and a task that
/// writes its stdin, kills it when asked, and reports its exit after its stdout has ended.
fn start_agent(
    mut command: Command,
    session: Arc<str>,
    events: channel::Sender<Event>,
) -> io::Result<channel::Sender<AgentOp>> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let missing = |p: &str| io::Error::other(format!("the child has no {p} pipe"));
    let mut stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
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
                    let _ = stdin.write_all(&bytes).await;
                    let _ = stdin.flush().await;
                }
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
    Ok(ops)
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
