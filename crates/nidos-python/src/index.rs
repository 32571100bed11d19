//! `nidos.index`: the Parquet index of datasets or folders of datasets.

use std::path::PathBuf;

use nidos_dataset::OpenOptions;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::value_error;
use crate::schema;

/// The datasets at or under a folder, as `(name, root)` pairs.
#[pyfunction]
pub fn find_roots(path: PathBuf) -> PyResult<Vec<(String, String)>> {
    let found = nidos_index::find_roots(&path).map_err(value_error)?;
    Ok(found
        .into_iter()
        .map(|f| (f.name, f.root.to_string_lossy().into_owned()))
        .collect())
}

/// Indexes every dataset at or under `paths`; writes the Parquet file `output` (and
/// returns `None`) or returns its bytes.
#[pyfunction]
#[pyo3(signature = (paths, output=None, schema=None, std_version=None))]
pub fn index_parquet(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    output: Option<PathBuf>,
    schema: Option<String>,
    std_version: Option<String>,
) -> PyResult<Option<Py<PyBytes>>> {
    let bytes = py.allow_threads(|| -> PyResult<Option<Vec<u8>>> {
        let mut found = Vec::new();
        for p in &paths {
            found.extend(nidos_index::find_roots(p).map_err(value_error)?);
        }
        let mut sets = Vec::with_capacity(found.len());
        let mut first = None;
        for d in &found {
            let s = schema::for_dataset(&d.root, schema.as_deref(), std_version.as_deref())?;
            // A dataset that cannot be indexed is one row whose `status` says why.
            sets.push(nidos_index::index_found(d, &s, &OpenOptions::default()));
            first.get_or_insert(s);
        }
        let Some(columns) = first else {
            return Err(value_error("no dataset to index"));
        };
        let batch = nidos_index::to_record_batch(&sets, &columns).map_err(value_error)?;
        match &output {
            Some(out) => {
                let file = std::fs::File::create(out)
                    .map_err(|e| value_error(format!("{}: {e}", out.display())))?;
                nidos_index::write_parquet(&batch, std::io::BufWriter::new(file))
                    .map_err(value_error)?;
                Ok(None)
            }
            None => {
                let mut buf = Vec::new();
                nidos_index::write_parquet(&batch, &mut buf).map_err(value_error)?;
                Ok(Some(buf))
            }
        }
    })?;
    Ok(bytes.map(|b| PyBytes::new(py, &b).unbind()))
}
