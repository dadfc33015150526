//! The loop thread: one `mio::Poll` over the pipes of every agent on it, one waker for their
//! handles, the earliest of their deadlines. Each agent's own part (its reading, writing, and
//! the core's bookkeeping) is an [`Agent`](crate::event_loop::Agent); this keeps only the poll,
//! the wait, and which agent each wake is for.
//!
//! # Tokens
//! An agent gets an id when it is spawned (never reused); its pipes are registered under the
//! tokens `id * 3` (stdout), `id * 3 + 1` (stderr) and `id * 3 + 2` (stdin, only while bytes
//! wait for it). Token 0 is the waker, shared by every handle. A handle that wants its agent
//! looked at (an operation sent, a stop, an event taken) puts the agent's id on the reactor's
//! list and wakes the poll, only when the loop waits on it: a busy loop reads the list before
//! it waits again, and one wake serves every handle until then.
//!
//! # Poll order
//! Each turn of the loop, in this order:
//! 1. the list the handles filled: agents newly spawned are started (their output pipes
//!    registered, their first timer step handed in), a stop asked by a handle is done at
//!    once, and every agent named gets a turn;
//! 2. every agent whose deadline (the core's timer, the reaping of an exit) has come gets a
//!    turn;
//! 3. the turns, in the order of the agents' ids: its operations (while the bytes waiting for
//!    its stdin stay under the core's bound), its stdout (when it was readable, or held back
//!    and maybe free again; 16 reads of 64 KiB at most, an agent with more to read has another
//!    turn next round and the poll does not wait), its timers, its exit, its stdin, and its
//!    operations again. An
//!    agent that has exited and whose output pipes have closed is removed (its pipes are out
//!    of the poll, its id freed) and its handle gets its exit status; an agent whose I/O fails
//!    is killed and removed, and its handle gets the error;
//! 4. the loop ends once the [`Reactor`] handle is gone and no agent is left on it;
//! 5. it waits on the poll until a pipe is ready, a handle wakes it, or the earliest deadline
//!    of any agent; then, for each readiness in the order the poll gives them, an agent's
//!    stderr is read (until it would block), its stdin written, or its stdout marked to be
//!    read in its turn; every agent with a readiness gets a turn.

use std::collections::BTreeMap;
use std::io;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::{Events, Poll, Registry, Token, Waker};
use musewire_core::client::{ClientConfig, ClientEvent};

use crate::event_loop::{Agent, Prepared, EXIT, STDERR, STDOUT, TOKENS};
use crate::{AgentProcess, Caller};

/// The waker's token; agents' tokens start at [`TOKENS`] (ids start at 1).
const WAKE: Token = Token(0);

/// What an agent's handle hears when the agent is done: its exit status, or the error that
/// ended it.
pub(crate) type Done = io::Result<ExitStatus>;

/// One thread that drives many agents: [`Reactor::spawn`] starts an agent on it and gives back
/// its [`AgentProcess`], the same handle as [`AgentProcess::spawn`] gives (which is an agent on
/// a reactor of its own). The module docs of `reactor.rs` give the poll order.
///
/// The thread ends once the `Reactor` is dropped and every agent on it is done (an agent is
/// done once it has exited: dropping its handle kills it). An agent that exits is removed from
/// the reactor; the others go on.
///
/// ```no_run
/// use std::time::Duration;
/// use musewire_mio::Reactor;
/// let reactor = Reactor::new()?;
/// let agents = (0..20)
///     .map(|_| {
///         let mut command = std::process::Command::new("omp");
///         command.args(["--mode", "rpc"]);
///         reactor.spawn(command, Default::default())
///     })
///     .collect::<std::io::Result<Vec<_>>>()?;
/// for agent in &agents {
///     agent.get_state(Duration::from_secs(10))?;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Reactor {
    shared: Arc<Shared>,
    registry: Arc<Registry>,
    thread: Option<JoinHandle<()>>,
}

/// What the reactor's handles and its thread share.
pub(crate) struct Shared {
    waker: Waker,
    inbox: Mutex<Inbox>,
    /// The last id given to an agent.
    last_id: AtomicUsize,
    /// How many agents the loop holds.
    agents: AtomicUsize,
}

/// What the handles hand the loop, taken whole at each turn.
#[derive(Default)]
struct Inbox {
    /// Agents spawned, to start.
    added: Vec<Added>,
    /// Agents a handle woke, by id.
    woken: Vec<usize>,
    /// The `Reactor` handle is gone.
    closed: bool,
    /// The loop found the list empty and waits on the poll: the next handle to fill it
    /// wakes the poll (and clears this, so one wake serves them all). While the loop is
    /// busy it reads the list before it waits again, and nobody need wake it.
    sleeping: bool,
}

impl Inbox {
    fn is_empty(&self) -> bool {
        self.added.is_empty() && self.woken.is_empty()
    }
}

/// What an agent's handle keeps of the agent it spawned on a reactor.
pub(crate) struct Started {
    pub(crate) pid: u32,
    pub(crate) caller: Caller,
    pub(crate) events: mpsc::Receiver<Vec<ClientEvent>>,
    /// Where the handle hears the agent is done.
    pub(crate) ended: mpsc::Receiver<Done>,
}

/// A spawned agent on its way to the loop.
struct Added {
    agent: Agent,
    link: Arc<Link>,
    done: mpsc::Sender<Done>,
}

/// How an agent's handle (and its host handlers) reach the agent on the loop: its id, the
/// reactor, and the stop it asked for.
pub(crate) struct Link {
    id: usize,
    shared: Arc<Shared>,
    /// The shortest grace a stop was asked with, until the loop takes it.
    stop: Mutex<Option<Duration>>,
}

impl Link {
    /// The agent's id on its reactor.
    pub(crate) fn id(&self) -> usize {
        self.id
    }

    /// Has the loop look at the agent: its operations, and its stdout held back.
    pub(crate) fn wake(&self) {
        self.shared.wake(self.id);
    }

    /// Has the loop stop the agent: its stdin closed now, killed after `grace` (the shortest
    /// of several stops). Never waits for room in the operations queue.
    pub(crate) fn stop(&self, grace: Duration) {
        {
            let mut stop = lock(&self.stop);
            *stop = Some(stop.map_or(grace, |g| g.min(grace)));
        }
        self.wake();
    }

    fn take_stop(&self) -> Option<Duration> {
        lock(&self.stop).take()
    }
}

impl Shared {
    fn wake(&self, id: usize) {
        let sleeping = {
            let mut inbox = lock(&self.inbox);
            inbox.woken.push(id);
            std::mem::take(&mut inbox.sleeping)
        };
        // A loop that is not waiting on the poll reads the list before it waits again.
        if sleeping {
            let _ = self.waker.wake();
        }
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Reactor {
    /// Starts the loop thread, with no agent yet.
    pub fn new() -> io::Result<Reactor> {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKE)?;
        let registry = Arc::new(poll.registry().try_clone()?);
        let shared = Arc::new(Shared {
            waker,
            inbox: Mutex::default(),
            last_id: AtomicUsize::new(0),
            agents: AtomicUsize::new(0),
        });
        let mut thread = Loop {
            poll,
            shared: Arc::clone(&shared),
            agents: BTreeMap::new(),
            turns: Vec::new(),
            spare_turns: Vec::new(),
            spare_woken: Vec::new(),
        };
        let thread = std::thread::Builder::new()
            .name("musewire-mio".into())
            .spawn(move || thread.run())?;
        Ok(Reactor {
            shared,
            registry,
            thread: Some(thread),
        })
    }

    /// Spawns `command` with piped stdio and starts driving it on this reactor's thread; the
    /// handle is the same as [`AgentProcess::spawn`]'s.
    pub fn spawn(&self, command: Command, config: ClientConfig) -> io::Result<AgentProcess> {
        AgentProcess::start(self, command, config, None)
    }

    /// As [`Reactor::spawn`], and records the session as a conformance transcript at `path`
    /// (see [`AgentProcess::spawn_recorded`]).
    pub fn spawn_recorded(
        &self,
        command: Command,
        config: ClientConfig,
        path: &std::path::Path,
    ) -> io::Result<AgentProcess> {
        AgentProcess::start(self, command, config, Some(path))
    }

    /// How many agents the reactor drives now: an agent counts from its first turn until it
    /// is done (it has exited and its output has ended).
    pub fn agents(&self) -> usize {
        self.shared.agents.load(Ordering::SeqCst)
    }

    /// Spawns an agent for [`AgentProcess`] (`prepare` spawns it, given its link to this
    /// reactor and the registry of its poll) and hands it to the loop.
    pub(crate) fn add(
        &self,
        prepare: impl FnOnce(Arc<Link>, Arc<Registry>) -> io::Result<Prepared>,
    ) -> io::Result<Started> {
        let id = self.shared.last_id.fetch_add(1, Ordering::SeqCst) + 1;
        let link = Arc::new(Link {
            id,
            shared: Arc::clone(&self.shared),
            stop: Mutex::new(None),
        });
        let Prepared {
            agent,
            pid,
            caller,
            events,
        } = prepare(Arc::clone(&link), Arc::clone(&self.registry))?;
        let (done, ended) = mpsc::channel();
        let sleeping = {
            let mut inbox = lock(&self.shared.inbox);
            inbox.added.push(Added { agent, link, done });
            std::mem::take(&mut inbox.sleeping)
        };
        if sleeping {
            self.shared.waker.wake()?;
        }
        Ok(Started {
            pid,
            caller,
            events,
            ended,
        })
    }

    /// Ends the reactor and waits for its thread, once its last agent is done.
    pub(crate) fn join(mut self) {
        self.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    fn close(&self) {
        lock(&self.shared.inbox).closed = true;
        let _ = self.shared.waker.wake();
    }
}

impl Drop for Reactor {
    fn drop(&mut self) {
        // The thread goes on while agents are on it, and ends after the last.
        self.close();
    }
}

/// An agent on the loop, with what its turn is to do.
struct Entry {
    agent: Agent,
    link: Arc<Link>,
    done: mpsc::Sender<Done>,
    deadline: Option<Instant>,
    /// Its stdout was readable.
    read_stdout: bool,
    /// It has a turn coming in this round (it is in `turns`).
    due: bool,
}

/// The loop thread's state.
struct Loop {
    poll: Poll,
    shared: Arc<Shared>,
    agents: BTreeMap<usize, Entry>,
    /// The agents to have a turn this round, by id.
    turns: Vec<usize>,
    /// The buffers of the last round's turns and of the handles' wakes, kept for the next
    /// (the loop allocates nothing a round, and frees nothing a handle allocated).
    spare_turns: Vec<usize>,
    spare_woken: Vec<usize>,
}

impl Loop {
    fn run(&mut self) {
        let mut events = Events::with_capacity(256);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            if self.inbox() {
                return;
            }
            let now = Instant::now();
            for (id, entry) in self.agents.iter_mut() {
                if !entry.due && entry.deadline.is_some_and(|d| d <= now) {
                    entry.due = true;
                    self.turns.push(*id);
                }
            }
            self.turns.sort_unstable();
            let mut turns =
                std::mem::replace(&mut self.turns, std::mem::take(&mut self.spare_turns));
            for &id in &turns {
                self.turn(id, &mut buf);
            }
            turns.clear();
            self.spare_turns = turns;
            // The last agent may have just gone, with nothing left to wake the poll.
            if self.agents.is_empty() && self.ended() {
                return;
            }
            let now = Instant::now();
            let deadline = self.agents.values().filter_map(|e| e.deadline).min();
            let timeout = match self.turns.is_empty() && self.sleep() {
                true => deadline.map(|d| d.saturating_duration_since(now)),
                false => Some(Duration::ZERO),
            };
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.fail_all(&e),
            }
            for event in events.iter() {
                let token = event.token().0;
                if token == WAKE.0 {
                    // The list is read at the top of each turn.
                    continue;
                }
                let id = token / TOKENS;
                let Some(entry) = self.agents.get_mut(&id) else {
                    continue;
                };
                let ready = match token % TOKENS {
                    STDOUT => {
                        entry.read_stdout = true;
                        Ok(())
                    }
                    STDERR => entry.agent.stderr_ready(&mut buf),
                    EXIT => {
                        entry.agent.exit_reported();
                        Ok(())
                    }
                    _ => entry.agent.stdin_ready(),
                };
                if let Err(e) = ready {
                    self.fail(id, e);
                    continue;
                }
                if !entry.due {
                    entry.due = true;
                    self.turns.push(id);
                }
            }
        }
    }

    /// Before the loop waits on the poll: false when the handles' list is not empty (the
    /// loop reads it first), else the loop is marked as waiting, so the next handle to fill
    /// the list wakes the poll.
    fn sleep(&self) -> bool {
        let mut inbox = lock(&self.shared.inbox);
        inbox.sleeping = inbox.is_empty();
        inbox.sleeping
    }

    /// Takes what the handles sent: new agents, stops, wakes. True when the loop is to end:
    /// the `Reactor` handle is gone and no agent is left.
    fn inbox(&mut self) -> bool {
        let mut woken = std::mem::take(&mut self.spare_woken);
        let inbox = {
            let mut inbox = lock(&self.shared.inbox);
            // Awake: the handles need not wake the poll until it waits again.
            inbox.sleeping = false;
            if inbox.closed && inbox.added.is_empty() && self.agents.is_empty() {
                return true;
            }
            // The handles push on the loop's spare buffer next: no allocation either side.
            std::mem::swap(&mut inbox.woken, &mut woken);
            Inbox {
                added: std::mem::take(&mut inbox.added),
                woken: Vec::new(),
                closed: inbox.closed,
                sleeping: false,
            }
        };
        let now = Instant::now();
        for Added { agent, link, done } in inbox.added {
            let id = link.id();
            let mut entry = Entry {
                agent,
                link,
                done,
                deadline: None,
                read_stdout: false,
                due: false,
            };
            if let Err(e) = entry.agent.start(now) {
                entry.agent.abandon();
                let _ = entry.done.send(Err(e));
                continue;
            }
            self.agents.insert(id, entry);
            self.shared.agents.fetch_add(1, Ordering::SeqCst);
            self.due(id);
        }
        for &id in &woken {
            let Some(entry) = self.agents.get_mut(&id) else {
                continue;
            };
            if let Some(grace) = entry.link.take_stop() {
                entry.agent.stop(now, grace);
            }
            self.due(id);
        }
        woken.clear();
        self.spare_woken = woken;
        false
    }

    /// Whether the `Reactor` handle is gone with no agent left on the way.
    fn ended(&self) -> bool {
        let inbox = lock(&self.shared.inbox);
        inbox.closed && inbox.added.is_empty()
    }

    fn due(&mut self, id: usize) {
        if let Some(entry) = self.agents.get_mut(&id) {
            if !entry.due {
                entry.due = true;
                self.turns.push(id);
            }
        }
    }

    /// The agent's turn (see the module docs); removes it once it is done.
    fn turn(&mut self, id: usize, buf: &mut [u8]) {
        let Some(entry) = self.agents.get_mut(&id) else {
            return;
        };
        entry.due = false;
        let read_stdout = std::mem::take(&mut entry.read_stdout);
        let turn = entry.agent.turn(read_stdout, buf);
        match turn.and_then(|more| Ok((more, entry.agent.done()?))) {
            Ok((more, None)) => {
                entry.deadline = entry.agent.deadline(Instant::now());
                // Stdout left unread has another turn next round, the poll not waiting.
                if more {
                    entry.read_stdout = true;
                    entry.due = true;
                    self.turns.push(id);
                }
            }
            Ok((_, Some(status))) => {
                if let Some(entry) = self.remove(id) {
                    let _ = entry.done.send(Ok(status));
                }
            }
            Err(e) => self.fail(id, e),
        }
    }

    fn remove(&mut self, id: usize) -> Option<Entry> {
        let entry = self.agents.remove(&id)?;
        self.shared.agents.fetch_sub(1, Ordering::SeqCst);
        Some(entry)
    }

    /// Ends an agent whose I/O failed; its handle gets the error.
    fn fail(&mut self, id: usize, error: io::Error) {
        if let Some(mut entry) = self.remove(id) {
            entry.agent.abandon();
            let _ = entry.done.send(Err(error));
        }
    }

    /// The poll failed: every agent ends with its error.
    fn fail_all(&mut self, error: &io::Error) {
        let ids: Vec<usize> = self.agents.keys().copied().collect();
        for id in ids {
            self.fail(id, io::Error::new(error.kind(), error.to_string()));
        }
    }
}
