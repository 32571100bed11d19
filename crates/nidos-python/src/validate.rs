//! `nidos.validate`: the JSON report of a dataset (and of its derivative datasets).

use std::path::{Path, PathBuf};

use nidos_validate::{Config, Engine, Options, Report};
use pyo3::prelude::*;

use crate::error::{dataset_error, value_error};
use crate::schema;

/// `derivatives/<name>` directories with their own dataset description, sorted.
fn derivative_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root.join("derivatives"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.join("dataset_description.json").is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn run_one(
    path: &Path,
    schema: Option<&str>,
    std_version: Option<&str>,
    opts: &Options,
) -> PyResult<Report> {
    let schema = schema::for_dataset(path, schema, std_version)?;
    let engine = Engine::new(&schema);
    engine
        .validate(path, opts)
        .map_err(|e| dataset_error(path, e))
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
        let opts = Options {
            config,
            ignore_warnings,
            max_rows: Some(1000),
            ..Options::default()
        };
        let report = run_one(&path, schema.as_deref(), std_version.as_deref(), &opts)?;
        let mut derivatives = Vec::new();
        if recursive {
            for dir in derivative_dirs(&path) {
                let name = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let r = run_one(&dir, schema.as_deref(), std_version.as_deref(), &opts)?;
                derivatives.push((name, r));
            }
        }
        let mut view = report.json();
        for (name, r) in &derivatives {
            view = view.derivative(name, r);
        }
        serde_json::to_string(&view).map_err(value_error)
    })
}
