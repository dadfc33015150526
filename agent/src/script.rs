//! The scripted model: what it answers to a prompt, by the prompt's text.
//!
//! | prompt | the model |
//! |---|---|
//! | `call TOOL JSON` | calls TOOL with the JSON object as arguments, then says `TOOL returned: <text>` |
//! | `think TEXT` | streams TEXT as thinking deltas, then TEXT as text |
//! | `read URL` | calls `read` on URL (a scheme the host registered goes to the host; `call read {"path":P,"offset":N,"limit":M}` reads lines N.. of a file) |
//! | `bash CMD` | calls `bash` with CMD |
//! | `todo A; B; C` | calls `todo` to set the list A, B, C |
//! | `ask QUESTION` | calls `ask`, which asks the host to confirm QUESTION (an extension UI `confirm` dialog with a 60 s timeout; `call ask {"question":Q,"timeout":MS}` sets another; `"kind":"input"` asks for text, `"kind":"select"` with `"options":[…]` for a choice), then says `ask returned: yes`, `no` (the text or the choice), `timed out` or `disconnected` |
//! | anything else | echoes the prompt back, word by word, then `[image: MIME, N bytes]` on a line of its own per attached image (N its decoded bytes) |
//!
//! After a tool the model says `TOOL returned: <text>` (the result's text), or
//! `TOOL failed: <text>` when the tool reported an error. What it echoes or thinks is at most
//! [`MAX_REPLY_BYTES`] of the prompt, then `… (N more bytes)` (AGENT-04).

use serde::Serialize;
use serde_json::{Map, Value};

/// Longest text the scripted model says or thinks for a prompt (echo, `think`): a longer
/// prompt is quoted up to this many bytes, cut on a character boundary, with the number of
/// bytes left out, so a huge prompt is neither copied nor streamed back many times over
/// (AGENT-04). 64 KiB.
pub const MAX_REPLY_BYTES: usize = 64 * 1024;

/// What the model does with one prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum Script {
    /// Answer with this text (the prompt, up to [`MAX_REPLY_BYTES`]), word by word.
    Echo(String),
    /// Think this text (up to [`MAX_REPLY_BYTES`]; thinking deltas), then say it.
    Think(String),
    /// Call a tool with these arguments.
    Call {
        /// The tool's name.
        tool: String,
        /// The arguments object.
        arguments: Value,
    },
}

impl Script {
    /// The script for a prompt. A `call` whose arguments are not a JSON object, and a form
    /// without its argument, is echoed.
    pub fn parse(prompt: &str) -> Script {
        let text = prompt.trim();
        let (word, rest) = match text.split_once(char::is_whitespace) {
            Some((word, rest)) => (word, rest.trim()),
            None => (text, ""),
        };
        if rest.is_empty() {
            return Script::Echo(quote(prompt, MAX_REPLY_BYTES));
        }
        let call = |tool: &str, arguments: Value| Script::Call {
            tool: tool.to_owned(),
            arguments,
        };
        match word {
            "think" => Script::Think(quote(rest, MAX_REPLY_BYTES)),
            "read" => call("read", argument("path", rest)),
            "bash" => call("bash", argument("command", rest)),
            "ask" => call("ask", argument("question", rest)),
            "todo" => {
                let items: Vec<&str> = rest
                    .split(';')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                let init = TodoInit {
                    op: "init",
                    list: [TodoList {
                        phase: "Tasks",
                        items,
                    }],
                };
                call(
                    "todo",
                    serde_json::to_value(init).expect("arguments serialise"),
                )
            }
            "call" => {
                let (tool, args) = match rest.split_once(char::is_whitespace) {
                    Some((tool, args)) => (tool, args.trim()),
                    None => (rest, "{}"),
                };
                match serde_json::from_str::<Map<String, Value>>(args) {
                    Ok(arguments) => call(tool, Value::Object(arguments)),
                    Err(_) => Script::Echo(quote(prompt, MAX_REPLY_BYTES)),
                }
            }
            _ => Script::Echo(quote(prompt, MAX_REPLY_BYTES)),
        }
    }
}

/// Arguments of one string member, `{key: value}`.
fn argument(key: &str, value: &str) -> Value {
    let mut arguments = Map::new();
    arguments.insert(key.to_owned(), Value::from(value));
    Value::Object(arguments)
}

/// The `todo` tool's arguments for a list of items: `{op:"init", list:[{phase, items}]}`.
#[derive(Serialize)]
struct TodoInit<'a> {
    op: &'static str,
    list: [TodoList<'a>; 1],
}

/// One phase of [`TodoInit`].
#[derive(Serialize)]
struct TodoList<'a> {
    phase: &'static str,
    items: Vec<&'a str>,
}

/// A text as the model quotes it: at most `max` bytes, cut on a character boundary, with the
/// number of bytes left out.
pub(crate) fn quote(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} more bytes)", &text[..cut], text.len() - cut)
}

/// Splits text into the deltas a model streams: each word with the whitespace after it
/// (leading whitespace goes with the first word), so the deltas join to the text.
pub fn words(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    let mut seen_word = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            in_space = true;
        } else {
            if in_space && seen_word {
                out.push(&text[start..i]);
                start = i;
            }
            in_space = false;
            seen_word = true;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn words_join_to_the_text() {
        for text in ["", " ", "a", "hello world", "  two  spaces \n", "é ü"] {
            assert_eq!(words(text).concat(), text);
        }
        assert_eq!(words("a b  c"), ["a ", "b  ", "c"]);
    }

    #[test]
    fn agent_04_echo_and_think_quote_at_most_the_reply_cap() {
        let long = "é".repeat(MAX_REPLY_BYTES); // two bytes each: twice the cap
        let Script::Echo(said) = Script::parse(&long) else {
            panic!("an echo")
        };
        let more = long.len() - MAX_REPLY_BYTES;
        assert_eq!(
            said,
            format!("{}… ({more} more bytes)", &long[..MAX_REPLY_BYTES])
        );
        let Script::Think(thought) = Script::parse(&format!("think {long}")) else {
            panic!("a thought")
        };
        assert_eq!(thought, said);
        let exact = "x".repeat(MAX_REPLY_BYTES);
        assert_eq!(Script::parse(&exact), Script::Echo(exact.clone()));
    }

    #[test]
    fn forms() {
        assert_eq!(
            Script::parse("call lookup {\"q\":1}"),
            Script::Call {
                tool: "lookup".into(),
                arguments: json!({"q": 1})
            }
        );
        assert_eq!(
            Script::parse("call x [1]"),
            Script::Echo("call x [1]".into())
        );
        assert_eq!(Script::parse("think deep"), Script::Think("deep".into()));
        assert_eq!(Script::parse("bash"), Script::Echo("bash".into()));
        assert_eq!(
            Script::parse("todo a; b;"),
            Script::Call {
                tool: "todo".into(),
                arguments: json!({"op": "init", "list": [{"phase": "Tasks", "items": ["a", "b"]}]})
            }
        );
    }
}
