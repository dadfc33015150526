//! The typed methods of a driver's handle, written once as a table: each
//! row names a method, its arguments, what it returns and the [`Call`](musewire_core::client::Call) it makes.
//! [`driver_methods!`](crate::driver_methods) writes each row in a driver's flavour: a
//! blocking method with a timeout (mio), an async one (smol). What a method does is the
//! same in every driver; only how it waits differs.
//!
//! Three kinds of row:
//! - `wait`: a request whose answer the caller waits for, typed by
//!   [`FromAnswer`] (the driver's `request::<T>(call)`);
//! - `send`: a request that returns its id at once; its answer arrives as an event;
//! - `answer`: a call that answers the agent, true when it went out (the request was open).

/// Writes the typed methods of a driver's handle from the table below, in the driver's
/// flavour, inside its `impl` block: `driver_methods!(blocking)` (each `wait` row takes a
/// `timeout: Duration` last) or `driver_methods!(async)`. The handle provides what the rows
/// call: `self.request::<T>(call[, timeout])` (a `wait` row), `self.send_call(call)` (`send`)
/// and `self.answer(call)` (`answer`), built on the functions of
/// [`methods`](crate::methods). Each row is
/// `$(#[doc])* kind name(arg: Type, …) [-> Output] = call;`.
#[macro_export]
macro_rules! driver_methods {
    (blocking) => {
        $crate::driver_methods!(@table [] [timeout] [] [
            #[doc = ""]
            #[doc = "Waits up to `timeout` for the answer (`CallError::Timeout` after it)."]
        ]);
    };
    (async) => {
        $crate::driver_methods!(@table [async] [] [.await] []);
    };
    (@table $flavour:tt $timeout:tt $await:tt $waits:tt) => {
        $crate::driver_methods!(@call $flavour $timeout $await $waits);
        $crate::driver_methods!(@rows $flavour $timeout $await $waits
        /// Sends a command; its response arrives as an event.
        send send(command: $crate::__wire::Command) = $crate::__core::client::Call::Send(command);
        /// Starts reading the whole history and returns at once: `HistoryProgress` events
        /// follow each page, and one `History` event ends it (PAGE-07).
        send read_history() = $crate::__core::client::Call::ReadHistory;
        /// Sends a prompt and waits for its acknowledgement; the turn streams as events.
        wait prompt(message: &str) -> $crate::__wire::PromptData =
            $crate::__core::client::Call::Send($crate::__wire::Command::from($crate::__wire::Prompt::new(message)));
        /// Runs a shell command in the agent (`bash`) and waits for its result.
        wait bash(command: &str) -> $crate::__wire::BashData =
            $crate::__core::client::Call::Send($crate::__wire::Command::from($crate::__wire::Bash::new(command)));
        /// Delivers a message into the current run (`steer`).
        wait steer(message: &str) -> $crate::__wire::ResponseData =
            $crate::__core::client::Call::Send($crate::__wire::Command::from($crate::__wire::Steer::new(message)));
        /// Queues a message for after the current run (`follow_up`).
        wait follow_up(message: &str) -> $crate::__wire::ResponseData =
            $crate::__core::client::Call::Send($crate::__wire::Command::from($crate::__wire::FollowUp::new(message)));
        /// Replaces the todo list (`set_todos {phases}`); the response holds the new list.
        wait set_todos(phases: Vec<serde_json::Value>) -> $crate::__wire::TodosData =
            $crate::__core::client::Call::Send($crate::__wire::Command::from($crate::__wire::SetTodos::new(phases)));
        /// One page of the history (`get_messages_page`, PAGE-01..06): never falls back
        /// (PAGE-07); a stale cursor fails with code `stale_cursor`.
        wait messages_page(cursor: Option<&str>, limit: Option<u32>)
            -> $crate::__wire::MessagesPageData =
            $crate::__core::client::Call::Send($crate::__wire::Command::from($crate::__wire::GetMessagesPage::new(cursor, limit)));
        /// Aborts a running `bash` (CALL-05: sent at once, whatever is pending).
        wait abort_bash() -> $crate::__wire::ResponseData =
            $crate::__core::client::Call::Send($crate::__wire::Command::from($crate::__wire::AbortBash::default()));
        /// Aborts the agent's current run.
        wait abort() -> $crate::__wire::ResponseData =
            $crate::__core::client::Call::Send($crate::__wire::Command::from($crate::__wire::Abort::default()));
        /// The agent's state (`get_state`).
        wait get_state() -> $crate::__wire::SessionState =
            $crate::__core::client::Call::Send($crate::__wire::Command::from($crate::__wire::GetState::default()));
        /// One page of a stored output (`read_output`, OUT-10): refused
        /// ([`CallError::Refused`]) when the agent's ready frame did not offer it or before
        /// the session is ready; a failed read's code is [`CallError::output_code`].
        wait read_output(params: &$crate::__core::output::ReadParams) -> $crate::__wire::output::ReadResult =
            $crate::__core::client::Call::Send($crate::__wire::Command::from($crate::__wire::ReadOutput::from(params)));
        /// Reads the whole history (pages after v2, `get_messages` otherwise: PAGE-07).
        wait messages() -> Vec<$crate::__wire::AgentMessage> = $crate::__core::client::Call::ReadHistory;
        /// Replaces the host-owned tools (HOST-01), checked as the agent will check them.
        wait set_host_tools(tools: Vec<$crate::__wire::HostToolDefinition>)
            -> $crate::__wire::ResponseData = $crate::__core::client::Call::SetHostTools(tools);
        /// Replaces the host URI schemes (HOST-04), normalised as the agent will.
        wait set_host_uri_schemes(schemes: Vec<$crate::__wire::HostUriSchemeDefinition>)
            -> $crate::__wire::ResponseData = $crate::__core::client::Call::SetHostUriSchemes(schemes);
        /// Sends a partial result for a host tool call; false when the call is not open.
        answer host_tool_update(id: &str, partial_result: $crate::__wire::ToolResult) =
            $crate::__core::client::Call::HostToolUpdate(id.into(), partial_result);
        /// Sends the result of a host tool call; false when the call is not open (HOST-03).
        answer host_tool_result(id: &str, result: $crate::__wire::ToolResult, is_error: bool) =
            $crate::__core::client::Call::HostToolResult { id: id.into(), result, is_error };
        /// Answers a host URI request; false when it is not open.
        answer host_uri_result(id: &str, result: $crate::__wire::HostUriResult) =
            $crate::__core::client::Call::HostUriResult(id.into(), result);
        /// Answers an extension UI dialog; false when it is not open (answered, withdrawn,
        /// timed out).
        answer ui_respond(id: &str, answer: $crate::__wire::UiResponse) =
            $crate::__core::client::Call::UiRespond(id.into(), answer);
        /// Writes `line` and a line feed to the agent unchecked, for tests and tools (see
        /// [`Call::RawLine`](musewire_core::client::Call::RawLine)); false once the session
        /// has closed.
        answer send_raw_line(line: &[u8]) = $crate::__core::client::Call::RawLine(line.to_vec());
        );
    };
    (@call [$($async:tt)*] [$($timeout:ident)?] [$($await:tt)*] [$(#[$wait:meta])*]) => {
        /// Sends a command and waits for its answer, typed by the command: a command's own
        /// type, one per command (`call(GetState::default())` gives a `SessionState`,
        /// `call(GetSessionStats::default())` a `SessionStatsData`), or a
        /// [`Command`](musewire_wire::Command), whose answer is its response's `data`
        /// as a `ResponseData`. An answer of another shape is [`CallError::Unexpected`].
        $(#[$wait])*
        pub $($async)* fn call<C: $crate::__wire::TypedCommand>(
            &self, command: C, $($timeout: ::std::time::Duration)?
        ) -> Result<C::Answer, $crate::__core::client::CallError> {
            self.request($crate::__core::client::Call::Send(command.into_command()) $(, $timeout)?)$($await)*
        }
    };
    (@rows $flavour:tt $timeout:tt $await:tt $waits:tt $(
        $(#[$doc:meta])* $kind:ident $name:ident($($arg:ident: $ty:ty),*) $(-> $out:ty)? = $call:expr;
    )*) => {
        $($crate::driver_methods!(
            @$kind $flavour $timeout $await $waits $(#[$doc])* $name($($arg: $ty),*) $(-> $out)? = $call
        );)*
    };
    (@wait [$($async:tt)*] [$($timeout:ident)?] [$($await:tt)*] [$(#[$wait:meta])*]
        $(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $out:ty = $call:expr
    ) => {
        $(#[$doc])*
        $(#[$wait])*
        pub $($async)* fn $name(
            &self, $($arg: $ty,)* $($timeout: ::std::time::Duration)?
        ) -> Result<$out, $crate::__core::client::CallError> {
            self.request($call $(, $timeout)?)$($await)*
        }
    };
    (@send [$($async:tt)*] $timeout:tt [$($await:tt)*] $waits:tt
        $(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) = $call:expr
    ) => {
        $(#[$doc])*
        pub $($async)* fn $name(
            &self, $($arg: $ty),*
        ) -> Result<$crate::__core::client::RequestId, $crate::__core::client::CallError> {
            self.send_call($call)$($await)*
        }
    };
    (@answer [$($async:tt)*] $timeout:tt [$($await:tt)*] $waits:tt
        $(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) = $call:expr
    ) => {
        $(#[$doc])*
        pub $($async)* fn $name(&self, $($arg: $ty),*) -> Result<bool, $crate::__core::client::CallError> {
            self.answer($call)$($await)*
        }
    };
}

use musewire_core::client::{CallError, CallResult, RequestId};
use musewire_wire::FromAnswer;

use crate::front::Heard;

/// What a `wait` row returns, from what its caller heard on its call's channel ([`Heard`];
/// `None` when the channel closed): the request's answer as its type, its failure
/// ([`CallError::Failed`]), or why no request was made ([`CallError::Refused`];
/// [`CallError::Ended`] when the session had ended, or ended before the answer).
pub fn heard<T: FromAnswer>(heard: Option<Heard>) -> Result<T, CallError> {
    match heard {
        Some(Heard::Answer(Ok(answered))) => CallError::read(answered),
        Some(Heard::Answer(Err(failure))) => Err(CallError::Failed(failure)),
        Some(Heard::Replied(CallResult::Request(Err(e)))) => Err(CallError::Refused(e)),
        // A call that made its request is answered, not replied to: this one made none.
        Some(Heard::Replied(_)) | None => Err(CallError::Ended),
    }
}

/// What a `send` row returns: the id of the request the call made, or why none was made
/// (a closed channel, or a [`Heard::Answer`] that never comes to a call that does not wait,
/// is the session's end).
pub fn sent_request(heard: Option<Heard>) -> Result<RequestId, CallError> {
    match heard {
        Some(Heard::Replied(CallResult::Request(sent))) => Ok(sent?),
        _ => Err(CallError::Ended),
    }
}

/// What an `answer` row returns: whether the answer went out (false when nothing was open
/// for it; the session's end as for [`sent_request`]).
pub fn answer_sent(heard: Option<Heard>) -> Result<bool, CallError> {
    match heard {
        Some(Heard::Replied(result)) => Ok(matches!(result, CallResult::Sent)),
        _ => Err(CallError::Ended),
    }
}

/// Checks, at compile time, that a driver's handle serves several threads at once:
/// `const _: () = send_and_sync::<AgentProcess>();`.
pub const fn send_and_sync<T: Send + Sync>() {}

#[cfg(test)]
mod tests {
    use super::*;
    use musewire_core::client::{ClientError, CommandFailure};
    use musewire_wire::Answered;
    use musewire_wire::ResponseData;

    #[test]
    fn a_rows_result_is_read_the_same_in_every_driver() {
        // A call is heard on one channel (one wake a round trip).
        let answer = || Heard::Answer(Ok(Answered::Data(ResponseData::Other(1.into()))));
        // A `wait` row: the answer, typed; a failure; no request made (refused, or the
        // session had ended); a channel that closed.
        assert!(heard::<ResponseData>(Some(answer())).is_ok());
        let failed = Heard::Answer(Err(CommandFailure::new("busy")));
        assert!(matches!(
            heard::<ResponseData>(Some(failed)),
            Err(CallError::Failed(_))
        ));
        let refused = Heard::Replied(CallResult::Request(Err(ClientError::Closed)));
        assert!(matches!(
            heard::<ResponseData>(Some(refused)),
            Err(CallError::Refused(_))
        ));
        let done = Heard::Replied(CallResult::Done);
        assert!(matches!(
            heard::<ResponseData>(Some(done)),
            Err(CallError::Ended)
        ));
        assert!(matches!(heard::<ResponseData>(None), Err(CallError::Ended)));
        // A `send` row: the request's id, or why none was made.
        let sent = Heard::Replied(CallResult::Request(Ok(RequestId(7))));
        assert_eq!(sent_request(Some(sent)).unwrap(), RequestId(7));
        let refused = Heard::Replied(CallResult::Request(Err(ClientError::Closed)));
        assert!(matches!(
            sent_request(Some(refused)),
            Err(CallError::Refused(_))
        ));
        assert!(matches!(
            sent_request(Some(answer())),
            Err(CallError::Ended)
        ));
        assert!(matches!(sent_request(None), Err(CallError::Ended)));
        // An `answer` row: whether it went out.
        let went = Heard::Replied(CallResult::Sent);
        assert!(answer_sent(Some(went)).unwrap());
        let none_open = Heard::Replied(CallResult::NotOpen);
        assert!(!answer_sent(Some(none_open)).unwrap());
        assert!(matches!(answer_sent(Some(answer())), Err(CallError::Ended)));
        assert!(matches!(answer_sent(None), Err(CallError::Ended)));
    }
}
