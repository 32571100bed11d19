//! Facts that upstream compiled schemas state only in prose, turned at load into the
//! structured keys our YAML tree writes, so the validator reads one form.
//!
//! - A field's `level_addendum` "required if `Key` is `Value`" (or "recommended if …")
//!   becomes `level_if: {key: Key, is: Value, level: required}`. Only a key and a value
//!   made of letters, digits and `_` are read; any other wording stays prose.
//! - The `age` column's deprecated `89+` (stated in prose from 1.10.1 on, and applied to
//!   every version by the reference validator) becomes its `deprecated_values` entry.
//!
//! A key already present is kept, so loading a compiled form of our own tree changes
//! nothing.

use serde_json::{json, Map, Value};

use super::rule_kind;

/// Adds the structured keys to a normalised compiled tree.
pub(crate) fn structure_prose(raw: &mut Value) {
    if let Some(rules) = raw.get_mut("rules") {
        for node in ["sidecars", "json", "dataset_metadata"] {
            let markers = rule_kind(node).map_or(&[][..], |k| k.markers);
            if let Some(v) = rules.get_mut(node) {
                each_rule_mut(v, markers, &mut add_level_conditions);
            }
        }
    }
    let age = raw
        .pointer_mut("/objects/columns/age")
        .and_then(Value::as_object_mut);
    if let Some(age) = age {
        if !age.contains_key("deprecated_values") {
            age.insert(
                "deprecated_values".to_owned(),
                json!([{
                    "value": "89+",
                    "issue": {
                        "code": "TSV_PSEUDO_AGE_DEPRECATED",
                        "level": "warning",
                        "message": "age \"89+\" is deprecated: write 89 (ages above 89 are capped at 89)"
                    }
                }]),
            );
        }
    }
}

fn add_level_conditions(rule: &mut Map<String, Value>) {
    let Some(fields) = rule.get_mut("fields").and_then(Value::as_object_mut) else {
        return;
    };
    for req in fields.values_mut() {
        let Some(req) = req.as_object_mut() else {
            continue;
        };
        if req.contains_key("level_if") {
            continue;
        }
        let condition = req
            .get("level_addendum")
            .and_then(Value::as_str)
            .and_then(level_condition);
        if let Some((level, key, is)) = condition {
            req.insert(
                "level_if".to_owned(),
                json!({"key": key, "is": is, "level": level}),
            );
        }
    }
}

/// The condition a level addendum states: (level word, key, value).
pub(crate) fn level_condition(addendum: &str) -> Option<(&'static str, &str, &str)> {
    let (level, rest) = if let Some(i) = addendum.find("required if `") {
        ("required", &addendum[i + "required if `".len()..])
    } else if let Some(i) = addendum.find("recommended if `") {
        ("recommended", &addendum[i + "recommended if `".len()..])
    } else {
        return None;
    };
    let (key, rest) = rest.split_once('`')?;
    let rest = rest.strip_prefix(" is `")?;
    let (value, _) = rest.split_once('`')?;
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
    (word(key) && word(value)).then_some((level, key, value))
}

/// Calls `f` on every rule mapping under a rule-kind node, as [`super::rule_nodes`]
/// finds them (groups nest; a mapping with a marker key or a non-mapping value is a rule).
fn each_rule_mut(node: &mut Value, markers: &[&str], f: &mut dyn FnMut(&mut Map<String, Value>)) {
    fn walk(v: &mut Value, markers: &[&str], f: &mut dyn FnMut(&mut Map<String, Value>)) {
        let Some(m) = v.as_object_mut() else {
            return;
        };
        if super::kinds::is_rule(m, markers) {
            f(m);
        } else {
            for x in m.values_mut() {
                walk(x, markers, f);
            }
        }
    }
    if let Some(m) = node.as_object_mut() {
        for x in m.values_mut() {
            walk(x, markers, f);
        }
    }
}
