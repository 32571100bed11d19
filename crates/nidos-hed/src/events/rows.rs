//! The checks of one row as a whole: its pieces are each valid, but together they may
//! repeat an expression or a unique tag. A row assembled in full (the sidecar splices) is
//! checked here from its text.

use std::sync::Arc;

use foldhash::HashSet;

use super::assemble::assemble;
use super::pieces::{piece_of, Piece};
use super::{next_id, EventsCheck, TableParts};
use crate::issue::HedIssue;

/// What a row assembled in full (the sidecar splices) gives, remembered for rows with the same
/// cells in the HED columns: its pieces (ids in the table's registry), and its issues (their
/// line is set for each row).
pub(super) struct RowResult {
    pub(super) ids: Vec<u32>,
    pub(super) issues: Vec<HedIssue>,
    pub(super) failed: bool,
}

/// Assembles and checks one row (its issues have no line); its pieces are added to the
/// table's registry, the levels it uses without annotation to its missing levels.
pub(super) fn check_row(
    check: &EventsCheck<'_>,
    spliced: &HashSet<String>,
    header: &[String],
    row: &[&str],
    parts: &mut TableParts,
) -> RowResult {
    let texts = assemble(check.sidecar, spliced, header, row, &mut parts.missing);
    let registry = &mut parts.registry;
    let ids: Vec<u32> = texts
        .iter()
        .map(|text| {
            let id = next_id(registry);
            registry.push(piece_of(check.checker, text, &mut parts.memo, check.shared));
            id
        })
        .collect();
    let mut issues: Vec<HedIssue> = Vec::new();
    let mut failed = false;
    for p in ids.iter().filter_map(|&id| registry.get(id as usize)) {
        failed |= p.failed;
        issues.extend(p.issues.iter().cloned());
    }
    if !failed && ids.len() > 1 {
        failed = check_row_whole(&ids, registry, &mut issues);
    }
    RowResult {
        ids,
        issues,
        failed,
    }
}

/// Repeats and unique tags across the pieces of one row (ids in `registry`); true when
/// something was wrong.
pub(super) fn check_row_whole(
    ids: &[u32],
    registry: &[Arc<Piece>],
    issues: &mut Vec<HedIssue>,
) -> bool {
    if !may_repeat(ids, registry) {
        return false;
    }
    let mut keys: Seen<&str> = Seen::default();
    let mut uniques: Seen<usize> = Seen::default();
    let mut bad = false;
    for p in ids.iter().filter_map(|&id| registry.get(id as usize)) {
        for k in &p.top_keys {
            if !keys.insert(k.as_str()) {
                bad = true;
                issues.push(HedIssue::error(
                    "TAG_EXPRESSION_REPEATED",
                    format!("the expression \"{k}\" appears twice in the row's annotation"),
                ));
            }
        }
        let mut own: Seen<usize> = Seen::default();
        for (node, text) in &p.unique {
            if own.insert(*node) && !uniques.insert(*node) {
                bad = true;
                issues.push(HedIssue::error(
                    "TAG_NOT_UNIQUE",
                    format!("tag \"{text}\" may appear only once in an event"),
                ));
            }
        }
    }
    bad
}

/// Whether the pieces of a row may repeat an expression or a unique tag: false when no two
/// pieces have unique tags and all their top-level key hashes differ (each piece's keys are
/// distinct already), which is the common case and needs no string comparison.
fn may_repeat(ids: &[u32], registry: &[Arc<Piece>]) -> bool {
    // The row's key hashes go into a small open-addressing set on the stack (0 marks a free
    // slot, so each hash is stored with its low bit set: two hashes that differ only there
    // count as equal, which only sends the row to the full check). A row with more keys
    // than half the slots takes the full check.
    let mut slots = [0u64; 64];
    let mut keys = 0;
    let mut with_unique = 0;
    for p in ids.iter().filter_map(|&id| registry.get(id as usize)) {
        if !p.unique.is_empty() {
            with_unique += 1;
            if with_unique > 1 {
                return true;
            }
        }
        for &h in &p.top_hashes {
            keys += 1;
            if keys > 32 {
                return true;
            }
            let h = h | 1;
            let mut i = (h >> 58) as usize;
            loop {
                match slots.get(i).copied() {
                    Some(0) => {
                        slots[i] = h;
                        break;
                    }
                    Some(s) if s == h => return true,
                    Some(_) => i = (i + 1) % slots.len(),
                    None => return true,
                }
            }
        }
    }
    false
}

/// A set that stays a short list (no hashing, no allocation while empty) until it grows.
struct Seen<T> {
    few: Vec<T>,
    many: HashSet<T>,
}

impl<T> Default for Seen<T> {
    fn default() -> Self {
        Seen {
            few: Vec::new(),
            many: HashSet::default(),
        }
    }
}

impl<T: Eq + std::hash::Hash + Copy> Seen<T> {
    /// True when `x` was not in the set yet.
    fn insert(&mut self, x: T) -> bool {
        if self.many.is_empty() {
            if self.few.contains(&x) {
                return false;
            }
            if self.few.len() < 32 {
                self.few.push(x);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A piece with these key hashes (and a unique tag, with `unique`).
    fn piece_with(hashes: &[u64], unique: bool) -> Arc<Piece> {
        Arc::new(Piece {
            issues: Vec::new(),
            failed: false,
            top_keys: hashes.iter().map(|h| h.to_string()).collect(),
            unique: if unique {
                vec![(1, "Tag".to_string())]
            } else {
                Vec::new()
            },
            top_hashes: hashes.to_vec(),
            timed: Vec::new(),
        })
    }

    /// The pre-test of a row's repeats says "maybe" whenever two of its pieces share a key
    /// hash, two have unique tags or the row has more than 32 keys, and "no" for distinct
    /// hashes (here differing above the low bit), whatever slots they fall in.
    #[test]
    fn may_repeat_finds_shared_hashes() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state & !1
        };
        for round in 0..200 {
            let n_pieces = 1 + round % 6;
            let mut lists: Vec<Vec<u64>> = (0..n_pieces)
                .map(|p| (0..(round + p) % 7).map(|_| next()).collect())
                .collect();
            // Hashes in the same slot (same top bits), distinct: no repeat.
            if round % 5 == 0 {
                lists.push((0..4).map(|i| (0xfc00u64 << 48) | (i << 8)).collect());
            }
            let registry: Vec<Arc<Piece>> = lists.iter().map(|l| piece_with(l, false)).collect();
            let ids: Vec<u32> = (0..registry.len() as u32).collect();
            let keys: usize = lists.iter().map(Vec::len).sum();
            assert_eq!(may_repeat(&ids, &registry), keys > 32, "round {round}");
            // One hash of a later piece repeated from an earlier one: a repeat.
            if let (Some(first), Some(last)) = (lists.first(), lists.last()) {
                if lists.len() > 1 && !first.is_empty() && !last.is_empty() {
                    let mut copy = lists.clone();
                    let n = copy.len();
                    copy[n - 1][0] = first[0];
                    let registry: Vec<Arc<Piece>> =
                        copy.iter().map(|l| piece_with(l, false)).collect();
                    assert!(may_repeat(&ids, &registry), "round {round}");
                }
            }
        }
        let two_unique = vec![piece_with(&[2], true), piece_with(&[4], true)];
        assert!(may_repeat(&[0, 1], &two_unique));
        let one_unique = vec![piece_with(&[2], true), piece_with(&[4], false)];
        assert!(!may_repeat(&[0, 1], &one_unique));
    }
}
