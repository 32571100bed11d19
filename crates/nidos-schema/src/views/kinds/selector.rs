//! The descriptors of the selector rules: files, sidecars, JSON, tabular data, checks.

use serde_json::Value;

use super::{push_expressions, push_selectors, Builder, Codes, Layout, RuleAt, RuleKind};
use crate::error::{ErrorKind, SchemaError};
use crate::model::*;
use crate::shape::{children, Checker};

pub(super) const FILES: RuleKind = RuleKind {
    name: "files",
    root: "rules",
    nodes: &["files"],
    layout: Layout::Grouped,
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
    codes: Codes::None,
    build: |b, at, views| {
        // rules.files.<category>.<group…>.<name>
        let RuleAt { id, keys, value: v } = at;
        let cat = keys.first().copied().unwrap_or_default();
        let name = keys.last().copied().unwrap_or_default();
        let group = match keys.get(1..keys.len().saturating_sub(1)) {
            Some(g) if !g.is_empty() => g.join("."),
            _ => String::new(),
        };
        if !v.is_object() {
            b.err(
                ErrorKind::Structure,
                &id,
                format!("expected a file rule, found {}", crate::views::kind_of(v)),
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
        push_selectors(out, views.file_rules.iter().map(|r| (&r.id, &r.selectors)))
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

/// A kind of field rule (sidecar or JSON): `build` adds one rule to its list of the
/// views, `expressions` lists that list's selectors.
const fn field_kind(
    name: &'static str,
    nodes: &'static [&'static str],
    build: fn(&mut Builder, RuleAt<'_>, &mut Views),
    expressions: for<'v> fn(&'v Views, &mut Vec<(String, &'v Expression)>),
) -> RuleKind {
    RuleKind {
        name,
        root: "rules",
        nodes,
        layout: Layout::Grouped,
        markers: FIELD_MARKERS,
        keys: FIELD_MARKERS,
        codes: Codes::Issues,
        build,
        check: check_fields,
        expressions,
    }
}

fn field_selectors<'v>(rules: &'v [FieldRule], out: &mut Vec<(String, &'v Expression)>) {
    push_selectors(out, rules.iter().map(|r| (&r.id, &r.selectors)));
}

pub(super) const SIDECARS: RuleKind = field_kind(
    "sidecars",
    &["sidecars"],
    |b, at, views| views.sidecar_rules.push(b.field_rule(at.value, &at.id)),
    |views, out| field_selectors(&views.sidecar_rules, out),
);

pub(super) const JSON: RuleKind = field_kind(
    "json",
    &["dataset_metadata", "json"],
    |b, at, views| views.json_rules.push(b.field_rule(at.value, &at.id)),
    |views, out| field_selectors(&views.json_rules, out),
);

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

pub(super) const TABULAR: RuleKind = RuleKind {
    name: "tabular_data",
    root: "rules",
    nodes: &["tabular_data"],
    layout: Layout::Grouped,
    markers: TABULAR_KEYS,
    keys: TABULAR_KEYS,
    codes: Codes::Issues,
    build: |b, at, views| {
        let rule = b.tabular_rule(at.value, &at.id, &views.columns);
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
        push_selectors(
            out,
            views.tabular_rules.iter().map(|r| (&r.id, &r.selectors)),
        )
    },
};

pub(super) const CHECKS: RuleKind = RuleKind {
    name: "checks",
    root: "rules",
    nodes: &["checks"],
    layout: Layout::Grouped,
    markers: &["selectors", "checks", "issue"],
    keys: &["selectors", "checks", "issue", "fix"],
    codes: Codes::Issues,
    build: |b, at, views| {
        let RuleAt { id, value: v, .. } = at;
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
