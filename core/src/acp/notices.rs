//! What the agent tells the user outside the model's text, as short lines in the turn
//! (ACP-10, ACP-11): notices, retries, compactions, extension errors, a failed message's
//! error, a builtin command's output, config changes, and the dialogs' `notify`. Each line is
//! `[LABEL: text]`, at most [`MAX_NOTICE_BYTES`], control characters but line feeds shown as
//! spaces; the turn's `agent_message_chunk` carries it on a line of its own.

use crate::wire::{
    AutoCompactionEnd, AutoRetryEnd, AutoRetryStart, ConfigUpdate, ExtensionError, SessionEvent,
};

use super::bound::cut_to_bytes;

/// The longest notice line, in bytes, before `…` (ACP-11).
pub(crate) const MAX_NOTICE_BYTES: usize = 2048;

/// `[label: text]` (or `[label]` for no text), bounded.
pub(crate) fn line(label: &str, text: &str) -> String {
    let text = text.trim();
    let body = if text.is_empty() {
        label.to_owned()
    } else {
        format!("{label}: {text}")
    };
    let body: String = body
        .chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .collect();
    if body.len() + 2 <= MAX_NOTICE_BYTES {
        return format!("[{body}]");
    }
    format!("[{}…]", cut_to_bytes(&body, MAX_NOTICE_BYTES - 5))
}

/// The notice an agent event gives, if any (ACP-11).
pub(crate) fn event(event: &SessionEvent) -> Option<String> {
    Some(match event {
        SessionEvent::Notice(notice) => {
            line(notice.level.as_deref().unwrap_or("notice"), &notice.message)
        }
        SessionEvent::AutoRetryStart(start) => retry_start(start),
        SessionEvent::AutoRetryEnd(end) => retry_end(end),
        SessionEvent::AutoCompactionStart(start) => line(
            "compacting context",
            start.reason.as_deref().unwrap_or_default(),
        ),
        SessionEvent::AutoCompactionEnd(end) => compaction_end(end),
        SessionEvent::CompactionStart(start) => line(
            "compacting context",
            start.reason.as_deref().unwrap_or_default(),
        ),
        SessionEvent::CompactionEnd(end) => {
            compaction_outcome(end.aborted, end.error_message.as_deref())
        }
        _ => return None,
    })
}

fn retry_start(start: &AutoRetryStart) -> String {
    let mut text = format!("attempt {}", start.attempt);
    if let Some(max) = start.max_attempts {
        text.push_str(&format!(" of {max}"));
    }
    if let Some(ms) = start.delay_ms.as_ref().and_then(serde_json::Number::as_f64) {
        if ms.is_finite() && ms >= 0.0 {
            text.push_str(&format!(" in {:.1}s", ms / 1000.0));
        }
    }
    if let Some(error) = start.error_message.as_deref().filter(|e| !e.is_empty()) {
        text.push_str(&format!(" after: {error}"));
    }
    line("retrying", &text)
}

fn retry_end(end: &AutoRetryEnd) -> String {
    if end.success {
        return line("retry succeeded", "");
    }
    line(
        "retry failed",
        end.final_error.as_deref().unwrap_or_default(),
    )
}

fn compaction_end(end: &AutoCompactionEnd) -> String {
    if end.skipped == Some(true) {
        return line("compaction skipped", "");
    }
    compaction_outcome(end.aborted, end.error_message.as_deref())
}

fn compaction_outcome(aborted: Option<bool>, error: Option<&str>) -> String {
    if aborted == Some(true) {
        return line("compaction aborted", "");
    }
    if let Some(error) = error.filter(|e| !e.is_empty()) {
        return line("compaction failed", error);
    }
    line("context compacted", "")
}

/// `extension_error` (ACP-11).
pub(crate) fn extension_error(error: &ExtensionError) -> String {
    let mut text = String::new();
    if let Some(path) = error.extension_path.as_deref() {
        text.push_str(path);
    }
    if let Some(event) = error.event.as_deref() {
        text.push_str(&format!(" ({event})"));
    }
    if let Some(message) = error.error.as_deref() {
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(message);
    }
    line("extension error", &text)
}

/// `config_update` (ACP-10): the model and thinking level a command set.
pub(crate) fn config_update(update: &ConfigUpdate) -> String {
    let mut parts = Vec::new();
    let model = update.model.as_ref().and_then(|m| match m {
        serde_json::Value::String(id) => Some(id.clone()),
        serde_json::Value::Object(o) => {
            let id = o.get("id").and_then(serde_json::Value::as_str)?;
            Some(
                match o.get("provider").and_then(serde_json::Value::as_str) {
                    Some(provider) => format!("{provider}/{id}"),
                    None => id.to_owned(),
                },
            )
        }
        _ => None,
    });
    if let Some(model) = model {
        parts.push(format!("model {model}"));
    }
    if let Some(level) = update.thinking_level.as_deref() {
        parts.push(format!("thinking level {level}"));
    }
    line("config", &parts.join(", "))
}
