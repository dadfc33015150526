//! A sans-IO decoder of `text/event-stream` (server-sent events, WHATWG HTML §9.2.6), as MCP's
//! HTTP transports carry JSON-RPC messages on it (MCP-10).
//!
//! Bytes go in as they arrive, split anywhere (inside a field, between the CR and LF of a
//! CRLF, inside the byte-order mark); events come out as their blank line completes, the same
//! events whatever the splitting. Lines end with CR, LF or CRLF; a line starting with `:` is a
//! comment; `event`, `data` (lines joined with LF), `id` (kept across events, as
//! [`SseDecoder::last_event_id`]) and `retry` (digits only, as [`SseDecoder::retry`]) are
//! read, other fields ignored. An event with no `data` is not dispatched, but its `id` still
//! counts. An event whose lines add up to more than the decoder's bound is given as
//! [`SseItem::TooLong`] once and discarded up to the next blank line, so memory stays bounded
//! whatever the server sends. An event not ended by a blank line when the stream ends is
//! dropped, as the standard says.

use std::time::Duration;

/// One event, as [`SseDecoder::push`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event` field; `None` when absent or empty (the standard's `message`).
    pub event: Option<String>,
    /// The `data` lines, joined with LF (invalid UTF-8 replaced).
    pub data: String,
    /// The last event ID when the event was dispatched (the stream's, not only this event's).
    pub id: Option<String>,
}

/// What [`SseDecoder::push`] gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SseItem {
    /// A complete event with data.
    Event(SseEvent),
    /// An event over the bound: skipped up to the next blank line.
    TooLong,
}

/// The decoder. See the [module docs](self).
#[derive(Debug, Clone)]
pub(crate) struct SseDecoder {
    max_event: usize,
    /// The line read so far (not while discarding).
    line: Vec<u8>,
    /// Bytes in the current line, counted while discarding too (0: a blank line).
    line_len: usize,
    /// Bytes of the current event so far.
    event_len: usize,
    /// The last byte pushed was a CR: an LF first in the next push ends nothing.
    after_cr: bool,
    /// Still at the start of the stream (a byte-order mark is skipped).
    first_line: bool,
    /// The current event is over the bound: skipped up to the next blank line.
    discarding: bool,
    event: Option<String>,
    data: Vec<u8>,
    has_data: bool,
    pending_id: Option<String>,
    last_id: Option<String>,
    retry: Option<Duration>,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseDecoder {
    /// A decoder whose events may hold at most `max_event` bytes (their lines, line ends not
    /// counted).
    pub(crate) fn new(max_event: usize) -> Self {
        SseDecoder {
            max_event,
            line: Vec::new(),
            line_len: 0,
            event_len: 0,
            after_cr: false,
            first_line: true,
            discarding: false,
            event: None,
            data: Vec::new(),
            has_data: false,
            pending_id: None,
            last_id: None,
            retry: None,
        }
    }

    /// The stream's last event ID: the last `id` field of a completed event (empty `id`
    /// resets it to `None`). The `Last-Event-ID` a resumption sends.
    pub(crate) fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The last valid `retry` field: how long to wait before reconnecting.
    pub(crate) fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Reads `bytes`, giving each item completed to `out`.
    pub(crate) fn push(&mut self, mut bytes: &[u8], out: &mut impl FnMut(SseItem)) {
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while let Some(at) = memchr::memchr2(b'\n', b'\r', bytes) {
            self.take(&bytes[..at], out);
            self.end_line(out);
            let cr = bytes[at] == b'\r';
            bytes = &bytes[at + 1..];
            if cr {
                match bytes.first() {
                    None => self.after_cr = true,
                    Some(b'\n') => bytes = &bytes[1..],
                    Some(_) => {}
                }
            }
        }
        self.take(bytes, out);
    }

    /// The stream ended: an event not completed by a blank line is dropped. The decoder can
    /// read a new stream after it (the last event ID and `retry` are kept).
    pub(crate) fn finish(&mut self) {
        self.line.clear();
        self.line_len = 0;
        self.after_cr = false;
        self.first_line = true;
        self.reset_event();
    }

    fn take(&mut self, part: &[u8], out: &mut impl FnMut(SseItem)) {
        if part.is_empty() {
            return;
        }
        self.line_len += part.len();
        if self.discarding {
            return;
        }
        self.event_len += part.len();
        if self.event_len > self.max_event + if self.first_line { BOM.len() } else { 0 } {
            self.discarding = true;
            self.line = Vec::new();
            self.reset_fields();
            out(SseItem::TooLong);
            return;
        }
        self.line.extend_from_slice(part);
    }

    fn end_line(&mut self, out: &mut impl FnMut(SseItem)) {
        let blank = self.line_len == 0;
        self.line_len = 0;
        if self.discarding {
            if blank {
                self.discarding = false;
                self.event_len = 0;
                self.first_line = false;
            }
            return;
        }
        let mut line = std::mem::take(&mut self.line);
        if self.first_line {
            self.first_line = false;
            if line.starts_with(BOM) {
                line.drain(..BOM.len());
                if line.is_empty() {
                    // A mark alone on the first line is a blank line after all.
                    return self.dispatch(out);
                }
            }
        }
        if blank {
            return self.dispatch(out);
        }
        self.field(&line);
        line.clear();
        self.line = line;
    }

    fn field(&mut self, line: &[u8]) {
        if line.first() == Some(&b':') {
            return;
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match name {
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.has_data = true;
                self.data.extend_from_slice(value);
            }
            b"id" if !value.contains(&0) => {
                self.pending_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(ms) = std::str::from_utf8(value).unwrap_or("").parse::<u64>() {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut impl FnMut(SseItem)) {
        if let Some(id) = self.pending_id.take() {
            self.last_id = (!id.is_empty()).then_some(id);
        }
        if self.has_data {
            let data = std::mem::take(&mut self.data);
            let event = self.event.take().filter(|e| !e.is_empty());
            out(SseItem::Event(SseEvent {
                event,
                data: String::from_utf8(data)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
                id: self.last_id.clone(),
            }));
        }
        self.reset_event();
    }

    fn reset_fields(&mut self) {
        self.event = None;
        self.data.clear();
        self.has_data = false;
        self.pending_id = None;
    }

    fn reset_event(&mut self) {
        self.reset_fields();
        self.event_len = 0;
        self.discarding = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decode(chunks: &[&[u8]], max: usize) -> (Vec<SseItem>, Option<String>, Option<Duration>) {
        let mut decoder = SseDecoder::new(max);
        let mut items = Vec::new();
        for chunk in chunks {
            decoder.push(chunk, &mut |item| items.push(item));
        }
        (
            items,
            decoder.last_event_id().map(str::to_owned),
            decoder.retry(),
        )
    }

    fn event(event: Option<&str>, data: &str, id: Option<&str>) -> SseItem {
        SseItem::Event(SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
            id: id.map(str::to_owned),
        })
    }

    /// MCP-10: fields, multi-line data, comments, ids kept across events, retry.
    #[test]
    fn mcp_10_fields_and_line_ends() {
        let stream = b"\xEF\xBB\xBF: hello\r\nevent: endpoint\rdata: /messages?s=1\n\n\
id: 7\ndata:{\"a\":\ndata: 1}\r\n\r\n\
data\n\nretry: 1500\nretry: x\nid: 8\n\n\
event: message\ndata: x\nunknown: y\n\n\
id\ndata: z\n\ndata: cut";
        let (items, last, retry) = decode(&[stream], 1 << 20);
        assert_eq!(
            items,
            vec![
                event(Some("endpoint"), "/messages?s=1", None),
                event(None, "{\"a\":\n1}", Some("7")),
                event(None, "", Some("7")),
                event(Some("message"), "x", Some("8")),
                event(None, "z", None),
            ]
        );
        assert_eq!(last, None);
        assert_eq!(retry, Some(Duration::from_millis(1500)));
    }

    /// MCP-10: an event over the bound is reported once and skipped to the next blank line;
    /// the next event is read.
    #[test]
    fn mcp_10_oversized_event_is_skipped() {
        let stream = b"id: 1\ndata: 0123456789\ndata: 0123456789\n\ndata: ok\n\n";
        let (items, last, _) = decode(&[stream], 16);
        assert_eq!(items, vec![SseItem::TooLong, event(None, "ok", None)]);
        // The skipped event's id does not count.
        assert_eq!(last, None);
    }

    #[test]
    fn mcp_10_unfinished_event_is_dropped_at_the_end() {
        let mut decoder = SseDecoder::new(64);
        let mut items = Vec::new();
        decoder.push(b"data: a", &mut |i| items.push(i));
        decoder.finish();
        decoder.push(b"\n\ndata: b\n\n", &mut |i| items.push(i));
        assert_eq!(items, vec![event(None, "b", None)]);
    }

    fn split_at_all(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut chunks = Vec::new();
        let mut from = 0;
        for cut in cuts {
            chunks.push(bytes[from..cut].to_vec());
            from = cut;
        }
        chunks.push(bytes[from..].to_vec());
        chunks
    }

    fn stream_part() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            Just(b"data: ".to_vec()),
            Just(b"data:".to_vec()),
            Just(b"id: ".to_vec()),
            Just(b"event: ".to_vec()),
            Just(b"retry: 10".to_vec()),
            Just(b": c".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\xEF\xBB\xBF".to_vec()),
            "[a-z{}\":]{0,12}".prop_map(String::into_bytes),
        ]
    }

    proptest! {
        /// MCP-10: splitting a stream anywhere gives the same events, ids and retry.
        #[test]
        fn mcp_10_splitting_anywhere_gives_the_same_events(
            parts in proptest::collection::vec(stream_part(), 0..40),
            cuts in proptest::collection::vec(0usize..4096, 0..12),
            max in prop_oneof![Just(8usize), Just(40), Just(1 << 16)],
        ) {
            let stream: Vec<u8> = parts.concat();
            let whole = decode(&[&stream], max);
            let chunks = split_at_all(&stream, &cuts);
            let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(&decode(&refs, max), &whole);
            let bytes: Vec<Vec<u8>> = stream.iter().map(|b| vec![*b]).collect();
            let refs: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(decode(&refs, max), whole);
        }
    }
}
