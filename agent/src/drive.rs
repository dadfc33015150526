//! How the bundled agent makes its calls on its [`Agent`]: each one an [`Input::Call`]
//! through [`Agent::handle`], the agent's only way in.

use std::time::Instant;

use musewire_core::agent::{Agent, AgentCall, AgentCallResult, Input};

/// Makes `call` at `now` and returns what it returned.
pub(crate) fn call(agent: &mut Agent, now: Instant, call: AgentCall) -> AgentCallResult {
    agent
        .handle(now, Input::Call(call))
        .expect("a call returns a result")
}
