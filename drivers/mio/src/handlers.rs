//! Host handlers: plain closures the application registers for host tool calls (by tool
//! name), host URI requests and extension UI requests. The loop runs each on a worker thread
//! of its own when its request arrives and sends what it returns. A thread cannot be
//! stopped: when the agent withdraws the request the handler is told (`Updates::is_cancelled`)
//! and its answer, if it still gives one, is dropped by the core (HOST-03).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use musewire_core::client::{Call, CallResult, ClientEvent, HostRequestKind as Kind};
pub use musewire_core::client::{HostToolCall, HostUriRequest, UiRequest};
use serde_json::{Map, Value};

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
    pub fn send(&self, partial_result: Value) -> bool {
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

type ToolFn = dyn Fn(HostToolCall, Updates) -> Result<Value, Value> + Send + Sync;
type UriFn = dyn Fn(HostUriRequest) -> Map<String, Value> + Send + Sync;
type UiFn = dyn Fn(UiRequest) -> Option<Map<String, Value>> + Send + Sync;
/// A handler bound to its request: runs it and gives the call that answers it, if any.
type Work = Box<dyn FnOnce() -> Option<Call> + Send>;

/// The registered handlers, shared by the `Agent` and its loop.
#[derive(Default)]
pub(crate) struct Handlers {
    pub(crate) tools: HashMap<String, Arc<ToolFn>>,
    pub(crate) uri: Option<Arc<UriFn>>,
    pub(crate) ui: Option<Arc<UiFn>>,
}

/// The handlers running, by request, with their cancellation flags.
#[derive(Default)]
pub(crate) struct Running {
    flags: HashMap<(Kind, String), Arc<AtomicBool>>,
}

impl Running {
    /// Hands `event` to its handler (on a new thread), or flags the handler of a withdrawn
    /// request as cancelled. Returns the event when no handler took it.
    pub(crate) fn dispatch(
        &mut self,
        handlers: &Mutex<Handlers>,
        ops: &mpsc::Sender<Op>,
        waker: &Arc<mio::Waker>,
        event: ClientEvent,
    ) -> Option<ClientEvent> {
        if let Some((kind, id)) = event.withdraws() {
            let flag = self.flags.remove(&(kind, id.to_owned()));
            flag.as_ref().inspect(|f| f.store(true, Ordering::SeqCst));
            return flag.is_none().then_some(event);
        }
        if let ClientEvent::Closed { .. } = &event {
            for (_, flag) in self.flags.drain() {
                flag.store(true, Ordering::SeqCst);
            }
            return Some(event);
        }
        let handlers = handlers.lock().unwrap_or_else(|e| e.into_inner());
        let cancelled = Arc::new(AtomicBool::new(false));
        let (key, work): ((Kind, String), Work) = match event {
            ClientEvent::HostToolCall {
                id,
                tool_call_id,
                tool_name,
                arguments,
            } if handlers.tools.contains_key(&tool_name) => {
                let handler = handlers.tools[&tool_name].clone();
                let updates = Updates {
                    id: id.clone(),
                    ops: ops.clone(),
                    waker: waker.clone(),
                    cancelled: cancelled.clone(),
                };
                let call = HostToolCall {
                    id: id.clone(),
                    tool_call_id,
                    tool_name,
                    arguments,
                };
                let answer = id.clone();
                let work = move || {
                    Some(match handler(call, updates) {
                        Ok(result) => Call::HostToolResult(answer, result, false),
                        Err(result) => Call::HostToolResult(answer, result, true),
                    })
                };
                ((Kind::Tool, id), Box::new(work))
            }
            ClientEvent::HostUriRequest {
                id,
                operation,
                url,
                content,
            } if handlers.uri.is_some() => {
                let handler = handlers.uri.clone().expect("checked");
                let request = HostUriRequest {
                    id: id.clone(),
                    operation,
                    url,
                    content,
                };
                let answer = id.clone();
                let work = move || Some(Call::HostUriResult(answer, handler(request)));
                ((Kind::Uri, id), Box::new(work))
            }
            ClientEvent::UiRequest { id, method, frame } if handlers.ui.is_some() => {
                let handler = handlers.ui.clone().expect("checked");
                let request = UiRequest {
                    id: id.clone(),
                    method,
                    frame,
                };
                let answer = id.clone();
                let work = move || handler(request).map(|fields| Call::UiRespond(answer, fields));
                ((Kind::Ui, id), Box::new(work))
            }
            other => return Some(other),
        };
        let (ops, waker, finished) = (ops.clone(), waker.clone(), key.clone());
        let spawned = std::thread::Builder::new()
            .name("musewire-mio-handler".into())
            .spawn(move || {
                let call = work();
                if ops
                    .send(Op::Finished {
                        key: finished,
                        call,
                    })
                    .is_ok()
                {
                    let _ = waker.wake();
                }
            });
        if spawned.is_ok() {
            self.flags.insert(key, cancelled);
        }
        None
    }

    /// A handler has finished: forget it.
    pub(crate) fn finished(&mut self, key: &(Kind, String)) {
        self.flags.remove(key);
    }
}
