//! The entries of a rule-tree directory, as both readers of the tree take them (the
//! run-time loader in `yaml.rs` and the build script, which includes this file): sorted
//! by path, without hidden names (`.…`) or names that are not UTF-8.

use std::path::{Path, PathBuf};

/// The visible entries of `dir` as (name, path), sorted by path.
pub(crate) fn visible_entries(dir: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    Ok(entries
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_owned();
            (!name.starts_with('.')).then_some((name, p))
        })
        .collect())
}
