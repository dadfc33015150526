//! Builders for the commands hosts send most, as the typed [`Command`]s that
//! [`Call::Send`](super::Call::Send) takes; the drivers' typed methods are built on these.

use serde_json::Value;

use crate::output::ReadParams;
use crate::wire::{
    Bash, Command, GetMessagesPage, MessageArgs, NoArgs, Prompt, ReadOutput, SetTodos,
};

/// `prompt {message}`: acknowledged at once, the turn streams as events (CALL-03).
pub fn prompt(message: &str) -> Command {
    Command::Prompt(Prompt {
        message: message.to_owned(),
        ..Prompt::default()
    })
}

/// `steer {message}`: delivered into the current run.
pub fn steer(message: &str) -> Command {
    Command::Steer(message_args(message))
}

/// `follow_up {message}`: queued for after the current run.
pub fn follow_up(message: &str) -> Command {
    Command::FollowUp(message_args(message))
}

fn message_args(message: &str) -> MessageArgs {
    MessageArgs {
        message: message.to_owned(),
        ..MessageArgs::default()
    }
}

/// `abort`: stops the current run.
pub fn abort() -> Command {
    Command::Abort(NoArgs::default())
}

/// `bash {command}`: runs a shell command in the agent.
pub fn bash(command: &str) -> Command {
    Command::Bash(Bash {
        command: command.to_owned(),
        ..Bash::default()
    })
}

/// `abort_bash`: stops a running `bash` (CALL-05).
pub fn abort_bash() -> Command {
    Command::AbortBash(NoArgs::default())
}

/// `get_state`.
pub fn get_state() -> Command {
    Command::GetState(NoArgs::default())
}

/// `get_available_models`: the models the agent offers (ACP-24).
pub fn get_available_models() -> Command {
    Command::GetAvailableModels(NoArgs::default())
}

/// `get_session_stats`: the session's message counts and token totals (ACP-02).
pub fn get_session_stats() -> Command {
    Command::GetSessionStats(NoArgs::default())
}

/// `set_todos {phases}`: replaces the todo list (the phases are the agent's own shape).
pub fn set_todos(phases: Vec<Value>) -> Command {
    Command::SetTodos(SetTodos {
        phases,
        ..SetTodos::default()
    })
}

/// `get_messages_page {cursor?, limit?}`: one page (PAGE-01..06); never falls back (PAGE-07).
pub fn messages_page(cursor: Option<&str>, limit: Option<u32>) -> Command {
    Command::GetMessagesPage(GetMessagesPage {
        cursor: cursor.map(str::to_owned),
        limit: limit.map(u64::from),
        ..GetMessagesPage::default()
    })
}

/// `read_output {sessionId, itemId, outputRef, offsetBytes, lengthBytes}`: one page of a stored
/// output (OUT-10, ours; sent only to an agent that offers it).
pub fn read_output(params: &ReadParams) -> Command {
    Command::ReadOutput(ReadOutput {
        session_id: params.session_id.clone(),
        item_id: params.item_id.clone(),
        output_ref: params.output_ref.as_str().to_owned(),
        offset_bytes: params.offset_bytes,
        length_bytes: Some(params.length_bytes),
        ..ReadOutput::default()
    })
}
