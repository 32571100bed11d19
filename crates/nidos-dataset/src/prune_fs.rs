//! Pruned reading (`validate --prune`): the operating system's filesystem with the dataset root's `sourcedata/`
//! and `derivatives/` left out of directory listings, so the walk never enters them.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::fs::{Fs, Meta, OsFs};

/// Top-level directories a pruned walk skips.
pub const PRUNED: [&str; 2] = ["sourcedata", "derivatives"];

#[derive(Debug)]
pub struct PruneFs {
    /// The dataset root as given and as resolved: the walk may list either form.
    roots: Vec<PathBuf>,
}

impl PruneFs {
    pub fn new(root: &Path) -> PruneFs {
        let mut roots = vec![root.to_path_buf()];
        if let Ok(abs) = std::path::absolute(root) {
            roots.push(abs);
        }
        if let Ok(c) = std::fs::canonicalize(root) {
            roots.push(c);
        }
        PruneFs { roots }
    }

    fn is_root(&self, path: &Path) -> bool {
        self.roots.iter().any(|r| r == path)
    }

    fn keep(&self, dir: &Path, name: &str) -> bool {
        !(self.is_root(dir) && PRUNED.contains(&name))
    }
}

impl Fs for PruneFs {
    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        Ok(OsFs
            .read_dir(path)?
            .into_iter()
            .filter(|n| self.keep(path, n))
            .collect())
    }

    fn read_dir_meta(&self, path: &Path) -> io::Result<Vec<(String, io::Result<Meta>)>> {
        Ok(OsFs
            .read_dir_meta(path)?
            .into_iter()
            .filter(|(n, _)| self.keep(path, n))
            .collect())
    }

    fn metadata(&self, path: &Path) -> io::Result<Meta> {
        OsFs.metadata(path)
    }

    fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
        OsFs.read(path, cap)
    }

    fn read_prefix(&self, path: &Path, n: usize) -> io::Result<Vec<u8>> {
        OsFs.read_prefix(path, n)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        OsFs.open(path)
    }

    fn open_sized(&self, path: &Path, len: u64) -> io::Result<Box<dyn Read + Send>> {
        OsFs.open_sized(path, len)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        OsFs.canonicalize(path)
    }
}
