//! Checked pieces: a piece is the text one column contributes to a row (its `{column}`
//! splices filled in, in a row assembled in full), checked once and kept with what the
//! checks of a row and across rows need of it (its top-level keys and their hashes, its
//! unique tags, its temporal groups). Pieces are remembered per table and, through
//! [`SharedPieces`], per dataset.

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use foldhash::HashMap;

use crate::check::{all_nodes, Checker, Node, Role};
use crate::issue::HedIssue;
use crate::tag::Special;

/// One checked piece of a row annotation.
pub(super) struct Piece {
    pub(super) issues: Vec<HedIssue>,
    pub(super) failed: bool,
    /// Distinct keys of the top-level items.
    pub(super) top_keys: Vec<String>,
    /// Schema nodes of `unique` tags.
    pub(super) unique: Vec<(usize, String)>,
    /// A hash of each of `top_keys`: pieces whose hashes differ share no key.
    pub(super) top_hashes: Vec<u64>,
    /// Its top-level groups with temporal tags or `Delay`, in order.
    pub(super) timed: Vec<Timed>,
}

impl Piece {
    fn check(checker: &Checker<'_>, text: &str) -> Piece {
        let c = checker.check(text, Role::Event, false);
        let failed = c.issues.iter().any(|x| !x.warning);
        let mut top_keys: Vec<String> = c.nodes.iter().map(Node::key).collect();
        top_keys.sort();
        top_keys.dedup();
        let unique = all_nodes(&c.nodes)
            .into_iter()
            .filter_map(Node::resolved)
            .filter(|r| r.unique)
            .map(|r| (r.node, r.token.text.clone()))
            .collect();
        let hasher = foldhash::fast::FixedState::default();
        let top_hashes = top_keys
            .iter()
            .map(|k| hasher.hash_one(k.as_str()))
            .collect();
        let timed = c.nodes.iter().filter_map(Timed::of).collect();
        Piece {
            issues: c.issues,
            failed,
            top_keys,
            unique,
            top_hashes,
            timed,
        }
    }
}

/// A top-level group with `Onset`, `Offset`, `Inset` or `Delay`, as the checks across rows
/// see it.
pub(super) struct Timed {
    /// `Onset`, `Offset` or `Inset` (the first of them), if the group has one.
    pub(super) temporal: Option<Special>,
    /// The definition (name and value, lower case) the group refers to.
    pub(super) anchor: Option<String>,
    /// Seconds its `Delay` gives (0 without one).
    pub(super) delay: f64,
}

impl Timed {
    /// The group's timing, when `node` is a group with temporal tags or `Delay`.
    fn of(node: &Node) -> Option<Timed> {
        let Node::Group(items, _) = node else {
            return None;
        };
        let specials = || items.iter().filter_map(Node::resolved).map(|r| r.special);
        let temporal =
            specials().find(|s| matches!(s, Special::Onset | Special::Offset | Special::Inset));
        if temporal.is_none() && !specials().any(|s| s == Special::Delay) {
            return None;
        }
        Some(Timed {
            temporal,
            anchor: anchor_name(items),
            delay: delay_of(items),
        })
    }
}

/// The delay in seconds a group's `Delay` tag gives (0 without one).
fn delay_of(items: &[Node]) -> f64 {
    items
        .iter()
        .filter_map(Node::resolved)
        .find(|r| r.special == Special::Delay)
        .and_then(|r| r.value.as_deref())
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// The definition (name and value) a temporal group refers to.
fn anchor_name(items: &[Node]) -> Option<String> {
    for n in items {
        match n {
            Node::Tag(_, Some(r)) if r.special == Special::Def => {
                return r.value.clone().map(|v| v.to_lowercase())
            }
            Node::Group(inner, _) => {
                if let Some(r) = inner
                    .iter()
                    .filter_map(Node::resolved)
                    .find(|r| r.special == Special::DefExpand)
                {
                    return r.value.clone().map(|v| v.to_lowercase());
                }
            }
            _ => {}
        }
    }
    None
}

/// The pieces of the row whose ids are `range` in `row_pieces`.
pub(super) fn pieces_of<'a>(
    range: (u32, u32),
    row_pieces: &'a [u32],
    registry: &'a [Arc<Piece>],
) -> impl Iterator<Item = &'a Piece> + Clone {
    row_pieces
        .get(range.0 as usize..range.1 as usize)
        .unwrap_or_default()
        .iter()
        .filter_map(|&id| registry.get(id as usize).map(|p| &**p))
}

/// The checked piece of `text`, from the table's memo, the dataset's, or checked now.
pub(super) fn piece_of(
    checker: &Checker<'_>,
    text: &str,
    memo: &mut HashMap<String, Arc<Piece>>,
    shared: Option<&SharedPieces>,
) -> Arc<Piece> {
    if let Some(p) = memo.get(text) {
        return p.clone();
    }
    let found = shared.and_then(|sh| sh.get(text));
    let p = found.unwrap_or_else(|| {
        let p = Arc::new(Piece::check(checker, text));
        if let Some(sh) = shared {
            sh.put(text, &p);
        }
        p
    });
    if memo.len() < MEMO_LIMIT {
        memo.insert(text.to_string(), p.clone());
    }
    p
}

/// Checked pieces shared by the tables of one dataset (they are checked with the same schemas
/// and definitions): a table looks here for a piece it has not met yet.
#[derive(Default)]
pub struct SharedPieces {
    map: Mutex<HashMap<String, Arc<Piece>>>,
    /// Per value-column template, the part of each cell met so far: a table finds a cell's
    /// piece by the cell alone, without filling the template in and hashing the result.
    values: Mutex<HashMap<String, Arc<ValueParts>>>,
}

impl SharedPieces {
    /// The cell map of a value-column template (one per template and dataset).
    pub(super) fn value_parts(&self, template: &str) -> Option<Arc<ValueParts>> {
        let mut m = self.values.lock().ok()?;
        if let Some(found) = m.get(template) {
            return Some(found.clone());
        }
        if m.len() >= SHARED_LIMIT {
            return None;
        }
        let parts = Arc::new(ValueParts::default());
        m.insert(template.to_string(), parts.clone());
        Some(parts)
    }

    fn get(&self, text: &str) -> Option<Arc<Piece>> {
        self.map.lock().ok().and_then(|m| m.get(text).cloned())
    }
    fn put(&self, text: &str, piece: &Arc<Piece>) {
        if let Ok(mut m) = self.map.lock() {
            if m.len() < SHARED_LIMIT {
                m.insert(text.to_string(), piece.clone());
            }
        }
    }
    /// The checked piece of `text`, checked now when no table has met it yet.
    pub(super) fn get_or_check(&self, checker: &Checker<'_>, text: String) -> Arc<Piece> {
        if let Some(p) = self.get(&text) {
            return p;
        }
        let p = Arc::new(Piece::check(checker, &text));
        if let Ok(mut m) = self.map.lock() {
            if m.len() < SHARED_LIMIT {
                m.insert(text, p.clone());
            }
        }
        p
    }
}

/// The parts of one value-column template, by cell (`None`: the filled text is blank).
#[derive(Default)]
pub(super) struct ValueParts {
    by_cell: Mutex<HashMap<Box<str>, Option<Arc<Piece>>>>,
}

impl ValueParts {
    /// The part of each cell, when a table met it before.
    pub(super) fn get_many(&self, cells: &[&str]) -> Vec<Option<Option<Arc<Piece>>>> {
        match self.by_cell.lock() {
            Ok(m) => cells.iter().map(|c| m.get(*c).cloned()).collect(),
            Err(_) => Vec::new(),
        }
    }
    pub(super) fn put_many(&self, made: Vec<(&str, Option<Arc<Piece>>)>) {
        if made.is_empty() {
            return;
        }
        if let Ok(mut m) = self.by_cell.lock() {
            for (cell, piece) in made {
                if m.len() >= SHARED_LIMIT {
                    break;
                }
                m.insert(cell.into(), piece);
            }
        }
    }
}

/// Distinct pieces remembered per dataset.
pub(super) const SHARED_LIMIT: usize = 1 << 16;

/// Distinct pieces remembered per table.
pub(super) const MEMO_LIMIT: usize = 1 << 14;
