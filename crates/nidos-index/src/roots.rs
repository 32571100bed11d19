//! Finding the datasets under a folder: every directory holding a
//! `dataset_description.json`. Inside a dataset only `derivatives/` is searched further
//! (for nested derivative datasets); hidden directories are skipped.
//!
//! The search folder is the boundary: a link leading outside it is not followed (an
//! `up -> ..` or a link to `/` would widen the walk to the whole disk), and a directory
//! reached twice (by device and inode: `loop -> .`) is searched once. A folder that
//! cannot be listed, and a dataset whose description cannot be read, do not stop the
//! search: each is recorded with its [`Status`].

use std::collections::HashSet;
use std::fmt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::IndexError;

/// Whether a dataset found could be indexed, and why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// The folder could not be listed, or the description could not be read (not a
    /// regular file, over the size limit, a link leaving the dataset, no permission).
    Unreadable(String),
    /// The description was read but is not a JSON object.
    NotADataset(String),
}

impl Status {
    pub fn is_ok(&self) -> bool {
        matches!(self, Status::Ok)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Ok => f.write_str("ok"),
            Status::Unreadable(why) => write!(f, "unreadable: {why}"),
            Status::NotADataset(why) => write!(f, "not a dataset: {why}"),
        }
    }
}

/// A dataset found under a search folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundDataset {
    /// The dataset directory.
    pub root: PathBuf,
    /// Its name in the index: the path relative to the search folder, `/`-separated
    /// (`ds001`, `ds001/derivatives/fmriprep`); the folder's own name when the search
    /// folder is itself a dataset.
    pub name: String,
    /// Whether it can be indexed.
    pub status: Status,
}

const DESCRIPTION: &str = "dataset_description.json";

/// The datasets at or under `path`, sorted by name. An error when there is none.
pub fn find_roots(path: &Path) -> Result<Vec<FoundDataset>, IndexError> {
    if !path.is_dir() {
        return Err(IndexError::NotADirectory {
            path: path.to_path_buf(),
        });
    }
    let boundary = path.canonicalize().map_err(|source| IndexError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let own = boundary
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "dataset".to_string());
    let mut search = Search {
        base: path,
        boundary: &boundary,
        own: &own,
        base_is_dataset: has_description(path),
        visited: HashSet::new(),
        out: Vec::new(),
    };
    search.dir(path);
    let mut out = search.out;
    if out.is_empty() {
        return Err(IndexError::NoDataset {
            path: path.to_path_buf(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Whether `dir` holds a `dataset_description.json` of any kind (a FIFO or a broken
/// link included: such a dataset is recorded as unreadable, not passed over).
fn has_description(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(DESCRIPTION)).is_ok()
}

struct Search<'a> {
    base: &'a Path,
    boundary: &'a Path,
    own: &'a str,
    base_is_dataset: bool,
    /// Directories searched, by device and inode.
    visited: HashSet<(u64, u64)>,
    out: Vec<FoundDataset>,
}

impl Search<'_> {
    /// Whether `path`, its links resolved, is inside the search folder.
    fn inside(&self, path: &Path) -> bool {
        path.canonicalize()
            .is_ok_and(|t| t.starts_with(self.boundary))
    }

    fn name_of(&self, dir: &Path) -> String {
        let rel = dir.strip_prefix(self.base).unwrap_or(dir);
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if rel.is_empty() {
            self.own.to_string()
        } else if self.base_is_dataset {
            // Nested in the searched dataset: keep its name in front.
            format!("{}/{}", self.own, rel.join("/"))
        } else {
            rel.join("/")
        }
    }

    fn record(&mut self, dir: &Path, status: Status) {
        let name = self.name_of(dir);
        self.out.push(FoundDataset {
            root: dir.to_path_buf(),
            name,
            status,
        });
    }

    fn dir(&mut self, dir: &Path) {
        // Once per directory, however many links lead to it.
        match std::fs::metadata(dir) {
            Ok(m) => {
                if !self.visited.insert((m.dev(), m.ino())) {
                    return;
                }
            }
            Err(e) => {
                self.record(
                    dir,
                    Status::Unreadable(format!("cannot read the folder: {e}")),
                );
                return;
            }
        }
        if has_description(dir) {
            let status = description_status(dir);
            self.record(dir, status);
            let derivatives = dir.join("derivatives");
            if derivatives.is_dir() && self.inside(&derivatives) {
                self.children(&derivatives);
            }
            return;
        }
        self.children(dir);
    }

    fn children(&mut self, dir: &Path) {
        match self.subdirs(dir) {
            Ok(children) => {
                for child in children {
                    self.dir(&child);
                }
            }
            Err(e) => self.record(
                dir,
                Status::Unreadable(format!("cannot list the folder: {e}")),
            ),
        }
    }

    /// The non-hidden subdirectories of `dir`, sorted: links to directories included
    /// when they stay inside the search folder.
    fn subdirs(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
            if is_link {
                // Followed only when it leads to a directory inside the search folder.
                if self.inside(&path) && path.is_dir() {
                    out.push(path);
                }
            } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
                out.push(path);
            }
        }
        out.sort();
        Ok(out)
    }
}

/// The largest description read (the limit of every JSON file of a dataset).
const MAX_DESCRIPTION_BYTES: u64 = 64 << 20;

/// Whether the description of the dataset at `dir` can be read (regular, inside the
/// dataset, within the size limit) and is a JSON object.
fn description_status(dir: &Path) -> Status {
    match nidos_dataset::guarded::read_in_dataset(dir, DESCRIPTION, MAX_DESCRIPTION_BYTES) {
        Err(e) => Status::Unreadable(format!("{DESCRIPTION}: {e}")),
        Ok(bytes) => match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Ok(serde_json::Value::Object(_)) => Status::Ok,
            Ok(_) => Status::NotADataset(format!("{DESCRIPTION} is not a JSON object")),
            Err(e) => Status::NotADataset(format!("{DESCRIPTION} is not JSON: {e}")),
        },
    }
}
