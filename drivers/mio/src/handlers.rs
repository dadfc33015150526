//! Host handlers: plain closures the application registers for host tool calls (by tool
//! name), host URI requests and extension UI requests. The loop runs each on a worker thread
//! of its own when its request arrives and sends what it returns. A thread cannot be
//! stopped: when the agent withdraws the request the handler is told (`Updates::is_cancelled`)
//! and its answer, if it still gives one, is dropped by the core (HOST-03).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use musewire_core::client::{
    tool_answer, ui_answer, uri_answer, Call, CallResult, ClientEvent, Handlers, HostRequest,
    HostToolAnswer,
};
use musewire_core::wire::{
    HostToolCall, HostUriRequest, HostUriResult, ToolResult, UiRequest, UiResponse,
};

use crate::Op;

/// Lets a host tool handler stream partial results and learn of its cancellation.
#[derive(Clone)]
pub struct Updates {
    id: String,
    ops: mpsc::Sender<Op>,
    waker: Arc<mio::Waker>,
    cancelled: Arc<AtomicBool>,
}

impl Updates {
    /// The call's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Sends a partial result (with a `content` array); false when the call is no longer
    /// open or the session has ended.
    pub fn send(&self, partial_result: ToolResult) -> bool {
        let (reply, answer) = mpsc::channel();
        let call = Call::HostToolUpdate(self.id.clone(), partial_result);
        let op = Op::Call {
            call,
            wait: false,
            reply,
        };
        if self.ops.send(op).is_err() || self.waker.wake().is_err() {
            return false;
        }
        matches!(answer.recv(), Ok((CallResult::Sent(true), _)))
    }

    /// Whether the agent has withdrawn the call (or the session has ended): whatever the
    /// handler returns now is dropped.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
}

type ToolFn = dyn Fn(HostToolCall, Updates) -> HostToolAnswer + Send + Sync;
type UriFn = dyn Fn(HostUriRequest) -> HostUriResult + Send + Sync;
type UiFn = dyn Fn(UiRequest) -> Option<UiResponse> + Send + Sync;

/// The handlers the application registered.
#[derive(Default)]
pub(crate) struct Registered {
    pub(crate) tools: HashMap<String, Arc<ToolFn>>,
    pub(crate) uri: Option<Arc<UriFn>>,
    pub(crate) ui: Option<Arc<UiFn>>,
}

impl Registered {
    fn handles(&self, request: &HostRequest) -> bool {
        match request {
            HostRequest::Tool(call) => self.tools.contains_key(&call.tool_name),
            HostRequest::Uri(_) => self.uri.is_some(),
            HostRequest::Ui(_) => self.ui.is_some(),
        }
    }
}

/// The handlers running, each held by the flag that tells it of its cancellation.
pub(crate) type Running = Handlers<Arc<AtomicBool>>;

/// Routes `event` (see [`Handlers::dispatch`]): a request with a handler runs on a thread of
/// its own, which sends the answer back as [`Op::Finished`]; a withdrawn one is told.
pub(crate) fn dispatch(
    running: &mut Running,
    registered: &Mutex<Registered>,
    ops: &mpsc::Sender<Op>,
    waker: &Arc<mio::Waker>,
    event: ClientEvent,
) -> Option<ClientEvent> {
    let registered = registered.lock().unwrap_or_else(|e| e.into_inner());
    running.dispatch(
        event,
        |request| registered.handles(request),
        |request| {
            let key = request.key();
            let cancelled = Arc::new(AtomicBool::new(false));
            let work: Box<dyn FnOnce() -> Option<Call> + Send> = match request {
                HostRequest::Tool(call) => {
                    let handler = registered.tools[&call.tool_name].clone();
                    let updates = Updates {
                        id: call.id.clone(),
                        ops: ops.clone(),
                        waker: waker.clone(),
                        cancelled: cancelled.clone(),
                    };
                    let id = call.id.clone();
                    Box::new(move || Some(tool_answer(id, handler(call, updates))))
                }
                HostRequest::Uri(request) => {
                    let handler = registered.uri.clone()?;
                    let id = request.id.clone();
                    Box::new(move || Some(uri_answer(id, handler(request))))
                }
                HostRequest::Ui(request) => {
                    let handler = registered.ui.clone()?;
                    let id = key.1.clone();
                    Box::new(move || ui_answer(id, handler(request)))
                }
            };
            let (ops, waker) = (ops.clone(), waker.clone());
            std::thread::Builder::new()
                .name("musewire-mio-handler".into())
                .spawn(move || {
                    let call = work();
                    if ops.send(Op::Finished { key, call }).is_ok() {
                        let _ = waker.wake();
                    }
                })
                .ok()?;
            Some(cancelled)
        },
        |cancelled| cancelled.store(true, Ordering::SeqCst),
    )
}
