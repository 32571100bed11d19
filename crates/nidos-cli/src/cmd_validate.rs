//! `nidos validate DIR`: applies the schema's rules and prints a report.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use nidos_schema::Schema;
use nidos_validate::{emit, Config, Engine, Options, Progress, Report, Request};

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
    /// Keep each file's results in DIR (a folder outside the dataset) and reuse them
    /// on the next run for the files whose inputs did not change.
    #[arg(long, value_name = "DIR", conflicts_with = "recursive")]
    pub cache: Option<PathBuf>,
    /// Validate, then again on every change to the dataset (only what the change
    /// touches), printing the issues resolved and new with the totals; Ctrl-C stops.
    #[arg(long, conflicts_with_all = ["recursive", "output", "cache"])]
    pub watch: bool,
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
    let timer = std::sync::Arc::new(crate::timer::Timer::start());
    let mut warnings = Vec::new();
    let source = schema_arg::source(&args.schema, Some(&args.dataset), &mut warnings)?;
    for w in &warnings {
        eprintln!("nidos: warning: {}", crate::escape::keep_lines(w));
    }
    let options = Options {
        ignore_nifti_headers: args.ignore_nifti_headers,
        max_rows: usize::try_from(args.max_rows).ok(),
        config: read_config(&args)?,
        ignore_warnings: args.ignore_warnings,
        blacklist_modalities: args.blacklist_modalities.clone(),
        progress: None,
        dataset_types: args.dataset_types.clone(),
        hed_schema_dirs: args.hed_schema_dir.clone(),
        only_under: None,
        only_kinds: None,
        skip_hed: args.no_hed,
        // The library's phases on the same clock.
        phases: timer
            .on()
            .then(|| timer.clone() as std::sync::Arc<dyn nidos_validate::Phases>),
    };
    // The meter stops (and erases its line) when dropped, on error paths too.
    let (options, meter) = ProgressMeter::start(options);
    let request = Request {
        source,
        std_version: args.schema.std_version.clone(),
        options,
        recursive: args.recursive,
        prune: args.prune,
        explain_later: true,
    };
    if args.watch {
        drop(meter);
        let color = use_color(&args);
        let first = |mut out: &mut dyn Write, schema: &Schema, report: &Report| {
            write_report(&mut out, &args, Some(schema), report, &[], None, color)
        };
        return crate::watch::run(&args.dataset, &request, &first);
    }
    let mut cached = None;
    let mut done = match &args.cache {
        Some(cache) => {
            use nidos_validate::incremental::cache::{check_folder, Prepared};
            check_folder(cache, &args.dataset)?;
            let mut prepared = Prepared::new(cache, &args.dataset, &request);
            timer.lap("cache: listing");
            let key = emit_key(&args);
            if let Some(mut hit) = prepared.stored(key) {
                drop(meter);
                let code = write_stored(&args, &mut hit);
                timer.lap("write stored report");
                return code;
            }
            let (done, parts) = validate_cached(&args.dataset, &request, &mut prepared)?;
            cached = Some((prepared, parts, key));
            done
        }
        None => nidos_validate::validate(&args.dataset, &request).map_err(schema_arg::run_error)?,
    };
    for w in &done.warnings {
        eprintln!("nidos: warning: {}", crate::escape::keep_lines(w));
    }
    drop(meter);
    // The fixes of this run's issues: `fixable` stays only on the issues for which
    // `nidos fix` would change a file, and SARIF carries them as `fixes`.
    let plan = if done.report.issues.iter().any(|i| i.fixable) {
        let plan = nidos_fix::plan(&done, &nidos_fix::Options::default())?;
        mark_what_fix_changes(&plan, &mut done.report);
        timer.lap("fixes");
        Some(plan)
    } else {
        None
    };
    let timer = crate::timer::Timer::start();
    let failed = done.report.has_errors() || done.derivatives.iter().any(|(_, r)| r.has_errors());
    let color = use_color(&args);
    // The report is written as it is produced (no whole-report string or JSON tree).
    let sink: Box<dyn Write> = match &args.output {
        Some(p) => {
            Box::new(std::fs::File::create(p).with_context(|| format!("writing {}", p.display()))?)
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, sink);
    let written = match cached {
        // The report is kept in the cache too: written whole first.
        Some((prepared, parts, key)) => {
            let mut bytes = Vec::new();
            write_report(
                &mut bytes,
                &args,
                Some(&done.schema),
                &done.report,
                &done.derivatives,
                plan.as_ref(),
                color,
            )?;
            let written = out.write_all(&bytes).and_then(|()| out.flush());
            timer.lap("write report");
            let output = nidos_validate::incremental::cache::Output {
                emit_key: key,
                failed,
                warnings: done.warnings.clone(),
                len: bytes.len() as u64,
            };
            if let Err(e) = prepared.save(&parts, Some((output, &bytes))) {
                eprintln!(
                    "nidos: warning: {}",
                    crate::escape::keep_lines(&e.to_string())
                );
            }
            timer.lap("write cache");
            written
        }
        None => {
            let written = write_report(
                &mut out,
                &args,
                Some(&done.schema),
                &done.report,
                &done.derivatives,
                plan.as_ref(),
                color,
            )
            .and_then(|()| out.flush());
            timer.lap("write report");
            written
        }
    };
    // The process exits next: its memory goes back to the system without freeing the
    // report's hundreds of thousands of issues, the dataset's file list and caches and
    // the rules piece by piece.
    std::mem::forget(done);
    std::mem::forget(plan);
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

/// `--cache DIR`, when no stored report answers: the run through an incremental
/// session that reuses the cached results of unchanged files, and the session's parts
/// to write into the cache with the report (a cache that cannot be used or written is
/// a warning, never a failure of the validation).
fn validate_cached(
    dir: &Path,
    request: &Request,
    prepared: &mut nidos_validate::incremental::cache::Prepared,
) -> anyhow::Result<(
    nidos_validate::Validation,
    nidos_validate::incremental::cache::Parts,
)> {
    use nidos_validate::incremental::{load_rules, Session};
    let (schema, warnings) = load_rules(dir, request).map_err(schema_arg::run_error)?;
    let (session, used) =
        Session::with_prepared(&schema, dir, request, prepared).map_err(schema_arg::run_error)?;
    if let Some(why) = &used.ignored {
        eprintln!("nidos: warning: {}", crate::escape::keep_lines(why));
    }
    let parts = session.cache_parts();
    Ok((session.into_validation(schema.clone(), warnings), parts))
}

/// What chooses the bytes of a report besides the dataset and the run's options: the
/// format, `--verbose`, colour, the dataset's path as given (reports name it).
fn emit_key(args: &Args) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    (
        format!("{:?}", args.format),
        args.verbose,
        use_color(args),
        args.dataset.as_os_str().as_encoded_bytes(),
    )
        .hash(&mut h);
    h.finish()
}

/// Writes a stored report (`--cache`, nothing changed since it was made) and answers
/// the exit code its run had.
fn write_stored(
    args: &Args,
    hit: &mut nidos_validate::incremental::cache::Hit,
) -> anyhow::Result<ExitCode> {
    for w in &hit.warnings {
        eprintln!("nidos: warning: {}", crate::escape::keep_lines(w));
    }
    let written = match &args.output {
        Some(p) => {
            let mut file =
                std::fs::File::create(p).with_context(|| format!("writing {}", p.display()))?;
            hit.copy_to(&mut file)
        }
        None => {
            let mut out = std::io::stdout().lock();
            hit.copy_to(&mut out).and_then(|n| out.flush().map(|()| n))
        }
    };
    if let (Err(e), Some(p)) = (written, &args.output) {
        return Err(anyhow::Error::new(e).context(format!("writing {}", p.display())));
    }
    Ok(if hit.failed {
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
pub(crate) fn use_color(args: &Args) -> bool {
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
        None,
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
pub(crate) fn write_report(
    out: &mut impl Write,
    args: &Args,
    schema: Option<&Schema>,
    report: &Report,
    derivatives: &[(String, Report)],
    plan: Option<&nidos_fix::Plan>,
    color: bool,
) -> std::io::Result<()> {
    let format = match args.format {
        Format::Text => emit::Format::Text,
        Format::Json => emit::Format::Json,
        Format::JsonPp => emit::Format::JsonPretty,
        Format::Sarif => emit::Format::Sarif,
        Format::Html => emit::Format::Html,
    };
    let fixes = plan.map(nidos_fix::Plan::fixes);
    let e = emit::Emit {
        root: &args.dataset,
        report,
        derivatives,
        schema,
        fixes: fixes.as_ref(),
        verbose: args.verbose,
        color,
    };
    emit::write(out, format, &e)
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

/// Keeps the `fixable` mark (and so the count of issues that "can be repaired") only on
/// the issues for which `nidos fix` would change a file: a fix that finds nothing to do
/// in the file, or may not write it (a link, a repeated key), does not count.
fn mark_what_fix_changes(plan: &nidos_fix::Plan, report: &mut Report) {
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
