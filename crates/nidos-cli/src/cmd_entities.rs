//! `nidos entities DIR [ENTITY]`: the values each entity takes in a dataset (over the
//! files the schema accepts).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use nidos_dataset::query::entity_values;
use nidos_dataset::{Dataset, OpenOptions};

use crate::schema_arg;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The dataset directory.
    pub dataset: PathBuf,
    /// Only this entity (long or short name): its values, one per line.
    pub entity: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub schema: schema_arg::SchemaArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let loaded = schema_arg::load_for_dataset(&args.schema, &args.dataset)?;
    loaded.print_warnings("");
    let schema = &loaded.schema;
    let opts = OpenOptions {
        ignore_nifti_headers: true,
        ..OpenOptions::default()
    };
    let ds = Dataset::open(&args.dataset, schema, &opts)?;
    let all = entity_values(schema, &ds);
    let mut text = String::new();
    match &args.entity {
        Some(name) => {
            let e = schema
                .entity(name)
                .or_else(|| schema.entity_by_key(name))
                .ok_or_else(|| {
                    anyhow::anyhow!("unknown entity {name:?} (not in the schema's entities)")
                })?;
            let vals = all.get(&e.name).cloned().unwrap_or_default();
            match args.format {
                Format::Json => {
                    text = serde_json::to_string_pretty(&vals)?;
                    text.push('\n');
                }
                Format::Text => {
                    for v in vals {
                        text.push_str(&crate::escape::control(&v));
                        text.push('\n');
                    }
                }
            }
        }
        None => match args.format {
            Format::Json => {
                text = serde_json::to_string_pretty(&all)?;
                text.push('\n');
            }
            Format::Text => {
                let width = all.keys().map(|k| k.len()).max().unwrap_or(0);
                for (k, vals) in &all {
                    let key = schema.entity(k).map(|e| e.key.as_str()).unwrap_or(k);
                    let label = format!("{k} ({key})");
                    let vals = crate::escape::control(&vals.join(" ")).into_owned();
                    text.push_str(&format!("{label:<w$}  {vals}\n", w = width + 8));
                }
            }
        },
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}
