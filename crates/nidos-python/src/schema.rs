//! Choosing the schema for a dataset: `nidos_dataset::rules_for`, the choice the
//! validation run and the command line make (brand from the description's version key
//! or what the dataset shows, the declared version read as a person means it), with
//! loaded schemas cached for the process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use nidos_schema::{Schema, Source};
use pyo3::PyResult;

use crate::error::value_error;

/// (schema path, requested version, what picks brand and version: [`version_keys`]).
type Key = (Option<String>, Option<String>, Vec<(String, String)>);
type Cache = Mutex<HashMap<Key, Arc<Schema>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// What picks brand and version for a dataset: its description's top-level `...Version`
/// strings (the whole description when it has none: its URIs can show the brand) and
/// the ignore files at its root (`nidos_dataset::rules_for` reads the brand from them
/// when the description declares none).
fn version_keys(dataset: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    if let Some(serde_json::Value::Object(obj)) = nidos_dataset::read_description(dataset) {
        out.extend(
            obj.iter()
                .filter(|(k, _)| k.ends_with("Version"))
                .map(|(k, v)| (k.clone(), v.to_string())),
        );
        if out.is_empty() {
            out.push((
                "(description)".to_owned(),
                serde_json::Value::Object(obj).to_string(),
            ));
        }
    }
    if let Ok(entries) = std::fs::read_dir(dataset) {
        out.extend(entries.flatten().filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name.starts_with('.') && name.ends_with("ignore"))
                .then(|| ("(root file)".to_owned(), name))
        }));
    }
    out.sort();
    out
}

/// The schema for `dataset`: the given one (a YAML tree or compiled JSON) or the bundled
/// rules, for the brand the dataset's description selects, at `std_version` or the
/// version the dataset declares (else the newest).
pub fn for_dataset(
    dataset: &Path,
    schema: Option<&str>,
    std_version: Option<&str>,
) -> PyResult<Arc<Schema>> {
    let key: Key = (
        schema.map(str::to_string),
        std_version.map(str::to_string),
        version_keys(dataset),
    );
    if let Ok(c) = cache().lock() {
        if let Some(s) = c.get(&key) {
            return Ok(s.clone());
        }
    }
    let source = match schema {
        Some(p) => {
            let p = PathBuf::from(p);
            if !p.exists() {
                return Err(value_error(format!(
                    "schema {}: no such file or directory (expected a YAML rule tree \
                     directory or a compiled schema JSON file)",
                    p.display()
                )));
            }
            Source::Path(p)
        }
        None => Source::Bundled,
    };
    // The choice a validation run makes, so a layout lists the files by the rules of
    // the version the dataset declares, as validation reads it.
    let chosen = nidos_dataset::rules_for(&source, dataset, std_version)
        .map_err(|e| value_error(format!("loading the schema: {e}")))?;
    let loaded = Arc::new(chosen.schema);
    if let Ok(mut c) = cache().lock() {
        c.insert(key, loaded.clone());
    }
    Ok(loaded)
}

/// The schema a pybids-style layout lists `dataset` with: with `std_version`, that
/// version's rules; else the rules of the version the dataset declares plus what any
/// later version defines (the union of the versions from the declared one on:
/// `LoadOptions::and_later`). Nothing the declared version defines is dropped, and
/// pybids, which lists every file its configuration knows whatever the declared
/// version, lists nothing more (docs/divergences.md). Validation, `nidos ls` and
/// `nidos index` keep the declared version alone. A compiled JSON schema holds one
/// version and is used as it is.
pub fn for_layout(
    dataset: &Path,
    schema: Option<&str>,
    std_version: Option<&str>,
) -> PyResult<Arc<Schema>> {
    let chosen = for_dataset(dataset, schema, std_version)?;
    if std_version.is_some() {
        return Ok(chosen);
    }
    let tree = schema.map(PathBuf::from);
    if tree.as_ref().is_some_and(|p| !p.is_dir()) {
        return Ok(chosen);
    }
    let key: Key = (
        schema.map(|s| format!("{s} (and later)")),
        Some(format!("{} and later", chosen.version)),
        version_keys(dataset),
    );
    if let Ok(c) = cache().lock() {
        if let Some(s) = c.get(&key) {
            return Ok(s.clone());
        }
    }
    let opts = nidos_schema::LoadOptions {
        version: Some(chosen.version.clone()),
        brand: Some(chosen.brand.name.clone()),
        and_later: true,
        ..nidos_schema::LoadOptions::default()
    };
    let loaded = match &tree {
        Some(dir) => nidos_schema::load_path_with(dir, &opts),
        None => nidos_schema::load_bundled(&opts),
    }
    .map_err(|e| value_error(format!("loading the schema: {e}")))?;
    let loaded = Arc::new(loaded);
    if let Ok(mut c) = cache().lock() {
        c.insert(key, loaded.clone());
    }
    Ok(loaded)
}
