//! `nidos validate DIR`: applies the schema's rules and prints a report.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use nidos_schema::Schema;
use nidos_validate::{Config, Engine, Options, Progress, Report};

use crate::render_text::{write_issues, write_summary, write_text};
use crate::schema_arg;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    #[value(name = "json_pp")]
    JsonPp,
    /// SARIF 2.1.0, for code-scanning dashboards.
    Sarif,
    /// One self-contained HTML page with filters.
    Html,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The dataset directory (before or after the options).
    #[arg(value_name = "DATASET")]
    pub dataset_arg: Option<PathBuf>,
    /// The dataset directory, once the arguments are read (see `take_dataset_from_lists`).
    #[arg(skip)]
    pub dataset: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// The JSON report (the same as `--format json`).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Write the report to a file instead of stdout.
    #[arg(short = 'o', long = "outfile", visible_alias = "output")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub schema: schema_arg::SchemaArgs,
    /// A configuration file: {"ignore": [...], "warning": [...], "error": [...]}.
    #[arg(short = 'c', long)]
    pub config: Option<PathBuf>,
    /// Leave warnings out of the report.
    #[arg(long = "ignore-warnings", visible_alias = "ignoreWarnings")]
    pub ignore_warnings: bool,
    /// Do not read NIfTI headers.
    #[arg(long = "ignore-nifti-headers", visible_alias = "ignoreNiftiHeaders")]
    pub ignore_nifti_headers: bool,
    /// Read at most N rows of each table (participants, sessions, scans and phenotype
    /// tables are always read whole). -1 reads everything.
    #[arg(
        long = "max-rows",
        visible_alias = "maxRows",
        default_value_t = 1000,
        allow_negative_numbers = true
    )]
    pub max_rows: i64,
    /// Report these modalities as errors when present (repeat the option or separate
    /// with commas; the schema's modalities are the valid values).
    #[arg(
        long = "blacklist-modalities",
        visible_alias = "blacklistModalities",
        value_delimiter = ',',
        num_args = 1..
    )]
    pub blacklist_modalities: Vec<String>,
    /// A directory with extra HED schemas (`HED8.0.0.xml`, `HED_score_1.2.0.xml`, or the
    /// `.json.gz` form `cargo xtask hed-import` writes), searched before the bundled ones.
    #[arg(long = "hed-schema-dir", value_name = "DIR")]
    pub hed_schema_dir: Vec<std::path::PathBuf>,
    /// Do not check HED annotations, even when dataset_description.json names `HEDVersion`.
    #[arg(long = "no-hed")]
    pub no_hed: bool,
    /// Number of worker threads (default: one per CPU; two per CPU for a dataset of 256
    /// or more top-level entries, whose reads then overlap).
    #[arg(short = 'j', long, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Also validate each `derivatives/<name>` that has its own dataset_description.json,
    /// as a dataset of its own.
    #[arg(short = 'r', long)]
    pub recursive: bool,
    /// Accept only these dataset types; any other is an error (repeat the option or
    /// separate with commas).
    #[arg(
        long = "dataset-types",
        visible_alias = "datasetTypes",
        value_delimiter = ',',
        num_args = 1..
    )]
    pub dataset_types: Vec<String>,
    /// Skip the dataset's `sourcedata/` and `derivatives/` while reading it.
    #[arg(long)]
    pub prune: bool,
    /// Read file names from stdin, one a line (dataset-relative, such as
    /// `/sub-01/anat/sub-01_T1w.nii.gz`), and apply only the file-name rules: no dataset
    /// is read (a DATASET given is not used).
    #[arg(long = "filename-mode", visible_alias = "filenameMode")]
    pub filename_mode: bool,
    /// Print every location of every issue in the text report.
    #[arg(short, long)]
    pub verbose: bool,
    /// Colour the text report (default: when stdout is a terminal).
    #[arg(long, overrides_with = "no_color")]
    pub color: bool,
    /// Never colour the text report.
    #[arg(long = "no-color", visible_alias = "noColor")]
    pub no_color: bool,
}

/// The dataset types `--dataset-types` accepts.
const DATASET_TYPES: [&str; 3] = ["raw", "derivative", "study"];

pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    if args.json {
        args.format = Format::Json;
    }
    take_dataset_from_lists(&mut args);
    if args.filename_mode {
        return run_filename_mode(args);
    }
    if args.dataset.as_os_str().is_empty() {
        anyhow::bail!("missing the dataset directory: nidos validate [OPTIONS] DATASET");
    }
    for t in &args.dataset_types {
        if !DATASET_TYPES.contains(&t.as_str()) {
            anyhow::bail!(
                "--dataset-types: unknown dataset type {t:?}; valid values: {}",
                DATASET_TYPES.join(", ")
            );
        }
    }
    let large = crate::scale::is_large(&args.dataset);
    crate::workers::start(args.jobs, large)?;
    crate::huge_pages::fit_to(large);
    if !args.no_hed && args.hed_schema_dir.is_empty() {
        // The HED schemas decode on a worker while this thread loads the rules.
        nidos_validate::prefetch_hed_schemas(&args.dataset);
    }
    let timer = crate::timer::Timer::start();
    let loaded = schema_arg::load_for_dataset(&args.schema, &args.dataset)?;
    loaded.print_warnings("nidos: ");
    timer.lap("load schema");
    check_modalities(&loaded.schema, &args.blacklist_modalities)?;
    let config = read_config(&args)?;
    let opts = Options {
        ignore_nifti_headers: args.ignore_nifti_headers,
        max_rows: usize::try_from(args.max_rows).ok(),
        config,
        ignore_warnings: args.ignore_warnings,
        blacklist_modalities: args.blacklist_modalities.clone(),
        progress: None,
        dataset_types: args.dataset_types.clone(),
        hed_schema_dirs: args.hed_schema_dir.clone(),
        only_under: None,
        only_kinds: None,
        skip_hed: args.no_hed,
        phases: None,
    };
    let engine = Engine::new(&loaded.schema);
    timer.lap("prepare engine");
    let (opts, meter) = ProgressMeter::start(opts);
    // The meter stops (and erases its line) when dropped, on error paths too.
    let (mut report, ds) = validate_one(&engine, &args.dataset, &opts, &args)?;
    // The laps above, together: the next lap then counts the later versions alone.
    timer.lap("validation");
    if args.schema.schema.is_none() && args.schema.std_version.is_none() {
        let (schema, dir) = (&loaded.schema, args.dataset.as_path());
        let open = open_options(dir, &opts, &args);
        crate::later_versions::explain(&mut report, schema, &ds, &opts, dir, &open, &timer);
        timer.lap("later versions (the rest)");
    }
    if report.issues.iter().any(|i| i.fixable) {
        mark_what_fix_changes(&loaded.schema, &args.dataset, &ds, &mut report);
        timer.lap("fixable marks");
    }
    if args.recursive {
        drop(ds);
    } else {
        // Freeing a large dataset's file list and caches takes a noticeable share of the
        // run, and the process ends soon.
        std::mem::forget(ds);
    }
    let mut derivatives = Vec::new();
    if args.recursive {
        let found = nidos_dataset::derivative_datasets(&nidos_dataset::OsFs, &args.dataset);
        for dir in found.iter().map(|d| args.dataset.join(d)) {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            let loaded = schema_arg::load_for_dataset(&args.schema, &dir)?;
            let engine = Engine::new(&loaded.schema);
            derivatives.push((name, validate_one(&engine, &dir, &opts, &args)?.0));
        }
    }
    drop(meter);
    // SARIF carries the repairs `nidos fix --only CODE` would make for each code (its
    // `fixes`), so each result's fix changes only what its issue asks: planned only then.
    let plans: Vec<nidos_fix::Plan> = if args.format == Format::Sarif {
        let codes: std::collections::BTreeSet<&str> = report
            .issues
            .iter()
            .filter(|i| i.fixable)
            .map(|i| i.code().as_str())
            .collect();
        codes
            .into_iter()
            .filter_map(|code| {
                let only = nidos_fix::Options {
                    only: vec![code.to_owned()],
                    ..nidos_fix::Options::default()
                };
                nidos_fix::plan(&loaded.schema, &args.dataset, &only).ok()
            })
            .collect()
    } else {
        Vec::new()
    };
    let timer = crate::timer::Timer::start();
    let failed = report.has_errors() || derivatives.iter().any(|(_, r)| r.has_errors());
    let color = use_color(&args);
    // The report is written as it is produced (no whole-report string or JSON tree).
    let sink: Box<dyn Write> = match &args.output {
        Some(p) => {
            Box::new(std::fs::File::create(p).with_context(|| format!("writing {}", p.display()))?)
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, sink);
    let written = write_report(
        &mut out,
        &args,
        Some(&loaded.schema),
        &report,
        &derivatives,
        &plans,
        color,
    )
    .and_then(|()| out.flush());
    timer.lap("write report");
    // The process exits next: its memory goes back to the system without freeing the
    // report's hundreds of thousands of issues one by one.
    std::mem::forget(report);
    std::mem::forget(derivatives);
    // So are the rules and the engine built on them (a tree of parsed expressions).
    std::mem::forget(engine);
    std::mem::forget(loaded);
    // A closed pipe (`| head`) is not an error of the validation; a failed -o file is.
    if let (Err(e), Some(p)) = (written, &args.output) {
        return Err(anyhow::Error::new(e).context(format!("writing {}", p.display())));
    }
    Ok(if failed {
        ExitCode::from(16)
    } else {
        ExitCode::SUCCESS
    })
}

/// The `--config` file's groups (none without the option).
fn read_config(args: &Args) -> anyhow::Result<Config> {
    match &args.config {
        Some(p) => {
            // Guarded as dataset files are: a regular file of at most 16 MiB.
            let bytes = nidos_dataset::guarded::read_regular(p, 16 << 20)
                .with_context(|| format!("reading config {}", p.display()))?;
            let text = String::from_utf8(bytes)
                .with_context(|| format!("reading config {}", p.display()))?;
            Config::from_json(&text).with_context(|| format!("config {}", p.display()))
        }
        None => Ok(Config::default()),
    }
}

/// Whether the text report is coloured: `--no-color`, `--color`, else when stdout is a
/// terminal and (https://no-color.org) NO_COLOR is unset or empty.
fn use_color(args: &Args) -> bool {
    match (args.color, args.no_color) {
        (_, true) => false,
        (true, _) => true,
        _ => {
            args.output.is_none()
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// `--filename-mode`: the names on stdin, judged by the file-name rules alone.
fn run_filename_mode(mut args: Args) -> anyhow::Result<ExitCode> {
    use std::io::Read as _;
    if !args.dataset.as_os_str().is_empty() {
        eprintln!(
            "nidos: --filename-mode reads names from stdin; {} is not read",
            crate::escape::path(&args.dataset)
        );
    }
    args.dataset = PathBuf::from(".");
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("reading file names from stdin")?;
    let (names, rejected) = nidos_validate::parse_names(&text);
    for r in &rejected {
        eprintln!("nidos: warning: {r:?} is not a path inside a dataset; skipped");
    }
    let loaded = schema_arg::load_for_description(&args.schema, None)?;
    loaded.print_warnings("nidos: ");
    let config = read_config(&args)?;
    let opts = Options {
        ignore_nifti_headers: true,
        config,
        ignore_warnings: args.ignore_warnings,
        ..Options::default()
    };
    let engine = Engine::new(&loaded.schema);
    let ds = nidos_validate::open_names(&names, &loaded.schema)
        .context("building the dataset of the names")?;
    let report = engine.validate_names(&ds, &opts);
    let color = use_color(&args);
    let sink: Box<dyn Write> = match &args.output {
        Some(p) => {
            Box::new(std::fs::File::create(p).with_context(|| format!("writing {}", p.display()))?)
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = std::io::BufWriter::new(sink);
    let written = write_report(
        &mut out,
        &args,
        Some(&loaded.schema),
        &report,
        &[],
        &[],
        color,
    )
    .and_then(|()| out.flush());
    if let (Err(e), Some(p)) = (written, &args.output) {
        return Err(anyhow::Error::new(e).context(format!("writing {}", p.display())));
    }
    Ok(if report.has_errors() {
        ExitCode::from(16)
    } else {
        ExitCode::SUCCESS
    })
}

/// `validating N/M files` on stderr, a few times a second, for datasets of more than
/// [`PROGRESS_MIN_FILES`] files, only when stderr is a terminal; erased when done.
struct ProgressMeter {
    worker: Option<(
        std::thread::JoinHandle<()>,
        std::sync::Arc<std::sync::atomic::AtomicBool>,
    )>,
}

const PROGRESS_MIN_FILES: usize = 2000;

impl ProgressMeter {
    fn start(mut opts: Options) -> (Options, ProgressMeter) {
        if !std::io::stderr().is_terminal() {
            return (opts, ProgressMeter { worker: None });
        }
        use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
        let progress = std::sync::Arc::new(Progress::default());
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let (p, s) = (progress.clone(), stop.clone());
        let spawned = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                let mut shown = false;
                while !s.load(Relaxed) {
                    std::thread::park_timeout(std::time::Duration::from_millis(200));
                    let total = p.total.load(Relaxed);
                    if total > PROGRESS_MIN_FILES && !s.load(Relaxed) {
                        let done = p.done.load(Relaxed).min(total);
                        eprint!("\rvalidating {done}/{total} files");
                        shown = true;
                    }
                }
                if shown {
                    eprint!("\r\x1b[K");
                }
            });
        match spawned {
            Ok(handle) => {
                opts.progress = Some(progress);
                (
                    opts,
                    ProgressMeter {
                        worker: Some((handle, stop)),
                    },
                )
            }
            Err(_) => (opts, ProgressMeter { worker: None }),
        }
    }
}

impl Drop for ProgressMeter {
    fn drop(&mut self) {
        if let Some((handle, stop)) = self.worker.take() {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            handle.thread().unpark();
            let _ = handle.join();
        }
    }
}

/// Writes the report in the chosen format.
fn write_report(
    out: &mut impl Write,
    args: &Args,
    schema: Option<&Schema>,
    report: &Report,
    derivatives: &[(String, Report)],
    fixes: &[nidos_fix::Plan],
    color: bool,
) -> std::io::Result<()> {
    match args.format {
        Format::Json | Format::JsonPp => {
            let mut view = report.json();
            for (name, r) in derivatives {
                view = view.derivative(name, r);
            }
            if args.format == Format::Json {
                view.write_compact(out)?;
            } else {
                serde_json::to_writer_pretty(&mut *out, &view)?;
            }
            out.write_all(b"\n")
        }
        Format::Html => crate::render_html::write_html(out, report, derivatives, schema),
        Format::Sarif => {
            crate::render_sarif::write_sarif(out, &args.dataset, report, derivatives, fixes)?;
            out.write_all(b"\n")
        }
        Format::Text => {
            // The root's issues, each derivative's issues and summary, then the root's
            // summary last, where the eye lands.
            write_issues(out, report, schema, args.verbose, color)?;
            for (name, r) in derivatives {
                let name = crate::escape::control(name);
                write!(out, "\nDerivative dataset derivatives/{name}\n\n")?;
                write_text(out, r, schema, args.verbose, color)?;
            }
            if !derivatives.is_empty() {
                let dir = crate::escape::path(&args.dataset);
                write!(out, "\nDataset {dir}\n\n")?;
            }
            write_summary(out, report, color)
        }
    }
}

/// `--dataset-types raw DIR` and `--blacklist-modalities eeg DIR`: the list options take
/// several values, so the dataset given after them lands in the list. When no dataset
/// was given apart, the last value of such a list that is not a dataset type (or that
/// names an existing directory) is the dataset.
fn take_dataset_from_lists(args: &mut Args) {
    if let Some(d) = args.dataset_arg.take() {
        args.dataset = d;
        return;
    }
    let is_dir = |v: &String| Path::new(v).is_dir();
    if let Some(last) = args.dataset_types.last() {
        if !DATASET_TYPES.contains(&last.as_str()) || is_dir(last) {
            args.dataset = args
                .dataset_types
                .pop()
                .map(PathBuf::from)
                .unwrap_or_default();
            return;
        }
    }
    if args.blacklist_modalities.last().is_some_and(is_dir) {
        args.dataset = args
            .blacklist_modalities
            .pop()
            .map(PathBuf::from)
            .unwrap_or_default();
    }
}

/// Rejects `--blacklist-modalities` values that are not modalities of the schema, naming
/// the valid ones.
fn check_modalities(schema: &Schema, given: &[String]) -> anyhow::Result<()> {
    if given.is_empty() {
        // Nothing to check: the schema's tree is not read (see `Schema::raw`).
        return Ok(());
    }
    let valid: Vec<&str> = schema
        .get("objects.modalities")
        .and_then(|v| v.as_object())
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    for m in given {
        if !valid.iter().any(|v| v.eq_ignore_ascii_case(m)) {
            anyhow::bail!(
                "--blacklist-modalities: unknown modality {m:?}; valid values: {}",
                valid.join(", ")
            );
        }
    }
    Ok(())
}

/// Validates one dataset (the engine checks its type against `--dataset-types`); with `--prune`, reads it through [`crate::prune_fs::PruneFs`].
/// Unless `--recursive` (each dataset freed before the next is opened), the opened
/// dataset is left to the operating system: the process exits soon after, and freeing
/// its file list and caches piece by piece would take a noticeable share of the run.
/// Keeps the `fixable` mark (and so the count of issues that "can be repaired") only on
/// the issues for which `nidos fix` would change a file: a fix that finds nothing to do
/// in the file, or may not write it (a link, a repeated key), does not count.
fn mark_what_fix_changes(
    schema: &nidos_schema::Schema,
    dir: &Path,
    ds: &nidos_dataset::Dataset,
    report: &mut Report,
) {
    let plan = nidos_fix::plan_report(
        schema,
        dir,
        ds,
        &report.issues,
        &nidos_fix::Options::default(),
    );
    let answered: std::collections::HashSet<(&str, &str)> = plan
        .edits
        .iter()
        .flat_map(|e| e.changes.iter())
        .map(|c| (c.code.as_str(), c.origin.as_str()))
        .collect();
    for issue in report.issues.iter_mut().filter(|i| i.fixable) {
        let location = issue.location.to_string();
        if !answered.contains(&(issue.code().as_str(), location.as_str())) {
            issue.fixable = false;
        }
    }
}

fn validate_one(
    engine: &Engine<'_>,
    dir: &Path,
    opts: &Options,
    args: &Args,
) -> anyhow::Result<(Report, nidos_dataset::Dataset)> {
    let timer = crate::timer::Timer::start();
    let ds = nidos_dataset::Dataset::open(dir, engine.schema, &open_options(dir, opts, args))
        .with_context(|| format!("cannot validate {}", dir.display()))?;
    timer.lap("open dataset (walk, names, sidecars)");
    let report = if timer.on() {
        // The engine's phases on the same clock.
        let opts = Options {
            phases: Some(std::sync::Arc::new(timer)),
            ..opts.clone()
        };
        engine.validate_dataset(&ds, &opts)
    } else {
        engine.validate_dataset(&ds, opts)
    };
    Ok((report, ds))
}

/// How the datasets of this run are opened.
fn open_options(dir: &Path, opts: &Options, args: &Args) -> nidos_dataset::OpenOptions {
    let mut open = nidos_dataset::OpenOptions {
        ignore_nifti_headers: opts.ignore_nifti_headers,
        max_rows: opts.max_rows,
        ..nidos_dataset::OpenOptions::default()
    };
    if args.prune {
        open.fs = std::sync::Arc::new(crate::prune_fs::PruneFs::new(dir));
    }
    open
}
