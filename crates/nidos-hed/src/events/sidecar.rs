//! A sidecar's `HED` entries: reading them by column (a value column's one string with `#`,
//! a categorical column's string per level), the shape problems of that reading, and the
//! checks of the strings and of the `{column}` splices between them.

use foldhash::HashSet;
use serde_json::Value;

use crate::check::{Checker, Role};
use crate::issue::HedIssue;
use crate::parse::{parse, Item};

/// An issue of a sidecar, with the column key it is under.
#[derive(Debug, Clone)]
pub struct SidecarIssue {
    pub key: String,
    pub issue: HedIssue,
}

/// The HED annotation of one sidecar column.
#[derive(Debug, Clone)]
pub(super) enum ColumnHed {
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

    /// Whether a table with this header has HED: the sidecar annotates a column, or the
    /// table has a `HED` column.
    pub fn applies_to(&self, header: &[String]) -> bool {
        !self.is_empty() || header.iter().any(|h| h == "HED")
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

    pub(super) fn column(&self, name: &str) -> Option<&ColumnHed> {
        self.columns.iter().find(|(k, _)| k == name).map(|(_, c)| c)
    }

    /// Columns named in `{…}` anywhere in the sidecar: they are spliced, not added on their own.
    pub(super) fn spliced_columns(&self) -> &HashSet<String> {
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
pub(super) fn splice_names(s: &str) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::tests::schemas_and_defs;

    /// The codes of the shape issues of reading `json`, with the columns read.
    fn read(json: Value) -> (SidecarHed, Vec<(String, &'static str)>) {
        let mut issues = Vec::new();
        let sidecar = SidecarHed::read(&json, &mut issues);
        let codes = issues.into_iter().map(|i| (i.key, i.issue.code)).collect();
        (sidecar, codes)
    }

    /// Shape problems are one `SIDECAR_INVALID` each, at their column; what is well formed
    /// is still read, in the sidecar's order, a level per string.
    #[test]
    fn reading_keeps_columns_and_reports_shapes() {
        let (sidecar, codes) = read(serde_json::json!({
            "HED": "Red",
            "deep": {"Levels": {"HED": "Blue"}},
            "kind": {"HED": {"go": "Sensory-event", "n/a": "Blue", "bad": 3}},
            "odd": {"HED": 5},
            "rt": {"HED": "Response-time/# s"},
            "plain": {"Description": "no HED"}
        }));
        let invalid = |key: &str| (key.to_string(), "SIDECAR_INVALID");
        assert_eq!(
            codes,
            [
                invalid("HED"),
                invalid("deep"),
                invalid("kind"),
                invalid("kind"),
                invalid("odd")
            ]
        );
        assert_eq!(
            sidecar.strings(),
            [("kind", "Sensory-event"), ("rt", "Response-time/# s")]
        );
        assert!(sidecar.applies_to(&[]));
        let (empty, _) = read(serde_json::json!({"plain": {"Description": "x"}}));
        assert!(empty.is_empty());
        assert!(!empty.applies_to(&["onset".to_string()]));
        assert!(empty.applies_to(&["onset".to_string(), "HED".to_string()]));
    }

    /// A splice must name another column with a HED annotation that has no splices itself
    /// (`{HED}` names the table's column); each wrong one is `SIDECAR_BRACES_INVALID`.
    #[test]
    fn splices_name_other_plain_columns() {
        let (schemas, defs) = schemas_and_defs();
        let checker = Checker::new(&schemas, &defs);
        let (sidecar, _) = read(serde_json::json!({
            "a": {"HED": "Sensory-event, {b}, {HED}"},
            "b": {"HED": {"x": "Label/x, {c}"}},
            "c": {"HED": "Label/#"},
            "d": {"HED": "Agent-action, {d}, {nowhere}"}
        }));
        assert_eq!(
            sidecar.spliced_columns().len(),
            5,
            "{:?}",
            sidecar.spliced_columns()
        );
        let braces: Vec<(String, String)> = sidecar
            .check(&checker)
            .into_iter()
            .filter(|i| i.issue.code == "SIDECAR_BRACES_INVALID")
            .map(|i| (i.key, i.issue.message))
            .collect();
        assert_eq!(
            braces,
            [
                (
                    "a".to_string(),
                    "{b} names a column whose annotation has curly braces itself".to_string()
                ),
                (
                    "d".to_string(),
                    "column \"d\" refers to itself with {d}".to_string()
                ),
                (
                    "d".to_string(),
                    "{nowhere} names a column without a HED annotation in this sidecar".to_string()
                ),
            ]
        );
    }
}
