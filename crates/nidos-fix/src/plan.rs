//! The planner: from a validation's report and opened dataset, finds the fix of each
//! reported issue and computes the new text of every file it would change. Every change answers an issue the
//! validator reported (a file no issue names is never edited, whatever a content fix
//! could find in it). Nothing is written here.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use nidos_dataset::Dataset;
use nidos_schema::{Fix, FixOp, Schema};
use nidos_validate::emit::{FixView, Fixes, Replacement};
use nidos_validate::{FixIndex, Issue, Severity, Validation};

use crate::json_edit::JsonDoc;
use crate::ops::{self, Outcome};
use crate::regions::replacements;
use crate::text_edit;
use crate::FixError;

/// What to fix.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Only issues with these codes (all when empty).
    pub only: Vec<String>,
    /// The version a missing version key gets (default: the schema's version).
    pub version: Option<String>,
}

/// One described change within a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub code: String,
    /// Where the issue this change fixes was reported (the file itself, or a data file
    /// whose sidecar this is).
    pub origin: String,
    pub description: String,
    /// The regions of the file as it was that this change alone replaces, each as small
    /// as the change (empty when the file is not UTF-8 text).
    pub replacements: Vec<Replacement>,
}

/// The new content of one file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileEdit {
    /// Dataset-relative path with a leading `/`.
    pub path: String,
    /// The current content (`None`: the file is created).
    pub before: Option<Vec<u8>>,
    pub after: Vec<u8>,
    pub changes: Vec<Change>,
}

/// Something a fix could not do, or only suggests: left to a person.
#[derive(Clone, Debug, PartialEq)]
pub struct Manual {
    pub code: String,
    pub location: String,
    pub reason: String,
}

/// Every change a fix run would make.
#[derive(Clone, Debug)]
pub struct Plan {
    pub root: PathBuf,
    /// Sorted by path.
    pub edits: Vec<FileEdit>,
    /// Sorted by code, then location.
    pub manual: Vec<Manual>,
    /// Reported issues (of the selected codes) whose rule has no fix at all.
    pub without_fix: usize,
}

impl Plan {
    /// Each change as a fix of the issue it answers, by the issue's code and location
    /// (for reports that carry fixes: SARIF).
    pub fn fixes(&self) -> Fixes<'_> {
        let mut out = Fixes::new();
        for edit in &self.edits {
            for c in &edit.changes {
                out.entry((c.code.as_str(), c.origin.as_str()))
                    .or_default()
                    .push(FixView {
                        path: &edit.path,
                        description: &c.description,
                        replacements: &c.replacements,
                    });
            }
        }
        out
    }
}

/// One edit to make in one file.
#[derive(Clone, Debug)]
struct Task<'s> {
    path: String,
    code: String,
    /// Where the issue was reported (the file itself, or a data file whose sidecar
    /// this is).
    origin: String,
    edit: Edit<'s>,
    fix: &'s Fix,
}

#[derive(Clone, Debug)]
enum Edit<'s> {
    Op(&'s FixOp),
    /// The note a `replace_cell` fix adds to the table's sidecar.
    Note {
        column: &'s str,
        key: &'s str,
        text: &'s str,
    },
}

impl Edit<'_> {
    fn identity(&self) -> String {
        format!("{self:?}")
    }
}

/// Plans the fixes of the issues a validation reported (of its root dataset), on the
/// dataset it opened: the run's options (configuration, ignored codes, rows read) hold
/// for the fixes too, and nothing is validated again.
pub fn plan(done: &Validation, opts: &Options) -> Result<Plan, FixError> {
    plan_for(
        &done.schema,
        &done.root,
        &done.dataset,
        &done.report.issues,
        opts,
    )
}

/// [`plan`] from the parts of a run kept elsewhere than in a [`Validation`] (an
/// incremental session's rules, dataset and report: the language server's code
/// actions).
pub fn plan_for(
    schema: &Schema,
    root: &Path,
    ds: &Dataset,
    issues: &[Issue],
    opts: &Options,
) -> Result<Plan, FixError> {
    if let Some(v) = &opts.version {
        if !schema.versions.is_empty() && !schema.versions.contains(v) {
            return Err(FixError::Version {
                version: v.clone(),
                known: schema.versions.join(", "),
            });
        }
    }
    Ok(plan_issues(schema, root, ds, issues, opts))
}

/// Plans the fixes of `issues`, a report of the dataset `ds` at `root`.
fn plan_issues(
    schema: &Schema,
    root: &Path,
    ds: &Dataset,
    issues: &[Issue],
    opts: &Options,
) -> Plan {
    let index = FixIndex::new(schema);
    let wanted = |code: &str| opts.only.is_empty() || opts.only.iter().any(|c| c == code);

    let mut tasks: Vec<Task<'_>> = Vec::new();
    let mut manual = Vec::new();
    let mut without_fix = 0;
    // An issue the configuration says to ignore is not repaired either.
    let planned = issues
        .iter()
        .filter(|i| i.severity != Severity::Ignore && wanted(i.code()));
    for issue in planned {
        let Some(fix) = index.fix_for(issue) else {
            without_fix += 1;
            continue;
        };
        if let FixOp::Suggest = fix.op {
            manual.push(Manual {
                code: issue.code().to_string(),
                location: issue.location.to_string(),
                reason: fix.suggestion.clone().unwrap_or_default(),
            });
            continue;
        }
        issue_tasks(ds, issue, fix, &mut tasks, &mut manual);
    }
    // One task per (file, code, edit).
    let mut seen = std::collections::HashSet::new();
    let mut by_file: BTreeMap<String, Vec<Task<'_>>> = BTreeMap::new();
    for t in tasks {
        if seen.insert((t.path.clone(), t.code.clone(), t.edit.identity())) {
            by_file.entry(t.path.clone()).or_default().push(t);
        }
    }

    let mut edits = Vec::new();
    for (path, tasks) in by_file {
        if let Some(edit) = run_file(schema, root, &path, &tasks, opts, &mut manual) {
            edits.push(edit);
        }
    }
    manual
        .sort_by(|a, b| (&a.code, &a.location, &a.reason).cmp(&(&b.code, &b.location, &b.reason)));
    manual.dedup();
    Plan {
        root: root.to_path_buf(),
        edits,
        manual,
        without_fix,
    }
}

/// The files a reported issue's fix edits.
fn issue_tasks<'s>(
    ds: &Dataset,
    issue: &Issue,
    fix: &'s Fix,
    tasks: &mut Vec<Task<'s>>,
    manual: &mut Vec<Manual>,
) {
    let location = issue.location.to_string();
    let task = |path: String, edit: Edit<'s>| Task {
        path,
        code: issue.code().to_string(),
        origin: location.clone(),
        edit,
        fix,
    };
    let keys: Vec<&str> = match &fix.op {
        FixOp::Set { key, .. } | FixOp::Reformat { key, .. } => vec![key],
        FixOp::Rename { from, .. } => vec![from],
        FixOp::Replace { keys, .. } => keys.iter().map(String::as_str).collect(),
        FixOp::ReplaceCell {
            column,
            note: Some((key, text)),
            ..
        } => {
            tasks.push(task(location.clone(), Edit::Op(&fix.op)));
            match sidecar_of_table(&location) {
                Some(sidecar) => tasks.push(task(sidecar, Edit::Note { column, key, text })),
                None => manual.push(Manual {
                    code: issue.code().to_string(),
                    location: location.clone(),
                    reason: "the table has no sidecar name to note the change in".into(),
                }),
            }
            return;
        }
        _ => {
            tasks.push(task(location.clone(), Edit::Op(&fix.op)));
            return;
        }
    };
    if location.ends_with(".json") {
        tasks.push(task(location.clone(), Edit::Op(&fix.op)));
        return;
    }
    // The issue is reported on a data file: edit the sidecar that sets the key.
    let Some(entry) = ds.find(&location) else {
        return;
    };
    let ctx = ds.context(entry);
    let sources = ctx.sidecar_sources();
    let mut found = false;
    for key in keys {
        if let Some(src) = sources.get(key) {
            found = true;
            tasks.push(task(src.clone(), Edit::Op(&fix.op)));
        }
    }
    if !found {
        manual.push(Manual {
            code: issue.code().to_string(),
            location,
            reason: "no sidecar of this file sets the key the fix edits".into(),
        });
    }
}

/// `…/participants.tsv` → `…/participants.json`.
fn sidecar_of_table(path: &str) -> Option<String> {
    path.strip_suffix(".tsv").map(|stem| format!("{stem}.json"))
}

/// Why a dataset path may not be written, if it may not.
pub(crate) fn unsafe_target(root: &Path, path: &str) -> Result<PathBuf, String> {
    let rel = Path::new(path.trim_start_matches('/'));
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err("not a plain path inside the dataset".into());
    }
    if !(path.ends_with(".json") || path.ends_with(".tsv")) {
        return Err("not a JSON or TSV file: data files are never edited".into());
    }
    let full = root.join(rel);
    // No directory on the way may be a link (it could lead out of the dataset).
    let canon_root = root
        .canonicalize()
        .map_err(|e| format!("cannot resolve the dataset root: {e}"))?;
    if let Some(parent) = rel.parent() {
        let canon = full
            .parent()
            .map(Path::canonicalize)
            .transpose()
            .map_err(|e| format!("cannot resolve the directory: {e}"))?;
        if canon.as_deref() != Some(canon_root.join(parent).as_path()) {
            return Err("the directory is reached through a symbolic link".into());
        }
    }
    match std::fs::symlink_metadata(&full) {
        Ok(m) if m.file_type().is_symlink() => {
            Err("a symbolic link (an annexed file?): not written; unlock it to fix it".into())
        }
        Ok(m) if !m.is_file() => Err("not a regular file".into()),
        _ => Ok(full),
    }
}

/// Runs a file's tasks on its content; the edit, when anything changed.
fn run_file(
    schema: &Schema,
    root: &Path,
    path: &str,
    tasks: &[Task<'_>],
    opts: &Options,
    manual: &mut Vec<Manual>,
) -> Option<FileEdit> {
    let refuse = |manual: &mut Vec<Manual>, t: &Task<'_>, why: &str| {
        let mut reason = format!("{path}: {why}");
        if let Some(s) = &t.fix.suggestion {
            reason.push_str(". ");
            reason.push_str(s);
        }
        manual.push(Manual {
            code: t.code.clone(),
            location: t.origin.clone(),
            reason,
        });
    };
    let full = match unsafe_target(root, path) {
        Ok(f) => f,
        Err(why) => {
            for t in tasks {
                refuse(manual, t, &why);
            }
            return None;
        }
    };
    // The guarded read: a regular file (a FIFO would block), within the largest size a
    // table is read whole.
    let before = match nidos_dataset::guarded::read_regular(
        &full,
        nidos_dataset::load::MAX_WHOLE_TABLE_BYTES,
    ) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            for t in tasks {
                refuse(manual, t, &format!("cannot be read: {e}"));
            }
            return None;
        }
    };
    let mut bytes = before.clone().unwrap_or_default();
    let mut changes = Vec::new();
    for t in tasks {
        let outcome = match (&t.edit, before.is_some()) {
            (Edit::Note { .. }, _) | (_, true) => {
                run_task(schema, t, &mut bytes, opts, before.is_none())
            }
            (Edit::Op(_), false) => Outcome::Refused("the file does not exist".into()),
        };
        match outcome {
            Outcome::Changed(description) => {
                // What this task alone does to the file as it was.
                let alone = if tasks.len() == 1 {
                    bytes.clone()
                } else {
                    let mut alone = before.clone().unwrap_or_default();
                    run_task(schema, t, &mut alone, opts, before.is_none());
                    alone
                };
                let was = before.as_deref().unwrap_or_default();
                changes.push(Change {
                    code: t.code.clone(),
                    origin: t.origin.clone(),
                    description,
                    replacements: replacements(was, &alone).unwrap_or_default(),
                })
            }
            Outcome::Unchanged => {}
            Outcome::Refused(why) => refuse(manual, t, &why),
        }
    }
    let changed = match &before {
        Some(b) => *b != bytes,
        None => !changes.is_empty(),
    };
    changed.then(|| FileEdit {
        path: path.to_owned(),
        before,
        after: bytes,
        changes,
    })
}

/// Applies one task to a file's content.
fn run_task(
    schema: &Schema,
    t: &Task<'_>,
    bytes: &mut Vec<u8>,
    opts: &Options,
    new: bool,
) -> Outcome {
    let json =
        |bytes: &mut Vec<u8>,
         edit: &dyn Fn(&mut serde_json::Map<String, serde_json::Value>) -> Outcome| {
            let mut doc = if new && bytes.is_empty() {
                JsonDoc::empty()
            } else {
                match JsonDoc::parse(bytes) {
                    Ok(d) => d,
                    Err(why) => return Outcome::Refused(why),
                }
            };
            let outcome = edit(&mut doc.map);
            if let Outcome::Changed(_) = outcome {
                match doc.render() {
                    Ok(text) => *bytes = text,
                    Err(e) => return Outcome::Refused(format!("cannot write the JSON: {e}")),
                }
            }
            outcome
        };
    let op = match &t.edit {
        Edit::Note { column, key, text } => {
            return json(bytes, &|m| ops::note_column(m, column, key, text))
        }
        Edit::Op(op) => *op,
    };
    match op {
        FixOp::Set { key, value } => json(bytes, &|m| ops::set(m, key, value)),
        FixOp::Rename { from, to, as_list } => json(bytes, &|m| ops::rename(m, from, to, *as_list)),
        FixOp::Replace { keys, from, to } => json(bytes, &|m| ops::replace(m, keys, from, to)),
        FixOp::Reformat { key, pattern, to } => json(bytes, &|m| {
            ops::reformat(m, key, pattern, to, &schema.brand.uri_scheme)
        }),
        FixOp::AddVersion => {
            let version = opts
                .version
                .clone()
                .unwrap_or_else(|| schema.version.clone());
            json(bytes, &|m| {
                ops::add_version(m, &schema.brand.version_key, &version)
            })
        }
        FixOp::ReplaceCell {
            column, from, to, ..
        } => match text_edit::replace_cells(bytes, column, from, to) {
            Ok(Some((out, n))) => {
                *bytes = out;
                Outcome::Changed(format!("{column}: {n} cell(s) {from:?} → {to:?}"))
            }
            Ok(None) => Outcome::Unchanged,
            Err(why) => Outcome::Refused(why),
        },
        FixOp::RemoveBom => match text_edit::remove_bom(bytes) {
            Some(out) => {
                *bytes = out;
                Outcome::Changed("removed the byte-order mark".into())
            }
            None => Outcome::Refused("the encoding problem is not a byte-order mark".into()),
        },
        FixOp::NormalizeLines => match text_edit::normalize_lines(bytes) {
            Some(out) => {
                *bytes = out;
                Outcome::Changed("line ends made LF, trailing empty lines removed".into())
            }
            None => Outcome::Unchanged,
        },
        FixOp::Suggest => Outcome::Unchanged,
    }
}
