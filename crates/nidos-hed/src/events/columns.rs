//! A table read by its columns' parts, where the sidecar splices nothing: each distinct cell
//! of a column becomes one part (its contribution, checked once as a piece), and a row is
//! the list of its columns' parts. Part ids come from the reader's codes of a column, a part
//! per change of cell, or a map from text to part; [`mark_risky`] finds the parts a row must
//! be checked as a whole for.

use std::sync::Arc;

use foldhash::{HashMap, HashSet};

use super::assemble::{contribution, Contribution};
use super::pieces::{piece_of, Piece, MEMO_LIMIT};
use super::sidecar::ColumnHed;
use super::{is_na, next_id, EventsCheck, EventsTable, TableParts};

/// A column of the table: its name and its index in the header.
#[derive(Clone, Copy)]
pub(super) struct Column<'h> {
    pub(super) name: &'h str,
    pub(super) index: usize,
}

/// What the TSV reader says of a column's cells (see
/// `nidos_dataset::loaders::tsv::Table::codes`).
#[derive(Clone, Copy)]
pub(super) enum Cells<'c> {
    /// Each cell's code: the rank of its text in order of first appearance.
    Coded(&'c [u32]),
    /// Not coded: at least half of the cells are distinct.
    MostlyDistinct,
    /// The caller gave no codes.
    Unknown,
}

/// The part id of each of the `n_rows` cells of `column`, going down the column: each
/// distinct cell is given the next id the first time it is met, and its part is added to
/// `parts` (ids in the order of first appearance). A value column's parts come from the
/// dataset's cell map of its template when it has them, looked up for all the column's new
/// cells under one lock, and the parts made here are added to it under one more.
pub(super) fn column_ids<'t>(
    check: &EventsCheck<'_>,
    table: &EventsTable<'_, 't>,
    column: Column<'_>,
    cells: Cells<'_>,
    parts: &mut TableParts,
) -> Vec<u32> {
    let EventsCheck {
        sidecar, shared, ..
    } = *check;
    let EventsTable { n_rows, cell, .. } = *table;
    let base = next_id(&parts.infos);
    let mut at = |r: usize| cell(r, column.index).unwrap_or_default();
    let coded = match cells {
        Cells::Coded(codes) => ids_from_codes(codes, n_rows, base, &mut at),
        _ => None,
    };
    let (ids, new_cells) = match (coded, cells) {
        (Some(found), _) => found,
        (None, Cells::MostlyDistinct) => ids_by_row(n_rows, base, &mut at),
        (None, _) => ids_by_text(n_rows, base, &mut at),
    };
    let template = match sidecar.column(column.name) {
        Some(ColumnHed::Value(t)) if column.name != "HED" => Some(t.as_str()),
        _ => None,
    };
    let values = template.zip(shared).and_then(|(t, sh)| sh.value_parts(t));
    let known = values
        .as_deref()
        .map(|vp| vp.get_many(&new_cells))
        .unwrap_or_default();
    let mut made: Vec<(&str, Option<Arc<Piece>>)> = Vec::new();
    // Each piece found is moved, not copied, into the table's registry (a copy would touch
    // its reference count, which the other threads' tables touch too).
    let mut known = known.into_iter();
    for &v in &new_cells {
        let hit = known.next().flatten().filter(|_| !is_na(v));
        let mut part = match hit {
            Some(piece) => Some(Part {
                missing: false,
                piece,
            }),
            None => {
                let part = column_part(check, column.name, v, &mut parts.memo);
                if part.as_ref().is_some_and(|p| p.missing) {
                    // Cells come in the order of the rows that first have them.
                    parts.missing.add(column.name, v);
                }
                // A value column's part is never a missing level: it is its piece alone.
                if let Some(p) = part.as_ref().filter(|p| !p.missing) {
                    if values.is_some() && !is_na(v) {
                        made.push((v, p.piece.clone()));
                    }
                }
                part
            }
        };
        parts
            .infos
            .push(PartInfo::of(part.as_mut(), &mut parts.registry));
    }
    if let Some(vp) = values.as_deref() {
        vp.put_many(made);
    }
    ids
}

/// The part of column `name` for cell `value`; `None` when its text has curly braces (the
/// row is then assembled in full).
fn column_part(
    check: &EventsCheck<'_>,
    name: &str,
    value: &str,
    memo: &mut HashMap<String, Arc<Piece>>,
) -> Option<Part> {
    let EventsCheck {
        checker,
        sidecar,
        shared,
    } = *check;
    let text = match contribution(sidecar, name, value) {
        Contribution::Nothing => {
            return Some(Part {
                missing: false,
                piece: None,
            })
        }
        Contribution::MissingLevel => {
            return Some(Part {
                missing: true,
                piece: None,
            })
        }
        Contribution::Text(text) => text,
    };
    if name != "HED" && text.contains('{') {
        return None;
    }
    let piece = (!text.trim().is_empty()).then(|| match shared {
        // A table turns each (column, cell) into a part once: the dataset's map is enough.
        Some(sh) => sh.get_or_check(checker, text),
        None => piece_of(checker, &text, memo, shared),
    });
    Some(Part {
        missing: false,
        piece,
    })
}

/// How a column's cells are read: the text of row `r`.
type CellAt<'a, 't> = &'a mut dyn FnMut(usize) -> &'t str;

/// A column's part ids, one per row, and the cells met first (the `i`-th has id
/// `base + i`).
type ColumnIds<'t> = (Vec<u32>, Vec<&'t str>);

/// A column's part ids from the reader's codes of its cells (see
/// `nidos_dataset::loaders::tsv::Table::codes`: a code is the rank of the cell's text in
/// order of first appearance, which is the order ids are given in), with the cells met
/// first; `None` when the codes do not follow that order.
fn ids_from_codes<'t>(
    codes: &[u32],
    n_rows: usize,
    base: u32,
    at: CellAt<'_, 't>,
) -> Option<ColumnIds<'t>> {
    let codes = codes.get(..n_rows).filter(|c| c.len() == n_rows)?;
    let mut new_cells: Vec<&'t str> = Vec::new();
    let mut ids = Vec::with_capacity(n_rows);
    for (r, &code) in codes.iter().enumerate() {
        let seen = next_id(&new_cells);
        if code == seen {
            new_cells.push(at(r));
        } else if code > seen {
            return None;
        }
        ids.push(base.saturating_add(code));
    }
    Some((ids, new_cells))
}

/// A column's part ids when most of its cells are distinct: each cell that differs from
/// the one above is a new part (finding the few repeats further apart would cost more, a
/// hash of every cell, than the parts they save), with the cells met first.
fn ids_by_row<'t>(n_rows: usize, base: u32, at: CellAt<'_, 't>) -> ColumnIds<'t> {
    let mut ids = Vec::with_capacity(n_rows);
    let mut new_cells: Vec<&'t str> = Vec::with_capacity(n_rows);
    let mut last: Option<&'t str> = None;
    for r in 0..n_rows {
        let v = at(r);
        if !last.is_some_and(|l| same_cell(l, v)) {
            new_cells.push(v);
        }
        last = Some(v);
        ids.push(base.saturating_add(next_id(&new_cells).saturating_sub(1)));
    }
    (ids, new_cells)
}

/// A column's part ids found by the text of its cells, with the cells met first.
fn ids_by_text<'t>(n_rows: usize, base: u32, at: CellAt<'_, 't>) -> ColumnIds<'t> {
    let mut ids = Vec::with_capacity(n_rows);
    let mut index: HashMap<&'t str, u32> = HashMap::default();
    // The cells in the order they were first met: cell `i` has id `base + i`.
    let mut new_cells: Vec<&'t str> = Vec::new();
    let mut last: Option<(&'t str, u32)> = None;
    for r in 0..n_rows {
        let v = at(r);
        let id = match last {
            Some((lv, id)) if same_cell(lv, v) => id,
            _ => match index.get(v) {
                Some(&id) => id,
                None => {
                    let id = base.saturating_add(next_id(&new_cells));
                    new_cells.push(v);
                    if index.len() < MEMO_LIMIT {
                        index.insert(v, id);
                    }
                    id
                }
            },
        };
        last = Some((v, id));
        ids.push(id);
    }
    (ids, new_cells)
}

/// Whether two cells hold the same text (cells equal to the one above share it).
fn same_cell(a: &str, b: &str) -> bool {
    a.len() == b.len() && (std::ptr::eq(a.as_ptr(), b.as_ptr()) || a == b)
}

/// The registry id of a part without a piece.
pub(super) const NO_PIECE: u32 = u32::MAX;

/// What a row needs of a part, in one small entry: its piece's id in the table's registry
/// ([`NO_PIECE`] without one) and what the part and its piece hold.
#[derive(Clone, Copy)]
pub(super) struct PartInfo {
    pub(super) piece: u32,
    pub(super) flags: u8,
}

impl PartInfo {
    /// The row must be assembled in full (the part's text has curly braces).
    pub(super) const FULL: u8 = 1;
    /// The piece failed its checks.
    pub(super) const FAILED: u8 = 4;
    /// The piece has issues.
    pub(super) const ISSUES: u8 = 8;
    /// The piece has temporal groups.
    pub(super) const TIMED: u8 = 16;
    /// The piece may repeat a key or a unique tag of another column's piece (see
    /// [`mark_risky`]): a row needs its check as a whole only with two such parts.
    pub(super) const RISKY: u8 = 32;
    pub(super) const GENERAL: PartInfo = PartInfo {
        piece: NO_PIECE,
        flags: PartInfo::FULL,
    };

    /// The entry of `part`, its piece moved to `registry`.
    fn of(part: Option<&mut Part>, registry: &mut Vec<Arc<Piece>>) -> PartInfo {
        let Some(part) = part else {
            return PartInfo::GENERAL;
        };
        let mut flags = 0;
        let mut piece = NO_PIECE;
        if let Some(p) = part.piece.take() {
            if p.failed {
                flags |= PartInfo::FAILED;
            }
            if !p.issues.is_empty() {
                flags |= PartInfo::ISSUES;
            }
            if !p.timed.is_empty() {
                flags |= PartInfo::TIMED;
            }
            piece = next_id(registry);
            registry.push(p);
        }
        PartInfo { piece, flags }
    }
}

/// What one column gives a row for one cell, when the sidecar splices nothing: whether the
/// cell is a level without annotation, and the checked piece (until [`PartInfo::of`] moves
/// it to the table's registry).
pub(super) struct Part {
    missing: bool,
    piece: Option<Arc<Piece>>,
}

/// Marks the parts that may give a row a repeated expression or unique tag ([`PartInfo::RISKY`]):
/// a row has one part per column, and each piece's keys are distinct already, so a row repeats
/// only if two pieces of different columns share a key (and then its hash) or both have unique
/// tags. `starts` holds where each column's part ids start (they run to the next column's).
pub(super) fn mark_risky(starts: &[u32], infos: &mut [PartInfo], registry: &[Arc<Piece>]) {
    let piece = |info: &PartInfo| {
        (info.piece != NO_PIECE)
            .then(|| registry.get(info.piece as usize))
            .flatten()
    };
    let end = next_id(infos);
    // The column that first has each key hash; hashes that another column has too.
    let hashes: usize = infos
        .iter()
        .filter_map(&piece)
        .map(|p| p.top_hashes.len())
        .sum();
    let mut owner: HashMap<u64, usize> =
        HashMap::with_capacity_and_hasher(hashes, Default::default());
    let mut shared: HashSet<u64> = HashSet::default();
    let mut unique_columns = 0;
    for (k, &start) in starts.iter().enumerate() {
        let stop = starts.get(k + 1).copied().unwrap_or(end);
        let mut has_unique = false;
        for info in infos.get(start as usize..stop as usize).unwrap_or_default() {
            let Some(p) = piece(info) else {
                continue;
            };
            has_unique |= !p.unique.is_empty();
            for &h in &p.top_hashes {
                match owner.entry(h) {
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(k);
                    }
                    std::collections::hash_map::Entry::Occupied(e) => {
                        if *e.get() != k {
                            shared.insert(h);
                        }
                    }
                }
            }
        }
        unique_columns += usize::from(has_unique);
    }
    if shared.is_empty() && unique_columns < 2 {
        return;
    }
    for info in infos.iter_mut() {
        let risky = piece(info).is_some_and(|p| {
            (unique_columns > 1 && !p.unique.is_empty())
                || p.top_hashes.iter().any(|h| shared.contains(h))
        });
        if risky {
            info.flags |= PartInfo::RISKY;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CELLS: [&str; 6] = ["a", "b", "a", "c", "b", "b"];

    /// The three ways of giving a column's part ids agree where they should: by text and
    /// from the reader's codes, each distinct cell once in order of first appearance; by
    /// row, a part per change of cell.
    #[test]
    fn part_ids_follow_first_appearance() {
        let mut at = |r: usize| CELLS[r];
        let by_text = ids_by_text(CELLS.len(), 10, &mut at);
        assert_eq!(by_text, (vec![10, 11, 10, 12, 11, 11], vec!["a", "b", "c"]));
        let codes = [0, 1, 0, 2, 1, 1];
        assert_eq!(
            ids_from_codes(&codes, CELLS.len(), 10, &mut at),
            Some(by_text)
        );
        assert_eq!(
            ids_by_row(CELLS.len(), 10, &mut at),
            (vec![10, 11, 12, 13, 14, 14], vec!["a", "b", "a", "c", "b"])
        );
    }

    /// Codes that skip a rank, or fewer codes than rows, are not trusted.
    #[test]
    fn codes_out_of_order_are_refused() {
        let mut at = |r: usize| CELLS[r];
        assert_eq!(ids_from_codes(&[1, 0, 1, 2, 0, 0], 6, 0, &mut at), None);
        assert_eq!(ids_from_codes(&[0, 1, 0], 6, 0, &mut at), None);
    }
}
