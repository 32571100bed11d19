//! The known name nearest to a mistyped one, for "did you mean" hints.

/// The candidate nearest to `word` by edit distance (ignoring ASCII case), when it is
/// near enough to be a plausible typo: at most a third of the word's length, at
/// least two edits (a swap of two letters). Ties go to the first candidate.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    let limit = (w.chars().count() / 3).max(2);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = distance(&w, &c.to_ascii_lowercase());
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = if ca == *cb {
                diag
            } else {
                1 + diag.min(up).min(row[j])
            };
            diag = up;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_known_name() {
        let known = ["bold", "T1w", "events", "sbref"];
        assert_eq!(closest("bld", known), Some("bold"));
        assert_eq!(closest("t1w", known), Some("T1w"));
        assert_eq!(closest("anta", ["anat", "func"]), Some("anat"));
        assert_eq!(closest("zzzzzz", known), None);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
