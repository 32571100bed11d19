//! The names an expression calls as functions, read from its source text (for the
//! warning about unknown functions when the expression does not parse).

/// Names called as functions in an expression (`name(`), outside string literals and
/// not after a `.`.
pub fn called_functions(src: &str) -> Vec<String> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut prev_sig: u8 = b' ';
    while i < b.len() {
        let c = b[i];
        if c == b'"' || c == b'\'' {
            let q = c;
            i += 1;
            while i < b.len() && b[i] != q {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            prev_sig = q;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let mut j = i;
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            if j < b.len() && b[j] == b'(' && prev_sig != b'.' {
                let name = &src[start..i];
                if !out.iter().any(|n: &String| n == name) {
                    out.push(name.to_owned());
                }
            }
            prev_sig = b'a';
            continue;
        }
        if !c.is_ascii_whitespace() {
            prev_sig = c;
        }
        i += 1;
    }
    out
}
