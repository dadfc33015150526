//! What every driver's handle does, as a trait in each flavour: [`BlockingHandle`] (the mio
//! driver's `AgentProcess`) and [`AsyncHandle`] (the smol driver's). Each is the handful of
//! calls the handle's typed methods ([`driver_methods!`](crate::driver_methods)) are built on,
//! so that code which drives an agent (a test suite, a tool) is written once for either
//! driver: a command's own type ([`GetState`](musewire_wire::GetState), …) goes through
//! `call` (on `dyn BlockingHandle`; [`AsyncHandle::call`]), any other call through `answered`,
//! `send_call` and `answer`.

use std::future::Future;
use std::time::Duration;

use musewire_core::client::{Call, CallError, ClientEvent, RequestId};
use musewire_wire::{Answered, TypedCommand};

/// A driver's handle, blocking flavour: each call blocks its caller (see the module docs).
/// Object-safe: `&dyn BlockingHandle` drives either driver, a typed command through its
/// `call` (generic code over `H: BlockingHandle`, or one holding a `dyn BlockingHandle + Send`,
/// reaches it through `&dyn BlockingHandle`;
/// each driver's handle has the same `call` of its own).
pub trait BlockingHandle {
    /// The agent's process id.
    fn id(&self) -> u32;
    /// Makes `call` and waits up to `timeout` for the answer to the request it makes
    /// ([`CallError::Timeout`] after it).
    fn answered(&self, call: Call, timeout: Duration) -> Result<Answered, CallError>;
    /// Makes `call`, a request whose answer arrives as an event: its id.
    fn send_call(&self, call: Call) -> Result<RequestId, CallError>;
    /// Makes `call`, an answer to the agent: whether it went out (its request was open).
    fn answer(&self, call: Call) -> Result<bool, CallError>;
    /// The next event, waiting up to `timeout`; `None` once the session has ended and every
    /// event was taken, or when none came in time.
    fn next_event(&self, timeout: Duration) -> Option<ClientEvent>;
}

impl dyn BlockingHandle + '_ {
    /// Sends a typed command and waits up to `timeout` for its answer, typed by the command.
    pub fn call<C: TypedCommand>(
        &self,
        command: C,
        timeout: Duration,
    ) -> Result<C::Answer, CallError> {
        typed::<C>(self.answered(Call::Send(command.into_command()), timeout))
    }
}

/// A driver's handle, async flavour: each call is a future (see the module docs). A caller
/// that wants a deadline races the future against its runtime's timer; a call dropped before
/// the driver took it is never made. A handle serves several tasks at once (`Sync`).
pub trait AsyncHandle: Sync {
    /// The agent's process id.
    fn id(&self) -> u32;
    /// Makes `call` and waits for the answer to the request it makes.
    fn answered(&self, call: Call) -> impl Future<Output = Result<Answered, CallError>> + Send;
    /// Makes `call`, a request whose answer arrives as an event: its id.
    fn send_call(&self, call: Call) -> impl Future<Output = Result<RequestId, CallError>> + Send;
    /// Makes `call`, an answer to the agent: whether it went out (its request was open).
    fn answer(&self, call: Call) -> impl Future<Output = Result<bool, CallError>> + Send;
    /// The next event; `None` once the session has ended and every event was taken.
    fn next_event(&self) -> impl Future<Output = Option<ClientEvent>> + Send;

    /// Sends a typed command and waits for its answer, typed by the command.
    fn call<C: TypedCommand + Send>(
        &self,
        command: C,
    ) -> impl Future<Output = Result<C::Answer, CallError>> + Send {
        async move { typed::<C>(self.answered(Call::Send(command.into_command())).await) }
    }
}

/// An answer as the command's answer type.
fn typed<C: TypedCommand>(answered: Result<Answered, CallError>) -> Result<C::Answer, CallError> {
    CallError::read(answered?)
}
