//! One descriptor per kind of rule: where its rules live, the keys that mark a mapping as
//! one of its rules, the keys a rule may have, how a rule is built into the typed views
//! and how its shape is checked. [`super::Builder::build`], the structure check
//! (`check.rs`), [`crate::Schema::expressions`], `schema show`/`schema diff` and the
//! coverage tool all walk [`RULE_KINDS`]; nothing else lists these kinds. The selector
//! rules' descriptors are in `selector.rs`, those of the named entries (`rules.errors`,
//! `rules.directories`, `meta.associations`) in `named.rs`.

use serde_json::{Map, Value};

use super::Builder;
use crate::model::*;
use crate::shape::Checker;

mod named;
mod selector;

use named::{ASSOCIATIONS, DIRECTORIES, ERRORS};
use selector::{CHECKS, FILES, JSON, SIDECARS, TABULAR};

/// How the rules of a kind are laid out under each of its nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Groups nest to any depth; a mapping with a marker key (or a value that is not a
    /// mapping) is a rule ([`super::rule_nodes`]).
    Grouped,
    /// Each entry of the node is a rule (`rules.errors.<name>`).
    Flat,
    /// One level of groups, each of whose entries is a rule
    /// (`rules.directories.<layout>.<key>`).
    TwoLevel,
}

/// Where the issue codes of a kind's rules are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codes {
    /// Its rules raise no issue of their own.
    None,
    /// `issue: {code, message}` objects anywhere inside its rules.
    Issues,
    /// The rule's own `code` and `message` keys.
    Own,
}

/// A kind of rule (`rules.files`, `rules.sidecars`, `meta.associations`, …).
pub struct RuleKind {
    /// The kind's name: its node's key, or for JSON rules `json`.
    pub name: &'static str,
    /// The top-level key the kind's nodes are under (`rules` or `meta`).
    pub root: &'static str,
    /// The `<root>.<node>` keys that hold rules of this kind, in the order their rules are
    /// listed (JSON rules: `dataset_metadata`, then `json`).
    pub nodes: &'static [&'static str],
    /// How rules sit under a node.
    pub layout: Layout,
    /// Keys that mark a mapping as a rule of this kind. A [`Layout::Grouped`] node is
    /// split into rules and groups with them; tools that walk every node alike (the
    /// coverage comparison) use the union over all kinds ([`rule_markers`]).
    pub markers: &'static [&'static str],
    /// Keys a rule may have (for a YAML tree any other key is an error).
    pub keys: &'static [&'static str],
    /// Where its rules' issue codes are (each code must have one message).
    pub codes: Codes,
    /// Builds one rule into the views.
    pub(crate) build: fn(&mut Builder, RuleAt<'_>, &mut Views),
    /// Checks one rule's shape beyond its keys.
    pub(crate) check: fn(&mut Checker, &Value, &str),
    /// Every expression of the kind's rules, with its path.
    pub(crate) expressions: for<'v> fn(&'v Views, &mut Vec<(String, &'v Expression)>),
}

/// One rule found under a kind's node.
pub struct RuleAt<'a> {
    /// Its dotted path from the root (`rules.errors.EmptyFile`).
    pub id: String,
    /// The keys below the node that lead to it (`["raw", "subject"]`).
    pub keys: Vec<&'a str>,
    pub value: &'a Value,
}

/// The kinds, in the order views are built and rules are listed.
pub const RULE_KINDS: &[RuleKind] = &[
    FILES,
    SIDECARS,
    JSON,
    TABULAR,
    CHECKS,
    ERRORS,
    DIRECTORIES,
    ASSOCIATIONS,
];

/// The kind whose rules live under `rules.<node>`.
pub fn rule_kind(node: &str) -> Option<&'static RuleKind> {
    RULE_KINDS
        .iter()
        .find(|k| k.root == "rules" && k.nodes.contains(&node))
}

/// Every kind's marker keys, each once, in the order the kinds list them.
pub fn rule_markers() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for m in RULE_KINDS.iter().flat_map(|k| k.markers) {
        if !out.contains(m) {
            out.push(m);
        }
    }
    out
}

impl RuleKind {
    /// The rules of this kind in a normalised raw tree, with their dotted paths.
    pub fn rules<'a>(&self, raw: &'a Value) -> Vec<(String, &'a Value)> {
        self.entries(raw)
            .into_iter()
            .map(|r| (r.id, r.value))
            .collect()
    }

    /// The rules of this kind under one of its nodes (`node` is its value, `prefix` its
    /// dotted path), in document order.
    pub fn rules_under<'a>(&self, node: &'a Value, prefix: &str) -> Vec<RuleAt<'a>> {
        let mut out = Vec::new();
        match self.layout {
            Layout::Grouped => {
                out = grouped(node, prefix, self.markers);
            }
            Layout::Flat => {
                for (k, value) in entries(node) {
                    out.push(RuleAt {
                        id: format!("{prefix}.{k}"),
                        keys: vec![k.as_str()],
                        value,
                    });
                }
            }
            Layout::TwoLevel => {
                for (g, group) in entries(node) {
                    for (k, value) in entries(group) {
                        out.push(RuleAt {
                            id: format!("{prefix}.{g}.{k}"),
                            keys: vec![g.as_str(), k.as_str()],
                            value,
                        });
                    }
                }
            }
        }
        out
    }

    /// [`RuleKind::rules`] with the keys that lead to each rule.
    pub fn entries<'a>(&self, raw: &'a Value) -> Vec<RuleAt<'a>> {
        let root = raw.get(self.root);
        let mut out = Vec::new();
        for node in self.nodes {
            if let Some(v) = root.and_then(|r| r.get(*node)) {
                out.extend(self.rules_under(v, &format!("{}.{node}", self.root)));
            }
        }
        out
    }
}

/// The entries of a mapping (none for any other value).
fn entries(v: &Value) -> impl Iterator<Item = (&String, &Value)> {
    v.as_object().into_iter().flat_map(Map::iter)
}

/// Whether a mapping under a [`Layout::Grouped`] node is a rule (it has one of the
/// `markers` keys or a value that is not a mapping) rather than a group.
pub(crate) fn is_rule(m: &Map<String, Value>, markers: &[&str]) -> bool {
    m.keys().any(|k| markers.contains(&k.as_str())) || m.values().any(|x| !x.is_object())
}

/// The rules of a [`Layout::Grouped`] node: a mapping is a rule when it has one of the
/// `markers` keys or a value that is not a mapping; otherwise it is a group.
pub(crate) fn grouped<'a>(node: &'a Value, prefix: &str, markers: &[&str]) -> Vec<RuleAt<'a>> {
    fn walk<'a>(v: &'a Value, at: RuleAt<'a>, markers: &[&str], out: &mut Vec<RuleAt<'a>>) {
        let Some(m) = v.as_object() else {
            out.push(at);
            return;
        };
        if is_rule(m, markers) {
            out.push(at);
        } else {
            for (k, x) in m {
                let mut keys = at.keys.clone();
                keys.push(k.as_str());
                let id = format!("{}.{k}", at.id);
                walk(x, RuleAt { id, keys, value: x }, markers, out);
            }
        }
    }
    let mut out = Vec::new();
    for (k, x) in entries(node) {
        let at = RuleAt {
            id: format!("{prefix}.{k}"),
            keys: vec![k.as_str()],
            value: x,
        };
        walk(x, at, markers, &mut out);
    }
    out
}

/// The `selectors` of each rule, given as (id, selectors).
pub(super) fn push_selectors<'v>(
    out: &mut Vec<(String, &'v Expression)>,
    rules: impl Iterator<Item = (&'v String, &'v Vec<Expression>)>,
) {
    for (id, selectors) in rules {
        push_expressions(out, id, "selectors", selectors);
    }
}

pub(super) fn push_expressions<'v>(
    out: &mut Vec<(String, &'v Expression)>,
    id: &str,
    what: &str,
    list: &'v [Expression],
) {
    for (i, e) in list.iter().enumerate() {
        out.push((format!("{id}.{what}[{i}]"), e));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn markers_are_keys_and_nodes_have_one_kind() {
        for kind in RULE_KINDS {
            for m in kind.markers {
                assert!(kind.keys.contains(m), "{}: marker {m} is no key", kind.name);
            }
            for node in kind.nodes {
                let owners = RULE_KINDS
                    .iter()
                    .filter(|k| k.root == kind.root && k.nodes.contains(node))
                    .count();
                assert_eq!(owners, 1, "{}.{node}", kind.root);
            }
        }
        let markers = rule_markers();
        let mut unique = markers.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(markers.len(), unique.len());
    }

    /// Each layout finds its rules with their ids and the keys that lead to them.
    #[test]
    fn layouts_find_rules() {
        let raw = json!({
            "rules": {
                "errors": {"E1": {"code": "C1"}, "E2": "not a mapping"},
                "directories": {"raw": {"subject": {"level": "required"}, "root": {}}, "odd": 3},
                "checks": {"g": {"h": {"r": {"issue": {}}}}, "s": {"selectors": []}}
            },
            "meta": {"associations": {"events": {"target": {}}}}
        });
        let found = |name: &str| -> Vec<(String, Vec<String>)> {
            let kind = RULE_KINDS.iter().find(|k| k.name == name).unwrap();
            kind.entries(&raw)
                .into_iter()
                .map(|r| (r.id, r.keys.iter().map(|k| k.to_string()).collect()))
                .collect()
        };
        let own = |id: &str, keys: &[&str]| {
            (
                id.to_owned(),
                keys.iter().map(|k| k.to_string()).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            found("errors"),
            vec![
                own("rules.errors.E1", &["E1"]),
                own("rules.errors.E2", &["E2"])
            ]
        );
        assert_eq!(
            found("directories"),
            vec![
                own("rules.directories.raw.subject", &["raw", "subject"]),
                own("rules.directories.raw.root", &["raw", "root"]),
            ]
        );
        assert_eq!(
            found("checks"),
            vec![
                own("rules.checks.g.h.r", &["g", "h", "r"]),
                own("rules.checks.s", &["s"])
            ]
        );
        assert_eq!(
            found("associations"),
            vec![own("meta.associations.events", &["events"])]
        );
    }
}
