//! The per-file context that rule expressions read, built lazily: each part (sidecar,
//! associations, columns, headers…) is computed on the first lookup that needs it.
//! Dataset-level parts (`dataset`, `subject`, `schema`) are computed once per dataset.

use std::cell::OnceCell;
use std::path::Path;
use std::sync::Arc;

use indexmap::IndexMap;
use nidos_expr::{Context, Object, Value};

use crate::dataset::{Dataset, DatasetError, DatasetIssue, FileEntry, OpenOptions};
use crate::inherit::{merge_sidecars, SidecarMerge, SidecarOverride};
use crate::load::{HeaderLoad, JsonLoad, TableLoad};

/// The root names of a file context, in the order of the standard's context definition.
pub const CONTEXT_NAMES: &[&str] = &[
    "schema",
    "dataset",
    "subject",
    "path",
    "size",
    "entities",
    "datatype",
    "suffix",
    "extension",
    "modality",
    "sidecar",
    "associations",
    "columns",
    "json",
    "gzip",
    "nifti_header",
    "ome",
    "tiff",
    "hed",
];

/// The evaluation context of one file.
pub struct FileContext<'a> {
    ds: &'a Dataset,
    idx: usize,
    entities: OnceCell<Value>,
    sidecar: OnceCell<SidecarMerge>,
    associations: OnceCell<(Value, Vec<DatasetIssue>)>,
    columns: OnceCell<Option<Arc<TableLoad>>>,
    json: OnceCell<Option<Arc<JsonLoad>>>,
    /// The gzip and NIfTI parts, read together (see [`FileContext::headers`]).
    headers: OnceCell<(HeaderLoad, HeaderLoad)>,
    tiff: OnceCell<(HeaderLoad, HeaderLoad)>,
    /// The assembled HED annotation of each row of a table (see [`FileContext::hed`]).
    hed: OnceCell<Value>,
}

impl Dataset {
    /// The context of a file of this dataset.
    ///
    /// Never panics: an entry not of this dataset (no file with its path) gets a context
    /// whose lookups are all null, as [`Dataset::context_at`] gives for an index out of
    /// range.
    pub fn context(&self, entry: &FileEntry) -> FileContext<'_> {
        let idx = self.index_of(&entry.path).unwrap_or(usize::MAX);
        self.context_at(idx)
    }

    /// The context of the file at `idx` in [`Dataset::files`]. An out-of-range index
    /// gives a context whose lookups are all null.
    pub fn context_at(&self, idx: usize) -> FileContext<'_> {
        FileContext {
            ds: self,
            idx,
            entities: OnceCell::new(),
            sidecar: OnceCell::new(),
            associations: OnceCell::new(),
            columns: OnceCell::new(),
            json: OnceCell::new(),
            headers: OnceCell::new(),
            tiff: OnceCell::new(),
            hed: OnceCell::new(),
        }
    }

    /// The `dataset` object (computed once).
    pub fn dataset_value(&self) -> Value {
        self.dataset_value_ref().clone()
    }

    /// [`Dataset::dataset_value`], borrowed.
    pub fn dataset_value_ref(&self) -> &Value {
        self.dataset_value
            .get_or_init(|| self.build_dataset_value())
    }

    fn build_dataset_value(&self) -> Value {
        let mut o = Object::new();
        let desc = self
            .index_of("/dataset_description.json")
            .map(|i| self.json_at(i).value.clone())
            .filter(|v| !v.is_null())
            .unwrap_or_else(|| Value::object(Object::new()));
        o.insert("dataset_description".into(), desc);
        if let Some(citation) = self.citation_value() {
            o.insert("citation".into(), citation);
        }
        o.insert("tree".into(), self.tree());
        let ignored = self
            .files
            .iter()
            .filter(|f| f.ignored)
            .map(|f| Value::str(f.path.as_str()))
            .collect();
        o.insert("ignored".into(), Value::array(ignored));
        o.insert("datatypes".into(), strs(self.datatypes()));
        o.insert("modalities".into(), strs(self.modalities()));
        // Where the dataset sits: its root folder's name and the name of the folder holding
        // it (a derivative at `…/derivatives/<pipeline>/` has `derivatives` here).
        let base = |p: Option<&std::path::Path>| {
            p.and_then(|p| p.file_name())
                .map(|n| Value::str(n.to_string_lossy().as_ref()))
                .unwrap_or_else(|| Value::str(""))
        };
        o.insert("dir_name".into(), base(Some(self.root.as_path())));
        o.insert("parent_dir_name".into(), base(self.root.parent()));
        let mut subjects = Object::new();
        subjects.insert("sub_dirs".into(), strs(self.sub_dirs.clone()));
        if let Some(i) = self.index_of("/participants.tsv") {
            let t = self.table_at(i);
            if let Some(col) = t.table.as_ref().and_then(|t| t.column("participant_id")) {
                subjects.insert("participant_id".into(), strs(col.to_vec()));
            }
        }
        o.insert("subjects".into(), Value::object(subjects));
        Value::object(o)
    }

    /// The parsed `CITATION.cff` at the root (YAML; a date left unquoted stays the string
    /// it is written as); absent when there is none or it does not parse (the validator
    /// reports why).
    fn citation_value(&self) -> Option<Value> {
        self.find("/CITATION.cff").filter(|f| f.readable())?;
        let bytes = self.read_file("/CITATION.cff").ok()?;
        serde_saphyr::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .map(Value::from)
    }

    /// The `dataset.tree` object: directories are objects of their entries, files are
    /// `true`. Computed once.
    pub fn tree(&self) -> Value {
        self.tree_value.get_or_init(|| self.build_tree()).clone()
    }

    fn build_tree(&self) -> Value {
        #[derive(Default)]
        struct Node(IndexMap<String, Option<Node>>);
        fn insert(node: &mut Node, parts: &[&str], is_dir: bool) {
            let Some((first, rest)) = parts.split_first() else {
                return;
            };
            if rest.is_empty() && !is_dir {
                node.0.entry(first.to_string()).or_insert(None);
                return;
            }
            let child = node
                .0
                .entry(first.to_string())
                .or_insert_with(|| Some(Node::default()));
            if child.is_none() {
                *child = Some(Node::default());
            }
            if let Some(c) = child.as_mut() {
                insert(c, rest, is_dir);
            }
        }
        fn to_value(node: &Node) -> Value {
            let mut o = Object::with_capacity(node.0.len());
            for (k, v) in &node.0 {
                o.insert(
                    k.clone(),
                    v.as_ref().map(to_value).unwrap_or(Value::Bool(true)),
                );
            }
            Value::object(o)
        }
        let mut root = Node::default();
        let mut dirs: Vec<&String> = self.dir_paths.iter().collect();
        dirs.sort();
        for d in dirs {
            let parts: Vec<&str> = d.trim_matches('/').split('/').collect();
            insert(&mut root, &parts, true);
        }
        for f in &self.files {
            let parts: Vec<&str> = f.path.trim_matches('/').split('/').collect();
            insert(&mut root, &parts, false);
        }
        to_value(&root)
    }

    /// The `subject` object for `sub-XX` (computed once per subject).
    pub fn subject_value(&self, sub: &str) -> Value {
        self.subject_value_ref(sub).cloned().unwrap_or(Value::Null)
    }

    /// [`Dataset::subject_value`], borrowed (`None` for an unknown subject).
    pub fn subject_value_ref(&self, sub: &str) -> Option<&Value> {
        self.subject_values
            .get(sub)
            .map(|cell| cell.get_or_init(|| self.build_subject_value(sub)))
    }

    fn build_subject_value(&self, sub: &str) -> Value {
        let mut sessions = Object::new();
        sessions.insert(
            "ses_dirs".into(),
            strs(self.ses_dirs.get(sub).cloned().unwrap_or_default()),
        );
        if let Some(i) = self.index_of(&format!("/{sub}/{sub}_sessions.tsv")) {
            let t = self.table_at(i);
            if let Some(col) = t.table.as_ref().and_then(|t| t.column("session_id")) {
                sessions.insert("session_id".into(), strs(col.to_vec()));
            }
        }
        let mut o = Object::new();
        o.insert("sessions".into(), Value::object(sessions));
        Value::object(o)
    }

    /// Resolves `path` under rule `rule` (see [`Context::exists`]) from the file at
    /// `idx`; `None` for an unknown rule.
    pub fn exists_from(&self, idx: usize, rule: &str, path: &str) -> Option<bool> {
        let file = self.files.get(idx);
        let (base, rel): (String, &str) = match rule {
            "dataset" => (String::new(), path),
            "stimuli" => ("/stimuli".into(), path),
            "subject" => {
                let sub = file.and_then(|f| subject_of(&f.path));
                match sub {
                    Some(s) => (format!("/{s}"), path),
                    None => return Some(false),
                }
            }
            "file" => match file {
                Some(f) => (f.dir().trim_end_matches('/').to_string(), path),
                None => return Some(false),
            },
            r if r.ends_with("-uri") => {
                // `<scheme>-uri`: a URI of that scheme naming this dataset (empty
                // dataset name); schemes compare case-insensitively (RFC 3986).
                let wanted = r.trim_end_matches("-uri");
                let Some((scheme, rest)) = path.split_once(':') else {
                    return Some(false);
                };
                if !scheme.eq_ignore_ascii_case(wanted) {
                    return Some(false);
                }
                let Some((dsname, rel)) = rest.split_once(':') else {
                    return Some(false);
                };
                if !dsname.is_empty() {
                    return Some(false);
                }
                (String::new(), rel)
            }
            _ => return None,
        };
        let joined = if rel.starts_with('/') && rule == "dataset" {
            rel.to_string()
        } else {
            format!("{base}/{rel}")
        };
        match normalize(&joined) {
            Some(p) => Some(self.path_exists(&p)),
            None => Some(false),
        }
    }
}

/// Collapses `.` and `..`; `None` when the path climbs above the root.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

fn subject_of(path: &str) -> Option<&str> {
    let first = path.trim_start_matches('/').split('/').next()?;
    (first.starts_with("sub-") && path.trim_start_matches('/').len() > first.len()).then_some(first)
}

fn strs(v: Vec<String>) -> Value {
    Value::array(v.into_iter().map(Value::from).collect())
}

fn has_ext(f: &FileEntry, exts: &[&str]) -> bool {
    exts.iter().any(|e| f.name.extension == *e)
}

impl<'a> FileContext<'a> {
    pub fn dataset(&self) -> &'a Dataset {
        self.ds
    }

    pub fn index(&self) -> usize {
        self.idx
    }

    /// The file (`None` only for an index outside the dataset).
    pub fn entry(&self) -> Option<&'a FileEntry> {
        self.ds.files.get(self.idx)
    }

    /// The merged sidecar, with per-key sources and overrides.
    pub fn sidecar_merge(&self) -> &SidecarMerge {
        self.sidecar.get_or_init(|| {
            if self.entry().is_some() {
                merge_sidecars(self.ds, self.idx)
            } else {
                SidecarMerge::default()
            }
        })
    }

    /// Per sidecar key, the path of the sidecar that set its final value.
    pub fn sidecar_sources(&self) -> &IndexMap<String, String> {
        &self.sidecar_merge().sources
    }

    /// Keys whose value a deeper sidecar changed (reported as `SIDECAR_FIELD_OVERRIDE`).
    pub fn sidecar_overrides(&self) -> &[SidecarOverride] {
        &self.sidecar_merge().overrides
    }

    fn entities(&self) -> &Value {
        self.entities.get_or_init(|| {
            let Some(f) = self.entry() else {
                return Value::Null;
            };
            let table = &self.ds.info.names;
            // Keyed by the standard's long names (`subject`); the short file-name
            // keys (`sub`) are bound too, because published rule sets use both
            // spellings (e.g. `entities.task` next to `"res" in entities`).
            let mut o = Object::with_capacity(2 * f.name.pairs.len());
            for (k, v) in &f.name.pairs {
                let value = Value::str(v.as_str());
                let long = table.long_name(k);
                if long != k {
                    o.insert(k.clone(), value.clone());
                }
                o.insert(long.to_string(), value);
            }
            Value::object(o)
        })
    }

    fn associations(&self) -> &(Value, Vec<DatasetIssue>) {
        self.associations.get_or_init(|| {
            if self.entry().is_some() {
                crate::assoc::associations(self)
            } else {
                (Value::Null, Vec::new())
            }
        })
    }

    fn columns(&self) -> &Option<Arc<TableLoad>> {
        self.columns.get_or_init(|| {
            let f = self.entry()?;
            has_ext(f, &[".tsv", ".tsv.gz"]).then(|| self.ds.table_at(self.idx))
        })
    }

    fn json(&self) -> &Option<Arc<JsonLoad>> {
        self.json.get_or_init(|| {
            let f = self.entry()?;
            has_ext(f, &[".json"]).then(|| self.ds.json_at(self.idx))
        })
    }

    /// The gzip part (for `.gz` files) and the NIfTI part (for `.nii`/`.nii.gz`), both
    /// from one read of the file's first bytes (a `.nii.gz` wants both nearly always);
    /// nothing is read for a file that has neither, or that is unreadable.
    fn headers(&self) -> &(HeaderLoad, HeaderLoad) {
        self.headers.get_or_init(|| {
            let Some(f) = self.entry() else {
                return Default::default();
            };
            let prefix = OnceCell::new();
            let read = || prefix.get_or_init(|| self.ds.header_prefix(self.idx));
            let gzip = if f.name.extension.ends_with(".gz") {
                self.ds.gzip_from(self.idx, read)
            } else {
                HeaderLoad::default()
            };
            let nifti = if has_ext(f, &[".nii", ".nii.gz"]) {
                self.ds.nifti_from(self.idx, read)
            } else {
                HeaderLoad::default()
            };
            (gzip, nifti)
        })
    }

    fn gzip(&self) -> &HeaderLoad {
        &self.headers().0
    }

    fn nifti(&self) -> &HeaderLoad {
        &self.headers().1
    }

    fn tiff(&self) -> &(HeaderLoad, HeaderLoad) {
        self.tiff.get_or_init(|| match self.entry() {
            Some(f) if has_ext(f, &[".tif", ".tiff", ".ome.tif", ".ome.tiff", ".ome.btf"]) => {
                self.ds.tiff_at(self.idx)
            }
            _ => Default::default(),
        })
    }

    /// The parsed table of a `.tsv`/`.tsv.gz` file (`None` for other files or an unreadable
    /// table); loaded once, like the `columns` field.
    pub fn table(&self) -> Option<&crate::loaders::tsv::Table> {
        self.columns().as_ref().and_then(|t| t.table.as_ref())
    }

    /// For a table with HED (a `HED` column, or `HED` entries in its sidecars): each row's
    /// annotation as assembled from the sidecar entries of its cells and its `HED` cell, as
    /// the HED validator sees it. Null for other files.
    fn hed(&self) -> &Value {
        self.hed.get_or_init(|| {
            let Some(Some(table)) = self.columns().as_ref().map(|t| t.table.as_ref()) else {
                return Value::Null;
            };
            let mut ignored = Vec::new();
            let sidecar = nidos_hed::events::SidecarHed::read(
                &self.sidecar_merge().value.to_json(),
                &mut ignored,
            );
            if sidecar.is_empty() && !table.headers.iter().any(|h| h == "HED") {
                return Value::Null;
            }
            let n = table.kept_rows();
            let rows: Vec<Vec<String>> = (0..n)
                .map(|r| {
                    table
                        .columns
                        .iter()
                        .map(|c| c.get(r).cloned().unwrap_or_default())
                        .collect()
                })
                .collect();
            let strings = nidos_hed::events::assemble_rows(&sidecar, &table.headers, &rows);
            Value::array(strings.into_iter().map(Value::from).collect())
        })
    }

    /// Loads every part that reads this file's own content (JSON, TSV, NIfTI, gzip,
    /// TIFF), so [`FileContext::load_issues`] reports every problem of the file.
    pub fn load_own(&self) {
        let _ = self.columns();
        let _ = self.json();
        let _ = self.headers();
        let _ = self.tiff();
    }

    /// Issues found by the parts loaded so far: problems of this file's own content,
    /// ambiguous sidecars or associations, malformed bval/bvec payloads (located at the
    /// file they concern). Parse errors of a sidecar are reported by the sidecar's own
    /// context, not repeated for every data file that inherits it.
    pub fn load_issues(&self) -> Vec<DatasetIssue> {
        let mut out = Vec::new();
        if let Some(Some(t)) = self.columns.get() {
            out.extend(t.issues.iter().cloned());
        }
        if let Some(Some(j)) = self.json.get() {
            out.extend(j.issues.iter().cloned());
        }
        if let Some((g, n)) = self.headers.get() {
            out.extend(g.issues.iter().cloned());
            out.extend(n.issues.iter().cloned());
        }
        if let Some((t, o)) = self.tiff.get() {
            out.extend(t.issues.iter().cloned());
            out.extend(o.issues.iter().cloned());
        }
        if let Some(s) = self.sidecar.get() {
            out.extend(s.issues.iter().cloned());
        }
        if let Some((_, i)) = self.associations.get() {
            out.extend(i.iter().cloned());
        }
        out.sort();
        out.dedup();
        out
    }

    /// Every field, loaded, as JSON (for display). `schema` is left out (it is the whole
    /// schema); null fields are left out.
    pub fn to_json_eager(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for name in CONTEXT_NAMES.iter().filter(|n| **n != "schema") {
            let v = self.lookup(name);
            if !v.is_null() {
                m.insert((*name).to_string(), v.to_json());
            }
        }
        serde_json::Value::Object(m)
    }
}

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

impl Context for FileContext<'_> {
    /// The kept parts come from [`Context::lookup_ref`]; the file's own scalars are made
    /// here.
    fn lookup(&self, name: &str) -> Value {
        if let Some(v) = self.lookup_ref(name) {
            return v.clone();
        }
        let Some(f) = self.entry() else {
            return Value::Null;
        };
        match name {
            "path" => Value::str(f.path.as_str()),
            "size" => Value::Number(f.size as f64),
            "suffix" => f
                .name
                .suffix
                .as_deref()
                .map(Value::str)
                .unwrap_or(Value::Null),
            "extension" => Value::str(f.name.extension.as_str()),
            "datatype" => f.datatype.as_deref().map(Value::str).unwrap_or(Value::Null),
            "modality" => f
                .datatype
                .as_deref()
                .and_then(|d| self.ds.info.modalities.get(d))
                .map(|m| Value::str(m.as_str()))
                .unwrap_or(Value::Null),
            _ => Value::Null,
        }
    }

    fn lookup_ref(&self, name: &str) -> Option<&Value> {
        let Some(f) = self.entry() else {
            return match name {
                "schema" => Some(self.ds.info.value_ref()),
                "dataset" => Some(self.ds.dataset_value_ref()),
                _ => None,
            };
        };
        match name {
            "entities" => Some(self.entities()),
            "sidecar" => Some(&self.sidecar_merge().value),
            "associations" => Some(&self.associations().0),
            "columns" => self.columns().as_ref().map(|t| &t.value),
            "json" => self.json().as_ref().map(|j| &j.value),
            "gzip" => Some(&self.gzip().value),
            "nifti_header" => Some(&self.nifti().value),
            "tiff" => Some(&self.tiff().0.value),
            "ome" => Some(&self.tiff().1.value),
            "hed" => Some(self.hed()),
            "dataset" => Some(self.ds.dataset_value_ref()),
            "subject" => subject_of(&f.path).and_then(|s| self.ds.subject_value_ref(s)),
            "schema" => Some(self.ds.info.value_ref()),
            _ => None,
        }
    }

    fn exists(&self, rule: &str, path: &str) -> Option<bool> {
        self.ds.exists_from(self.idx, rule, path)
    }

    fn names(&self) -> Vec<String> {
        CONTEXT_NAMES.iter().map(|s| s.to_string()).collect()
    }
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
    fn lookup(&self, name: &str) -> Value {
        if let Ok(cache) = self.cache.lock() {
            if let Some(v) = cache.get(name) {
                return v.clone();
            }
        }
        let v = self.context().lookup(name);
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(name.to_string(), v.clone());
        }
        v
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
