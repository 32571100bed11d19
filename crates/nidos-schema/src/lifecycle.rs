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
use std::collections::HashSet;
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
    alive_in(v, at, false)
}

/// Whether `v` is in force at `at` or, with `and_later`, at `at` or any later version
/// (its `since` is then not consulted: only a `removed` at or before `at` drops it).
fn alive_in(v: &Value, at: &str, and_later: bool) -> bool {
    let Value::Object(m) = v else { return true };
    if let Some(s) = annotation(m, "since") {
        if !and_later && compare_versions(s, at) == Ordering::Greater {
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
    let defined = Defined::of(&raw);
    let mut out = raw;
    filter(&mut out, v);
    if let Value::Object(top) = &mut out {
        top.insert("version".into(), Value::String(v.to_owned()));
        prune_entity_order(top);
        defined.prune(top);
    }
    Ok(out)
}

/// [`filter_for_version`] and [`strip`] in one pass over a borrowed tree: a copy of the
/// parts alive at `at`, without their annotations, plus the entries deprecated at `at`
/// (dotted key, as [`strip`] names them, → version). Only what survives is cloned, so a
/// tree shared by several loads (the embedded one) is pinned without copying it whole.
#[cfg(test)]
pub(crate) fn pinned_copy(
    raw: &Value,
    at: &str,
) -> Result<(Value, IndexMap<String, String>), SchemaError> {
    pinned_copy_in(raw, at, false)
}

/// A pinned copy (what [`filter_for_version`] then stripping gives); with `and_later`, the union of the versions from `at` on: what `at`
/// defines plus what any later version adds (nothing `at` defines is dropped), for
/// listing the files of a dataset that a later version names too.
pub(crate) fn pinned_copy_in(
    raw: &Value,
    at: &str,
    and_later: bool,
) -> Result<(Value, IndexMap<String, String>), SchemaError> {
    if !is_version(at) {
        return Err(SchemaError::new(
            ErrorKind::Version,
            "",
            format!("`{at}` is not a version"),
        ));
    }
    let mut deps = IndexMap::new();
    let mut out = copy_alive(raw, &mut String::new(), (at, and_later), &mut deps);
    if let Value::Object(top) = &mut out {
        top.insert("version".into(), Value::String(at.to_owned()));
        prune_entity_order(top);
        Defined::of(raw).prune(top);
    }
    Ok((out, deps))
}

/// The copy of one node for [`pinned_copy_in`]: its live children, annotations left out.
/// `path` names `v` as [`strip_in`] does (indices count the items kept).
fn copy_alive(
    v: &Value,
    path: &mut String,
    pin: (&str, bool),
    deps: &mut IndexMap<String, String>,
) -> Value {
    let (at, and_later) = pin;
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
                if !alive_in(x, at, and_later) {
                    continue;
                }
                let len = push_key(path, k);
                out.insert(k.clone(), copy_alive(x, path, pin, deps));
                path.truncate(len);
            }
            Value::Object(out)
        }
        Value::Array(a) => {
            let mut out = Vec::with_capacity(a.len());
            for x in a.iter().filter(|x| alive_in(x, at, and_later)) {
                let len = path.len();
                let _ = write!(path, "[{}]", out.len());
                out.push(copy_alive(x, path, pin, deps));
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

/// The names the whole tree defines, whatever their lifecycle: datatypes, suffixes and
/// extensions (by value), metadata fields and columns (by key), and the directory entries
/// of each dataset type. A rule naming one that the pinned tree no longer defines refers
/// to something introduced later (or removed): [`Defined::prune`] drops that reference,
/// so one `since` on the object pins every rule that names it.
#[derive(Default)]
struct Defined {
    datatypes: HashSet<String>,
    suffixes: HashSet<String>,
    extensions: HashSet<String>,
    metadata: HashSet<String>,
    columns: HashSet<String>,
    /// `objects.files`: the files and directories at the top of a dataset.
    files: HashSet<String>,
    /// `objects.entities`, by key (as file rules name them).
    entities: HashSet<String>,
}

/// The `value`s (or, lacking one, the keys) of the objects of `objects.<section>`.
fn values_of(top: &Map<String, Value>, section: &str) -> HashSet<String> {
    let Some(Value::Object(m)) = top.get("objects").and_then(|o| o.get(section)) else {
        return HashSet::new();
    };
    m.iter()
        .map(|(k, v)| {
            v.get("value")
                .and_then(Value::as_str)
                .unwrap_or(k)
                .to_owned()
        })
        .collect()
}

/// The keys of `objects.<section>`.
fn keys_of(top: &Map<String, Value>, section: &str) -> HashSet<String> {
    match top.get("objects").and_then(|o| o.get(section)) {
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        _ => HashSet::new(),
    }
}

impl Defined {
    fn of(tree: &Value) -> Defined {
        match tree {
            Value::Object(top) => Defined::of_map(top),
            _ => Defined::default(),
        }
    }

    fn of_map(top: &Map<String, Value>) -> Defined {
        Defined {
            datatypes: values_of(top, "datatypes"),
            suffixes: values_of(top, "suffixes"),
            extensions: values_of(top, "extensions"),
            metadata: keys_of(top, "metadata"),
            columns: keys_of(top, "columns"),
            files: keys_of(top, "files"),
            entities: keys_of(top, "entities"),
        }
    }

    /// What `self` (the whole tree) defines and `now` (a pinned tree) does not.
    fn minus(&self, now: &Defined) -> Defined {
        let gone = |all: &HashSet<String>, now: &HashSet<String>| -> HashSet<String> {
            all.difference(now).cloned().collect()
        };
        Defined {
            datatypes: gone(&self.datatypes, &now.datatypes),
            suffixes: gone(&self.suffixes, &now.suffixes),
            extensions: gone(&self.extensions, &now.extensions),
            metadata: gone(&self.metadata, &now.metadata),
            columns: gone(&self.columns, &now.columns),
            files: gone(&self.files, &now.files),
            entities: gone(&self.entities, &now.entities),
        }
    }

    /// Drops from the rules of the pinned tree `top` the references to names the whole
    /// tree (`self`) defines but `top` does not: suffixes, datatypes, extensions and
    /// entities of file rules (a rule left with none of the suffixes, datatypes or
    /// extensions it listed goes too), the top-level
    /// files' rules, the fields of JSON rules, the columns of table rules, and the
    /// top-level directories of each dataset type.
    fn prune(&self, top: &mut Map<String, Value>) {
        let gone = self.minus(&Defined::of_map(top));
        let Some(Value::Object(rules)) = top.get_mut("rules") else {
            return;
        };
        if let Some(Value::Object(files)) = rules.get_mut("files") {
            for (category, groups) in files.iter_mut() {
                let Value::Object(groups) = groups else {
                    continue;
                };
                for (group, rules) in groups.iter_mut() {
                    let Value::Object(rules) = rules else {
                        continue;
                    };
                    let core = category == "common" && group == "core";
                    rules.retain(|name, rule| {
                        !(core && gone.files.contains(name)) && gone.keep_file_rule(rule)
                    });
                }
            }
        }
        for section in ["sidecars", "json", "dataset_metadata", "tabular_data"] {
            if let Some(v) = rules.get_mut(section) {
                gone.prune_fields(v);
            }
        }
        if let Some(Value::Object(types)) = rules.get_mut("directories") {
            for entries in types.values_mut() {
                let Value::Object(entries) = entries else {
                    continue;
                };
                let dropped: Vec<String> = entries
                    .iter()
                    .filter(|(_, e)| {
                        e.get("name")
                            .and_then(Value::as_str)
                            .is_some_and(|n| gone.files.contains(n))
                    })
                    .map(|(k, _)| k.clone())
                    .collect();
                if dropped.is_empty() {
                    continue;
                }
                entries.retain(|k, _| !dropped.contains(k));
                for entry in entries.values_mut() {
                    if let Some(Value::Array(subdirs)) = entry.get_mut("subdirs") {
                        subdirs
                            .retain(|d| d.as_str().is_none_or(|s| !dropped.iter().any(|x| x == s)));
                    }
                }
            }
        }
    }

    /// Prunes one file rule's lists and entities; false when a list it had is left empty.
    fn keep_file_rule(&self, rule: &mut Value) -> bool {
        let Value::Object(m) = rule else { return true };
        if let Some(Value::Object(ents)) = m.get_mut("entities") {
            ents.retain(|k, _| !self.entities.contains(k));
        }
        for (key, gone) in [
            ("suffixes", &self.suffixes),
            ("datatypes", &self.datatypes),
            ("extensions", &self.extensions),
        ] {
            if let Some(Value::Array(list)) = m.get_mut(key) {
                if list.is_empty() {
                    continue;
                }
                list.retain(|x| x.as_str().is_none_or(|s| !gone.contains(s)));
                if list.is_empty() {
                    return false;
                }
            }
        }
        true
    }

    /// Drops, anywhere under `v`, the `fields` keys naming gone metadata and the
    /// `columns` keys (and `initial_columns` / `index_columns` items) naming gone columns.
    fn prune_fields(&self, v: &mut Value) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Object(fields)) = m.get_mut("fields") {
                    fields.retain(|k, _| !self.metadata.contains(k));
                    collapse_versioned(fields);
                }
                if let Some(Value::Object(cols)) = m.get_mut("columns") {
                    cols.retain(|k, _| !self.columns.contains(k));
                    collapse_versioned(cols);
                }
                for key in ["initial_columns", "index_columns"] {
                    if let Some(Value::Array(list)) = m.get_mut(key) {
                        list.retain(|x| x.as_str().is_none_or(|s| !self.columns.contains(s)));
                    }
                }
                for x in m.values_mut() {
                    self.prune_fields(x);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.prune_fields(x)),
            _ => {}
        }
    }
}

/// A field or column of a rule whose requirement changed over time is written as a list
/// of its forms, each with its own lifecycle (`[{level: recommended, removed: "1.5.0"},
/// {level: required, since: "1.5.0"}]`). Once the list is pinned (the forms not alive
/// dropped), the one form left stands for the entry; an entry with no form left goes.
/// A union of versions (`and_later`) keeps several forms: the newest, last, stands.
fn collapse_versioned(entries: &mut Map<String, Value>) {
    entries.retain(|_, v| !matches!(v, Value::Array(a) if a.is_empty()));
    for v in entries.values_mut() {
        if let Value::Array(forms) = v {
            if let Some(last) = forms.pop() {
                *v = last;
            }
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

    fn bundled_raw() -> (Value, TreeInfo) {
        let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema"));
        crate::yaml::load_tree_raw(dir).unwrap()
    }

    /// A field whose level changed is written as its versioned forms: each pinned tree
    /// holds the one form of its version, as a plain entry.
    #[test]
    fn versioned_levels_pin_to_one_form() {
        let (raw, _) = bundled_raw();
        let level = |v: &str| {
            let (t, _) = pinned_copy(&raw, v).unwrap();
            t["rules"]["sidecars"]["fmap"]["MRIFieldmapPepolar"]["fields"]["TotalReadoutTime"]
                ["level"]
                .clone()
        };
        assert_eq!(level("1.10.0"), Value::from("required"));
        assert_eq!(level("1.10.1"), Value::from("optional"));
        assert_eq!(level("1.2.0"), Value::from("required"));
    }

    /// The union of the versions from V on keeps every object V defines, and what later
    /// versions add.
    #[test]
    fn union_from_a_version_keeps_it_and_adds_later() {
        let (raw, info) = bundled_raw();
        for v in &info.supported {
            let (at, _) = pinned_copy_in(&raw, v, false).unwrap();
            let (union, _) = pinned_copy_in(&raw, v, true).unwrap();
            for section in [
                "datatypes",
                "suffixes",
                "extensions",
                "entities",
                "metadata",
                "columns",
            ] {
                let keys = |t: &Value| -> HashSet<String> {
                    t["objects"][section]
                        .as_object()
                        .map(|m| m.keys().cloned().collect())
                        .unwrap_or_default()
                };
                let (a, u) = (keys(&at), keys(&union));
                assert!(a.is_subset(&u), "{v} {section}: {:?}", a.difference(&u));
            }
        }
        let (old, _) = pinned_copy_in(&raw, "1.0.0", true).unwrap();
        assert!(old["objects"]["datatypes"].get("emg").is_some());
    }
}
