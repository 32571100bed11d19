//! The rows of one dataset: its accepted files with entities, names, sizes and merged
//! sidecars (shared between files that inherit the same sidecars).

use std::path::Path;

use indexmap::IndexMap;
use nidos_dataset::query::{query, Query};
use nidos_dataset::OpenOptions;
use nidos_schema::Schema;
use serde_json::{Map, Value};

use crate::roots::{FoundDataset, Status};
use crate::IndexError;

/// One file of a dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct FileRow {
    /// Dataset-relative path (no leading `/`).
    pub path: String,
    /// Short entity key (`sub`) → label, for the schema's entities.
    pub entities: IndexMap<String, String>,
    /// Key → label for key-value pairs of the name that are not schema entities.
    pub extra_entities: IndexMap<String, String>,
    pub datatype: Option<String>,
    pub suffix: Option<String>,
    /// With its leading period; empty when the name has none.
    pub ext: String,
    /// Bytes.
    pub size: u64,
    /// Index into [`DatasetIndex::metadata`].
    pub metadata: usize,
}

/// The index rows of one dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct DatasetIndex {
    pub name: String,
    /// The dataset directory, as given.
    pub root: String,
    pub rows: Vec<FileRow>,
    /// The distinct merged sidecars.
    pub metadata: Vec<Map<String, Value>>,
    /// Whether it could be indexed; when not, `rows` is one row with an empty path.
    pub status: Status,
}

/// Indexes a dataset [`crate::find_roots`] found: its files when its status is ok and
/// listing it succeeds, else one row that says why not (the run goes on).
pub fn index_found(found: &FoundDataset, schema: &Schema, opts: &OpenOptions) -> DatasetIndex {
    let status = match &found.status {
        Status::Ok => match index_dataset(&found.root, &found.name, schema, opts) {
            Ok(set) => return set,
            Err(e) => Status::Unreadable(e.to_string()),
        },
        other => other.clone(),
    };
    DatasetIndex {
        name: found.name.clone(),
        root: found.root.to_string_lossy().into_owned(),
        rows: vec![FileRow {
            path: String::new(),
            entities: IndexMap::new(),
            extra_entities: IndexMap::new(),
            datatype: None,
            suffix: None,
            ext: String::new(),
            size: 0,
            metadata: usize::MAX,
        }],
        metadata: Vec::new(),
        status,
    }
}

/// Lists the accepted files of the dataset at `root` (its nested derivative datasets
/// are not included: index them as datasets of their own).
pub fn index_dataset(
    root: &Path,
    name: &str,
    schema: &Schema,
    opts: &OpenOptions,
) -> Result<DatasetIndex, IndexError> {
    let q = Query {
        with_metadata: true,
        ..Query::default()
    };
    let found = query(root, schema, opts, &q).map_err(|source| IndexError::Query {
        root: root.to_path_buf(),
        source,
    })?;
    let shared = found.metadata.unwrap_or_default();
    let ds = found.datasets.first();
    let mut rows = Vec::with_capacity(found.matches.len());
    for (i, m) in found.matches.into_iter().enumerate() {
        let mut entities = IndexMap::new();
        let mut extra_entities = IndexMap::new();
        for (long, value) in m.entities {
            match schema.entity(&long) {
                Some(e) => entities.insert(e.key.clone(), value),
                None => extra_entities.insert(long, value),
            };
        }
        let size = ds
            .and_then(|d| d.find(&m.path))
            .map(|f| f.size)
            .unwrap_or(0);
        rows.push(FileRow {
            path: m.path,
            entities,
            extra_entities,
            datatype: m.datatype,
            suffix: m.suffix,
            ext: m.extension,
            size,
            metadata: shared.of_match.get(i).copied().unwrap_or(usize::MAX),
        });
    }
    Ok(DatasetIndex {
        name: name.to_string(),
        root: root.to_string_lossy().into_owned(),
        rows,
        metadata: shared.objects,
        status: Status::Ok,
    })
}
