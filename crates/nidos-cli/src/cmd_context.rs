//! `nidos context DIR PATH`: prints the whole evaluation context of one file as JSON,
//! every part loaded (the `schema` field is left out: it is the whole schema).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use nidos_dataset::{display_json, open_file_context, OpenOptions};

use crate::schema_arg;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The dataset directory.
    pub dataset: PathBuf,
    /// The file: dataset-relative (`sub-01/anat/sub-01_T1w.nii.gz`) or a path inside DIR.
    pub path: String,
    #[command(flatten)]
    pub schema: schema_arg::SchemaArgs,
    /// Do not read NIfTI headers.
    #[arg(long = "ignore-nifti-headers", visible_alias = "ignoreNiftiHeaders")]
    pub ignore_nifti_headers: bool,
    /// Keep at most N rows of each table in `columns` and association payloads.
    #[arg(long = "max-rows", visible_alias = "maxRows")]
    pub max_rows: Option<usize>,
    /// Also print the issues found while loading the file (under `"_issues"`).
    #[arg(long)]
    pub issues: bool,
    /// Print `dataset.tree` in full (by default it is summarised: it lists every file).
    #[arg(long)]
    pub tree: bool,
}

/// The eager context JSON of one file (what `nidos context` prints).
pub fn context_json(args: &Args) -> anyhow::Result<serde_json::Value> {
    let loaded = schema_arg::load_for_dataset(&args.schema, &args.dataset)?;
    loaded.print_warnings("");
    let opts = OpenOptions {
        ignore_nifti_headers: args.ignore_nifti_headers,
        max_rows: args.max_rows,
        ..OpenOptions::default()
    };
    let opened = open_file_context(&args.dataset, &args.path, &loaded.schema, &opts)
        .with_context(|| format!("opening {} in {}", args.path, args.dataset.display()))?;
    let ctx = opened.context();
    let mut json = display_json(&ctx, args.tree);
    if args.issues {
        ctx.load_own();
        let issues: Vec<serde_json::Value> =
            ctx.load_issues().iter().map(|i| i.to_json()).collect();
        if let Some(o) = json.as_object_mut() {
            o.insert("_issues".into(), serde_json::Value::Array(issues));
        }
    }
    Ok(json)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let json = context_json(&args)?;
    let text = serde_json::to_string_pretty(&json)?;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}
