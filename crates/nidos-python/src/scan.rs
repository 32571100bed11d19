//! The listing behind `nidos.Layout`: every accepted file of a dataset (and of its
//! derivative datasets) with entities, names, size and merged sidecar; and the
//! file-name helpers (`parse_file_entities`, `build_path`).

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use nidos_dataset::query::{query, Query};
use nidos_dataset::OpenOptions;
use pyo3::prelude::*;
use serde_json::{json, Value};

use crate::error::{dataset_error, value_error};
use crate::schema;

fn description(root: &Path) -> Value {
    std::fs::read(root.join("dataset_description.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

/// Lists `root` as JSON text:
/// `{"entities": [[name, key, format], ...], "datasets": [{"name", "root", "description",
/// "files": [[path, {entity: label}, datatype, suffix, extension, size, metadata_id]]}],
/// "metadata": [{...}, ...]}`, where `path` is relative to that dataset's root and
/// `metadata_id` indexes `metadata`. With `derivatives`, `derivatives/<name>` datasets
/// follow the root one.
#[pyfunction]
#[pyo3(signature = (root, derivatives=false, schema=None, std_version=None))]
pub fn scan_json(
    py: Python<'_>,
    root: PathBuf,
    derivatives: bool,
    schema: Option<String>,
    std_version: Option<String>,
) -> PyResult<String> {
    py.allow_threads(|| {
        let schema = schema::for_layout(&root, schema.as_deref(), std_version.as_deref())?;
        let q = Query {
            derivatives,
            with_metadata: true,
            ..Query::default()
        };
        let found = query(&root, &schema, &OpenOptions::default(), &q)
            .map_err(|e| dataset_error(&root, e))?;
        let shared = found.metadata.unwrap_or_default();
        let top = found.datasets.first().map(|d| d.root().to_path_buf());
        // Datasets by name ("" for the root one, "derivatives/x" for the others).
        let mut sets: IndexMap<String, (PathBuf, Vec<Value>)> = IndexMap::new();
        let mut by_name = IndexMap::new();
        for ds in &found.datasets {
            let name = match &top {
                Some(t) => ds
                    .root()
                    .strip_prefix(t)
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default(),
                None => String::new(),
            };
            sets.insert(name.clone(), (ds.root().to_path_buf(), Vec::new()));
            by_name.insert(name, ds);
        }
        for (i, m) in found.matches.into_iter().enumerate() {
            let rel = match m.dataset.as_str() {
                "" => m.path.as_str(),
                d => m
                    .path
                    .strip_prefix(d)
                    .map(|r| r.trim_start_matches('/'))
                    .unwrap_or(&m.path),
            };
            let size = by_name
                .get(&m.dataset)
                .and_then(|d| d.find(rel))
                .map(|f| f.size)
                .unwrap_or(0);
            let row = json!([
                rel,
                m.entities,
                m.datatype,
                m.suffix,
                m.extension,
                size,
                shared.of_match.get(i)
            ]);
            if let Some((_, files)) = sets.get_mut(&m.dataset) {
                files.push(row);
            }
        }
        let entities: Vec<Value> = schema
            .entities
            .iter()
            .map(|e| json!([e.name, e.key, e.format]))
            .collect();
        let datasets: Vec<Value> = sets
            .into_iter()
            .map(|(name, (root, files))| {
                json!({
                    "name": name,
                    "root": root.to_string_lossy(),
                    "description": description(&root),
                    "files": files,
                })
            })
            .collect();
        let out = json!({
            "entities": entities,
            "datasets": datasets,
            "metadata": shared.objects,
        });
        serde_json::to_string(&out).map_err(value_error)
    })
}

/// The canonical dataset-relative path of a file from its entities (long or short
/// names), suffix, extension and optional datatype, by the rules of `root`'s schema.
#[pyfunction]
#[pyo3(signature = (root, entities, suffix, extension, datatype=None, schema=None))]
pub fn build_path(
    root: PathBuf,
    entities: Vec<(String, String)>,
    suffix: String,
    extension: String,
    datatype: Option<String>,
    schema: Option<String>,
) -> PyResult<String> {
    let schema = schema::for_layout(&root, schema.as_deref(), None)?;
    let entities: IndexMap<String, String> = entities.into_iter().collect();
    nidos_dataset::query::build_path(&schema, &entities, &suffix, &extension, datatype.as_deref())
        .map_err(value_error)
}

/// A file name's `key-value` pairs (short keys, in name order), suffix and extension.
#[pyfunction]
pub fn parse_name(name: &str) -> (Vec<(String, String)>, Option<String>, String) {
    let parsed = nidos_dataset::parse_name(name, false);
    (parsed.pairs, parsed.suffix, parsed.extension)
}
