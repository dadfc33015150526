//! What every driver's front end shares, written once: the operations an application's
//! handle sends to the loop that owns the [`Client`](musewire_core::client::Client) ([`Op`]), and the routing
//! of host requests to the handlers the application registered ([`Handlers`]): which event
//! goes to a handler, which withdraws a running one, and the call that answers the agent
//! with what a handler returned. A driver keeps only what differs: how it runs a handler (a
//! thread, a task) and how it stops one. The whole-output fetch of stored outputs (OUT-10) is
//! not here: it is the core's [`OutputFetch`](musewire_core::client::OutputFetch), which
//! each driver's `fetch_output` runs.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use musewire_core::client::{Answer, Call, CallResult, ClientEvent, HostRequestKind};
use musewire_wire::{
    HostToolCall, HostUriRequest, HostUriResult, ToolResult, UiRequest, UiResponse,
};

/// One operation from an application's handle to the loop that owns the client. `R` is the
/// channel end its caller hears on: what a call returned, or, for a waiting call that made
/// its request, that request's answer ([`Heard`]; see [`Driven::op`](crate::Driven::op)).
#[derive(Debug)]
pub enum Op<R> {
    /// A call of the client; when `wait`, the answer to the request it makes goes to a waiter
    /// rather than to the event stream.
    Call {
        /// What the application asked of the client; the loop hands it in as an
        /// `Input::Call`, recorded like any other input.
        call: Call,
        /// Whether the caller waits for the request's answer.
        wait: bool,
        /// Where its caller hears what the call returned, or its request's answer.
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
        /// The call that sends its answer to the agent; `None` for a UI handler that gave no
        /// answer (a notice needs none).
        call: Option<Call>,
    },
}

/// Which host request: its kind and the agent's id for it (ids of different kinds may
/// coincide).
pub type RequestKey = (HostRequestKind, String);

/// What a caller hears on the one channel its call came with (one wake a round trip):
/// what the call returned when it made no request to wait for (or was not a `wait`
/// call), else the answer to the request it made. See
/// [`Plumbing::hear`](crate::Plumbing::hear) and [`methods::heard`](crate::methods::heard).
#[derive(Debug)]
// Moved once to its caller; not worth an allocation.
#[allow(clippy::large_enum_variant)]
pub enum Heard {
    /// What the call returned; a `wait` call hears this only when it made no request.
    Replied(CallResult),
    /// The answer to the request a `wait` call made.
    Answer(Answer),
}

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
    /// The tool's result as the agent is sent it: its content blocks and `details`.
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
    Call::HostToolResult {
        id,
        result: answer.result,
        is_error: answer.is_error,
    }
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

/// What a host handler gave back, of its request's kind.
#[derive(Debug, Clone, PartialEq)]
pub enum HandlerAnswer {
    /// A host tool handler's answer (HOST-02).
    Tool(HostToolAnswer),
    /// A host URI handler's result (HOST-05).
    Uri(HostUriResult),
    /// A UI handler's answer; none for a notice (HOST-06).
    Ui(Option<UiResponse>),
}

impl HandlerAnswer {
    /// The call that answers the request `key` with it (see [`tool_answer`], [`uri_answer`],
    /// [`ui_answer`]).
    pub fn into_call(self, key: &RequestKey) -> Option<Call> {
        let id = key.1.clone();
        match self {
            HandlerAnswer::Tool(answer) => Some(tool_answer(id, answer)),
            HandlerAnswer::Uri(result) => Some(uri_answer(id, result)),
            HandlerAnswer::Ui(answer) => ui_answer(id, answer),
        }
    }
}

/// A host request with the handler registered for it (see [`Registered::handler`]); `T`,
/// `U` and `I` are how a driver holds a tool, a URI and a UI handler.
#[derive(Debug)]
pub enum Handler<T, U, I> {
    /// A host tool call and the handler of its tool.
    Tool(T, HostToolCall),
    /// A host URI request and the URI handler.
    Uri(U, HostUriRequest),
    /// An extension UI request and the UI handler.
    Ui(I, UiRequest),
}

/// The host handlers an application registered: one per host tool (by name), one for host
/// URIs, one for extension UI requests. `T`, `U` and `I` are how a driver holds each (a
/// closure of its flavour, cheap to clone).
#[derive(Debug)]
pub struct Registered<T, U, I> {
    tools: HashMap<String, T>,
    uri: Option<U>,
    ui: Option<I>,
}

impl<T, U, I> Default for Registered<T, U, I> {
    fn default() -> Self {
        Registered {
            tools: HashMap::new(),
            uri: None,
            ui: None,
        }
    }
}

impl<T: Clone, U: Clone, I: Clone> Registered<T, U, I> {
    /// Handles the host tool `name` with `handler` (HOST-02), in place of any before.
    pub fn set_tool(&mut self, name: &str, handler: T) {
        self.tools.insert(name.to_owned(), handler);
    }

    /// Handles every host URI request with `handler` (HOST-05).
    pub fn set_uri(&mut self, handler: U) {
        self.uri = Some(handler);
    }

    /// Handles every extension UI request with `handler` (HOST-06).
    pub fn set_ui(&mut self, handler: I) {
        self.ui = Some(handler);
    }

    /// The handler registered for `request`, with it; the request back when there is none.
    // The request is moved in and given back whole, once: not worth a box.
    #[allow(clippy::result_large_err)]
    pub fn handler(&self, request: HostRequest) -> Result<Handler<T, U, I>, HostRequest> {
        match request {
            HostRequest::Tool(call) => match self.tools.get(&call.tool_name) {
                Some(handler) => Ok(Handler::Tool(handler.clone(), call)),
                None => Err(HostRequest::Tool(call)),
            },
            HostRequest::Uri(request) => match &self.uri {
                Some(handler) => Ok(Handler::Uri(handler.clone(), request)),
                None => Err(HostRequest::Uri(request)),
            },
            HostRequest::Ui(request) => match &self.ui {
                Some(handler) => Ok(Handler::Ui(handler.clone(), request)),
                None => Err(HostRequest::Ui(request)),
            },
        }
    }
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
    /// Routes `event`: a host request the application registered a handler for in
    /// `registered` (shared with the application's handle) is started with `start` (given the request's key and its [`Handler`]; it
    /// gives back the running handler, or `None` when it could not start); an event that
    /// withdraws a running handler's request stops it with `stop` (HOST-03); the session's
    /// end stops them all. Returns the event when it is the application's: no handler took
    /// it.
    pub fn dispatch<H: Clone, U: Clone, I: Clone>(
        &mut self,
        event: ClientEvent,
        registered: &Mutex<Registered<H, U, I>>,
        start: impl FnOnce(&RequestKey, Handler<H, U, I>) -> Option<T>,
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
        let key = request.key();
        // Looked up at once: a handler registered now serves the next request.
        let handler = registered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .handler(request);
        match handler {
            Ok(handler) => {
                if let Some(running) = start(&key, handler) {
                    self.running.insert(key, running);
                }
                None
            }
            Err(request) => Some(request.into_event()),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    type Registry = Registered<&'static str, &'static str, &'static str>;

    fn tool_call(id: &str, tool: &str) -> ClientEvent {
        ClientEvent::HostToolCall(HostToolCall {
            id: id.into(),
            tool_call_id: "c".into(),
            tool_name: tool.into(),
            ..HostToolCall::default()
        })
    }

    #[test]
    fn host_02_a_registered_tool_handler_takes_its_call_and_host_03_a_cancel_stops_it() {
        let mut registered = Registry::default();
        registered.set_tool("clock", "the clock handler");
        let registered = Mutex::new(registered);
        let mut running: Handlers<String> = Handlers::default();
        // A tool with no handler stays the application's.
        let other = running.dispatch(tool_call("h0", "other"), &registered, |_, _| None, drop);
        assert_eq!(other, Some(tool_call("h0", "other")));
        // A tool with one starts it, keyed by the request.
        let mut started = None;
        let taken = running.dispatch(
            tool_call("h1", "clock"),
            &registered,
            |key, handler| {
                started = Some((
                    key.clone(),
                    matches!(handler, Handler::Tool("the clock handler", _)),
                ));
                Some("running".to_owned())
            },
            drop,
        );
        assert_eq!(taken, None);
        assert_eq!(started, Some(((HostRequestKind::Tool, "h1".into()), true)));
        assert_eq!(running.len(), 1);
        // Its cancellation stops it and reaches no one else.
        let mut stopped = Vec::new();
        let cancel = ClientEvent::HostToolCancelled { id: "h1".into() };
        let gone = running.dispatch(cancel, &registered, |_, _| None, |r| stopped.push(r));
        assert_eq!((gone, stopped), (None, vec!["running".to_owned()]));
        assert!(running.is_empty());
    }

    #[test]
    fn host_02_a_handler_answer_becomes_the_call_of_its_kind() {
        let key = (HostRequestKind::Ui, "u1".to_owned());
        assert_eq!(HandlerAnswer::Ui(None).into_call(&key), None);
        let key = (HostRequestKind::Tool, "h1".to_owned());
        let answer = HandlerAnswer::Tool(HostToolAnswer::error(ToolResult::text("no")));
        assert_eq!(
            answer.into_call(&key),
            Some(Call::HostToolResult {
                id: "h1".into(),
                result: ToolResult::text("no"),
                is_error: true
            })
        );
    }
}
