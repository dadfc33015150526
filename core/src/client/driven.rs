//! The bookkeeping every driver shares, kept here so the drivers stay thin and alike: the
//! client, an optional transcript recorder, and the callers waiting for an answer.
//!
//! A driver hands an input to [`Driven::client`], then calls [`Driven::after`] with what the
//! input was; it gets back the transcript bytes to append to its recording file and the work
//! to do, in order: bytes to write, the agent to stop, events for the application, and
//! answers for the callers that wait on a request.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::Value;

use super::{
    Action, Call, CallResult, Client, ClientEvent, CommandFailure, RecordedInput, Recorder,
    RequestId,
};

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
    Answer(W, Result<Value, CommandFailure>),
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

    /// Makes `call`; when `waiter` is given and the call made a request, the request's answer
    /// goes to it (as [`Work::Answer`]) instead of to the application as an event. Follow with
    /// [`Driven::after`] for the call.
    pub fn call(
        &mut self,
        now: Instant,
        call: Call,
        waiter: impl FnOnce() -> Option<W>,
    ) -> CallResult {
        let result = self.client.call(now, call);
        if let Some(id) = result.request() {
            if let Some(w) = waiter() {
                self.waiters.insert(id, w);
            }
        }
        result
    }

    /// After an input: the transcript bytes that record it (empty when not recording) and the
    /// work it produced.
    pub fn after(
        &mut self,
        now: Instant,
        input: RecordedInput<'_>,
        returns: Option<Value>,
    ) -> (Vec<u8>, Vec<Work<W>>) {
        let actions: Vec<Action> = std::iter::from_fn(|| self.client.poll_action()).collect();
        let recorded = match &mut self.recorder {
            Some(recorder) => {
                recorder.step(now, &input, returns, &actions);
                recorder.take()
            }
            None => Vec::new(),
        };
        let work = actions
            .into_iter()
            .map(|action| match action {
                Action::Write { bytes } => Work::Write(bytes),
                Action::StopAgent => Work::StopAgent,
                Action::Event(event) => self.route(event),
            })
            .collect();
        (recorded, work)
    }

    fn route(&mut self, event: ClientEvent) -> Work<W> {
        match event {
            ClientEvent::Response {
                request, outcome, ..
            } if self.waiters.contains_key(&request) => {
                Work::Answer(self.waiters.remove(&request).expect("present"), outcome)
            }
            ClientEvent::History {
                request, outcome, ..
            } if self.waiters.contains_key(&request) => Work::Answer(
                self.waiters.remove(&request).expect("present"),
                outcome.map(Value::Array),
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
