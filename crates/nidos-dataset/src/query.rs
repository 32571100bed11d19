//! Querying datasets by entities (building a file's canonical path from its entities is
//! [`crate::build_path`], re-exported here).
//!
//! Which files a query sees is decided by the schema's file rules, the same way the
//! validator identifies files: a file is *accepted* when it is validated (not ignored,
//! not under an opaque directory) and some file rule claims it (its exact path, its
//! stem pattern, or its suffix). Files of nested derivative datasets
//! (`derivatives/<name>/`) are queried as datasets of their own, with the derivative
//! rules, when [`Query::derivatives`] is set.
//!
//! ```ignore
//! use nidos_dataset::query::{query, Query};
//! let schema = nidos_schema::Schema::bundled()?;
//! let mut q = Query::default();
//! q.entity("sub", &["01", "02"]).suffix(&["bold"]).extension(&[".nii*"]);
//! q.with_metadata = true;
//! let mut result = query("ds".as_ref(), &schema, &Default::default(), &q)?;
//! result.attach_metadata();
//! for m in &result.matches {
//!     println!("{} {:?}", m.path, m.metadata.as_ref().and_then(|s| s.get("RepetitionTime")));
//! }
//! ```

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::path::Path;

use globset::{Glob, GlobMatcher};
use indexmap::IndexMap;
use nidos_schema::{FileRule, Schema};
use rayon::prelude::*;

use crate::entry::{DatasetError, FileEntry, OpenOptions};
use crate::inherit::sidecar_chain;
use crate::load::sidecar::merge_chain;
use crate::load::Dataset;

pub use crate::build_path::{build_path, PathError};

/// What to look for. Every list holds alternatives (a file matches one of them); each
/// value is a glob (`0*`, `{rest,nback}`, `.nii*`). An empty list does not filter.
#[derive(Clone, Debug, Default)]
pub struct Query {
    /// Entity (long name `subject` or short key `sub`) → accepted values.
    pub entities: IndexMap<String, Vec<String>>,
    pub datatypes: Vec<String>,
    pub suffixes: Vec<String>,
    /// With or without the leading period (`nii.gz` means `.nii.gz`).
    pub extensions: Vec<String>,
    /// Also query `derivatives/<name>/` datasets (their paths keep the prefix).
    pub derivatives: bool,
    /// Attach the merged (inherited) sidecar of each match.
    pub with_metadata: bool,
}

impl Query {
    /// Adds accepted values of an entity (long or short name).
    pub fn entity(&mut self, name: &str, values: &[&str]) -> &mut Self {
        self.entities
            .entry(name.to_string())
            .or_default()
            .extend(values.iter().map(|v| v.to_string()));
        self
    }
    pub fn datatype(&mut self, values: &[&str]) -> &mut Self {
        self.datatypes.extend(values.iter().map(|v| v.to_string()));
        self
    }
    pub fn suffix(&mut self, values: &[&str]) -> &mut Self {
        self.suffixes.extend(values.iter().map(|v| v.to_string()));
        self
    }
    pub fn extension(&mut self, values: &[&str]) -> &mut Self {
        self.extensions.extend(values.iter().map(|v| v.to_string()));
        self
    }

    /// Resolves entity names against the schema and compiles the globs.
    pub fn compile(&self, schema: &Schema) -> Result<CompiledQuery, QueryError> {
        let mut entities = Vec::new();
        for (name, values) in &self.entities {
            let entity = schema
                .entity(name)
                .or_else(|| schema.entity_by_key(name))
                .ok_or_else(|| QueryError::UnknownEntity(name.clone()))?;
            let mut p = Patterns::new(values, false)?;
            p.numeric = entity.format == "index";
            entities.push((entity.key.clone(), p));
        }
        Ok(CompiledQuery {
            entities,
            datatypes: Patterns::new(&self.datatypes, false)?,
            suffixes: Patterns::new(&self.suffixes, false)?,
            extensions: Patterns::new(&self.extensions, true)?,
        })
    }
}

/// A query whose names are resolved and globs compiled.
#[derive(Clone, Debug)]
pub struct CompiledQuery {
    /// Short key → patterns.
    entities: Vec<(String, Patterns)>,
    datatypes: Patterns,
    suffixes: Patterns,
    extensions: Patterns,
}

impl CompiledQuery {
    /// Whether a file's name and datatype satisfy every filter.
    pub fn matches(&self, f: &FileEntry) -> bool {
        self.entities
            .iter()
            .all(|(key, p)| p.matches_opt(f.name.get(key)))
            && self.datatypes.matches_opt(f.datatype.as_deref())
            && self.suffixes.matches_opt(f.name.suffix.as_deref())
            && self
                .extensions
                .matches_opt(Some(f.name.extension.trim_end_matches('/')))
    }
}

#[derive(Clone, Debug, Default)]
struct Patterns {
    list: Vec<Pattern>,
    /// Index entities: `1` also matches `01`.
    numeric: bool,
}

#[derive(Clone, Debug)]
enum Pattern {
    Exact(String),
    Glob(GlobMatcher),
}

impl Patterns {
    fn new(values: &[String], dotted: bool) -> Result<Self, QueryError> {
        let mut out = Vec::new();
        for v in values {
            let mut v = v.trim_end_matches('/').to_string();
            if dotted && !v.is_empty() && !v.starts_with('.') && !v.starts_with('*') {
                v.insert(0, '.');
            }
            if v.contains(['*', '?', '[', '{']) {
                let glob = Glob::new(&v).map_err(|e| QueryError::BadPattern {
                    pattern: v.clone(),
                    message: e.kind().to_string(),
                })?;
                out.push(Pattern::Glob(glob.compile_matcher()));
            } else {
                out.push(Pattern::Exact(v));
            }
        }
        Ok(Patterns {
            list: out,
            numeric: false,
        })
    }

    /// An empty filter accepts anything; otherwise the value must be present and match.
    fn matches_opt(&self, value: Option<&str>) -> bool {
        if self.list.is_empty() {
            return true;
        }
        let Some(v) = value else { return false };
        let same_number = |e: &str| {
            self.numeric && matches!((e.parse::<u64>(), v.parse::<u64>()), (Ok(a), Ok(b)) if a == b)
        };
        self.list.iter().any(|p| match p {
            Pattern::Exact(e) => e == v || same_number(e),
            Pattern::Glob(g) => g.is_match(v),
        })
    }
}

/// Why a query or path could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("unknown entity {0:?} (not in the schema's entities, by long or short name)")]
    UnknownEntity(String),
    #[error("bad pattern {pattern:?}: {message}")]
    BadPattern { pattern: String, message: String },
    #[error(transparent)]
    Dataset(#[from] DatasetError),
}

/// One file a query matched.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    /// Path relative to the queried root, without a leading `/`
    /// (`derivatives/fmriprep/sub-01/anat/…` for a derivative dataset's file).
    pub path: String,
    /// The dataset the file belongs to, relative to the root (`""` for the root dataset,
    /// `derivatives/fmriprep` for a derivative one).
    pub dataset: String,
    /// Long entity name → label, in the schema's entity order (unknown keys last, as
    /// written).
    pub entities: IndexMap<String, String>,
    pub datatype: Option<String>,
    pub suffix: Option<String>,
    /// With its leading period; empty when the name has none.
    pub extension: String,
    /// The merged sidecar (when asked for).
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Whether a dataset declares itself a derivative (`DatasetType`, else `GeneratedBy`),
/// deciding whether derivative file rules apply, as the validator does.
pub fn is_derivative(ds: &Dataset) -> bool {
    ds.dataset_type() == "derivative"
}

/// Glob match of a core-file stem pattern (`*` any run, `?` one character).
fn stem_glob(pattern: &str, name: &str) -> bool {
    // Runs for every stem rule on every file: no allocation, and a plain stem (most
    // of them) is a string comparison.
    if !pattern.contains(['*', '?']) {
        return pattern == name;
    }
    fn rest_of(s: &str) -> Option<(char, &str)> {
        let mut c = s.chars();
        c.next().map(|first| (first, c.as_str()))
    }
    let mut p = pattern.chars();
    match p.next() {
        None => name.is_empty(),
        Some('*') => {
            let rest = p.as_str();
            name.char_indices()
                .map(|(i, _)| i)
                .chain([name.len()])
                .any(|i| stem_glob(rest, &name[i..]))
        }
        Some('?') => rest_of(name).is_some_and(|(_, n)| stem_glob(p.as_str(), n)),
        Some(c) => rest_of(name).is_some_and(|(first, n)| first == c && stem_glob(p.as_str(), n)),
    }
}

/// Whether a file rule claims a file (by exact path, stem pattern with one of the
/// rule's extensions, or suffix).
pub fn rule_claims(rule: &FileRule, f: &FileEntry) -> bool {
    if let Some(path) = &rule.path {
        if f.path.strip_prefix('/') == Some(path.as_str()) {
            return true;
        }
    }
    let datatype = f.datatype.as_deref().unwrap_or("");
    if let Some(stem) = &rule.stem {
        let name = f.file_name();
        let before_dot = name.split('.').next().unwrap_or(name);
        // A stem rule claims only the extensions it lists (README.doc is not a README).
        if stem_glob(stem, before_dot)
            && (rule.datatypes.is_empty() || rule.datatypes.iter().any(|d| d == datatype))
            && (rule.extensions.is_empty() || rule.extensions.contains(&f.name.extension))
        {
            return true;
        }
    }
    match f.name.suffix.as_deref() {
        Some(s) if !s.is_empty() => rule.suffixes.iter().any(|r| r == s),
        _ => false,
    }
}

/// Whether the schema accepts a file of a dataset: validated, and claimed by a file rule
/// (derivative rules only in a derivative dataset).
pub fn accepts(schema: &Schema, f: &FileEntry, derivative: bool) -> bool {
    f.validated()
        && schema
            .file_rules
            .iter()
            .filter(|r| derivative || r.category != "deriv")
            .any(|r| rule_claims(r, f))
}

/// Indices (into [`Dataset::files`]) of the files the schema accepts.
pub fn accepted(schema: &Schema, ds: &Dataset) -> Vec<usize> {
    let derivative = is_derivative(ds);
    ds.files()
        .iter()
        .enumerate()
        .filter(|(_, f)| accepts(schema, f, derivative))
        .map(|(i, _)| i)
        .collect()
}

/// A file's entities by long name, in the schema's order.
pub fn entities_of(schema: &Schema, f: &FileEntry) -> IndexMap<String, String> {
    let mut out = IndexMap::new();
    for e in &schema.entities {
        if let Some(v) = f.name.get(&e.key) {
            out.insert(e.name.clone(), v.to_string());
        }
    }
    for (k, v) in &f.name.pairs {
        if schema.entity_by_key(k).is_none() {
            out.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    out
}

/// Merged sidecars shared between matches. Files whose inherited sidecars are the same
/// files (the same chain, root first) have the same merged metadata, so each distinct
/// chain is merged and converted once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SharedMetadata {
    /// The distinct merged sidecars, in order of first use by the matches.
    pub objects: Vec<serde_json::Map<String, serde_json::Value>>,
    /// Per match (same order as the matches): its index into `objects`.
    pub of_match: Vec<usize>,
}

/// The merge of a sidecar chain (root first) as JSON: the context's merge
/// ([`crate::load::sidecar::merge_chain`]), so a query's metadata is the `sidecar` rules
/// see.
fn merged_json(ds: &Dataset, chain: &[usize]) -> serde_json::Map<String, serde_json::Value> {
    match merge_chain(ds, chain).value.to_json() {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

/// The files of one opened dataset that the query matches (paths get `prefix`), their
/// metadata (with [`Query::with_metadata`]) appended to `shared`.
fn query_one(
    schema: &Schema,
    ds: &Dataset,
    q: &Query,
    prefix: &str,
    shared: &mut SharedMetadata,
) -> Result<(Vec<Match>, usize), QueryError> {
    let cq = q.compile(schema)?;
    let derivative = is_derivative(ds);
    // A file whose suffix some applicable rule lists is accepted without trying each
    // rule in turn; other files go through `accepts`.
    let claimed_suffixes: HashSet<&str> = schema
        .file_rules
        .iter()
        .filter(|r| derivative || r.category != "deriv")
        .flat_map(|r| r.suffixes.iter().map(String::as_str))
        .collect();
    let mut rejected = 0;
    let mut selected = Vec::new();
    for (i, f) in ds.files().iter().enumerate() {
        if !f.validated() {
            continue;
        }
        let by_suffix = f
            .name
            .suffix
            .as_deref()
            .is_some_and(|s| !s.is_empty() && claimed_suffixes.contains(s));
        if !by_suffix && !accepts(schema, f, derivative) {
            rejected += 1;
            continue;
        }
        if cq.matches(f) {
            selected.push(i);
        }
    }
    let build = |i: usize| {
        let f = &ds.files()[i];
        let rel = f.path.trim_start_matches('/');
        Match {
            path: if prefix.is_empty() {
                rel.to_string()
            } else {
                format!("{prefix}/{rel}")
            },
            dataset: prefix.to_string(),
            entities: entities_of(schema, f),
            datatype: f.datatype.clone(),
            suffix: f.name.suffix.clone(),
            extension: f.name.extension.clone(),
            metadata: None,
        }
    };
    if !q.with_metadata {
        return Ok((selected.into_iter().map(build).collect(), rejected));
    }
    // Finding each file's sidecar chain is the per-file work: spread it over the cores.
    let built: Vec<(Match, Vec<usize>)> = selected
        .par_iter()
        .with_min_len(256)
        .map(|&i| (build(i), sidecar_chain(ds, i).0))
        .collect();
    let mut ids: HashMap<Vec<usize>, usize> = HashMap::new();
    let mut chains: Vec<Vec<usize>> = Vec::new();
    let base = shared.objects.len();
    let mut matches = Vec::with_capacity(built.len());
    for (m, chain) in built {
        let next = base + chains.len();
        let id = match ids.get(&chain) {
            Some(&id) => id,
            None => {
                chains.push(chain.clone());
                ids.insert(chain, next);
                next
            }
        };
        shared.of_match.push(id);
        matches.push(m);
    }
    let objects: Vec<serde_json::Map<String, serde_json::Value>> = chains
        .par_iter()
        .map(|chain| merged_json(ds, chain))
        .collect();
    shared.objects.extend(objects);
    Ok((matches, rejected))
}

/// The answer to a query over a dataset tree.
#[derive(Debug, Default)]
pub struct QueryResult {
    /// The files matched: the root dataset's in path order, then each derivative
    /// dataset's. Their `metadata` is `None` until [`QueryResult::attach_metadata`].
    pub matches: Vec<Match>,
    /// Files the schema's file rules do not accept (not listed; the validator reports
    /// them as `NOT_INCLUDED`).
    pub rejected: usize,
    /// Files under derivative datasets that were not queried (`derivatives` unset).
    pub derivative_files: usize,
    /// With [`Query::with_metadata`]: the matches' merged sidecars, each distinct one
    /// once (cheaper than a copy per match for large listings).
    pub metadata: Option<SharedMetadata>,
    /// The datasets opened to answer (the root first, then derivative datasets), kept so
    /// a caller can look up more about the matches; a command-line caller about to exit
    /// may skip freeing them (`std::mem::forget`).
    pub datasets: Vec<Dataset>,
}

impl QueryResult {
    /// Gives each match its own copy of its merged sidecar (with
    /// [`Query::with_metadata`]; otherwise nothing changes).
    pub fn attach_metadata(&mut self) {
        let Some(shared) = &self.metadata else {
            return;
        };
        for (m, &id) in self.matches.iter_mut().zip(&shared.of_match) {
            m.metadata = Some(shared.objects.get(id).cloned().unwrap_or_default());
        }
    }
}

/// Opens the dataset at `root` and answers `q` (and over its derivative datasets when
/// `q.derivatives` is set): the one entry point of queries.
pub fn query(
    root: &Path,
    schema: &Schema,
    opts: &OpenOptions,
    q: &Query,
) -> Result<QueryResult, QueryError> {
    query_by(root, schema, opts, q, |_| None)
}

/// [`query`], each derivative dataset read by the rules `rules_of(its root)` gives (the
/// rules of the version its own description declares: [`crate::rules_for`]), `schema`
/// when it gives none.
pub fn query_by<F>(
    root: &Path,
    schema: &Schema,
    opts: &OpenOptions,
    q: &Query,
    rules_of: F,
) -> Result<QueryResult, QueryError>
where
    F: Fn(&Path) -> Option<Schema>,
{
    q.compile(schema)?;
    let ds = Dataset::open(root, schema, opts)?;
    let mut shared = SharedMetadata::default();
    let (mut matches, mut rejected) = query_one(schema, &ds, q, "", &mut shared)?;
    let derivs = ds.derivative_datasets();
    let mut derivative_files = 0;
    let mut subs = Vec::new();
    if q.derivatives {
        for d in &derivs {
            let dir = ds.root().join(d);
            let own = rules_of(&dir);
            let rules = own.as_ref().unwrap_or(schema);
            let sub = Dataset::open(&dir, rules, opts)?;
            let (m, r) = query_one(rules, &sub, q, d, &mut shared)?;
            matches.extend(m);
            rejected += r;
            subs.push(sub);
        }
    } else {
        derivative_files = ds
            .files()
            .iter()
            .filter(|f| {
                derivs.iter().any(|d| {
                    f.path
                        .strip_prefix('/')
                        .and_then(|p| p.strip_prefix(d.as_str()))
                        .is_some_and(|rest| rest.starts_with('/'))
                })
            })
            .count();
    }
    Ok(QueryResult {
        matches,
        rejected,
        derivative_files,
        metadata: q.with_metadata.then_some(shared),
        datasets: std::iter::once(ds).chain(subs).collect(),
    })
}

/// Orders labels numerically when both are integers, else lexically.
pub fn label_cmp(a: &str, b: &str) -> Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y).then_with(|| a.cmp(b)),
        _ => a.cmp(b),
    }
}

/// The values each entity takes over the accepted files, by long name in the schema's
/// entity order; values sorted (numbers numerically), without duplicates.
pub fn entity_values(schema: &Schema, ds: &Dataset) -> IndexMap<String, Vec<String>> {
    let mut out: IndexMap<String, Vec<String>> = IndexMap::new();
    let derivative = is_derivative(ds);
    let files: Vec<&FileEntry> = ds
        .files()
        .iter()
        .filter(|f| accepts(schema, f, derivative))
        .collect();
    for e in &schema.entities {
        let mut vals: Vec<String> = files
            .iter()
            .filter_map(|f| f.name.get(&e.key))
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .collect();
        if vals.is_empty() {
            continue;
        }
        vals.sort_by(|a, b| label_cmp(a, b));
        vals.dedup();
        out.insert(e.name.clone(), vals);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_order() {
        let mut v = vec!["10", "2", "a", "1"];
        v.sort_by(|a, b| label_cmp(a, b));
        assert_eq!(v, ["1", "2", "10", "a"]);
    }

    #[test]
    fn stems() {
        assert!(stem_glob("README", "README"));
        assert!(stem_glob("*", "x"));
        assert!(!stem_glob("LICENSE", "README"));
        for (pattern, name, want) in [
            ("*", "", true),
            ("sub-*_sessions", "sub-01_sessions", true),
            ("sub-*_sessions", "sub-01_scans", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("a?c", "aéc", true),
            ("*é", "xxé", true),
            ("*x*", "abc", false),
            ("README", "READM", false),
        ] {
            assert_eq!(stem_glob(pattern, name), want, "{pattern} on {name}");
        }
    }
}
