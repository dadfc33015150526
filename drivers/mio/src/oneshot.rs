//! A one-value channel between the loop thread and a blocked caller: what a call returned, or
//! the answer to the request a waited call made, on the same channel (the caller wakes once a
//! call).
//!
//! Cheaper than `std::sync::mpsc` for one value: no allocation once a thread has made a call
//! (the shared slot of its last call is used again when nothing else holds it:
//! [`reused`], [`Receiver::recycle`]), and a wake only when the receiver sleeps. The sender
//! lets go of the slot before it wakes the receiver, so the slot is free again by the time
//! the caller runs. And the sender can tell that the receiver gave up
//! ([`Sender::is_withdrawn`]): a call whose caller timed out before the loop took it is then
//! never made.

use std::cell::Cell;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, Thread};
use std::time::Instant;

use musewire_host::{Heard, WaitingOwned};

use crate::pending::Tags;
use crate::reactor::lock;

/// What the slot holds.
enum State<T> {
    /// Nothing yet; the receiver's thread when it sleeps.
    Empty(Option<Thread>),
    Sent(T),
    /// Every sender dropped without sending, or the value was taken.
    Closed,
}

/// The slot and who holds it.
struct Slot<T> {
    state: State<T>,
    /// Senders alive: the channel closes when the last drops without sending.
    senders: usize,
    /// Whether the receiver is alive.
    receiver: bool,
    /// Told once the slot is settled (sent or closed) while the receiver lives: a queue and
    /// this channel's tag on it (a call made now and taken later, [`crate::Completions`]).
    notify: Option<(Arc<Tags>, u64)>,
    /// Kept until the slot is settled (a pending call's count among the callers the loop
    /// reads on for).
    keep: Option<WaitingOwned>,
}

impl<T> Slot<T> {
    /// The slot settled: what it kept and its queue's tag, to let go of and tell once the
    /// lock is released ([`Settled::tell`]), so the thread the tag wakes does not find the
    /// slot still locked.
    fn settled(&mut self, sleeper: Option<Thread>) -> Settled {
        Settled {
            sleeper,
            keep: self.keep.take(),
            notify: self.notify.take(),
        }
    }
}

/// What a settled slot has to do outside its lock: wake its receiver's thread, let go of
/// what it kept, put its tag on its queue.
#[must_use]
struct Settled {
    sleeper: Option<Thread>,
    keep: Option<WaitingOwned>,
    notify: Option<(Arc<Tags>, u64)>,
}

impl Settled {
    /// Does it, the slot unlocked.
    fn tell(self) {
        drop(self.keep);
        if let Some((queue, tag)) = self.notify {
            queue.put(tag);
        }
        if let Some(thread) = self.sleeper {
            thread.unpark();
        }
    }
}

/// A sending end: the first [`Sender::send`] of any of its clones is the value. Holds its
/// slot until it sends or drops (`None` once it has sent).
pub(crate) struct Sender<T>(Option<Arc<Mutex<Slot<T>>>>);

/// The receiving end.
pub(crate) struct Receiver<T>(Arc<Mutex<Slot<T>>>);

/// Why [`Receiver::recv_until`] returned no value.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum RecvError {
    /// The deadline passed first.
    Timeout,
    /// Every sender dropped without sending.
    Closed,
}

/// Parks this thread until it is woken or `deadline` (`None`: until it is woken); false,
/// without parking, once the deadline has passed. A wake between the caller's unlock and the
/// park is kept by the thread's token, so a caller that put its thread where a waker finds it
/// and then parks misses no wake.
pub(crate) fn park_until(deadline: Option<Instant>) -> bool {
    match deadline {
        None => thread::park(),
        Some(deadline) => match deadline.checked_duration_since(Instant::now()) {
            Some(left) if !left.is_zero() => thread::park_timeout(left),
            _ => return false,
        },
    }
    true
}

impl<T> Slot<T> {
    /// A slot with nothing sent, one sender and its receiver.
    fn new() -> Self {
        Slot {
            state: State::Empty(None),
            senders: 1,
            receiver: true,
            notify: None,
            keep: None,
        }
    }
}

/// A channel for one value.
pub(crate) fn channel<T>() -> (Sender<T>, Receiver<T>) {
    on(Arc::new(Mutex::new(Slot::new())))
}

/// The two ends of a channel on `slot`.
fn on<T>(slot: Arc<Mutex<Slot<T>>>) -> (Sender<T>, Receiver<T>) {
    (Sender(Some(Arc::clone(&slot))), Receiver(slot))
}

thread_local! {
    /// The slot of this thread's last call whose answer was taken ([`Receiver::recycle`]),
    /// for its next call.
    static SPARE: Cell<Option<Arc<Mutex<Slot<Heard>>>>> = const { Cell::new(None) };
}

/// A channel for a call's [`Heard`], on this thread's spare slot when nothing holds it any
/// more (a caller making call after call allocates no channel); else on a new one.
pub(crate) fn reused() -> (Sender<Heard>, Receiver<Heard>) {
    let Some(mut slot) = SPARE.try_with(Cell::take).ok().flatten() else {
        return channel();
    };
    match Arc::get_mut(&mut slot) {
        Some(free) => {
            *free.get_mut().unwrap_or_else(PoisonError::into_inner) = Slot::new();
            on(slot)
        }
        // A sender of an earlier call still holds it (the caller timed out): let it be.
        None => channel(),
    }
}

impl<T> Sender<T> {
    /// Hands `value` over, waking the receiver if it sleeps. A value sent after another is
    /// dropped at once; one sent after the receiver is gone waits in the slot until the last
    /// sender drops.
    pub(crate) fn send(mut self, value: T) {
        let Some(shared) = self.0.take() else {
            return;
        };
        let settled = {
            let mut slot = lock(&shared);
            slot.senders -= 1;
            match &mut slot.state {
                State::Empty(sleeper) => {
                    let sleeper = sleeper.take();
                    slot.state = State::Sent(value);
                    Some(slot.settled(sleeper))
                }
                _ => None,
            }
        };
        // Let go of the slot before the receiver wakes: it finds the slot free again.
        drop(shared);
        if let Some(settled) = settled {
            settled.tell();
        }
    }

    /// Whether the receiver is gone (its caller stopped waiting).
    pub(crate) fn is_withdrawn(&self) -> bool {
        self.0.as_ref().is_none_or(|slot| !lock(slot).receiver)
    }
}

impl<T> Clone for Sender<T> {
    /// Another sender of the same value (a waited call's answer goes on the channel its call
    /// came with).
    fn clone(&self) -> Self {
        Sender(self.0.as_ref().map(|shared| {
            lock(shared).senders += 1;
            Arc::clone(shared)
        }))
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let Some(shared) = self.0.take() else {
            return;
        };
        let settled = {
            let mut slot = lock(&shared);
            slot.senders -= 1;
            let last = slot.senders == 0;
            match &mut slot.state {
                State::Empty(sleeper) if last => {
                    let sleeper = sleeper.take();
                    slot.state = State::Closed;
                    Some(slot.settled(sleeper))
                }
                _ => None,
            }
        };
        drop(shared);
        if let Some(settled) = settled {
            settled.tell();
        }
    }
}

impl Receiver<Heard> {
    /// Done with the channel: its slot becomes this thread's spare, for its next call's
    /// channel ([`reused`]) once nothing else holds it.
    pub(crate) fn recycle(self) {
        let slot = Arc::clone(&self.0);
        drop(self);
        let _ = SPARE.try_with(|spare| spare.set(Some(slot)));
    }
}

impl<T> Receiver<T> {
    /// The value, waiting for it until `deadline` (`None`: as long as it takes).
    pub(crate) fn recv_until(&self, deadline: Option<Instant>) -> Result<T, RecvError> {
        loop {
            {
                let mut slot = lock(&self.0);
                match std::mem::replace(&mut slot.state, State::Closed) {
                    State::Sent(value) => return Ok(value),
                    State::Closed => return Err(RecvError::Closed),
                    State::Empty(_) => slot.state = State::Empty(Some(thread::current())),
                }
            }
            if !park_until(deadline) {
                return self.settle();
            }
        }
    }

    /// Until the slot is settled: keeps `keep`, and then puts `tag` on `queue` (at once when
    /// it is settled already). Nothing is put there once the receiver is gone.
    pub(crate) fn on_settled(&self, keep: WaitingOwned, queue: Option<(Arc<Tags>, u64)>) {
        let mut slot = lock(&self.0);
        match slot.state {
            State::Empty(_) => {
                slot.keep = Some(keep);
                slot.notify = queue;
            }
            _ => {
                drop(slot);
                drop(keep);
                if let Some((queue, tag)) = queue {
                    queue.put(tag);
                }
            }
        }
    }

    /// The value if it came, without waiting: `Timeout` when it has not come yet.
    pub(crate) fn try_recv(&self) -> Result<T, RecvError> {
        self.settle()
    }

    /// At the deadline: the value if it came after all, else `Timeout`.
    fn settle(&self) -> Result<T, RecvError> {
        let mut slot = lock(&self.0);
        match std::mem::replace(&mut slot.state, State::Closed) {
            State::Sent(value) => Ok(value),
            State::Closed => Err(RecvError::Closed),
            State::Empty(_) => {
                slot.state = State::Empty(None);
                Err(RecvError::Timeout)
            }
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut slot = lock(&self.0);
        slot.receiver = false;
        // Nobody takes the value: no tag for it, nothing kept for it (let go of unlocked).
        let (notify, keep) = (slot.notify.take(), slot.keep.take());
        drop(slot);
        drop((notify, keep));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_value_sent_from_another_thread_is_received() {
        let (tx, rx) = channel();
        let sender = thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            tx.send(7u32);
        });
        assert_eq!(rx.recv_until(None), Ok(7));
        sender.join().unwrap();
    }

    #[test]
    fn a_dropped_sender_closes_and_a_deadline_times_out() {
        let (tx, rx) = channel::<u32>();
        let soon = Instant::now() + Duration::from_millis(30);
        assert_eq!(rx.recv_until(Some(soon)), Err(RecvError::Timeout));
        assert!(Instant::now() >= soon);
        drop(tx);
        assert_eq!(rx.recv_until(None), Err(RecvError::Closed));
    }

    #[test]
    fn the_sender_sees_a_receiver_that_gave_up() {
        let (tx, rx) = channel::<u32>();
        assert!(!tx.is_withdrawn());
        drop(rx);
        assert!(tx.is_withdrawn());
        tx.send(1); // dropped, no one waits
    }

    #[test]
    fn the_channel_closes_with_its_last_sender_and_takes_the_first_value() {
        let (tx, rx) = channel::<u32>();
        let second = tx.clone();
        drop(tx);
        let soon = Instant::now() + Duration::from_millis(10);
        assert_eq!(rx.recv_until(Some(soon)), Err(RecvError::Timeout));
        drop(second);
        assert_eq!(rx.recv_until(None), Err(RecvError::Closed));
        let (tx, rx) = channel::<u32>();
        let second = tx.clone();
        second.send(2);
        tx.send(3);
        assert_eq!(rx.recv_until(None), Ok(2));
    }

    #[test]
    fn a_recycled_slot_serves_the_next_call_once_no_sender_holds_it() {
        use musewire_core::client::CallResult;
        let done = || Heard::Replied(CallResult::Done);
        let (tx, rx) = reused();
        let first = Arc::as_ptr(&rx.0);
        tx.send(done());
        assert!(rx.try_recv().is_ok());
        rx.recycle();
        // The same slot, as new: nothing sent yet, one sender.
        let (tx, rx) = reused();
        assert_eq!(Arc::as_ptr(&rx.0), first);
        assert!(matches!(rx.try_recv(), Err(RecvError::Timeout)));
        assert!(!tx.is_withdrawn());
        // A sender of that call still holds it: the next call gets a slot of its own, and
        // the old sender sees its receiver gone.
        let kept = tx.clone();
        drop(tx);
        rx.recycle();
        let (_tx, rx) = reused();
        assert_ne!(Arc::as_ptr(&rx.0), first);
        assert!(kept.is_withdrawn());
        kept.send(done()); // dropped: no one waits
    }

    #[test]
    fn a_settled_slot_puts_its_tag_once_and_none_once_its_receiver_is_gone() {
        use musewire_host::Flow;
        let flow = Arc::new(Flow::default());
        let done = crate::Completions::new();
        // Sent after: the tag comes with the value, and the flow's waiting count goes.
        let (tx, rx) = channel::<u32>();
        rx.on_settled(flow.waiting_owned(), Some(done.notify(1)));
        assert_eq!(done.try_next(), None);
        tx.send(5);
        assert_eq!(done.try_next(), Some(1));
        assert_eq!(rx.try_recv(), Ok(5));
        // Settled before: the tag comes at once.
        let (tx, rx) = channel::<u32>();
        drop(tx);
        rx.on_settled(flow.waiting_owned(), Some(done.notify(2)));
        assert_eq!(done.try_next(), Some(2));
        // The receiver gone first: no tag, nothing kept.
        let (tx, rx) = channel::<u32>();
        rx.on_settled(flow.waiting_owned(), Some(done.notify(3)));
        drop(rx);
        tx.send(6);
        assert_eq!(done.try_next(), None);
    }
}
