//! Choosing the schema for a dataset (kept in this one function, as the command line's
//! `schema_arg::load_for_dataset`), with loaded schemas cached for the process.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use nidos_schema::Schema;
use pyo3::PyResult;

use crate::error::value_error;

type Cache = Mutex<HashMap<(Option<String>, Option<String>), Arc<Schema>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The version a dataset declares under the schema's version key.
fn declared_version(dataset: &Path, key: &str) -> Option<String> {
    let text = std::fs::read(dataset.join("dataset_description.json")).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&text).ok()?;
    v.get(key).and_then(|v| v.as_str()).map(str::to_string)
}

fn load(schema: Option<&str>, version: Option<&str>) -> PyResult<Arc<Schema>> {
    let key = (schema.map(str::to_string), version.map(str::to_string));
    if let Ok(c) = cache().lock() {
        if let Some(s) = c.get(&key) {
            return Ok(s.clone());
        }
    }
    let loaded = match (schema, version) {
        (Some(path), v) => nidos_schema::load_path_with(
            Path::new(path),
            &nidos_schema::LoadOptions {
                version: v.map(str::to_string),
                ..Default::default()
            },
        ),
        (None, Some(v)) => Schema::for_version(v),
        (None, None) => Schema::bundled(),
    }
    .map_err(|e| value_error(format!("loading the schema: {e}")))?;
    let loaded = Arc::new(loaded);
    if let Ok(mut c) = cache().lock() {
        c.insert(key, loaded.clone());
    }
    Ok(loaded)
}

/// The schema for `dataset`: the given one (a YAML tree or compiled JSON), else the
/// bundled rules at the requested version, else at the version the dataset declares,
/// else the newest.
pub fn for_dataset(
    dataset: &Path,
    schema: Option<&str>,
    std_version: Option<&str>,
) -> PyResult<Arc<Schema>> {
    if schema.is_some() {
        return load(schema, std_version);
    }
    let newest = load(None, None)?;
    let declared = declared_version(dataset, &newest.brand.version_key);
    let (version, _warning) =
        nidos_schema::select_version(std_version, declared.as_deref(), &newest.supported_versions);
    if version == newest.version {
        Ok(newest)
    } else {
        load(None, Some(&version))
    }
}
