//! The scripted model: what it answers to a prompt, by the prompt's text.
//!
//! | prompt | the model |
//! |---|---|
//! | `call TOOL JSON` | calls TOOL with the JSON object as arguments, then says `TOOL returned: <text>` |
//! | `think TEXT` | streams TEXT as thinking deltas, then TEXT as text |
//! | `read URL` | calls `read` on URL (a scheme the host registered goes to the host) |
//! | `bash CMD` | calls `bash` with CMD |
//! | `todo A; B; C` | calls `todo` to set the list A, B, C |
//! | `ask QUESTION` | calls `ask`, which asks the host to confirm QUESTION (an extension UI `confirm` dialog with a 60 s timeout; `call ask {"question":Q,"timeout":MS}` sets another), then says `ask returned: yes`, `no`, `timed out` or `disconnected` |
//! | anything else | echoes the prompt back, word by word |
//!
//! After a tool the model says `TOOL returned: <text>` (the result's text), or
//! `TOOL failed: <text>` when the tool reported an error.

use serde_json::{json, Map, Value};

/// What the model does with one prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum Script {
    /// Answer with this text, word by word.
    Echo(String),
    /// Think this text (thinking deltas), then say it.
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
            return Script::Echo(prompt.to_owned());
        }
        let call = |tool: &str, arguments: Value| Script::Call {
            tool: tool.to_owned(),
            arguments,
        };
        match word {
            "think" => Script::Think(rest.to_owned()),
            "read" => call("read", json!({ "path": rest })),
            "bash" => call("bash", json!({ "command": rest })),
            "ask" => call("ask", json!({ "question": rest })),
            "todo" => {
                let items: Vec<&str> = rest
                    .split(';')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                call(
                    "todo",
                    json!({"op": "init", "list": [{"phase": "Tasks", "items": items}]}),
                )
            }
            "call" => {
                let (tool, args) = match rest.split_once(char::is_whitespace) {
                    Some((tool, args)) => (tool, args.trim()),
                    None => (rest, "{}"),
                };
                match serde_json::from_str::<Map<String, Value>>(args) {
                    Ok(arguments) => call(tool, Value::Object(arguments)),
                    Err(_) => Script::Echo(prompt.to_owned()),
                }
            }
            _ => Script::Echo(prompt.to_owned()),
        }
    }
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

    #[test]
    fn words_join_to_the_text() {
        for text in ["", " ", "a", "hello world", "  two  spaces \n", "é ü"] {
            assert_eq!(words(text).concat(), text);
        }
        assert_eq!(words("a b  c"), ["a ", "b  ", "c"]);
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
