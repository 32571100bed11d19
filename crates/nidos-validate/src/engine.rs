//! The validation run: prepares the schema once, then applies every rule to every file
//! of a dataset in parallel and gathers a deterministic report.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use indexmap::IndexMap;
use nidos_dataset::{Dataset, DatasetIssue, FileContext, FileEntry, OpenOptions};
use nidos_expr::{Context, Object, Value};
use nidos_schema::Schema;
use rayon::prelude::*;

use crate::apply::{self, FileFacts, Seen, TableView};
use crate::config::Config;
use crate::filenames;
use crate::issue::{normalize, Issue, Severity};
use crate::jsonschema::FormatCheck;
use crate::report::{Report, Summary};

/// Options of a run.
#[derive(Debug, Default)]
pub struct Options {
    pub ignore_nifti_headers: bool,
    /// Rows of a table to read (`None`: all). Participants, sessions, scans and
    /// phenotype tables are always read whole.
    pub max_rows: Option<usize>,
    pub config: Config,
    pub ignore_warnings: bool,
    /// Modalities whose presence is an error (`--blacklist-modalities`).
    pub blacklist_modalities: Vec<String>,
}

/// A schema prepared for validation (compile once, validate many datasets).
pub struct Engine<'s> {
    pub schema: &'s Schema,
    /// Formats compiled unanchored, as metadata values are tested.
    formats: HashMap<String, regress::Regex>,
    /// Rules whose selectors name derivative datasets explicitly.
    derivative_rules: HashSet<String>,
}

impl FormatCheck for Engine<'_> {
    fn check(&self, format: &str, value: &str) -> Option<bool> {
        self.formats.get(format).map(|re| re.find(value).is_some())
    }
}

impl<'s> Engine<'s> {
    pub fn new(schema: &'s Schema) -> Engine<'s> {
        let formats = schema
            .formats
            .iter()
            .filter_map(|(name, f)| {
                regress::Regex::new(&f.pattern)
                    .ok()
                    .map(|re| (name.clone(), re))
            })
            .collect();
        let derivative_rules = schema
            .sidecar_rules
            .iter()
            .chain(&schema.json_rules)
            .filter(|r| {
                r.selectors.iter().any(|s| {
                    let compact: String = s.source.chars().filter(|c| !c.is_whitespace()).collect();
                    compact.contains("DatasetType==\"derivative\"")
                        || compact.contains("DatasetType=='derivative'")
                })
            })
            .map(|r| r.id.clone())
            .collect();
        Engine {
            schema,
            formats,
            derivative_rules,
        }
    }

    pub(crate) fn selects_derivatives(&self, rule_id: &str) -> bool {
        self.derivative_rules.contains(rule_id)
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
        let ds = Dataset::open(root, self.schema, &open)?;
        Ok(self.validate_dataset(&ds, opts))
    }

    pub fn validate_dataset(&self, ds: &Dataset, opts: &Options) -> Report {
        let dataset_value = ds.dataset_value();
        let description = dataset_value.get("dataset_description");
        let derivative = match description.get("DatasetType").as_str() {
            Some(t) => t == "derivative",
            None => !description.get("GeneratedBy").is_null(),
        };
        let seen = Seen::default();
        let files = ds.files();
        let results: Vec<(Vec<Issue>, Vec<String>)> = (0..files.len())
            .into_par_iter()
            .with_min_len(64)
            .map(|i| {
                let f = &files[i];
                if !f.validated() {
                    return (Vec::new(), Vec::new());
                }
                self.validate_file(ds, i, f, derivative, &seen)
            })
            .collect();
        let mut issues: Vec<Issue> = Vec::new();
        let mut used_sidecars: HashSet<String> = HashSet::new();
        for (mut found, used) in results {
            issues.append(&mut found);
            used_sidecars.extend(used);
        }
        issues.extend(ds.issues().iter().map(convert_dataset_issue));
        let layout = description
            .get("DatasetType")
            .as_str()
            .unwrap_or(if derivative { "derivative" } else { "raw" })
            .to_string();
        self.dataset_checks(ds, &layout, &used_sidecars, &mut issues);

        opts.config.apply(&mut issues);
        normalize(&mut issues);
        let mut report = Report {
            code_messages: self.code_messages(&issues),
            issues,
            summary: self.summary(ds),
        };
        if opts.ignore_warnings {
            report.drop_warnings();
        }
        report
    }

    fn validate_file(
        &self,
        ds: &Dataset,
        idx: usize,
        file: &FileEntry,
        derivative: bool,
        seen: &Seen,
    ) -> (Vec<Issue>, Vec<String>) {
        let mut out = Vec::new();
        let schema = self.schema;
        if file.size == 0 && !file.broken_symlink {
            out.push(Issue::new(
                "EMPTY_FILE",
                Severity::Error,
                file.path.as_str(),
            ));
        }
        let ctx = ds.context_at(idx);
        let identified = filenames::identify(schema, file, derivative, &mut out);
        filenames::validate(schema, file, &identified, &mut out);

        let view = Cleaned {
            inner: &ctx,
            entities: identified.blank_entities,
            extension: identified.blank_extension,
            suffix: identified.blank_suffix,
        };
        let extension = if identified.blank_extension {
            ""
        } else {
            file.name.extension.as_str()
        };
        let origin = |key: &str| ctx.sidecar_sources().get(key).cloned();
        let facts = FileFacts {
            path: &file.path,
            extension,
            sidecar_origin: &origin,
            derivative_dataset: derivative,
        };
        for rule in &schema.checks {
            if apply::selected(&rule.selectors, &view) {
                apply::apply_check(rule, &view, &facts, &mut out);
            }
        }
        for rule in &schema.sidecar_rules {
            if apply::selected(&rule.selectors, &view) {
                apply::apply_fields(self, rule, true, &view, &facts, seen, &mut out);
            }
        }
        for rule in &schema.json_rules {
            if apply::selected(&rule.selectors, &view) {
                apply::apply_fields(self, rule, false, &view, &facts, seen, &mut out);
            }
        }
        let mut table_cache: Option<(Vec<String>, Value)> = None;
        for rule in &schema.tabular_rules {
            if !apply::selected(&rule.selectors, &view) {
                continue;
            }
            let (headers, columns) = table_cache.get_or_insert_with(|| {
                let columns = view.lookup("columns");
                let headers = columns
                    .as_object()
                    .map(|o| o.keys().cloned().collect())
                    .unwrap_or_default();
                (headers, columns)
            });
            let empty = Object::new();
            let table = TableView {
                headers: headers.clone(),
                columns: columns.as_object().unwrap_or(&empty),
            };
            apply::apply_tabular(self, rule, &view, &facts, &table, &mut out);
        }
        for o in ctx.sidecar_overrides() {
            out.push(
                Issue::new("SIDECAR_FIELD_OVERRIDE", Severity::Warning, o.deep.as_str())
                    .sub(o.key.as_str())
                    .message(format!(
                        "{} overrides the value set in {}",
                        o.deep, o.shallow
                    )),
            );
        }
        ctx.load_own();
        out.extend(ctx.load_issues().iter().map(convert_dataset_issue));
        let mut used = ctx.sidecar_merge().files.clone();
        collect_paths(&ctx.lookup("associations"), &mut used);
        (out, used)
    }

    fn dataset_checks(
        &self,
        ds: &Dataset,
        layout: &str,
        used_sidecars: &HashSet<String>,
        out: &mut Vec<Issue>,
    ) {
        if ds.find("/dataset_description.json").is_none() {
            out.push(
                Issue::new("MISSING_DATASET_DESCRIPTION", Severity::Error, "").message(
                    "a dataset_description.json file is required at the dataset root".to_string(),
                ),
            );
        }
        // A sidecar that no data file inherits or refers to.
        for f in ds.files() {
            if !f.validated() || f.name.extension != ".json" || used_sidecars.contains(&f.path) {
                continue;
            }
            if matches!(
                f.path.as_str(),
                "/dataset_description.json" | "/genetic_info.json"
            ) {
                continue;
            }
            out.push(Issue::new(
                "SIDECAR_WITHOUT_DATAFILE",
                Severity::Error,
                f.path.as_str(),
            ));
        }
        // Directories the layout does not know (only those holding validated files:
        // a directory whose whole content is ignored is ignored itself).
        let mut live_dirs: HashSet<&str> = HashSet::new();
        for f in ds.files().iter().filter(|f| f.validated()) {
            let mut dir = f.dir().trim_end_matches('/');
            while !dir.is_empty() && live_dirs.insert(dir) {
                dir = &dir[..dir.rfind('/').unwrap_or(0)];
            }
        }
        for dir in ds.directories() {
            if live_dirs.contains(dir) && !filenames::directory_known(self.schema, layout, dir) {
                out.push(Issue::new(
                    "NOT_INCLUDED",
                    Severity::Error,
                    format!("{dir}/"),
                ));
            }
        }
        // Names that differ only by case within one directory.
        let mut by_dir: HashMap<(String, String), Vec<&str>> = HashMap::new();
        for f in ds.files() {
            by_dir
                .entry((f.dir().to_string(), f.file_name().to_lowercase()))
                .or_default()
                .push(f.path.as_str());
        }
        for group in by_dir.values().filter(|g| g.len() > 1) {
            for p in group {
                let mut issue = Issue::new("CASE_COLLISION", Severity::Error, *p);
                issue.affects = group
                    .iter()
                    .filter(|q| *q != p)
                    .map(|q| q.to_string())
                    .collect();
                out.push(issue);
            }
        }
    }

    fn code_messages(&self, issues: &[Issue]) -> IndexMap<String, String> {
        let mut by_code: HashMap<&str, &str> = HashMap::new();
        for spec in self.schema.checks.iter().filter_map(|r| r.issue.as_ref()) {
            by_code
                .entry(spec.code.as_str())
                .or_insert(spec.message.as_str());
        }
        for rule in &self.schema.errors {
            by_code
                .entry(rule.code.as_str())
                .or_insert(rule.message.as_str());
        }
        let codes: BTreeSet<&str> = issues.iter().map(|i| i.code.as_str()).collect();
        codes
            .into_iter()
            .map(|c| {
                (
                    c.to_string(),
                    by_code
                        .get(c)
                        .map(|m| m.trim().to_string())
                        .unwrap_or_default(),
                )
            })
            .collect()
    }

    fn summary(&self, ds: &Dataset) -> Summary {
        let mut subjects = BTreeSet::new();
        let mut sessions = BTreeSet::new();
        let mut tasks = BTreeSet::new();
        let mut datatypes = BTreeSet::new();
        let mut modalities = BTreeSet::new();
        let mut total = 0;
        let mut size = 0;
        for f in ds.files().iter().filter(|f| f.validated()) {
            total += 1;
            size += f.size;
            if let Some(s) = f.name.get("sub") {
                subjects.insert(s.to_string());
            }
            if let Some(s) = f.name.get("ses") {
                sessions.insert(s.to_string());
            }
            if let Some(s) = f.name.get("task") {
                tasks.insert(s.to_string());
            }
            if let Some(dt) = &f.datatype {
                datatypes.insert(dt.clone());
                for (modality, dts) in &self.schema.modalities {
                    if dts.iter().any(|d| d == dt) {
                        modalities.insert(modality.clone());
                    }
                }
            }
        }
        let description = ds.dataset_value().get("dataset_description");
        Summary {
            subjects: subjects.into_iter().collect(),
            sessions: sessions.into_iter().collect(),
            tasks: tasks.into_iter().collect(),
            modalities: modalities.into_iter().collect(),
            data_types: datatypes.into_iter().collect(),
            total_files: total,
            size,
            schema_version: self.schema.version.clone(),
            dataset_version: description
                .get(&self.schema.brand.version_key)
                .as_str()
                .map(str::to_string),
            version_key: self.schema.brand.version_key.clone(),
        }
    }
}

/// Gathers every `path`/`paths` string of an associations object.
fn collect_paths(v: &Value, out: &mut Vec<String>) {
    let Value::Object(o) = v else { return };
    for (k, x) in o.iter() {
        match (k.as_str(), x) {
            ("path", Value::String(s)) => out.push(s.to_string()),
            ("paths", Value::Array(a)) => {
                out.extend(a.iter().filter_map(|p| p.as_str().map(str::to_string)))
            }
            (_, Value::Object(_)) => collect_paths(x, out),
            _ => {}
        }
    }
}

fn convert_dataset_issue(d: &DatasetIssue) -> Issue {
    let severity = match d.severity {
        nidos_dataset::Severity::Error => Severity::Error,
        nidos_dataset::Severity::Warning => Severity::Warning,
    };
    let mut issue =
        Issue::new(d.code.clone(), severity, d.location.clone()).message(d.message.clone());
    if let Some(s) = &d.sub_code {
        issue.sub_code = s.clone();
    }
    issue.line = d.line;
    issue
}

/// The context as the rules after file identification see it: entities, extension or
/// suffix blank when the file's rule says nothing of them.
struct Cleaned<'a, 'd> {
    inner: &'a FileContext<'d>,
    entities: bool,
    extension: bool,
    suffix: bool,
}

impl Context for Cleaned<'_, '_> {
    fn lookup(&self, name: &str) -> Value {
        match name {
            "entities" if self.entities => Value::object(Object::new()),
            "extension" if self.extension => Value::str(""),
            "suffix" if self.suffix => Value::str(""),
            _ => self.inner.lookup(name),
        }
    }

    fn exists(&self, rule: &str, path: &str) -> Option<bool> {
        self.inner.exists(rule, path)
    }

    fn names(&self) -> Vec<String> {
        self.inner.names()
    }
}
