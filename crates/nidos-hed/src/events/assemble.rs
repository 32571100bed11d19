//! Row assembly: a row's annotation from its cells, each column's contribution (a level's
//! string, a value column's template with the cell put in, the `HED` cell), the `{column}`
//! splices filled in, and the levels the sidecar does not annotate. The checks of a table
//! read rows this way where the sidecar splices, and by their columns' parts (`columns.rs`,
//! from the same contributions) elsewhere; the `hed` context field reads them here.

use foldhash::HashSet;

use super::sidecar::{splice_names, ColumnHed, SidecarHed};
use super::{is_na, EventsTable};
use crate::issue::HedIssue;
use crate::parse::{parse, Item};

/// The annotation of each row as assembled from the sidecar and the `HED` column (no checks;
/// a row without HED gives an empty string). What the `hed` context field shows.
pub fn assemble_rows(sidecar: &SidecarHed, table: &EventsTable<'_, '_>) -> Vec<String> {
    let spliced = sidecar.spliced_columns();
    let mut ignored = MissingLevels::default();
    let mut row: Vec<&str> = Vec::with_capacity(table.header.len());
    (0..table.n_rows)
        .map(|r| {
            row.clear();
            row.extend((0..table.header.len()).map(|c| (table.cell)(r, c).unwrap_or_default()));
            assemble(sidecar, spliced, table.header, &row, &mut ignored).join(", ")
        })
        .collect()
}

/// What a column gives a row for one cell, before splicing.
pub(super) enum Contribution {
    /// Nothing: the cell has no value, or the sidecar does not annotate the column.
    Nothing,
    /// The cell is a level the sidecar's categorical column does not annotate.
    MissingLevel,
    /// The text: the `HED` cell, a level's string, a value column's template filled in.
    Text(String),
}

/// What column `name` gives a row whose cell is `value` (the one reading of a cell, for the
/// rows assembled in full and for the parts of columns).
pub(super) fn contribution(sidecar: &SidecarHed, name: &str, value: &str) -> Contribution {
    if is_na(value) {
        return Contribution::Nothing;
    }
    if name == "HED" {
        return Contribution::Text(value.to_string());
    }
    match sidecar.column(name) {
        None => Contribution::Nothing,
        Some(ColumnHed::Value(s)) => Contribution::Text(fill_placeholder(s, value)),
        Some(ColumnHed::Levels(levels)) => match levels.iter().find(|(l, _)| l == value) {
            Some((_, s)) => Contribution::Text(s.clone()),
            None => Contribution::MissingLevel,
        },
    }
}

/// Assembles one row's annotation from the sidecar and the `HED` column; the levels it uses
/// that the sidecar does not annotate are added to `missing`.
pub(super) fn assemble(
    sidecar: &SidecarHed,
    spliced: &HashSet<String>,
    header: &[String],
    row: &[&str],
    missing: &mut MissingLevels,
) -> Vec<String> {
    let cell = |name: &str| -> Option<&str> {
        header
            .iter()
            .position(|h| h == name)
            .and_then(|i| row.get(i))
            .copied()
    };
    // The annotation a column contributes to this row, before splicing.
    let contribute = |name: &str, missing: &mut MissingLevels| -> Option<String> {
        let value = cell(name)?;
        match contribution(sidecar, name, value) {
            Contribution::Nothing => None,
            Contribution::MissingLevel => {
                missing.add(name, value);
                None
            }
            Contribution::Text(text) => Some(text),
        }
    };
    let mut pieces = Vec::new();
    let mut columns: Vec<&str> = header
        .iter()
        .map(String::as_str)
        .filter(|h| *h != "HED")
        .collect();
    columns.push("HED");
    for name in columns {
        if spliced.contains(name) || (name != "HED" && sidecar.column(name).is_none()) {
            continue;
        }
        let Some(text) = contribute(name, missing) else {
            continue;
        };
        if name == "HED" || !text.contains('{') {
            pieces.push(text);
            continue;
        }
        let (tree, syntax) = parse(&text);
        if !splice_names(&text).is_empty() && syntax.is_empty() {
            let filled = render(&tree.items, &mut |n: &str| contribute(n, missing));
            pieces.push(filled);
        } else {
            pieces.push(text);
        }
    }
    pieces.retain(|p| !p.trim().is_empty());
    pieces
}

/// Rebuilds a string with its splices replaced; empty results and emptied groups disappear.
fn render(items: &[Item], fill: &mut dyn FnMut(&str) -> Option<String>) -> String {
    let mut parts: Vec<String> = Vec::new();
    for item in items {
        match item {
            Item::Tag(t) => parts.push(t.text.clone()),
            Item::Splice(t) => {
                let name = t.text.trim_start_matches('{').trim_end_matches('}').trim();
                if let Some(v) = fill(name).filter(|v| !v.trim().is_empty()) {
                    parts.push(v);
                }
            }
            Item::Group(g) => {
                let inner = render(&g.items, fill);
                if !inner.trim().is_empty() {
                    parts.push(format!("({inner})"));
                }
            }
        }
    }
    parts.join(", ")
}

/// A value column's template with every `#` replaced by the cell's value (as
/// `str::replace` would give, in one allocation of the right size).
pub(super) fn fill_placeholder(template: &str, value: &str) -> String {
    let marks = template.bytes().filter(|&b| b == b'#').count();
    let mut out = String::with_capacity(template.len() - marks + marks * value.len());
    let mut pieces = template.split('#');
    if let Some(first) = pieces.next() {
        out.push_str(first);
    }
    for rest in pieces {
        out.push_str(value);
        out.push_str(rest);
    }
    out
}

/// The levels of a table's categorical columns that its sidecar does not annotate: per column
/// in the order first met, each value once, in the order of the rows that first have it. They
/// give one `SIDECAR_KEY_MISSING` warning per column (as the reference reports them), not one
/// per row.
#[derive(Default)]
pub(super) struct MissingLevels {
    columns: Vec<(String, Vec<String>, HashSet<String>)>,
}

/// At most this many values are named in one column's warning (the rest are counted).
const MISSING_NAMED: usize = 20;

impl MissingLevels {
    pub(super) fn add(&mut self, column: &str, value: &str) {
        let at = match self.columns.iter().position(|(c, ..)| c == column) {
            Some(at) => at,
            None => {
                self.columns
                    .push((column.to_string(), Vec::new(), HashSet::default()));
                self.columns.len() - 1
            }
        };
        if let Some((_, values, seen)) = self.columns.get_mut(at) {
            if !seen.contains(value) {
                seen.insert(value.to_string());
                values.push(value.to_string());
            }
        }
    }

    /// One warning per column, naming its values.
    pub(super) fn issues(&self) -> impl Iterator<Item = HedIssue> + '_ {
        self.columns.iter().map(|(column, values, _)| {
            let mut named = values
                .iter()
                .take(MISSING_NAMED)
                .map(|v| format!("\"{v}\""))
                .collect::<Vec<String>>()
                .join(", ");
            if values.len() > MISSING_NAMED {
                named.push_str(&format!(" and {} more", values.len() - MISSING_NAMED));
            }
            let message = match values.len() {
                1 => format!(
                    "value {named} of column \"{column}\" has no HED annotation in the sidecar"
                ),
                _ => format!(
                    "values {named} of column \"{column}\" have no HED annotation in the sidecar"
                ),
            };
            HedIssue::warning("SIDECAR_KEY_MISSING", message)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_placeholder_replaces_like_str_replace() {
        for (template, value) in [
            ("Experimental-trial/#", "12"),
            ("(Duration/# s, Delay/# s)", "0.5"),
            ("#", "x"),
            ("no placeholder", "7"),
            ("", "v"),
            ("##", ""),
            ("Label/#, Item-count/#", "é#"),
        ] {
            assert_eq!(
                fill_placeholder(template, value),
                template.replace('#', value),
                "{template:?} with {value:?}"
            );
        }
    }
}
