//! The bookkeeping every driver shares, kept here so the drivers stay thin and alike: the
//! client, an optional transcript recorder, and the callers waiting for an answer.
//!
//! A driver hands every input to [`Driven::handle`]; it gets back what a call returned, the
//! transcript bytes to append to its recording file, and the work to do, in order: bytes to
//! write, the agent to stop, events for the application, and answers for the callers that
//! wait on a request.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::wire::{AgentMessage, ResponseData};

use super::{Action, CallResult, Client, ClientEvent, CommandFailure, Input, Recorder, RequestId};

/// What a waiting caller is answered with: a response's typed data, or a whole history.
#[derive(Debug, Clone, PartialEq)]
// Moved once to the waiting caller; not worth an allocation.
#[allow(clippy::large_enum_variant)]
pub enum Answered {
    /// The data of a command's response (CALL-01).
    Data(ResponseData),
    /// The messages of a whole-history read (PAGE-07).
    History(Vec<AgentMessage>),
}

/// A waiting caller's answer: what the request gave, or its failure.
pub type Answer = Result<Answered, CommandFailure>;

/// What a driver does after an input, in order.
#[derive(Debug)]
pub enum Work<W> {
    /// Write these bytes to the agent's stdin.
    Write(Vec<u8>),
    /// Stop the agent process.
    StopAgent,
    /// Hand this event to the application.
    Event(ClientEvent),
    /// Give this answer to the caller waiting on `W`.
    Answer(W, Answer),
}

/// A client with its recorder and waiting callers. `W` is whatever a driver wakes a waiting
/// caller with (a channel's sending end).
#[derive(Debug)]
pub struct Driven<W> {
    /// The client.
    pub client: Client,
    recorder: Option<Recorder>,
    waiters: BTreeMap<RequestId, W>,
}

impl<W> Driven<W> {
    /// Bookkeeping around `client`, recording when `recorder` is given.
    pub fn new(client: Client, recorder: Option<Recorder>) -> Self {
        Driven {
            client,
            recorder,
            waiters: BTreeMap::new(),
        }
    }

    /// Hands `input` to the client, records it (when recording), and returns what a call
    /// returned, the transcript bytes to append to the recording file (empty when not
    /// recording), and the work to do, in order. When the input is a call that makes a
    /// request and `waiter` gives a waiter, the request's answer goes to it (as
    /// [`Work::Answer`]) instead of to the application as an event.
    pub fn handle(
        &mut self,
        now: Instant,
        input: Input<'_>,
        waiter: impl FnOnce() -> Option<W>,
    ) -> (CallResult, Vec<u8>, Vec<Work<W>>) {
        let mut work = Vec::new();
        let (result, recorded) = self.handle_with(now, input, waiter, |item| work.push(item));
        (result, recorded, work)
    }

    /// As [`Driven::handle`], handing each piece of work to `perform` as it comes, in order,
    /// rather than in a list: a driver's loop allocates nothing per input for it (nor for
    /// the client's actions, unless recording).
    pub fn handle_with(
        &mut self,
        now: Instant,
        input: Input<'_>,
        waiter: impl FnOnce() -> Option<W>,
        mut perform: impl FnMut(Work<W>),
    ) -> (CallResult, Vec<u8>) {
        // The client consumes the input; the recording needs it as it was (a borrowed read
        // is copied cheaply, a call is cloned).
        let recorded_input = self.recorder.is_some().then(|| input.clone());
        let result = self.client.handle(now, input);
        if let Some(id) = result.request() {
            if let Some(w) = waiter() {
                self.waiters.insert(id, w);
            }
        }
        let Some(input) = recorded_input else {
            while let Some(action) = self.client.poll_action() {
                perform(self.work(action));
            }
            return (result, Vec::new());
        };
        let actions: Vec<Action> = std::iter::from_fn(|| self.client.poll_action()).collect();
        let recorded = match &mut self.recorder {
            Some(recorder) => {
                recorder.step(now, &input, result.to_json(), &actions);
                recorder.take()
            }
            None => Vec::new(),
        };
        for action in actions {
            perform(self.work(action));
        }
        (result, recorded)
    }

    fn work(&mut self, action: Action) -> Work<W> {
        match action {
            Action::Write { bytes } => Work::Write(bytes),
            Action::StopAgent => Work::StopAgent,
            Action::Event(event) => self.route(event),
        }
    }

    fn route(&mut self, event: ClientEvent) -> Work<W> {
        match event {
            ClientEvent::Response {
                request, outcome, ..
            } if self.waiters.contains_key(&request) => Work::Answer(
                self.waiters.remove(&request).expect("present"),
                outcome.map(Answered::Data),
            ),
            ClientEvent::History {
                request, outcome, ..
            } if self.waiters.contains_key(&request) => Work::Answer(
                self.waiters.remove(&request).expect("present"),
                outcome.map(Answered::History),
            ),
            other => Work::Event(other),
        }
    }
}

#[cfg(unix)]
impl From<std::process::ExitStatus> for super::ExitStatus {
    fn from(status: std::process::ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => super::ExitStatus::Code(code),
            (None, Some(signal)) => super::ExitStatus::Signal(signal),
            _ => super::ExitStatus::Unknown,
        }
    }
}
