//! `nidos.validate`: the JSON report of a dataset (and of its derivative datasets), from
//! the library's one validation run (`nidos_validate::validate`), as the command line's.

use std::path::PathBuf;

use nidos_schema::Source;
use nidos_validate::{Config, Options, Request, RunError};
use pyo3::prelude::*;

use crate::error::{dataset_error, value_error};

/// Where the rules come from: `schema` (a YAML tree or compiled JSON) or the bundled ones.
fn source(schema: Option<String>) -> PyResult<Source> {
    match schema.map(PathBuf::from) {
        None => Ok(Source::Bundled),
        Some(p) if !p.exists() => Err(value_error(format!(
            "schema {}: no such file or directory (expected a YAML rule tree directory or a \
             compiled schema JSON file)",
            p.display()
        ))),
        Some(p) => Ok(Source::Path(p)),
    }
}

/// Validates `path` and returns the JSON report as text (`config` is the JSON text of a
/// configuration: `{"ignore": [...], "warning": [...], "error": [...]}`).
#[pyfunction]
#[pyo3(signature = (path, schema=None, std_version=None, config=None, recursive=false, ignore_warnings=false))]
pub fn validate_json(
    py: Python<'_>,
    path: PathBuf,
    schema: Option<String>,
    std_version: Option<String>,
    config: Option<String>,
    recursive: bool,
    ignore_warnings: bool,
) -> PyResult<String> {
    py.allow_threads(|| {
        let config = match &config {
            Some(text) => {
                Config::from_json(text).map_err(|e| value_error(format!("config: {e}")))?
            }
            None => Config::default(),
        };
        let request = Request {
            source: source(schema)?,
            std_version,
            options: Options {
                config,
                ignore_warnings,
                max_rows: Some(1000),
                ..Options::default()
            },
            recursive,
            prune: false,
            explain_later: true,
        };
        let done = nidos_validate::validate(&path, &request).map_err(|e| match e {
            RunError::Rules(e) => value_error(format!("loading the schema: {e}")),
            RunError::Open { dir, error } => dataset_error(&dir, error),
            e => value_error(e),
        })?;
        let mut view = done.report.json();
        for (name, r) in &done.derivatives {
            view = view.derivative(name, r);
        }
        serde_json::to_string(&view).map_err(value_error)
    })
}
