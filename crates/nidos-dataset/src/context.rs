//! The per-file context that rule expressions read, built lazily: each part (sidecar,
//! associations, columns, headers…) is computed on the first lookup that needs it.
//! Dataset-level parts (`dataset`, `subject`, `schema`) are computed once per dataset.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::sync::Arc;

use indexmap::IndexMap;
use nidos_expr::{Context, Object, Value};

use crate::assoc::Subject;
use crate::dataset::subject_of;
use crate::entry::{DatasetIssue, FileEntry};
use crate::load::sidecar::{merge_sidecars, SidecarMerge, SidecarOverride};
use crate::load::{Dataset, HeaderLoad, JsonLoad, TableLoad};

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
    /// The file's own scalars (`path`, `suffix`, `extension`, `datatype`, `modality`),
    /// made on first lookup: selectors read them many times per file.
    scalars: [OnceCell<Value>; 5],
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
            scalars: Default::default(),
        }
    }
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
    pub fn sidecar_sources(&self) -> &IndexMap<String, String, foldhash::fast::RandomState> {
        &self.sidecar_merge().sources
    }

    /// Keys whose value a deeper sidecar changed (reported as `SIDECAR_FIELD_OVERRIDE`).
    pub fn sidecar_overrides(&self) -> &[SidecarOverride] {
        &self.sidecar_merge().overrides
    }

    /// Scalar `i` of [`FileContext::scalars`], made by `make` on first use.
    fn scalar(&self, i: usize, make: impl FnOnce() -> Value) -> &Value {
        match self.scalars.get(i) {
            Some(cell) => cell.get_or_init(make),
            None => &Value::Null,
        }
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
            let mut o =
                Object::with_capacity_and_hasher(2 * f.name.pairs.len(), Default::default());
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
                crate::assoc::associations(&Subject {
                    ds: self.ds,
                    src: self.idx,
                    ctx: self,
                    context_at: &|i| self.ds.context_at(i),
                })
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
            if !sidecar.applies_to(&table.headers) {
                return Value::Null;
            }
            let cell = |r: usize, c: usize| table.cell(r, c);
            let codes = table.codes();
            let rows = nidos_hed::events::EventsTable {
                header: &table.headers,
                n_rows: table.kept_rows(),
                cell: &cell,
                codes: &codes,
            };
            let strings = nidos_hed::events::assemble_rows(&sidecar, &rows);
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

impl Context for FileContext<'_> {
    /// The parts the context keeps (loaded on first use) are lent; the file's own
    /// scalars are made for the call.
    fn lookup(&self, name: &str) -> Cow<'_, Value> {
        let Some(f) = self.entry() else {
            return match name {
                "schema" => Cow::Borrowed(self.ds.info.value_ref()),
                "dataset" => Cow::Borrowed(self.ds.dataset_value_ref()),
                _ => Cow::Owned(Value::Null),
            };
        };
        let kept = match name {
            "entities" => Some(self.entities()),
            "sidecar" => Some(&self.sidecar_merge().value),
            "associations" => Some(&self.associations().0),
            "columns" => self.columns().as_ref().map(|t| t.value()),
            "json" => self.json().as_ref().map(|j| &j.value),
            "gzip" => Some(&self.gzip().value),
            "nifti_header" => Some(&self.nifti().value),
            "tiff" => Some(&self.tiff().0.value),
            "ome" => Some(&self.tiff().1.value),
            "hed" => Some(self.hed()),
            "dataset" => Some(self.ds.dataset_value_ref()),
            "subject" => subject_of(&f.path).and_then(|s| self.ds.subject_value_ref(s)),
            "schema" => Some(self.ds.info.value_ref()),
            "path" => Some(self.scalar(0, || Value::str(f.path.as_str()))),
            "size" => return Cow::Owned(Value::Number(f.size as f64)),
            "suffix" => Some(self.scalar(1, || {
                f.name
                    .suffix
                    .as_deref()
                    .map(Value::str)
                    .unwrap_or(Value::Null)
            })),
            "extension" => Some(self.scalar(2, || Value::str(f.name.extension.as_str()))),
            "datatype" => Some(self.scalar(3, || {
                f.datatype.as_deref().map(Value::str).unwrap_or(Value::Null)
            })),
            "modality" => Some(self.scalar(4, || {
                f.datatype
                    .as_deref()
                    .and_then(|d| self.ds.info.modalities.get(d))
                    .map(|m| Value::str(m.as_str()))
                    .unwrap_or(Value::Null)
            })),
            _ => None,
        };
        match kept {
            Some(v) => Cow::Borrowed(v),
            None => Cow::Owned(Value::Null),
        }
    }

    /// `columns.NAME` is made from the table alone, not with every other column.
    fn lookup_member(&self, name: &str, key: &str) -> Option<Cow<'_, Value>> {
        if name != "columns" || self.entry().is_none() {
            return None;
        }
        Some(Cow::Owned(match self.columns() {
            Some(t) => t.column_value(key),
            None => Value::Null,
        }))
    }

    fn exists(&self, rule: &str, path: &str) -> Option<bool> {
        self.ds.exists_from(self.idx, rule, path)
    }

    fn names(&self) -> Vec<String> {
        CONTEXT_NAMES.iter().map(|s| s.to_string()).collect()
    }
}
