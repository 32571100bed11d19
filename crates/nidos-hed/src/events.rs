//! Sidecars and events tables: the checks of a sidecar's `HED` entries, the assembly of each
//! events row from its sidecar entries and its `HED` column, and the checks across rows
//! (repeated expressions in rows sharing an onset, `Onset`/`Offset`/`Inset` consistency).

use std::hash::BuildHasher;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use foldhash::{HashMap, HashSet};
use serde_json::Value;

use crate::check::{all_nodes, Checker, Node, Role};
use crate::issue::HedIssue;
use crate::parse::{parse, Item};
use crate::tag::Special;

/// An issue of a sidecar, with the column key it is under.
#[derive(Debug, Clone)]
pub struct SidecarIssue {
    pub key: String,
    pub issue: HedIssue,
}

/// An issue of an events table, with the file line (header = 1) when it belongs to a row.
#[derive(Debug, Clone)]
pub struct RowIssue {
    pub line: Option<usize>,
    pub issue: HedIssue,
}

/// The HED annotation of one sidecar column.
#[derive(Debug, Clone)]
enum ColumnHed {
    /// A value column: one string with `#`.
    Value(String),
    /// A categorical column: level → string.
    Levels(Vec<(String, String)>),
}

/// The `HED` entries of a (merged) sidecar, by column.
#[derive(Debug, Clone, Default)]
pub struct SidecarHed {
    columns: Vec<(String, ColumnHed)>,
    /// The columns it splices, found on first use (every table that inherits the sidecar
    /// asks; the columns do not change after [`SidecarHed::read`]).
    spliced: std::sync::OnceLock<HashSet<String>>,
}

impl SidecarHed {
    /// Reads the `HED` entries of a sidecar object; shape problems are `SIDECAR_INVALID`.
    pub fn read(sidecar: &Value, issues: &mut Vec<SidecarIssue>) -> Self {
        let mut out = SidecarHed::default();
        let Some(obj) = sidecar.as_object() else {
            return out;
        };
        for (key, entry) in obj {
            let bad = |msg: String| SidecarIssue {
                key: key.clone(),
                issue: HedIssue::error("SIDECAR_INVALID", msg),
            };
            if key == "HED" {
                issues.push(bad(
                    "a \"HED\" key at the top of a sidecar must be under a column name".into(),
                ));
                continue;
            }
            let Some(entry) = entry.as_object() else {
                continue;
            };
            for (inner_key, inner) in entry {
                if inner_key != "HED" && inner.as_object().is_some_and(|o| o.contains_key("HED")) {
                    issues.push(bad(format!("column \"{key}\" has a \"HED\" key one level too deep (under \"{inner_key}\")")));
                }
            }
            match entry.get("HED") {
                None => {}
                Some(Value::String(s)) => {
                    out.columns.push((key.clone(), ColumnHed::Value(s.clone())))
                }
                Some(Value::Object(levels)) => {
                    let mut list = Vec::new();
                    for (level, v) in levels {
                        if level == "n/a" {
                            issues.push(bad(format!(
                                "column \"{key}\" annotates \"n/a\", which stands for no value"
                            )));
                            continue;
                        }
                        match v.as_str() {
                            Some(s) => list.push((level.clone(), s.to_string())),
                            None => issues.push(bad(format!("the annotation of level \"{level}\" of column \"{key}\" is not a string"))),
                        }
                    }
                    out.columns.push((key.clone(), ColumnHed::Levels(list)));
                }
                Some(_) => issues.push(bad(format!(
                    "the \"HED\" entry of column \"{key}\" is neither a string nor an object"
                ))),
            }
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Every annotation string with its column key.
    pub fn strings(&self) -> Vec<(&str, &str)> {
        let mut out = Vec::new();
        for (key, col) in &self.columns {
            match col {
                ColumnHed::Value(s) => out.push((key.as_str(), s.as_str())),
                ColumnHed::Levels(levels) => {
                    out.extend(levels.iter().map(|(_, s)| (key.as_str(), s.as_str())))
                }
            }
        }
        out
    }

    fn column(&self, name: &str) -> Option<&ColumnHed> {
        self.columns.iter().find(|(k, _)| k == name).map(|(_, c)| c)
    }

    /// Columns named in `{…}` anywhere in the sidecar: they are spliced, not added on their own.
    fn spliced_columns(&self) -> &HashSet<String> {
        self.spliced.get_or_init(|| {
            let mut out = HashSet::default();
            for (_, s) in self.strings() {
                for name in splice_names(s) {
                    out.insert(name);
                }
            }
            out
        })
    }

    /// Checks every annotation string, and the curly-brace references between columns.
    pub fn check(&self, checker: &Checker<'_>) -> Vec<SidecarIssue> {
        let mut issues = Vec::new();
        let spliced = self.spliced_columns();
        for (key, col) in &self.columns {
            let deferred = spliced.contains(key);
            let mut push = |list: Vec<HedIssue>| {
                issues.extend(list.into_iter().map(|issue| SidecarIssue {
                    key: key.clone(),
                    issue,
                }));
            };
            match col {
                ColumnHed::Value(s) => push(
                    checker
                        .check_with(s, Role::SidecarValue, true, deferred)
                        .issues,
                ),
                ColumnHed::Levels(levels) => {
                    for (_, s) in levels {
                        push(
                            checker
                                .check_with(s, Role::SidecarLevel, true, deferred)
                                .issues,
                        );
                    }
                }
            }
        }
        for (key, _) in &self.columns {
            let strings: Vec<&str> = self
                .strings()
                .into_iter()
                .filter(|(k, _)| k == key)
                .map(|(_, s)| s)
                .collect();
            for s in strings {
                let (tree, _) = parse(s);
                for t in tree.tags() {
                    if t.text.contains('{') || t.text.contains('}') {
                        issues.push(SidecarIssue {
                            key: key.clone(),
                            issue: HedIssue::error(
                                "SIDECAR_BRACES_INVALID",
                                format!(
                                    "curly braces must enclose a whole tag, not part of \"{}\"",
                                    t.text
                                ),
                            )
                            .at(t.start),
                        });
                    }
                }
                for name in splice_names(s) {
                    let msg = if name == *key {
                        Some(format!("column \"{key}\" refers to itself with {{{name}}}"))
                    } else if name == "HED" {
                        None
                    } else {
                        match self.column(&name) {
                            None => Some(format!("{{{name}}} names a column without a HED annotation in this sidecar")),
                            Some(other) => {
                                let nested = match other {
                                    ColumnHed::Value(s) => !splice_names(s).is_empty(),
                                    ColumnHed::Levels(l) => l.iter().any(|(_, s)| !splice_names(s).is_empty()),
                                };
                                nested.then(|| format!("{{{name}}} names a column whose annotation has curly braces itself"))
                            }
                        }
                    };
                    if let Some(msg) = msg {
                        issues.push(SidecarIssue {
                            key: key.clone(),
                            issue: HedIssue::error("SIDECAR_BRACES_INVALID", msg),
                        });
                    }
                }
            }
        }
        issues
    }
}

/// The `{name}` splices of a string.
fn splice_names(s: &str) -> Vec<String> {
    let (tree, _) = parse(s);
    let mut out = Vec::new();
    collect_splices(&tree.items, &mut out);
    out
}

fn collect_splices(items: &[Item], out: &mut Vec<String>) {
    for item in items {
        match item {
            Item::Splice(t) => out.push(
                t.text
                    .trim_start_matches('{')
                    .trim_end_matches('}')
                    .trim()
                    .to_string(),
            ),
            Item::Group(g) => collect_splices(&g.items, out),
            Item::Tag(_) => {}
        }
    }
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
fn fill_placeholder(template: &str, value: &str) -> String {
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

fn is_na(cell: &str) -> bool {
    cell.is_empty() || cell == "n/a"
}

#[cfg(test)]
mod fill_tests {
    use super::*;
    use crate::defs::Definitions;
    use crate::versions::{HedSchemas, SchemaSource};

    /// The 8.3.0 schemas and no definitions, for a checker.
    fn schemas_and_defs() -> (HedSchemas, Definitions) {
        let schemas = SchemaSource::new(Vec::new())
            .load_versions(&serde_json::json!("8.3.0"))
            .unwrap();
        (schemas, Definitions::default())
    }

    /// The HED entries of a sidecar.
    fn sidecar_of(json: serde_json::Value) -> SidecarHed {
        let mut shape = Vec::new();
        SidecarHed::read(&json, &mut shape)
    }

    /// A table's header and rows as owned texts.
    fn table<const N: usize>(
        header: [&str; N],
        rows: &[[&str; N]],
    ) -> (Vec<String>, Vec<Vec<String>>) {
        let rows = rows.iter().map(|r| r.map(String::from).to_vec()).collect();
        (header.map(String::from).to_vec(), rows)
    }

    /// A table checked through the dataset's shared maps (twice: the second time every
    /// (template, cell) is known) gives the issues it gives checked on its own: value
    /// columns with valid, invalid, blank, braced and missing cells, a level column.
    #[test]
    fn shared_value_parts_give_the_same_issues() {
        let (schemas, defs) = schemas_and_defs();
        let checker = Checker::new(&schemas, &defs);
        let sidecar = sidecar_of(serde_json::json!({
            "trial": {"HED": "Experimental-trial/#"},
            "rt": {"HED": "(Response-time/# s, Bad-tag-xyz)"},
            "blank": {"HED": "#"},
            "kind": {"HED": {"go": "Sensory-event", "stop": "Agent-action"}}
        }));
        let (header, rows) = table(
            ["onset", "trial", "rt", "blank", "kind", "HED"],
            &[
                ["1.0", "1", "0.5", "n/a", "go", "n/a"],
                ["2.0", "2", "0.5", " ", "stop", "Red"],
                ["3.0", "x{y}", "abc", "Blue", "other", "n/a"],
                ["4.0", "1", "n/a", "", "go", "Def/Nope"],
                ["5.0", "3", "0.7", "Green", "go", "n/a"],
            ],
        );
        let alone = format!("{:?}", check_events(&checker, &sidecar, &header, &rows));
        let shared = SharedPieces::default();
        for round in 0..2 {
            let got = check_events_by(
                &checker,
                &sidecar,
                &header,
                rows.len(),
                &mut |r, c| rows.get(r).and_then(|row| row.get(c)).map(String::as_str),
                Some(&shared),
            );
            assert_eq!(format!("{got:?}"), alone, "round {round}");
        }
        assert!(alone.contains("SIDECAR_KEY_MISSING"), "{alone}");
    }

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

    /// Levels without annotation give one warning per column, at no line, naming each value
    /// once in the order of the rows that first have it: whether the rows are read by their
    /// parts or assembled in full (the sidecar splices a column), and with more values than
    /// a message names.
    #[test]
    fn missing_levels_are_one_warning_per_column() {
        let (schemas, defs) = schemas_and_defs();
        let checker = Checker::new(&schemas, &defs);
        let (header, rows) = table(
            ["onset", "kind", "hand"],
            &[
                ["1.0", "zeta", "right"],
                ["2.0", "go", "left"],
                ["3.0", "alpha", "up"],
                ["4.0", "zeta", "n/a"],
                ["5.0", "alpha", "right"],
            ],
        );
        let plain = serde_json::json!({
            "kind": {"HED": {"go": "Sensory-event"}},
            "hand": {"HED": {"left": "Label/x"}}
        });
        let spliced = serde_json::json!({
            "kind": {"HED": {"go": "Sensory-event, ({hand})"}},
            "hand": {"HED": {"left": "Label/x"}}
        });
        let plain_got = check_events(&checker, &sidecar_of(plain), &header, &rows);
        let missing: Vec<String> = plain_got
            .iter()
            .filter(|i| i.issue.code == "SIDECAR_KEY_MISSING")
            .map(|i| {
                assert_eq!(i.line, None);
                i.issue.message.clone()
            })
            .collect();
        assert_eq!(
            missing,
            [
                "values \"zeta\", \"alpha\" of column \"kind\" have no HED annotation in the sidecar",
                "values \"right\", \"up\" of column \"hand\" have no HED annotation in the sidecar",
            ]
        );
        // Spliced: "hand" is read only where "go" splices it (row 2, "left"), so only the
        // levels of "kind" are missing.
        let spliced_got = check_events(&checker, &sidecar_of(spliced), &header, &rows);
        let missing: Vec<&str> = spliced_got
            .iter()
            .filter(|i| i.issue.code == "SIDECAR_KEY_MISSING")
            .map(|i| i.issue.message.as_str())
            .collect();
        assert_eq!(
            missing,
            ["values \"zeta\", \"alpha\" of column \"kind\" have no HED annotation in the sidecar"]
        );
        let many: Vec<Vec<String>> = (0..25)
            .map(|i| vec![format!("{i}.0"), format!("k{i}"), "left".to_string()])
            .collect();
        let one = sidecar_of(serde_json::json!({"kind": {"HED": {"go": "Sensory-event"}}}));
        let got = check_events(&checker, &one, &header, &many);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0]
                .issue
                .message
                .contains("\"k19\" and 5 more of column \"kind\""),
            "{got:?}"
        );
    }

    /// A table whose columns come with the reader's codes (each cell's rank in order of
    /// first appearance) gives the issues it gives without them, also when some columns
    /// have none (the reader found most of their cells distinct: a part per change of
    /// cell); codes out of that order are not trusted.
    #[test]
    fn coded_columns_give_the_same_issues() {
        let (schemas, defs) = schemas_and_defs();
        let checker = Checker::new(&schemas, &defs);
        let sidecar = sidecar_of(serde_json::json!({
            "trial": {"HED": "Experimental-trial/#"},
            "kind": {"HED": {"go": "Sensory-event", "stop": "Agent-action, Sensory-event"}},
            "hand": {"HED": {"left": "Label/x", "right": "Bad-tag-xyz"}}
        }));
        let (header, rows) = table(
            ["onset", "trial", "kind", "hand", "HED"],
            &[
                ["1.0", "1", "go", "left", "n/a"],
                ["1.0", "2", "stop", "left", "Sensory-event"],
                ["2.0", "1", "go", "right", "n/a"],
                ["3.0", "3", "other", "left", "Label/x"],
                ["3.0", "3", "go", "n/a", "n/a"],
            ],
        );
        let run = |codes: &[Option<Vec<u32>>]| {
            let mut got = Vec::new();
            check_events_with(
                &checker,
                &sidecar,
                &header,
                rows.len(),
                &mut |r, c| rows.get(r).and_then(|row| row.get(c)).map(String::as_str),
                codes,
                None,
                &mut |line, issue| got.push(format!("{line:?} {issue:?}")),
            );
            got
        };
        let first_seen = |c: usize| {
            let mut seen: Vec<&str> = Vec::new();
            rows.iter()
                .map(|row| {
                    let v = row[c].as_str();
                    let code = seen.iter().position(|s| *s == v).unwrap_or_else(|| {
                        seen.push(v);
                        seen.len() - 1
                    });
                    code as u32
                })
                .collect::<Vec<u32>>()
        };
        let plain = run(&[]);
        assert!(
            plain.iter().any(|i| i.contains("SIDECAR_KEY_MISSING")),
            "{plain:?}"
        );
        assert!(
            plain.iter().any(|i| i.contains("TAG_EXPRESSION_REPEATED")),
            "{plain:?}"
        );
        let all: Vec<Option<Vec<u32>>> = (0..header.len()).map(|c| Some(first_seen(c))).collect();
        assert_eq!(run(&all), plain);
        let some: Vec<Option<Vec<u32>>> = (0..header.len())
            .map(|c| (c % 2 == 0).then(|| first_seen(c)))
            .collect();
        assert_eq!(run(&some), plain);
        // Codes that skip a rank, or are too few: the column is read by its text.
        let mut bad = all.clone();
        bad[2] = Some(vec![1, 0, 1, 2, 1]);
        bad[3] = Some(vec![0, 0]);
        assert_eq!(run(&bad), plain);
        // Codes in order are trusted: calling "right" the same as "left" loses its issue.
        let mut misleading = all.clone();
        misleading[3] = Some(vec![0, 0, 0, 0, 1]);
        assert_ne!(run(&misleading), plain);
    }

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

/// Assembles one row's annotation from the sidecar and the `HED` column; the levels it uses
/// that the sidecar does not annotate are added to `missing`.
fn assemble<S: AsRef<str>>(
    sidecar: &SidecarHed,
    spliced: &HashSet<String>,
    header: &[String],
    row: &[S],
    missing: &mut MissingLevels,
) -> Vec<String> {
    let cell = |name: &str| -> Option<&str> {
        header
            .iter()
            .position(|h| h == name)
            .and_then(|i| row.get(i))
            .map(AsRef::as_ref)
            .filter(|c| !is_na(c))
    };
    // The annotation a column contributes to this row, before splicing.
    let contribution = |name: &str, missing: &mut MissingLevels| -> Option<String> {
        if name == "HED" {
            return cell("HED").map(str::to_string);
        }
        let value = cell(name)?;
        match sidecar.column(name)? {
            ColumnHed::Value(s) => Some(fill_placeholder(s, value)),
            ColumnHed::Levels(levels) => match levels.iter().find(|(l, _)| l == value) {
                Some((_, s)) => Some(s.clone()),
                None => {
                    missing.add(name, value);
                    None
                }
            },
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
        let Some(text) = contribution(name, missing) else {
            continue;
        };
        if name == "HED" || !text.contains('{') {
            pieces.push(text);
            continue;
        }
        let (tree, syntax) = parse(&text);
        if !splice_names(&text).is_empty() && syntax.is_empty() {
            let filled = render(&tree.items, &mut |n: &str| contribution(n, missing));
            pieces.push(filled);
        } else {
            pieces.push(text);
        }
    }
    pieces.retain(|p| !p.trim().is_empty());
    pieces
}

/// Checks an events table given as rows: each assembled row, then the rows together.
pub fn check_events(
    checker: &Checker<'_>,
    sidecar: &SidecarHed,
    header: &[String],
    rows: &[Vec<String>],
) -> Vec<RowIssue> {
    check_events_by(
        checker,
        sidecar,
        header,
        rows.len(),
        &mut |r, c| rows.get(r).and_then(|row| row.get(c)).map(String::as_str),
        None,
    )
}

/// What a row assembled in full (the sidecar splices) gives, remembered for rows with the same
/// cells in the HED columns: its pieces (ids in the table's registry), and its issues (their
/// line is set for each row).
struct RowResult {
    ids: Vec<u32>,
    issues: Vec<HedIssue>,
    failed: bool,
}

/// Checks an events table of `n_rows` rows whose cell (row, column) is `cell(row, column)`:
/// each assembled row, then the rows together.
pub fn check_events_by<'t>(
    checker: &Checker<'_>,
    sidecar: &SidecarHed,
    header: &[String],
    n_rows: usize,
    cell: &mut dyn FnMut(usize, usize) -> Option<&'t str>,
    shared: Option<&SharedPieces>,
) -> Vec<RowIssue> {
    let mut issues = Vec::new();
    check_events_with(
        checker,
        sidecar,
        header,
        n_rows,
        cell,
        &[],
        shared,
        &mut |line, issue| {
            issues.push(RowIssue {
                line,
                issue: issue.clone(),
            })
        },
    );
    issues
}

/// The id of the next entry of a table's list (ids are `u32`; a table never has that many).
fn next_id<T>(list: &[T]) -> u32 {
    u32::try_from(list.len()).unwrap_or(u32::MAX)
}

/// As [`check_events_by`], but each issue is handed to `sink` with its line as it is found
/// (the same issues in the same order), borrowed: a table whose rows repeat one issue
/// copies nothing.
#[allow(clippy::too_many_arguments)]
pub fn check_events_with<'t>(
    checker: &Checker<'_>,
    sidecar: &SidecarHed,
    header: &[String],
    n_rows: usize,
    cell: &mut dyn FnMut(usize, usize) -> Option<&'t str>,
    codes: &[Option<Vec<u32>>],
    shared: Option<&SharedPieces>,
    sink: &mut dyn FnMut(Option<usize>, &HedIssue),
) {
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
    let mut registry: Vec<Arc<Piece>> = Vec::new();
    let mut row_pieces: Vec<u32> = Vec::with_capacity(n_rows.saturating_mul(2));
    let mut memo: HashMap<String, Arc<Piece>> = HashMap::default();
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
    let mut missing = MissingLevels::default();
    // Per part, by id, what a row needs of it (see `PartInfo`).
    let mut infos: Vec<PartInfo> = Vec::new();
    // Per column, each row's part id (see `column_ids`), and the first id no row has used
    // yet: a column's ids are given in the order of the rows that first have them.
    let mut col_ids: Vec<Vec<u32>> = Vec::new();
    let mut next_new: Vec<u32> = Vec::new();
    if by_parts {
        for &c in &order {
            next_new.push(next_id(&infos));
            let column = Column {
                name: &header[c],
                index: c,
            };
            let mut table = TableParts {
                infos: &mut infos,
                registry: &mut registry,
                memo: &mut memo,
                missing: &mut missing,
            };
            let cells = match codes.get(c) {
                Some(Some(coded)) => Cells::Coded(coded),
                Some(None) => Cells::MostlyDistinct,
                None => Cells::Unknown,
            };
            col_ids.push(column_ids(
                checker, sidecar, column, n_rows, cell, cells, shared, &mut table,
            ));
        }
        mark_risky(&next_new, &mut infos, &registry);
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
                let info = infos.get(id as usize).copied().unwrap_or(PartInfo::GENERAL);
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
                for p in ids.iter().filter_map(|&pid| registry.get(pid as usize)) {
                    for issue in &p.issues {
                        sink(Some(line), issue);
                    }
                }
            }
            let mut failed = flags & PartInfo::FAILED != 0;
            timed = flags & PartInfo::TIMED != 0;
            if !failed && risky > 1 {
                failed = check_row_whole(ids, &registry, &mut whole);
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
                    let computed = Rc::new(check_row(
                        checker,
                        sidecar,
                        spliced,
                        header,
                        &row,
                        &mut memo,
                        shared,
                        &mut registry,
                        &mut missing,
                    ));
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
                .filter_map(|&id| registry.get(id as usize))
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
    for issue in missing.issues() {
        sink(None, &issue);
    }
    // Rows are compared with each other only when each is valid on its own.
    if all_valid {
        check_across_rows(&events, &row_pieces, &registry, sink);
    }
}

/// Assembles and checks one row (its issues have no line); its pieces are added to
/// `registry`, the levels it uses without annotation to `missing`.
#[allow(clippy::too_many_arguments)]
fn check_row(
    checker: &Checker<'_>,
    sidecar: &SidecarHed,
    spliced: &HashSet<String>,
    header: &[String],
    row: &[&str],
    memo: &mut HashMap<String, Arc<Piece>>,
    shared: Option<&SharedPieces>,
    registry: &mut Vec<Arc<Piece>>,
    missing: &mut MissingLevels,
) -> RowResult {
    let texts = assemble(sidecar, spliced, header, row, missing);
    let ids: Vec<u32> = texts
        .iter()
        .map(|text| {
            let id = next_id(registry);
            registry.push(piece_of(checker, text, memo, shared));
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

/// The checked piece of `text`, from the table's memo, the dataset's, or checked now.
fn piece_of(
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

/// The registry id of a part without a piece.
const NO_PIECE: u32 = u32::MAX;

/// What a row needs of a part, in one small entry: its piece's id in the table's registry
/// ([`NO_PIECE`] without one) and what the part and its piece hold.
#[derive(Clone, Copy)]
struct PartInfo {
    piece: u32,
    flags: u8,
}

impl PartInfo {
    /// The row must be assembled in full (the part's text has curly braces).
    const FULL: u8 = 1;
    /// The piece failed its checks.
    const FAILED: u8 = 4;
    /// The piece has issues.
    const ISSUES: u8 = 8;
    /// The piece has temporal groups.
    const TIMED: u8 = 16;
    /// The piece may repeat a key or a unique tag of another column's piece (see
    /// [`mark_risky`]): a row needs its check as a whole only with two such parts.
    const RISKY: u8 = 32;
    const GENERAL: PartInfo = PartInfo {
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
struct Part {
    missing: bool,
    piece: Option<Arc<Piece>>,
}

/// The levels of a table's categorical columns that its sidecar does not annotate: per column
/// in the order first met, each value once, in the order of the rows that first have it. They
/// give one `SIDECAR_KEY_MISSING` warning per column (as the reference reports them), not one
/// per row.
#[derive(Default)]
struct MissingLevels {
    columns: Vec<(String, Vec<String>, HashSet<String>)>,
}

/// At most this many values are named in one column's warning (the rest are counted).
const MISSING_NAMED: usize = 20;

impl MissingLevels {
    fn add(&mut self, column: &str, value: &str) {
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
    fn issues(&self) -> impl Iterator<Item = HedIssue> + '_ {
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

/// A column of the table: its name and its index in the header.
#[derive(Clone, Copy)]
struct Column<'h> {
    name: &'h str,
    index: usize,
}

/// The parts of one table so far: by id, what a row needs of each.
struct TableParts<'a> {
    infos: &'a mut Vec<PartInfo>,
    registry: &'a mut Vec<Arc<Piece>>,
    memo: &'a mut HashMap<String, Arc<Piece>>,
    /// The levels of the table's columns without annotation.
    missing: &'a mut MissingLevels,
}

/// Marks the parts that may give a row a repeated expression or unique tag ([`PartInfo::RISKY`]):
/// a row has one part per column, and each piece's keys are distinct already, so a row repeats
/// only if two pieces of different columns share a key (and then its hash) or both have unique
/// tags. `starts` holds where each column's part ids start (they run to the next column's).
fn mark_risky(starts: &[u32], infos: &mut [PartInfo], registry: &[Arc<Piece>]) {
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

/// A column's part ids from the reader's codes of its cells (see
/// `nidos_dataset::loaders::tsv::Table::codes`: a code is the rank of the cell's text in
/// order of first appearance, which is the order ids are given in), with the cells met
/// first; `None` when the codes do not follow that order.
fn ids_from_codes<'t>(
    codes: &[u32],
    n_rows: usize,
    base: u32,
    at: &mut dyn FnMut(usize) -> &'t str,
) -> Option<(Vec<u32>, Vec<&'t str>)> {
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

/// What the TSV reader says of a column's cells (see
/// `nidos_dataset::loaders::tsv::Table::codes`).
#[derive(Clone, Copy)]
enum Cells<'c> {
    /// Each cell's code: the rank of its text in order of first appearance.
    Coded(&'c [u32]),
    /// Not coded: at least half of the cells are distinct.
    MostlyDistinct,
    /// The caller gave no codes.
    Unknown,
}

/// A column's part ids when most of its cells are distinct: each cell that differs from
/// the one above is a new part (finding the few repeats further apart would cost more, a
/// hash of every cell, than the parts they save), with the cells met first.
fn ids_by_row<'t>(
    n_rows: usize,
    base: u32,
    at: &mut dyn FnMut(usize) -> &'t str,
) -> (Vec<u32>, Vec<&'t str>) {
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
fn ids_by_text<'t>(
    n_rows: usize,
    base: u32,
    at: &mut dyn FnMut(usize) -> &'t str,
) -> (Vec<u32>, Vec<&'t str>) {
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

/// The part id of each of the `n_rows` cells of `column`, going down the column: each
/// distinct cell is given the next id the first time it is met, and its part is added to
/// `table` (ids in the order of first appearance). A value column's parts come from the
/// dataset's cell map of its template when it has them, looked up for all the column's new
/// cells under one lock, and the parts made here are added to it under one more.
#[allow(clippy::too_many_arguments)]
fn column_ids<'t>(
    checker: &Checker<'_>,
    sidecar: &SidecarHed,
    column: Column<'_>,
    n_rows: usize,
    cell: &mut dyn FnMut(usize, usize) -> Option<&'t str>,
    cells: Cells<'_>,
    shared: Option<&SharedPieces>,
    table: &mut TableParts<'_>,
) -> Vec<u32> {
    let base = next_id(table.infos);
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
                let part = column_part(checker, sidecar, column.name, v, table.memo, shared);
                if part.as_ref().is_some_and(|p| p.missing) {
                    // Cells come in the order of the rows that first have them.
                    table.missing.add(column.name, v);
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
        table
            .infos
            .push(PartInfo::of(part.as_mut(), table.registry));
    }
    if let Some(vp) = values.as_deref() {
        vp.put_many(made);
    }
    ids
}

/// The part of column `name` for cell `value`; `None` when its text has curly braces (the
/// row is then assembled in full).
fn column_part(
    checker: &Checker<'_>,
    sidecar: &SidecarHed,
    name: &str,
    value: &str,
    memo: &mut HashMap<String, Arc<Piece>>,
    shared: Option<&SharedPieces>,
) -> Option<Part> {
    let empty = Part {
        missing: false,
        piece: None,
    };
    if is_na(value) {
        return Some(empty);
    }
    let text = if name == "HED" {
        value.to_string()
    } else {
        match sidecar.column(name) {
            None => return Some(empty),
            Some(ColumnHed::Value(s)) => fill_placeholder(s, value),
            Some(ColumnHed::Levels(levels)) => match levels.iter().find(|(l, _)| l == value) {
                Some((_, s)) => s.clone(),
                None => {
                    return Some(Part {
                        missing: true,
                        piece: None,
                    })
                }
            },
        }
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

/// Checked pieces shared by the tables of one dataset (they are checked with the same schemas
/// and definitions): a table looks here for a piece it has not met yet.
#[derive(Default)]
pub struct SharedPieces {
    map: Mutex<HashMap<String, Arc<Piece>>>,
    /// Per value-column template, the part of each cell met so far: a table finds a cell's
    /// piece by the cell alone, without filling the template in and hashing the result.
    values: Mutex<HashMap<String, Arc<ValueParts>>>,
}

/// The parts of one value-column template, by cell (`None`: the filled text is blank).
#[derive(Default)]
struct ValueParts {
    by_cell: Mutex<HashMap<Box<str>, Option<Arc<Piece>>>>,
}

impl ValueParts {
    /// The part of each cell, when a table met it before.
    fn get_many(&self, cells: &[&str]) -> Vec<Option<Option<Arc<Piece>>>> {
        match self.by_cell.lock() {
            Ok(m) => cells.iter().map(|c| m.get(*c).cloned()).collect(),
            Err(_) => Vec::new(),
        }
    }
    fn put_many(&self, made: Vec<(&str, Option<Arc<Piece>>)>) {
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

impl SharedPieces {
    /// The cell map of a value-column template (one per template and dataset).
    fn value_parts(&self, template: &str) -> Option<Arc<ValueParts>> {
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
    fn get_or_check(&self, checker: &Checker<'_>, text: String) -> Arc<Piece> {
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

/// Distinct pieces remembered per dataset.
const SHARED_LIMIT: usize = 1 << 16;

/// Distinct pieces remembered per table.
const MEMO_LIMIT: usize = 1 << 14;

/// A row: its line, its onset cell, the range of its pieces' ids in the table's list, and
/// whether a piece has temporal groups.
type Event<'t> = (usize, Option<&'t str>, (u32, u32), bool);

/// The pieces of the row whose ids are `range` in `row_pieces`.
fn pieces_of<'a>(
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

/// One checked piece of a row annotation.
struct Piece {
    issues: Vec<HedIssue>,
    failed: bool,
    /// Distinct keys of the top-level items.
    top_keys: Vec<String>,
    /// Schema nodes of `unique` tags.
    unique: Vec<(usize, String)>,
    /// A hash of each of `top_keys`: pieces whose hashes differ share no key.
    top_hashes: Vec<u64>,
    /// Its top-level groups with temporal tags or `Delay`, in order.
    timed: Vec<Timed>,
}

/// A top-level group with `Onset`, `Offset`, `Inset` or `Delay`, as the checks across rows
/// see it.
struct Timed {
    /// `Onset`, `Offset` or `Inset` (the first of them), if the group has one.
    temporal: Option<Special>,
    /// The definition (name and value, lower case) the group refers to.
    anchor: Option<String>,
    /// Seconds its `Delay` gives (0 without one).
    delay: f64,
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

/// Repeats and unique tags across the pieces of one row (ids in `registry`); true when
/// something was wrong.
fn check_row_whole(ids: &[u32], registry: &[Arc<Piece>], issues: &mut Vec<HedIssue>) -> bool {
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

/// Rows sharing an onset form one event; temporal groups must pair up across events.
fn check_across_rows(
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

/// The annotation of each row as assembled from the sidecar and the `HED` column (no checks;
/// a row without HED gives an empty string). What the `hed` context field shows.
pub fn assemble_rows(sidecar: &SidecarHed, header: &[String], rows: &[Vec<String>]) -> Vec<String> {
    let spliced = sidecar.spliced_columns();
    let mut ignored = MissingLevels::default();
    rows.iter()
        .map(|row| assemble(sidecar, spliced, header, row, &mut ignored).join(", "))
        .collect()
}
