//! The editor side's transport: newline-delimited JSON-RPC 2.0, each line capped
//! ([`MAX_EDITOR_LINE_BYTES`], ACP-07), and the envelopes the bridge reads and writes.

use agent_client_protocol_schema::v1::{
    CancelRequestNotification, Error, RequestId, SessionNotification, CLIENT_METHOD_NAMES,
    PROTOCOL_LEVEL_METHOD_NAMES,
};
use serde::Serialize;
use serde_json::{json, Value};

pub(crate) use crate::frame::Line;
use crate::frame::LineDecoder;

/// The longest line the bridge takes from the editor: 32 MiB, as the official SDK caps its
/// reads (ACP-07, ours). A longer line is answered with a parse error and skipped.
pub(crate) const MAX_EDITOR_LINE_BYTES: usize = 32 * 1024 * 1024;

/// The editor's bytes split into lines by the framing layer's decoder, holding at most
/// [`MAX_EDITOR_LINE_BYTES`] of an unfinished one (ACP-07): a longer line is reported as
/// [`Line::TooLong`] and skipped to its newline; blank lines are skipped.
pub(crate) fn editor_lines() -> LineDecoder {
    LineDecoder::new(MAX_EDITOR_LINE_BYTES + 1)
}

/// A message from the editor, by its envelope.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A request: answer it with its id.
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    /// A notification: never answered.
    Notification { method: String, params: Value },
    /// A response to one of our requests (`session/request_permission`,
    /// `elicitation/create`): its id and its `result` (`Ok`) or `error` (`Err`). A response
    /// whose id is not one of ours is ignored by the router.
    Response {
        id: RequestId,
        outcome: Result<Value, Value>,
    },
}

/// Reads one line's envelope; `Err` is the error to answer (with a null id). The line is
/// read as the official SDK reads it (ACP-07): invalid UTF-8 as U+FFFD (`TextDecoder`), and
/// lone surrogate escapes kept (`JSON.parse`; held as the wire model's stand-ins, written
/// back as escapes).
pub(crate) fn parse_line(line: &[u8]) -> Result<Option<Incoming>, Error> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(line);
    let value: Value = crate::wire::parse_value(text.as_bytes())
        .map_err(|e| Error::parse_error().data(Value::String(e.to_string())))?;
    let Value::Object(mut object) = value else {
        return Err(Error::invalid_request().data(json!("a message is a JSON object")));
    };
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => return Err(Error::invalid_request().data(json!("method is not a string"))),
        None if object.contains_key("result") || object.contains_key("error") => {
            // A response is never answered: an id that does not read names no request of
            // ours, and the response is dropped.
            let Some(id) = object
                .remove("id")
                .and_then(|id| serde_json::from_value::<RequestId>(id).ok())
            else {
                return Ok(None);
            };
            let outcome = match object.remove("error") {
                Some(error) => Err(error),
                None => Ok(object.remove("result").unwrap_or(Value::Null)),
            };
            return Ok(Some(Incoming::Response { id, outcome }));
        }
        None => return Err(Error::invalid_request().data(json!("no method"))),
    };
    let params = object.remove("params").unwrap_or(Value::Null);
    match object.remove("id") {
        None => Ok(Some(Incoming::Notification { method, params })),
        Some(id) => match serde_json::from_value::<RequestId>(id) {
            Ok(id) => Ok(Some(Incoming::Request { id, method, params })),
            Err(_) => Err(Error::invalid_request().data(json!("id is not a string or integer"))),
        },
    }
}

/// A response line: `{"jsonrpc":"2.0","id":…,"result":…}`.
pub(crate) fn result_line(id: &RequestId, result: &impl Serialize) -> Vec<u8> {
    line(&Envelope {
        jsonrpc: JSONRPC,
        id: Some(id),
        method: None,
        params: None::<&()>,
        result: Some(result),
        error: None,
    })
}

/// An error line: `{"jsonrpc":"2.0","id":…,"error":{code,message,data?}}`.
pub(crate) fn error_line(id: &RequestId, error: &Error) -> Vec<u8> {
    line(&Envelope {
        jsonrpc: JSONRPC,
        id: Some(id),
        method: None,
        params: None::<&()>,
        result: None::<&()>,
        error: Some(error),
    })
}

/// A request line of ours to the editor: `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`.
pub(crate) fn request_line(id: &RequestId, method: &str, params: &impl Serialize) -> Vec<u8> {
    line(&Envelope {
        jsonrpc: JSONRPC,
        id: Some(id),
        method: Some(method),
        params: Some(params),
        result: None::<&()>,
        error: None,
    })
}

/// A notification line: `{"jsonrpc":"2.0","method":…,"params":…}`.
pub(crate) fn notification_line(method: &str, params: &impl Serialize) -> Vec<u8> {
    line(&Envelope {
        jsonrpc: JSONRPC,
        id: None,
        method: Some(method),
        params: Some(params),
        result: None::<&()>,
        error: None,
    })
}

/// A `session/update` line.
pub(crate) fn update_line(notification: &SessionNotification) -> Vec<u8> {
    notification_line(CLIENT_METHOD_NAMES.session_update, notification)
}

/// A `$/cancel_request` line: a request of ours withdrawn.
pub(crate) fn cancel_request_line(cancel: &CancelRequestNotification) -> Vec<u8> {
    notification_line(PROTOCOL_LEVEL_METHOD_NAMES.cancel_request, cancel)
}

const JSONRPC: &str = "2.0";

/// The envelope of a line the bridge writes, its members in the order they are written
/// (`jsonrpc`, `id`, `method`, `params`, `result`, `error`; those absent left out), serialised
/// straight from the typed values it borrows: no JSON tree is built per line.
#[derive(Serialize)]
struct Envelope<'a, P, R> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a Error>,
}

/// Compact JSON and a newline; stand-ins written back as the escapes they hold. A payload
/// that does not serialise (none of the schema's types fails) is written as `null`, as a
/// JSON tree of it would have been.
fn line<P: Serialize, R: Serialize>(envelope: &Envelope<'_, P, R>) -> Vec<u8> {
    let mut bytes = crate::wire::to_vec(envelope).unwrap_or_else(|_| {
        let nulled: Envelope<'_, (), ()> = Envelope {
            jsonrpc: envelope.jsonrpc,
            id: envelope.id,
            method: envelope.method,
            params: envelope.params.map(|_| &()),
            result: envelope.result.map(|_| &()),
            error: envelope.error,
        };
        crate::wire::to_vec(&nulled).unwrap_or_default()
    });
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acp_07_lines_split_in_any_chunking_and_overlong_skipped() {
        let mut reader = editor_lines();
        let mut push = |bytes: &[u8]| {
            let mut lines = Vec::new();
            reader.push(bytes, &mut |line| {
                lines.push(match line {
                    Line::Text(text) => Some(text.to_vec()),
                    Line::TooLong => None,
                })
            });
            lines
        };
        assert_eq!(push(b"{\"a\":1}\n{\"b\""), [Some(b"{\"a\":1}".to_vec())]);
        assert_eq!(push(b":2}\n"), [Some(b"{\"b\":2}".to_vec())]);
        // A line of exactly the cap is taken; one byte more is not.
        let mut at_cap = vec![b' '; MAX_EDITOR_LINE_BYTES - 2];
        at_cap.extend_from_slice(b"{}\n");
        assert_eq!(push(&at_cap), [Some(at_cap[..at_cap.len() - 1].to_vec())]);
        let big = vec![b'x'; MAX_EDITOR_LINE_BYTES + 1];
        assert_eq!(push(&big), [None]);
        assert_eq!(push(b"yyy\n{}\n"), [Some(b"{}".to_vec())]);
    }

    #[test]
    fn acp_07_bad_json_is_a_parse_error() {
        let error = parse_line(b"{nope").unwrap_err();
        assert_eq!(i32::from(error.code), -32700);
    }
}
