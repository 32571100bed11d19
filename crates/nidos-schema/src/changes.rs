//! What the later versions of the bundled rules change: every entry of the tree that
//! carries a `since` or `removed` annotation, with the names it mentions. Version
//! pinning asks it whether a later version can judge an issue differently before
//! loading that version and validating again (see `nidos_validate::pinning`).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde_json::Value;

use crate::error::SchemaErrors;
use crate::version::{compare_versions, is_version};
use crate::yaml::push_key;

/// Keys whose texts are prose, not names: they do not decide what a version accepts.
const PROSE_KEYS: &[&str] = &["description", "display_name"];

/// One annotated entry of the tree.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Change {
    /// Dotted key of the entry (`objects.files.CITATION`).
    path: String,
    /// The versions at which it appears (`since`) or goes away (`removed`).
    versions: Vec<String>,
    /// The names it mentions: its own key, the keys and the words of the texts below it
    /// (prose left out). Only needed to build [`Changes::by_name`], so not kept in the
    /// precompiled form.
    #[serde(skip)]
    names: BTreeSet<String>,
}

/// The annotated entries of a rule tree, and which of them mention each name (an
/// ordered map, so the precompiled form is the same at every build).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Changes {
    list: Vec<Change>,
    by_name: BTreeMap<String, Vec<usize>>,
}

impl From<Vec<Change>> for Changes {
    fn from(list: Vec<Change>) -> Changes {
        let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, c) in list.iter().enumerate() {
            for n in &c.names {
                by_name.entry(n.clone()).or_default().push(i);
            }
        }
        Changes { list, by_name }
    }
}

impl Changes {
    /// Gathers the annotated entries of a resolved tree, its names as the brand named
    /// `brand` writes them (`None`: as the tree does).
    pub fn of_tree(tree: &Value, brand: Option<&str>) -> Result<Changes, SchemaErrors> {
        let mut list = Vec::new();
        collect(tree, &mut String::new(), "", &mut list);
        if let Some(tokens) = brand
            .map(|b| crate::brand::tokens_for(tree, b))
            .transpose()
            .map_err(SchemaErrors::single)?
            .flatten()
        {
            for c in &mut list {
                c.names = std::mem::take(&mut c.names)
                    .into_iter()
                    .map(|n| tokens.string(&n).unwrap_or(n))
                    .collect();
            }
        }
        Ok(Changes::from(list))
    }

    /// The versions at which the entry at dotted `path` appears (`since`) or goes away
    /// (`removed`), in that order; empty when it carries neither (present from the first
    /// version on).
    pub fn versions_of(&self, path: &str) -> &[String] {
        self.list
            .iter()
            .find(|c| c.path == path)
            .map(|c| c.versions.as_slice())
            .unwrap_or_default()
    }

    /// The versions after `after` (up to the newest) at which an entry appears or goes
    /// away that lies under one of `sections` (dotted prefixes) and mentions one of
    /// `subject.names`, or defines an extension and mentions one of `subject.extension`,
    /// or lies under `rules.checks` and mentions `code`: the only versions at which an
    /// issue of code `code` about `subject` can first be judged differently. Empty when
    /// no later version can judge it differently.
    pub fn versions_affecting(
        &self,
        after: &str,
        sections: &[&str],
        code: &str,
        subject: &Subject<'_>,
    ) -> BTreeSet<&str> {
        let under = |c: &Change, s: &str| {
            c.path == s || (c.path.starts_with(s) && c.path.as_bytes().get(s.len()) == Some(&b'.'))
        };
        let mentioning = |name: &str| {
            self.by_name
                .get(name)
                .into_iter()
                .flatten()
                .filter_map(|&i| self.list.get(i))
        };
        let mut hits: Vec<&Change> = mentioning(code)
            .filter(|c| under(c, "rules.checks"))
            .collect();
        for n in &subject.names {
            hits.extend(mentioning(n).filter(|c| sections.iter().any(|s| under(c, s))));
        }
        for n in &subject.extension {
            hits.extend(mentioning(n).filter(|c| under(c, "objects.extensions")));
        }
        hits.into_iter()
            .flat_map(|c| c.versions.iter())
            .filter(|v| compare_versions(v, after) == Ordering::Greater)
            .map(String::as_str)
            .collect()
    }
}

/// What an issue is about, as words: `names` (field or column, entities, labels,
/// suffix, folders) and the words of its file's `extension`, which say little alone
/// (every table rule names `.tsv`) and count only against the extensions' definitions.
#[derive(Clone, Debug, Default)]
pub struct Subject<'a> {
    pub names: HashSet<&'a str>,
    pub extension: HashSet<&'a str>,
}

/// The changes of the bundled rules serving `brand` (see [`crate::load_bundled`] for
/// where they come from).
pub fn bundled_changes(brand: Option<&str>) -> Result<Changes, SchemaErrors> {
    match crate::version::bundled_override() {
        Some(dir) => {
            let (raw, _) = crate::yaml::load_tree_raw(&dir)?;
            Changes::of_tree(&crate::yaml::resolve_refs(raw)?, brand)
        }
        None => crate::embedded_changes(brand),
    }
}

fn collect(v: &Value, path: &mut String, key: &str, out: &mut Vec<Change>) {
    match v {
        Value::Object(m) => {
            let versions: Vec<String> = ["since", "removed"]
                .iter()
                .filter_map(|k| m.get(*k).and_then(Value::as_str))
                .filter(|s| is_version(s))
                .map(str::to_owned)
                .collect();
            if !versions.is_empty() {
                let mut names = BTreeSet::new();
                words(key, &mut names);
                names_in(v, &mut names);
                out.push(Change {
                    path: path.clone(),
                    versions,
                    names,
                });
            }
            for (k, x) in m {
                let len = push_key(path, k);
                collect(x, path, k, out);
                path.truncate(len);
            }
        }
        Value::Array(a) => {
            for x in a {
                collect(x, path, key, out);
            }
        }
        _ => {}
    }
}

fn names_in(v: &Value, names: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                words(k, names);
                if !PROSE_KEYS.contains(&k.as_str()) {
                    names_in(x, names);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| names_in(x, names)),
        Value::String(s) => words(s, names),
        _ => {}
    }
}

/// The words of a text: runs of letters, digits and underscores.
fn words(text: &str, names: &mut BTreeSet<String>) {
    for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if !w.is_empty() && !names.contains(w) {
            names.insert(w.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether some later version can judge the issue differently.
    fn affects(c: &Changes, after: &str, sections: &[&str], code: &str, s: &Subject<'_>) -> bool {
        !c.versions_affecting(after, sections, code, s).is_empty()
    }

    #[test]
    fn an_entry_added_later_affects_the_issues_that_name_it() {
        let tree: Value = serde_json::json!({
            "objects": {
                "files": {"CITATION": {"value": "CITATION.cff", "since": "1.9.0"}},
                "columns": {"old_col": {"name": "old_col", "removed": "1.10.0",
                    "description": "mentions cash_demean in prose"}}
            },
            "rules": {"checks": {"x": {"NewCheck": {"since": "1.11.0",
                "issue": {"code": "TSV_VALUE_INCORRECT_TYPE"}}}}}
        });
        let c = Changes::of_tree(&tree, None).unwrap();
        let subject = |w: &[&'static str]| Subject {
            names: w.iter().copied().collect(),
            extension: HashSet::new(),
        };
        let files = ["objects.files", "rules.files"];
        let cite = c.versions_affecting("1.8.0", &files, "NOT_INCLUDED", &subject(&["CITATION"]));
        assert_eq!(cite.into_iter().collect::<Vec<_>>(), ["1.9.0"]);
        assert!(affects(
            &c,
            "1.8.0",
            &files,
            "NOT_INCLUDED",
            &subject(&["CITATION"])
        ));
        assert!(!affects(
            &c,
            "1.9.0",
            &files,
            "NOT_INCLUDED",
            &subject(&["CITATION"])
        ));
        assert!(!affects(
            &c,
            "1.8.0",
            &files,
            "NOT_INCLUDED",
            &subject(&["README"])
        ));
        let cols = ["objects.columns"];
        assert!(affects(&c, "1.9.0", &cols, "X", &subject(&["old_col"])));
        assert!(!affects(&c, "1.10.0", &cols, "X", &subject(&["old_col"])));
        assert!(!affects(
            &c,
            "1.8.0",
            &cols,
            "X",
            &subject(&["cash_demean"])
        ));
        assert!(affects(
            &c,
            "1.8.0",
            &[],
            "TSV_VALUE_INCORRECT_TYPE",
            &subject(&[])
        ));
        assert!(!affects(
            &c,
            "1.11.0",
            &[],
            "TSV_VALUE_INCORRECT_TYPE",
            &subject(&[])
        ));
        // An extension's words count against the extensions' definitions only.
        let cff = Subject {
            names: HashSet::new(),
            extension: ["cff"].into_iter().collect(),
        };
        assert!(!affects(&c, "1.8.0", &files, "NOT_INCLUDED", &cff));
    }
}
