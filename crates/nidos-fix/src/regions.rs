//! The byte regions a change replaces: for reports that carry fixes as replacements
//! (SARIF's `deletedRegion` and `insertedContent`), each region as small as the change
//! itself, however large the file.

use nidos_validate::emit::Replacement;
use similar::{DiffOp, TextDiff};

/// The replacements turning `before` into `after`, in order, none overlapping: the runs
/// of lines that differ, each narrowed to the bytes that differ (cut at character
/// boundaries). `None` when either is not UTF-8 text.
pub fn replacements(before: &[u8], after: &[u8]) -> Option<Vec<Replacement>> {
    let (old, new) = (
        std::str::from_utf8(before).ok()?,
        std::str::from_utf8(after).ok()?,
    );
    let diff = TextDiff::configure()
        .timeout(std::time::Duration::from_millis(500))
        .diff_lines(old, new);
    let old_starts = line_starts(old);
    let new_starts = line_starts(new);
    let mut out = Vec::new();
    // Consecutive differing operations form one run.
    let mut run: Option<(usize, usize, usize, usize)> = None;
    let mut flush = |run: &mut Option<(usize, usize, usize, usize)>| {
        if let Some((o0, o1, n0, n1)) = run.take() {
            let from = &old[old_starts[o0]..old_starts[o1]];
            let to = &new[new_starts[n0]..new_starts[n1]];
            out.push(narrowed(old_starts[o0], from, to));
        }
    };
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { .. } => flush(&mut run),
            _ => {
                let (o, n) = (op.old_range(), op.new_range());
                run = Some(match run {
                    Some((o0, _, n0, _)) => (o0, o.end, n0, n.end),
                    None => (o.start, o.end, n.start, n.end),
                });
            }
        }
    }
    flush(&mut run);
    Some(out)
}

/// The byte offset of each line's start, and the text's length last (line `k` spans
/// `starts[k]..starts[k + 1]`, its line end included).
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(
        text.bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'\n')
            .map(|(n, _)| n + 1)
            .filter(|n| *n < text.len()),
    );
    starts.push(text.len());
    starts
}

/// `from` (at `offset` in the original) replaced by `to`, without their common prefix
/// and suffix.
fn narrowed(offset: usize, from: &str, to: &str) -> Replacement {
    let mut prefix = from
        .bytes()
        .zip(to.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !(from.is_char_boundary(prefix) && to.is_char_boundary(prefix)) {
        prefix -= 1;
    }
    let room = from.len().min(to.len()) - prefix;
    let mut suffix = from
        .bytes()
        .rev()
        .zip(to.bytes().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    while !(from.is_char_boundary(from.len() - suffix) && to.is_char_boundary(to.len() - suffix)) {
        suffix -= 1;
    }
    Replacement {
        offset: offset + prefix,
        length: from.len() - suffix - prefix,
        text: to[prefix..to.len() - suffix].to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies replacements (in order, offsets into the original).
    fn apply(before: &str, reps: &[Replacement]) -> String {
        let mut out = String::new();
        let mut at = 0;
        for r in reps {
            out.push_str(&before[at..r.offset]);
            out.push_str(&r.text);
            at = r.offset + r.length;
        }
        out.push_str(&before[at..]);
        out
    }

    #[test]
    fn a_word_changed_in_a_large_file_is_a_word() {
        let filler: String = (0..200).map(|n| format!("  \"Key{n}\": {n},\n")).collect();
        let before = format!("{{\n{filler}  \"Units\": \"mm\"\n}}\n");
        let after = before.replace("\"mm\"", "\"cm\"");
        let reps = replacements(before.as_bytes(), after.as_bytes()).unwrap();
        assert_eq!(reps.len(), 1);
        assert_eq!(reps[0].length, 1);
        assert_eq!(reps[0].text, "c");
        assert_eq!(apply(&before, &reps), after);
    }

    #[test]
    fn separate_changes_are_separate_regions() {
        let before = "a\nb\nc\nd\ne\nf\ng\n";
        let after = "a\nB\nc\nd\ne\nF!\ng\nh\n";
        let reps = replacements(before.as_bytes(), after.as_bytes()).unwrap();
        assert_eq!(reps.len(), 3);
        assert_eq!(apply(before, &reps), after);
    }

    #[test]
    fn new_files_line_ends_and_multibyte_text_round_trip() {
        for (before, after) in [
            ("", "{\n  \"Name\": \"x\"\n}\n"),
            ("a\r\nb\r\n", "a\nb\n"),
            ("x: é\n", "x: è\n"),
            ("no final line end", "no final line end\n"),
            ("\u{feff}{}\n", "{}\n"),
        ] {
            let reps = replacements(before.as_bytes(), after.as_bytes()).unwrap();
            assert_eq!(apply(before, &reps), after, "{before:?} → {after:?}");
        }
        assert!(replacements(b"\xff", b"x").is_none());
    }
}
