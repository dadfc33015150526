//! Builders for the commands hosts send most, as the JSON objects [`Client::send`] takes
//! (`Client` in [`super`]); the drivers' typed methods are built on these.

use serde_json::{json, Value};

/// `prompt {message}`: acknowledged at once, the turn streams as events (CALL-03).
pub fn prompt(message: &str) -> Value {
    json!({"type": "prompt", "message": message})
}

/// `steer {message}`: delivered into the current run.
pub fn steer(message: &str) -> Value {
    json!({"type": "steer", "message": message})
}

/// `follow_up {message}`: queued for after the current run.
pub fn follow_up(message: &str) -> Value {
    json!({"type": "follow_up", "message": message})
}

/// `abort`: stops the current run.
pub fn abort() -> Value {
    json!({"type": "abort"})
}

/// `bash {command}`: runs a shell command in the agent.
pub fn bash(command: &str) -> Value {
    json!({"type": "bash", "command": command})
}

/// `abort_bash`: stops a running `bash` (CALL-05).
pub fn abort_bash() -> Value {
    json!({"type": "abort_bash"})
}

/// `get_state`.
pub fn get_state() -> Value {
    json!({"type": "get_state"})
}

/// `set_todos {phases}`: replaces the todo list.
pub fn set_todos(phases: Value) -> Value {
    json!({"type": "set_todos", "phases": phases})
}

/// `get_messages_page {cursor?, limit?}`: one page (PAGE-01..06); never falls back (PAGE-07).
pub fn messages_page(cursor: Option<&str>, limit: Option<u32>) -> Value {
    let mut command = json!({"type": "get_messages_page"});
    if let Some(cursor) = cursor {
        command["cursor"] = cursor.into();
    }
    if let Some(limit) = limit {
        command["limit"] = limit.into();
    }
    command
}
