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

/// The version a dataset declares under either brand's key.
fn declared_version(dataset: &Path, key: &str) -> Option<String> {
    let text = std::fs::read(dataset.join("dataset_description.json")).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&text).ok()?;
    v.get(key).and_then(|v| v.as_str()).map(str::to_string)
}

/// Loads the schema for validating `dataset`.
pub fn load_for_dataset(args: &SchemaArgs, dataset: &Path) -> anyhow::Result<Loaded> {
    if let Some(path) = &args.schema {
        let schema = nidos_schema::load_path_with(
            path,
            &nidos_schema::LoadOptions {
                version: args.std_version.clone(),
                ..Default::default()
            },
        )
        .map_err(load_error)
        .with_context(|| format!("loading schema {}", path.display()))?;
        return Ok(Loaded {
            schema,
            warnings: Vec::new(),
        });
    }
    let dir = nidos_schema::bundled_schema_dir();
    if !dir.exists() {
        anyhow::bail!(
            "no bundled schema found at {} (set {} or pass --schema PATH)",
            dir.display(),
            nidos_schema::BUNDLED_ENV
        );
    }
    let newest = Schema::bundled().map_err(load_error)?;
    let declared = declared_version(dataset, &newest.brand.version_key);
    let mut warnings = Vec::new();
    if declared.is_none() {
        if let Some(other) = other_brand_key(dataset, &newest) {
            warnings.push(format!(
                "dataset_description.json declares {other}, not {}: the dataset is written for \
                 another brand of the standard; validate it with --schema and that brand's \
                 compiled schema.json",
                newest.brand.version_key
            ));
        }
    }
    let (version, warning) = nidos_schema::select_version(
        args.std_version.as_deref(),
        declared.as_deref(),
        &newest.supported_versions,
    );
    let schema = if version == newest.version {
        newest
    } else {
        Schema::for_version(&version).map_err(load_error)?
    };
    warnings.extend(warning.map(|w| w.to_string()));
    Ok(Loaded { schema, warnings })
}

/// A key of the dataset description, other than this schema's version key, whose name
/// ends in `Version` and whose value is one of the standard's version names: the version
/// key of another brand (e.g. a dataset written for the upstream brand).
fn other_brand_key(dataset: &Path, schema: &Schema) -> Option<String> {
    let text = std::fs::read(dataset.join("dataset_description.json")).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&text).ok()?;
    v.as_object()?
        .iter()
        .find(|(k, val)| {
            k.ends_with("Version")
                && **k != schema.brand.version_key
                && val
                    .as_str()
                    .is_some_and(|s| schema.versions.iter().any(|known| known == s))
        })
        .map(|(k, _)| k.clone())
}
