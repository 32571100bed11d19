//! Sidecars and events tables. The one entry point for a table is [`check_events`]: it reads
//! each row's annotation from the sidecar's entries for its cells and its `HED` cell, checks
//! it, then checks the rows together. By job:
//!
//! - `sidecar.rs`: a sidecar's `HED` entries ([`SidecarHed`]) and their checks;
//! - `assemble.rs`: row assembly, which the checks and the `hed` context field share
//!   ([`assemble_rows`]);
//! - `columns.rs`: a table read by its columns' distinct cells (parts), where the sidecar
//!   splices nothing;
//! - `pieces.rs`: checked pieces of annotation, remembered per table and per dataset
//!   ([`SharedPieces`]);
//! - `rows.rs`: the checks of a row as a whole (repeats, unique tags);
//! - `temporal.rs`: the checks across rows (rows sharing an onset, `Onset`/`Offset`/`Inset`).
//!
//! This file walks the table, row by row, choosing for each row between its parts and its
//! full assembly, and holds the inputs' types.

use std::rc::Rc;
use std::sync::Arc;

use foldhash::HashMap;

use crate::check::Checker;
use crate::issue::HedIssue;

mod assemble;
mod columns;
mod pieces;
mod rows;
mod sidecar;
mod temporal;
#[cfg(test)]
pub(crate) mod tests;

pub use assemble::assemble_rows;
pub use pieces::SharedPieces;
pub use sidecar::{SidecarHed, SidecarIssue};

use assemble::MissingLevels;
use columns::{column_ids, mark_risky, Cells, Column, PartInfo, NO_PIECE};
use pieces::{Piece, MEMO_LIMIT};
use rows::{check_row, check_row_whole, RowResult};
use temporal::{check_across_rows, Event};

/// What a table's checks have made so far: the parts by id, the pieces its rows use, the
/// pieces by text, the levels without annotation.
#[derive(Default)]
struct TableParts {
    /// Per part, by id, what a row needs of it.
    infos: Vec<PartInfo>,
    /// The pieces the rows use, each listed once: a row's pieces are ids in this list.
    registry: Vec<Arc<Piece>>,
    /// The table's pieces by text.
    memo: HashMap<String, Arc<Piece>>,
    /// The levels of the table's columns without annotation.
    missing: MissingLevels,
}

/// What a table is checked with: the checker (schemas and definitions), the merged sidecar
/// of the table, and the pieces already checked for other tables of the dataset (`None` for
/// a table on its own).
#[derive(Clone, Copy)]
pub struct EventsCheck<'a> {
    pub checker: &'a Checker<'a>,
    pub sidecar: &'a SidecarHed,
    pub shared: Option<&'a SharedPieces>,
}

/// An events table as the checks and the row assembly read it.
#[derive(Clone, Copy)]
pub struct EventsTable<'a, 't> {
    /// The column names, in file order.
    pub header: &'a [String],
    /// How many rows are read.
    pub n_rows: usize,
    /// The cell at (row, column), rows counted from 0 below the header; `None` past the
    /// table's end.
    pub cell: &'a dyn Fn(usize, usize) -> Option<&'t str>,
    /// Per column, the reader's codes of its cells when it has them
    /// (`nidos_dataset::loaders::tsv::Table::codes`: a code is the rank of the cell's text
    /// in order of first appearance, `None` for a column of mostly distinct cells); empty
    /// when the caller has none.
    pub codes: &'a [Option<Vec<u32>>],
}

/// Whether a cell holds no value (empty or `n/a`).
fn is_na(cell: &str) -> bool {
    cell.is_empty() || cell == "n/a"
}

/// The id of the next entry of a table's list (ids are `u32`; a table never has that many).
fn next_id<T>(list: &[T]) -> u32 {
    u32::try_from(list.len()).unwrap_or(u32::MAX)
}

/// Checks an events table: each row assembled from the sidecar and its `HED` cell, then the
/// rows together. Each issue is handed to `sink` with its file line (header = 1; `None` for
/// an issue of the table as a whole) as it is found, borrowed: a table whose rows repeat one
/// issue copies nothing. Lines come in increasing order, then those of the checks across
/// rows (made only when every row is valid on its own).
pub fn check_events<'t>(
    check: &EventsCheck<'_>,
    table: &EventsTable<'_, 't>,
    sink: &mut dyn FnMut(Option<usize>, &HedIssue),
) {
    let sidecar = check.sidecar;
    let EventsTable {
        header,
        n_rows,
        cell,
        codes,
    } = *table;
    let spliced = sidecar.spliced_columns();
    let onset_col = header.iter().position(|h| h == "onset");
    if !header.iter().any(|h| h == "HED") && spliced.contains("HED") {
        sink(
            None,
            &HedIssue::warning(
                "SIDECAR_KEY_MISSING",
                "the sidecar splices {HED}, but the table has no HED column",
            ),
        );
    }
    // Only these columns contribute to a row's annotation.
    let relevant: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| *h == "HED" || sidecar.column(h).is_some())
        .map(|(i, _)| i)
        .collect();
    let mut events: Vec<Event> = Vec::with_capacity(n_rows);
    // Each row is the concatenation of a few pieces (sidecar entries, the HED cell) that
    // repeat row after row: each distinct piece is checked once, then the pieces of a row
    // are checked together for what only the whole row shows (repeats, unique tags).
    // The pieces the rows use are listed once in `registry`, and each row's pieces are a
    // range of ids in one list for the table (`row_pieces`): no vector per row.
    let mut parts = TableParts::default();
    let mut row_pieces: Vec<u32> = Vec::with_capacity(n_rows.saturating_mul(2));
    // Rows assembled in full whose HED columns hold the same cells give the same result.
    let mut row_memo: HashMap<Vec<u8>, Rc<RowResult>> = HashMap::default();
    let mut key: Vec<u8> = Vec::new();
    let mut row: Vec<&str> = vec![""; header.len()];
    let mut all_valid = true;
    // Without splices (and with distinct column names), a row's annotation is the
    // contributions of its columns in order, each a function of its own cell: each distinct
    // cell of a column is turned into a checked piece once (a value column as its template
    // with the value put in), and a row is the list of its columns' parts.
    let distinct = header
        .iter()
        .enumerate()
        .all(|(i, h)| !header[..i].contains(h));
    let by_parts = spliced.is_empty() && distinct;
    let order: Vec<usize> = relevant
        .iter()
        .copied()
        .filter(|&c| header[c] != "HED")
        .chain(relevant.iter().copied().filter(|&c| header[c] == "HED"))
        .collect();
    // Per column, each row's part id (see `column_ids`), and the first id no row has used
    // yet: a column's ids are given in the order of the rows that first have them.
    let mut col_ids: Vec<Vec<u32>> = Vec::new();
    let mut next_new: Vec<u32> = Vec::new();
    if by_parts {
        for &c in &order {
            next_new.push(next_id(&parts.infos));
            let column = Column {
                name: &header[c],
                index: c,
            };
            let cells = match codes.get(c) {
                Some(Some(coded)) => Cells::Coded(coded),
                Some(None) => Cells::MostlyDistinct,
                None => Cells::Unknown,
            };
            col_ids.push(column_ids(check, table, column, cells, &mut parts));
        }
        mark_risky(&next_new, &mut parts.infos, &parts.registry);
    }
    // The current row's part ids, and the issues of its checks as a whole.
    let mut row_ids: Vec<u32> = Vec::with_capacity(order.len());
    let mut whole: Vec<HedIssue> = Vec::new();
    // The previous full row's key and result: consecutive rows often have the same key.
    let mut prev_key: Vec<u8> = Vec::new();
    let mut prev: Option<Rc<RowResult>> = None;
    for r in 0..n_rows {
        let line = r + 2;
        let start = row_pieces.len();
        row_ids.clear();
        // A row with a part no earlier row had cannot repeat an earlier row's key.
        let mut fresh = false;
        let mut general = !by_parts;
        let mut flags = 0u8;
        let mut risky = 0u32;
        if by_parts {
            for (ids, new) in col_ids.iter().zip(next_new.iter_mut()) {
                let id = ids.get(r).copied().unwrap_or(u32::MAX);
                if id >= *new && id != u32::MAX {
                    fresh = true;
                    *new = id + 1;
                }
                let info = parts
                    .infos
                    .get(id as usize)
                    .copied()
                    .unwrap_or(PartInfo::GENERAL);
                flags |= info.flags;
                risky += u32::from(info.flags & PartInfo::RISKY != 0);
                if info.piece != NO_PIECE {
                    row_pieces.push(info.piece);
                }
                row_ids.push(id);
            }
            general = flags & PartInfo::FULL != 0;
        }
        let timed;
        if !general {
            // The row from its parts: the issues of its pieces, then those of the row as a
            // whole.
            let ids = row_pieces.get(start..).unwrap_or_default();
            if flags & PartInfo::ISSUES != 0 {
                for p in ids
                    .iter()
                    .filter_map(|&pid| parts.registry.get(pid as usize))
                {
                    for issue in &p.issues {
                        sink(Some(line), issue);
                    }
                }
            }
            let mut failed = flags & PartInfo::FAILED != 0;
            timed = flags & PartInfo::TIMED != 0;
            if !failed && risky > 1 {
                failed = check_row_whole(ids, &parts.registry, &mut whole);
                for issue in whole.drain(..) {
                    sink(Some(line), &issue);
                }
            }
            all_valid &= !failed;
        } else {
            row_pieces.truncate(start);
            key.clear();
            if by_parts {
                for id in &row_ids {
                    key.extend_from_slice(&id.to_le_bytes());
                }
            } else {
                for &c in &relevant {
                    let v = cell(r, c).unwrap_or_default();
                    // Length-prefixed, so that no cell text can imitate a separator.
                    key.extend_from_slice(&v.len().to_le_bytes());
                    key.extend_from_slice(v.as_bytes());
                }
            }
            let repeated = if fresh {
                None
            } else {
                prev.as_ref()
                    .filter(|_| prev_key == key)
                    .cloned()
                    .or_else(|| row_memo.get(key.as_slice()).cloned())
            };
            let result = match repeated {
                Some(found) => found,
                None => {
                    for (c, slot) in row.iter_mut().enumerate() {
                        *slot = if relevant.contains(&c) {
                            cell(r, c).unwrap_or_default()
                        } else {
                            ""
                        };
                    }
                    let computed = Rc::new(check_row(check, spliced, header, &row, &mut parts));
                    if row_memo.len() < MEMO_LIMIT {
                        row_memo.insert(key.clone(), computed.clone());
                    }
                    computed
                }
            };
            for issue in &result.issues {
                sink(Some(line), issue);
            }
            all_valid &= !result.failed;
            row_pieces.extend_from_slice(&result.ids);
            timed = result
                .ids
                .iter()
                .filter_map(|&id| parts.registry.get(id as usize))
                .any(|p| !p.timed.is_empty());
            std::mem::swap(&mut prev_key, &mut key);
            prev = Some(result);
        }
        let onset = onset_col.and_then(|c| cell(r, c));
        let range = (
            u32::try_from(start).unwrap_or(u32::MAX),
            next_id(&row_pieces),
        );
        events.push((line, onset, range, timed));
    }
    for issue in parts.missing.issues() {
        sink(None, &issue);
    }
    // Rows are compared with each other only when each is valid on its own.
    if all_valid {
        check_across_rows(&events, &row_pieces, &parts.registry, sink);
    }
}
