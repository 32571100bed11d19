//! File-name rules: which rule of `rules.files` a file belongs to (NOT_INCLUDED when
//! none), and whether its entities, datatype, extension and location fit that rule.

use nidos_dataset::FileEntry;
use nidos_schema::{Entity, FileRule, Level, Schema};

use crate::issue::{FastMap, Issue, Severity, Sym};

/// What identification decided about a file.
pub(crate) struct Identified<'s> {
    pub rules: Vec<&'s FileRule>,
    /// The matched rules say nothing of entities / extensions / suffixes: the rules
    /// that follow see them blank.
    pub blank_entities: bool,
    pub blank_extension: bool,
    pub blank_suffix: bool,
}

/// The file rules that can claim a file, found by its path or suffix; rules matched by
/// stem (README, CHANGES…) are always candidates.
#[derive(Default)]
pub(crate) struct FileRuleIndex {
    by_path: FastMap<String, Vec<usize>>,
    by_suffix: FastMap<String, Vec<usize>>,
    by_stem: Vec<usize>,
    /// Entity long name → short key, first entity of that name (as [`Schema::entity`]).
    key_of_long: FastMap<String, String>,
    /// Entity short key → its position in the schema's entity order (first of that key).
    rank_of_key: FastMap<String, usize>,
}

impl FileRuleIndex {
    pub(crate) fn new(schema: &Schema) -> FileRuleIndex {
        let mut index = FileRuleIndex::default();
        for (rank, e) in schema.entities.iter().enumerate() {
            index
                .key_of_long
                .entry(e.name.clone())
                .or_insert_with(|| e.key.clone());
            index.rank_of_key.entry(e.key.clone()).or_insert(rank);
        }
        for (i, rule) in schema.file_rules.iter().enumerate() {
            if let Some(path) = &rule.path {
                index.by_path.entry(path.clone()).or_default().push(i);
            }
            if rule.stem.is_some() {
                index.by_stem.push(i);
            }
            for suffix in &rule.suffixes {
                index.by_suffix.entry(suffix.clone()).or_default().push(i);
            }
        }
        index
    }

    /// The short key of an entity's long name; a name the schema lacks is its own key.
    fn key_of<'a>(&'a self, long: &'a str) -> &'a str {
        self.key_of_long.get(long).map_or(long, String::as_str)
    }

    /// The schema's entity of a short key (as [`Schema::entity_by_key`]), with its rank.
    fn entity_by_key<'s>(&self, schema: &'s Schema, key: &str) -> Option<(usize, &'s Entity)> {
        let rank = *self.rank_of_key.get(key)?;
        schema.entities.get(rank).map(|e| (rank, e))
    }

    /// The candidate rules of `file`, ascending.
    fn candidates(&self, file: &FileEntry) -> Vec<usize> {
        let mut out = self.by_stem.clone();
        if let Some(rules) = file
            .path
            .strip_prefix('/')
            .and_then(|p| self.by_path.get(p))
        {
            out.extend_from_slice(rules);
        }
        if let Some(rules) = file
            .name
            .suffix
            .as_deref()
            .and_then(|s| self.by_suffix.get(s))
        {
            out.extend_from_slice(rules);
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

pub(crate) fn identify<'s>(
    schema: &'s Schema,
    index: &FileRuleIndex,
    file: &FileEntry,
    location: &Sym,
    derivative: bool,
    out: &mut Vec<Issue>,
) -> Identified<'s> {
    let datatype = file.datatype.as_deref().unwrap_or("");
    let mut rules: Vec<&FileRule> = index
        .candidates(file)
        .into_iter()
        .filter_map(|i| schema.file_rules.get(i))
        .filter(|r| derivative || r.category != "deriv")
        .filter(|r| nidos_dataset::query::rule_claims(r, file))
        .collect();
    if rules.is_empty() {
        out.push(Issue::new("NOT_INCLUDED", Severity::Error, location));
    }
    if rules.len() > 1 {
        let by_datatype: Vec<&FileRule> = rules
            .iter()
            .copied()
            .filter(|r| r.datatypes.iter().any(|d| d == datatype))
            .collect();
        if !by_datatype.is_empty() {
            rules = by_datatype;
        }
    }
    if rules.len() > 1 {
        let fitting: Vec<&FileRule> = rules
            .iter()
            .copied()
            .filter(|r| r.extensions.is_empty() || r.extensions.contains(&file.name.extension))
            .filter(|r| {
                r.entities.is_empty()
                    || (file.name.stray.is_empty()
                        && file.name.pairs.iter().all(|(k, v)| {
                            !v.is_empty()
                                && r.entities
                                    .keys()
                                    .any(|long| index.key_of_long.get(long.as_str()) == Some(k))
                        }))
            })
            .collect();
        if !fitting.is_empty() {
            rules = fitting;
        }
    }
    Identified {
        blank_entities: rules.iter().all(|r| r.entities.is_empty()),
        blank_extension: rules.iter().all(|r| r.extensions.is_empty()),
        blank_suffix: rules.iter().all(|r| r.suffixes.is_empty()),
        rules,
    }
}

const NO_LABEL: &str = "";

pub(crate) fn validate(
    schema: &Schema,
    index: &FileRuleIndex,
    file: &FileEntry,
    path: &Sym,
    id: &Identified<'_>,
    out: &mut Vec<Issue>,
) {
    if id.blank_entities {
        return;
    }
    let pairs = &file.name.pairs;
    if id.rules.iter().any(|r| !r.suffixes.is_empty())
        && (pairs.iter().any(|(_, v)| v == NO_LABEL) || !file.name.stray.is_empty())
    {
        out.push(Issue::new("ENTITY_WITH_NO_LABEL", Severity::Error, path));
    }
    for (key, label) in pairs {
        let Some((_, entity)) = index.entity_by_key(schema, key) else {
            continue;
        };
        if label.is_empty() {
            continue;
        }
        if let Some(format) = schema.format(&entity.format) {
            if !format.is_match(label) {
                out.push(
                    Issue::new("INVALID_ENTITY_LABEL", Severity::Error, path).message(format!(
                        "entity {key}: label {label:?} is not a valid {}",
                        entity.format
                    )),
                );
            }
        }
    }
    match id.rules.as_slice() {
        [] => {}
        [rule] => rule_issues(index, file, rule, out),
        many => {
            let mut all_fail = true;
            for rule in many {
                let mut scratch = Vec::new();
                rule_issues(index, file, rule, &mut scratch);
                if scratch.is_empty() {
                    all_fail = false;
                    break;
                }
            }
            if all_fail {
                out.push(Issue::new(
                    "ALL_FILENAME_RULES_HAVE_ISSUES",
                    Severity::Error,
                    path,
                ));
            }
        }
    }
    // The name rebuilt in canonical entity order must equal the real one: the schema's
    // entities that the name labels (the first pair of each key), in the schema's order.
    let mut labelled: Vec<(usize, &str, &str)> = Vec::with_capacity(pairs.len());
    for (i, (key, label)) in pairs.iter().enumerate() {
        if label.is_empty() || pairs[..i].iter().any(|(k, _)| k == key) {
            continue;
        }
        if let Some((rank, e)) = index.entity_by_key(schema, key) {
            labelled.push((rank, e.key.as_str(), label.as_str()));
        }
    }
    labelled.sort_unstable_by_key(|&(rank, _, _)| rank);
    let in_order = || labelled.iter().map(|&(_, k, l)| (k, l));
    if !labelled.is_empty() && !canonical_name_is(in_order(), file) {
        let rebuilt: Vec<String> = in_order().map(|(k, l)| format!("{k}-{l}")).collect();
        let expected = format!(
            "{}_{}{}",
            rebuilt.join("_"),
            file.name.suffix.as_deref().unwrap_or(""),
            file.name.extension
        );
        out.push(
            Issue::new("FILENAME_MISMATCH", Severity::Error, path)
                .message(format!("expected the name {expected}")),
        );
    }
}

/// Whether the file's name is `key-label_…_suffix.ext` with `pairs` in that order (a
/// directory's trailing `/` aside), compared piece by piece without building it.
fn canonical_name_is<'a>(
    pairs: impl Iterator<Item = (&'a str, &'a str)>,
    file: &FileEntry,
) -> bool {
    let mut rest = file.file_name();
    for (i, (key, label)) in pairs.enumerate() {
        let Some(r) = (if i == 0 {
            Some(rest)
        } else {
            rest.strip_prefix('_')
        })
        .and_then(|r| r.strip_prefix(key))
        .and_then(|r| r.strip_prefix('-'))
        .and_then(|r| r.strip_prefix(label)) else {
            return false;
        };
        rest = r;
    }
    let tail = rest
        .strip_prefix('_')
        .and_then(|r| r.strip_prefix(file.name.suffix.as_deref().unwrap_or("")));
    tail.is_some_and(|t| t == file.name.extension.trim_end_matches('/'))
}

fn rule_issues<'s>(
    index: &'s FileRuleIndex,
    file: &FileEntry,
    rule: &'s FileRule,
    out: &mut Vec<Issue>,
) {
    let path = file.path.as_str();
    if !rule.entities.is_empty() {
        let key_of = |long: &'s str| index.key_of(long);
        if path.matches('/').count() > 1 {
            let missing: Vec<&str> = rule
                .entities
                .iter()
                .filter(|(_, r)| r.level == Level::Required)
                .map(|(long, _)| key_of(long))
                .filter(|k| file.name.get(k).is_none())
                .collect();
            if !missing.is_empty() {
                out.push(
                    Issue::new("MISSING_REQUIRED_ENTITY", Severity::Error, path)
                        .message(format!("missing required entities: {}", missing.join(", "))),
                );
            }
        }
        let allowed = |k: &str| rule.entities.keys().any(|l| key_of(l) == k);
        let extra: Vec<&str> = file
            .name
            .pairs
            .iter()
            .filter(|(k, v)| v.is_empty() || !allowed(k))
            .map(|(k, _)| k.as_str())
            .chain(file.name.stray.iter().map(String::as_str))
            .collect();
        if !extra.is_empty() {
            out.push(
                Issue::new("ENTITY_NOT_IN_RULE", Severity::Error, path).message(format!(
                    "entities not allowed by {}: {}",
                    rule.id,
                    extra.join(", ")
                )),
            );
        }
        for (long, req) in &rule.entities {
            if let (Some(allowed), Some(label)) = (&req.r#enum, file.name.get(key_of(long))) {
                if !allowed.iter().any(|a| a == label) {
                    out.push(
                        Issue::new("INVALID_ENTITY_LABEL", Severity::Error, path)
                            .message(format!("{long} must be one of {}", allowed.join(", "))),
                    );
                }
            }
        }
    }
    if let Some(dt) = file.datatype.as_deref() {
        if !rule.datatypes.is_empty() && !rule.datatypes.iter().any(|d| d == dt) {
            out.push(
                Issue::new("DATATYPE_MISMATCH", Severity::Error, path).message(format!(
                    "datatype {dt} is not one of {}",
                    rule.datatypes.join(", ")
                )),
            );
        }
    }
    if !rule.extensions.is_empty() && !rule.extensions.contains(&file.name.extension) {
        out.push(
            Issue::new("EXTENSION_MISMATCH", Severity::Error, path).message(format!(
                "extension {:?} is not one of {}",
                file.name.extension,
                rule.extensions.join(", ")
            )),
        );
    }
    location_issues(file, out);
}

/// Files carrying `sub`/`ses` (or `tpl`/`cohort`) entities must sit in the matching folders.
fn location_issues(file: &FileEntry, out: &mut Vec<Issue>) {
    let name = &file.name;
    let path = file.path.as_str();
    let pairs: &[(&str, &str)] = if name.get("tpl").is_none() {
        &[("sub", "ses")]
    } else if name.get("sub").is_none() {
        &[("tpl", "cohort")]
    } else {
        &[]
    };
    // Whether a component of `path` starts with `key-`.
    let has_dir = |key: &str| {
        path.split('/')
            .any(|c| c.strip_prefix(key).is_some_and(|r| r.starts_with('-')))
    };
    for (top, sub) in pairs {
        match name.get(top) {
            Some(label) => {
                let mut expected = String::with_capacity(top.len() + label.len() + 16);
                for part in ["/", top, "-", label, "/"] {
                    expected.push_str(part);
                }
                if let Some(s) = name.get(sub) {
                    for part in [sub, "-", s, "/"] {
                        expected.push_str(part);
                    }
                }
                if !path.starts_with(&expected) {
                    out.push(
                        Issue::new("INVALID_LOCATION", Severity::Error, path)
                            .message(format!("expected under {expected}")),
                    );
                }
            }
            None => {
                let first = path.strip_prefix('/').unwrap_or(path);
                if first.strip_prefix(top).is_some_and(|r| r.starts_with('-')) {
                    out.push(Issue::new("INVALID_LOCATION", Severity::Error, path));
                }
            }
        }
        if name.get(sub).is_none() && has_dir(sub) {
            out.push(
                Issue::new("INVALID_LOCATION", Severity::Error, path)
                    .message(format!("unexpected {sub} directory")),
            );
        }
    }
}

/// Whether a directory (dataset-relative, no trailing `/`) is one the layout allows.
pub(crate) fn directory_known(schema: &Schema, layout: &str, dir: &str) -> bool {
    let name = dir.rsplit('/').next().unwrap_or(dir);
    schema
        .directories
        .iter()
        .filter(|d| d.layout == layout)
        .any(|d| {
            if d.name.as_deref() == Some(name) {
                return true;
            }
            if let Some(entity) = &d.entity {
                let key = schema
                    .entity(entity)
                    .map(|e| e.key.as_str())
                    .unwrap_or(entity.as_str());
                if name
                    .strip_prefix(key)
                    .is_some_and(|rest| rest.starts_with('-'))
                {
                    return true;
                }
            }
            match d.value.as_deref() {
                Some("datatype") => schema.datatypes.values().any(|t| t.value == name),
                Some(_) | None => false,
            }
        })
}
