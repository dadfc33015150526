//! Host handlers: async closures the application registers for host tool calls (by tool
//! name), host URI requests and extension UI requests. The driver spawns a handler when its
//! request arrives, sends what it returns, and drops it (cancelling it) when the agent
//! withdraws the request. Which answers are still wanted is the core's decision: an answer
//! to a request that is no longer open is dropped there (HOST-03).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use musewire_core::client::{Call, CallResult, ClientEvent, HostRequestKind as Kind};
pub use musewire_core::client::{HostToolCall, HostUriRequest, UiRequest};
use serde_json::{Map, Value};
use smol::channel;

use crate::Op;

/// Lets a host tool handler stream partial results (`host_tool_update`).
#[derive(Clone)]
pub struct Updates {
    id: String,
    ops: channel::Sender<Op>,
}

impl Updates {
    /// The call's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Sends a partial result (with a `content` array); false when the call is no longer
    /// open or the session has ended.
    pub async fn send(&self, partial_result: Value) -> bool {
        let (reply, answer) = channel::bounded(1);
        let call = Call::HostToolUpdate(self.id.clone(), partial_result);
        let op = Op::Call {
            call,
            wait: false,
            reply,
        };
        if self.ops.send(op).await.is_err() {
            return false;
        }
        matches!(answer.recv().await, Ok((CallResult::Sent(true), _)))
    }
}

type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type ToolFn = dyn Fn(HostToolCall, Updates) -> Boxed<Result<Value, Value>> + Send + Sync;
type UriFn = dyn Fn(HostUriRequest) -> Boxed<Map<String, Value>> + Send + Sync;
type UiFn = dyn Fn(UiRequest) -> Boxed<Option<Map<String, Value>>> + Send + Sync;

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
        Fut: Future<Output = Result<Value, Value>> + Send + 'static,
    {
        self.tools
            .insert(name.into(), Arc::new(move |c, u| Box::pin(handler(c, u))));
    }

    pub(crate) fn set_uri<F, Fut>(&mut self, handler: F)
    where
        F: Fn(HostUriRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Map<String, Value>> + Send + 'static,
    {
        self.uri = Some(Arc::new(move |r| Box::pin(handler(r))));
    }

    pub(crate) fn set_ui<F, Fut>(&mut self, handler: F)
    where
        F: Fn(UiRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<Map<String, Value>>> + Send + 'static,
    {
        self.ui = Some(Arc::new(move |r| Box::pin(handler(r))));
    }
}

/// The handlers running in the driver, by request.
#[derive(Default)]
pub(crate) struct Running {
    tasks: HashMap<(Kind, String), smol::Task<()>>,
}

impl Running {
    /// Hands `event` to its handler (spawned), or cancels the handler of a withdrawn request
    /// (dropped). Returns the event when no handler took it: it goes to the application.
    pub(crate) fn dispatch(
        &mut self,
        handlers: &Mutex<Handlers>,
        ops: &channel::WeakSender<Op>,
        event: ClientEvent,
    ) -> Option<ClientEvent> {
        if let Some((kind, id)) = event.withdraws() {
            return match self.tasks.remove(&(kind, id.to_owned())) {
                Some(task) => {
                    drop(task);
                    None
                }
                None => Some(event),
            };
        }
        if let ClientEvent::Closed { .. } = &event {
            self.tasks.clear();
            return Some(event);
        }
        let handlers = handlers.lock().unwrap_or_else(|e| e.into_inner());
        let (key, work): ((Kind, String), Boxed<Option<Call>>) = match event {
            ClientEvent::HostToolCall {
                id,
                tool_call_id,
                tool_name,
                arguments,
            } if handlers.tools.contains_key(&tool_name) => {
                // The Agent is gone: nobody is left to answer.
                let ops = ops.upgrade()?;
                let handler = handlers.tools[&tool_name].clone();
                let updates = Updates {
                    id: id.clone(),
                    ops,
                };
                let call = HostToolCall {
                    id: id.clone(),
                    tool_call_id,
                    tool_name,
                    arguments,
                };
                let answer = id.clone();
                let running = handler(call, updates);
                let work = async move {
                    Some(match running.await {
                        Ok(result) => Call::HostToolResult(answer, result, false),
                        Err(result) => Call::HostToolResult(answer, result, true),
                    })
                };
                ((Kind::Tool, id), Box::pin(work))
            }
            ClientEvent::HostUriRequest {
                id,
                operation,
                url,
                content,
            } if handlers.uri.is_some() => {
                let handler = handlers.uri.clone().expect("checked");
                let answer = id.clone();
                let running = handler(HostUriRequest {
                    id: id.clone(),
                    operation,
                    url,
                    content,
                });
                let work = async move { Some(Call::HostUriResult(answer, running.await)) };
                ((Kind::Uri, id), Box::pin(work))
            }
            ClientEvent::UiRequest { id, method, frame } if handlers.ui.is_some() => {
                let handler = handlers.ui.clone().expect("checked");
                let answer = id.clone();
                let running = handler(UiRequest {
                    id: id.clone(),
                    method,
                    frame,
                });
                let work =
                    async move { running.await.map(|fields| Call::UiRespond(answer, fields)) };
                ((Kind::Ui, id), Box::pin(work))
            }
            other => return Some(other),
        };
        let ops = ops.upgrade()?;
        let finished = key.clone();
        let task = smol::spawn(async move {
            let call = work.await;
            let _ = ops
                .send(Op::Finished {
                    key: finished,
                    call,
                })
                .await;
        });
        self.tasks.insert(key, task);
        None
    }

    /// A handler has finished: forget its task (it ends on its own).
    pub(crate) fn finished(&mut self, key: &(Kind, String)) {
        if let Some(task) = self.tasks.remove(key) {
            task.detach();
        }
    }
}
