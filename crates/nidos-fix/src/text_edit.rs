//! Byte-level edits of text files: a byte-order mark, line ends, and TSV cells.

pub(crate) const UTF8_BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// The text without its leading UTF-8 byte-order marks (all of them: a file saved
/// twice by a careless editor has two), if it had any.
pub(crate) fn remove_bom(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut rest = bytes.strip_prefix(UTF8_BOM)?;
    while let Some(r) = rest.strip_prefix(UTF8_BOM) {
        rest = r;
    }
    Some(rest.to_vec())
}

/// CRLF line ends become LF, empty lines at the end are dropped and the last line ends
/// with LF. `None` when the text is already so (or empty).
pub(crate) fn normalize_lines(bytes: &[u8]) -> Option<Vec<u8>> {
    if bytes.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    while out.last() == Some(&b'\n') {
        out.pop();
    }
    if out.is_empty() {
        return None;
    }
    out.push(b'\n');
    (out != bytes).then_some(out)
}

/// In a TSV text, cells of the column headed `column` that equal `from` become `to`.
/// `Ok(None)`: no such cell. `Err`: the table cannot be edited (not UTF-8).
pub(crate) fn replace_cells(
    bytes: &[u8],
    column: &str,
    from: &str,
    to: &str,
) -> Result<Option<(Vec<u8>, usize)>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "the table is not UTF-8".to_string())?;
    let mut lines = text.split_inclusive('\n');
    let Some(header) = lines.next() else {
        return Ok(None);
    };
    let header_cells: Vec<&str> = strip_end(header)
        .0
        .trim_start_matches('\u{feff}')
        .split('\t')
        .collect();
    let Some(col) = header_cells.iter().position(|c| *c == column) else {
        return Ok(None);
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(header);
    let mut changed = 0;
    for line in lines {
        let (body, end) = strip_end(line);
        let mut cells: Vec<&str> = body.split('\t').collect();
        if cells.get(col) == Some(&from) {
            cells[col] = to;
            changed += 1;
        }
        out.push_str(&cells.join("\t"));
        out.push_str(end);
    }
    Ok((changed > 0).then(|| (out.into_bytes(), changed)))
}

/// A line without and with its line end.
fn strip_end(line: &str) -> (&str, &str) {
    let body = line
        .strip_suffix("\r\n")
        .or_else(|| line.strip_suffix('\n'))
        .unwrap_or(line);
    (body, &line[body.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_order_mark_goes_at_once() {
        let two = [UTF8_BOM, UTF8_BOM, b"{}"].concat();
        assert_eq!(remove_bom(&two).as_deref(), Some(&b"{}"[..]));
        assert_eq!(remove_bom(b"{}"), None);
    }

    #[test]
    fn line_ends() {
        let n = |s: &str| normalize_lines(s.as_bytes()).map(|b| String::from_utf8(b).unwrap());
        assert_eq!(n("a\tb\r\n1\t2\r\n").as_deref(), Some("a\tb\n1\t2\n"));
        assert_eq!(n("a\n1\n\n\n").as_deref(), Some("a\n1\n"));
        assert_eq!(n("a\n1").as_deref(), Some("a\n1\n"));
        assert_eq!(n("a\n1\n"), None);
        assert_eq!(n(""), None);
        // A lone carriage return is a cell's content, not a line end.
        assert_eq!(n("a\rb\n"), None);
    }

    #[test]
    fn cells() {
        let t = "participant_id\tage\r\nsub-01\t89+\r\nsub-02\t30\r\n";
        let (out, n) = replace_cells(t.as_bytes(), "age", "89+", "89")
            .unwrap()
            .unwrap();
        assert_eq!(n, 1);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "participant_id\tage\r\nsub-01\t89\r\nsub-02\t30\r\n"
        );
        assert!(replace_cells(b"a\tb\n1\t2\n", "age", "89+", "89")
            .unwrap()
            .is_none());
    }
}
