//! The checks across rows: rows sharing an onset are one event (no expression repeated
//! between them), and `Onset`/`Offset`/`Inset` groups must pair up in time order (each
//! marker at its onset plus any `Delay`).

use std::sync::Arc;

use foldhash::{HashMap, HashSet};

use super::is_na;
use super::pieces::{pieces_of, Piece};
use crate::issue::HedIssue;
use crate::tag::Special;

/// A row: its line, its onset cell, the range of its pieces' ids in the table's list, and
/// whether a piece has temporal groups.
pub(super) type Event<'t> = (usize, Option<&'t str>, (u32, u32), bool);

/// Rows sharing an onset form one event; temporal groups must pair up across events.
pub(super) fn check_across_rows(
    events: &[Event<'_>],
    row_pieces: &[u32],
    registry: &[Arc<Piece>],
    sink: &mut dyn FnMut(Option<usize>, &HedIssue),
) {
    // Rows whose onsets increase share none (the usual events file, found without hashing
    // every onset); otherwise the rows are grouped by onset text.
    let later = if onsets_increase(events) {
        Vec::new()
    } else {
        shared_onsets(events)
    };
    let mut members: Vec<usize> = Vec::new();
    for (i, &(head, idx)) in later.iter().enumerate() {
        if members.is_empty() {
            members.push(head);
        }
        members.push(idx);
        if later.get(i + 1).is_some_and(|next| next.0 == head) {
            continue;
        }
        let mut seen: HashSet<&str> = HashSet::default();
        for &m in &members {
            let Some(&(line, _, range, _)) = events.get(m) else {
                continue;
            };
            let row_keys: HashSet<&str> = pieces_of(range, row_pieces, registry)
                .flat_map(|p| p.top_keys.iter().map(String::as_str))
                .collect();
            for k in row_keys {
                if !seen.insert(k) {
                    sink(
                        Some(line),
                        &HedIssue::error(
                            "TAG_EXPRESSION_REPEATED",
                            format!("the expression \"{k}\" repeats one of another row with the same onset"),
                        ),
                    );
                }
            }
        }
        members.clear();
    }
    // Temporal markers at their effective times (onset plus any Delay), in time order.
    let mut markers: Vec<(f64, usize, Special, String)> = Vec::new();
    for &(line, onset, range, timed) in events {
        if !timed {
            continue;
        }
        let pieces = pieces_of(range, row_pieces, registry);
        let time = onset
            .filter(|o| !is_na(o))
            .and_then(|o| o.trim().parse::<f64>().ok());
        for t in pieces.flat_map(|p| p.timed.iter()) {
            let Some(time) = time else {
                sink(
                    Some(line),
                    &HedIssue::error(
                        "TEMPORAL_TAG_ERROR",
                        "temporal tags need a row with a numeric onset",
                    ),
                );
                continue;
            };
            let (Some(kind), Some(anchor)) = (t.temporal, &t.anchor) else {
                continue;
            };
            markers.push((time + t.delay, line, kind, anchor.clone()));
        }
    }
    markers.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut open: HashSet<String> = HashSet::default();
    let mut at_time: HashSet<(u64, String)> = HashSet::default();
    for (time, line, kind, anchor) in markers {
        let mut err = |msg: String| sink(Some(line), &HedIssue::error("TEMPORAL_TAG_ERROR", msg));
        if !at_time.insert((time.to_bits(), anchor.clone())) {
            err(format!(
                "\"{anchor}\" starts or ends more than once at the same time"
            ));
            continue;
        }
        match kind {
            Special::Onset => {
                open.insert(anchor);
            }
            Special::Offset => {
                if !open.remove(&anchor) {
                    err(format!("Offset of \"{anchor}\" with no open Onset"));
                }
            }
            _ => {
                if !open.contains(&anchor) {
                    err(format!("Inset of \"{anchor}\" with no open Onset"));
                }
            }
        }
    }
}

/// Whether every row has an onset, each greater as a number than the one above: then no
/// two rows share an onset's text.
fn onsets_increase(events: &[Event<'_>]) -> bool {
    let mut above: Option<&str> = None;
    for (_, onset, _, _) in events {
        let Some(o) = onset.filter(|o| !is_na(o)) else {
            return false;
        };
        if above.is_some_and(|a| !less(a, o)) {
            return false;
        }
        above = Some(o);
    }
    true
}

/// `a < b` as numbers. Plain decimals of one shape (same length, the point at the same
/// place) compare as text, as their values do; anything else is read as a number (`false`
/// when either is not one).
fn less(a: &str, b: &str) -> bool {
    if let Some(order) = plain_order(a.as_bytes(), b.as_bytes()) {
        return order.is_lt();
    }
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) => x < y,
        _ => false,
    }
}

/// The order of two plain decimals of one shape (digits and at most one point, the point
/// at the same place, the same length), in one pass: their text order, which is their
/// numeric order. `None` for any other pair.
fn plain_order(a: &[u8], b: &[u8]) -> Option<std::cmp::Ordering> {
    if a.len() != b.len() {
        return None;
    }
    let mut order = std::cmp::Ordering::Equal;
    let mut points = 0;
    let mut digits = false;
    for (&x, &y) in a.iter().zip(b) {
        if x == b'.' && y == b'.' {
            points += 1;
        } else if x.is_ascii_digit() && y.is_ascii_digit() {
            digits = true;
            order = order.then(x.cmp(&y));
        } else {
            return None;
        }
    }
    (digits && points <= 1).then_some(order)
}

/// Rows that share an onset text with an earlier row, each as (first row of that onset,
/// row), sorted: each onset's rows together, in row order.
fn shared_onsets(events: &[Event<'_>]) -> Vec<(usize, usize)> {
    let mut first: HashMap<&str, usize> =
        HashMap::with_capacity_and_hasher(events.len(), Default::default());
    let mut later: Vec<(usize, usize)> = Vec::new();
    for (idx, (_, onset, _, _)) in events.iter().enumerate() {
        if let Some(key) = onset.as_deref().filter(|o| !is_na(o)) {
            match first.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => later.push((*e.get(), idx)),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(idx);
                }
            }
        }
    }
    later.sort_unstable();
    later
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Onsets that increase as numbers (compared as text when they have one shape) share
    /// none, so rows are not grouped by onset; anything else is grouped by text.
    #[test]
    fn increasing_onsets_share_none() {
        assert!(less("9.5", "10.25"));
        assert!(less("01.50", "01.75"));
        assert!(less("-1", "0.5"));
        assert!(!less("1.0", "1.0"));
        assert!(!less("2", "1.5"));
        assert!(!less("x", "1"));
        assert!(!less("1.2.3", "1.2.4"));
        assert!(less("10.5", "10.6"));
        assert!(!less("10.6", "10.5"));
        assert!(less(" 1.5", "10.5"));
        assert!(!less(".", "."));
        let rows = |onsets: &[&'static str]| -> Vec<Event<'static>> {
            onsets
                .iter()
                .enumerate()
                .map(|(i, o)| (i + 2, Some(*o), (0, 0), false))
                .collect()
        };
        assert!(onsets_increase(&rows(&["0.5", "1.0", "10.0", "100"])));
        assert!(!onsets_increase(&rows(&["0.5", "1.0", "1.0"])));
        assert!(!onsets_increase(&rows(&["1.0", "1"])));
        assert!(!onsets_increase(&rows(&["2", "1"])));
        assert!(!onsets_increase(&rows(&["n/a", "1"])));
        assert_eq!(
            shared_onsets(&rows(&["1", "2", "1", "3", "2"])),
            vec![(0, 2), (1, 4)]
        );
    }
}
