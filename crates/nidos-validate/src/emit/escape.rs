//! Control characters made visible in human-readable output. A file name may hold a
//! newline, a carriage return or a terminal escape sequence; printed raw it would forge
//! report lines or reach the terminal as a command. Every text the command line prints
//! for people (the text report, summaries, tables, error messages) passes names
//! through here; JSON and SARIF escape them by their own syntax.

use std::borrow::Cow;

/// `text` with every control character (C0, DEL and C1) written as an escape: `\n`,
/// `\r`, `\t`, else `\x1b` or `\u{85}`. Borrowed when there is nothing to escape.
pub fn control(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// [`control`] for a multi-line message: line breaks are kept, every other control
/// character is escaped.
pub fn keep_lines(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// A path as [`control`] shows it.
pub fn path(p: &std::path::Path) -> String {
    control(&p.display().to_string()).into_owned()
}

fn escape(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    let needs = |c: char| c.is_control() && !(keep_newlines && c == '\n');
    if !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !needs(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_visible() {
        assert_eq!(control("sub-01/a.json"), "sub-01/a.json");
        assert!(matches!(control("plain"), Cow::Borrowed(_)));
        assert_eq!(control("a\nb\rc\td"), "a\\nb\\rc\\td");
        assert_eq!(control("x\u{1b}[31my"), "x\\x1b[31my");
        assert_eq!(control("\u{7f}\u{85}\u{9b}"), "\\x7f\\x85\\x9b");
        assert_eq!(keep_lines("a\nb\u{1b}"), "a\nb\\x1b");
    }
}
