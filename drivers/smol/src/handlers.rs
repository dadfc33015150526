//! Host handlers: async closures the application registers for host tool calls (by tool
//! name), host URI requests and extension UI requests. The driver spawns a handler when its
//! request arrives, sends what it returns, and drops it (cancelling it) when the agent
//! withdraws the request. Which answers are still wanted is the core's decision: an answer
//! to a request that is no longer open is dropped there (HOST-03).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use musewire_core::client::Call;
use musewire_host::{Flow, Handler, HandlerAnswer, RequestKey};
use musewire_wire::{HostToolCall, HostUriRequest, ToolResult, UiRequest};
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
    /// Bounded as every call is (see the crate docs): the update is queued for the agent's
    /// stdin once the driver takes it, and it takes none while
    /// [`WRITE_BACKLOG_BYTES`](crate::WRITE_BACKLOG_BYTES) wait there (at most
    /// [`OPS_QUEUE`](crate::OPS_QUEUE) operations wait for it beyond that). When full, the
    /// returned future is pending until the agent reads: a handler that floods updates goes at
    /// the agent's pace, holding at most one update of its own in memory. Meanwhile the driver
    /// reads the agent's stdout on, whether or not the application takes events, so an agent
    /// that reads its stdin only as its stdout is read cannot deadlock the handler.
    pub async fn send(&self, partial_result: ToolResult) -> bool {
        let call = Call::HostToolUpdate(self.id.clone(), partial_result);
        let heard = self.caller.call(call, false).await;
        matches!(
            heard.and_then(musewire_host::methods::answer_sent),
            Ok(true)
        )
    }
}

type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type ToolFn = dyn Fn(HostToolCall, Updates) -> Boxed<HandlerAnswer> + Send + Sync;
type UriFn = dyn Fn(HostUriRequest) -> Boxed<HandlerAnswer> + Send + Sync;
type UiFn = dyn Fn(UiRequest) -> Boxed<HandlerAnswer> + Send + Sync;

/// The registered handlers, shared by the `Agent` and its driver task.
pub(crate) type Handlers = musewire_host::Registered<Arc<ToolFn>, Arc<UriFn>, Arc<UiFn>>;

/// The handlers running in the driver, each held by its task (dropping it cancels the
/// handler).
pub(crate) type Running = musewire_host::Handlers<smol::Task<()>>;

/// How a running handler reaches the driver task: weakly, so that the operations channel
/// still closes when the `AgentProcess` is gone.
pub(crate) struct Reach {
    pub(crate) ops: channel::WeakSender<Op>,
    pub(crate) flow: Arc<Flow>,
    pub(crate) resume: channel::Sender<()>,
}

/// Starts `handler` for the request `key` (see [`musewire_host::Handlers::dispatch`]) as a task that
/// sends the answer back as [`Op::Finished`]; dropping the task cancels the handler. None
/// when the `AgentProcess` is gone (nobody is left to answer).
pub(crate) fn start(
    reach: &Reach,
    key: &RequestKey,
    handler: Handler<Arc<ToolFn>, Arc<UriFn>, Arc<UiFn>>,
) -> Option<smol::Task<()>> {
    let ops = reach.ops.upgrade()?;
    let (flow, resume) = (reach.flow.clone(), reach.resume.clone());
    let caller = Caller { ops, flow, resume };
    let work = match handler {
        Handler::Tool(run, call) => {
            let (id, caller) = (call.id.clone(), caller.clone());
            run(call, Updates { id, caller })
        }
        Handler::Uri(run, request) => run(request),
        Handler::Ui(run, request) => run(request),
    };
    let key = key.clone();
    Some(smol::spawn(async move {
        let call = work.await.into_call(&key);
        let _ = caller.ops.send(Op::Finished { key, call }).await;
    }))
}
