//! `nidos schema diff A B` as a changelog: what the rules of version B add, change,
//! deprecate and remove against those of A, by section (datatypes, suffixes, entities,
//! extensions, files, fields, columns, values, requirements), each item named as the
//! standard writes it (`eeg`, `2PE`, `nuc`, `.vhdr`, `phenotype/`, `EEGReference`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use nidos_schema::Schema;
use serde_json::{Map, Value};

/// How an item changed.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Change {
    Added,
    Changed,
    Deprecated,
    Removed,
}

impl Change {
    fn mark(self) -> char {
        match self {
            Change::Added => '+',
            Change::Changed => '~',
            Change::Deprecated => '!',
            Change::Removed => '-',
        }
    }
}

/// The sections, in the order they are printed.
pub const SECTIONS: &[&str] = &[
    "datatypes",
    "suffixes",
    "entities",
    "extensions",
    "files",
    "fields",
    "columns",
    "values",
    "requirements",
];

/// Section → items (change, name, detail), sorted.
pub type Changelog = BTreeMap<&'static str, BTreeSet<(Change, String, String)>>;

/// Keys whose text is prose: a change there is not a change of the rules.
const PROSE: &[&str] = &["description", "display_name"];

fn without_prose(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !PROSE.contains(&k.as_str()))
                .map(|(k, x)| (k.clone(), without_prose(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_prose).collect()),
        other => other.clone(),
    }
}

fn objects<'s>(s: &'s Schema, section: &str) -> Option<&'s Map<String, Value>> {
    s.raw.get("objects")?.get(section)?.as_object()
}

/// The name the standard writes for an object of `section` with key `key`.
fn name_of(section: &str, key: &str, v: &Value) -> String {
    let field = |f: &str| v.get(f).and_then(Value::as_str).map(str::to_owned);
    match section {
        "datatypes" | "suffixes" | "extensions" => field("value").unwrap_or_else(|| key.into()),
        "entities" | "metadata" | "columns" => {
            field("name").unwrap_or_else(|| key.split("__").next().unwrap_or(key).into())
        }
        "files" if v.get("file_type").and_then(Value::as_str) == Some("directory") => {
            format!("{key}/")
        }
        "enums" => field("value").unwrap_or_else(|| key.into()),
        _ => key.into(),
    }
}

/// A short gloss of an object: its display name, else its description's first words.
fn gloss(v: &Value) -> String {
    v.get("display_name")
        .or_else(|| v.get("description"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The `enum` values a field definition accepts (top level or of its items / anyOf).
fn enum_values(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(list)) = m.get("enum") {
                for x in list {
                    match x {
                        Value::String(s) => {
                            out.insert(s.clone());
                        }
                        Value::Number(n) => {
                            out.insert(n.to_string());
                        }
                        Value::Object(o) => {
                            if let Some(s) = o.get("value").and_then(Value::as_str) {
                                out.insert(s.to_owned());
                            }
                        }
                        _ => {}
                    }
                }
            }
            for k in ["items", "anyOf", "oneOf"] {
                if let Some(x) = m.get(k) {
                    enum_values(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| enum_values(x, out)),
        _ => {}
    }
}

/// Compares `objects.<section>` of two schemas into `log[label]`; metadata and
/// columns also report the values their enumerations gain or lose under `values`.
fn compare_objects(
    a: &Schema,
    b: &Schema,
    section: &str,
    label: &'static str,
    log: &mut Changelog,
) {
    let empty = Map::new();
    let am = objects(a, section).unwrap_or(&empty);
    let bm = objects(b, section).unwrap_or(&empty);
    for (k, v) in bm {
        let name = name_of(section, k, v);
        match am.get(k) {
            None => {
                log.entry(label)
                    .or_default()
                    .insert((Change::Added, name, gloss(v)));
            }
            Some(old) if without_prose(old) != without_prose(v) => {
                let (mut was, mut now) = (BTreeSet::new(), BTreeSet::new());
                enum_values(old, &mut was);
                enum_values(v, &mut now);
                let values = log.entry("values").or_default();
                for x in now.difference(&was) {
                    values.insert((Change::Added, x.clone(), format!("of {name}")));
                }
                for x in was.difference(&now) {
                    values.insert((Change::Removed, x.clone(), format!("of {name}")));
                }
                let mut old_rest = without_prose(old);
                let mut new_rest = without_prose(v);
                strip_enums(&mut old_rest);
                strip_enums(&mut new_rest);
                if old_rest != new_rest {
                    log.entry(label).or_default().insert((
                        Change::Changed,
                        name,
                        "definition".into(),
                    ));
                }
            }
            Some(_) => {}
        }
    }
    for (k, v) in am {
        if !bm.contains_key(k) {
            log.entry(label).or_default().insert((
                Change::Removed,
                name_of(section, k, v),
                gloss(v),
            ));
        }
    }
}

fn strip_enums(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.shift_remove("enum");
            m.values_mut().for_each(strip_enums);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_enums),
        _ => {}
    }
}

/// The datatype/suffix pairs of the raw file rules (`eeg/_electrodes`).
fn pairs(s: &Schema) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for r in s.file_rules.iter().filter(|r| r.category == "raw") {
        for d in &r.datatypes {
            for x in &r.suffixes {
                out.insert(format!("{d}/_{x}"));
            }
        }
    }
    out
}

/// The requirement levels of the fields of JSON rules and the columns of table rules:
/// (what, rule) → level.
fn levels(s: &Schema) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    let Some(rules) = s.raw.get("rules") else {
        return out;
    };
    for (section, key) in [
        ("sidecars", "fields"),
        ("json", "fields"),
        ("dataset_metadata", "fields"),
        ("tabular_data", "columns"),
    ] {
        let Some(v) = rules.get(section) else {
            continue;
        };
        let mut stack: Vec<(String, &Value)> = vec![(section.to_owned(), v)];
        while let Some((at, v)) = stack.pop() {
            let Value::Object(m) = v else { continue };
            if let Some(Value::Object(fields)) = m.get(key) {
                for (f, lv) in fields {
                    let level = match lv {
                        Value::String(s) => s.clone(),
                        Value::Object(o) => o
                            .get("level")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        _ => String::new(),
                    };
                    let name = f.split("__").next().unwrap_or(f).to_owned();
                    out.insert((name, at.clone()), level);
                }
                continue;
            }
            for (k, x) in m {
                stack.push((format!("{at}.{k}"), x));
            }
        }
    }
    out
}

/// The checks by issue code: code → (message, its rule without prose).
fn checks(s: &Schema) -> BTreeMap<String, (String, Value)> {
    let mut out = BTreeMap::new();
    let Some(Value::Object(groups)) = s.raw.get("rules").and_then(|r| r.get("checks")) else {
        return out;
    };
    for group in groups.values() {
        let Value::Object(rules) = group else {
            continue;
        };
        for rule in rules.values() {
            let Some(issue) = rule.get("issue") else {
                continue;
            };
            let code = issue
                .get("code")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let msg = issue
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let mut r = without_prose(rule);
            if let Some(Value::Object(i)) = r.get_mut("issue") {
                i.shift_remove("message");
            }
            // Several rules may raise one code: keep them all under it.
            let e = out
                .entry(code.to_owned())
                .or_insert_with(|| (msg.to_owned(), Value::Array(Vec::new())));
            if let Value::Array(a) = &mut e.1 {
                a.push(r);
            }
        }
    }
    out
}

/// What `b` changes against `a`.
pub fn changelog(a: &Schema, b: &Schema) -> Changelog {
    let mut log = Changelog::new();
    for (section, label) in [
        ("datatypes", "datatypes"),
        ("suffixes", "suffixes"),
        ("entities", "entities"),
        ("extensions", "extensions"),
        ("files", "files"),
        ("metadata", "fields"),
        ("columns", "columns"),
        ("enums", "values"),
    ] {
        compare_objects(a, b, section, label, &mut log);
    }
    let (pa, pb) = (pairs(a), pairs(b));
    for p in pb.difference(&pa) {
        log.entry("files")
            .or_default()
            .insert((Change::Added, p.clone(), String::new()));
    }
    for p in pa.difference(&pb) {
        log.entry("files")
            .or_default()
            .insert((Change::Removed, p.clone(), String::new()));
    }
    // Requirements: checks by code, and the levels of fields and columns.
    let (ca, cb) = (checks(a), checks(b));
    let req = log.entry("requirements").or_default();
    for (code, (msg, rule)) in &cb {
        match ca.get(code) {
            None => {
                req.insert((Change::Added, code.clone(), msg.clone()));
            }
            Some((_, old)) if old != rule => {
                req.insert((Change::Changed, code.clone(), msg.clone()));
            }
            Some(_) => {}
        }
    }
    for (code, (msg, _)) in &ca {
        if !cb.contains_key(code) {
            req.insert((Change::Removed, code.clone(), msg.clone()));
        }
    }
    let (la, lb) = (levels(a), levels(b));
    for ((what, rule), level) in &lb {
        let old = la.get(&(what.clone(), rule.clone()));
        match old {
            Some(o) if o != level && !o.is_empty() => {
                req.insert((
                    Change::Changed,
                    what.clone(),
                    format!("{o} → {level} ({rule})"),
                ));
            }
            None if level == "required" => {
                req.insert((Change::Added, what.clone(), format!("required ({rule})")));
            }
            _ => {}
        }
    }
    // Deprecations: entries deprecated in b and not in a, filed by their section.
    for (path, v) in &b.deprecations {
        if a.deprecations.contains_key(path) {
            continue;
        }
        let mut parts = path.split('.');
        let (top, section, key) = (parts.next(), parts.next(), parts.next());
        let label = match (top, section) {
            (Some("objects"), Some("datatypes")) => "datatypes",
            (Some("objects"), Some("suffixes")) => "suffixes",
            (Some("objects"), Some("entities")) => "entities",
            (Some("objects"), Some("extensions")) => "extensions",
            (Some("objects"), Some("files")) => "files",
            (Some("objects"), Some("metadata")) => "fields",
            (Some("objects"), Some("columns")) => "columns",
            (Some("objects"), Some("enums")) => "values",
            _ => "requirements",
        };
        let name = match (section, key) {
            (Some(s), Some(k)) if top == Some("objects") => objects(b, s)
                .and_then(|m| m.get(k))
                .map(|o| name_of(s, k, o))
                .unwrap_or_else(|| k.to_owned()),
            _ => path.clone(),
        };
        log.entry(label).or_default().insert((
            Change::Deprecated,
            name,
            format!("deprecated in {v}"),
        ));
    }
    log.retain(|_, items| !items.is_empty());
    log
}

/// The changelog as text: a heading line, a legend, then per section its items, one a
/// line, `  <mark> <name>: <detail>` (marks: + added, ~ changed, ! deprecated,
/// - removed).
pub fn render(a: &Schema, b: &Schema, log: &Changelog) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} → {} {}",
        a.brand.name, a.version, b.brand.name, b.version
    );
    if log.is_empty() {
        out.push_str("no differences\n");
        return out;
    }
    out.push_str("(+ added, ~ changed, ! deprecated, - removed)\n");
    for section in SECTIONS {
        let Some(items) = log.get(section) else {
            continue;
        };
        let _ = writeln!(out, "\n{section}:");
        for (change, name, detail) in items {
            if detail.is_empty() {
                let _ = writeln!(out, "  {} {name}", change.mark());
            } else {
                let _ = writeln!(out, "  {} {name}: {detail}", change.mark());
            }
        }
    }
    out
}
