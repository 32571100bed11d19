//! Incremental validation: a dataset validated once, then again after each change,
//! re-checking only the files whose inputs changed.
//!
//! A [`Session`] validates every file on its own and keeps, per file, its issues and
//! what they depended on ([`pass`]); after a change to any set of paths (edits,
//! creations, removals, renames; [`Session::update`]) it decides which files the change
//! touches ([`affected`]), validates those again, and puts the report together from all
//! the files' parts the way a whole run does (the dataset-level checks, the
//! configuration, the order and the summary run again every time; they read the file
//! list, not file contents). The report equals a whole run's (`tests/incremental.rs`,
//! a property test over random changes).
//!
//! Content edits keep the opened dataset (its parsed files, except the edited ones,
//! [`nidos_dataset::Dataset::refresh`]); a file created, removed or renamed walks the
//! dataset again. A change to `dataset_description.json` or the ignore file may change
//! the rules themselves: [`Session::update`] answers [`Outcome::RulesChanged`] and the
//! caller opens a new session.
//!
//! Unsaved contents (an editor's buffers) are given with [`Session::set_overlay`]: the
//! session reads them instead of the files on disk ([`overlay`]).
//!
//! A session borrows its rules (`&Schema`, loaded with [`load_rules`]):
//!
//! ```ignore
//! let (schema, _) = nidos_validate::incremental::load_rules(dir, &request)?;
//! let mut session = Session::new(&schema, dir, &request)?;
//! std::fs::write(dir.join("sub-01/anat/sub-01_T1w.json"), "{}")?;
//! if let Outcome::Updated(delta) = session.update(&["/sub-01/anat/sub-01_T1w.json"])? {
//!     println!("{} new, {} resolved", delta.new.len(), delta.resolved.len());
//! }
//! ```

mod affected;
pub mod cache;
mod delta;
mod index;
mod later_index;
mod overlay;
mod pass;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nidos_dataset::fs::Kind;
use nidos_dataset::{Dataset, OpenOptions};
use nidos_expr::Value;
use nidos_schema::{Schema, Source};

use crate::engine::Engine;
use crate::hed::HedRun;
use crate::issue::{FastMap, FastSet, Issue};
use crate::report::Report;
use crate::run::{Request, RunError};
use affected::{folder, Changes};
pub use delta::{totals, Delta};
use pass::FileResult;

/// What [`Session::update`] did.
#[derive(Debug)]
pub enum Outcome {
    /// The report is up to date; what changed in it.
    Updated(Delta),
    /// The change may choose other rules (the description or the ignore file changed):
    /// open a new session, with rules loaded again.
    RulesChanged,
}

/// The rules for the dataset at `dir` as `request` chooses them (as
/// [`crate::validate`] does), with what choosing them had to say.
pub fn load_rules(dir: &Path, request: &Request) -> Result<(Arc<Schema>, Vec<String>), RunError> {
    crate::run::rules_for(dir, request)
}

/// A dataset validated incrementally (see the module documentation).
pub struct Session<'s> {
    engine: Engine<'s>,
    schema: &'s Schema,
    root: PathBuf,
    request: Request,
    open: OpenOptions,
    buffers: overlay::Buffers,
    ds: Dataset,
    /// Each file's part, by dataset-relative path.
    records: HashMap<String, FileResult>,
    hed: Option<HedRun>,
    hed_failed: Option<Issue>,
    /// The `dataset` object and each subject's `subject` object the records were made
    /// with.
    dataset_value: Value,
    subject_values: HashMap<String, Value>,
    /// Each file's identity when it was read, for the result cache ([`cache`]).
    identities: HashMap<String, Option<cache::Identity>>,
    report: Report,
    /// The indexes kept between updates ([`index`]); `None` until made, or when the
    /// report cannot be patched (later-version notes, warnings left out).
    index: Option<index::Index>,
    /// With later-version notes: the same dataset validated with the newest rules
    /// (HED left out, as [`crate::later`] does), updated with the same changes; its
    /// report gives the summary's count and the newest version's judgement of the notes.
    newest: Option<Box<Session<'static>>>,
    /// With later-version notes, what patching keeps ([`later_index`]).
    later: Option<later_index::LaterIndex>,
    /// Whether the last update patched the report (or left it as it was) rather than
    /// putting it together whole.
    patched: bool,
}

impl<'s> Session<'s> {
    /// Validates the dataset at `dir` with `schema` (chosen for it, [`load_rules`]).
    /// `request.recursive` is not supported here (derivative datasets are left out).
    pub fn new(schema: &'s Schema, dir: &Path, request: &Request) -> Result<Session<'s>, RunError> {
        Session::new_with(schema, dir, request, Vec::new())
    }

    /// As [`Session::new`], with the files at `contents` (dataset-relative paths) read
    /// from the bytes given instead of the disk from the start (an editor's unsaved
    /// buffers; see [`Session::set_overlay`]). A language server opens a session this
    /// way when an unsaved description chose the rules.
    pub fn new_with(
        schema: &'s Schema,
        dir: &Path,
        request: &Request,
        contents: Vec<(String, Vec<u8>)>,
    ) -> Result<Session<'s>, RunError> {
        let mut session = Session::open(schema, dir, request, contents)?;
        session.start_newest()?;
        session.validate_whole();
        Ok(session)
    }

    /// Validates every file and puts the report and the kept indexes together.
    fn validate_whole(&mut self) {
        self.prepare_hed();
        let all: Vec<usize> = (0..self.ds.files().len()).collect();
        self.recheck(&all);
        self.snapshot_values();
        self.report = self.assemble();
        self.reindex();
    }

    /// A session over the opened dataset `ds`, nothing validated yet.
    fn unvalidated(
        schema: &'s Schema,
        root: PathBuf,
        request: Request,
        open: OpenOptions,
        buffers: overlay::Buffers,
        ds: Dataset,
    ) -> Session<'s> {
        Session {
            engine: Engine::new(schema),
            schema,
            root,
            request,
            open,
            buffers,
            ds,
            records: HashMap::new(),
            hed: None,
            hed_failed: None,
            dataset_value: Value::Null,
            subject_values: HashMap::new(),
            identities: HashMap::new(),
            report: Report::default(),
            index: None,
            newest: None,
            later: None,
            patched: false,
        }
    }

    /// The dataset opened, nothing validated yet.
    fn open(
        schema: &'s Schema,
        dir: &Path,
        request: &Request,
        contents: Vec<(String, Vec<u8>)>,
    ) -> Result<Session<'s>, RunError> {
        crate::run::check_modalities(schema, &request.options.blacklist_modalities)?;
        let mut open = crate::run::open_options(dir, request);
        let buffers = overlay::Buffers::default();
        if let Ok(mut map) = buffers.write() {
            for (path, bytes) in contents {
                let rel = relative(dir, &path);
                map.insert(dir.join(rel.trim_start_matches('/')), bytes.into());
            }
        }
        open.fs = Arc::new(overlay::OverlayFs::new(open.fs.clone(), buffers.clone()));
        let ds = open_dataset(schema, dir, &open)?;
        Ok(Session::unvalidated(
            schema,
            dir.to_path_buf(),
            request.clone(),
            open,
            buffers,
            ds,
        ))
    }

    /// With later-version notes, opens and validates the dataset with the newest rules
    /// beside this session (reading the same overlaid contents).
    fn start_newest(&mut self) -> Result<(), RunError> {
        if !self.later_notes() {
            return Ok(());
        }
        let Some(rules) = crate::later::newest_rules(self.schema) else {
            return Ok(());
        };
        let rules: &'static Schema = rules;
        let request = Request {
            explain_later: false,
            recursive: false,
            options: crate::later::newest_options(&self.request.options),
            ..self.request.clone()
        };
        let ds = open_dataset(rules, &self.root, &self.open)?;
        let mut newest = Session::unvalidated(
            rules,
            self.root.clone(),
            request,
            self.open.clone(),
            self.buffers.clone(),
            ds,
        );
        newest.validate_whole();
        self.newest = Some(Box::new(newest));
        Ok(())
    }

    /// The finished run as [`crate::validate`] gives it (no derivative datasets).
    pub fn into_validation(
        self,
        schema: Arc<Schema>,
        warnings: Vec<String>,
    ) -> crate::run::Validation {
        crate::run::Validation {
            root: self.root,
            schema,
            warnings,
            report: self.report,
            dataset: self.ds,
            derivatives: Vec::new(),
        }
    }

    /// The report of the dataset as it is now.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The dataset as last read.
    pub fn dataset(&self) -> &Dataset {
        &self.ds
    }

    /// The rules the session applies.
    pub fn schema(&self) -> &'s Schema {
        self.schema
    }

    /// The dataset directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The issues of the current report located at `path` (dataset-relative), in report
    /// order.
    pub fn issues_at<'a>(&'a self, path: &'a str) -> impl Iterator<Item = &'a Issue> + 'a {
        self.report
            .issues
            .iter()
            .filter(move |i| *i.location == *path)
    }

    /// Reads `path` (dataset-relative) from `content` instead of the disk (an
    /// editor's unsaved buffer), or from the disk again (`None`), and updates the
    /// report. Only files that exist on disk are overlaid.
    pub fn set_overlay(
        &mut self,
        path: &str,
        content: Option<Vec<u8>>,
    ) -> Result<Outcome, RunError> {
        let rel = relative(&self.root, path);
        let abs = self.root.join(rel.trim_start_matches('/'));
        if let Ok(mut map) = self.buffers.write() {
            match content {
                Some(bytes) => map.insert(abs, bytes.into()),
                None => map.remove(&abs),
            };
        }
        self.update(&[rel])
    }

    /// Takes in changes to `paths` (absolute, or relative to the dataset: each edited,
    /// created, removed, or one side of a rename; files or folders) and updates the
    /// report, re-checking the files the changes touch.
    pub fn update<P: AsRef<str>>(&mut self, paths: &[P]) -> Result<Outcome, RunError> {
        let mut rels: Vec<String> = paths
            .iter()
            .map(|p| relative(&self.root, p.as_ref()))
            .collect();
        rels.sort();
        rels.dedup();
        if rels.iter().any(|p| rules_input(p)) {
            return Ok(Outcome::RulesChanged);
        }
        // The newest rules' report first: the notes and the count read it.
        let newest_delta = match self.newest.as_mut() {
            Some(newest) => match newest.update(&rels)? {
                Outcome::Updated(d) => newest.patched.then_some(d),
                Outcome::RulesChanged => return Ok(Outcome::RulesChanged),
            },
            None => None,
        };
        self.patched = false;
        let mut edited: Vec<(usize, u64)> = Vec::new();
        let mut moved: Vec<&str> = Vec::new();
        let mut anchors: Vec<String> = Vec::new();
        let mut hed = false;
        for rel in &rels {
            let abs = self.root.join(rel.trim_start_matches('/'));
            let now = self.open.fs.metadata(&abs).ok();
            let before = self.ds.index_of(rel).map(|i| (i, &self.ds.files()[i]));
            let plain = |m: &nidos_dataset::fs::Meta| !m.is_symlink && m.kind == Some(Kind::File);
            match (before, &now) {
                (Some((i, f)), Some(m)) if plain(m) && !f.is_dir && !f.symlink => {
                    hed |= f.name.extension == ".json" && has_hed(&self.ds.json_value(i));
                    edited.push((i, m.size));
                }
                (None, None) if !self.had_under(rel) => {} // came and went
                _ => {
                    moved.push(rel);
                    let is_dir = now.as_ref().is_some_and(|m| m.kind == Some(Kind::Dir))
                        || self.had_under(rel);
                    anchors.push(if is_dir {
                        format!("{}/", rel.trim_end_matches('/'))
                    } else {
                        folder(rel).to_string()
                    });
                    hed |= rel.ends_with(".json") || is_dir;
                }
            }
        }
        if edited.is_empty() && moved.is_empty() {
            self.patched = true;
            return Ok(Outcome::Updated(Delta::default()));
        }
        let edited_paths: HashSet<&str> = edited
            .iter()
            .map(|&(i, _)| self.ds.files()[i].path.as_str())
            .collect::<HashSet<_>>();
        let edited_paths: HashSet<String> = edited_paths.into_iter().map(str::to_string).collect();
        let facts_before = edited_facts(&self.ds, &edited);
        let values_reset = if moved.is_empty() {
            let reset = self.ds.refresh(&edited);
            for &(i, _) in &edited {
                hed |=
                    self.ds.files()[i].name.extension == ".json" && has_hed(&self.ds.json_value(i));
            }
            reset
        } else {
            self.ds = open_dataset(self.schema, &self.root, &self.open)?;
            true
        };
        let dataset_before = self.dataset_value.clone();
        let subjects_before = if values_reset {
            let before = std::mem::take(&mut self.subject_values);
            self.snapshot_values();
            before
        } else {
            // Nothing the dataset-level values read changed.
            self.subject_values.clone()
        };
        let mut subjects: HashSet<String> = HashSet::new();
        for (s, v) in &self.subject_values {
            if subjects_before.get(s) != Some(v) {
                subjects.insert(s.clone());
            }
        }
        for s in subjects_before.keys() {
            if !self.subject_values.contains_key(s) {
                subjects.insert(s.clone());
            }
        }
        let changes = Changes {
            edited: edited_paths.iter().map(String::as_str).collect(),
            moved,
            anchors,
            dataset: dataset_before != self.dataset_value,
            subjects,
            // Only a dataset with HED has definitions to change.
            hed: hed && self.hed.is_some(),
        };
        let facts_now = if changes.moved.is_empty() {
            edited_facts(&self.ds, &edited)
        } else {
            Vec::new()
        };
        let flags_same = changes.moved.is_empty()
            && facts_now.len() == facts_before.len()
            && facts_now
                .iter()
                .zip(&facts_before)
                .all(|(a, b)| (a.validated, a.readable) == (b.validated, b.readable));
        // The summary after content edits that keep every edited file's task name (and
        // no opaque file among them): only the size changes.
        let size_only = flags_same
            && facts_now
                .iter()
                .zip(&facts_before)
                .all(|(a, b)| !a.opaque && !b.opaque && a.task == b.task);
        let size_delta: i128 = facts_now
            .iter()
            .zip(&facts_before)
            .filter(|(a, _)| a.validated)
            .map(|(a, b)| i128::from(a.size) - i128::from(b.size))
            .sum();
        let hed_before = self.hed_failed.clone();
        // The HED run's memory of checked sidecars is by path: made anew.
        self.prepare_hed();
        let indexed = self.index.is_some()
            && changes.moved.is_empty()
            && !changes.dataset
            && changes.subjects.is_empty()
            && !changes.hed
            && self.records.len() == self.ds.files().len();
        let again = if indexed {
            self.touched_indexed(&changes)
        } else {
            self.touched_scan(&changes)
        };
        let rechecked: Vec<String> = again
            .iter()
            .map(|&i| self.ds.files()[i].path.clone())
            .collect();
        let before: Vec<Option<FileResult>> = rechecked
            .iter()
            .map(|p| self.records.get(p).cloned())
            .collect();
        self.recheck(&again);
        let same_parts = rechecked
            .iter()
            .zip(&before)
            .all(|(p, old)| old.as_ref() == self.records.get(p));
        if same_parts && self.issues_stand(&changes) {
            // Every part the issues are made from is as it was: only the summary, which
            // reads sizes and task names, is made again.
            self.resummarize(size_only, size_delta);
            self.patched = true;
            return Ok(Outcome::Updated(Delta {
                resolved: Vec::new(),
                new: Vec::new(),
                rechecked,
            }));
        }
        let notes_stand = !self.later_notes()
            || (newest_delta.is_some()
                && self
                    .later
                    .as_ref()
                    .is_some_and(|l| !rechecked.iter().any(|p| l.covers(p))));
        if indexed
            && flags_same
            && hed_before == self.hed_failed
            && notes_stand
            && self.patchable(&changes)
        {
            if let Some((resolved, new)) = self.patch(&again, &before) {
                self.resummarize(size_only, size_delta);
                if let (Some(later), Some(d)) = (self.later.as_mut(), &newest_delta) {
                    later.apply(&resolved, &new, &d.resolved, &d.new);
                    if let Some(n) = self.report.summary.newest_rules.as_mut() {
                        n.more = later.more;
                    }
                }
                self.patched = true;
                return Ok(Outcome::Updated(Delta {
                    resolved,
                    new,
                    rechecked,
                }));
            }
        }
        let report = self.assemble();
        let (resolved, new) = delta::between(&self.report, &report);
        self.report = report;
        self.reindex();
        Ok(Outcome::Updated(Delta {
            resolved,
            new,
            rechecked,
        }))
    }

    /// The summary after an update: with `size_only`, the summary as it was with
    /// `size_delta` bytes more; otherwise made again from the dataset.
    fn resummarize(&mut self, size_only: bool, size_delta: i128) {
        let summary = &mut self.report.summary;
        match u64::try_from(i128::from(summary.size) + size_delta) {
            Ok(size) if size_only => summary.size = size,
            _ => {
                // The newest rules' count is the session's to keep.
                let newest = summary.newest_rules.take();
                *summary = self.engine.summary(&self.ds);
                summary.newest_rules = newest;
            }
        }
    }

    /// The files `changes` touch, by a look at every file's record.
    fn touched_scan(&mut self, changes: &Changes<'_>) -> Vec<usize> {
        let old_records = std::mem::take(&mut self.records);
        let mut again = Vec::new();
        for (i, f) in self.ds.files().iter().enumerate() {
            match old_records.get(&f.path) {
                Some(r) if !affected::touched(f, Some(r), changes) => {}
                _ => again.push(i),
            }
        }
        let mut kept = old_records;
        if !changes.moved.is_empty() {
            let live: HashSet<&str> = self.ds.files().iter().map(|f| f.path.as_str()).collect();
            kept.retain(|p, _| live.contains(p.as_str()));
        }
        self.records = kept;
        again
    }

    /// The files content edits touch (`changes` holds nothing else, every file has a
    /// record): the edited files and those that used them, from the kept index (the
    /// same files [`affected::touched`] picks).
    fn touched_indexed(&self, changes: &Changes<'_>) -> Vec<usize> {
        let mut paths: FastSet<&str> = changes.edited.iter().copied().collect();
        if let Some(index) = &self.index {
            for e in &changes.edited {
                if let Some(users) = index.dependents.get(*e) {
                    paths.extend(users.iter().map(String::as_str));
                }
            }
        }
        let mut again: Vec<usize> = paths.iter().filter_map(|p| self.ds.index_of(p)).collect();
        again.sort_unstable();
        again
    }

    /// Whether the report can be patched after `changes` (content edits only): what the
    /// dataset-level checks read is unchanged (no edit at the root, the `dataset` and
    /// `subject` objects and HED definitions as they were), and no left-out warnings
    /// (the later-version notes are the caller's to check: [`later_index`]).
    fn patchable(&self, changes: &Changes<'_>) -> bool {
        changes.moved.is_empty()
            && !changes.dataset
            && changes.subjects.is_empty()
            && !changes.hed
            && !self.request.options.ignore_warnings
            && changes.edited.iter().all(|p| folder(p) != "/")
    }

    /// Whether reports get later-version notes (bundled rules of the version the
    /// dataset declares, with later versions known).
    fn later_notes(&self) -> bool {
        self.request.explain_later
            && matches!(self.request.source, Source::Bundled)
            && self.request.std_version.is_none()
            && crate::later::any_later(self.schema)
    }

    /// Makes the kept indexes again from every file's record and the report.
    fn reindex(&mut self) {
        self.index = None;
        self.later = None;
        if self.request.options.ignore_warnings {
            return;
        }
        if self.later_notes() {
            let Some(newest) = &self.newest else {
                return;
            };
            self.later = Some(later_index::LaterIndex::build(
                &self.report.issues,
                &newest.report.issues,
            ));
        }
        self.ds.set_tree_wanted(self.engine.reads_tree);
        self.index = index::Index::build(
            &self.engine,
            &self.ds,
            &self.records,
            self.hed_failed.as_ref(),
            &self.request.options,
            &self.report.issues,
        );
        self.ds.set_tree_wanted(true);
    }

    /// Patches the report after the files at `again` were validated again (`before`:
    /// their earlier records): the issues whose last producer went away leave it, those
    /// with a first producer enter it. Answers (resolved, new) in report order, or
    /// `None` (the report untouched, the index dropped) when the report must be put
    /// together whole: the set of used files changed (a dataset-level check reads it),
    /// too many issues changed, or the counts disagree with the report.
    fn patch(
        &mut self,
        again: &[usize],
        before: &[Option<FileResult>],
    ) -> Option<(Vec<Issue>, Vec<Issue>)> {
        use std::cmp::Ordering;
        use std::collections::hash_map::Entry;
        let mut index = self.index.take()?;
        let opts = &self.request.options;
        let files = self.ds.files();
        let mut position: FastMap<&str, usize> = FastMap::default();
        for (k, &i) in again.iter().enumerate() {
            position.insert(files.get(i)?.path.as_str(), k);
        }
        // The used files: counts and users, new uses first so that a file used before
        // and after never counts zero.
        let mut union_changed = false;
        for &i in again {
            let path = &files.get(i)?.path;
            for u in &self.records.get(path)?.used {
                let n = index.used.entry(u.clone()).or_insert(0);
                union_changed |= *n == 0;
                *n += 1;
                index
                    .dependents
                    .entry(u.clone())
                    .or_default()
                    .insert(path.clone());
            }
        }
        for (&i, old) in again.iter().zip(before) {
            let path = &files.get(i)?.path;
            for u in &old.as_ref()?.used {
                let n = index.used.get_mut(u)?;
                *n -= 1;
                if *n == 0 {
                    index.used.remove(u);
                    union_changed = true;
                }
                if let Some(users) = index.dependents.get_mut(u) {
                    users.remove(path);
                    if users.is_empty() {
                        index.dependents.remove(u);
                    }
                }
            }
            let now = self.records.get(path)?;
            for u in &now.used {
                index
                    .dependents
                    .entry(u.clone())
                    .or_default()
                    .insert(path.clone());
            }
        }
        if union_changed {
            return None;
        }
        // What the files validated again gave before and give now: their own issues
        // and the shared values they reached.
        let mut pairs: FastSet<(String, String)> = FastSet::default();
        let mut old_issues = Vec::new();
        let mut new_issues = Vec::new();
        for (&i, old) in again.iter().zip(before) {
            let path = &files.get(i)?.path;
            let old = old.as_ref()?;
            let now = self.records.get(path)?;
            for e in old.seen.iter().chain(&now.seen) {
                pairs.insert((e.origin.clone(), e.key.clone()));
            }
            old_issues.extend(index::contributions(i, path, old, opts));
            new_issues.extend(index::contributions(i, path, now, opts));
        }
        let candidates = |origin: &str| -> Vec<String> {
            let mut c: Vec<String> = index
                .dependents
                .get(origin)
                .map(|users| users.iter().cloned().collect())
                .unwrap_or_default();
            c.push(origin.to_string());
            c.extend(position.keys().map(|p| p.to_string()));
            c
        };
        let records = &self.records;
        old_issues.extend(index::seen_issues(
            &pairs,
            candidates,
            |p| match position.get(p) {
                Some(&k) => before.get(k).and_then(Option::as_ref),
                None => records.get(p),
            },
            opts,
        ));
        new_issues.extend(index::seen_issues(
            &pairs,
            candidates,
            |p| records.get(p),
            opts,
        ));
        // The counts.
        let mut gone = Vec::new();
        for issue in old_issues {
            let key = index::Counted(issue);
            match index.tally.get_mut(&key) {
                Some(n) if *n > 1 => *n -= 1,
                Some(_) => {
                    index.tally.remove(&key);
                    gone.push(key.0);
                }
                None => return None,
            }
        }
        let mut came = Vec::new();
        for issue in new_issues {
            match index.tally.entry(index::Counted(issue)) {
                Entry::Occupied(mut e) => *e.get_mut() += 1,
                Entry::Vacant(e) => {
                    came.push(e.key().0.clone());
                    e.insert(1);
                }
            }
        }
        let gone_set: FastSet<index::Counted> = gone.iter().cloned().map(index::Counted).collect();
        let came_set: FastSet<index::Counted> = came.iter().cloned().map(index::Counted).collect();
        gone.retain(|i| !came_set.contains(&index::Counted(i.clone())));
        came.retain(|i| !gone_set.contains(&index::Counted(i.clone())));
        if gone.len() + came.len() > PATCH_MAX {
            return None;
        }
        // A note of a later version depends on the set of issues of its codes.
        if self.later_notes() && gone.iter().chain(&came).any(crate::pinning::versioned) {
            return None;
        }
        // The report: every issue to go found first (nothing is changed when one is
        // missing), then taken out and the new ones put in their places.
        let order = |a: &Issue, b: &Issue| a.cmp_in_report(b, false);
        gone.sort_by(order);
        came.sort_by(order);
        self.engine.mark_fixable(&mut came);
        let issues = &self.report.issues;
        let mut at = Vec::with_capacity(gone.len());
        for x in &gone {
            let lo = issues.partition_point(|i| order(i, x) == Ordering::Less);
            let hi = lo + issues[lo..].partition_point(|i| order(i, x) != Ordering::Greater);
            at.push((lo..hi).find(|&k| issues[k] == *x)?);
        }
        let has_code = |issues: &[Issue], code: &str| {
            let p = issues.partition_point(|i| i.code().as_str() < code);
            issues.get(p).is_some_and(|i| i.code().as_str() == code)
        };
        let codes: Vec<(String, bool)> = gone
            .iter()
            .chain(&came)
            .map(|i| (i.code().to_string(), has_code(issues, i.code().as_str())))
            .collect();
        at.sort_unstable();
        at.dedup();
        let issues = &mut self.report.issues;
        for &k in at.iter().rev() {
            issues.remove(k);
        }
        for x in &came {
            let p = issues.partition_point(|i| order(i, x) != Ordering::Greater);
            issues.insert(p, x.clone());
        }
        if codes.iter().any(|(c, was)| has_code(issues, c) != *was) {
            self.report.code_messages = self.engine.code_messages(issues);
        }
        // The messages of the missing keys that came (those that went may stay: the
        // map is only looked up by the report's issues).
        self.engine
            .add_field_messages(&mut self.report.field_messages, &came);
        self.index = Some(index);
        Some((gone, came))
    }

    /// Whether, with every re-checked file's part unchanged, the report's issues stand
    /// as they are after `changes`: content edits only, none at the root (the
    /// dataset-level checks and the citation file read those), the `dataset` and
    /// `subject` objects and the HED definitions unchanged, and no later-version
    /// notes to make again (they validate the issues' files with other rules).
    fn issues_stand(&self, changes: &Changes<'_>) -> bool {
        let later = self.request.explain_later
            && matches!(self.request.source, Source::Bundled)
            && self.request.std_version.is_none();
        changes.moved.is_empty()
            && !changes.dataset
            && changes.subjects.is_empty()
            && !changes.hed
            && !later
            && changes.edited.iter().all(|p| folder(p) != "/")
    }

    /// Whether the dataset as last read has files under the folder `rel`.
    fn had_under(&self, rel: &str) -> bool {
        let prefix = format!("{}/", rel.trim_end_matches('/'));
        self.ds.files().iter().any(|f| f.path.starts_with(&prefix))
    }

    /// Validates the files at `which` and keeps their parts.
    fn recheck(&mut self, which: &[usize]) {
        let opts = &self.request.options;
        let results = self
            .engine
            .validate_recorded(&self.ds, opts, which, self.hed.as_ref());
        for (&i, r) in which.iter().zip(results) {
            if let Some(f) = self.ds.files().get(i) {
                self.records.insert(f.path.clone(), r);
            }
        }
    }

    fn prepare_hed(&mut self) {
        let opts = &self.request.options;
        self.hed_failed = None;
        self.hed = if opts.skip_hed {
            None
        } else {
            crate::hed::prepare(&self.ds, &opts.hed_schema_dirs).unwrap_or_else(|issue| {
                self.hed_failed = Some(issue);
                None
            })
        };
    }

    /// Keeps the dataset-level values the next change is compared with.
    fn snapshot_values(&mut self) {
        self.ds.set_tree_wanted(self.engine.reads_tree);
        let value = self.ds.dataset_value();
        self.ds.set_tree_wanted(true);
        // A `dataset` object made with its `tree` (by a lookup before the run chose) is
        // compared without it when no rule reads the tree.
        self.dataset_value = match value.as_object() {
            Some(o) if !self.engine.reads_tree && o.contains_key("tree") => {
                let mut o = o.clone();
                o.shift_remove("tree");
                Value::object(o)
            }
            _ => value,
        };
        self.subject_values = self
            .ds
            .sub_dirs()
            .iter()
            .map(|s| (s.clone(), self.ds.subject_value(s)))
            .collect();
    }

    /// The report from the files' parts, as a whole run makes it.
    fn assemble(&self) -> Report {
        let ds = &self.ds;
        let opts = &self.request.options;
        ds.set_tree_wanted(self.engine.reads_tree);
        let layout = ds.dataset_type();
        let mut issues = Vec::new();
        let mut used: FastSet<String> = FastSet::default();
        // The shared values: the first file in path order that reached each pair.
        let mut seen: HashMap<(&str, &str), &crate::apply::SeenEntry> = HashMap::new();
        for (idx, f) in ds.files().iter().enumerate() {
            let Some(record) = self.records.get(&f.path) else {
                continue;
            };
            let rank = u32::try_from(idx)
                .ok()
                .and_then(|i| i.checked_add(1))
                .unwrap_or(0);
            for issue in &record.issues {
                let mut issue = issue.clone();
                if *issue.location == *f.path {
                    issue.rank = rank;
                }
                issues.push(issue);
            }
            for u in &record.used {
                if !used.contains(u) {
                    used.insert(u.clone());
                }
            }
            for e in &record.seen {
                let slot = seen.entry((e.origin.as_str(), e.key.as_str())).or_insert(e);
                if e.path < slot.path {
                    *slot = e;
                }
            }
        }
        issues.extend(seen.values().filter_map(|e| e.issue()));
        let mut report =
            self.engine
                .finish(ds, layout, issues, used, self.hed_failed.clone(), opts);
        ds.set_tree_wanted(true);
        if self.request.explain_later
            && matches!(self.request.source, Source::Bundled)
            && self.request.std_version.is_none()
        {
            let newest = self
                .newest
                .as_ref()
                .and_then(|n| Some((crate::later::newest_rules(self.schema)?, &n.report)));
            crate::later::explain(
                &mut report,
                self.schema,
                ds,
                opts,
                &self.root,
                &self.open,
                newest,
            );
        }
        report
    }
}

/// Issues resolved and new beyond which the report is put together whole rather than
/// patched (each patch step moves the issues after it).
const PATCH_MAX: usize = 512;

/// What the summary and the dataset-level checks read of an edited file.
#[derive(Debug, PartialEq)]
struct EditedFacts {
    validated: bool,
    readable: bool,
    opaque: bool,
    size: u64,
    /// A readable JSON file's `TaskName`.
    task: Option<String>,
}

/// The [`EditedFacts`] of the files at `edited` (indices into `ds.files()`).
fn edited_facts(ds: &Dataset, edited: &[(usize, u64)]) -> Vec<EditedFacts> {
    edited
        .iter()
        .filter_map(|&(i, _)| {
            let f = ds.files().get(i)?;
            let task = (f.name.extension == ".json" && f.readable())
                .then(|| {
                    ds.json_value(i)
                        .get("TaskName")
                        .as_str()
                        .map(str::to_string)
                })
                .flatten();
            Some(EditedFacts {
                validated: f.validated(),
                readable: f.readable(),
                opaque: f.opaque,
                size: f.size,
                task,
            })
        })
        .collect()
}

/// Opens the dataset for a session.
fn open_dataset(schema: &Schema, dir: &Path, open: &OpenOptions) -> Result<Dataset, RunError> {
    Dataset::open(dir, schema, open).map_err(|error| RunError::Open {
        dir: dir.to_path_buf(),
        error,
    })
}

/// `path` as a dataset-relative path with a leading `/` (absolute paths under `root`
/// are made relative; other paths are taken as relative already).
fn relative(root: &Path, path: &str) -> String {
    let p = Path::new(path);
    let under = |base: &Path| {
        p.strip_prefix(base)
            .ok()
            .map(|r| r.to_string_lossy().into_owned())
    };
    let rel = under(root)
        .or_else(|| std::path::absolute(root).ok().and_then(|abs| under(&abs)))
        .unwrap_or_else(|| path.to_string());
    format!("/{}", rel.trim_start_matches('/'))
}

/// A path whose change may choose other rules: the description, or an ignore file at
/// the root (its presence tells the brand).
fn rules_input(rel: &str) -> bool {
    rel == "/dataset_description.json"
        || (rel.starts_with("/.") && rel.ends_with("ignore") && rel[1..].find('/').is_none())
}

/// A sidecar with `HED` in some entry (its definitions are the dataset's).
fn has_hed(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.values()
            .any(|e| e.as_object().is_some_and(|e| e.contains_key("HED")))
    })
}
