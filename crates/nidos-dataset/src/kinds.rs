//! File kinds: files of one suffix, extension and datatype (so one modality) are of one
//! kind. A selector that reads only those names ([`KIND_NAMES`], e.g. `suffix == "bold"`,
//! `match(extension, "\.nii(\.gz)?$")`) has one value per kind, so it needs evaluating
//! once per kind rather than once per file; [`KindMemo`] keeps those values.

use std::sync::OnceLock;

use crate::entry::FileEntry;

/// The context names whose values a file's kind decides.
pub const KIND_NAMES: &[&str] = &["suffix", "extension", "datatype", "modality"];

/// More kinds than this (names of a dataset gone astray) and [`KindMemo`] keeps nothing:
/// each kind's values would cost more than they save.
pub const MAX_KINDS: usize = 1024;

/// Each file's kind number, numbered in order of first appearance.
#[derive(Debug, Default)]
pub(crate) struct Kinds {
    of_file: Vec<u32>,
    count: usize,
}

impl Kinds {
    /// The kinds of `files` (whose datatypes are set).
    pub(crate) fn of(files: &[FileEntry]) -> Kinds {
        type Key<'a> = (Option<&'a str>, &'a str, Option<&'a str>);
        fn key(f: &FileEntry) -> Key<'_> {
            (
                f.name.suffix.as_deref(),
                f.name.extension.as_str(),
                f.datatype.as_deref(),
            )
        }
        // Neighbours in path order are often of one kind: a file of the previous file's
        // kind takes its number without a look-up.
        let mut numbers: foldhash::HashMap<Key<'_>, u32> = foldhash::HashMap::default();
        let mut last: Option<(Key<'_>, u32)> = None;
        let of_file = files
            .iter()
            .map(|f| {
                let k = key(f);
                if let Some((lk, n)) = last {
                    if lk == k {
                        return n;
                    }
                }
                let next = u32::try_from(numbers.len()).unwrap_or(u32::MAX);
                let n = *numbers.entry(k).or_insert(next);
                last = Some((k, n));
                n
            })
            .collect();
        Kinds {
            of_file,
            count: numbers.len(),
        }
    }

    /// The kind of file `idx`.
    pub(crate) fn of_file(&self, idx: usize) -> Option<u32> {
        self.of_file.get(idx).copied()
    }

    /// How many kinds there are.
    pub(crate) fn count(&self) -> usize {
        self.count
    }
}

/// Values of selectors that read only [`KIND_NAMES`], one per (kind, variant, selector
/// number), each computed by the first file that needs it. A variant tells apart views of
/// one kind that answer those names differently (the rules' view of a file blanks the
/// suffix or extension of some files). A kind's table is made when first used.
pub struct KindMemo {
    variants: usize,
    slots: usize,
    tables: Vec<OnceLock<Box<[OnceLock<bool>]>>>,
}

impl KindMemo {
    /// A memo for `kinds` kinds of `variants` variants each, with `slots` selectors; an
    /// empty one (keeping nothing) past [`MAX_KINDS`] kinds.
    pub fn new(kinds: usize, variants: usize, slots: usize) -> KindMemo {
        let tables = if kinds <= MAX_KINDS {
            (0..kinds * variants).map(|_| OnceLock::new()).collect()
        } else {
            Vec::new()
        };
        KindMemo {
            variants,
            slots,
            tables,
        }
    }

    /// The value of selector `slot` for files of `kind` seen as `variant`: the one kept,
    /// else `eval()`'s, kept for the next file. Without a table for it (unknown kind,
    /// too many kinds, a number out of range) `eval()` alone.
    pub fn get_or(
        &self,
        kind: u32,
        variant: usize,
        slot: usize,
        eval: impl FnOnce() -> bool,
    ) -> bool {
        let at = (kind as usize)
            .checked_mul(self.variants)
            .and_then(|k| k.checked_add(variant));
        let table = match at.and_then(|at| self.tables.get(at)) {
            Some(t) if variant < self.variants && slot < self.slots => t,
            _ => return eval(),
        };
        let cells = table.get_or_init(|| (0..self.slots).map(|_| OnceLock::new()).collect());
        match cells.get(slot) {
            Some(cell) => *cell.get_or_init(eval),
            None => eval(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, datatype: Option<&str>) -> FileEntry {
        FileEntry {
            datatype: datatype.map(str::to_string),
            ..FileEntry::at(path)
        }
    }

    /// Files share a kind exactly when suffix, extension and datatype are all equal.
    #[test]
    fn kinds_follow_suffix_extension_and_datatype() {
        let files = [
            entry("/sub-01/anat/sub-01_T1w.nii.gz", Some("anat")),
            entry("/sub-01/anat/sub-01_T1w.json", Some("anat")),
            entry("/sub-02/anat/sub-02_T1w.nii.gz", Some("anat")),
            entry("/sub-02/func/sub-02_T1w.nii.gz", Some("func")),
            entry("/sub-02/anat/sub-02_T2w.nii.gz", Some("anat")),
            entry("/README", None),
            entry("/sub-01/README", None),
            entry("/sub-01/anat/sub-01_T1w.json", Some("anat")),
        ];
        let kinds = Kinds::of(&files);
        let k: Vec<u32> = (0..files.len())
            .map(|i| kinds.of_file(i).unwrap())
            .collect();
        assert_eq!(k, [0, 1, 0, 2, 3, 4, 4, 1]);
        assert_eq!(kinds.count(), 5);
        assert_eq!(kinds.of_file(files.len()), None);
    }

    /// A value is computed once per (kind, variant, slot) and then served; out of range
    /// or past the kind limit, each call computes.
    #[test]
    fn memo_keeps_one_value_per_kind_variant_and_slot() {
        let memo = KindMemo::new(2, 2, 3);
        let calls = std::cell::Cell::new(0);
        let eval = |v: bool| {
            calls.set(calls.get() + 1);
            v
        };
        assert!(memo.get_or(1, 1, 2, || eval(true)));
        assert!(memo.get_or(1, 1, 2, || eval(false)));
        assert!(!memo.get_or(1, 0, 2, || eval(false)));
        assert!(!memo.get_or(0, 1, 2, || eval(false)));
        assert_eq!(calls.get(), 3);
        for (kind, variant, slot) in [(2, 0, 0), (0, 2, 0), (0, 0, 3), (u32::MAX, 1, 0)] {
            assert!(memo.get_or(kind, variant, slot, || eval(true)));
            assert!(!memo.get_or(kind, variant, slot, || eval(false)));
        }
        assert_eq!(calls.get(), 11);
        let none = KindMemo::new(MAX_KINDS + 1, 1, 1);
        assert!(none.get_or(0, 0, 0, || eval(true)));
        assert!(!none.get_or(0, 0, 0, || eval(false)));
    }
}
