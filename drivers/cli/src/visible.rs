//! Text from the agent shown to a person: control characters made visible, so that no escape
//! sequence (CSI, OSC), carriage return, backspace or bell the agent writes reaches the
//! terminal. `--json` output is exact and never goes through here.

use std::borrow::Cow;

/// `text` with every control character but LF and TAB in caret notation, as `cat -v` shows
/// them: ESC is `^[`, CR `^M`, DEL `^?`, and the C1 controls U+0080..U+009F `M-^@`..`M-^_`.
/// A lone surrogate the agent wrote (held by the wire model as a stand-in) shows as U+FFFD.
pub fn visible(text: &str) -> Cow<'_, str> {
    let text = musewire_wire::display_text(text);
    if !text.chars().any(hidden) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !hidden(c) {
            out.push(c);
            continue;
        }
        let code = c as u32;
        if code >= 0x80 {
            out.push_str("M-");
        }
        out.push('^');
        out.push(match code & 0x7f {
            0x7f => '?',
            low => char::from_u32(low + 0x40).unwrap_or('?'),
        });
    }
    Cow::Owned(out)
}

/// Whether `c` is a control character a terminal would act on (LF and TAB excepted).
fn hidden(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn escapes_returns_and_c1_controls_are_shown_not_sent() {
        assert_eq!(visible("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(
            visible("\x1b[2J\x1b]0;title\x07a\rb\x7f\u{9b}31m"),
            "^[[2J^[]0;title^Ga^Mb^?M-^[31m"
        );
    }
}
