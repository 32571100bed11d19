//! The dataset: its walked file list, the schema facts it needs, and shared caches.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use nidos_expr::Value;
use rayon::prelude::*;

use crate::assoc::AssocDef;
use crate::filename::{datatype_of, parse_name, NameTable, ParsedName};
use crate::fs::{Fs, OsFs};
use crate::load::JsonLoad;
pub use crate::loaders::Severity;

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
    /// [`crate::load::TABLE_CACHE_BUDGET`]); beyond it the least recently used tables are
    /// dropped and parsed again when next needed.
    pub table_cache_budget: usize,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            ignore_nifti_headers: false,
            max_rows: None,
            fs: Arc::new(OsFs),
            table_cache_budget: crate::load::TABLE_CACHE_BUDGET,
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
        if let Some(l) = self.line {
            m.insert("line".into(), l.into());
        }
        if let Some(c) = self.column {
            m.insert("column".into(), c.into());
        }
        serde_json::Value::Object(m)
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
        let p = self.path.trim_end_matches('/');
        &p[p.rfind('/').map(|i| i + 1).unwrap_or(0)..]
    }

    /// The directory, with leading and trailing `/` (`/sub-01/anat/`; `/` at the root).
    pub fn dir(&self) -> &str {
        let p = self.path.trim_end_matches('/');
        &p[..p.rfind('/').map(|i| i + 1).unwrap_or(0)]
    }
}

/// Facts of the schema the dataset layer uses, extracted once.
#[derive(Debug)]
pub struct SchemaInfo {
    pub names: NameTable,
    /// Root-level directory names that are opaque, lower-cased: `Code/` is `code/`
    /// (as the reference matches them); see [`SchemaInfo::is_opaque_dir`].
    pub opaque_dirs: HashSet<String>,
    /// Extensions of directories treated as files (`.ome.zarr/`, `.ds/`, `/`).
    pub dir_extensions: HashSet<String>,
    /// Datatype → modality.
    pub modalities: HashMap<String, String>,
    pub associations: Vec<AssocDef>,
    pub ignore_file: String,
    pub uri_scheme: String,
    /// `schema.raw` as a value, built on first use by a `schema` lookup.
    raw: Arc<serde_json::Value>,
    value: OnceLock<Value>,
}

impl SchemaInfo {
    /// Whether a root-level directory is opaque (its content listed, not validated).
    /// Case does not matter: a `Code/` folder is the code folder.
    pub fn is_opaque_dir(&self, name: &str) -> bool {
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            self.opaque_dirs.contains(&name.to_ascii_lowercase())
        } else {
            self.opaque_dirs.contains(name)
        }
    }

    /// What the dataset layer needs of a loaded schema (its typed model; the raw tree
    /// only as the context's `schema` value).
    pub fn from_schema(schema: &nidos_schema::Schema) -> Self {
        let mut opaque_dirs: HashSet<String> = schema
            .directories
            .iter()
            .filter(|d| d.opaque)
            .filter_map(|d| d.name.as_deref())
            .map(|n| n.trim_end_matches('/').to_ascii_lowercase())
            .collect();
        if opaque_dirs.is_empty() {
            // Schemas before directory rules existed: the conventional opaque folders.
            for d in ["code", "derivatives", "sourcedata", "stimuli"] {
                opaque_dirs.insert(d.to_string());
            }
        }
        let dir_extensions = schema
            .extensions
            .values()
            .filter(|t| t.value.ends_with('/'))
            .map(|t| t.value.clone())
            .collect();
        let modalities = schema
            .modalities
            .iter()
            .flat_map(|(m, dts)| dts.iter().map(move |dt| (dt.clone(), m.clone())))
            .collect();
        Self {
            names: NameTable::from_schema(schema),
            opaque_dirs,
            dir_extensions,
            modalities,
            associations: schema
                .associations
                .iter()
                .map(crate::assoc::AssocDef::from_schema)
                .collect(),
            ignore_file: schema.brand.ignore_file.clone(),
            uri_scheme: schema.brand.uri_scheme.clone(),
            raw: Arc::new(schema.raw.clone()),
            value: OnceLock::new(),
        }
    }

    /// The whole schema as a value (the context's `schema`), converted once.
    pub fn value(&self) -> Value {
        self.value_ref().clone()
    }

    /// [`SchemaInfo::value`], borrowed.
    pub fn value_ref(&self) -> &Value {
        self.value.get_or_init(|| Value::from(&*self.raw))
    }
}

/// An opened dataset.
pub struct Dataset {
    pub(crate) root: PathBuf,
    pub(crate) fs: Arc<dyn Fs>,
    pub(crate) opts: OpenOptions,
    pub(crate) info: Arc<SchemaInfo>,
    pub(crate) files: Vec<FileEntry>,
    /// Directory → suffix → indices of the files directly in it with that suffix (the
    /// candidates of inheritance lookups, found without scanning the directory).
    pub(crate) by_suffix: SuffixIndex,
    /// [`crate::inherit::entity_key`] (a hash of directory, suffix, extension and sorted
    /// entities) → files, so a lookup tries each subset of a file's entities instead of
    /// every file with the suffix. Lookups check the files they find.
    pub(crate) by_entities: foldhash::HashMap<u64, Vec<usize>>,
    pub(crate) entity_hasher: foldhash::fast::RandomState,
    /// Every directory path (without trailing `/`; the root is absent).
    pub(crate) dir_paths: HashSet<String>,
    pub(crate) issues: Vec<DatasetIssue>,
    pub(crate) sub_dirs: Vec<String>,
    /// `sub-XX` → its `ses-YY` directories.
    pub(crate) ses_dirs: HashMap<String, Vec<String>>,
    pub(crate) json_cache: Vec<OnceLock<Arc<JsonLoad>>>,
    /// Recently used parsed tables, within `opts.table_cache_budget` bytes.
    pub(crate) table_cache: std::sync::Mutex<crate::load::TableCache>,
    pub(crate) dataset_value: OnceLock<Value>,
    pub(crate) tree_value: OnceLock<Value>,
    pub(crate) subject_values: HashMap<String, OnceLock<Value>>,
}

impl std::fmt::Debug for Dataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dataset")
            .field("root", &self.root)
            .field("files", &self.files.len())
            .field("issues", &self.issues.len())
            .finish()
    }
}

/// [`Dataset::by_entities`] of `files`.
fn entity_index(
    files: &[FileEntry],
    hasher: &foldhash::fast::RandomState,
) -> foldhash::HashMap<u64, Vec<usize>> {
    let mut index: foldhash::HashMap<u64, Vec<usize>> = foldhash::HashMap::default();
    index.reserve(files.len());
    for (i, f) in files.iter().enumerate() {
        if let (Some(suffix), true) = (f.name.suffix.as_deref(), f.name.stray.is_empty()) {
            let pairs = f.name.sorted_pairs();
            let key =
                crate::inherit::entity_key(hasher, (f.dir(), suffix, &f.name.extension), &pairs);
            index.entry(key).or_default().push(i);
        }
    }
    index
}

/// Directory → suffix → files (see [`Dataset::by_suffix`]).
type SuffixIndex = foldhash::HashMap<String, foldhash::HashMap<String, Vec<usize>>>;

/// [`Dataset::by_suffix`] of `files`.
fn suffix_index(files: &[FileEntry]) -> SuffixIndex {
    let mut index = SuffixIndex::default();
    for (i, f) in files.iter().enumerate() {
        let Some(suffix) = f.name.suffix.as_deref() else {
            continue;
        };
        // (Keys are copied only for a directory or suffix not seen before.)
        let dir = match index.get_mut(f.dir()) {
            Some(d) => d,
            None => index.entry(f.dir().to_string()).or_default(),
        };
        match dir.get_mut(suffix) {
            Some(members) => members.push(i),
            None => {
                dir.insert(suffix.to_string(), vec![i]);
            }
        }
    }
    index
}

impl Dataset {
    /// Walks the dataset at `root` with the brand, directory rules and entities of `schema`.
    pub fn open(
        root: &Path,
        schema: &nidos_schema::Schema,
        opts: &OpenOptions,
    ) -> Result<Dataset, DatasetError> {
        Self::open_with(root, Arc::new(SchemaInfo::from_schema(schema)), opts)
    }

    /// Like [`Dataset::open`], with the schema facts already extracted (share one
    /// [`SchemaInfo`] across many datasets).
    pub fn open_with(
        root: &Path,
        info: Arc<SchemaInfo>,
        opts: &OpenOptions,
    ) -> Result<Dataset, DatasetError> {
        let fs = opts.fs.clone();
        let canon = fs.canonicalize(root).map_err(|source| DatasetError::Root {
            path: root.to_path_buf(),
            source,
        })?;
        let meta = fs.metadata(&canon).map_err(|source| DatasetError::Root {
            path: root.to_path_buf(),
            source,
        })?;
        if meta.kind != Some(crate::fs::Kind::Dir) {
            return Err(DatasetError::NotADirectory(root.to_path_buf()));
        }
        let walked = crate::walk::walk(fs.as_ref(), &canon, &info);
        let mut files = walked.files;
        // Paths are unique: an unstable sort gives the same order without a scratch copy.
        files.par_sort_unstable_by(|a, b| a.path.cmp(&b.path));
        files.shrink_to_fit();
        files.par_iter_mut().for_each(|f| {
            f.datatype = datatype_of(&f.path, &info.names).map(str::to_string);
        });
        // The two lookup indexes are built side by side.
        let entity_hasher = foldhash::fast::RandomState::default();
        let (by_entities, by_suffix) = rayon::join(
            || entity_index(&files, &entity_hasher),
            || suffix_index(&files),
        );
        let mut sub_dirs: Vec<String> = walked
            .dirs
            .iter()
            .filter_map(|d| d.strip_prefix('/'))
            .filter(|d| !d.contains('/') && d.starts_with("sub-"))
            .map(str::to_string)
            .collect();
        sub_dirs.sort();
        let mut ses_dirs: HashMap<String, Vec<String>> = HashMap::new();
        for d in &walked.dirs {
            let parts: Vec<&str> = d.trim_start_matches('/').split('/').collect();
            if let [sub, ses] = parts.as_slice() {
                if sub.starts_with("sub-") && ses.starts_with("ses-") {
                    ses_dirs
                        .entry(sub.to_string())
                        .or_default()
                        .push(ses.to_string());
                }
            }
        }
        for v in ses_dirs.values_mut() {
            v.sort();
        }
        let subject_values = sub_dirs
            .iter()
            .map(|s| (s.clone(), OnceLock::new()))
            .collect();
        let n = files.len();
        let mut issues = walked.issues;
        issues.sort();
        Ok(Dataset {
            root: canon,
            fs,
            opts: opts.clone(),
            info,
            json_cache: (0..n).map(|_| OnceLock::new()).collect(),
            table_cache: Default::default(),
            files,
            by_suffix,
            by_entities,
            entity_hasher,
            dir_paths: walked.dirs.into_iter().collect(),
            issues,
            sub_dirs,
            ses_dirs,
            dataset_value: OnceLock::new(),
            tree_value: OnceLock::new(),
            subject_values,
        })
    }

    /// The dataset root (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// All files, sorted by path (ignored and opaque ones included, flagged).
    pub fn files(&self) -> &[FileEntry] {
        &self.files
    }

    /// Problems found while walking (unreadable entries, links).
    pub fn issues(&self) -> Vec<DatasetIssue> {
        self.issues.clone()
    }

    /// The schema facts in use.
    pub fn schema_info(&self) -> &Arc<SchemaInfo> {
        &self.info
    }

    /// The options the dataset was opened with.
    pub fn options(&self) -> &OpenOptions {
        &self.opts
    }

    /// A file by dataset-relative path (`/sub-01/anat/x.nii` or `sub-01/anat/x.nii`).
    pub fn find(&self, path: &str) -> Option<&FileEntry> {
        self.index_of(path).map(|i| &self.files[i])
    }

    /// The index of a file in [`Dataset::files`] (sorted by path, so found by binary
    /// search). A directory treated as a file is found with or without its trailing `/`.
    pub(crate) fn index_of(&self, path: &str) -> Option<usize> {
        let owned;
        let path = if path.starts_with('/') {
            path
        } else {
            owned = format!("/{path}");
            &owned
        };
        let find = |p: &str| self.files.binary_search_by(|f| f.path.as_str().cmp(p)).ok();
        find(path).or_else(|| {
            if path.ends_with('/') {
                return None;
            }
            find(&format!("{path}/")).filter(|&i| self.files[i].is_dir)
        })
    }

    /// Subject directories (`sub-01`, …) at the root, sorted.
    pub fn subject_dirs(&self) -> &[String] {
        &self.sub_dirs
    }

    /// `DatasetType` of the dataset (`raw`, `derivative`, `study`…): as declared, else
    /// implied by the description ([`crate::load::implied_dataset_type`]).
    pub fn dataset_type(&self) -> String {
        let description = self.dataset_value().get("dataset_description");
        match description.get("DatasetType").as_str() {
            Some(t) => t.to_string(),
            None => crate::load::implied_dataset_type(&description).to_string(),
        }
    }

    /// Every directory of the dataset (`/sub-01/anat`, no trailing `/`), sorted.
    pub fn directories(&self) -> Vec<&str> {
        let mut dirs: Vec<&str> = self.dir_paths.iter().map(String::as_str).collect();
        dirs.sort_unstable();
        dirs
    }

    /// Whether a dataset-relative path (leading `/`, no `..`) names a file or directory.
    pub fn path_exists(&self, path: &str) -> bool {
        let p = path.trim_end_matches('/');
        p.is_empty() || self.index_of(p).is_some() || self.dir_paths.contains(p)
    }

    /// The absolute path of a dataset-relative path.
    pub(crate) fn abs(&self, rel: &str) -> PathBuf {
        self.root
            .join(rel.trim_start_matches('/').trim_end_matches('/'))
    }

    /// The datatypes of validated files, sorted.
    pub fn datatypes(&self) -> Vec<String> {
        let set: BTreeSet<&str> = self
            .files
            .iter()
            .filter(|f| f.validated())
            .filter_map(|f| f.datatype.as_deref())
            .collect();
        set.into_iter().map(str::to_string).collect()
    }

    /// The modalities of the datatypes present, sorted.
    pub fn modalities(&self) -> Vec<String> {
        let set: BTreeSet<&str> = self
            .files
            .iter()
            .filter(|f| f.validated())
            .filter_map(|f| f.datatype.as_deref())
            .filter_map(|d| self.info.modalities.get(d).map(String::as_str))
            .collect();
        set.into_iter().map(str::to_string).collect()
    }

    /// Parses a name the way the walker does (used for paths not in the tree).
    pub fn parse_name(name: &str, is_dir: bool) -> ParsedName {
        parse_name(name, is_dir)
    }
}
