//! The validation run: prepares the schema once, then applies every rule to every file
//! of a dataset in parallel and gathers a deterministic report.

use std::collections::HashSet;
use std::path::Path;
use std::sync::PoisonError;

use nidos_dataset::{Dataset, DatasetIssue, FileEntry, OpenOptions};
use nidos_expr::{Context, Value};
use nidos_schema::Schema;
use rayon::prelude::*;

use crate::apply::{self, FileFacts, Prepared, Seen, TableView};
use crate::cleaned::Cleaned;
use crate::config::Config;
use crate::filenames;
use crate::issue::{normalize, FastSet, Issue, Severity, Sym};
use crate::jsonschema::FormatCheck;
use crate::report::Report;
use crate::rule_index::RuleIndex;
use crate::selectors::{DatasetMemo, FileMemo, SelectorTable, KIND_VARIANTS};
use nidos_dataset::kinds::KindMemo;

/// Fewest files in a piece of the per-file pass. Small, so that a small dataset whose
/// few files are costly (large event tables, HED rows) is still shared among the
/// threads; a piece's set-up (its selector memo) costs far less than one file.
const MIN_PIECE: usize = 8;

/// Options of a run.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub ignore_nifti_headers: bool,
    /// Rows of a table to read (`None`: all). Participants, sessions, scans and
    /// phenotype tables are always read whole.
    pub max_rows: Option<usize>,
    pub config: Config,
    pub ignore_warnings: bool,
    /// Modalities whose presence is an error (`--blacklist-modalities`).
    pub blacklist_modalities: Vec<String>,
    /// Counts validated files as workers finish them (for a progress display).
    pub progress: Option<std::sync::Arc<Progress>>,
    /// The dataset types accepted (`raw`, `derivative`, `study`; `--dataset-types`): a
    /// dataset of another type gets an UNSUPPORTED_DATASET_TYPE error. Empty: any type.
    pub dataset_types: Vec<String>,
    /// Directories with extra HED schema files (`--hed-schema-dir`), searched before the
    /// bundled ones.
    pub hed_schema_dirs: Vec<std::path::PathBuf>,
    /// Validate only the files at these dataset-relative paths (`/CITATION.cff`) or under
    /// these folders (`/sub-01/fmap/`, `/` for all: a trailing `/`); the dataset-level
    /// checks still run. `None`: every file. For re-checking some issues under other
    /// rules (see [`crate::pinning`]).
    pub only_under: Option<std::sync::Arc<HashSet<String>>>,
    /// Apply only the selector rules of these kinds (each a [`nidos_schema::RuleKind`]
    /// name: `checks`, `sidecars`, `json`, `tabular_data`); `None`: every kind. File
    /// names and the dataset-level checks are checked in any case; with a set, the issues
    /// of reading a file's own content, of sidecar overrides and of the citation file's
    /// content are not gathered. For re-checking some issues under other rules (see
    /// [`crate::pinning`]).
    pub only_kinds: Option<std::sync::Arc<HashSet<&'static str>>>,
    /// Leave HED annotations unchecked (`--no-hed`).
    pub skip_hed: bool,
    /// Told where the phases of a run end (a profiling aid: the CLI's `NIDOS_TIMING`).
    /// `None`: nothing is measured.
    pub phases: Option<std::sync::Arc<dyn Phases>>,
}

/// Receives the phases of a run as they end (see [`Options::phases`]).
pub trait Phases: Send + Sync + std::fmt::Debug {
    /// A run starts now: the next phase counts from here.
    fn begin(&self) {}
    /// The phase named `phase` ends now.
    fn lap(&self, phase: &str);
}

impl Options {
    /// Tells the phase observer, if any, that `phase` ends now; `phase` is only
    /// formatted when there is one.
    pub(crate) fn lap(&self, phase: impl FnOnce() -> String) {
        if let Some(p) = &self.phases {
            p.lap(&phase());
        }
    }

    pub(crate) fn begin(&self) {
        if let Some(p) = &self.phases {
            p.begin();
        }
    }
}

/// How far a run is: `done` of `total` files (`total` is set once the dataset is
/// walked; both are reset at the start of each dataset).
#[derive(Debug, Default)]
pub struct Progress {
    pub done: std::sync::atomic::AtomicUsize,
    pub total: std::sync::atomic::AtomicUsize,
}

/// A schema prepared for validation (compile once, validate many datasets).
pub struct Engine<'s> {
    pub schema: &'s Schema,
    /// What the rule applications read: texts, column plans, compiled patterns.
    pub(crate) prepared: Prepared<'s>,
    /// The file rules by the paths and suffixes they claim.
    pub(crate) file_rules: filenames::FileRuleIndex,
    /// Every distinct selector of the rules below, numbered.
    pub(crate) selectors: SelectorTable,
    /// Candidate rules by the constants their selectors compare names with.
    check_index: RuleIndex,
    sidecar_index: RuleIndex,
    json_index: RuleIndex,
    tabular_index: RuleIndex,
    /// The Citation File Format rules (the schema's, else the bundled ones), or the
    /// reason they cannot be read; read on first use, since most datasets have no
    /// citation file (see [`Engine::citation_rules`]).
    citation: std::sync::OnceLock<Result<crate::cff::CffRules, String>>,
    /// The schema's fixes, to mark reported issues `fixable`.
    fixes: crate::FixIndex,
    /// Whether some expression of the schema may read `dataset.tree`; when none can, a
    /// run leaves the tree (a member per file) out of the dataset's `dataset` object.
    pub(crate) reads_tree: bool,
}

impl FormatCheck for Engine<'_> {
    fn check(&self, format: &str, value: &str) -> Option<bool> {
        self.prepared.patterns.check(format, value)
    }
}

impl<'s> Engine<'s> {
    pub fn new(schema: &'s Schema) -> Engine<'s> {
        let mut selectors = SelectorTable::default();
        let mut index = |r: &mut dyn Iterator<Item = &Vec<nidos_schema::Expression>>| {
            RuleIndex::new(&r.collect::<Vec<_>>(), &mut selectors)
        };
        let check_index = index(&mut schema.checks.iter().map(|r| &r.selectors));
        let sidecar_index = index(&mut schema.sidecar_rules.iter().map(|r| &r.selectors));
        let json_index = index(&mut schema.json_rules.iter().map(|r| &r.selectors));
        let tabular_index = index(&mut schema.tabular_rules.iter().map(|r| &r.selectors));
        Engine {
            schema,
            prepared: Prepared::new(schema),
            file_rules: filenames::FileRuleIndex::new(schema),
            selectors,
            check_index,
            sidecar_index,
            json_index,
            tabular_index,
            citation: std::sync::OnceLock::new(),
            fixes: crate::FixIndex::new(schema),
            reads_tree: schema.expressions().iter().any(|(_, e)| {
                e.parsed
                    .as_deref()
                    .is_some_and(crate::selectors::may_read_dataset_tree)
            }),
        }
    }

    /// The Citation File Format rules: the schema's, else the bundled ones (read on
    /// first use).
    pub(crate) fn citation_rules(&self) -> &Result<crate::cff::CffRules, String> {
        self.citation
            .get_or_init(|| crate::cff::CffRules::for_schema(self.schema.citation.as_ref()))
    }

    /// Validates the dataset at `root`.
    pub fn validate(
        &self,
        root: &Path,
        opts: &Options,
    ) -> Result<Report, nidos_dataset::DatasetError> {
        let open = OpenOptions {
            ignore_nifti_headers: opts.ignore_nifti_headers,
            max_rows: opts.max_rows,
            ..OpenOptions::default()
        };
        opts.begin();
        let ds = Dataset::open(root, self.schema, &open)?;
        opts.lap(|| "open dataset (walk, names, sidecars)".to_owned());
        let report = self.validate_dataset(&ds, opts);
        // Freeing a large dataset's file list and caches takes a noticeable share of the
        // run; the report does not need it, so it is freed beside the caller's work.
        // (When no thread can be started, the closure and the dataset are dropped here.)
        std::thread::Builder::new().spawn(move || drop(ds)).ok();
        Ok(report)
    }

    pub fn validate_dataset(&self, ds: &Dataset, opts: &Options) -> Report {
        ds.set_tree_wanted(self.reads_tree);
        let report = self.validate_dataset_with(ds, opts);
        ds.set_tree_wanted(true);
        report
    }

    fn validate_dataset_with(&self, ds: &Dataset, opts: &Options) -> Report {
        let layout = ds.dataset_type();
        let derivative = layout == "derivative";
        opts.begin();
        let seen = Seen::default();
        let dataset_selectors = DatasetMemo::new(&self.selectors);
        let kind_selectors = KindMemo::new(ds.kind_count(), KIND_VARIANTS, self.selectors.len());
        let files = ds.files();
        let wanted = |f: &FileEntry| wanted(opts, f);
        // HED: schemas and the dataset's definitions first; each table is then checked while
        // the per-file pass holds it (the table cache may have evicted it by the end).
        let mut hed_failed = None;
        let hed = if opts.skip_hed {
            None
        } else {
            crate::hed::prepare(ds, &opts.hed_schema_dirs).unwrap_or_else(|issue| {
                hed_failed = Some(issue);
                None
            })
        };
        let hed = hed.as_ref();
        if hed.is_some() || hed_failed.is_some() {
            opts.lap(|| "HED schemas and definitions".to_owned());
        }
        let progress = opts.progress.as_deref();
        if let Some(p) = progress {
            use std::sync::atomic::Ordering::Relaxed;
            p.done.store(0, Relaxed);
            p.total
                .store(files.iter().filter(|f| wanted(f)).count(), Relaxed);
        }
        // Every file's issues are collected in its worker's scratch vector and then
        // moved into one shared vector, so the issues are held once: no per-worker pieces
        // to join at the end. The vector reserves room for many issues per file up front:
        // only the pages written become resident, while growing it would copy it (the
        // allocator allocates anew and copies: the old and new blocks are both resident
        // for a while, up to twice the issues' size).
        let sink: std::sync::Mutex<Vec<Issue>> =
            std::sync::Mutex::new(reserved_issue_list(files.len()));
        let pieces: Vec<(Vec<Issue>, FastSet<String>)> = (0..files.len())
            .into_par_iter()
            .with_min_len(MIN_PIECE)
            .fold(
                || {
                    (
                        Vec::new(),
                        FastSet::default(),
                        FileMemo::new(&self.selectors, &dataset_selectors, &kind_selectors),
                    )
                },
                |(mut scratch, mut used, mut memo), i| {
                    let f = &files[i];
                    if wanted(f) {
                        memo.reset();
                        let run = PerFile {
                            derivative,
                            seen: &seen,
                            selectors: &mut memo,
                            out: &mut scratch,
                            used: &mut used,
                            hed,
                            kinds: opts.only_kinds.as_deref(),
                        };
                        self.validate_file(ds, (i, f), run);
                        if let Some(p) = progress {
                            p.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    } else if let Some(hed) = hed {
                        // HED covers every table, in scope or not.
                        hed.check_table(&ds.context_at(i), &mut scratch);
                    }
                    if !scratch.is_empty() {
                        let mut all = sink.lock().unwrap_or_else(PoisonError::into_inner);
                        all.append(&mut scratch);
                    }
                    (scratch, used, memo)
                },
            )
            .map(|(scratch, used, _)| (scratch, used))
            .collect();
        let n_pieces = pieces.len();
        let mut issues = sink.into_inner().unwrap_or_else(PoisonError::into_inner);
        let mut used_sidecars: FastSet<String> = FastSet::default();
        for (_, used) in pieces {
            used_sidecars.extend(used);
        }
        opts.lap(|| format!("per-file rules ({n_pieces} pieces)"));
        issues.extend(seen.into_issues());
        self.finish(ds, layout, issues, used_sidecars, hed_failed, opts)
    }

    /// The end of a run, after the per-file pass: the dataset's own issues, the
    /// dataset-level checks (`used_sidecars`: the sidecars and associated files the files
    /// used), the configuration, the order and the summary. `issues` holds the per-file
    /// issues and the bad shared values.
    pub(crate) fn finish(
        &self,
        ds: &Dataset,
        layout: String,
        mut issues: Vec<Issue>,
        used_sidecars: FastSet<String>,
        hed_failed: Option<Issue>,
        opts: &Options,
    ) -> Report {
        self.dataset_level(ds, &layout, &used_sidecars, hed_failed, opts, &mut issues);
        // Freed before the sort, whose keys (8 bytes per issue) make the run's peak on
        // large datasets: a path per used sidecar is tens of MB at a million files.
        drop(used_sidecars);
        opts.lap(|| "dataset checks".to_owned());

        opts.config.apply(&mut issues);
        // The order compares every field, so an unstable sort gives the same result as
        // a stable one, without a scratch copy of the issues (`normalize`).
        // The summary reads only the dataset: it is made while the issues are sorted.
        let ((), summary) = rayon::join(
            || {
                normalize(&mut issues);
                self.fixes.mark(&mut issues);
            },
            || self.summary(ds),
        );
        opts.lap(|| {
            let own: usize = issues
                .iter()
                .map(|i| {
                    i.issue_message().map_or(0, str::len)
                        + i.affects().iter().map(String::capacity).sum::<usize>()
                })
                .sum();
            format!(
                "sort {} issues ({} MB structs, {} MB own strings)",
                issues.len(),
                (issues.capacity() * std::mem::size_of::<Issue>()) >> 20,
                own >> 20
            )
        });
        let mut report = Report {
            code_messages: self.code_messages(&issues),
            field_messages: self.field_messages(&issues),
            issues,
            summary,
            dataset_type: layout,
            hidden_warnings: 0,
        };
        if opts.ignore_warnings {
            report.drop_warnings();
        }
        report
    }

    /// Marks the issues `nidos fix` can repair (as a run's report has them).
    pub(crate) fn mark_fixable(&self, issues: &mut [Issue]) {
        self.fixes.mark(issues);
    }

    /// The issues of a run that no file's validation gives: the walk's, the dataset-level
    /// checks' (`used_sidecars` as for [`Engine::finish`]), the citation file's, the
    /// options' and HED's failure to load, before the configuration applies.
    pub(crate) fn other_issues(
        &self,
        ds: &Dataset,
        used_sidecars: &FastSet<String>,
        hed_failed: Option<&Issue>,
        opts: &Options,
    ) -> Vec<Issue> {
        let mut out = Vec::new();
        let layout = ds.dataset_type();
        self.dataset_level(
            ds,
            &layout,
            used_sidecars,
            hed_failed.cloned(),
            opts,
            &mut out,
        );
        out
    }

    fn dataset_level(
        &self,
        ds: &Dataset,
        layout: &str,
        used_sidecars: &FastSet<String>,
        hed_failed: Option<Issue>,
        opts: &Options,
        issues: &mut Vec<Issue>,
    ) {
        issues.extend(ds.issues().iter().map(convert_dataset_issue));
        self.dataset_checks(ds, layout, used_sidecars, issues);
        if opts.only_kinds.is_none() {
            // A citation file's content is checked by its own rules, not by a rule kind.
            self.citation_file(ds, issues);
        }
        self.blacklisted_modalities(ds, &opts.blacklist_modalities, issues);
        unsupported_type(layout, &opts.dataset_types, issues);
        issues.extend(hed_failed);
    }

    /// Applies the rules to one file; answers what the rules read beyond the file's own
    /// inputs ([`crate::cleaned::reads`] bits, for an incremental run).
    pub(crate) fn validate_file(
        &self,
        ds: &Dataset,
        file: (usize, &FileEntry),
        run: PerFile<'_, '_>,
    ) -> u8 {
        let PerFile {
            derivative,
            seen,
            selectors,
            out,
            used,
            hed,
            kinds,
        } = run;
        let (idx, file) = file;
        let schema = self.schema;
        let location = Sym::from(file.path.as_str());
        let first_new = out.len();
        if file.size == 0 && !file.broken_symlink {
            out.push(Issue::new("EMPTY_FILE", Severity::Error, &location));
        }
        let ctx = ds.context_at(idx);
        let identified =
            filenames::identify(schema, &self.file_rules, file, &location, derivative, out);
        filenames::validate(schema, &self.file_rules, file, &location, &identified, out);
        selectors.set_kind(
            ds.kind_of(idx),
            identified.blank_suffix,
            identified.blank_extension,
        );

        let view = Cleaned::new(
            &ctx,
            identified.blank_entities,
            identified.blank_extension,
            identified.blank_suffix,
        );
        let extension = if identified.blank_extension {
            ""
        } else {
            file.name.extension.as_str()
        };
        let sources = ctx.sidecar_sources();
        let origin = |key: &str| sources.get(key).map(String::as_str);
        let facts = FileFacts {
            path: &file.path,
            location: &location,
            extension,
            sidecar_origin: &origin,
            derivative_dataset: derivative,
        };
        let keys = view.index_keys();
        // The candidate rules of one kind for this file: none when the kind is not applied.
        let find = |kind: &str, index: &RuleIndex, out: &mut Vec<usize>| {
            out.clear();
            if kinds.is_none_or(|k| k.contains(kind)) {
                index.candidates(&keys, out);
            }
        };
        let mut candidates = Vec::new();
        find("checks", &self.check_index, &mut candidates);
        for &i in &candidates {
            let rule = &schema.checks[i];
            if selectors.all(self.check_index.selectors(i), &view) {
                apply::apply_check(rule, &view, &facts, out);
            }
        }
        let fields_from = out.len();
        find("sidecars", &self.sidecar_index, &mut candidates);
        for &i in &candidates {
            let rule = &schema.sidecar_rules[i];
            if selectors.all(self.sidecar_index.selectors(i), &view) {
                let rule = (rule, &self.prepared.sidecar_texts[i]);
                apply::apply_fields(&self.prepared, rule, true, &view, &facts, seen, out);
            }
        }
        find("json", &self.json_index, &mut candidates);
        for &i in &candidates {
            let rule = &schema.json_rules[i];
            if selectors.all(self.json_index.selectors(i), &view) {
                let rule = (rule, &self.prepared.json_texts[i]);
                apply::apply_fields(&self.prepared, rule, false, &view, &facts, seen, out);
            }
        }
        apply::keep_strongest_missing(&self.prepared, out, fields_from);
        let mut headers: Option<Vec<String>> = None;
        find("tabular_data", &self.tabular_index, &mut candidates);
        for &i in &candidates {
            let rule = &schema.tabular_rules[i];
            if !selectors.all(self.tabular_index.selectors(i), &view) {
                continue;
            }
            let t = ctx.table();
            // The `columns` object's keys: each header once, in file order.
            let headers = headers.get_or_insert_with(|| {
                let mut seen = HashSet::new();
                t.map(|t| &t.headers)
                    .into_iter()
                    .flatten()
                    .filter(|h| seen.insert(h.as_str()))
                    .cloned()
                    .collect()
            });
            let table = TableView {
                headers: headers.clone(),
                table: t,
            };
            let rule = (rule, self.prepared.column_plans[i].as_slice());
            apply::apply_tabular(&self.prepared, rule, &view, &facts, &table, out);
        }
        if kinds.is_none() {
            for o in ctx.sidecar_overrides() {
                out.push(
                    Issue::new("SIDECAR_FIELD_OVERRIDE", Severity::Warning, o.deep.as_str())
                        .sub(o.key.as_str())
                        .message(format!(
                            "Sidecar key defined in {} overrides the value set in {}",
                            o.deep, o.shallow
                        )),
                );
            }
            ctx.load_own();
            out.extend(ctx.load_issues().iter().map(convert_dataset_issue));
        }
        for f in &ctx.sidecar_merge().files {
            insert_new(used, f);
        }
        collect_paths(&ctx.lookup("associations"), used);
        if let Some(hed) = hed {
            hed.check_table(&ctx, out);
        }
        // Issues located at this file sort by its position (files are in path order).
        if let Some(rank) = u32::try_from(idx).ok().and_then(|i| i.checked_add(1)) {
            for issue in out.iter_mut().skip(first_new) {
                if issue.location == location {
                    issue.rank = rank;
                }
            }
        }
        let dataset = if selectors.read_dataset {
            crate::cleaned::reads::DATASET
        } else {
            0
        };
        view.reads() | dataset
    }
}

/// Whether the per-file pass validates `f` (see [`Options::only_under`]).
pub(crate) fn wanted(opts: &Options, f: &FileEntry) -> bool {
    f.validated()
        && opts.only_under.as_ref().is_none_or(|scope| {
            scope.contains(&f.path)
                || f.path
                    .match_indices('/')
                    .any(|(n, _)| scope.contains(&f.path[..=n]))
        })
}

/// Issues per file the shared issue list of a run reserves room for: above the synthetic
/// benchmark's 11.7 and most real datasets' rates; a run with more grows the list.
const RESERVED_ISSUES_PER_FILE: usize = 32;

/// An empty issue list with room for [`RESERVED_ISSUES_PER_FILE`] issues per file, or
/// fewer when that much address space cannot be had (the room is address space until
/// written: 1.5 KiB per file of it, not memory).
fn reserved_issue_list(files: usize) -> Vec<Issue> {
    let mut list = Vec::new();
    let mut want = files.saturating_mul(RESERVED_ISSUES_PER_FILE);
    while want > 0 && list.try_reserve_exact(want).is_err() {
        want /= 4;
    }
    list
}

/// `--dataset-types`: an error when the dataset's type is not among the accepted ones.
fn unsupported_type(layout: &str, accepted: &[String], out: &mut Vec<Issue>) {
    if accepted.is_empty() || accepted.iter().any(|t| t == layout) {
        return;
    }
    out.push(
        Issue::new(
            "UNSUPPORTED_DATASET_TYPE",
            Severity::Error,
            "/dataset_description.json",
        )
        .message(format!(
            "dataset type {layout:?} is not one of {}",
            accepted.join(", ")
        )),
    );
}

/// Adds `path` to `set`, allocating only when it is new.
fn insert_new(set: &mut FastSet<String>, path: &str) {
    if !set.contains(path) {
        set.insert(path.to_string());
    }
}

/// Gathers every `path`/`paths` string of an associations object.
fn collect_paths(v: &Value, out: &mut FastSet<String>) {
    let Value::Object(o) = v else { return };
    for (k, x) in o.iter() {
        match (k.as_str(), x) {
            ("path", Value::String(s)) => insert_new(out, s),
            ("paths", Value::Array(a)) => {
                for p in a.iter().filter_map(|p| p.as_str()) {
                    insert_new(out, p);
                }
            }
            (_, Value::Object(_)) => collect_paths(x, out),
            _ => {}
        }
    }
}

pub(crate) fn convert_dataset_issue(d: &DatasetIssue) -> Issue {
    let mut issue =
        Issue::new(d.code.clone(), d.severity, d.location.clone()).message(d.message.clone());
    if let Some(s) = &d.sub_code {
        issue.set_sub_code(s);
    }
    if let Some(l) = d.line {
        issue = issue.line(l);
    }
    issue
}

/// The per-run state one file's validation uses and adds to.
pub(crate) struct PerFile<'r, 'm> {
    pub(crate) derivative: bool,
    pub(crate) seen: &'r Seen,
    pub(crate) selectors: &'r mut FileMemo<'m>,
    pub(crate) out: &'r mut Vec<Issue>,
    pub(crate) used: &'r mut FastSet<String>,
    /// The dataset's HED run, when it has one: a table's HED is checked while it is loaded.
    pub(crate) hed: Option<&'r crate::hed::HedRun>,
    /// The rule kinds to apply (`None`: all; see [`Options::only_kinds`]).
    pub(crate) kinds: Option<&'r HashSet<&'static str>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUNDLED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema");

    /// A field's `level_if` decides its level from the sidecar: MagneticFieldStrength
    /// (recommended) becomes required when the sidecar's Manufacturer is `Acme`.
    #[test]
    fn level_if_raises_a_missing_field() {
        let mut schema = nidos_schema::load_path(Path::new(BUNDLED)).unwrap();
        let mut changed = 0;
        for rule in &mut schema.sidecar_rules {
            let req = rule.fields.get_mut("MagneticFieldStrength");
            if let Some(req) = req.filter(|r| r.level == nidos_schema::Level::Recommended) {
                req.level_if = Some(nidos_schema::LevelCondition {
                    key: "Manufacturer".into(),
                    is: "Acme".into(),
                    level: nidos_schema::Level::Required,
                });
                changed += 1;
            }
        }
        assert!(changed > 0);
        let engine = Engine::new(&schema);
        let opts = Options {
            ignore_nifti_headers: true,
            ..Default::default()
        };
        for (manufacturer, want) in [
            ("Acme", ("SIDECAR_KEY_REQUIRED", Severity::Error)),
            ("Other", ("SIDECAR_KEY_RECOMMENDED", Severity::Warning)),
            ("acme", ("SIDECAR_KEY_RECOMMENDED", Severity::Warning)),
        ] {
            let dir = dataset_at_1_10();
            let root = dir.path();
            let anat = root.join("sub-01/anat");
            std::fs::create_dir_all(&anat).unwrap();
            std::fs::write(anat.join("sub-01_T1w.nii.gz"), b"x").unwrap();
            std::fs::write(
                anat.join("sub-01_T1w.json"),
                format!(r#"{{"Manufacturer": "{manufacturer}"}}"#),
            )
            .unwrap();
            let report = engine.validate(root, &opts).unwrap();
            let got: Vec<(&str, Severity)> = report
                .issues
                .iter()
                .filter(|i| i.sub_code() == "MagneticFieldStrength")
                .map(|i| (i.code().as_str(), i.severity))
                .collect();
            assert_eq!(got, [want], "Manufacturer {manufacturer}");
        }
    }

    /// A temporary dataset with only a description, of version 1.10.0 under both names.
    fn dataset_at_1_10() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("dataset_description.json"),
            r#"{"Name": "d", "StdVersion": "1.10.0", "BIDSVersion": "1.10.0"}"#,
        )
        .unwrap();
        dir
    }

    /// The shared issue list starts with room for the issues of a typical file set (no
    /// reallocation below that count), and with none for no files.
    #[test]
    fn issue_list_reserves_per_file() {
        assert_eq!(reserved_issue_list(0).capacity(), 0);
        let list = reserved_issue_list(1000);
        assert!(list.is_empty());
        assert!(list.capacity() >= 1000 * RESERVED_ISSUES_PER_FILE);
    }

    /// A bad value in a root sidecar inherited by many files is reported once, by the
    /// first inheriting file in path order, whichever worker thread reaches it first.
    #[test]
    fn shared_sidecar_error_is_deterministic() {
        let schema = nidos_schema::load_path(Path::new(BUNDLED)).unwrap();
        let dir = dataset_at_1_10();
        let root = dir.path();
        std::fs::write(
            root.join("task-rest_bold.json"),
            r#"{"TaskName": "rest", "RepetitionTime": "two seconds"}"#,
        )
        .unwrap();
        for s in 0..200 {
            let func = root.join(format!("sub-{s:03}/func"));
            std::fs::create_dir_all(&func).unwrap();
            std::fs::write(func.join(format!("sub-{s:03}_task-rest_bold.nii.gz")), b"x").unwrap();
        }
        let engine = Engine::new(&schema);
        let opts = Options {
            ignore_nifti_headers: true,
            ..Default::default()
        };
        let runs: Vec<String> = (0..6)
            .map(|_| {
                let report = engine.validate(root, &opts).unwrap();
                serde_json::to_string(&report.json()).unwrap()
            })
            .collect();
        assert!(
            runs.iter().all(|r| *r == runs[0]),
            "reports differ between runs"
        );
        let report = engine.validate(root, &opts).unwrap();
        let bad: Vec<&Issue> = report
            .issues
            .iter()
            .filter(|i| i.code() == "JSON_SCHEMA_VALIDATION_ERROR")
            .collect();
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert_eq!(bad[0].location, "/task-rest_bold.json");
        assert_eq!(*bad[0].sub_code(), "RepetitionTime");
        assert_eq!(
            bad[0].affects(),
            ["/sub-000/func/sub-000_task-rest_bold.nii.gz"]
        );
    }
}
