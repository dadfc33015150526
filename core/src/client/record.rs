//! Recording a session as a conformance transcript, while it runs.
//!
//! A driver that records hands every [`Input`] it gives the [`Client`](super::Client) to
//! [`Recorder::step`] (the host kit's `musewire_host::Driven` does this itself), with the
//! actions the client produced for it, and writes
//! [`Recorder::take`] to a file from time to time. The result is the transcript format of
//! `conformance/transcripts/README.md`: a header line, then one line per step with its time
//! in milliseconds, its input, what a call returned, and the actions expected. Replaying it
//! through the core gives the same actions.

use std::time::Instant;

use serde_json::{json, Map, Value};

use super::{Action, ClientConfig, Input};

/// Strings longer than this many bytes are abbreviated in a transcript's expected actions.
pub const ABBREVIATE_OVER: usize = 4096;

/// 64-bit FNV-1a of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The abbreviation of one string in a transcript (itself when short): transcripts stay
/// small although an agent may send megabytes, and any change to such a string changes its
/// length or digest, so comparing abbreviations stays exact for practical purposes.
pub fn abbreviate_str(s: &str) -> String {
    if s.len() <= ABBREVIATE_OVER {
        return s.to_owned();
    }
    let head: String = s.chars().take(32).collect();
    format!(
        "…[{} bytes, fnv1a64 {:016x}, starts {:?}]",
        s.len(),
        fnv1a64(s.as_bytes()),
        head
    )
}

/// `value` with every long string abbreviated (idempotent), as transcripts store and compare
/// expected actions.
pub fn normalize(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(abbreviate_str(s)),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), normalize(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Writes a session as transcript lines.
#[derive(Debug, Clone)]
pub struct Recorder {
    start: Instant,
    pending: Vec<u8>,
}

impl Recorder {
    /// A recorder for a session that started at `start` with `config`; the header names the
    /// rules the recording covers and says what it shows.
    pub fn new(start: Instant, config: &ClientConfig, rules: &[&str], description: &str) -> Self {
        let mut written = json!({
            "max_frame_bytes": config.max_frame_bytes,
            "max_reassembled_frame_bytes": config.max_reassembled_frame_bytes,
            "negotiate_v2": config.negotiate_v2,
            "ready_timeout_ms": config.ready_timeout.as_millis() as u64,
            "expect_ready": config.expect_ready,
            "stderr_tail_bytes": config.stderr_tail_bytes,
            "history_page_limit": config.history_page_limit,
            "observe": config.observe,
        });
        // The spill policy of host tool results, when on (the replay must spill alike).
        if let Some(cap) = config.spill.max_inline_bytes {
            written["max_inline_bytes"] = json!(cap);
            written["spill_store"] = json!(config.spill.has_store);
        }
        if let Some(owner) = &config.spill_owner {
            written["spill_owner"] = json!(owner.session_id);
        }
        let header = json!({
            "role": "client",
            "config": written,
            "rules": rules,
            "description": description,
        });
        let mut pending = serde_json::to_vec(&header).expect("a JSON value serialises");
        pending.push(b'\n');
        Recorder { start, pending }
    }

    /// Records one step: the input given at `now`, what a call returned (if it returns
    /// anything), and the actions the client produced for it, in order.
    pub fn step(
        &mut self,
        now: Instant,
        input: &Input<'_>,
        returns: Option<Value>,
        actions: &[Action],
    ) {
        let mut step = Map::new();
        step.insert(
            "at".into(),
            Value::from(now.saturating_duration_since(self.start).as_millis() as u64),
        );
        input.write(&mut step);
        if let Some(r) = returns {
            step.insert("returns".into(), r);
        }
        let expect: Vec<Value> = actions
            .iter()
            .map(|a| normalize(&serde_json::to_value(a).expect("an action serialises")))
            .collect();
        step.insert("expect".into(), Value::Array(expect));
        serde_json::to_writer(&mut self.pending, &step).expect("a JSON value serialises");
        self.pending.push(b'\n');
    }

    /// The lines recorded since the last call, ready to append to the transcript file.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.pending)
    }
}
