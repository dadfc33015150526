//! Host handlers: plain closures the application registers for host tool calls (by tool
//! name), host URI requests and extension UI requests. The loop runs each on a worker thread
//! of its own when its request arrives and sends what it returns. A thread cannot be
//! stopped: when the agent withdraws the request the handler is told (`Updates::is_cancelled`)
//! and its answer, if it still gives one, is dropped by the core (HOST-03).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use musewire_core::client::Call;
use musewire_host::{methods, Handler, HandlerAnswer, Handlers, RequestKey};
use musewire_wire::{HostToolCall, HostUriRequest, ToolResult, UiRequest};

use crate::{Caller, Op};

/// Lets a host tool handler stream partial results and learn of its cancellation.
#[derive(Clone)]
pub struct Updates {
    id: String,
    caller: Caller,
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
        let call = Call::HostToolUpdate(self.id.clone(), partial_result);
        let heard = self.caller.call(call, false, None);
        matches!(heard.and_then(methods::answer_sent), Ok(true))
    }

    /// Whether the agent has withdrawn the call (or the session has ended): whatever the
    /// handler returns now is dropped.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
}

type ToolFn = dyn Fn(HostToolCall, Updates) -> HandlerAnswer + Send + Sync;
type UriFn = dyn Fn(HostUriRequest) -> HandlerAnswer + Send + Sync;
type UiFn = dyn Fn(UiRequest) -> HandlerAnswer + Send + Sync;

/// The handlers the application registered.
pub(crate) type Registered = musewire_host::Registered<Arc<ToolFn>, Arc<UriFn>, Arc<UiFn>>;

/// The handlers running, each held by the flag that tells it of its cancellation.
pub(crate) type Running = Handlers<Arc<AtomicBool>>;

/// Starts `handler` for the request `key` (see [`Handlers::dispatch`]) on a thread of its
/// own, which sends the answer back through `caller` as [`Op::Finished`]; gives back the flag
/// that tells it of its cancellation ([`stop`]).
pub(crate) fn start(
    caller: &Caller,
    key: &RequestKey,
    handler: Handler<Arc<ToolFn>, Arc<UriFn>, Arc<UiFn>>,
) -> Option<Arc<AtomicBool>> {
    let cancelled = Arc::new(AtomicBool::new(false));
    let work: Box<dyn FnOnce() -> HandlerAnswer + Send> = match handler {
        Handler::Tool(run, call) => {
            let (id, caller) = (call.id.clone(), caller.clone());
            let cancelled = cancelled.clone();
            let updates = Updates {
                id,
                caller,
                cancelled,
            };
            Box::new(move || run(call, updates))
        }
        Handler::Uri(run, request) => Box::new(move || run(request)),
        Handler::Ui(run, request) => Box::new(move || run(request)),
    };
    let (key, caller) = (key.clone(), caller.clone());
    std::thread::Builder::new()
        .name("musewire-mio-handler".into())
        .spawn(move || {
            let call = work().into_call(&key);
            let _ = caller.op(Op::Finished { key, call }, None);
        })
        .ok()?;
    Some(cancelled)
}

/// Tells a running handler that its request was withdrawn (a thread cannot be stopped).
pub(crate) fn stop(cancelled: Arc<AtomicBool>) {
    cancelled.store(true, Ordering::SeqCst);
}
