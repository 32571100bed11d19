//! The descriptors of the named entries: `rules.errors`, `rules.directories`,
//! `meta.associations`.

use serde_json::Value;

use super::{push_selectors, Codes, Layout, RuleAt, RuleKind};
use crate::model::*;
use crate::views::opt_str;

pub(super) const ERRORS: RuleKind = RuleKind {
    name: "errors",
    root: "rules",
    nodes: &["errors"],
    layout: Layout::Flat,
    markers: &["code", "selectors"],
    keys: &["code", "message", "level", "selectors", "fix"],
    codes: Codes::Own,
    build: |b, at, views| {
        let RuleAt { id, keys, value: v } = at;
        let fix = v.get("fix").and_then(|f| b.fix(f, &id));
        let selectors = b.expressions(v.get("selectors"), &format!("{id}.selectors"));
        let level = b
            .severity(v.get("level"), &format!("{id}.level"))
            .unwrap_or(Severity::Error);
        views.errors.push(ErrorRule {
            name: keys.last().copied().unwrap_or_default().to_owned(),
            code: opt_str(v, "code").unwrap_or_default(),
            message: opt_str(v, "message").unwrap_or_default(),
            level,
            selectors,
            fix,
            id,
        });
    },
    check: |c, r, at| c.severity(r.get("level"), &format!("{at}.level")),
    expressions: |views, out| {
        push_selectors(out, views.errors.iter().map(|r| (&r.id, &r.selectors)))
    },
};

pub(super) const DIRECTORIES: RuleKind = RuleKind {
    name: "directories",
    root: "rules",
    nodes: &["directories"],
    layout: Layout::TwoLevel,
    markers: &["level"],
    keys: &["name", "value", "entity", "level", "opaque", "subdirs"],
    codes: Codes::None,
    build: |b, at, views| {
        let RuleAt { id, keys, value: v } = at;
        let level = v
            .get("level")
            .and_then(Value::as_str)
            .map(|s| b.level(s, &format!("{id}.level")));
        views.directories.push(DirectoryRule {
            layout: keys.first().copied().unwrap_or_default().to_owned(),
            key: keys.last().copied().unwrap_or_default().to_owned(),
            name: opt_str(v, "name"),
            value: opt_str(v, "value"),
            entity: opt_str(v, "entity"),
            level,
            opaque: v.get("opaque").and_then(Value::as_bool).unwrap_or(false),
            subdirs: v
                .get("subdirs")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            id,
        });
    },
    check: |c, r, at| {
        if let Some(lv) = r.get("level") {
            c.level(lv, &format!("{at}.level"));
        }
    },
    expressions: |_, _| {},
};

const TARGET_KEYS: &[&str] = &["suffix", "extension", "entities"];

pub(super) const ASSOCIATIONS: RuleKind = RuleKind {
    name: "associations",
    root: "meta",
    nodes: &["associations"],
    layout: Layout::Flat,
    markers: &["selectors", "target"],
    keys: &["selectors", "target", "inherit", "reverse"],
    codes: Codes::None,
    build: |b, at, views| {
        let RuleAt { id, keys, value: v } = at;
        let selectors = b.expressions(v.get("selectors"), &format!("{id}.selectors"));
        let t = v.get("target").unwrap_or(&Value::Null);
        let target = AssociationTarget {
            suffix: opt_str(t, "suffix"),
            extension: b.str_list(t.get("extension"), &format!("{id}.target.extension")),
            entities: t
                .get("entities")
                .map(|e| b.str_list(Some(e), &format!("{id}.target.entities"))),
        };
        views.associations.push(Association {
            name: keys.last().copied().unwrap_or_default().to_owned(),
            selectors,
            target,
            inherit: v.get("inherit").and_then(Value::as_bool).unwrap_or(true),
            reverse: opt_str(v, "reverse"),
            id,
        });
    },
    check: |c, r, at| {
        if let Some(t) = r.get("target") {
            c.keys(t, &format!("{at}.target"), TARGET_KEYS);
        }
    },
    expressions: |views, out| {
        push_selectors(
            out,
            views.associations.iter().map(|r| (&r.id, &r.selectors)),
        )
    },
};
