//! The schema options every dataset command shares (`--schema`, `--std-version`) and
//! how a schema is chosen for a dataset.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use nidos_schema::Schema;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct SchemaArgs {
    /// A schema to use instead of the bundled one: a YAML rule tree or a compiled JSON.
    #[arg(long, global = true)]
    pub schema: Option<PathBuf>,
    /// The standard version whose rules apply (default: the dataset's, else the newest).
    #[arg(long = "std-version", visible_alias = "schemaVersion", global = true)]
    pub std_version: Option<String>,
}

/// A schema and what choosing it had to say.
pub struct Loaded {
    pub schema: Schema,
    pub warnings: Vec<String>,
}

impl Loaded {
    /// Prints the load warnings on stderr, each as `{prefix}warning: …`.
    pub fn print_warnings(&self, prefix: &str) {
        for w in &self.warnings {
            eprintln!("{prefix}warning: {w}");
        }
    }
}

fn load_error(e: nidos_schema::SchemaErrors) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// Loads the schema for validating `dataset`: the brand its description selects, the
/// version it declares (or `--std-version`), from the bundled rules or `--schema`.
pub fn load_for_dataset(args: &SchemaArgs, dataset: &Path) -> anyhow::Result<Loaded> {
    let source = match &args.schema {
        Some(path) if !path.exists() => anyhow::bail!(
            "--schema {}: no such file or directory (expected a YAML rule tree directory or a \
             compiled schema JSON file)",
            path.display()
        ),
        Some(path) => nidos_schema::Source::Path(path.clone()),
        None => nidos_schema::Source::Bundled,
    };
    let chosen = nidos_schema::load_for_dataset(&source, dataset, args.std_version.as_deref())
        .map_err(load_error)
        .context("loading the schema")?;
    Ok(Loaded {
        schema: chosen.schema,
        warnings: chosen.warnings.iter().map(|w| w.to_string()).collect(),
    })
}
