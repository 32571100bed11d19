//! Text helpers shared by the line-oriented loaders.

/// The UTF-8 byte-order mark.
pub(crate) const UTF8_BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// 1-based line and column (in characters, counting invalid bytes as one each) of a byte offset.
pub(crate) fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let head = bytes.get(..offset).unwrap_or(bytes);
    let line = head.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = head.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    let tail = head.get(line_start..).unwrap_or(&[]);
    // Count characters: every byte that is not a UTF-8 continuation byte starts one.
    let column = tail.iter().filter(|&&b| (b & 0xC0) != 0x80).count() + 1;
    (line, column)
}

/// Names the encoding of text that is not UTF-8, when it can be recognised: UTF-16/32 by their
/// byte-order marks or by the NUL bytes ASCII text has in them.
pub(crate) fn sniff_wide_encoding(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0xFF, 0xFE, 0, 0, ..] => Some("UTF-32LE"),
        [0, 0, 0xFE, 0xFF, ..] => Some("UTF-32BE"),
        [0xFF, 0xFE, ..] => Some("UTF-16LE"),
        [0xFE, 0xFF, ..] => Some("UTF-16BE"),
        [a, 0, b, 0, ..] if *a != 0 && *b != 0 => Some("UTF-16LE"),
        [0, a, 0, b, ..] if *a != 0 && *b != 0 => Some("UTF-16BE"),
        _ => None,
    }
}

/// Checks that `bytes` are UTF-8; on failure returns a message and the 1-based location of the
/// first offending byte.
pub(crate) fn check_utf8(bytes: &[u8]) -> Result<&str, (String, usize, usize)> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let at = e.valid_up_to();
            let (line, column) = line_col(bytes, at);
            let message = match sniff_wide_encoding(bytes) {
                Some(enc) => format!("the file appears to be {enc}; it must be UTF-8"),
                None => {
                    let b = bytes.get(at).copied().unwrap_or(0);
                    format!(
                        "invalid UTF-8 byte 0x{b:02X} (the file must be UTF-8, e.g. not Latin-1)"
                    )
                }
            };
            Err((message, line, column))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        assert_eq!(line_col(b"ab\ncd", 4), (2, 2));
        assert_eq!(line_col("é\nxé!".as_bytes(), 6), (2, 3));
        assert_eq!(line_col(b"", 0), (1, 1));
    }
}
