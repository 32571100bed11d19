//! Unified diffs of planned edits, for people to read before `--apply`.

use std::fmt::Write;

use crate::plan::FileEdit;

/// A name (or any one-line text) for a terminal: control characters (line breaks,
/// carriage returns, escape sequences, C1 controls) and the backslash are written as
/// escapes (`\n`, `\r`, `\t`, `\x1b`, `\u{9b}`, `\\`), so a crafted file name can neither
/// forge lines of the output nor reach the terminal as a command.
pub fn escape_name(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Text of a file for display: invalid UTF-8 replaced, and the characters a terminal
/// would not show made visible (a carriage return as `␍`, a byte-order mark as
/// `<BOM>`, other control characters but tab and line feed as escapes), so a change of
/// line ends or encoding shows in the diff and the content cannot drive the terminal.
fn visible(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{feff}' => out.push_str("<BOM>"),
            '\r' => out.push('␍'),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push_str(&escape_name(&c.to_string())),
            c => out.push(c),
        }
    }
    out
}

/// The unified diff of one edit, with `a/…` and `b/…` headers (`/dev/null` for a new
/// file); the path is escaped ([`escape_name`]).
pub fn unified_diff(edit: &FileEdit) -> String {
    let old = edit.before.as_deref().map(visible).unwrap_or_default();
    let new = visible(&edit.after);
    let rel = escape_name(edit.path.trim_start_matches('/'));
    let a = match edit.before {
        Some(_) => format!("a/{rel}"),
        None => "/dev/null".to_string(),
    };
    let b = format!("b/{rel}");
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cannot_forge_lines_or_drive_the_terminal() {
        assert_eq!(
            escape_name("a\n+++ b/x\r\u{1b}[2J\u{9b}\\.json"),
            "a\\n+++ b/x\\r\\x1b[2J\\u{9b}\\\\.json"
        );
        assert_eq!(escape_name("sub-01_T1w.json"), "sub-01_T1w.json");
    }
}
