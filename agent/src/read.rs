//! The `read` tool's line window, pure: which lines of a file (`offset`, 1-based, and
//! `limit`, a number of lines, as omp's and pi's `read` take them) and at most how many bytes
//! ([`MAX_OUTPUT_BYTES`], the cap every tool output has: AGENT-04). The
//! [`LineScanner`] is fed a file's bytes by whoever reads it (the
//! [`Disk`](crate::disk::Disk)) and says when it has seen enough; [`result`] then makes the
//! tool's result from the [`FileWindow`] it gives.
//!
//! Lines end at `\n`; a last line without one is a line, a final `\n` starts none (so
//! `"a\nb\n"` has 2 lines). The window's bytes are the file's own, newlines included, so
//! windows read one after another put the file back together exactly.
//!
//! Without `offset` and `limit` the result is as it always was: the file's head, at most the
//! cap, with the cut's note. With either, the result ends with omp's notice when lines are
//! left after the window (`[N more lines in file. Use offset=M to continue.]`), and an
//! `offset` past the end is an error (`Offset N is beyond end of file (T lines total)`).

use musewire_wire::ToolResult;
use serde::Serialize;
use serde_json::Value;

use crate::bash::{cut_text, MAX_OUTPUT_BYTES};
use crate::messages::text_result;
use crate::tools::details_json;

/// The most bytes a read scans to find its window and count the lines after it (1 GiB): a
/// file without end (`/dev/zero`) or a huge one is not read past it.
pub const MAX_SCAN_BYTES: u64 = 1 << 30;

/// Which lines to read, and at most how many of their bytes to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadWindow {
    /// The first line, 1-based (`None`: the first; 0 reads as 1).
    pub offset: Option<u64>,
    /// How many lines (`None`: to the end).
    pub limit: Option<u64>,
    /// The most bytes of the window kept.
    pub max_bytes: usize,
}

impl ReadWindow {
    /// The window of the `read` tool's arguments: `offset` and `limit` (non-negative
    /// integers), the cap [`MAX_OUTPUT_BYTES`].
    pub fn of_arguments(arguments: &Value) -> Result<Self, String> {
        let number = |key: &str| match arguments.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_u64()
                .map(Some)
                .ok_or_else(|| format!("read: \"{key}\" must be a non-negative integer")),
        };
        Ok(ReadWindow {
            offset: number("offset")?,
            limit: number("limit")?,
            max_bytes: MAX_OUTPUT_BYTES,
        })
    }

    /// The first line's index, 0-based.
    fn start(&self) -> u64 {
        self.offset.unwrap_or(1).max(1) - 1
    }

    /// The index of the line after the window, 0-based (`None`: to the end).
    fn end(&self) -> Option<u64> {
        self.limit.map(|limit| self.start().saturating_add(limit))
    }

    /// Whether lines were asked for (else the whole file's head is read, as always).
    fn is_lines(&self) -> bool {
        self.offset.is_some() || self.limit.is_some()
    }
}

/// What a read found: the window's bytes (at most the window's `max_bytes`) and what the
/// scan saw of the file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileWindow {
    /// The window's bytes, at most `max_bytes`.
    pub kept: Vec<u8>,
    /// Whether the window had more bytes than were kept (the scan then stopped).
    pub capped: bool,
    /// Whether the scan reached the end of the file.
    pub eof: bool,
    /// Lines seen (complete, plus a last one without `\n`), all of them when `eof`.
    pub lines_seen: u64,
    /// The file's size when it is a regular file (filled in by the reader).
    pub size: Option<u64>,
}

/// Takes a file's bytes in order and keeps its window (see the [module docs](self)).
#[derive(Debug)]
pub struct LineScanner {
    window: ReadWindow,
    found: FileWindow,
    /// The 0-based index of the line being scanned.
    line: u64,
    /// Whether the line being scanned has bytes.
    in_line: bool,
    scanned: u64,
    done: bool,
}

impl LineScanner {
    /// A scanner for `window`.
    pub fn new(window: ReadWindow) -> Self {
        LineScanner {
            window,
            found: FileWindow::default(),
            line: 0,
            in_line: false,
            scanned: 0,
            done: false,
        }
    }

    /// Takes the next bytes of the file; false once it has seen enough (the rest need not
    /// be read).
    pub fn feed(&mut self, mut bytes: &[u8]) -> bool {
        let start = self.window.start();
        let end = self.window.end();
        while !bytes.is_empty() && !self.done {
            let room = MAX_SCAN_BYTES.saturating_sub(self.scanned);
            if room == 0 {
                self.done = true;
                break;
            }
            let take = bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX));
            let newline = bytes[..take].iter().position(|&b| b == b'\n');
            let segment = &bytes[..newline.map_or(take, |n| n + 1)];
            let in_window = self.line >= start && end.is_none_or(|end| self.line < end);
            if in_window {
                let room = self.window.max_bytes - self.found.kept.len();
                if segment.len() > room {
                    self.found.kept.extend_from_slice(&segment[..room]);
                    self.found.capped = true;
                    self.done = true;
                    break;
                }
                self.found.kept.extend_from_slice(segment);
            }
            self.scanned += segment.len() as u64;
            if newline.is_some() {
                self.line += 1;
                self.in_line = false;
            } else {
                self.in_line = true;
            }
            // Without a limit, the lines after the window need not be counted: a read of
            // the head stops at the cap (or at the end).
            bytes = &bytes[segment.len()..];
        }
        !self.done
    }

    /// The end of the file was reached (or the reader stopped after `feed` said enough):
    /// what was found.
    pub fn finish(mut self, eof: bool) -> FileWindow {
        self.found.eof = eof && !self.done;
        self.found.lines_seen = self.line + u64::from(self.in_line);
        self.found
    }
}

/// The `read` tool's result for the file `path` read through `window`: `Ok` with the result
/// (`details.path`, and for a line window `offset`, `lines` and, when the whole file was
/// seen, `totalLines`), or `Err` with the error's text.
pub fn result(path: &str, window: &ReadWindow, found: FileWindow) -> Result<ToolResult, String> {
    let mut details = ReadDetails {
        path,
        ..ReadDetails::default()
    };
    if !window.is_lines() {
        // The head, as always (AGENT-04).
        if !found.capped {
            let text = String::from_utf8_lossy(&found.kept).into_owned();
            return Ok(text_result(text, Some(details_json(&details))));
        }
        // A file that grew since its size was read is longer than the cap all the same.
        let total = found.size.map(|size| size.max(found.kept.len() as u64 + 1));
        let (text, cut) = cut_text(found.kept, total);
        details.truncated = Some(true);
        details.cut_bytes = cut;
        return Ok(text_result(text, Some(details_json(&details))));
    }
    let start = window.start();
    let offset = start + 1;
    if found.eof && start > 0 && start >= found.lines_seen {
        return Err(format!(
            "Offset {offset} is beyond end of file ({} lines total)",
            found.lines_seen
        ));
    }
    if !found.eof && !found.capped && found.lines_seen <= start {
        return Err(format!(
            "Offset {offset} is past the first {MAX_SCAN_BYTES} bytes of {path}, which a read \
             does not scan beyond"
        ));
    }
    let newlines = found.kept.iter().filter(|&&b| b == b'\n').count() as u64;
    let partial = found.kept.last().is_some_and(|&b| b != b'\n');
    let lines = newlines + u64::from(partial);
    details.offset = Some(offset);
    details.lines = Some(lines);
    details.total_lines = found.eof.then_some(found.lines_seen);
    if found.capped {
        // Cut on a character boundary, with the cap's note; the next read starts at the
        // line that was cut.
        let (mut text, _) = cut_text(found.kept, None);
        details.truncated = Some(true);
        let next = start + newlines + 1;
        text.push_str(&format!(" [Use offset={next} to continue.]"));
        return Ok(text_result(text, Some(details_json(&details))));
    }
    let mut text = String::from_utf8_lossy(&found.kept).into_owned();
    if let Some(end) = window.end() {
        let next = end + 1;
        if found.eof && found.lines_seen > end {
            let more = found.lines_seen - end;
            text.push_str(&format!(
                "\n\n[{more} more lines in file. Use offset={next} to continue.]"
            ));
        } else if !found.eof {
            text.push_str(&format!(
                "\n\n[More lines in file. Use offset={next} to continue.]"
            ));
        }
    }
    Ok(text_result(text, Some(details_json(&details))))
}

/// The `read` tool's `details`: the path, and what the window found.
#[derive(Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct ReadDetails<'a> {
    path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lines: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_lines: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cut_bytes: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A result as the JSON the model and the history get.
    fn result_json(path: &str, window: &ReadWindow, found: FileWindow) -> Result<Value, String> {
        super::result(path, window, found).map(|r| serde_json::to_value(r).unwrap())
    }

    fn scan(bytes: &[u8], offset: Option<u64>, limit: Option<u64>, max: usize) -> FileWindow {
        let window = ReadWindow {
            offset,
            limit,
            max_bytes: max,
        };
        let mut scanner = LineScanner::new(window);
        // Fed in 3-byte pieces, so lines straddle the pieces.
        let mut more = true;
        for piece in bytes.chunks(3) {
            more = scanner.feed(piece);
            if !more {
                break;
            }
        }
        scanner.finish(more)
    }

    fn text(value: &Value) -> &str {
        value["content"][0]["text"].as_str().unwrap()
    }

    const FILE: &[u8] = b"one\ntwo\nthree\nfour\n";

    #[test]
    fn a_window_of_lines_is_the_file_s_own_bytes() {
        let found = scan(FILE, Some(2), Some(2), 1000);
        assert_eq!(found.kept, b"two\nthree\n");
        assert!(found.eof);
        assert_eq!(found.lines_seen, 4);
        let window = ReadWindow {
            offset: Some(2),
            limit: Some(2),
            max_bytes: 1000,
        };
        let result = result_json("f", &window, found).unwrap();
        assert_eq!(
            text(&result),
            "two\nthree\n\n\n[1 more lines in file. Use offset=4 to continue.]"
        );
        assert_eq!(result["details"]["offset"], 2);
        assert_eq!(result["details"]["lines"], 2);
        assert_eq!(result["details"]["totalLines"], 4);
    }

    #[test]
    fn windows_read_one_after_another_put_the_file_back_together() {
        let file = b"a\nbb\n\nccc\nlast without newline";
        let mut whole = Vec::new();
        let mut offset = 1;
        loop {
            let found = scan(file, Some(offset), Some(2), 1000);
            if found.kept.is_empty() {
                break;
            }
            whole.extend_from_slice(&found.kept);
            offset += 2;
        }
        assert_eq!(whole, file);
    }

    #[test]
    fn an_offset_past_the_end_is_an_error_as_omp_s() {
        let window = ReadWindow {
            offset: Some(9),
            limit: None,
            max_bytes: 1000,
        };
        let found = scan(FILE, Some(9), None, 1000);
        assert_eq!(
            result_json("f", &window, found),
            Err("Offset 9 is beyond end of file (4 lines total)".into())
        );
    }

    #[test]
    fn agent_04_a_window_over_the_cap_is_cut_and_says_where_to_go_on() {
        let window = ReadWindow {
            offset: Some(2),
            limit: None,
            max_bytes: 6,
        };
        let found = scan(FILE, Some(2), None, 6);
        assert!(found.capped);
        assert_eq!(found.kept, b"two\nth");
        let result = result_json("f", &window, found).unwrap();
        assert!(text(&result).starts_with("two\nth\n\n[output truncated"));
        assert!(text(&result).ends_with("[Use offset=3 to continue.]"));
        assert_eq!(result["details"]["truncated"], true);
    }

    #[test]
    fn without_offset_and_limit_the_head_is_read_as_always() {
        let window = ReadWindow {
            offset: None,
            limit: None,
            max_bytes: 5,
        };
        let mut found = scan(FILE, None, None, 5);
        found.size = Some(FILE.len() as u64);
        let result = result_json("f", &window, found).unwrap();
        assert_eq!(result["details"]["cutBytes"], FILE.len() - 5);
        assert!(text(&result).starts_with("one\nt\n\n[output truncated: 14 more bytes"));
        let whole = scan(FILE, None, None, 1000);
        let result = result_json("f", &window, whole).unwrap();
        assert_eq!(text(&result), "one\ntwo\nthree\nfour\n");
        assert_eq!(result["details"], json!({"path": "f"}));
    }

    #[test]
    fn a_limit_stops_keeping_but_the_lines_after_are_counted() {
        let found = scan(b"1\n2\n3\n4\n5", Some(1), Some(1), 100);
        assert_eq!(found.kept, b"1\n");
        assert_eq!(found.lines_seen, 5);
        assert!(found.eof);
    }
}
