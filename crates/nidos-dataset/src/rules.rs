//! The rules for a dataset on disk: the one choice that validation (`nidos validate`,
//! `nidos fix`, the Python `validate`), listing (`nidos ls`, `nidos index`, the Python
//! `Layout` and index) and the other dataset commands share, so that each reads the
//! dataset by the rules of the version it declares, read the same way.

use std::path::Path;

use nidos_schema::{ForDataset, SchemaErrors, Source};

/// The rules for the dataset at `dir`: its description read with the guards every
/// dataset file gets ([`crate::read_description`]), then brand and version chosen by
/// [`nidos_schema::load_for_dir`] (the declared version read as a person means it,
/// `requested` — `--std-version` — first, else the newest), from `source`.
pub fn rules_for(
    source: &Source,
    dir: &Path,
    requested: Option<&str>,
) -> Result<ForDataset, SchemaErrors> {
    nidos_schema::load_for_dir(source, dir, crate::read_description(dir), requested)
}
