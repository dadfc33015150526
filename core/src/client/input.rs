//! Everything a [`Client`](super::Client) is handed, as one enum: what the driver read or saw
//! (the agent's stdout and stderr, their end, the agent's exit), the passing of time, and the
//! application's calls. [`Client::handle`](super::Client::handle) takes it, and a recording
//! ([`Recorder`](super::Recorder)) is these inputs written down with the actions they gave.

use std::borrow::Cow;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::{Call, ExitStatus};
use crate::spill::{SaveFailure, Saved, SpillId};

/// One input to a [`Client`](super::Client).
#[derive(Debug, Clone, PartialEq)]
pub enum Input<'a> {
    /// Bytes read from the agent's stdout: frames, in any cuts (FRAME-01).
    Stdout(Cow<'a, [u8]>),
    /// Bytes read from the agent's stderr: the client keeps a bounded tail
    /// ([`Client::stderr_tail`](super::Client::stderr_tail)) for errors.
    Stderr(Cow<'a, [u8]>),
    /// The end of the agent's stdout (CALL-07). The session closes when the exit status
    /// arrives, or shortly after without it.
    StdoutEnd,
    /// The agent's exit, with whatever stderr the driver still holds (CALL-07). Drivers hand
    /// in all of stdout first. Every pending request fails with an error naming the status
    /// and the stderr tail.
    Exit(ExitStatus, Cow<'a, [u8]>),
    /// The time of [`Client::poll_timeout`](super::Client::poll_timeout) has come: the
    /// ready timeout, dialog timeouts, the exit grace.
    Timeout,
    /// A call of the application; what it returned is what
    /// [`Client::handle`](super::Client::handle) returns.
    Call(Call),
    /// The driver's answer to an [`Action::SpillWrite`](super::Action::SpillWrite)
    /// (SPILL-03, SPILL-05): what the store saved, or why it could not.
    SpillDone(SpillId, Result<Saved, SaveFailure>),
}

impl<'a> Input<'a> {
    /// Bytes read from the agent's stdout, borrowed.
    pub fn stdout(bytes: &'a [u8]) -> Self {
        Input::Stdout(Cow::Borrowed(bytes))
    }

    /// Bytes read from the agent's stderr, borrowed.
    pub fn stderr(bytes: &'a [u8]) -> Self {
        Input::Stderr(Cow::Borrowed(bytes))
    }

    /// The agent's exit, with no stderr left to hand in.
    pub fn exit(status: ExitStatus) -> Self {
        Input::Exit(status, Cow::Borrowed(&[]))
    }

    /// The input with its bytes owned.
    pub fn into_owned(self) -> Input<'static> {
        match self {
            Input::Stdout(b) => Input::Stdout(Cow::Owned(b.into_owned())),
            Input::Stderr(b) => Input::Stderr(Cow::Owned(b.into_owned())),
            Input::StdoutEnd => Input::StdoutEnd,
            Input::Exit(s, b) => Input::Exit(s, Cow::Owned(b.into_owned())),
            Input::Timeout => Input::Timeout,
            Input::Call(c) => Input::Call(c),
            Input::SpillDone(id, saved) => Input::SpillDone(id, saved),
        }
    }

    /// Writes the input into a transcript step: `stdout` / `stdout_b64`, `stderr` /
    /// `stderr_b64`, `eof`, `exit` (+ `stderr_tail`), `timer`, `call` and its arguments, or
    /// `spill_done` with `saved` or `failure`.
    pub fn write(&self, step: &mut Map<String, Value>) {
        match self {
            Input::Stdout(b) => bytes_field(step, "stdout", b),
            Input::Stderr(b) => bytes_field(step, "stderr", b),
            Input::StdoutEnd => {
                step.insert("eof".into(), Value::Bool(true));
            }
            Input::Exit(status, tail) => {
                let status = match status {
                    ExitStatus::Code(c) => json!({"code": c}),
                    ExitStatus::Signal(s) => json!({"signal": s}),
                    ExitStatus::Unknown => json!("unknown"),
                };
                step.insert("exit".into(), status);
                if !tail.is_empty() {
                    step.insert("stderr_tail".into(), String::from_utf8_lossy(tail).into());
                }
            }
            Input::Timeout => {
                step.insert("timer".into(), Value::Bool(true));
            }
            Input::Call(call) => call.write(step),
            Input::SpillDone(id, saved) => {
                step.insert("spill_done".into(), Value::String(id.wire()));
                let (key, value) = match saved {
                    Ok(saved) => ("saved", serde_json::to_value(saved)),
                    Err(failure) => ("failure", serde_json::to_value(failure)),
                };
                step.insert(key.into(), value.expect("a spill answer serialises"));
            }
        }
    }
}

fn bytes_field(out: &mut Map<String, Value>, name: &str, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => out.insert(name.into(), Value::String(text.into())),
        Err(_) => out.insert(format!("{name}_b64"), Value::String(STANDARD.encode(bytes))),
    };
}
