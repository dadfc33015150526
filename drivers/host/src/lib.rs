//! # musewire-host
//!
//! The host kit: what runs a [`Client`](musewire_core::client::Client) for a driver, so that a
//! driver is only its I/O. `musewire-core` holds the sans-IO machine; this crate holds the
//! bookkeeping every driver does around it, written once: the loop ([`Driven`]), the one
//! trait a driver implements for its own I/O ([`Plumbing`]), the session's files
//! ([`LocalFiles`]; `musewire-store` has the implementation with files), the backpressure
//! on events ([`Flow`], [`Backlog`]), the front end ([`Op`], [`Heard`], [`Handlers`]) and the
//! typed methods of a driver's handle ([`driver_methods!`]) and the
//! traits both drivers' handles implement, so code is written once for either
//! ([`BlockingHandle`], [`AsyncHandle`]). The smol driver
//! (`musewire-smol`) and the blocking one (`musewire-mio`) are built on it.
//!
//! # The loop contract
//! The core's crate docs state the machine's poll order and time rule; a driver's loop
//! keeps them by doing this, and only this:
//! 1. **Every input goes through [`Driven::input`]**: each read of the agent's stdout
//!    ([`Input::Stdout`](musewire_core::client::Input::Stdout)) or stderr, their end, and
//!    every operation of the application's handle through [`Driven::op`]. `input` performs
//!    the input's work in order through the driver's [`Plumbing`]: bytes to write, the agent
//!    to kill, events for the application, answers for the callers that wait; it records the
//!    input when recording and saves spilled results with the session's [`LocalFiles`], each
//!    save answered as its own input.
//! 2. **Before each read of stdout, [`Driven::hold_stdout`]**: while it says so the driver
//!    does not read stdout. It says so once [`BACKLOG_BYTES`] were read past the last event
//!    the application took ([`Flow::took`]); never while a caller waits for an answer
//!    ([`Flow::waiting`]: an answer is never held behind events) nor while the agent is
//!    being stopped. The application's next take makes [`Flow::unpause`] true: the driver is
//!    then to be woken.
//! 3. **Before taking an operation, [`Driven::takes_ops`]**: with the bytes that wait for
//!    the agent's stdin at [`WRITE_BACKLOG_BYTES`] or more, the driver leaves its bounded
//!    queue of operations alone, so a caller waits until the agent reads. A caller that gave
//!    up before its operation was taken (a timeout, a dropped future:
//!    [`Plumbing::withdrawn`]) is never served: its call is not made.
//! 4. **On each wake, [`Driven::timers`] then [`Driven::reap`]**: the client's timer is
//!    handed in when due; the agent is killed when its grace after a stop has run out, and
//!    its exit is handed in once it has exited, never while stdout is held back (CALL-07:
//!    all of stdout goes in before the exit) unless it is being stopped. A driver woken by
//!    the exit ([`ExitWatch::Told`]: a pidfd in its poll, [`exit_fd`]) is asked for it at
//!    every reap and asks the system only once woken; one that is not is asked at most every
//!    [`EXIT_CHECK_WHILE_OPEN`] while the agent's output is open.
//! 5. **Sleep until [`Driven::deadline`]** or the next readiness: the client's timer, and
//!    every [`REAP_TICK`] once stdout has ended, the session has closed or the agent is being
//!    stopped (a child's exit wakes no pipe), and the next time a driver not told of the exit
//!    asks for it.
//! 6. **The end**: once the agent's exit is in ([`Driven::exit_status`]) and its stdout and
//!    stderr have ended, or [`OUTPUT_GRACE`] after the exit ([`Driven::output_abandoned`]:
//!    a process the agent left holds them), the driver stops reading them and the session is
//!    over.
//!
//! A stop ([`Op::Shutdown`], [`Driven::stop`]) closes the agent's stdin at once
//! ([`Plumbing::close_stdin`]: what was queued for it is still written) and kills it after
//! its grace. The agent leads a process group of its own, killed whole when the agent is
//! killed and once it has exited (CALL-11, [`process_group`]).
//!
//! ```
//! use std::cell::RefCell;
//! use std::rc::Rc;
//! use std::time::{Duration, Instant};
//! use musewire_core::client::{Call, Client, ClientConfig, ClientEvent, Input};
//! use musewire_wire::{GetState, ResponseData};
//! use musewire_host::{methods, Driven, Heard, NoFiles, Op, Plumbing, RequestKey};
//!
//! /// A driver's I/O, here in memory: what the agent is sent, and what the caller hears.
//! #[derive(Default)]
//! struct Pipes { stdin: Vec<u8>, events: Vec<ClientEvent> }
//! type Reply = Rc<RefCell<Option<Heard>>>;
//!
//! impl Plumbing for Pipes {
//!     type Reply = Reply;
//!     type Error = std::io::Error;
//!     fn write(&mut self, bytes: Vec<u8>) { self.stdin.extend(bytes) }
//!     fn kill(&mut self) {}
//!     fn event(&mut self, event: ClientEvent) -> bool { self.events.push(event); true }
//!     fn hear(&mut self, reply: Reply, heard: Heard) { *reply.borrow_mut() = Some(heard) }
//!     fn finished(&mut self, _key: &RequestKey) {}
//!     fn close_stdin(&mut self, _grace: Duration) {}
//!     fn try_exit(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> { Ok(None) }
//! }
//!
//! let now = Instant::now();
//! let mut driven = Driven::new(Client::new(ClientConfig::default(), now), None, NoFiles);
//! let mut io = Pipes::default();
//! // The start-up probe goes out as the loop first runs.
//! driven.timers(now, &mut io)?;
//! driven.reap(now, &mut io)?;
//! // The application asks for the state and waits for it.
//! let reply = Reply::default();
//! let call = Call::Send(GetState::default().into());
//! driven.op(now, Op::Call { call, wait: true, reply: reply.clone() }, &mut io)?;
//! // The agent says it is ready, then answers.
//! driven.input(now, Input::stdout(b"{\"type\":\"ready\",\"protocolVersion\":1}\n"), || None, &mut io)?;
//! driven.input(now, Input::stdout(b"{\"id\":\"req_1\",\"type\":\"response\",\"command\":\"get_state\",\"success\":true,\"data\":{}}\n"), || None, &mut io)?;
//! assert!(String::from_utf8_lossy(&io.stdin).contains("{\"id\":\"req_1\",\"type\":\"get_state\"}"));
//! // The answer went to the waiting caller, typed, not to the events.
//! let state: musewire_wire::SessionState = methods::heard(reply.take())?;
//! assert!(io.events.iter().all(|e| !matches!(e, ClientEvent::Response { .. })));
//! # let _ = state; let _ = ResponseData::Other(serde_json::Value::Null);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod driven;
pub mod exit_fd;
mod flow;
mod front;
mod handle;
pub mod methods;
pub mod process_group;

pub use driven::{
    exit_status, Driven, ExitWatch, LocalFiles, NoFiles, Plumbing, Work, EXIT_CHECK_WHILE_OPEN,
    OUTPUT_GRACE, REAP_TICK, WRITE_BACKLOG_BYTES,
};
pub use flow::{Backlog, Flow, Waiting, WaitingOwned, BACKLOG_BYTES};
pub use front::{
    tool_answer, ui_answer, uri_answer, Handler, HandlerAnswer, Handlers, Heard, HostRequest,
    HostToolAnswer, Op, Registered, RequestKey,
};
pub use handle::{AsyncHandle, BlockingHandle};

/// The core, for [`driver_methods!`]'s expansion in a driver crate.
#[doc(hidden)]
pub use musewire_core as __core;
#[doc(hidden)]
pub use musewire_wire as __wire;
