//! `nidos init DIR --name NAME`: a minimal dataset that validates without errors:
//! `dataset_description.json` (with the version key of the brand the schema's brand
//! table names for new datasets, or of `--brand`, at the newest supported version),
//! `README`, `participants.tsv` and `participants.json`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use nidos_dataset::write::{write_json, write_tsv, Table};

use crate::schema_arg;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The directory to create (or fill, when empty).
    pub dataset: PathBuf,
    /// The dataset's name.
    #[arg(long)]
    pub name: String,
    /// Authors, in order (repeat the flag or list them: `--authors "A. B" "C. D"`).
    #[arg(long, num_args = 1..)]
    pub authors: Vec<String>,
    /// The license of the data (an SPDX identifier such as `CC0-1.0`, `PDDL-1.0`).
    #[arg(long)]
    pub license: Option<String>,
    /// The brand to write the dataset in (its version key): one the schema declares,
    /// by name in any case (`bids`, `std`). Default: the brand the schema names for new
    /// datasets (`init` in `meta/brands.yaml`).
    #[arg(long)]
    pub brand: Option<String>,
    /// Write into a non-empty directory, replacing the files `init` writes.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub schema: schema_arg::SchemaArgs,
}

/// The README text: what the dataset is and what belongs in it.
fn readme(name: &str, version_key: &str, version: &str) -> String {
    format!(
        "# {name}\n\
         \n\
         This dataset follows the standard's layout (version {version}, recorded as\n\
         `{version_key}` in dataset_description.json). It was created with `nidos init`\n\
         and holds no recordings yet.\n\
         \n\
         ## Overview\n\
         \n\
         Describe here the project the data come from, the participants and how they\n\
         were recruited, the recording equipment and protocols, and any known problems\n\
         with the data.\n\
         \n\
         ## Layout\n\
         \n\
         - `participants.tsv` lists one participant per row (`participant_id` = `sub-<label>`);\n\
           `participants.json` describes its columns.\n\
         - Recordings go under `sub-<label>/[ses-<label>/]<datatype>/`; `nidos path`\n\
           prints the canonical name of a file from its entities.\n\
         \n\
         Check the dataset with `nidos validate`.\n"
    )
}

fn is_empty_dir(dir: &Path) -> anyhow::Result<bool> {
    match std::fs::read_dir(dir) {
        Ok(mut it) => Ok(it.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(anyhow::anyhow!("{}: {e}", dir.display())),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.dataset.exists() && !args.dataset.is_dir() {
        anyhow::bail!("{} exists and is not a directory", args.dataset.display());
    }
    if !args.force && !is_empty_dir(&args.dataset)? {
        anyhow::bail!(
            "{} is not empty (use --force to write into it)",
            args.dataset.display()
        );
    }
    if args.name.trim().is_empty() {
        anyhow::bail!("--name must not be empty");
    }
    let loaded = schema_arg::load_for_dataset(&args.schema, &args.dataset)?;
    let schema = &loaded.schema;
    let brand = match &args.brand {
        None => schema.brands.init_brand(),
        Some(name) => schema.brands.named(name).ok_or_else(|| {
            anyhow::anyhow!(
                "--brand {name:?}: the schema declares the brands {}",
                schema.brands.names().join(", ")
            )
        })?,
    };
    let version_key = &brand.version_key;
    let version = schema
        .supported_versions
        .first()
        .cloned()
        .unwrap_or_else(|| schema.version.clone());
    std::fs::create_dir_all(&args.dataset)
        .with_context(|| format!("creating {}", args.dataset.display()))?;
    let dir = &args.dataset;
    let force = args.force;

    let mut desc = serde_json::Map::new();
    desc.insert("Name".into(), args.name.clone().into());
    desc.insert(version_key.clone(), version.clone().into());
    desc.insert("DatasetType".into(), "raw".into());
    if let Some(l) = &args.license {
        desc.insert("License".into(), l.clone().into());
    }
    // Authors is always written: without it both NO_AUTHORS (the field is missing) and
    // TOO_FEW_AUTHORS (fewer than two entries) would fire on a new dataset. An empty
    // list leaves only the second, which says what to do.
    desc.insert("Authors".into(), args.authors.clone().into());
    write_json(&dir.join("dataset_description.json"), &desc, force)?;
    nidos_dataset::write::atomic_write(
        &dir.join("README"),
        readme(&args.name, version_key, &version).as_bytes(),
        force,
    )?;
    write_tsv(
        &dir.join("participants.tsv"),
        &Table::new(["participant_id"]),
        force,
    )?;
    let participants = serde_json::json!({
        "participant_id": {
            "Description": "Unique participant identifier: sub-<label>, matching the subject directory."
        }
    });
    write_json(&dir.join("participants.json"), &participants, force)?;
    eprintln!(
        "created {} ({version_key} {version})",
        crate::escape::path(dir)
    );
    if args.authors.len() < 2 {
        eprintln!(
            "note: list every author (`--authors \"A. B\" \"C. D\"` or Authors in \
             dataset_description.json); until then validate warns TOO_FEW_AUTHORS"
        );
    }
    Ok(ExitCode::SUCCESS)
}
