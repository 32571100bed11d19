//! `nidos.eval` and `nidos.context`: the rule language on one file of a dataset.

use std::path::PathBuf;

use nidos_dataset::{display_json, open_file_context, OpenOptions};
use pyo3::prelude::*;

use crate::error::{dataset_error, value_error};
use crate::schema;

fn open(
    dataset: &std::path::Path,
    file: &str,
    schema_path: Option<&str>,
) -> PyResult<nidos_dataset::OpenedFile> {
    let schema = schema::for_dataset(dataset, schema_path, None)?;
    open_file_context(dataset, file, &schema, &OpenOptions::default())
        .map_err(|e| dataset_error(dataset, e))
}

/// The value of a rule expression in the context of one file, as JSON text.
#[pyfunction]
#[pyo3(signature = (expression, dataset, file, schema=None))]
pub fn eval_json(
    py: Python<'_>,
    expression: String,
    dataset: PathBuf,
    file: String,
    schema: Option<String>,
) -> PyResult<String> {
    py.allow_threads(|| {
        let expr = nidos_expr::parse(&expression)
            .map_err(|e| value_error(format!("cannot parse {expression:?}: {e}")))?;
        let opened = open(&dataset, &file, schema.as_deref())?;
        let value = nidos_expr::eval(&expr, &opened);
        serde_json::to_string(&value.to_json()).map_err(value_error)
    })
}

/// The whole evaluation context of one file (every part loaded), as JSON text.
#[pyfunction]
#[pyo3(signature = (dataset, file, schema=None, full_tree=false))]
pub fn context_json(
    py: Python<'_>,
    dataset: PathBuf,
    file: String,
    schema: Option<String>,
    full_tree: bool,
) -> PyResult<String> {
    py.allow_threads(|| {
        let opened = open(&dataset, &file, schema.as_deref())?;
        let json = display_json(&opened.context(), full_tree);
        serde_json::to_string(&json).map_err(value_error)
    })
}
