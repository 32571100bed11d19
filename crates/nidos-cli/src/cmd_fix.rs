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
    #[command(flatten)]
    pub schema: schema_arg::SchemaArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let loaded = schema_arg::load_for_dataset(&args.schema, &args.dataset)?;
    loaded.print_warnings("nidos: ");
    let opts = nidos_fix::Options {
        only: args.only.clone(),
        // A missing version key gets the version whose rules apply: the one named with
        // --std-version, else the newest.
        version: None,
    };
    let plan = nidos_fix::plan(&loaded.schema, &args.dataset, &opts)?;
    let mut out = std::io::stdout().lock();
    let n_changes: usize = plan.edits.iter().map(|e| e.changes.len()).sum();
    if args.apply {
        let written = nidos_fix::apply(&plan)?;
        for edit in &plan.edits {
            for c in &edit.changes {
                writeln!(out, "fixed {} {}: {}", c.code, edit.path, c.description)?;
            }
        }
        summary(&plan)?;
        eprintln!(
            "nidos: {} file(s) written ({n_changes} fix(es))",
            written.len()
        );
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
            writeln!(err, "  {} {}: {}", m.code, m.location, m.reason)?;
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
