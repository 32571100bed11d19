//! Unified diffs of planned edits, for people to read before `--apply`.

use crate::plan::FileEdit;

/// Text of a file for display: invalid UTF-8 replaced, and the characters a terminal
/// would not show made visible (a carriage return as `␍`, a byte-order mark as
/// `<BOM>`), so a change of line ends or encoding shows in the diff.
fn visible(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .replace('\u{feff}', "<BOM>")
        .replace('\r', "␍")
}

/// The unified diff of one edit, with `a/…` and `b/…` headers (`/dev/null` for a new
/// file).
pub fn unified_diff(edit: &FileEdit) -> String {
    let old = edit.before.as_deref().map(visible).unwrap_or_default();
    let new = visible(&edit.after);
    let rel = edit.path.trim_start_matches('/');
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
