//! The schema options every dataset command shares (`--schema`, `--std-version`) and
//! how a schema is chosen for a dataset.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use nidos_schema::Schema;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct SchemaArgs {
    /// A schema to use instead of the bundled one: a YAML rule tree, a compiled JSON, a
    /// release tag (`v1.9.0`, `stable`, `latest`) or a URL of a published compiled
    /// schema (downloaded once into the user's cache, then reused offline).
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
            eprintln!("{prefix}warning: {}", crate::escape::keep_lines(w));
        }
    }
}

fn load_error(e: nidos_schema::SchemaErrors) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// Loads the schema for `dataset` as a validation run chooses it
/// (`nidos_dataset::rules_for`): the brand its description selects, the version it
/// declares (or `--std-version`), from the bundled rules or `--schema`. `ls`, `index`
/// and the other dataset commands read the dataset by these rules.
pub fn load_for_dataset(args: &SchemaArgs, dataset: &Path) -> anyhow::Result<Loaded> {
    load_with(args, Some(dataset), None)
}

/// Loads the schema for a dataset with no directory (`validate --filename-mode`): the
/// brand and version `description` declares (`None`: the default brand, the newest
/// version), from the bundled rules or `--schema`.
pub fn load_for_description(
    args: &SchemaArgs,
    description: Option<serde_json::Value>,
) -> anyhow::Result<Loaded> {
    load_with(args, None, description)
}

/// The schema for `dataset` (its description read there), else for `description`.
fn load_with(
    args: &SchemaArgs,
    dataset: Option<&Path>,
    description: Option<serde_json::Value>,
) -> anyhow::Result<Loaded> {
    let mut warnings = Vec::new();
    let source = source(args, dataset, &mut warnings)?;
    let requested = args.std_version.as_deref();
    let chosen = match dataset {
        // The choice a validation run makes (`nidos_dataset::rules_for`).
        Some(dir) => nidos_dataset::rules_for(&source, dir, requested),
        None => nidos_schema::load_for_description(&source, description, requested),
    }
    .map_err(load_error)
    .context("loading the schema")?;
    warnings.extend(chosen.warnings.iter().map(|w| w.to_string()));
    Ok(Loaded {
        schema: chosen.schema,
        warnings,
    })
}

/// Where `--schema` says the rules come from: the bundled rules without it, else a local
/// tree or file (a release tag or URL downloaded into the cache first; a stale-cache
/// warning goes to `warnings`).
pub fn source(
    args: &SchemaArgs,
    dataset: Option<&Path>,
    warnings: &mut Vec<String>,
) -> anyhow::Result<nidos_schema::Source> {
    match &args.schema {
        None => Ok(nidos_schema::Source::Bundled),
        Some(arg) => {
            let path = local_schema(arg, dataset, warnings)?;
            if !path.exists() {
                anyhow::bail!(
                    "--schema {}: no such file or directory (expected a YAML rule tree \
                     directory or a compiled schema JSON file)",
                    path.display()
                );
            }
            Ok(nidos_schema::Source::Path(path))
        }
    }
}

/// The error of a validation that could not run, as the command line words it.
pub fn run_error(e: nidos_validate::RunError) -> anyhow::Error {
    match e {
        nidos_validate::RunError::Rules(e) => load_error(e).context("loading the schema"),
        nidos_validate::RunError::UnknownModality { given, valid } => anyhow::anyhow!(
            "--blacklist-modalities: unknown modality {given:?}; valid values: {}",
            valid.join(", ")
        ),
        nidos_validate::RunError::Open { dir, error } => {
            anyhow::Error::new(error).context(format!("cannot validate {}", dir.display()))
        }
    }
}

/// The local path of a `--schema` argument: itself, or for a release tag or URL the
/// cached download ([`crate::schema_fetch`]); a stale-cache warning goes to `warnings`.
pub fn local_schema(
    arg: &Path,
    dataset: Option<&Path>,
    warnings: &mut Vec<String>,
) -> anyhow::Result<PathBuf> {
    match crate::schema_fetch::remote(arg, dataset)? {
        None => Ok(arg.to_path_buf()),
        Some(remote) => {
            let (file, warning) = crate::schema_fetch::fetch(&remote)?;
            warnings.extend(warning);
            Ok(file)
        }
    }
}
