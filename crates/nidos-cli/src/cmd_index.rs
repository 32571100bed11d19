//! `nidos index DATASET... -o OUT.parquet`: one Parquet row per accepted file of every
//! dataset found at or under the given folders (see `nidos_index`), and one row for each
//! dataset or folder that could not be read (its `status` says why; also on stderr).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use nidos_dataset::OpenOptions;

use crate::schema_arg;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Datasets, or folders holding datasets (every directory with a
    /// dataset_description.json is indexed; nested derivatives as datasets of their own).
    #[arg(required = true)]
    pub datasets: Vec<PathBuf>,
    /// The Parquet file to write.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    #[command(flatten)]
    pub schema: schema_arg::SchemaArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut found = Vec::new();
    for path in &args.datasets {
        found.extend(nidos_index::find_roots(path)?);
    }
    let mut sets = Vec::with_capacity(found.len());
    let mut columns_schema = None;
    for d in &found {
        let loaded = schema_arg::load_for_dataset(&args.schema, &d.root)?;
        loaded.print_warnings(&format!("nidos: {}: ", d.name));
        // A dataset that cannot be indexed is one row saying why; the run goes on.
        let set = nidos_index::index_found(d, &loaded.schema, &OpenOptions::default());
        if !set.status.is_ok() {
            eprintln!("nidos: {}: {}", d.name, set.status);
        }
        sets.push(set);
        // The entity columns are those of the first dataset's schema.
        columns_schema.get_or_insert(loaded.schema);
    }
    let Some(schema) = columns_schema else {
        anyhow::bail!("no dataset to index");
    };
    let batch = nidos_index::to_record_batch(&sets, &schema)?;
    let file = std::fs::File::create(&args.output)
        .with_context(|| format!("writing {}", args.output.display()))?;
    nidos_index::write_parquet(&batch, std::io::BufWriter::new(file))?;
    eprintln!(
        "nidos: indexed {} files of {} dataset(s) into {}",
        batch.num_rows(),
        sets.len(),
        crate::escape::path(&args.output)
    );
    Ok(ExitCode::SUCCESS)
}
