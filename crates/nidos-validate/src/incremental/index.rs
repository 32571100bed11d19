//! The indexes a session keeps between updates, so that an update after a content
//! edit costs what the edit touches, not what the dataset holds:
//!
//! - which files used each file (the reverse of the records' `used` lists): the files
//!   an edit touches are the edited ones and those that used them;
//! - how many files use each file (the dataset-level checks read only whether a file is
//!   used at all);
//! - how many producers (a file's record, the first file to reach a shared sidecar
//!   value, a dataset-level check) give each issue of the report: when an update takes
//!   the last producer of an issue away, the issue leaves the report, and an issue with
//!   a first producer enters it.
//!
//! [`super::Session::update`] patches the sorted report with what the counts say
//! instead of putting it together again from all the files' parts.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use nidos_dataset::Dataset;

use super::pass::FileResult;
use crate::apply::SeenEntry;
use crate::engine::{Engine, Options};
use crate::issue::{FastMap, FastSet, Issue};

/// An issue as a counted key: equal as issues are equal (rank and `fixable` left out).
#[derive(Clone, Debug)]
pub(crate) struct Counted(pub Issue);

impl PartialEq for Counted {
    fn eq(&self, other: &Counted) -> bool {
        self.0 == other.0
    }
}

impl Eq for Counted {}

impl Hash for Counted {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Fields equality compares, so equal issues hash alike.
        self.0.code().as_str().hash(state);
        self.0.location.as_str().hash(state);
        self.0.sub_code().as_str().hash(state);
        self.0.line_number().hash(state);
        self.0.issue_message().hash(state);
    }
}

/// The kept indexes (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct Index {
    /// Used file → the files whose records used it (paths).
    pub dependents: FastMap<String, FastSet<String>>,
    /// Used file → how many records used it.
    pub used: FastMap<String, u32>,
    /// Issue of the report (with the configured severity) → how many producers give it.
    pub tally: FastMap<Counted, u32>,
}

/// `record`'s issues as the report takes them: those located at the file itself carry
/// its rank (`idx` in path order), every one with its configured severity.
pub(crate) fn contributions(
    idx: usize,
    path: &str,
    record: &FileResult,
    opts: &Options,
) -> Vec<Issue> {
    let rank = u32::try_from(idx)
        .ok()
        .and_then(|i| i.checked_add(1))
        .unwrap_or(0);
    record
        .issues
        .iter()
        .map(|issue| {
            let mut issue = issue.clone();
            if *issue.location == *path {
                issue.rank = rank;
            }
            issue.severity = opts.config.severity_of(&issue);
            issue
        })
        .collect()
}

/// The issue of each shared (sidecar, key) pair of `pairs` as the report takes it (the
/// entry of the first file in path order that reached the pair), among the records
/// `record` gives of the files in `candidates(origin)`.
pub(crate) fn seen_issues<'a>(
    pairs: &FastSet<(String, String)>,
    candidates: impl Fn(&str) -> Vec<String>,
    record: impl Fn(&str) -> Option<&'a FileResult>,
    opts: &Options,
) -> Vec<Issue> {
    let mut out = Vec::new();
    for (origin, key) in pairs {
        let mut best: Option<&SeenEntry> = None;
        for path in candidates(origin) {
            let Some(r) = record(&path) else { continue };
            for e in &r.seen {
                if e.origin == *origin && e.key == *key && best.is_none_or(|b| e.path < b.path) {
                    best = Some(e);
                }
            }
        }
        if let Some(mut issue) = best.and_then(SeenEntry::issue) {
            issue.severity = opts.config.severity_of(&issue);
            out.push(issue);
        }
    }
    out
}

impl Index {
    /// The indexes of `records` for `ds` and the report `issues` made from them; `None`
    /// when the counted issues are not exactly the report's (the session then puts its
    /// reports together whole).
    pub(crate) fn build(
        engine: &Engine<'_>,
        ds: &Dataset,
        records: &HashMap<String, FileResult>,
        hed_failed: Option<&Issue>,
        opts: &Options,
        issues: &[Issue],
    ) -> Option<Index> {
        let mut index = Index::default();
        let mut seen: FastMap<(&str, &str), &SeenEntry> = FastMap::default();
        for (idx, f) in ds.files().iter().enumerate() {
            let Some(record) = records.get(&f.path) else {
                continue;
            };
            for issue in contributions(idx, &f.path, record, opts) {
                *index.tally.entry(Counted(issue)).or_insert(0) += 1;
            }
            for u in &record.used {
                *index.used.entry(u.clone()).or_insert(0) += 1;
                index
                    .dependents
                    .entry(u.clone())
                    .or_default()
                    .insert(f.path.clone());
            }
            for e in &record.seen {
                let slot = seen.entry((e.origin.as_str(), e.key.as_str())).or_insert(e);
                if e.path < slot.path {
                    *slot = e;
                }
            }
        }
        for e in seen.values() {
            if let Some(mut issue) = e.issue() {
                issue.severity = opts.config.severity_of(&issue);
                *index.tally.entry(Counted(issue)).or_insert(0) += 1;
            }
        }
        let used: FastSet<String> = index.used.keys().cloned().collect();
        for mut issue in engine.other_issues(ds, &used, hed_failed, opts) {
            issue.severity = opts.config.severity_of(&issue);
            *index.tally.entry(Counted(issue)).or_insert(0) += 1;
        }
        (index.tally.len() == issues.len()).then_some(index)
    }
}
