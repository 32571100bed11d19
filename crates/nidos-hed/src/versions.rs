//! Which schemas a dataset uses: the bundled schema files, a user's extra directory, and the
//! reading of a `HEDVersion` value (`"8.4.0"`, `["8.4.0", "sc:score_1.0.0"]`) into one schema
//! per namespace prefix.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use foldhash::HashMap;

use crate::data::SchemaData;
use crate::issue::HedIssue;
use crate::schema::HedSchema;

/// The precompiled bytes `build.rs` wrote for each named schema file, by file stem.
macro_rules! precompiled {
    ($($stem:literal),* $(,)?) => {
        &[$(($stem, include_bytes!(concat!(env!("OUT_DIR"), "/", $stem, ".bin")))),*]
    };
}

/// Schema files carried in the binary, by file stem: the bundled schemas, precompiled by
/// `build.rs` from `schemas/*.json.gz` (see [`crate::compact`]).
const BUNDLED: &[(&str, &[u8])] = precompiled!(
    "HED8.1.0",
    "HED8.2.0",
    "HED8.3.0",
    "HED8.4.0",
    "HED_score_1.0.0",
    "HED_score_2.1.0",
    "HED_testlib_1.0.2",
);

/// The bundled schemas by file stem, as precompiled bytes ([`crate::compact::decode`]).
pub fn bundled() -> &'static [(&'static str, &'static [u8])] {
    BUNDLED
}

/// Versions without a bundled file that are served by a bundled one. 8.0.0 is the first 8.x
/// release; 8.1.0 kept its vocabulary and only added to it, so every 8.0.0 tag resolves the same
/// way in 8.1.0 (tags added in 8.1.0 are accepted although 8.0.0 lacks them).
const STAND_INS: &[(&str, &str)] = &[("HED8.0.0", "HED8.1.0")];

/// The schemas of one dataset: one per namespace prefix (`""` for unprefixed tags).
#[derive(Debug, Clone, Default)]
pub struct HedSchemas {
    pub by_prefix: HashMap<String, Arc<HedSchema>>,
}

impl HedSchemas {
    pub fn get(&self, prefix: &str) -> Option<&HedSchema> {
        self.by_prefix.get(prefix).map(|s| s.as_ref())
    }

    /// The schema of unprefixed tags, or any one if all are prefixed (for reserved tags).
    pub fn base(&self) -> Option<&HedSchema> {
        self.get("")
            .or_else(|| self.by_prefix.values().next().map(|s| s.as_ref()))
    }
}

/// Where schemas come from: the bundled ones, then the user's directories.
#[derive(Debug, Clone, Default)]
pub struct SchemaSource {
    pub extra_dirs: Vec<PathBuf>,
}

/// A bundled schema, decoded at most once per process: threads that ask for it while it is
/// being decoded wait for that decoding.
type Decoded = Arc<OnceLock<Result<Arc<HedSchema>, String>>>;

fn cache() -> &'static Mutex<HashMap<String, Decoded>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Decoded>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::default()))
}

impl SchemaSource {
    pub fn new(extra_dirs: Vec<PathBuf>) -> Self {
        SchemaSource { extra_dirs }
    }

    /// Loads the schema file with this stem (`HED8.4.0`, `HED_score_1.0.0`).
    pub fn load(&self, stem: &str) -> Result<Arc<HedSchema>, String> {
        for dir in &self.extra_dirs {
            if let Some(schema) = load_from_dir(dir, stem)? {
                return Ok(Arc::new(schema));
            }
        }
        let key = STAND_INS
            .iter()
            .find(|(v, _)| *v == stem)
            .map_or(stem, |(_, s)| *s);
        let Some(bytes) = BUNDLED
            .iter()
            .find(|(name, _)| *name == key)
            .map(|(_, b)| *b)
        else {
            return Err(format!("no HED schema {stem} is available offline"));
        };
        let decode = || {
            let data = crate::compact::decode(bytes)?;
            HedSchema::from_data(data).map(Arc::new)
        };
        match cache().lock() {
            Ok(mut guard) => {
                let cell = guard.entry(key.to_string()).or_default().clone();
                drop(guard);
                cell.get_or_init(decode).clone()
            }
            Err(_) => decode(),
        }
    }

    /// Decodes the bundled schemas a `HEDVersion` value names, so that a later
    /// [`SchemaSource::load_versions`] finds them ready (a run starts this on a thread of its
    /// own while it loads its rules). Problems are left for that later call to report.
    pub fn prefetch(spec: &serde_json::Value) {
        let _ = SchemaSource::default().load_versions(spec);
    }

    /// Reads a `HEDVersion` value. A failure is the one dataset-level issue the reference gives
    /// (`SCHEMA_LOAD_FAILED`), after which nothing else is checked.
    pub fn load_versions(&self, spec: &serde_json::Value) -> Result<HedSchemas, HedIssue> {
        let entries: Vec<&str> = match spec {
            serde_json::Value::String(s) => vec![s.as_str()],
            serde_json::Value::Array(a) => {
                let mut out = Vec::new();
                for v in a {
                    match v.as_str() {
                        Some(s) => out.push(s),
                        None => {
                            return Err(load_failed(format!(
                                "HEDVersion entry {v} is not a string"
                            )))
                        }
                    }
                }
                out
            }
            other => {
                return Err(load_failed(format!(
                    "HEDVersion {other} is neither a string nor a list"
                )))
            }
        };
        if entries.is_empty() {
            return Err(load_failed("HEDVersion names no schema".to_string()));
        }
        let mut groups: HashMap<String, Vec<Arc<HedSchema>>> = HashMap::default();
        for entry in entries {
            let (prefix, rest) = match entry.split_once(':') {
                Some((p, r)) => (p.trim(), r.trim()),
                None => ("", entry.trim()),
            };
            if !prefix.chars().all(|c| c.is_ascii_alphabetic()) {
                return Err(load_failed(format!(
                    "HEDVersion entry \"{entry}\" has an invalid prefix"
                )));
            }
            let (library, version) = match rest.rsplit_once('_') {
                Some((l, v)) => (l, v),
                None => ("", rest),
            };
            if !is_semver(version) || !library.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(load_failed(format!(
                    "HEDVersion entry \"{entry}\" is not a schema version"
                )));
            }
            let stem = if library.is_empty() {
                format!("HED{version}")
            } else {
                format!("HED_{library}_{version}")
            };
            let schema = self
                .load(&stem)
                .map_err(|e| load_failed(format!("could not load HED schema \"{entry}\": {e}")))?;
            groups.entry(prefix.to_string()).or_default().push(schema);
        }
        let mut out = HedSchemas::default();
        for (prefix, list) in groups {
            let merged = merge_group(list).map_err(load_failed)?;
            out.by_prefix.insert(prefix, merged);
        }
        Ok(out)
    }
}

fn load_failed(message: String) -> HedIssue {
    HedIssue::error("SCHEMA_LOAD_FAILED", message)
}

fn is_semver(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// Several schemas under one prefix: a standard schema and merged libraries partnered with it
/// collapse into the richest one; anything else cannot be combined.
fn merge_group(list: Vec<Arc<HedSchema>>) -> Result<Arc<HedSchema>, String> {
    if list.len() == 1 {
        return list.into_iter().next().ok_or_else(String::new);
    }
    let standard: Vec<&str> = list
        .iter()
        .map(|s| {
            if s.library.is_empty() {
                s.version.as_str()
            } else {
                s.with_standard.as_str()
            }
        })
        .collect();
    if standard.iter().any(|v| v.is_empty() || *v != standard[0]) {
        return Err(
            "the schemas under one prefix are not partnered with the same standard version".into(),
        );
    }
    let libraries: Vec<&Arc<HedSchema>> = list.iter().filter(|s| !s.library.is_empty()).collect();
    match libraries.len() {
        0 => list.into_iter().next().ok_or_else(String::new),
        1 => Ok(libraries[0].clone()),
        _ => {
            // Two libraries merged onto one standard: the union of their trees.
            let mut merged = (*libraries[0].clone()).clone();
            for lib in &libraries[1..] {
                merged = union(&merged, lib)?;
            }
            Ok(Arc::new(merged))
        }
    }
}

fn union(a: &HedSchema, b: &HedSchema) -> Result<HedSchema, String> {
    let mut out = a.clone();
    for (i, tag) in b.tags.iter().enumerate() {
        if tag.name == "#" || a.lookup(&tag.name).is_some() {
            continue;
        }
        let parent = match tag.parent {
            Some(p) => Some(
                out.lookup(&b.tags[p].name)
                    .ok_or("merged libraries disagree")?,
            ),
            None => None,
        };
        let index = out.tags.len();
        let mut copy = tag.clone();
        copy.parent = parent;
        copy.children = HashMap::default();
        out.tags.push(copy);
        if let Some(p) = parent {
            out.tags[p].children.insert(tag.name.to_lowercase(), index);
        }
        out.by_name.insert(tag.name.to_lowercase(), index);
        if let Some(v) = b.tags[i].value_child() {
            let mut vc = b.tags[v].clone();
            vc.parent = Some(index);
            out.tags.push(vc);
            let vi = out.tags.len() - 1;
            out.tags[index].children.insert("#".into(), vi);
        }
    }
    for (k, v) in &b.unit_classes {
        out.unit_classes
            .entry(k.clone())
            .or_insert_with(|| v.clone());
    }
    Ok(out)
}

/// Reads `<stem>.xml`, `<stem>.json` or `<stem>.json.gz` from `dir`, if present.
fn load_from_dir(dir: &Path, stem: &str) -> Result<Option<HedSchema>, String> {
    for ext in ["json.gz", "json", "xml"] {
        let path = dir.join(format!("{stem}.{ext}"));
        if !path.is_file() {
            continue;
        }
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let data = if ext == "xml" {
            let text =
                String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8", path.display()))?;
            crate::xml::import_xml(&text).map_err(|e| format!("{}: {e}", path.display()))?
        } else {
            SchemaData::from_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))?
        };
        return HedSchema::from_data(data).map(Some);
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A schema asked for by a prefetch and by loads on other threads at once is decoded
    /// once: every caller gets the same copy.
    #[test]
    fn a_bundled_schema_is_decoded_once() {
        let spec = serde_json::json!("8.3.0");
        let loads: Vec<Arc<HedSchema>> = std::thread::scope(|s| {
            let prefetch = s.spawn(|| SchemaSource::prefetch(&spec));
            let loaders: Vec<_> = (0..3)
                .map(|_| s.spawn(|| SchemaSource::default().load("HED8.3.0")))
                .collect();
            let _ = prefetch.join();
            loaders
                .into_iter()
                .filter_map(|h| h.join().ok().and_then(Result::ok))
                .collect()
        });
        assert_eq!(loads.len(), 3);
        let after = SchemaSource::default().load("HED8.3.0");
        assert!(after.is_ok_and(|a| loads.iter().all(|l| Arc::ptr_eq(l, &a))));
    }
}
