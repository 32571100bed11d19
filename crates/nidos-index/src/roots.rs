//! Finding the datasets under a folder: every directory holding a
//! `dataset_description.json`. Inside a dataset only `derivatives/` is searched further
//! (for nested derivative datasets); hidden directories are skipped.

use std::path::{Path, PathBuf};

use crate::IndexError;

/// A dataset found under a search folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundDataset {
    /// The dataset directory.
    pub root: PathBuf,
    /// Its name in the index: the path relative to the search folder, `/`-separated
    /// (`ds001`, `ds001/derivatives/fmriprep`); the folder's own name when the search
    /// folder is itself a dataset.
    pub name: String,
}

const DESCRIPTION: &str = "dataset_description.json";

/// The datasets at or under `path`, sorted by name. An error when there is none.
pub fn find_roots(path: &Path) -> Result<Vec<FoundDataset>, IndexError> {
    let io = |source| IndexError::Io {
        path: path.to_path_buf(),
        source,
    };
    if !path.is_dir() {
        return Err(IndexError::NotADirectory {
            path: path.to_path_buf(),
        });
    }
    let own = path
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "dataset".to_string());
    let mut out = Vec::new();
    search(path, path, &own, &mut out).map_err(io)?;
    if out.is_empty() {
        return Err(IndexError::NoDataset {
            path: path.to_path_buf(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn search(base: &Path, dir: &Path, own: &str, out: &mut Vec<FoundDataset>) -> std::io::Result<()> {
    let is_dataset = dir.join(DESCRIPTION).is_file();
    if is_dataset {
        let rel = dir.strip_prefix(base).unwrap_or(dir);
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let name = if rel.is_empty() {
            own.to_string()
        } else if base.join(DESCRIPTION).is_file() {
            // Nested in the searched dataset: keep its name in front.
            format!("{own}/{}", rel.join("/"))
        } else {
            rel.join("/")
        };
        out.push(FoundDataset {
            root: dir.to_path_buf(),
            name,
        });
        let derivatives = dir.join("derivatives");
        if derivatives.is_dir() {
            for child in subdirs(&derivatives)? {
                search(base, &child, own, out)?;
            }
        }
        return Ok(());
    }
    for child in subdirs(dir)? {
        search(base, &child, own, out)?;
    }
    Ok(())
}

/// The non-hidden subdirectories of `dir` (links to directories included), sorted.
fn subdirs(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}
