//! Lifecycle annotations: one YAML tree describes several versions of the standard.
//!
//! Any mapping entry of the tree (an entity, a suffix, a metadata field, a rule, a
//! field of a rule, …) may carry `since: "1.10.0"`, `deprecated: "1.11.0"` and
//! `removed: "1.11.0"` (quoted version strings). Loading at version V drops every entry
//! with `since > V` or `removed <= V`, records entries with `deprecated <= V` in
//! [`crate::Schema::deprecations`], and strips the annotations. A lifecycle key
//! counts only when its value is a version string, so a common-principles entry named
//! `deprecated` (a mapping) is left alone.

use std::cmp::Ordering;
use std::fmt::Write;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::error::{ErrorKind, SchemaError};
use crate::version::{compare_versions, is_version};
use crate::yaml::{push_key, TreeInfo};

/// The annotation keys.
pub const LIFECYCLE_KEYS: &[&str] = &["since", "deprecated", "removed"];

fn annotation<'v>(m: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    m.get(key).and_then(Value::as_str).filter(|s| is_version(s))
}

fn alive(v: &Value, at: &str) -> bool {
    let Value::Object(m) = v else { return true };
    if let Some(s) = annotation(m, "since") {
        if compare_versions(s, at) == Ordering::Greater {
            return false;
        }
    }
    if let Some(r) = annotation(m, "removed") {
        if compare_versions(r, at) != Ordering::Greater {
            return false;
        }
    }
    true
}

/// Drops, in place, every entry not alive at `at` (maps keep their order).
fn filter(v: &mut Value, at: &str) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| alive(x, at));
            m.values_mut().for_each(|x| filter(x, at));
        }
        Value::Array(a) => {
            a.retain(|x| alive(x, at));
            a.iter_mut().for_each(|x| filter(x, at));
        }
        _ => {}
    }
}

/// Keeps the parts of a resolved tree that exist at version `v` and sets its version
/// to `v`. List items that name entities (`rules.entities`) are dropped when the
/// entity no longer exists.
pub fn filter_for_version(raw: Value, v: &str, _info: &TreeInfo) -> Result<Value, SchemaError> {
    if !is_version(v) {
        return Err(SchemaError::new(
            ErrorKind::Version,
            "",
            format!("`{v}` is not a version"),
        ));
    }
    let mut out = raw;
    filter(&mut out, v);
    if let Value::Object(top) = &mut out {
        top.insert("version".into(), Value::String(v.to_owned()));
        prune_entity_order(top);
    }
    Ok(out)
}

/// [`filter_for_version`] and [`strip`] in one pass over a borrowed tree: a copy of the
/// parts alive at `at`, without their annotations, plus the entries deprecated at `at`
/// (dotted key, as [`strip`] names them, → version). Only what survives is cloned, so a
/// tree shared by several loads (the embedded one) is pinned without copying it whole.
pub(crate) fn pinned_copy(
    raw: &Value,
    at: &str,
) -> Result<(Value, IndexMap<String, String>), SchemaError> {
    if !is_version(at) {
        return Err(SchemaError::new(
            ErrorKind::Version,
            "",
            format!("`{at}` is not a version"),
        ));
    }
    let mut deps = IndexMap::new();
    let mut out = copy_alive(raw, &mut String::new(), at, &mut deps);
    if let Value::Object(top) = &mut out {
        top.insert("version".into(), Value::String(at.to_owned()));
        prune_entity_order(top);
    }
    Ok((out, deps))
}

/// The copy of one node for [`pinned_copy`]: its live children, annotations left out.
/// `path` names `v` as [`strip_in`] does (indices count the items kept).
fn copy_alive(
    v: &Value,
    path: &mut String,
    at: &str,
    deps: &mut IndexMap<String, String>,
) -> Value {
    match v {
        Value::Object(m) => {
            if let Some(d) = annotation(m, "deprecated") {
                if compare_versions(d, at) != Ordering::Greater {
                    deps.insert(path.clone(), d.to_owned());
                }
            }
            let mut out = Map::new();
            for (k, x) in m {
                if LIFECYCLE_KEYS.contains(&k.as_str()) && annotation(m, k).is_some() {
                    continue;
                }
                if !alive(x, at) {
                    continue;
                }
                let len = push_key(path, k);
                out.insert(k.clone(), copy_alive(x, path, at, deps));
                path.truncate(len);
            }
            Value::Object(out)
        }
        Value::Array(a) => {
            let mut out = Vec::with_capacity(a.len());
            for x in a.iter().filter(|x| alive(x, at)) {
                let len = path.len();
                let _ = write!(path, "[{}]", out.len());
                out.push(copy_alive(x, path, at, deps));
                path.truncate(len);
            }
            Value::Array(out)
        }
        other => other.clone(),
    }
}

/// Drops from `rules.entities` the names `objects.entities` no longer defines.
fn prune_entity_order(top: &mut Map<String, Value>) {
    let ents: Option<Vec<String>> = top
        .get("objects")
        .and_then(|o| o.get("entities"))
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect());
    if let (Some(ents), Some(Value::Object(rules))) = (ents, top.get_mut("rules")) {
        if let Some(Value::Array(order)) = rules.get_mut("entities") {
            order.retain(|e| e.as_str().is_none_or(|s| ents.iter().any(|x| x == s)));
        }
    }
}

/// Removes lifecycle annotations, returning the entries deprecated at `at` (or at the
/// tree's own version when `None`): dotted key → version deprecated in.
#[cfg(test)]
pub(crate) fn strip(mut raw: Value, at: Option<&str>) -> (Value, IndexMap<String, String>) {
    let at = at
        .map(str::to_owned)
        .or_else(|| {
            raw.get("version")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let mut deps = IndexMap::new();
    strip_in(&mut raw, &mut String::new(), &at, &mut deps);
    (raw, deps)
}

/// `path` is the dotted key of `v`, grown and cut back in place as the walk goes down.
#[cfg(test)]
fn strip_in(v: &mut Value, path: &mut String, at: &str, deps: &mut IndexMap<String, String>) {
    match v {
        Value::Object(m) => {
            if let Some(d) = annotation(m, "deprecated") {
                if at.is_empty() || compare_versions(d, at) != Ordering::Greater {
                    deps.insert(path.clone(), d.to_owned());
                }
            }
            for k in LIFECYCLE_KEYS {
                if annotation(m, k).is_some() {
                    m.shift_remove(*k);
                }
            }
            for (k, x) in m.iter_mut() {
                let len = push_key(path, k);
                strip_in(x, path, at, deps);
                path.truncate(len);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                let len = path.len();
                let _ = write!(path, "[{i}]");
                strip_in(x, path, at, deps);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass copy gives what filtering then stripping gives, at every version of
    /// the bundled tree.
    #[test]
    fn pinned_copy_is_filter_then_strip() {
        let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema"));
        let (raw, info) = crate::yaml::load_tree_raw(dir).unwrap();
        for v in &info.supported {
            let (copy, deps) = pinned_copy(&raw, v).unwrap();
            let filtered = filter_for_version(raw.clone(), v, &info).unwrap();
            let (want, want_deps) = strip(filtered, Some(v));
            assert_eq!(copy, want, "{v}");
            assert_eq!(deps, want_deps, "{v}");
        }
        assert!(pinned_copy(&raw, "next").is_err());
    }
}
