//! A dataset opened for one of its files, and the display form of a file's context:
//! what `nidos context`, `nidos eval --dataset` and the REPL use.

use std::borrow::Cow;
use std::path::Path;

use nidos_expr::{Context, Value};

use crate::context::{FileContext, CONTEXT_NAMES};
use crate::entry::{DatasetError, FileEntry, OpenOptions};
use crate::load::Dataset;

/// [`FileContext::to_json_eager`] for display: unless `full_tree`, `dataset.tree` (which
/// lists every file) is replaced by a one-line summary. This is what `nidos context`
/// prints.
pub fn display_json(ctx: &FileContext<'_>, full_tree: bool) -> serde_json::Value {
    let mut json = ctx.to_json_eager();
    if !full_tree {
        if let Some(tree) = json.pointer_mut("/dataset/tree") {
            let n = ctx.dataset().files().len();
            *tree = serde_json::Value::String(format!("({n} files; pass --tree to print)"));
        }
    }
    json
}

/// A dataset opened for one of its files: what `nidos context`, `nidos eval --dataset
/// DIR --file PATH` and the REPL's `:file PATH` use.
///
/// It is itself a [`Context`] (owning, so it can be boxed as `Box<dyn Context>`): each
/// root value is computed on first lookup and kept.
#[derive(Debug)]
pub struct OpenedFile {
    pub dataset: Dataset,
    pub index: usize,
    cache: std::sync::Mutex<std::collections::HashMap<String, Value>>,
}

impl Context for OpenedFile {
    /// Values are kept behind a lock, so they are given away (cloned: a reference-count
    /// update), never lent.
    fn lookup(&self, name: &str) -> Cow<'_, Value> {
        if let Ok(cache) = self.cache.lock() {
            if let Some(v) = cache.get(name) {
                return Cow::Owned(v.clone());
            }
        }
        let v = self.context().lookup(name).into_owned();
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(name.to_string(), v.clone());
        }
        Cow::Owned(v)
    }

    fn lookup_member(&self, name: &str, key: &str) -> Option<Cow<'_, Value>> {
        if let Ok(cache) = self.cache.lock() {
            if let Some(v) = cache.get(name) {
                return Some(Cow::Owned(v.get(key)));
            }
        }
        let v = self.context().lookup_member(name, key)?.into_owned();
        Some(Cow::Owned(v))
    }

    fn exists(&self, rule: &str, path: &str) -> Option<bool> {
        self.dataset.exists_from(self.index, rule, path)
    }

    fn names(&self) -> Vec<String> {
        CONTEXT_NAMES.iter().map(|s| s.to_string()).collect()
    }
}

impl OpenedFile {
    /// The file's context.
    pub fn context(&self) -> FileContext<'_> {
        self.dataset.context_at(self.index)
    }

    pub fn entry(&self) -> &FileEntry {
        &self.dataset.files[self.index]
    }
}

/// Opens the dataset at `dir` and finds `file` in it. `file` is dataset-relative
/// (`/sub-01/anat/x.nii` or `sub-01/anat/x.nii`) or a filesystem path inside `dir`.
pub fn open_file_context(
    dir: &Path,
    file: &str,
    schema: &nidos_schema::Schema,
    opts: &OpenOptions,
) -> Result<OpenedFile, DatasetError> {
    let dataset = Dataset::open(dir, schema, opts)?;
    let index = locate(&dataset, dir, file).ok_or_else(|| DatasetError::NoSuchFile {
        root: dir.to_path_buf(),
        path: file.to_string(),
    })?;
    Ok(OpenedFile {
        dataset,
        index,
        cache: Default::default(),
    })
}

/// Finds a file given as a dataset-relative path or a filesystem path.
pub fn locate(ds: &Dataset, dir: &Path, file: &str) -> Option<usize> {
    if let Some(i) = ds.index_of(file.trim_end_matches('/')) {
        return Some(i);
    }
    let p = Path::new(file);
    let rel = p
        .strip_prefix(dir)
        .ok()
        .map(Path::to_path_buf)
        .or_else(|| {
            ds.fs
                .canonicalize(p)
                .ok()
                .and_then(|c| c.strip_prefix(&ds.root).ok().map(Path::to_path_buf))
        })?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    ds.index_of(rel.trim_end_matches('/'))
}
