//! `nidos path --sub 01 --task rest --suffix bold --extension .nii.gz`: the canonical
//! dataset-relative path of a file, built from the schema's entity order and file rules.

use std::path::Path;
use std::process::ExitCode;

use indexmap::IndexMap;
use nidos_dataset::query::build_path;

use crate::schema_arg;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Subject label.
    #[arg(long)]
    pub sub: Option<String>,
    /// Session label.
    #[arg(long)]
    pub ses: Option<String>,
    /// Task label.
    #[arg(long)]
    pub task: Option<String>,
    /// Acquisition label.
    #[arg(long)]
    pub acq: Option<String>,
    /// Run index.
    #[arg(long)]
    pub run: Option<String>,
    /// Any entity, by long or short name: `--entity echo=1` (repeatable).
    #[arg(long = "entity", value_name = "KEY=VALUE")]
    pub entity: Vec<String>,
    /// The suffix (`bold`, `T1w`…).
    #[arg(long)]
    pub suffix: String,
    /// The extension (`.nii.gz`; the leading period may be left out).
    #[arg(long)]
    pub extension: String,
    /// The datatype directory, when the suffix's rules allow several.
    #[arg(long)]
    pub datatype: Option<String>,
    #[command(flatten)]
    pub schema: schema_arg::SchemaArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // No dataset: the bundled schema at its newest (or --std-version) version.
    let loaded = schema_arg::load_for_dataset(&args.schema, Path::new("/nonexistent/nidos"))?;
    let mut entities: IndexMap<String, String> = IndexMap::new();
    for (k, v) in [
        ("sub", &args.sub),
        ("ses", &args.ses),
        ("task", &args.task),
        ("acq", &args.acq),
        ("run", &args.run),
    ] {
        if let Some(v) = v {
            entities.insert(k.to_string(), v.clone());
        }
    }
    for e in &args.entity {
        let (k, v) = e
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--entity {e:?}: expected KEY=VALUE"))?;
        let k = k.trim().to_string();
        if entities.contains_key(&k) {
            anyhow::bail!("entity {k} given twice");
        }
        entities.insert(k, v.to_string());
    }
    let path = build_path(
        &loaded.schema,
        &entities,
        &args.suffix,
        &args.extension,
        args.datatype.as_deref(),
    )
    .map_err(|e| match e {
        nidos_dataset::query::PathError::AmbiguousDatatype {
            suffix,
            extension,
            candidates,
        } => anyhow::anyhow!(
            "suffix {suffix:?} with extension {extension:?} fits several datatypes; \
             choose one with --datatype ({candidates})"
        ),
        other => anyhow::Error::new(other),
    })?;
    println!("{path}");
    Ok(ExitCode::SUCCESS)
}
