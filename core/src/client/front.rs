//! What every driver's front end shares, written once: the operations an application's
//! handle sends to the loop that owns the [`Client`](super::Client) ([`Op`]), and the routing
//! of host requests to the handlers the application registered ([`Handlers`]): which event
//! goes to a handler, which withdraws a running one, and the call that answers the agent
//! with what a handler returned. A driver keeps only what differs: how it runs a handler (a
//! thread, a task) and how it stops one. The whole-output fetch of stored outputs
//! (`OutputFetch`, OUT-10) is the front end's too, in `fetch.rs`.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{Call, CallResult, ClientEvent, HostRequestKind};
use crate::wire::{HostToolCall, HostUriRequest, HostUriResult, ToolResult, UiRequest, UiResponse};

/// One operation from an application's handle to the loop that owns the client. `R` is the
/// channel end the loop answers a call on; a waiting call also gets the end `W` its answer
/// will arrive on (see [`Driven::handle`](super::Driven::handle)).
#[derive(Debug)]
pub enum Op<R> {
    /// A call of the client; when `wait`, the answer to the request it makes goes to a waiter
    /// rather than to the event stream.
    Call {
        /// The call.
        call: Call,
        /// Whether the caller waits for the request's answer.
        wait: bool,
        /// Where the loop says what the call returned.
        reply: R,
    },
    /// Close the agent's stdin; stop it after `grace`.
    Shutdown {
        /// How long the agent may take to exit on its own.
        grace: Duration,
    },
    /// A handler has finished; its answer, if it gave one, is made as a call.
    Finished {
        /// The request it handled.
        key: RequestKey,
        /// The answer.
        call: Option<Call>,
    },
}

/// Which host request: its kind and the agent's id for it (ids of different kinds may
/// coincide).
pub type RequestKey = (HostRequestKind, String);

/// What a call returned, and where a waiting caller's answer will arrive.
pub type Replied<W> = (CallResult, Option<W>);

/// A request of the agent that a host handler answers.
#[derive(Debug, Clone, PartialEq)]
pub enum HostRequest {
    /// Run a host tool (HOST-02).
    Tool(HostToolCall),
    /// Read or write a host URI (HOST-05).
    Uri(HostUriRequest),
    /// Show a dialog or a notice (HOST-06).
    Ui(UiRequest),
}

impl HostRequest {
    /// The request's key.
    pub fn key(&self) -> RequestKey {
        match self {
            HostRequest::Tool(call) => (HostRequestKind::Tool, call.id.clone()),
            HostRequest::Uri(request) => (HostRequestKind::Uri, request.id.clone()),
            HostRequest::Ui(request) => (
                HostRequestKind::Ui,
                request.id().unwrap_or_default().to_owned(),
            ),
        }
    }

    /// The event the request arrived as.
    pub fn into_event(self) -> ClientEvent {
        match self {
            HostRequest::Tool(call) => ClientEvent::HostToolCall(call),
            HostRequest::Uri(request) => ClientEvent::HostUriRequest(request),
            HostRequest::Ui(request) => ClientEvent::UiRequest(request),
        }
    }
}

/// What a host tool handler answers (HOST-02): a result, or a result that rejects the call
/// (`isError`, the agent fails the tool with the result's text).
#[derive(Debug, Clone, PartialEq)]
pub struct HostToolAnswer {
    /// The result.
    pub result: ToolResult,
    /// Whether it rejects the call.
    pub is_error: bool,
}

impl HostToolAnswer {
    /// A result.
    pub fn ok(result: ToolResult) -> Self {
        HostToolAnswer {
            result,
            is_error: false,
        }
    }

    /// A result that rejects the call.
    pub fn error(result: ToolResult) -> Self {
        HostToolAnswer {
            result,
            is_error: true,
        }
    }
}

impl From<ToolResult> for HostToolAnswer {
    fn from(result: ToolResult) -> Self {
        HostToolAnswer::ok(result)
    }
}

/// The call that answers a host tool call with what its handler returned (HOST-02).
pub fn tool_answer(id: String, answer: HostToolAnswer) -> Call {
    Call::HostToolResult(id, answer.result, answer.is_error)
}

/// The call that answers a host URI request (HOST-05).
pub fn uri_answer(id: String, result: HostUriResult) -> Call {
    Call::HostUriResult(id, result)
}

/// The call that answers a dialog, when the handler answered it (HOST-06); a notice needs
/// none.
pub fn ui_answer(id: String, answer: Option<UiResponse>) -> Option<Call> {
    answer.map(|answer| Call::UiRespond(id, answer))
}

/// The handlers running in a driver, by request; `T` is how the driver holds one (a cancel
/// flag, a task).
#[derive(Debug)]
pub struct Handlers<T> {
    running: BTreeMap<RequestKey, T>,
}

impl<T> Default for Handlers<T> {
    fn default() -> Self {
        Handlers {
            running: BTreeMap::new(),
        }
    }
}

impl<T> Handlers<T> {
    /// Routes `event`: a host request the application has a handler for is started with
    /// `start` (which gives back the running handler, or `None` when it could not start); an
    /// event that withdraws a running handler's request stops it with `stop` (HOST-03); the
    /// session's end stops them all. Returns the event when it is the application's: no
    /// handler took it.
    pub fn dispatch(
        &mut self,
        event: ClientEvent,
        handles: impl FnOnce(&HostRequest) -> bool,
        start: impl FnOnce(HostRequest) -> Option<T>,
        mut stop: impl FnMut(T),
    ) -> Option<ClientEvent> {
        if let Some((kind, id)) = event.withdraws() {
            return match self.running.remove(&(kind, id.to_owned())) {
                Some(running) => {
                    stop(running);
                    None
                }
                None => Some(event),
            };
        }
        if let ClientEvent::Closed { .. } = &event {
            for (_, running) in std::mem::take(&mut self.running) {
                stop(running);
            }
            return Some(event);
        }
        let request = match event {
            ClientEvent::HostToolCall(call) => HostRequest::Tool(call),
            ClientEvent::HostUriRequest(request) => HostRequest::Uri(request),
            ClientEvent::UiRequest(request) => HostRequest::Ui(request),
            other => return Some(other),
        };
        if !handles(&request) {
            return Some(request.into_event());
        }
        let key = request.key();
        if let Some(running) = start(request) {
            self.running.insert(key, running);
        }
        None
    }

    /// A handler has finished: forget it, and give back how the driver held it.
    pub fn finished(&mut self, key: &RequestKey) -> Option<T> {
        self.running.remove(key)
    }

    /// How many handlers run.
    pub fn len(&self) -> usize {
        self.running.len()
    }

    /// Whether no handler runs.
    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }
}
