//! Calls made now and taken later: one thread can keep calls open on many agents at once,
//! instead of a thread blocked on each.
//!
//! [`AgentProcess::submit`] makes a call and returns at once with its [`Pending`] answer;
//! [`AgentProcess::submit_to`] also puts a tag of the caller's choosing on a [`Completions`]
//! queue once the answer has come (or the session ended without one), so one thread waits on
//! the queue for whichever call is answered first and takes that answer without waiting.
//! Nothing is woken for an answer nobody waits on yet: the queue's thread is woken only when
//! it waits on an empty queue.

use std::collections::VecDeque;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::thread::{self, Thread};
use std::time::Duration;

use musewire_core::client::CallError;
use musewire_host::{methods, Heard};
use musewire_wire::FromAnswer;

use crate::oneshot;
use crate::reactor::lock;

/// The answer to a call made with [`AgentProcess::submit`](crate::AgentProcess::submit),
/// typed as `T`, taken when the caller wants it. Until the answer has come (or the
/// `Pending` is dropped), the driver reads the agent on whether or not events are taken (as
/// for a blocked caller), so the answer always arrives. Dropping it before its call was made
/// withdraws the call.
#[must_use = "the answer is taken from the Pending"]
pub struct Pending<T> {
    heard: Option<oneshot::Receiver<Heard>>,
    answer: PhantomData<fn() -> T>,
}

impl<T: FromAnswer> Pending<T> {
    pub(crate) fn new(heard: oneshot::Receiver<Heard>) -> Self {
        Pending {
            heard: Some(heard),
            answer: PhantomData,
        }
    }

    /// The answer, waiting up to `timeout` for it, as the blocking call would return it (a
    /// session that ends fails its open requests, [`CallError::Failed`]):
    /// [`CallError::Timeout`] when it has not come by then (the call stays open; wait again
    /// or drop it), [`CallError::Ended`] when the session ended before the call was made or
    /// the answer was taken already.
    pub fn wait(&mut self, timeout: Duration) -> Result<T, CallError> {
        let receiver = self.heard.as_ref().ok_or(CallError::Ended)?;
        let heard = crate::hear_until(receiver, crate::deadline(timeout))?;
        if let Some(receiver) = self.heard.take() {
            receiver.recycle();
        }
        methods::heard(heard)
    }

    /// The answer if it has come, without waiting: `None` while it has not.
    pub fn try_take(&mut self) -> Option<Result<T, CallError>> {
        let Some(heard) = &self.heard else {
            return Some(Err(CallError::Ended));
        };
        let heard = match heard.try_recv() {
            Ok(heard) => Some(heard),
            Err(oneshot::RecvError::Closed) => None,
            Err(oneshot::RecvError::Timeout) => return None,
        };
        if let Some(receiver) = self.heard.take() {
            receiver.recycle();
        }
        Some(methods::heard(heard))
    }

    /// Whether the answer was taken (or the session ended and that was said).
    pub fn is_taken(&self) -> bool {
        self.heard.is_none()
    }
}

impl<T> std::fmt::Debug for Pending<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("taken", &self.heard.is_none())
            .finish()
    }
}

/// A queue of tags, one for each call made with
/// [`AgentProcess::submit_to`](crate::AgentProcess::submit_to) once its answer can be
/// taken (or its session ended without one): one thread waits here for calls on many agents.
///
/// Twenty agents on one reactor, a `get_state` open on each at once, each answer taken as
/// it comes, all from one thread:
///
/// ```no_run
/// use std::time::Duration;
/// use musewire_core::client::Call;
/// use musewire_wire::{GetState, SessionState};
/// use musewire_mio::{Completions, Reactor};
/// let reactor = Reactor::new()?;
/// let agents = (0..20)
///     .map(|_| {
///         let mut command = std::process::Command::new("omp");
///         command.args(["--mode", "rpc"]);
///         reactor.spawn(command, Default::default())
///     })
///     .collect::<std::io::Result<Vec<_>>>()?;
/// let done = Completions::new();
/// let mut pending = agents
///     .iter()
///     .enumerate()
///     .map(|(i, agent)| {
///         agent.submit_to::<SessionState>(Call::Send(GetState::default().into()), &done, i as u64)
///     })
///     .collect::<Result<Vec<_>, _>>()?;
/// for _ in 0..agents.len() {
///     let i = done.next(Duration::from_secs(10)).ok_or("no answer in time")?;
///     let state = pending[i as usize].try_take().expect("answered")?;
///     println!("agent {i}: {:?}", state.session_id);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct Completions {
    tags: Arc<Tags>,
}

/// The queue behind [`Completions`]: the tags in the order their answers came, and the thread
/// that waits for one while there is none. A tag is put with one short lock and, only when
/// the waiting thread sleeps, one wake (`std::sync::mpsc` took a contended lock of its own
/// for most answers: two more futex calls each).
#[derive(Debug, Default)]
pub(crate) struct Tags(Mutex<TagQueue>);

#[derive(Debug, Default)]
struct TagQueue {
    tags: VecDeque<u64>,
    /// The thread in [`Completions::next`] while the queue is empty.
    sleeper: Option<Thread>,
}

impl Tags {
    /// Puts `tag` last, waking the thread that waits for one.
    pub(crate) fn put(&self, tag: u64) {
        let sleeper = {
            let mut queue = lock(&self.0);
            queue.tags.push_back(tag);
            queue.sleeper.take()
        };
        if let Some(thread) = sleeper {
            thread.unpark();
        }
    }
}

impl Completions {
    /// An empty queue, to pass to `AgentProcess::submit_to` for calls whose answers are taken
    /// here later.
    pub fn new() -> Self {
        Self::default()
    }

    /// The tag of the next call whose answer can be taken, waiting up to `timeout`; `None`
    /// when none came in that time. Each call's tag comes once.
    pub fn next(&self, timeout: Duration) -> Option<u64> {
        let deadline = crate::deadline(timeout).map(|(at, _)| at);
        loop {
            {
                let mut queue = lock(&self.tags.0);
                if let Some(tag) = queue.tags.pop_front() {
                    return Some(tag);
                }
                queue.sleeper = Some(thread::current());
            }
            if !oneshot::park_until(deadline) {
                let mut queue = lock(&self.tags.0);
                queue.sleeper = None;
                return queue.tags.pop_front();
            }
        }
    }

    /// The tag of a call whose answer can be taken, if one is ready now.
    pub fn try_next(&self) -> Option<u64> {
        lock(&self.tags.0).tags.pop_front()
    }

    /// Where a call's channel puts its tag.
    pub(crate) fn notify(&self, tag: u64) -> (Arc<Tags>, u64) {
        (Arc::clone(&self.tags), tag)
    }
}
