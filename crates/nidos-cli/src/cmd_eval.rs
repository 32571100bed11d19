//! `nidos eval`: evaluate one expression, or run a file of expression cases.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use nidos_expr::cases::{Case, Outcome};
use nidos_expr::{Context, ObjectContext, ParseError};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The expression, e.g. `sidecar.RepetitionTime > 1`.
    #[arg(required_unless_present = "test")]
    pub expression: Option<String>,

    /// A JSON object bound as the root scope.
    #[arg(long, value_name = "FILE.json")]
    pub context: Option<PathBuf>,

    /// Run a YAML list of `{expression, result[, context][, exists]}` cases instead.
    #[arg(long, value_name = "CASES.yaml", conflicts_with_all = ["expression", "context"])]
    pub test: Option<PathBuf>,

    /// Evaluate against a file of this dataset (with `--file`).
    #[arg(
        long,
        value_name = "DIR",
        requires = "file",
        conflicts_with = "context"
    )]
    pub dataset: Option<PathBuf>,

    /// The file (dataset-relative path) whose context the expression reads.
    #[arg(long, value_name = "PATH", requires = "dataset")]
    pub file: Option<String>,

    /// Do not read NIfTI headers for the file context.
    #[arg(long = "ignore-nifti-headers", visible_alias = "ignoreNiftiHeaders")]
    pub ignore_nifti_headers: bool,

    #[command(flatten)]
    pub schema: crate::schema_arg::SchemaArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.test {
        return run_cases(path);
    }
    let src = args.expression.as_deref().unwrap_or_default();
    let ctx = context_for(&args)?;
    match nidos_expr::parse(src) {
        Ok(expr) => {
            for name in expr.unknown_functions() {
                eprintln!("warning: unknown function `{name}` evaluates to null");
            }
            let value = nidos_expr::eval(&expr, ctx.as_ref());
            warn_regex_budget();
            println!("{}", value.to_json());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{}", render_parse_error(src, &e));
            Ok(ExitCode::from(2))
        }
    }
}

/// Names each pattern whose search ran past the backtracking budget (its `match` was
/// null), once.
pub fn warn_regex_budget() {
    for p in nidos_expr::regex_over_budget() {
        eprintln!(
            "warning: the pattern {} ran past the regular-expression time budget: its match is null",
            crate::cmd_eval::clip_for_display(&serde_json::Value::String(p).to_string())
        );
    }
}

/// The one place the evaluation context is chosen. (`--dataset DIR --file PATH` will
/// add a branch here returning the file's lazily built context.)
pub fn context_for(args: &Args) -> anyhow::Result<Box<dyn Context>> {
    if let (Some(dir), Some(file)) = (&args.dataset, &args.file) {
        return Ok(Box::new(open_dataset_file(
            &args.schema,
            dir,
            file,
            args.ignore_nifti_headers,
        )?));
    }
    match &args.context {
        Some(path) => Ok(Box::new(load_json_context(path)?)),
        None => Ok(Box::new(ObjectContext::default())),
    }
}

/// The context of one file of a dataset, with the schema chosen for that dataset.
pub fn open_dataset_file(
    schema: &crate::schema_arg::SchemaArgs,
    dir: &Path,
    file: &str,
    ignore_nifti_headers: bool,
) -> anyhow::Result<nidos_dataset::OpenedFile> {
    let loaded = crate::schema_arg::load_for_dataset(schema, dir)?;
    loaded.print_warnings("");
    open_file_with(&loaded.schema, dir, file, ignore_nifti_headers)
}

/// The context of one dataset file under a schema already loaded (the REPL loads it
/// once for every `:file`).
pub fn open_file_with(
    schema: &nidos_schema::Schema,
    dir: &Path,
    file: &str,
    ignore_nifti_headers: bool,
) -> anyhow::Result<nidos_dataset::OpenedFile> {
    let opts = nidos_dataset::OpenOptions {
        ignore_nifti_headers,
        ..Default::default()
    };
    nidos_dataset::open_file_context(dir, file, schema, &opts)
        .with_context(|| format!("cannot open {file} in {}", dir.display()))
}

/// Reads a JSON object to use as the root scope.
pub fn load_json_context(path: &Path) -> anyhow::Result<ObjectContext> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    anyhow::ensure!(
        json.is_object(),
        "{}: the context must be a JSON object",
        path.display()
    );
    Ok(ObjectContext::from_json(&json))
}

/// Text shown back to the user: at most [`CLIP_CHARS`] characters, then `… (N bytes)`.
pub fn clip_for_display(text: &str) -> String {
    match text.char_indices().nth(CLIP_CHARS) {
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
        None => text.to_string(),
    }
}

/// How much of an expression or pattern messages show.
const CLIP_CHARS: usize = 120;

/// `error: <message>` followed by the offending source line and a caret under the
/// position.
pub fn render_parse_error(src: &str, e: &ParseError) -> String {
    let snippet = e.snippet(src);
    let indented: Vec<String> = snippet.lines().map(|l| format!("  {l}")).collect();
    format!(
        "error: {} (line {}, column {})\n{}",
        e.message,
        e.line,
        e.column,
        indented.join("\n")
    )
}

fn run_cases(path: &Path) -> anyhow::Result<ExitCode> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let doc: serde_json::Value =
        serde_saphyr::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let cases =
        Case::list_from_json(&doc).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let (mut passed, mut failed) = (0usize, 0usize);
    for case in &cases {
        match case.run() {
            Outcome::Pass => passed += 1,
            Outcome::Wrong { got } => {
                failed += 1;
                println!(
                    "FAIL `{}`: expected {}, got {}",
                    clip_for_display(&case.expression),
                    clip_for_display(&case.result.to_json().to_string()),
                    clip_for_display(&got.to_json().to_string())
                );
            }
            Outcome::ParseError { message } => {
                failed += 1;
                println!(
                    "FAIL `{}`: parse error: {}",
                    clip_for_display(&case.expression),
                    clip_for_display(&message)
                );
            }
        }
    }
    warn_regex_budget();
    println!("{passed} passed, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_sits_under_the_error() {
        let src = "a &&\n  (b ||";
        let e = nidos_expr::parse(src).unwrap_err();
        let out = render_parse_error(src, &e);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[1], "    (b ||");
        assert_eq!(lines[2], "         ^");
        assert!(lines[0].contains("line 2, column 8"), "{out}");
    }
}
