//! `nidos fix DIR [--apply] [--only CODE...]`: shows (or, with `--apply`, writes) the
//! repairs the schema declares for the dataset's issues. The planning and writing live
//! in `nidos-fix`; this module only parses arguments and prints.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::schema_arg;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The dataset directory.
    pub dataset: PathBuf,
    /// Write the changes (default: print them as a unified diff and write nothing).
    #[arg(long)]
    pub apply: bool,
    /// Fix only issues with these codes.
    #[arg(long, num_args = 1.., value_name = "CODE")]
    pub only: Vec<String>,
    /// With --apply: how long to wait for another `nidos fix --apply` on the same
    /// dataset to finish before giving up (seconds).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub wait: f64,
    #[command(flatten)]
    pub schema: schema_arg::SchemaArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut warnings = Vec::new();
    let source = schema_arg::source(&args.schema, Some(&args.dataset), &mut warnings)?;
    let opts = nidos_fix::Options {
        only: args.only.clone(),
        // A missing version key gets the version whose rules apply: the one named with
        // --std-version, else the newest.
        version: None,
    };
    // One run writes a dataset at a time; the lock is taken before planning, so a run
    // that waited plans on what the other one wrote.
    let lock = if args.apply {
        let wait = std::time::Duration::try_from_secs_f64(args.wait.max(0.0))
            .unwrap_or(std::time::Duration::MAX);
        Some(nidos_fix::DatasetLock::acquire(
            &args.dataset,
            wait,
            |holder| {
                let who = holder.map_or_else(String::new, |p| format!(" (process {p})"));
                eprintln!(
                    "nidos: another `nidos fix --apply`{who} is writing this dataset; waiting"
                );
            },
        )?)
    } else {
        None
    };
    // Every table is read whole: a fix may answer an issue in any row.
    let request = nidos_validate::Request {
        source,
        std_version: args.schema.std_version.clone(),
        options: nidos_validate::Options {
            max_rows: None,
            ..nidos_validate::Options::default()
        },
        ..nidos_validate::Request::default()
    };
    let done = nidos_validate::validate(&args.dataset, &request).map_err(schema_arg::run_error)?;
    for w in warnings.iter().chain(&done.warnings) {
        eprintln!("nidos: warning: {}", crate::escape::keep_lines(w));
    }
    let plan = nidos_fix::plan(&done, &opts)?;
    let mut out = std::io::stdout().lock();
    let n_changes: usize = plan.edits.iter().map(|e| e.changes.len()).sum();
    if let Some(lock) = &lock {
        let applied = nidos_fix::apply(&plan, lock)?;
        for edit in &plan.edits {
            if !applied.written.contains(&edit.path) {
                continue;
            }
            for c in &edit.changes {
                // The issue each change answers, where validate reports it.
                let origin = if c.origin == edit.path {
                    String::new()
                } else {
                    format!(" (issue at {})", esc(&c.origin))
                };
                writeln!(
                    out,
                    "fixed {} {}: {}{origin}",
                    c.code,
                    esc(&edit.path),
                    esc(&c.description)
                )?;
            }
        }
        summary(&plan)?;
        for (path, why) in &applied.refused {
            eprintln!("nidos: {}: {}", esc(path), esc(why));
        }
        eprintln!(
            "nidos: {} file(s) written ({} fix(es))",
            applied.written.len(),
            plan.edits
                .iter()
                .filter(|e| applied.written.contains(&e.path))
                .map(|e| e.changes.len())
                .sum::<usize>()
        );
        if !applied.refused.is_empty() {
            eprintln!(
                "nidos: {} file(s) not written: they changed while fix ran; run it again",
                applied.refused.len()
            );
            return Ok(ExitCode::from(2));
        }
    } else {
        for edit in &plan.edits {
            write!(out, "{}", nidos_fix::unified_diff(edit))?;
        }
        summary(&plan)?;
        if plan.edits.is_empty() {
            eprintln!("nidos: nothing to fix automatically");
        } else {
            eprintln!(
                "nidos: {} file(s) would change ({n_changes} fix(es)); run with --apply to write them",
                plan.edits.len()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What is left to a person, on standard error.
fn summary(plan: &nidos_fix::Plan) -> std::io::Result<()> {
    let mut err = std::io::stderr().lock();
    if !plan.manual.is_empty() {
        writeln!(err, "needs a person:")?;
        for m in &plan.manual {
            writeln!(err, "  {} {}: {}", m.code, esc(&m.location), esc(&m.reason))?;
        }
    }
    if plan.without_fix > 0 {
        writeln!(
            err,
            "{} other issue(s) have no automatic fix (see `nidos validate`)",
            plan.without_fix
        )?;
    }
    Ok(())
}

/// Text from the dataset (names, values) made safe for a terminal.
fn esc(text: &str) -> String {
    nidos_fix::escape_name(text)
}
