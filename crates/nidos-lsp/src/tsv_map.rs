//! Where cells are in a TSV document: a table's lines are split at tabs into byte
//! ranges (the validator's reading of the table decides what the cells mean; this only
//! finds them again in the text).

/// The byte ranges of the cells of one line (`start` is the line's first byte).
pub fn cells(start: usize, line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = start;
    for cell in line.split('\t') {
        out.push((at, at + cell.len()));
        at += cell.len() + 1;
    }
    out
}

/// The index of the cell of `line` (starting at byte `start`) that byte `offset` is in.
pub fn cell_at(start: usize, line: &str, offset: usize) -> usize {
    line.get(..offset.saturating_sub(start).min(line.len()))
        .map(|s| s.matches('\t').count())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_found_between_tabs() {
        assert_eq!(cells(10, "a\tbc\t"), [(10, 11), (12, 14), (15, 15)]);
        assert_eq!(cell_at(10, "a\tbc\t", 13), 1);
        assert_eq!(cell_at(10, "a\tbc\t", 10), 0);
    }
}
