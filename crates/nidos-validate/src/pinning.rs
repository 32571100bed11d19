//! Version pinning that explains itself. A dataset is validated with the rules of the
//! version it declares; a file, datatype, field or value that only a later version
//! defines then gets an issue (`NOT_INCLUDED`, a type or value error…). This module finds
//! the issues that a later pinned version would not raise and says so in their message:
//! from which version the thing is defined, and what to do about it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use nidos_schema::{compare_versions, Changes, Schema, Subject};

use crate::issue::Issue;
use crate::report::Report;

/// Parts of the rules that decide whether a file's name is accepted.
const NAME_RULES: &[&str] = &[
    "rules.files",
    "rules.directories",
    "rules.entities",
    "rules.modalities",
    "objects.files",
    "objects.entities",
    "objects.suffixes",
    "objects.extensions",
    "objects.datatypes",
    "objects.modalities",
    "objects.formats",
];
/// Parts that decide a table's columns and their values.
const TABLE_RULES: &[&str] = &[
    "rules.tabular_data",
    "objects.columns",
    "objects.formats",
    "objects.enums",
];
/// Parts that decide a JSON file's fields and their values.
const FIELD_RULES: &[&str] = &[
    "rules.sidecars",
    "rules.json",
    "rules.dataset_metadata",
    "objects.metadata",
    "objects.formats",
    "objects.enums",
];

/// Codes whose issue can mean "defined only in a later version", with the parts of the
/// rules a later version must change to judge such an issue differently.
const VERSIONED_CODES: &[(&str, &[&str])] = &[
    ("NOT_INCLUDED", NAME_RULES),
    ("JSON_SCHEMA_VALIDATION_ERROR", FIELD_RULES),
    ("TSV_VALUE_INCORRECT_TYPE", TABLE_RULES),
    ("TSV_ADDITIONAL_COLUMNS_UNDEFINED", TABLE_RULES),
    ("TSV_ADDITIONAL_COLUMNS_MUST_DEFINE", TABLE_RULES),
    ("SIDECAR_FIELD_UNKNOWN", FIELD_RULES),
    ("DATATYPE_MISMATCH", NAME_RULES),
    ("INVALID_ENTITY_LABEL", NAME_RULES),
    ("ENTITY_NOT_ALLOWED", NAME_RULES),
];

/// The parts of the rules that decide issues of `code`, when it is a versioned code.
fn sections_of(code: &str) -> Option<&'static [&'static str]> {
    VERSIONED_CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, s)| *s)
}

/// Where the files that can change the note of `issue` are ([`scope_of`]), when its
/// code is one a later version can judge differently.
pub(crate) fn versioned_scope(issue: &Issue) -> Option<String> {
    sections_of(issue.code()).map(|_| scope_of(issue))
}

/// Whether `issue`'s code is one a later version can judge differently.
pub(crate) fn versioned(issue: &Issue) -> bool {
    sections_of(issue.code()).is_some()
}

/// What an issue is about: the words of its sub-code (a field or column name, whole)
/// and of its location's folder and file names (entities, labels, suffix), these also
/// cut at their underscores (`dataset_description` names itself, `01_task` holds an
/// entity), numbers left out; the words after the first dot of the file name are its
/// extension's.
fn subject_of(issue: &Issue) -> Subject<'_> {
    fn words(text: &str) -> impl Iterator<Item = &str> {
        text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .flat_map(|w| std::iter::once(w).chain(w.split('_')))
            .filter(|w| !w.is_empty() && !w.bytes().all(|b| b.is_ascii_digit()))
    }
    let location: &str = &issue.location;
    let (folders, file) = location.rsplit_once('/').unwrap_or(("", location));
    let (stem, extension) = file.split_once('.').unwrap_or((file, ""));
    let mut names: HashSet<&str> = issue
        .sub_code()
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    names.extend(words(folders));
    names.extend(words(stem));
    Subject {
        names,
        extension: words(extension).collect(),
    }
}

/// The key an issue is recognised by across two reports.
fn key(i: &Issue) -> (&str, &str, &str) {
    (i.code(), i.sub_code(), &i.location)
}

/// What a later version's run must cover to judge the issues still in question.
#[derive(Debug, Default)]
pub struct Recheck {
    /// The files and folders whose files can raise them (see [`scope_of`]; for
    /// `Options::only_under`).
    pub scope: HashSet<String>,
    /// The kinds of selector rules that decide their codes (names of
    /// [`nidos_schema::RuleKind`]s, from the `rules.*` parts in [`VERSIONED_CODES`]; for
    /// `Options::only_kinds`). The other kinds need not be applied.
    pub kinds: HashSet<&'static str>,
}

/// What the dataset says about itself, for the advice.
pub struct Declared<'a> {
    /// The version the dataset declares (as written).
    pub version: &'a str,
    /// The brand's version key (`StdVersion`, `BIDSVersion`).
    pub version_key: &'a str,
}

/// Annotates the issues of `report` that a later version would not raise. `later` lists
/// the supported versions after the one used, oldest first; `load` gives the rules of
/// one of them (None: it could not) and `validate` validates the same dataset with them;
/// it is given what the issues in question need ([`Recheck`]), and may validate only the
/// files there with only those kinds of rules (the dataset-level checks must still run).
/// `changes` (computed only when some issue has such a code: the annotated entries of
/// the rules the versions come from, when known) tells, for each issue, the versions at
/// which an entry about its subject, in the parts of the rules that decide it, appears
/// or goes away: only those can first judge it differently (without `changes`, every
/// later version can).
/// The rules and changes come shared, so a caller about to exit can keep them rather
/// than pay for freeing them here.
/// Returns how many issues were annotated. Nothing is loaded or validated unless some
/// issue has one of the codes that can depend on the version (and, with `changes`, a
/// subject a later version touches); then those versions are tried (the newest first
/// when there are several, dropping the issues it still raises; then oldest first), each
/// issue annotated with the first of its own at which it is gone, until none is left to
/// place.
pub fn explain_later_versions(
    report: &mut Report,
    current: &Schema,
    declared: &Declared<'_>,
    later: &[&str],
    changes: &dyn Fn() -> Option<Arc<Changes>>,
    load: &dyn Fn(&str) -> Option<Arc<Schema>>,
    validate: &dyn Fn(&Schema, &Recheck) -> Option<Report>,
) -> usize {
    if !report
        .issues
        .iter()
        .any(|i| sections_of(i.code()).is_some())
    {
        return 0;
    }
    let changes = changes();
    // The first supported later version at or after `v`.
    let supported_from = |v: &str| {
        later
            .iter()
            .copied()
            .find(|l| compare_versions(l, v) != std::cmp::Ordering::Less)
    };
    // Issue index → the later versions that may judge it differently.
    // The versions are the union of those of each word of the subject, and issues share
    // most words (`sub`, `func`, `events`…): each (code, word) is asked once.
    let mut by_word: HashMap<(&str, bool, &str), Vec<&str>> = HashMap::new();
    let mut open: Vec<(usize, HashSet<&str>)> = Vec::new();
    for (n, i) in report.issues.iter().enumerate() {
        let Some(sections) = sections_of(i.code()) else {
            continue;
        };
        let versions: HashSet<&str> = match &changes {
            None => later.iter().copied().collect(),
            Some(c) => {
                let subject = subject_of(i);
                // The empty word stands for the code alone (checks that raise it).
                let words =
                    std::iter::once((false, "")).chain(subject.names.iter().map(|w| (false, *w)));
                let words = words.chain(subject.extension.iter().map(|w| (true, *w)));
                let mut versions = HashSet::new();
                for (extension, word) in words {
                    let found = by_word
                        .entry((i.code().as_ref(), extension, word))
                        .or_insert_with(|| {
                            let one: HashSet<&str> =
                                (!word.is_empty()).then_some(word).into_iter().collect();
                            let alone = if extension {
                                Subject {
                                    names: HashSet::new(),
                                    extension: one,
                                }
                            } else {
                                Subject {
                                    names: one,
                                    extension: HashSet::new(),
                                }
                            };
                            c.versions_affecting(&current.version, sections, i.code(), &alone)
                                .into_iter()
                                .filter_map(supported_from)
                                .collect()
                        });
                    versions.extend(found.iter().copied());
                }
                versions
            }
        };
        if !versions.is_empty() {
            open.push((n, versions));
        }
    }
    if open.is_empty() {
        return 0;
    }
    let recheck = Recheck {
        scope: open
            .iter()
            .map(|(n, _)| scope_of(&report.issues[*n]))
            .collect(),
        kinds: open
            .iter()
            .filter_map(|(n, _)| sections_of(report.issues[*n].code()))
            .flatten()
            .filter_map(|s| s.strip_prefix("rules."))
            .filter_map(|node| nidos_schema::rule_kind(node))
            .map(|k| k.name)
            .collect(),
    };
    let mut loaded: HashMap<&str, Arc<Schema>> = HashMap::new();
    // Issue index → the first version without it.
    let mut since: HashMap<usize, &str> = HashMap::new();
    let wanted: HashSet<&str> = open.iter().flat_map(|(_, vs)| vs.iter().copied()).collect();
    let mut order: Vec<&str> = later
        .iter()
        .copied()
        .filter(|v| wanted.contains(v))
        .collect();
    // With several versions in question the newest goes first: an issue it still raises
    // is not one that raising the version removes, and that one run usually settles
    // most of them. The others then go oldest first.
    let newest = (order.len() > 1).then(|| later.last().copied()).flatten();
    if let Some(newest) = newest {
        order.retain(|v| *v != newest);
        order.insert(0, newest);
    }
    for version in order {
        if Some(version) != newest && !open.iter().any(|(_, vs)| vs.contains(version)) {
            continue;
        }
        let Some(schema) = load(version) else {
            continue;
        };
        let Some(r) = validate(&schema, &recheck) else {
            continue;
        };
        loaded.insert(version, schema);
        let present: crate::issue::FastSet<_> = r.issues.iter().map(key).collect();
        if Some(version) == newest {
            // Only the issues gone at the newest stay open (placed at it, failing an
            // earlier version without them).
            open.retain(|(n, _)| !present.contains(&key(&report.issues[*n])));
            continue;
        }
        open.retain(|(n, vs)| {
            if vs.contains(version) && !present.contains(&key(&report.issues[*n])) {
                since.insert(*n, version);
                false
            } else {
                true
            }
        });
        if open.is_empty() {
            break;
        }
    }
    if let Some(newest) = newest {
        for (n, _) in open {
            since.insert(n, newest);
        }
    }
    let count = since.len();
    for (n, version) in since {
        let issue = &mut report.issues[n];
        let datatype = loaded
            .get(version)
            .and_then(|later| new_datatype(&issue.location, current, later));
        let what = match issue.code().as_ref() {
            "NOT_INCLUDED" if datatype.is_some() => datatype.as_deref().unwrap_or_default(),
            "NOT_INCLUDED" if issue.location.ends_with('/') => "this directory is",
            "NOT_INCLUDED" => "this file is",
            "TSV_ADDITIONAL_COLUMNS_UNDEFINED" | "TSV_ADDITIONAL_COLUMNS_MUST_DEFINE" => {
                "this column is"
            }
            "SIDECAR_FIELD_UNKNOWN" => "this field is",
            _ => "this value is",
        };
        let advice = format!(
            "{what} defined from version {version}; this dataset declares {} {}: raise {}, or validate with --std-version {version}",
            declared.version_key, declared.version, declared.version_key
        );
        let text = match issue.issue_message() {
            Some(m) => format!("{m} ({advice})"),
            None => advice,
        };
        *issue = issue.clone().message(text);
    }
    count
}

/// Versioned codes that only the check of the file they are located at raises: its name
/// (`NOT_INCLUDED`) or its own table's columns (the tabular rules apply to the table
/// file itself).
const RAISED_BY_OWN_FILE: &[&str] = &[
    "NOT_INCLUDED",
    "TSV_VALUE_INCORRECT_TYPE",
    "TSV_ADDITIONAL_COLUMNS_UNDEFINED",
    "TSV_ADDITIONAL_COLUMNS_MUST_DEFINE",
];

/// Where the files that can raise `issue` are: a name or table issue at a file
/// ([`RAISED_BY_OWN_FILE`]) only by that file, so its own path; any other by a file at or
/// below the folder of its location (the file itself, a data file that inherits a
/// sidecar there, or one associated with it), so that folder with a trailing `/`.
fn scope_of(issue: &Issue) -> String {
    let at = issue.location.as_ref();
    if RAISED_BY_OWN_FILE.contains(&issue.code().as_ref())
        && !at.ends_with('/')
        && at.starts_with('/')
    {
        return at.to_owned();
    }
    let at = at.trim_end_matches('/');
    match at.rfind('/') {
        Some(i) => at[..=i].to_owned(),
        None => "/".to_owned(),
    }
}

/// "EMG data is" when the file sits in a datatype folder that the `later` rules define
/// and the current rules do not.
fn new_datatype(location: &str, current: &Schema, later: &Schema) -> Option<String> {
    let schema = later;
    let known = |s: &Schema, d: &str| s.raw.pointer(&format!("/objects/datatypes/{d}")).is_some();
    location
        .trim_end_matches('/')
        .split('/')
        .filter(|d| d.len() > 1 && !d.contains('-') && !d.contains('.'))
        .find(|d| known(schema, d) && !known(current, d))
        .map(|d| format!("{} data is", d.to_uppercase()))
}

#[cfg(test)]
mod tests {
    use super::{explain_later_versions, scope_of, subject_of, Declared, Recheck};
    use crate::issue::{Issue, Severity};
    use crate::report::Report;
    use nidos_schema::{compare_versions, Changes, Schema};
    use std::cell::RefCell;
    use std::sync::Arc;

    /// Which later versions are loaded, and what each issue is annotated with, for a
    /// rule tree whose `objects.files` entries appear at the given versions, and files
    /// (`/NAME.txt`) that stop being reported at the given versions (`None`: never).
    fn run(entries: &[(&str, &str)], files: &[(&str, Option<&str>)]) -> (Vec<String>, Vec<String>) {
        let later = ["1.9.0", "1.10.0", "1.11.1"];
        let mut objects = serde_json::Map::new();
        for (i, (name, since)) in entries.iter().enumerate() {
            objects.insert(
                format!("entry{i}"),
                serde_json::json!({"value": format!("{name}.txt"), "since": since}),
            );
        }
        let tree = serde_json::json!({"objects": {"files": objects}});
        let changes = Changes::of_tree(&tree, None).expect("indexes");
        let base = Schema::bundled_for(None, Some("1.8.0")).expect("loads");
        let at = |v: &str| {
            let mut s = base.clone();
            s.version = v.to_owned();
            s
        };
        let issue =
            |name: &str| Issue::new("NOT_INCLUDED", Severity::Error, format!("/{name}.txt"));
        let mut report = Report {
            issues: files.iter().map(|(f, _)| issue(f)).collect(),
            ..Report::default()
        };
        let loads = RefCell::new(Vec::new());
        let load = |v: &str| {
            loads.borrow_mut().push(v.to_owned());
            Some(Arc::new(at(v)))
        };
        let validate = |s: &Schema, _: &Recheck| {
            let issues = files
                .iter()
                .filter(|(_, gone)| {
                    gone.is_none_or(|g| compare_versions(&s.version, g) == std::cmp::Ordering::Less)
                })
                .map(|(f, _)| issue(f))
                .collect();
            Some(Report {
                issues,
                ..Report::default()
            })
        };
        explain_later_versions(
            &mut report,
            &at("1.8.0"),
            &Declared {
                version: "1.0.0",
                version_key: "StdVersion",
            },
            &later,
            &|| Some(Arc::new(changes.clone())),
            &load,
            &validate,
        );
        let notes = report
            .issues
            .iter()
            .map(|i| {
                let m = i.issue_message().unwrap_or_default();
                match m.split("defined from version ").nth(1) {
                    Some(rest) => {
                        format!("{} {}", i.location, rest.split(';').next().unwrap_or(""))
                    }
                    None => format!("{} -", i.location),
                }
            })
            .collect();
        (loads.into_inner(), notes)
    }

    #[test]
    fn only_the_versions_that_change_an_issue_are_loaded() {
        // One version in question: loaded alone.
        let (loads, notes) = run(&[("cite", "1.9.0")], &[("cite", Some("1.9.0"))]);
        assert_eq!(loads, ["1.9.0"]);
        assert_eq!(notes, ["/cite.txt 1.9.0"]);
        // Several: the newest first; what it still raises is left alone, the rest is
        // placed at the first of its own versions without it.
        let (loads, notes) = run(
            &[
                ("cite", "1.9.0"),
                ("gone", "1.10.0"),
                ("gone", "1.11.1"),
                ("stays", "1.9.0"),
                ("stays", "1.10.0"),
            ],
            &[
                ("cite", Some("1.9.0")),
                ("gone", Some("1.10.0")),
                ("stays", None),
            ],
        );
        assert_eq!(loads, ["1.11.1", "1.9.0", "1.10.0"]);
        assert_eq!(
            notes,
            ["/cite.txt 1.9.0", "/gone.txt 1.10.0", "/stays.txt -"]
        );
        // The newest runs first even when no issue names it.
        let (loads, notes) = run(
            &[("stays", "1.9.0"), ("stays", "1.10.0")],
            &[("stays", None)],
        );
        assert_eq!(loads, ["1.11.1"]);
        assert_eq!(notes, ["/stays.txt -"]);
        // An issue no later entry is about loads nothing.
        let (loads, _) = run(&[("other", "1.9.0")], &[("stays", None)]);
        assert!(loads.is_empty());
    }

    /// The kinds of selector rules a later version's run applies: those that decide the
    /// codes of the issues in question (file names are always checked).
    #[test]
    fn a_recheck_applies_only_the_rule_kinds_that_decide_its_issues() {
        let cases: &[(&[&str], &[&str])] = &[
            (&["NOT_INCLUDED"], &[]),
            (&["TSV_ADDITIONAL_COLUMNS_UNDEFINED"], &["tabular_data"]),
            (&["JSON_SCHEMA_VALIDATION_ERROR"], &["json", "sidecars"]),
            (
                &["TSV_VALUE_INCORRECT_TYPE", "NOT_INCLUDED"],
                &["tabular_data"],
            ),
        ];
        let current = Schema::bundled_for(None, Some("1.8.0")).expect("loads");
        let selector_kinds = ["checks", "json", "sidecars", "tabular_data"];
        for (codes, expected) in cases {
            let mut report = Report {
                issues: codes
                    .iter()
                    .map(|c| Issue::new(*c, Severity::Error, "/sub-01/anat/x.tsv"))
                    .collect(),
                ..Report::default()
            };
            let seen = RefCell::new(Vec::new());
            let validate = |_: &Schema, r: &Recheck| {
                let mut kinds: Vec<&str> = r
                    .kinds
                    .iter()
                    .copied()
                    .filter(|k| selector_kinds.contains(k))
                    .collect();
                kinds.sort();
                seen.borrow_mut().push(kinds);
                Some(Report::default())
            };
            explain_later_versions(
                &mut report,
                &current,
                &Declared {
                    version: "1.8.0",
                    version_key: "StdVersion",
                },
                &["1.9.0"],
                &|| None,
                &|_| Some(Arc::new(current.clone())),
                &validate,
            );
            assert_eq!(seen.into_inner(), [expected.to_vec()], "{codes:?}");
        }
    }

    #[test]
    fn a_name_or_table_issue_is_rechecked_on_its_file_and_others_on_their_folder() {
        let cases = [
            ("NOT_INCLUDED", "/CITATION.cff", "/CITATION.cff"),
            (
                "TSV_ADDITIONAL_COLUMNS_UNDEFINED",
                "/sub-01/eeg/sub-01_task-x_events.tsv",
                "/sub-01/eeg/sub-01_task-x_events.tsv",
            ),
            (
                "TSV_VALUE_INCORRECT_TYPE",
                "/participants.tsv",
                "/participants.tsv",
            ),
            (
                "NOT_INCLUDED",
                "/sub-01/emg/x_emg.edf",
                "/sub-01/emg/x_emg.edf",
            ),
            ("NOT_INCLUDED", "/sub-01/foo/", "/sub-01/"),
            (
                "JSON_SCHEMA_VALIDATION_ERROR",
                "/sub-01/fmap/sub-01_phasediff.json",
                "/sub-01/fmap/",
            ),
            ("SIDECAR_FIELD_UNKNOWN", "/task-rest_bold.json", "/"),
            ("JSON_SCHEMA_VALIDATION_ERROR", "", "/"),
        ];
        for (code, location, scope) in cases {
            let issue = Issue::new(code, Severity::Error, location);
            assert_eq!(scope_of(&issue), scope, "{code} at {location}");
        }
    }

    #[test]
    fn the_subject_of_an_issue_is_the_words_of_its_sub_code_and_location() {
        let issue = Issue::new(
            "TSV_ADDITIONAL_COLUMNS_UNDEFINED",
            Severity::Warning,
            "/sub-01/func/sub-01_task-rest_run-1_events.tsv",
        )
        .sub("cash_demean");
        let subject = subject_of(&issue);
        for w in [
            "cash_demean",
            "sub",
            "func",
            "task",
            "rest",
            "run",
            "events",
        ] {
            assert!(subject.names.contains(w), "{w} in {subject:?}");
        }
        for w in ["01", "1", "", "tsv", "cash", "demean"] {
            assert!(!subject.names.contains(w), "{w} in {subject:?}");
        }
        assert_eq!(subject.extension.into_iter().collect::<Vec<_>>(), ["tsv"]);
        let description = Issue::new(
            "JSON_SCHEMA_VALIDATION_ERROR",
            Severity::Error,
            "/dataset_description.json",
        );
        assert!(subject_of(&description)
            .names
            .contains("dataset_description"));
    }
}
