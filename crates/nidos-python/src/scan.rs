//! The listing behind `nidos.Layout`: every accepted file of a dataset (and of its
//! derivative datasets) with entities, names, size and merged sidecar; and the
//! file-name helpers (`parse_file_entities`, `build_path`).

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;
use nidos_dataset::query::{query, Query};
use nidos_dataset::{OpenOptions, PruneFs};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pyo3::IntoPyObjectExt;
use serde_json::Value;

use crate::error::{dataset_error, value_error};
use crate::schema;

fn description(root: &Path) -> Value {
    std::fs::read(root.join("dataset_description.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

/// One listed file: path relative to its dataset's root, entities by long name,
/// datatype, suffix, extension, size, index of its merged sidecar.
struct Row {
    rel: String,
    entities: IndexMap<String, String>,
    datatype: Option<String>,
    suffix: Option<String>,
    extension: String,
    size: u64,
    meta: Option<usize>,
}

/// One listed dataset (the root one first, then `derivatives/<name>` ones).
struct Listed {
    name: String,
    root: String,
    description: Value,
    rows: Vec<Row>,
    /// The rows are in `natural_cmp` order of their paths (every path is ASCII).
    sorted: bool,
}

/// What [`scan`] lists, before it becomes Python objects.
struct Listing {
    entities: Vec<(String, String, String)>,
    datasets: Vec<Listed>,
    metadata: Vec<serde_json::Map<String, Value>>,
}

/// The order of paths the Python layout keeps (pybids'): the path cut into runs of
/// digits and runs of other characters, text runs compared as text, digit runs by
/// their value (`01` and `1` equal). For ASCII paths only (Python's digits are
/// Unicode's; other paths are sorted on the Python side).
fn natural_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let (mut i, mut j) = (0, 0);
    loop {
        let (ti, tj) = (run(a, i, false), run(b, j, false));
        match a[i..ti].cmp(&b[j..tj]) {
            Ordering::Equal => {}
            other => return other,
        }
        (i, j) = (ti, tj);
        match (i == a.len(), j == b.len()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            (false, false) => {}
        }
        let (ni, nj) = (run(a, i, true), run(b, j, true));
        let strip = |s: &[u8]| {
            let zeros = s.iter().take_while(|&&c| c == b'0').count();
            s[zeros..].to_vec()
        };
        let (x, y) = (strip(&a[i..ni]), strip(&b[j..nj]));
        match x.len().cmp(&y.len()).then_with(|| x.cmp(&y)) {
            Ordering::Equal => {}
            other => return other,
        }
        (i, j) = (ni, nj);
    }
}

/// The end of the run of digits (`digits`) or of other characters starting at `from`.
fn run(s: &[u8], from: usize, digits: bool) -> usize {
    s[from..]
        .iter()
        .position(|c| c.is_ascii_digit() != digits)
        .map_or(s.len(), |n| from + n)
}

fn list(
    root: &Path,
    derivatives: bool,
    schema: Option<&str>,
    std_version: Option<&str>,
) -> PyResult<Listing> {
    let schema = schema::for_layout(root, schema, std_version)?;
    let q = Query {
        derivatives,
        with_metadata: true,
        ..Query::default()
    };
    // Without derivative datasets, the walk need not enter `derivatives/` (nor
    // `sourcedata/`): the rules list no file there (opaque folders).
    let opts = if derivatives {
        OpenOptions::default()
    } else {
        OpenOptions {
            fs: Arc::new(PruneFs::new(root)),
            ..OpenOptions::default()
        }
    };
    let found = query(root, &schema, &opts, &q).map_err(|e| dataset_error(root, e))?;
    let shared = found.metadata.unwrap_or_default();
    let top = found.datasets.first().map(|d| d.root().to_path_buf());
    // Datasets by name ("" for the root one, "derivatives/x" for the others).
    let mut sets: IndexMap<String, Listed> = IndexMap::new();
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
        sets.insert(
            name.clone(),
            Listed {
                name: name.clone(),
                root: ds.root().to_string_lossy().into_owned(),
                description: description(ds.root()),
                rows: Vec::new(),
                sorted: false,
            },
        );
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
        let row = Row {
            rel: rel.to_owned(),
            entities: m.entities,
            datatype: m.datatype,
            suffix: m.suffix,
            extension: m.extension,
            size,
            meta: shared.of_match.get(i).copied(),
        };
        if let Some(set) = sets.get_mut(&m.dataset) {
            set.rows.push(row);
        }
    }
    let mut datasets: Vec<Listed> = sets.into_values().collect();
    for ds in &mut datasets {
        if ds.rows.iter().all(|r| r.rel.is_ascii()) {
            ds.rows
                .sort_by(|a, b| natural_cmp(a.rel.as_bytes(), b.rel.as_bytes()));
            ds.sorted = true;
        }
    }
    Ok(Listing {
        entities: schema
            .entities
            .iter()
            .map(|e| (e.name.clone(), e.key.clone(), e.format.clone()))
            .collect(),
        datasets,
        metadata: shared.objects,
    })
}

/// A JSON value as the Python object `json.loads` would give.
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_bound_py_any(py)?,
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_bound_py_any(py)?,
            (None, Some(u)) => u.into_bound_py_any(py)?,
            _ => n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py)?,
        },
        Value::String(s) => s.into_bound_py_any(py)?,
        Value::Array(items) => {
            let out = PyList::empty(py);
            for x in items {
                out.append(to_py(py, x)?)?;
            }
            out.into_any()
        }
        Value::Object(map) => object_to_py(py, map)?.into_any(),
    })
}

fn object_to_py<'py>(
    py: Python<'py>,
    map: &serde_json::Map<String, Value>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (k, x) in map {
        out.set_item(k, to_py(py, x)?)?;
    }
    Ok(out)
}

fn row_to_py<'py>(py: Python<'py>, row: &Row) -> PyResult<Bound<'py, PyTuple>> {
    let entities = PyDict::new(py);
    for (k, v) in &row.entities {
        entities.set_item(k, v)?;
    }
    PyTuple::new(
        py,
        [
            row.rel.as_str().into_bound_py_any(py)?,
            entities.into_any(),
            row.datatype.as_deref().into_bound_py_any(py)?,
            row.suffix.as_deref().into_bound_py_any(py)?,
            row.extension.as_str().into_bound_py_any(py)?,
            row.size.into_bound_py_any(py)?,
            row.meta.into_bound_py_any(py)?,
        ],
    )
}

/// Lists `root` as Python objects:
/// `{"entities": [(name, key, format), ...], "datasets": [{"name", "root", "description",
/// "files": [(path, {entity: label}, datatype, suffix, extension, size, metadata_id)],
/// "sorted"}], "metadata": [{...}, ...]}`, where `path` is relative to that dataset's
/// root, `metadata_id` indexes `metadata`, and `sorted` says the files are in the
/// layout's natural path order already. With `derivatives`, `derivatives/<name>`
/// datasets follow the root one. The listing runs without the GIL; its objects are made
/// directly (no JSON text in between).
#[pyfunction]
#[pyo3(signature = (root, derivatives=false, schema=None, std_version=None))]
pub fn scan<'py>(
    py: Python<'py>,
    root: PathBuf,
    derivatives: bool,
    schema: Option<String>,
    std_version: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let listing = py.allow_threads(|| {
        list(
            &root,
            derivatives,
            schema.as_deref(),
            std_version.as_deref(),
        )
    })?;
    let out = PyDict::new(py);
    let entities = PyList::empty(py);
    for (name, key, format) in &listing.entities {
        entities.append((name, key, format))?;
    }
    out.set_item("entities", entities)?;
    let datasets = PyList::empty(py);
    for ds in &listing.datasets {
        let d = PyDict::new(py);
        d.set_item("name", &ds.name)?;
        d.set_item("root", &ds.root)?;
        d.set_item("description", to_py(py, &ds.description)?)?;
        let files = PyList::empty(py);
        for row in &ds.rows {
            files.append(row_to_py(py, row)?)?;
        }
        d.set_item("files", files)?;
        d.set_item("sorted", ds.sorted)?;
        datasets.append(d)?;
    }
    out.set_item("datasets", datasets)?;
    let metadata = PyList::empty(py);
    for m in &listing.metadata {
        metadata.append(object_to_py(py, m)?)?;
    }
    out.set_item("metadata", metadata)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::natural_cmp;
    use std::cmp::Ordering::*;

    #[test]
    fn natural_order() {
        for (a, b, want) in [
            ("sub-2/x", "sub-10/x", Less),
            ("sub-01", "sub-1", Equal),
            ("x1", "x-1", Less),
            ("x1y", "x1y2", Less),
            ("a", "a1", Less),
            ("run-010", "run-9", Greater),
            ("B", "a", Less),
            ("", "0", Less),
        ] {
            assert_eq!(natural_cmp(a.as_bytes(), b.as_bytes()), want, "{a} vs {b}");
        }
    }
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
