//! The names an expression calls as functions, read from its source text (for the
//! warning about unknown functions when the expression does not parse).

use nidos_expr::scan::{scan, Place};

/// Names called as functions in an expression (`name(`), outside string literals and
/// not after a `.`.
pub fn called_functions(src: &str) -> Vec<String> {
    calls_at(src).into_iter().map(|(name, _)| name).collect()
}

/// The byte offset in `src` of the first call of the function `name`.
pub(crate) fn call_offset(src: &str, name: &str) -> Option<usize> {
    calls_at(src)
        .into_iter()
        .find_map(|(n, at)| (n == name).then_some(at))
}

/// [`called_functions`], each with the byte offset of its first call.
fn calls_at(src: &str) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    // The last significant character (a quote stands for its whole string literal).
    let mut prev_sig = ' ';
    // The last identifier (start, end) with the significant character before it, until
    // the next significant character says whether it is called.
    let mut pending: Option<(usize, usize, char)> = None;
    let mut growing = false;
    for (i, c, place) in scan(src) {
        let code = place == Place::Code;
        if growing {
            if code && (c.is_ascii_alphanumeric() || c == '_') {
                if let Some(p) = pending.as_mut() {
                    p.1 = i + c.len_utf8();
                }
                continue;
            }
            growing = false;
        }
        if code && c.is_ascii_whitespace() {
            continue;
        }
        if let Some((start, end, before)) = pending.take() {
            if code && c == '(' && before != '.' {
                let name = &src[start..end];
                if !out.iter().any(|(n, _)| n == name) {
                    out.push((name.to_owned(), start));
                }
            }
        }
        match place {
            Place::Inside => {}
            Place::Open | Place::Close => prev_sig = c,
            Place::Code if c.is_ascii_alphabetic() || c == '_' => {
                pending = Some((i, i + c.len_utf8(), prev_sig));
                prev_sig = 'a';
                growing = true;
            }
            Place::Code => prev_sig = c,
        }
    }
    out
}
