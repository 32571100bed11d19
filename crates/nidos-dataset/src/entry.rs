//! The plain types every layer of the crate shares: how a dataset is opened, why it
//! could not be, the issues found in it, and its file entries.

use std::path::PathBuf;
use std::sync::Arc;

use crate::filename::ParsedName;
use crate::fs::{Fs, OsFs};
pub use crate::loaders::Severity;

/// Default upper bound of the memory the per-dataset table cache may hold (estimated).
/// The cache keeps the most recently used tables: files are validated in path order, so
/// the tables one directory's files share (its scans table, the events next to a run)
/// are reused while that directory is worked on, and older ones make room.
pub const TABLE_CACHE_BUDGET: usize = 4 * 1024 * 1024;

/// How to open a dataset.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// Never read NIfTI headers (`nifti_header` stays null).
    pub ignore_nifti_headers: bool,
    /// Keep at most this many rows of a TSV file in `columns` and association payloads
    /// (participant and session lists are always read whole).
    pub max_rows: Option<usize>,
    /// The filesystem to read from.
    pub fs: Arc<dyn Fs>,
    /// Estimated bytes of parsed tables kept for reuse (default
    /// [`TABLE_CACHE_BUDGET`]); beyond it the least recently used tables are
    /// dropped and parsed again when next needed.
    pub table_cache_budget: usize,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            ignore_nifti_headers: false,
            max_rows: None,
            fs: Arc::new(OsFs),
            table_cache_budget: TABLE_CACHE_BUDGET,
        }
    }
}

/// Why a dataset could not be opened at all (problems inside it are [`DatasetIssue`]s).
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("cannot open dataset root {path}: {source}")]
    Root {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("dataset root {0} is not a directory")]
    NotADirectory(PathBuf),
    #[error("no file {path} in dataset {root}")]
    NoSuchFile { root: PathBuf, path: String },
}

/// A problem found in the dataset (walking it or loading a file).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DatasetIssue {
    /// Dataset-relative path with a leading `/` of the file the issue concerns.
    pub location: String,
    /// The standard's issue code (`FILE_READ`, `JSON_INVALID`, …) or one of ours
    /// (`SYMLINK_CYCLE`, `SYMLINK_OUTSIDE_DATASET`).
    pub code: String,
    pub sub_code: Option<String>,
    pub severity: Severity,
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl DatasetIssue {
    pub fn new(code: &str, severity: Severity, location: &str, message: impl Into<String>) -> Self {
        Self {
            location: location.to_string(),
            code: code.to_string(),
            sub_code: None,
            severity,
            message: message.into(),
            line: None,
            column: None,
        }
    }

    pub fn from_load(issue: &crate::loaders::LoadIssue, location: &str) -> Self {
        Self {
            location: location.to_string(),
            code: issue.code.to_string(),
            sub_code: None,
            severity: issue.severity,
            message: issue.message.clone(),
            line: issue.line,
            column: issue.column,
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("code".into(), self.code.clone().into());
        if let Some(s) = &self.sub_code {
            m.insert("subCode".into(), s.clone().into());
        }
        m.insert("severity".into(), self.severity.as_str().into());
        m.insert("location".into(), self.location.clone().into());
        m.insert("message".into(), self.message.clone().into());
        crate::loaders::with_position(m, self.line, self.column)
    }
}

/// One file of the dataset (or a directory that the schema treats as a file, such as
/// `x.ome.zarr/`, whose path then ends with `/`).
#[derive(Clone, Debug)]
pub struct FileEntry {
    /// Dataset-relative path with a leading `/`.
    pub path: String,
    /// Size in bytes (0 for a broken link; a directory-file sums its contents).
    pub size: u64,
    /// A directory treated as one file (its extension ends with `/`).
    pub is_dir: bool,
    /// The entry is a symbolic link.
    pub symlink: bool,
    /// A symbolic link whose target is absent (e.g. git-annex content not fetched) or
    /// cyclic. The file is still validated by name; its content is never read.
    pub broken_symlink: bool,
    /// A link whose target lies outside the dataset (its content is never read).
    pub outside: bool,
    /// Matched by the dataset's ignore file.
    pub ignored: bool,
    /// Under an opaque directory (`sourcedata/`, `code/`, `derivatives/`…): listed (for
    /// `exists()` and the tree), not validated.
    pub opaque: bool,
    /// The parsed file name.
    pub name: ParsedName,
    /// The datatype from the parent directory, if it is one of the schema's.
    pub datatype: Option<String>,
}

impl FileEntry {
    /// A plain readable file at `path` (name parsed from its last part), for tests.
    #[cfg(test)]
    pub(crate) fn at(path: &str) -> FileEntry {
        let name = &path[path.rfind('/').map_or(0, |i| i + 1)..];
        FileEntry {
            path: path.to_string(),
            size: 1,
            is_dir: path.ends_with('/'),
            symlink: false,
            broken_symlink: false,
            outside: false,
            ignored: false,
            opaque: false,
            name: crate::filename::parse_name(name, false),
            datatype: None,
        }
    }

    /// Whether the validator should apply rules to this file.
    pub fn validated(&self) -> bool {
        !self.ignored && !self.opaque
    }

    /// Whether the content may be read: not a broken link, not outside the dataset, not a
    /// directory, not empty (an empty file is the validator's `EMPTY_FILE`, not a parse
    /// error of every loader).
    pub fn readable(&self) -> bool {
        !self.broken_symlink && !self.outside && !self.is_dir && self.size > 0
    }

    /// The file name (last component, without a trailing `/`).
    pub fn file_name(&self) -> &str {
        let (p, at) = self.name_start();
        p.get(at..).unwrap_or(p)
    }

    /// The path without a trailing `/`, and where its last component starts. `memrchr`
    /// (SIMD) rather than `rfind`: these run tens of times per file, on paths of 30–80
    /// bytes. A `/` is one byte and never part of another character.
    fn name_start(&self) -> (&str, usize) {
        let p = self.path.trim_end_matches('/');
        (p, memchr::memrchr(b'/', p.as_bytes()).map_or(0, |i| i + 1))
    }

    /// The path without the file name's extension (`/sub-01/anat/sub-01_T1w`). (Kept
    /// as a view of the path rather than in the parsed name: one string less per file.)
    pub fn path_stem(&self) -> &str {
        self.path
            .strip_suffix(self.name.extension.as_str())
            .unwrap_or(&self.path)
    }

    /// The directory, with leading and trailing `/` (`/sub-01/anat/`; `/` at the root).
    pub fn dir(&self) -> &str {
        let (p, at) = self.name_start();
        p.get(..at).unwrap_or("")
    }
}
