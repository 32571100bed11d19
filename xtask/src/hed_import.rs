//! `cargo xtask hed-import SCHEMA.xml [-o FILE]`: converts a published HED schema XML file into
//! the compact data form bundled in `crates/nidos-hed/schemas/` (facts only, gzip-compressed).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

pub fn run(args: &[String]) -> Result<()> {
    let mut input: Option<PathBuf> = None;
    let mut output: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "-o" | "--output" => {
                output = Some(PathBuf::from(it.next().context("-o needs a file name")?));
            }
            other if input.is_none() => input = Some(PathBuf::from(other)),
            other => bail!("unexpected argument {other:?}"),
        }
    }
    let Some(input) = input else {
        bail!("usage: cargo xtask hed-import SCHEMA.xml [-o FILE]");
    };
    let xml =
        std::fs::read_to_string(&input).with_context(|| format!("reading {}", input.display()))?;
    let data =
        nidos_hed::import_xml(&xml).map_err(|e| anyhow::anyhow!("{}: {e}", input.display()))?;
    let output = output.unwrap_or_else(|| default_output(&input));
    let bytes = data.to_gzip_json()?;
    std::fs::write(&output, &bytes).with_context(|| format!("writing {}", output.display()))?;
    println!(
        "{} -> {} ({} tags, {} unit classes, {} value classes, {} bytes)",
        input.display(),
        output.display(),
        data.tags.len(),
        data.unit_classes.len(),
        data.value_classes.len(),
        bytes.len()
    );
    Ok(())
}

/// `HED8.4.0.xml` → `crates/nidos-hed/schemas/HED8.4.0.json.gz`.
fn default_output(input: &Path) -> PathBuf {
    let stem = input
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("schema");
    super::root()
        .join("crates/nidos-hed/schemas")
        .join(format!("{stem}.json.gz"))
}
