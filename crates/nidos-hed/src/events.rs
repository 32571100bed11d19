//! Sidecars and events tables: the checks of a sidecar's `HED` entries, the assembly of each
//! events row from its sidecar entries and its `HED` column, and the checks across rows
//! (repeated expressions in rows sharing an onset, `Onset`/`Offset`/`Inset` consistency).

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
    fn spliced_columns(&self) -> HashSet<String> {
        let mut out = HashSet::default();
        for (_, s) in self.strings() {
            for name in splice_names(s) {
                out.insert(name);
            }
        }
        out
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

fn is_na(cell: &str) -> bool {
    cell.is_empty() || cell == "n/a"
}

/// Assembles one row's annotation from the sidecar and the `HED` column.
fn assemble(
    sidecar: &SidecarHed,
    spliced: &HashSet<String>,
    header: &[String],
    row: &[String],
    line: usize,
    issues: &mut Vec<RowIssue>,
) -> String {
    let cell = |name: &str| -> Option<&str> {
        header
            .iter()
            .position(|h| h == name)
            .and_then(|i| row.get(i))
            .map(String::as_str)
            .filter(|c| !is_na(c))
    };
    // The annotation a column contributes to this row, before splicing.
    let contribution = |name: &str, issues: &mut Vec<RowIssue>| -> Option<String> {
        if name == "HED" {
            return cell("HED").map(str::to_string);
        }
        let value = cell(name)?;
        match sidecar.column(name)? {
            ColumnHed::Value(s) => Some(s.replace('#', value)),
            ColumnHed::Levels(levels) => match levels.iter().find(|(l, _)| l == value) {
                Some((_, s)) => Some(s.clone()),
                None => {
                    issues.push(RowIssue {
                        line: Some(line),
                        issue: HedIssue::warning(
                            "SIDECAR_KEY_MISSING",
                            format!("value \"{value}\" of column \"{name}\" has no HED annotation in the sidecar"),
                        ),
                    });
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
        let Some(text) = contribution(name, issues) else {
            continue;
        };
        if name == "HED" || !text.contains('{') {
            pieces.push(text);
            continue;
        }
        let (tree, syntax) = parse(&text);
        if !splice_names(&text).is_empty() && syntax.is_empty() {
            let mut nested = Vec::new();
            let filled = render(&tree.items, &mut |n: &str| contribution(n, &mut nested));
            issues.extend(nested);
            pieces.push(filled);
        } else {
            pieces.push(text);
        }
    }
    pieces.retain(|p| !p.trim().is_empty());
    pieces.join(", ")
}

/// Checks an events table: each assembled row, then the rows together.
/// `sidecar_ok` is false when the sidecar already had errors: rows are then not checked again.
pub fn check_events(
    checker: &Checker<'_>,
    sidecar: &SidecarHed,
    header: &[String],
    rows: &[Vec<String>],
) -> (Vec<RowIssue>, Vec<String>) {
    let mut issues = Vec::new();
    let spliced = sidecar.spliced_columns();
    let onset_col = header.iter().position(|h| h == "onset");
    if !header.iter().any(|h| h == "HED") && spliced.contains("HED") {
        issues.push(RowIssue {
            line: None,
            issue: HedIssue::warning(
                "SIDECAR_KEY_MISSING",
                "the sidecar splices {HED}, but the table has no HED column",
            ),
        });
    }
    let mut assembled = Vec::with_capacity(rows.len());
    let mut events: Vec<(usize, Option<String>, Vec<Node>)> = Vec::new();
    let mut memo: HashMap<String, (Vec<HedIssue>, Vec<Node>, bool)> = HashMap::default();
    for (i, row) in rows.iter().enumerate() {
        let line = i + 2;
        let text = assemble(sidecar, &spliced, header, row, line, &mut issues);
        // Rows of a table repeat the same few annotations: each distinct one is checked once.
        let checked = memo.entry(text.clone()).or_insert_with(|| {
            let c = checker.check(&text, Role::Event, false);
            let failed = c.issues.iter().any(|x| !x.warning);
            (c.issues, c.nodes, failed)
        });
        issues.extend(checked.0.iter().map(|issue| RowIssue {
            line: Some(line),
            issue: issue.clone(),
        }));
        let onset = onset_col.and_then(|c| row.get(c)).cloned();
        if !checked.2 {
            events.push((line, onset, checked.1.clone()));
        }
        assembled.push(text);
    }
    // Rows are compared with each other only when each is valid on its own.
    if events.len() == rows.len() {
        check_across_rows(&events, &mut issues);
    }
    (issues, assembled)
}

/// Rows sharing an onset form one event; temporal groups must pair up across events.
fn check_across_rows(events: &[(usize, Option<String>, Vec<Node>)], issues: &mut Vec<RowIssue>) {
    // Group by onset value (rows need not be sorted).
    let mut by_onset: Vec<(Option<f64>, Option<String>, Vec<usize>)> = Vec::new();
    for (idx, (_, onset, _)) in events.iter().enumerate() {
        let key = onset.clone().filter(|o| !is_na(o));
        let num = key.as_deref().and_then(|o| o.trim().parse::<f64>().ok());
        match by_onset
            .iter_mut()
            .find(|(_, k, _)| *k == key && key.is_some())
        {
            Some(entry) => entry.2.push(idx),
            None => by_onset.push((num, key, vec![idx])),
        }
    }
    for (_, _, members) in &by_onset {
        if members.len() < 2 {
            continue;
        }
        let mut seen: HashMap<String, ()> = HashMap::default();
        for &m in members {
            let (line, _, nodes) = &events[m];
            for n in nodes {
                if seen.insert(n.key(), ()).is_some() {
                    issues.push(RowIssue {
                        line: Some(*line),
                        issue: HedIssue::error(
                            "TAG_EXPRESSION_REPEATED",
                            "an expression repeats one of another row with the same onset",
                        ),
                    });
                }
            }
        }
    }
    // Temporal markers at their effective times (onset plus any Delay), in time order.
    let mut markers: Vec<(f64, usize, Special, String)> = Vec::new();
    for (line, onset, nodes) in events {
        let time = onset
            .as_deref()
            .filter(|o| !is_na(o))
            .and_then(|o| o.trim().parse::<f64>().ok());
        for n in nodes {
            let Node::Group(items, _) = n else {
                continue;
            };
            let specials: Vec<Special> = items
                .iter()
                .filter_map(Node::resolved)
                .map(|r| r.special)
                .collect();
            let temporal = specials
                .iter()
                .copied()
                .find(|s| matches!(s, Special::Onset | Special::Offset | Special::Inset));
            let timed = temporal.is_some() || specials.contains(&Special::Delay);
            if !timed {
                continue;
            }
            let Some(time) = time else {
                issues.push(RowIssue {
                    line: Some(*line),
                    issue: HedIssue::error(
                        "TEMPORAL_TAG_ERROR",
                        "temporal tags need a row with a numeric onset",
                    ),
                });
                continue;
            };
            let (Some(kind), Some(anchor)) = (temporal, anchor_name(items)) else {
                continue;
            };
            markers.push((time + delay_of(items), *line, kind, anchor));
        }
    }
    markers.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut open: HashSet<String> = HashSet::default();
    let mut at_time: HashSet<(u64, String)> = HashSet::default();
    for (time, line, kind, anchor) in markers {
        let err = |msg: String| RowIssue {
            line: Some(line),
            issue: HedIssue::error("TEMPORAL_TAG_ERROR", msg),
        };
        if !at_time.insert((time.to_bits(), anchor.clone())) {
            issues.push(err(format!(
                "\"{anchor}\" starts or ends more than once at the same time"
            )));
            continue;
        }
        match kind {
            Special::Onset => {
                open.insert(anchor);
            }
            Special::Offset => {
                if !open.remove(&anchor) {
                    issues.push(err(format!("Offset of \"{anchor}\" with no open Onset")));
                }
            }
            _ => {
                if !open.contains(&anchor) {
                    issues.push(err(format!("Inset of \"{anchor}\" with no open Onset")));
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

/// Tags of the assembled rows, for callers that want them (unused nodes are dropped).
pub fn tag_count(nodes: &[Node]) -> usize {
    all_nodes(nodes).len()
}
