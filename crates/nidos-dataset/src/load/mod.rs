//! Loading: the [`Dataset`] is the walked [`FileTree`] plus the per-dataset caches of
//! parsed content, so each file is parsed once. This layer is the glue between the
//! tree (which reads bytes through [`crate::fs::Fs`]) and the loaders (which parse
//! bytes); `sidecar.rs` merges a file's inherited sidecars, `values.rs` builds the
//! dataset-level values of the context, `cache.rs` is the table cache.

mod cache;
pub mod sidecar;
mod values;

use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use nidos_expr::Value;

use crate::dataset::FileTree;
pub use crate::entry::TABLE_CACHE_BUDGET;
use crate::entry::{DatasetError, DatasetIssue, FileEntry, OpenOptions, Severity};
use crate::kinds::KindMemo;
use crate::loaders;
use crate::loaders::tsv::{Table, TsvOptions};
use crate::schema_info::SchemaInfo;
use cache::TableCache;

/// An opened dataset: its walked tree (reached through `Deref`: `files()`, `find()`,
/// `root()`…) and the caches of what has been read from it.
pub struct Dataset {
    tree: FileTree,
    json_cache: Vec<OnceLock<Arc<JsonLoad>>>,
    /// Recently used parsed tables, within `opts.table_cache_budget` bytes.
    table_cache: Mutex<TableCache>,
    dataset_value: OnceLock<Value>,
    /// The `dataset` object without `tree`, for runs whose rules never read the tree
    /// (see [`Dataset::set_tree_wanted`]).
    dataset_value_lean: OnceLock<Value>,
    /// Whether `dataset` must hold `tree` ([`Dataset::set_tree_wanted`]).
    tree_wanted: std::sync::atomic::AtomicBool,
    tree_value: OnceLock<Value>,
    subject_values: foldhash::HashMap<String, OnceLock<Value>>,
    /// The values of association selectors that read only a file's kind.
    pub(crate) assoc_kinds: KindMemo,
}

impl std::ops::Deref for Dataset {
    type Target = FileTree;

    fn deref(&self) -> &FileTree {
        &self.tree
    }
}

impl std::fmt::Debug for Dataset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dataset")
            .field("root", &self.tree.root)
            .field("files", &self.tree.files.len())
            .field("issues", &self.tree.issues.len())
            .finish()
    }
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
        let tree = FileTree::walk(root, info, opts)?;
        let assoc_kinds = KindMemo::new(
            tree.kind_count(),
            1,
            crate::schema_info::kind_selector_count(&tree.info.associations),
        );
        let subject_values = tree
            .sub_dirs
            .iter()
            .map(|s| (s.clone(), OnceLock::new()))
            .collect();
        Ok(Dataset {
            json_cache: (0..tree.files.len()).map(|_| OnceLock::new()).collect(),
            table_cache: Default::default(),
            dataset_value: OnceLock::new(),
            dataset_value_lean: OnceLock::new(),
            tree_wanted: std::sync::atomic::AtomicBool::new(true),
            tree_value: OnceLock::new(),
            subject_values,
            assoc_kinds,
            tree,
        })
    }

    /// Opens the dataset at `root` with the rules of `schema`, as [`Dataset::open`] does,
    /// reusing what `earlier` (the same dataset opened with other rules, or the same)
    /// has already parsed: its JSON files and its cached plain tables, when both walks
    /// list the same files. Headerless gzipped tables, whose columns come from the
    /// inherited sidecars (which the rules decide), are parsed again.
    pub fn open_again(
        root: &Path,
        schema: &nidos_schema::Schema,
        opts: &OpenOptions,
        earlier: &Dataset,
    ) -> Result<Dataset, DatasetError> {
        let ds = Self::open(root, schema, opts)?;
        let same_files = ds.files.len() == earlier.files.len()
            && ds
                .files
                .iter()
                .zip(earlier.files.iter())
                .all(|(a, b)| a.path == b.path && a.size == b.size);
        if !same_files {
            return Ok(ds);
        }
        for (cell, parsed) in ds.json_cache.iter().zip(earlier.json_cache.iter()) {
            if let Some(load) = parsed.get() {
                let _ = cell.set(load.clone());
            }
        }
        let tables = earlier
            .table_cache
            .lock()
            .map(|c| c.tables())
            .unwrap_or_default();
        if let Ok(mut cache) = ds.table_cache.lock() {
            for (idx, load) in tables {
                let plain = ds
                    .files
                    .get(idx)
                    .is_some_and(|f| !f.name.extension.ends_with(".gz"));
                if plain {
                    drop(cache.insert(idx, load, ds.opts.table_cache_budget));
                }
            }
        }
        Ok(ds)
    }

    /// Takes in edits of the content of files already in the tree (`(index, new
    /// size)`; their names and kinds unchanged): what was read from them is forgotten,
    /// and so are the dataset-level values (`dataset`, `subject`) when an edited file is
    /// one they read (made again on their next lookup; answers whether they were). For
    /// an incremental run (`nidos_validate::incremental`); any other change (a file
    /// created, removed or renamed, the ignore file) needs a new walk.
    pub fn refresh(&mut self, edited: &[(usize, u64)]) -> bool {
        let values_read = |path: &str| {
            matches!(
                path,
                "/dataset_description.json" | "/CITATION.cff" | "/participants.tsv"
            ) || path.ends_with("_sessions.tsv")
        };
        let reset = edited.iter().any(|&(idx, _)| {
            self.tree
                .files
                .get(idx)
                .is_some_and(|f| values_read(&f.path))
        });
        let mut cache = self
            .table_cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut dead = Vec::new();
        for &(idx, size) in edited {
            if let Some(f) = self.tree.files.get_mut(idx) {
                f.size = size;
            }
            if let Some(cell) = self.json_cache.get_mut(idx) {
                *cell = OnceLock::new();
            }
            dead.extend(cache.remove(idx));
        }
        drop(cache);
        drop(dead);
        if reset {
            self.dataset_value = OnceLock::new();
            self.dataset_value_lean = OnceLock::new();
            for cell in self.subject_values.values_mut() {
                *cell = OnceLock::new();
            }
        }
        reset
    }

    /// The walked tree (also reached through `Deref`).
    pub fn file_tree(&self) -> &FileTree {
        &self.tree
    }

    /// Parses a name the way the walker does (used for paths not in the tree).
    pub fn parse_name(name: &str, is_dir: bool) -> crate::filename::ParsedName {
        FileTree::parse_name(name, is_dir)
    }

    /// `DatasetType` of the dataset (`raw`, `derivative`, `study`…): as declared, else
    /// implied by the description ([`implied_dataset_type`]).
    pub fn dataset_type(&self) -> String {
        let description = self.dataset_value().get("dataset_description");
        match description.get("DatasetType").as_str() {
            Some(t) => t.to_string(),
            None => implied_dataset_type(&description).to_string(),
        }
    }
}

/// Largest JSON file read whole; a larger one is a `FILE_TOO_LARGE` issue.
pub const MAX_JSON_BYTES: u64 = 64 << 20;
/// Largest table read whole (participants, sessions, scans); a larger one is a
/// `FILE_TOO_LARGE` warning and only its first `max_rows` rows are kept, so memory stays
/// bounded. Other tables are always streamed with a row limit.
pub const MAX_WHOLE_TABLE_BYTES: u64 = 256 << 20;
/// Our code for a metadata file over its read limit.
pub const FILE_TOO_LARGE: &str = "FILE_TOO_LARGE";
/// Largest TIFF file read whole (for its IFDs and OME-XML).
const MAX_TIFF_BYTES: u64 = 64 << 20;
/// Prefix read for gzip headers and gzipped NIfTI headers.
const GZ_PREFIX: usize = 64 << 10;
/// Prefix read for uncompressed NIfTI headers (NIfTI-2 is 540 bytes plus extensions).
const NII_PREFIX: usize = 64 << 10;

/// A parsed JSON file (null when it could not be parsed) and the issues found.
#[derive(Debug, Default)]
pub struct JsonLoad {
    pub value: Value,
    pub issues: Vec<DatasetIssue>,
}

/// A parsed TSV file and the issues found.
///
/// The table is held compactly ([`Table`]); the `columns` context value is made from it
/// on demand: one column at a time for rules that read `columns.NAME` (kept here for
/// later rules), the whole object only for a rule that reads `columns` itself.
#[derive(Debug, Default)]
pub struct TableLoad {
    pub table: Option<Table>,
    /// Per column of `table`: its value, once asked for.
    column_values: Vec<OnceLock<Value>>,
    /// The whole `columns` value, once asked for.
    whole: OnceLock<Value>,
    pub issues: Vec<DatasetIssue>,
}

impl TableLoad {
    /// A load of `table` (none when it could not be read) with its issues.
    pub fn new(table: Option<Table>, issues: Vec<DatasetIssue>) -> TableLoad {
        let n = table.as_ref().map_or(0, Table::n_cols);
        TableLoad {
            table,
            column_values: (0..n).map(|_| OnceLock::new()).collect(),
            whole: OnceLock::new(),
            issues,
        }
    }

    /// The `columns` value (null when the table could not be read), made on first use.
    pub fn value(&self) -> &Value {
        static NULL: Value = Value::Null;
        match &self.table {
            Some(t) => self.whole.get_or_init(|| t.to_value()),
            None => &NULL,
        }
    }

    /// `columns.NAME`: the column the `columns` object holds under `name` (null when
    /// there is none), made on first use and kept.
    pub fn column_value(&self, name: &str) -> Value {
        let Some(t) = &self.table else {
            return Value::Null;
        };
        if let Some(whole) = self.whole.get() {
            return whole.get(name);
        }
        let Some(i) = t.headers.iter().rposition(|h| h == name) else {
            return Value::Null;
        };
        let Some(col) = t.column_at(i) else {
            return Value::Null;
        };
        match self.column_values.get(i) {
            Some(cell) => cell.get_or_init(|| t.column_value(col)).clone(),
            None => t.column_value(col),
        }
    }

    /// Estimated heap size of the table (columns made into values later are not counted).
    pub fn approx_bytes(&self) -> usize {
        self.table.as_ref().map_or(64, |t| t.approx_bytes() + 256)
    }
}

/// A value loaded from a file header and the issues found.
#[derive(Debug, Default, Clone)]
pub struct HeaderLoad {
    pub value: Value,
    pub issues: Vec<DatasetIssue>,
}

/// The dataset type a description implies when it does not declare `DatasetType`:
/// `derivative` when it names what generated the data (`GeneratedBy`), else `raw`.
pub fn implied_dataset_type(description: &Value) -> &'static str {
    if description.get("GeneratedBy").is_null() {
        "raw"
    } else {
        "derivative"
    }
}

/// `dataset_description.json` without `DatasetType` reads with the implied type
/// ([`implied_dataset_type`]), so rules never see it missing.
fn with_defaults(path: &str, v: Value) -> Value {
    if path != "/dataset_description.json" {
        return v;
    }
    match v.as_object() {
        Some(o) if !o.contains_key("DatasetType") => {
            let mut o = o.clone();
            o.insert("DatasetType".into(), Value::str(implied_dataset_type(&v)));
            Value::object(o)
        }
        _ => v,
    }
}

fn too_large(path: &str, size: u64, cap: u64, severity: Severity) -> DatasetIssue {
    DatasetIssue::new(
        FILE_TOO_LARGE,
        severity,
        path,
        format!(
            "file is {size} bytes, over the {cap}-byte read limit for metadata files; not read"
        ),
    )
}

fn read_error(path: &str, e: &std::io::Error) -> DatasetIssue {
    if e.kind() == std::io::ErrorKind::InvalidData {
        // `Fs::read` refuses a file over its cap this way.
        return DatasetIssue::new(FILE_TOO_LARGE, Severity::Error, path, e.to_string());
    }
    DatasetIssue::new(
        "FILE_READ",
        Severity::Error,
        path,
        format!("cannot read file: {e}"),
    )
}

impl Dataset {
    /// The parsed JSON of file `idx` (cached; read once per dataset).
    pub(crate) fn json_at(&self, idx: usize) -> Arc<JsonLoad> {
        self.json_cache[idx]
            .get_or_init(|| Arc::new(self.load_json(idx)))
            .clone()
    }

    /// The parsed JSON of file `idx` (null when it is not readable JSON; cached).
    pub fn json_value(&self, idx: usize) -> Value {
        self.json_at(idx).value.clone()
    }

    /// The bytes of the dataset file at `path` (such as `/CITATION.cff`), at most
    /// [`MAX_JSON_BYTES`] of them.
    /// A file the walk found leaving the dataset through a link is not read.
    pub fn read_file(&self, path: &str) -> std::io::Result<Vec<u8>> {
        if self.find(path).is_some_and(|f| f.outside) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "symbolic link points outside the dataset; not read",
            ));
        }
        self.fs.read(&self.abs(path), MAX_JSON_BYTES)
    }

    fn load_json(&self, idx: usize) -> JsonLoad {
        let f = &self.files[idx];
        if !f.readable() {
            return JsonLoad::default();
        }
        if f.size > MAX_JSON_BYTES {
            return JsonLoad {
                value: Value::Null,
                issues: vec![too_large(&f.path, f.size, MAX_JSON_BYTES, Severity::Error)],
            };
        }
        let bytes = match self.read_sized(f, MAX_JSON_BYTES) {
            Ok(b) => b,
            Err(e) => {
                return JsonLoad {
                    value: Value::Null,
                    issues: vec![read_error(&f.path, &e)],
                }
            }
        };
        match loaders::json::read_json_object(&bytes) {
            Ok(l) => JsonLoad {
                value: with_defaults(&f.path, loaders::json::to_value(&l.value)),
                issues: l
                    .issues
                    .iter()
                    .map(|i| DatasetIssue::from_load(i, &f.path))
                    .collect(),
            },
            Err(i) => JsonLoad {
                value: Value::Null,
                issues: vec![DatasetIssue::from_load(&i, &f.path)],
            },
        }
    }

    /// The parsed table of TSV file `idx`. Participant, session and scans tables are
    /// read whole (up to [`MAX_WHOLE_TABLE_BYTES`]); others keep at most `max_rows` rows.
    /// Tables are kept for later lookups while their total estimated size stays within
    /// the budget of [`crate::OpenOptions`]; beyond it a table is parsed for the caller
    /// and dropped after use, so memory stays bounded however many large tables a
    /// dataset holds.
    pub(crate) fn table_at(&self, idx: usize) -> Arc<TableLoad> {
        fn lock(c: &std::sync::Mutex<TableCache>) -> std::sync::MutexGuard<'_, TableCache> {
            c.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
        }
        // Evicted tables are freed after the lock is released.
        let (hit, dead) = lock(&self.table_cache).get(idx);
        drop(dead);
        if let Some(t) = hit {
            return t;
        }
        // Parsed outside the lock; two threads may parse one table at once, and the
        // second keeps the first's copy out of the cache (same contents).
        let load = Arc::new(self.load_table(idx));
        let dead = lock(&self.table_cache).insert(idx, load.clone(), self.opts.table_cache_budget);
        drop(dead);
        load
    }

    fn load_table(&self, idx: usize) -> TableLoad {
        let f = &self.files[idx];
        if !f.readable() {
            return TableLoad::default();
        }
        let whole = matches!(
            f.name.suffix.as_deref(),
            Some("participants") | Some("sessions") | Some("scans")
        );
        let mut issues = Vec::new();
        let max_rows = if whole && f.size > MAX_WHOLE_TABLE_BYTES {
            issues.push(too_large(
                &f.path,
                f.size,
                MAX_WHOLE_TABLE_BYTES,
                Severity::Warning,
            ));
            Some(self.opts.max_rows.unwrap_or(1000))
        } else if whole {
            None
        } else {
            self.opts.max_rows
        };
        let opts = TsvOptions { max_rows };
        let reader = match self.fs.open_sized(&self.abs(&f.path), f.size) {
            Ok(r) => r,
            Err(e) => {
                issues.push(read_error(&f.path, &e));
                return TableLoad::new(None, issues);
            }
        };
        let gz = f.name.extension.ends_with(".gz");
        // Headerless tables (`_physio.tsv.gz`, `_stim.tsv.gz`) name their columns in the
        // sidecar's `Columns`.
        let named: Option<Vec<String>> = if gz {
            sidecar::merge_sidecars(self, idx)
                .value
                .get("Columns")
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
        } else {
            None
        };
        let res = match (gz, &named) {
            (true, Some(cols)) => loaders::tsv::read_tsv_gz_headerless(reader, cols, &opts),
            (true, None) => loaders::tsv::read_tsv_gz(reader, &opts),
            (false, _) => loaders::tsv::read_tsv(reader, &opts),
        };
        match res {
            Ok(l) => {
                issues.extend(l.issues.iter().map(|i| DatasetIssue::from_load(i, &f.path)));
                TableLoad::new(Some(l.value), issues)
            }
            Err(i) => {
                issues.push(DatasetIssue::from_load(&i, &f.path));
                TableLoad::new(None, issues)
            }
        }
    }

    /// The first bytes of file `idx`, enough for a gzip header and a (gzipped) NIfTI
    /// header; one read serves both (not cached: each file has its own).
    pub(crate) fn header_prefix(&self, idx: usize) -> std::io::Result<Vec<u8>> {
        let f = &self.files[idx];
        let len = if f.name.extension.ends_with(".gz") {
            GZ_PREFIX
        } else {
            NII_PREFIX
        };
        self.read_sized(f, len as u64)
    }

    /// At most the first `limit` bytes of file `f`, read to the size the walk saw (a
    /// small file takes one read, not one more to find its end).
    fn read_sized(&self, f: &FileEntry, limit: u64) -> std::io::Result<Vec<u8>> {
        let len = f.size.min(limit);
        let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        self.fs
            .open_sized(&self.abs(&f.path), len)?
            .read_to_end(&mut buf)?;
        Ok(buf)
    }

    /// The NIfTI header of file `idx` from its first bytes (`prefix` reads them when
    /// needed).
    pub(crate) fn nifti_from<'p>(
        &self,
        idx: usize,
        prefix: impl FnOnce() -> &'p std::io::Result<Vec<u8>>,
    ) -> HeaderLoad {
        let f = &self.files[idx];
        if !f.readable() || self.opts.ignore_nifti_headers {
            return HeaderLoad::default();
        }
        let prefix = match prefix() {
            Ok(b) => b,
            Err(e) => {
                return HeaderLoad {
                    value: Value::Null,
                    issues: vec![read_error(&f.path, e)],
                }
            }
        };
        let res = if f.name.extension.ends_with(".gz") {
            loaders::nifti::read_nifti_header_gz_bytes(prefix)
        } else {
            loaders::nifti::read_nifti_header(prefix)
        };
        match res {
            Ok(h) => HeaderLoad {
                value: h.to_value(),
                issues: Vec::new(),
            },
            Err(i) => HeaderLoad {
                value: Value::Null,
                issues: vec![DatasetIssue::from_load(&i, &f.path)],
            },
        }
    }

    /// The gzip header of file `idx` from its first 4 KiB (`prefix` reads them when
    /// needed).
    pub(crate) fn gzip_from<'p>(
        &self,
        idx: usize,
        prefix: impl FnOnce() -> &'p std::io::Result<Vec<u8>>,
    ) -> HeaderLoad {
        let f = &self.files[idx];
        if !f.readable() {
            return HeaderLoad::default();
        }
        match prefix() {
            Ok(b) => gzip_value(&b[..b.len().min(4096)]),
            Err(e) => HeaderLoad {
                value: Value::Null,
                issues: vec![read_error(&f.path, e)],
            },
        }
    }

    /// The TIFF facts of file `idx`: `(tiff, ome)` values.
    pub(crate) fn tiff_at(&self, idx: usize) -> (HeaderLoad, HeaderLoad) {
        let f = &self.files[idx];
        if !f.readable() {
            return Default::default();
        }
        let bytes = match self.fs.read(&self.abs(&f.path), MAX_TIFF_BYTES) {
            Ok(b) => b,
            Err(_) => match self.fs.read_prefix(&self.abs(&f.path), 1 << 20) {
                Ok(b) => b,
                Err(e) => {
                    return (
                        HeaderLoad {
                            value: Value::Null,
                            issues: vec![read_error(&f.path, &e)],
                        },
                        HeaderLoad::default(),
                    )
                }
            },
        };
        tiff_values(&bytes)
    }

    /// The bytes of a small text file (bval/bvec); `Ok(None)` when the content is not
    /// available (broken link, empty…), an issue when reading fails.
    pub(crate) fn small_bytes(&self, idx: usize) -> Result<Option<Vec<u8>>, Box<DatasetIssue>> {
        let f = &self.files[idx];
        if !f.readable() {
            return Ok(None);
        }
        let read = if f.size > MAX_JSON_BYTES {
            Err(crate::fs::too_large(MAX_JSON_BYTES))
        } else {
            self.read_sized(f, MAX_JSON_BYTES)
        };
        read.map(Some)
            .map_err(|e| Box::new(read_error(&f.path, &e)))
    }
}

// --- adapters from loader results to context values and issues ---

/// The `gzip` part. A file that is not gzipped is reported by the loader that needs its
/// content (NIfTI, TSV), not here: the part is just absent.
pub(crate) fn gzip_value(prefix: &[u8]) -> HeaderLoad {
    match loaders::gzip::read_gzip_header(prefix) {
        Ok(h) => HeaderLoad {
            value: h.to_value(),
            issues: Vec::new(),
        },
        Err(_) => HeaderLoad::default(),
    }
}

/// The `tiff` and `ome` parts. A file that is not a TIFF gets neither; the standard has
/// no issue code for it, and the reference validator reports nothing.
pub(crate) fn tiff_values(bytes: &[u8]) -> (HeaderLoad, HeaderLoad) {
    match loaders::tiff::read_tiff(bytes) {
        Ok(t) => (
            HeaderLoad {
                value: t.to_value(),
                issues: Vec::new(),
            },
            HeaderLoad {
                value: t.ome.as_ref().map(|o| o.to_value()).unwrap_or(Value::Null),
                issues: Vec::new(),
            },
        ),
        Err(_) => Default::default(),
    }
}

/// The `bval`/`bvec` payload fields (`n_cols`, `n_rows`, `values`) and issues.
pub(crate) fn gradient_table(
    which: &str,
    bytes: &[u8],
    path: &str,
) -> (Vec<(String, Value)>, Vec<DatasetIssue>) {
    let res = if which == "bval" {
        loaders::bval::read_bval(bytes).map(|l| l.map(|b| b.to_value()))
    } else {
        loaders::bvec::read_bvec(bytes).map(|l| l.map(|b| b.to_value()))
    };
    match res {
        Ok(l) => {
            let fields = l
                .value
                .as_object()
                .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default();
            let issues = l
                .issues
                .iter()
                .map(|i| DatasetIssue::from_load(i, path))
                .collect();
            (fields, issues)
        }
        Err(i) => (Vec::new(), vec![DatasetIssue::from_load(&i, path)]),
    }
}
