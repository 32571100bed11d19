//! One descriptor per kind of selector rule under `rules`: where its rules live, the keys
//! that mark a mapping as one of its rules, the keys a rule may have, how a rule is built
//! into the typed views and how its shape is checked. [`super::Builder::build`] and the
//! structure check (`check.rs`) both walk [`RULE_KINDS`]; nothing else lists these kinds.

use serde_json::Value;

use super::{rule_nodes, Builder};
use crate::error::{ErrorKind, SchemaError};
use crate::model::*;
use crate::shape::{children, Checker};

/// A kind of selector rule (`rules.files`, `rules.sidecars`, …).
pub struct RuleKind {
    /// The kind's name: its node's key, or for JSON rules `json`.
    pub name: &'static str,
    /// The `rules.<node>` keys that hold rules of this kind, in the order their rules are
    /// listed (JSON rules: `dataset_metadata`, then `json`).
    pub nodes: &'static [&'static str],
    /// Keys that mark a mapping under a node as a rule; other mappings are groups.
    pub markers: &'static [&'static str],
    /// Keys a rule may have (for a YAML tree any other key is an error).
    pub keys: &'static [&'static str],
    /// Its rules carry `issue` objects (whose codes must each have one message).
    pub issues: bool,
    /// Builds one rule (`id`, node) into the views.
    pub(crate) build: fn(&mut Builder, String, &Value, &mut Views),
    /// Checks one rule's shape beyond its keys.
    pub(crate) check: fn(&mut Checker, &Value, &str),
    /// Every expression of the kind's rules, with its path.
    pub(crate) expressions: for<'v> fn(&'v Views, &mut Vec<(String, &'v Expression)>),
}

/// The selector-rule kinds, in the order views are built.
pub const RULE_KINDS: &[RuleKind] = &[FILES, SIDECARS, JSON, TABULAR, CHECKS];

/// The kind whose rules live under `rules.<node>`.
pub fn rule_kind(node: &str) -> Option<&'static RuleKind> {
    RULE_KINDS.iter().find(|k| k.nodes.contains(&node))
}

impl RuleKind {
    /// The rules of this kind in a normalised raw tree, with their dotted paths.
    pub fn rules<'a>(&self, raw: &'a Value) -> Vec<(String, &'a Value)> {
        let rules = raw.get("rules");
        let mut out = Vec::new();
        for node in self.nodes {
            if let Some(v) = rules.and_then(|r| r.get(*node)) {
                out.extend(rule_nodes(v, &format!("rules.{node}"), self.markers));
            }
        }
        out
    }
}

fn push_expressions<'v>(
    out: &mut Vec<(String, &'v Expression)>,
    id: &str,
    what: &str,
    list: &'v [Expression],
) {
    for (i, e) in list.iter().enumerate() {
        out.push((format!("{id}.{what}[{i}]"), e));
    }
}

const FILES: RuleKind = RuleKind {
    name: "files",
    nodes: &["files"],
    markers: &[
        "suffixes",
        "path",
        "stem",
        "entities",
        "selectors",
        "extensions",
        "level",
        "datatypes",
    ],
    keys: &[
        "selectors",
        "suffixes",
        "extensions",
        "datatypes",
        "entities",
        "level",
        "path",
        "stem",
    ],
    issues: false,
    build: |b, id, v, views| {
        // rules.files.<category>.<group…>.<name>
        let parts: Vec<&str> = id.split('.').collect();
        let cat = parts.get(2).copied().unwrap_or_default();
        let name = parts.last().copied().unwrap_or_default();
        let group = if parts.len() > 4 {
            parts[3..parts.len() - 1].join(".")
        } else {
            String::new()
        };
        if !v.is_object() {
            b.err(
                ErrorKind::Structure,
                &id,
                format!("expected a file rule, found {}", super::kind_of(v)),
            );
            return;
        }
        let rule = b.file_rule(v, &id, cat, &group, name);
        views.file_rules.push(rule);
    },
    check: |c, r, at| {
        if let Some(l) = r.get("level") {
            c.level(l, &format!("{at}.level"));
        }
        for (e, ev) in children(r.get("entities").unwrap_or(&Value::Null)) {
            let eat = format!("{at}.entities.{e}");
            if ev.is_string() {
                c.level(ev, &eat);
            } else {
                c.keys(ev, &eat, &["level", "enum"]);
                c.level(
                    ev.get("level").unwrap_or(&Value::Null),
                    &format!("{eat}.level"),
                );
            }
        }
    },
    expressions: |views, out| {
        for r in &views.file_rules {
            push_expressions(out, &r.id, "selectors", &r.selectors);
        }
    },
};

const FIELD_MARKERS: &[&str] = &["selectors", "fields"];
const FIELD_KEYS: &[&str] = &[
    "level",
    "level_addendum",
    "level_if",
    "description_addendum",
    "issue",
    "fix",
];
const LEVEL_IF_KEYS: &[&str] = &["key", "is", "level"];

/// The shape of a field rule's `fields`.
fn check_fields(c: &mut Checker, rule: &Value, at: &str) {
    for (f, fv) in children(rule.get("fields").unwrap_or(&Value::Null)) {
        let fat = format!("{at}.fields.{f}");
        if fv.is_string() {
            c.level(fv, &fat);
            continue;
        }
        c.keys(fv, &fat, FIELD_KEYS);
        c.level(
            fv.get("level").unwrap_or(&Value::Null),
            &format!("{fat}.level"),
        );
        if let Some(i) = fv.get("issue") {
            c.issue(i, &format!("{fat}.issue"));
        }
        if let Some(cond) = fv.get("level_if") {
            let cat = format!("{fat}.level_if");
            c.keys(cond, &cat, LEVEL_IF_KEYS);
            c.level(
                cond.get("level").unwrap_or(&Value::Null),
                &format!("{cat}.level"),
            );
        }
    }
}

fn field_expressions<'v>(rules: &'v [FieldRule], out: &mut Vec<(String, &'v Expression)>) {
    for r in rules {
        push_expressions(out, &r.id, "selectors", &r.selectors);
    }
}

const SIDECARS: RuleKind = RuleKind {
    name: "sidecars",
    nodes: &["sidecars"],
    markers: FIELD_MARKERS,
    keys: FIELD_MARKERS,
    issues: true,
    build: |b, id, v, views| {
        let rule = b.field_rule(v, &id);
        views.sidecar_rules.push(rule);
    },
    check: check_fields,
    expressions: |views, out| field_expressions(&views.sidecar_rules, out),
};

const JSON: RuleKind = RuleKind {
    name: "json",
    nodes: &["dataset_metadata", "json"],
    markers: FIELD_MARKERS,
    keys: FIELD_MARKERS,
    issues: true,
    build: |b, id, v, views| {
        let rule = b.field_rule(v, &id);
        views.json_rules.push(rule);
    },
    check: check_fields,
    expressions: |views, out| field_expressions(&views.json_rules, out),
};

const TABULAR_KEYS: &[&str] = &[
    "selectors",
    "columns",
    "initial_columns",
    "index_columns",
    "additional_columns",
];
const COLUMN_KEYS: &[&str] = &[
    "level",
    "level_addendum",
    "description_addendum",
    "definition",
];
const ADDITIONAL_COLUMNS: &[&str] = &["allowed", "allowed_if_defined", "not_allowed", "n/a"];

const TABULAR: RuleKind = RuleKind {
    name: "tabular_data",
    nodes: &["tabular_data"],
    markers: TABULAR_KEYS,
    keys: TABULAR_KEYS,
    issues: true,
    build: |b, id, v, views| {
        let rule = b.tabular_rule(v, &id, &views.columns);
        views.tabular_rules.push(rule);
    },
    check: |c, r, at| {
        for (col, cv) in children(r.get("columns").unwrap_or(&Value::Null)) {
            let cat = format!("{at}.columns.{col}");
            if cv.is_string() {
                c.level(cv, &cat);
            } else {
                c.keys(cv, &cat, COLUMN_KEYS);
                c.level(
                    cv.get("level").unwrap_or(&Value::Null),
                    &format!("{cat}.level"),
                );
            }
        }
        if let Some(a) = r.get("additional_columns") {
            if !a.as_str().is_some_and(|s| ADDITIONAL_COLUMNS.contains(&s)) {
                c.out.push(SchemaError::new(
                    ErrorKind::BadLevel,
                    format!("{at}.additional_columns"),
                    format!(
                        "bad value {a} (expected one of: {})",
                        ADDITIONAL_COLUMNS.join(", ")
                    ),
                ));
            }
        }
    },
    expressions: |views, out| {
        for r in &views.tabular_rules {
            push_expressions(out, &r.id, "selectors", &r.selectors);
        }
    },
};

const CHECKS: RuleKind = RuleKind {
    name: "checks",
    nodes: &["checks"],
    markers: &["selectors", "checks", "issue"],
    keys: &["selectors", "checks", "issue", "fix"],
    issues: true,
    build: |b, id, v, views| {
        let selectors = b.expressions(v.get("selectors"), &format!("{id}.selectors"));
        let checks = b.expressions(v.get("checks"), &format!("{id}.checks"));
        let issue = match v.get("issue") {
            Some(i) => b.issue(i, &format!("{id}.issue")),
            None => {
                b.err(ErrorKind::Structure, &id, "check without an issue");
                None
            }
        };
        let fix = v.get("fix").and_then(|f| b.fix(f, &id));
        views.checks.push(CheckRule {
            id,
            selectors,
            checks,
            issue,
            fix,
        });
    },
    check: |c, r, at| {
        if let Some(i) = r.get("issue") {
            c.issue(i, &format!("{at}.issue"));
        }
    },
    expressions: |views, out| {
        for r in &views.checks {
            push_expressions(out, &r.id, "selectors", &r.selectors);
            push_expressions(out, &r.id, "checks", &r.checks);
        }
    },
};
