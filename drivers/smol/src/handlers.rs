//! Host handlers: async closures the application registers for host tool calls (by tool
//! name), host URI requests and extension UI requests. The driver spawns a handler when its
//! request arrives, sends what it returns, and drops it (cancelling it) when the agent
//! withdraws the request. Which answers are still wanted is the core's decision: an answer
//! to a request that is no longer open is dropped there (HOST-03).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use musewire_core::client::{self as core, Call, ClientEvent, Flow, HostRequest, HostToolAnswer};
use musewire_core::wire::{
    HostToolCall, HostUriRequest, HostUriResult, ToolResult, UiRequest, UiResponse,
};
use smol::channel;

use crate::{Caller, Op};

/// Lets a host tool handler stream partial results (`host_tool_update`).
#[derive(Clone)]
pub struct Updates {
    id: String,
    caller: Caller,
}

impl Updates {
    /// The call's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Sends a partial result (with a `content` array); false when the call is no longer
    /// open or the session has ended.
    ///
    /// Bounded as every call is (issue 13 item 3, see the crate docs): the update is queued
    /// for the agent's stdin once the driver takes it, and it takes none while
    /// [`WRITE_BACKLOG_BYTES`](crate::WRITE_BACKLOG_BYTES) wait there (at most
    /// [`OPS_QUEUE`](crate::OPS_QUEUE) operations wait for it beyond that). When full, the
    /// returned future is pending until the agent reads: a handler that floods updates goes
    /// at the agent's pace, holding at most one update of its own in memory. Meanwhile the
    /// driver reads the agent's stdout on, whether or not the application takes events, so
    /// an agent that reads its stdin only as its stdout is read cannot deadlock the handler.
    pub async fn send(&self, partial_result: ToolResult) -> bool {
        let call = Call::HostToolUpdate(self.id.clone(), partial_result);
        matches!(self.caller.call(call, false).await, Ok(replied) if core::methods::answer_sent(&replied))
    }
}

type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type ToolFn = dyn Fn(HostToolCall, Updates) -> Boxed<HostToolAnswer> + Send + Sync;
type UriFn = dyn Fn(HostUriRequest) -> Boxed<HostUriResult> + Send + Sync;
type UiFn = dyn Fn(UiRequest) -> Boxed<Option<UiResponse>> + Send + Sync;

/// The registered handlers, shared by the `Agent` and its driver task.
#[derive(Default)]
pub(crate) struct Handlers {
    tools: HashMap<String, Arc<ToolFn>>,
    uri: Option<Arc<UriFn>>,
    ui: Option<Arc<UiFn>>,
}

impl Handlers {
    pub(crate) fn set_tool<F, Fut>(&mut self, name: &str, handler: F)
    where
        F: Fn(HostToolCall, Updates) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HostToolAnswer> + Send + 'static,
    {
        self.tools
            .insert(name.into(), Arc::new(move |c, u| Box::pin(handler(c, u))));
    }

    pub(crate) fn set_uri<F, Fut>(&mut self, handler: F)
    where
        F: Fn(HostUriRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HostUriResult> + Send + 'static,
    {
        self.uri = Some(Arc::new(move |r| Box::pin(handler(r))));
    }

    pub(crate) fn set_ui<F, Fut>(&mut self, handler: F)
    where
        F: Fn(UiRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<UiResponse>> + Send + 'static,
    {
        self.ui = Some(Arc::new(move |r| Box::pin(handler(r))));
    }
}

/// The handlers running in the driver, each held by its task (dropping it cancels the
/// handler).
pub(crate) type Running = core::Handlers<smol::Task<()>>;

impl Handlers {
    fn handles(&self, request: &HostRequest) -> bool {
        match request {
            HostRequest::Tool(call) => self.tools.contains_key(&call.tool_name),
            HostRequest::Uri(_) => self.uri.is_some(),
            HostRequest::Ui(_) => self.ui.is_some(),
        }
    }
}

/// Routes `event` (see [`core::Handlers::dispatch`]): a request with a handler runs as a task
/// that sends the answer back as [`Op::Finished`]; a withdrawn one is cancelled (its task
/// dropped). Returns the event when no handler took it.
pub(crate) fn dispatch(
    running: &mut Running,
    handlers: &Mutex<Handlers>,
    ops: &channel::WeakSender<Op>,
    (flow, resume): (&Arc<Flow>, &channel::Sender<()>),
    event: ClientEvent,
) -> Option<ClientEvent> {
    let handlers = handlers.lock().unwrap_or_else(|e| e.into_inner());
    running.dispatch(
        event,
        |request| handlers.handles(request),
        |request| {
            // The Agent is gone: nobody is left to answer.
            let ops = ops.upgrade()?;
            let key = request.key();
            let work: Boxed<Option<Call>> = match request {
                HostRequest::Tool(call) => {
                    let handler = handlers.tools[&call.tool_name].clone();
                    let id = call.id.clone();
                    let updates = Updates {
                        id: id.clone(),
                        caller: Caller {
                            ops: ops.clone(),
                            flow: flow.clone(),
                            resume: resume.clone(),
                        },
                    };
                    let running = handler(call, updates);
                    Box::pin(async move { Some(core::tool_answer(id, running.await)) })
                }
                HostRequest::Uri(request) => {
                    let handler = handlers.uri.clone()?;
                    let id = request.id.clone();
                    let running = handler(request);
                    Box::pin(async move { Some(core::uri_answer(id, running.await)) })
                }
                HostRequest::Ui(request) => {
                    let handler = handlers.ui.clone()?;
                    let id = key.1.clone();
                    let running = handler(request);
                    Box::pin(async move { core::ui_answer(id, running.await) })
                }
            };
            Some(smol::spawn(async move {
                let call = work.await;
                let _ = ops.send(Op::Finished { key, call }).await;
            }))
        },
        drop,
    )
}
