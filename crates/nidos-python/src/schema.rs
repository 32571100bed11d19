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

/// Where the rules come from: the given YAML tree or compiled JSON, else the bundled
/// rules.
fn source_of(schema: Option<&str>) -> PyResult<Source> {
    match schema {
        Some(p) => {
            let p = PathBuf::from(p);
            if !p.exists() {
                return Err(value_error(format!(
                    "schema {}: no such file or directory (expected a YAML rule tree \
                     directory or a compiled schema JSON file)",
                    p.display()
                )));
            }
            Ok(Source::Path(p))
        }
        None => Ok(Source::Bundled),
    }
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
    let source = source_of(schema)?;
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
/// later version defines (`nidos_schema::load_for_dir_listing`; the bundled rules serve
/// it precompiled, so one decode). Nothing the declared version defines is dropped, and
/// pybids, which lists every file its configuration knows whatever the declared
/// version, lists nothing more (docs/divergences.md). Validation, `nidos ls` and
/// `nidos index` keep the declared version alone. A compiled JSON schema holds one
/// version and is used as it is.
pub fn for_layout(
    dataset: &Path,
    schema: Option<&str>,
    std_version: Option<&str>,
) -> PyResult<Arc<Schema>> {
    if std_version.is_some() {
        return for_dataset(dataset, schema, std_version);
    }
    let key: Key = (
        schema.map(|s| format!("{s} (listing)")),
        Some("(declared, and later)".to_owned()),
        version_keys(dataset),
    );
    if let Ok(c) = cache().lock() {
        if let Some(s) = c.get(&key) {
            return Ok(s.clone());
        }
    }
    let source = source_of(schema)?;
    let chosen = nidos_schema::load_for_dir_listing(
        &source,
        dataset,
        nidos_dataset::read_description(dataset),
        None,
    )
    .map_err(|e| value_error(format!("loading the schema: {e}")))?;
    let loaded = Arc::new(chosen.schema);
    if let Ok(mut c) = cache().lock() {
        c.insert(key, loaded.clone());
    }
    Ok(loaded)
}
