//! One validation, from a directory to a report: the library's entry point, and the only
//! place a whole run is assembled. `nidos validate`, `nidos fix` and the Python
//! `validate` all call [`validate`]; the steps, in order:
//!
//! 1. start decoding the HED schemas the dataset names (unless HED is skipped or extra
//!    schema folders are given), on a worker, while the rules load;
//! 2. choose the rules: the brand and version the dataset declares (or
//!    [`Request::std_version`]) from the bundled tree or [`Request::source`];
//! 3. check the options against those rules (`blacklist_modalities`);
//! 4. open the dataset (through [`nidos_dataset::PruneFs`] with [`Request::prune`]) and
//!    apply the rules, the configuration and the ignore file;
//! 5. with the bundled rules pinned by the declaration, say which issues only a later
//!    version would not raise ([`crate::later`]);
//! 6. with [`Request::recursive`], the same for each derivative dataset
//!    ([`nidos_dataset::derivative_datasets`], the one finder), each with its own rules.
//!
//! The result keeps the opened dataset, so a caller plans fixes (`nidos_fix::plan`) or
//! answers queries from the same run without reading the dataset again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nidos_dataset::{Dataset, DatasetError, OpenOptions};
use nidos_schema::{Schema, SchemaErrors, Source};

use crate::engine::{Engine, Options};
use crate::report::Report;

/// What to validate with, and how.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Where the rules come from (a release tag or URL is the caller's to fetch first).
    pub source: Source,
    /// The version whose rules apply (`None`: the one the dataset declares, else the
    /// newest).
    pub std_version: Option<String>,
    /// How the rules are applied.
    pub options: Options,
    /// Also validate each derivative dataset (`derivatives/<name>` with its own
    /// description), as a dataset of its own.
    pub recursive: bool,
    /// Leave the dataset's `sourcedata/` and `derivatives/` out of the walk.
    pub prune: bool,
    /// Say which issues only a later version would not raise, when the bundled rules are
    /// pinned by the dataset's declaration (see [`crate::pinning`]).
    pub explain_later: bool,
}

/// A finished validation of one dataset.
pub struct Validation {
    /// The dataset directory as given.
    pub root: PathBuf,
    /// The rules that applied.
    pub schema: Arc<Schema>,
    /// What choosing the rules had to say (a replaced version, …), one line each.
    pub warnings: Vec<String>,
    pub report: Report,
    /// The dataset as the run opened it (its parsed files are cached).
    pub dataset: Dataset,
    /// Each derivative dataset's report, by its folder name, sorted
    /// ([`Request::recursive`]).
    pub derivatives: Vec<(String, Report)>,
}

/// Why a validation could not run at all (problems in the dataset are issues).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Rules(SchemaErrors),
    #[error("unknown modality {given:?}; valid values: {}", valid.join(", "))]
    UnknownModality { given: String, valid: Vec<String> },
    #[error("cannot validate {}: {error}", dir.display())]
    Open { dir: PathBuf, error: DatasetError },
}

/// Validates the dataset at `dir` as `request` says (see the module documentation).
pub fn validate(dir: &Path, request: &Request) -> Result<Validation, RunError> {
    let opts = &request.options;
    if !opts.skip_hed && opts.hed_schema_dirs.is_empty() {
        // The HED schemas decode on a worker while this thread loads the rules.
        crate::hed::prefetch(dir);
    }
    opts.begin();
    let (schema, warnings) = rules_for(dir, request)?;
    opts.lap(|| "load schema".to_owned());
    check_modalities(&schema, &opts.blacklist_modalities)?;
    let open = open_options(dir, request);
    let (mut report, dataset) = run_one(&schema, dir, &open, opts)?;
    if request.explain_later
        && matches!(request.source, Source::Bundled)
        && request.std_version.is_none()
    {
        crate::later::explain(&mut report, &schema, &dataset, opts, dir, &open, None);
        opts.lap(|| "later versions (the rest)".to_owned());
    }
    let mut derivatives = Vec::new();
    if request.recursive {
        for rel in nidos_dataset::derivative_datasets(&nidos_dataset::OsFs, dir) {
            let sub = dir.join(&rel);
            let name = rel.trim_start_matches("derivatives/").to_owned();
            let (schema, _) = rules_for(&sub, request)?;
            let (report, ds) = run_one(&schema, &sub, &open_options(&sub, request), opts)?;
            // Freed before the next one is opened.
            drop(ds);
            derivatives.push((name, report));
        }
    }
    Ok(Validation {
        root: dir.to_path_buf(),
        schema,
        warnings,
        report,
        dataset,
        derivatives,
    })
}

/// The rules for the dataset at `dir`, with what choosing them had to say.
pub(crate) fn rules_for(
    dir: &Path,
    request: &Request,
) -> Result<(Arc<Schema>, Vec<String>), RunError> {
    let chosen = nidos_dataset::rules_for(&request.source, dir, request.std_version.as_deref())
        .map_err(RunError::Rules)?;
    let warnings = chosen.warnings.iter().map(|w| w.to_string()).collect();
    Ok((Arc::new(chosen.schema), warnings))
}

/// How the datasets of a run are opened.
pub(crate) fn open_options(dir: &Path, request: &Request) -> OpenOptions {
    let mut open = OpenOptions {
        ignore_nifti_headers: request.options.ignore_nifti_headers,
        max_rows: request.options.max_rows,
        ..OpenOptions::default()
    };
    if request.prune {
        open.fs = Arc::new(nidos_dataset::PruneFs::new(dir));
    }
    open
}

/// Opens one dataset and applies `schema`'s rules to it.
fn run_one(
    schema: &Schema,
    dir: &Path,
    open: &OpenOptions,
    opts: &Options,
) -> Result<(Report, Dataset), RunError> {
    let engine = Engine::new(schema);
    opts.lap(|| "prepare engine".to_owned());
    let ds = Dataset::open(dir, schema, open).map_err(|error| RunError::Open {
        dir: dir.to_path_buf(),
        error,
    })?;
    opts.lap(|| "open dataset (walk, names, sidecars)".to_owned());
    let report = engine.validate_dataset(&ds, opts);
    // The rules' parsed expressions are many small allocations: the engine is left to
    // the process when it is about to exit (see `Engine::new`), here dropped.
    Ok((report, ds))
}

/// Rejects `given` modalities that are not modalities of `schema`, naming the valid ones.
pub(crate) fn check_modalities(schema: &Schema, given: &[String]) -> Result<(), RunError> {
    if given.is_empty() {
        // Nothing to check: the schema's tree is not read (see `Schema::raw`).
        return Ok(());
    }
    let valid: Vec<String> = schema
        .get("objects.modalities")
        .and_then(|v| v.as_object())
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    match given
        .iter()
        .find(|m| !valid.iter().any(|v| v.eq_ignore_ascii_case(m)))
    {
        Some(m) => Err(RunError::UnknownModality {
            given: m.clone(),
            valid,
        }),
        None => Ok(()),
    }
}
