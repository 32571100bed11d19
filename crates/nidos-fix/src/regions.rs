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
    // Where each line starts, as the diff cut the texts (at `\n`, `\r\n` or `\r`).
    let old_starts = starts(diff.iter_old_slices());
    let new_starts = starts(diff.iter_new_slices());
    let mut out = Vec::new();
    // Consecutive differing operations form one run.
    let mut run: Option<(usize, usize, usize, usize)> = None;
    let mut flush = |run: &mut Option<(usize, usize, usize, usize)>| {
        if let Some((o0, o1, n0, n1)) = run.take() {
            let span =
                |starts: &[usize], a: usize, b: usize| Some((*starts.get(a)?, *starts.get(b)?));
            // The ranges always fall inside the slices; whole texts otherwise.
            let (from, to) = match (span(&old_starts, o0, o1), span(&new_starts, n0, n1)) {
                (Some(f), Some(t)) => (f, t),
                _ => ((0, old.len()), (0, new.len())),
            };
            out.push(narrowed(from.0, &old[from.0..from.1], &new[to.0..to.1]));
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
fn starts<'t>(lines: impl Iterator<Item = &'t str>) -> Vec<usize> {
    let mut at = 0;
    let mut out = vec![at];
    for l in lines {
        at += l.len();
        out.push(at);
    }
    out
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
            (
                "{\r  \"A\": 1,\r  \"B\": 2\r}\r",
                "{\r  \"A\": 1,\r  \"C\": 2\r}\r",
            ),
            ("x\ry\r\nz\n", "x\nY\r\nz\r"),
            ("x: é\n", "x: è\n"),
            ("no final line end", "no final line end\n"),
            ("\u{feff}{}\n", "{}\n"),
        ] {
            let reps = replacements(before.as_bytes(), after.as_bytes()).unwrap();
            assert_eq!(apply(before, &reps), after, "{before:?} → {after:?}");
        }
        assert!(replacements(b"\xff", b"x").is_none());
    }

    proptest::proptest! {
        /// Any two texts (line ends of every kind, multi-byte characters): the regions
        /// are in order, apart, and turn the one into the other.
        #[test]
        fn regions_turn_before_into_after(
            before in "(a|é|\"|\n|\r|\r\n| |[{}]){0,40}",
            after in "(a|é|\"|\n|\r|\r\n| |[{}]|b){0,40}",
        ) {
            let reps = replacements(before.as_bytes(), after.as_bytes()).unwrap();
            for w in reps.windows(2) {
                proptest::prop_assert!(w[0].offset + w[0].length <= w[1].offset);
            }
            proptest::prop_assert_eq!(apply(&before, &reps), after);
        }
    }
}
