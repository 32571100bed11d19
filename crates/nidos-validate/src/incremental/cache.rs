//! The result cache (`nidos validate --cache DIR`): a session's per-file parts, and the
//! reports written from them, kept between runs.
//!
//! One file per dataset in the cache folder (`nidos-<hash of the dataset's path>.cache`,
//! laid out as [`container`] says): an index (the nidos version, the run's key before
//! any rule is loaded, the hash of the dataset's listing, the reports stored), the
//! parts as JSON lines (a header: the key of the rules and options, the dataset's
//! path, hashes of the `dataset` and `subject` objects; then one line per file: its
//! identity, whether it has HED entries, and its part, [`super::pass::FileResult`]),
//! then the stored reports' bytes.
//!
//! A run first lists the dataset ([`Listing`]: one `lstat` per entry, in parallel,
//! nothing parsed) and computes its key from the options and the rules' sources
//! ([`run_key`]: the build, `--schema` or `NIDOS_SCHEMA_DIR` trees by their files'
//! stamps, HED schema folders; the description and the ignore file, which choose the
//! rules, are in the listing). When both equal the stored ones and a report of the
//! asked format is stored, that report is the answer: no rule is loaded and no file
//! read ([`Prepared::stored`]). Otherwise the rules are loaded, each file's identity is
//! compared with its cached one, and the differences (files edited, created, removed)
//! are taken as the changes an incremental session would be told of: the same files
//! are validated again ([`super::affected`]), the others' parts reused.
//!
//! The file is written to a temporary name beside it and renamed (readers never see a
//! partial file); the folder must lie outside the dataset. A file that cannot be read,
//! does not parse, is truncated or was made by another format or version, other rules
//! or other options is ignored (the run validates everything), with a warning.

mod container;
mod listing;

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use nidos_expr::Value;
use nidos_schema::{Schema, Source};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::affected::{folder, Changes};
use super::pass::FileResult;
use super::{has_hed, Session};
use crate::apply::SeenEntry;
use crate::issue::Issue;
use crate::run::{Request, RunError};
pub use container::Output;
pub(crate) use listing::Identity;
pub use listing::Listing;

/// The parts' header format this build reads and writes.
const FORMAT: &str = "nidos-result-cache-parts-2";

#[derive(Serialize, Deserialize)]
struct Header {
    format: String,
    nidos: String,
    /// Rules and options.
    key: u64,
    root: String,
    dataset: u64,
    subjects: Vec<(String, u64)>,
    files: usize,
}

/// One file's line, as written (borrowing the session's part).
#[derive(Serialize)]
struct EntryRef<'a> {
    path: &'a str,
    id: Option<Identity>,
    hed: bool,
    reads: u8,
    used: &'a [String],
    seen: &'a [SeenEntry],
    issues: &'a [Issue],
}

/// One file's line, as read back.
#[derive(Deserialize)]
struct Entry {
    path: String,
    id: Option<Identity>,
    hed: bool,
    reads: u8,
    used: Vec<String>,
    seen: Vec<SeenEntry>,
    issues: Vec<Issue>,
}

/// A stable hash (the same in every run of one build).
fn stable_hash(h: impl Hash) -> u64 {
    let mut s = std::hash::DefaultHasher::new();
    h.hash(&mut s);
    s.finish()
}

/// A hash of a context value.
fn value_hash(v: &Value) -> u64 {
    stable_hash(v.to_json().to_string())
}

/// A hash of the rules and of every option that changes a file's part or the report.
fn key(schema: &Schema, request: &Request) -> u64 {
    let rules = match &request.source {
        // The bundled rules are the build's: brand and version name them.
        Source::Bundled => 0,
        _ => {
            let views = postcard::to_allocvec(&schema.views).unwrap_or_default();
            stable_hash((views, schema.raw.value().to_string()))
        }
    };
    stable_hash((
        rules,
        &schema.brand.name,
        &schema.version,
        &schema.schema_version,
        options_key(request),
        &schema.raised_fields,
    ))
}

/// A hash of every option of `request` that changes a file's part or the report.
fn options_key(request: &Request) -> u64 {
    let o = &request.options;
    stable_hash((
        format!("{:?}", request.source),
        &request.std_version,
        (
            o.ignore_nifti_headers,
            o.max_rows,
            o.ignore_warnings,
            o.skip_hed,
        ),
        format!("{:?}", o.config),
        (
            &o.blacklist_modalities,
            &o.dataset_types,
            &o.hed_schema_dirs,
        ),
        format!("{:?}{:?}", o.only_under, o.only_kinds),
        (request.prune, request.explain_later),
    ))
}

/// The key of a run before any rule is loaded: the cache layout, this build (the
/// running program's stamp: a rebuild may bundle other rules under the same version),
/// the options, and the stamps of every file the rules or the HED schemas may be read
/// from outside the dataset (`--schema`, `NIDOS_SCHEMA_DIR`, `--hed-schema-dir`). The
/// dataset's own rule inputs (its description, its ignore file) are in its listing.
pub fn run_key(request: &Request) -> u64 {
    let build = std::env::current_exe()
        .ok()
        .and_then(|exe| Identity::of(&exe));
    let tree = |p: &Path| {
        let l = Listing::take(p);
        (p.to_path_buf(), l.hash(), l.complete())
    };
    let rules = match &request.source {
        Source::Bundled => nidos_schema::bundled_override().map(|d| tree(&d)),
        Source::Path(p) => Some(tree(p)),
    };
    let hed: Vec<_> = request
        .options
        .hed_schema_dirs
        .iter()
        .map(|d| tree(d))
        .collect();
    stable_hash((
        container::FORMAT,
        FORMAT,
        env!("CARGO_PKG_VERSION"),
        build,
        options_key(request),
        rules,
        hed,
    ))
}

/// The cache file of the dataset at `root` in the folder `dir`.
pub fn cache_file(dir: &Path, root: &Path) -> PathBuf {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    dir.join(format!(
        "nidos-{:016x}.cache",
        stable_hash(root.to_string_lossy().as_ref())
    ))
}

/// Why a cache folder cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("the cache folder {0} lies inside the dataset; choose one outside it")]
    InsideDataset(PathBuf),
    #[error("cannot write the cache {path}: {error}")]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// Fails when the cache folder `dir` is the dataset at `root` or inside it.
pub fn check_folder(dir: &Path, root: &Path) -> Result<(), CacheError> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    // The folder may not exist yet: its nearest existing ancestor decides.
    let mut probe = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    while !probe.exists() {
        match probe.parent() {
            Some(p) => probe = p.to_path_buf(),
            None => break,
        }
    }
    if canon(&probe).starts_with(canon(root)) {
        return Err(CacheError::InsideDataset(dir.to_path_buf()));
    }
    Ok(())
}

/// A cache read back: its header and its entries by path.
struct Loaded {
    header: Header,
    entries: HashMap<String, Entry>,
}

/// Reads the parts (`bytes`, JSON lines) of a cache; `Err` says why they are not used
/// (`Ok(None)`: they are of other rules or options).
fn read_parts(bytes: &[u8], expect_key: u64, root: &str) -> Result<Option<Loaded>, String> {
    let mut lines = bytes.split(|&b| b == b'\n');
    let first = lines.next().ok_or("it is empty")?;
    let header: Header =
        serde_json::from_slice(first).map_err(|_| "its parts do not parse".to_string())?;
    if header.format != FORMAT {
        return Err(format!(
            "its parts are of another format ({:?})",
            header.format
        ));
    }
    if header.nidos != env!("CARGO_PKG_VERSION") {
        return Err(format!("it was made by nidos {}", header.nidos));
    }
    if header.root != root {
        return Err(format!("it is of another dataset ({})", header.root));
    }
    if header.key != expect_key {
        return Ok(None);
    }
    let lines: Vec<&[u8]> = lines.filter(|l| !l.is_empty()).collect();
    let parsed: Result<Vec<Entry>, String> = lines
        .par_iter()
        .with_min_len(256)
        .map(|line| {
            serde_json::from_slice(line).map_err(|e| format!("a line does not parse ({e})"))
        })
        .collect();
    let entries: HashMap<String, Entry> =
        parsed?.into_iter().map(|e| (e.path.clone(), e)).collect();
    if entries.len() != header.files {
        return Err(format!(
            "it is truncated ({} of {} files)",
            entries.len(),
            header.files
        ));
    }
    Ok(Some(Loaded { header, entries }))
}

/// A cached run before its rules are loaded: the dataset listed, the run's key made,
/// the cache file opened (see the module documentation).
pub struct Prepared {
    path: PathBuf,
    run_key: u64,
    listing: Listing,
    opened: Result<Option<container::Opened>, String>,
}

/// A stored report that answers a run over an unchanged dataset.
pub struct Hit {
    /// Whether the report has errors, and the run's warnings.
    pub failed: bool,
    pub warnings: Vec<String>,
    bytes: std::io::Take<std::fs::File>,
}

impl Hit {
    /// Copies the stored report to `out`.
    pub fn copy_to(&mut self, out: &mut impl std::io::Write) -> std::io::Result<u64> {
        std::io::copy(&mut self.bytes, out)
    }
}

/// The parts of a session, ready to be written ([`Session::cache_parts`]).
pub struct Parts(Vec<u8>);

impl Prepared {
    /// Lists the dataset at `root` and opens its cache file in the folder `cache_dir`.
    pub fn new(cache_dir: &Path, root: &Path, request: &Request) -> Prepared {
        let path = cache_file(cache_dir, root);
        let (listing, (run_key, opened)) = rayon::join(
            || Listing::take(root),
            || (run_key(request), container::open(&path)),
        );
        Prepared {
            path,
            run_key,
            listing,
            opened,
        }
    }

    /// The report stored for `emit_key` when nothing it was made from changed: the
    /// run's key and the dataset's listing are the stored ones.
    pub fn stored(&mut self, emit_key: u64) -> Option<Hit> {
        let Ok(Some(opened)) = &self.opened else {
            return None;
        };
        let index = &opened.index;
        if !self.listing.complete()
            || index.run_key != self.run_key
            || index.listing != self.listing.hash()
            || index.nidos != env!("CARGO_PKG_VERSION")
        {
            return None;
        }
        let which = index.outputs.iter().position(|o| o.emit_key == emit_key)?;
        let out = index.outputs[which].clone();
        let Ok(Some(opened)) = std::mem::replace(&mut self.opened, Ok(None)) else {
            return None;
        };
        let bytes = opened.output(which).ok()?;
        Some(Hit {
            failed: out.failed,
            warnings: out.warnings,
            bytes,
        })
    }

    /// The cached parts, when they may be used (`Err`: why not, a warning to show).
    fn take_parts(
        &mut self,
        schema: &Schema,
        request: &Request,
        root: &str,
    ) -> Result<Option<Loaded>, String> {
        let opened = std::mem::replace(&mut self.opened, Ok(None));
        let Some(mut opened) = opened? else {
            return Ok(None);
        };
        if opened.index.nidos != env!("CARGO_PKG_VERSION") {
            return Err(format!("it was made by nidos {}", opened.index.nidos));
        }
        if opened.index.run_key != self.run_key {
            // Other options, rules or build: nothing to reuse, nothing to warn of.
            return Ok(None);
        }
        let bytes = opened.parts()?;
        read_parts(&bytes, key(schema, request), root)
    }

    /// Writes the cache file anew: `parts`, and the report `output` (its bytes) when
    /// given, atomically.
    pub fn save(&self, parts: &Parts, output: Option<(Output, &[u8])>) -> Result<(), CacheError> {
        let fail = |error| CacheError::Write {
            path: self.path.clone(),
            error,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let (outputs, bytes): (Vec<Output>, Vec<&[u8]>) = output.into_iter().unzip();
        let index = container::Index {
            nidos: env!("CARGO_PKG_VERSION").into(),
            run_key: self.run_key,
            listing: self.listing.hash(),
            outputs,
        };
        container::write(&self.path, &index, &parts.0, &bytes).map_err(fail)?;
        // The JSON-lines file of format 1 beside it is of no use any more.
        let _ = std::fs::remove_file(self.path.with_extension("jsonl"));
        Ok(())
    }
}

/// What a run with the cache did.
#[derive(Debug, Default)]
pub struct CacheUse {
    /// Why the cache file was not used, when it was not (a warning to show).
    pub ignored: Option<String>,
    /// Files whose cached part was reused, and files validated.
    pub reused: usize,
    pub validated: usize,
}

impl<'s> Session<'s> {
    /// Validates the dataset at `dir` reusing the parts cached in the folder
    /// `cache_dir` (see the module documentation); [`Session::save_cache`] writes the
    /// cache anew.
    pub fn with_cache(
        schema: &'s Schema,
        dir: &Path,
        request: &Request,
        cache_dir: &Path,
    ) -> Result<(Session<'s>, CacheUse), RunError> {
        let mut prepared = Prepared::new(cache_dir, dir, request);
        Session::with_prepared(schema, dir, request, &mut prepared)
    }

    /// As [`Session::with_cache`], with the dataset listed and the cache file opened
    /// already ([`Prepared::new`]).
    pub fn with_prepared(
        schema: &'s Schema,
        dir: &Path,
        request: &Request,
        prepared: &mut Prepared,
    ) -> Result<(Session<'s>, CacheUse), RunError> {
        let mut session = Session::open(schema, dir, request, Vec::new())?;
        session.start_newest()?;
        let root = root_text(dir);
        let mut used = CacheUse::default();
        let loaded = match prepared.take_parts(schema, request, &root) {
            Ok(l) => l,
            Err(why) => {
                used.ignored = Some(format!(
                    "ignoring the cache {}: {why}",
                    prepared.path.display()
                ));
                None
            }
        };
        let listed = prepared.listing.identities();
        let now: HashMap<String, Option<Identity>> = session
            .ds
            .files()
            .par_iter()
            .map(|f| {
                let id = match listed.get(f.path.as_str()) {
                    Some(id) => Some(*id),
                    None => Identity::of(&dir.join(f.path.trim_start_matches('/'))),
                };
                (f.path.clone(), id)
            })
            .collect();
        drop(listed);
        session.prepare_hed();
        session.snapshot_values();
        match loaded {
            None => {
                let all: Vec<usize> = (0..session.ds.files().len()).collect();
                session.recheck(&all);
                used.validated = all.len();
            }
            Some(loaded) => {
                let again = session.reuse(loaded, &now);
                used.validated = again;
                used.reused = session.ds.files().len() - again;
            }
        }
        session.identities = now;
        session.report = session.assemble();
        Ok((session, used))
    }

    /// Takes the cached parts whose inputs did not change; validates the rest. Answers
    /// how many files were validated.
    fn reuse(&mut self, loaded: Loaded, now: &HashMap<String, Option<Identity>>) -> usize {
        let Loaded { header, entries } = loaded;
        let mut edited: HashSet<&str> = HashSet::new();
        let mut moved: Vec<&str> = Vec::new();
        let mut hed = false;
        for (path, id) in now {
            match entries.get(path) {
                Some(e) if e.id == *id && id.is_some() => {}
                Some(e) => {
                    edited.insert(path);
                    hed |= e.hed;
                }
                None => moved.push(path),
            }
        }
        for path in entries.keys() {
            if !now.contains_key(path) {
                moved.push(path);
            }
        }
        for path in edited.iter().chain(moved.iter()) {
            if path.ends_with(".json") {
                let idx = self.ds.index_of(path);
                hed |= idx.is_none_or(|i| has_hed(&self.ds.json_value(i)));
            }
        }
        let anchors = moved.iter().map(|m| folder(m).to_string()).collect();
        let before: HashMap<&str, u64> = header
            .subjects
            .iter()
            .map(|(s, h)| (s.as_str(), *h))
            .collect();
        let mut subjects = HashSet::new();
        for (s, v) in &self.subject_values {
            if before.get(s.as_str()) != Some(&value_hash(v)) {
                subjects.insert(s.clone());
            }
        }
        for (s, _) in &header.subjects {
            if !self.subject_values.contains_key(s) {
                subjects.insert(s.clone());
            }
        }
        let changes = Changes {
            edited,
            moved,
            anchors,
            dataset: header.dataset != value_hash(&self.dataset_value),
            subjects,
            hed: hed && self.hed.is_some(),
        };
        let mut again = Vec::new();
        let mut records = HashMap::new();
        for (i, f) in self.ds.files().iter().enumerate() {
            let record = entries.get(&f.path).map(|e| FileResult {
                issues: e.issues.clone(),
                used: e.used.clone(),
                seen: e.seen.clone(),
                reads: e.reads,
            });
            if super::affected::touched(f, record.as_ref(), &changes) {
                again.push(i);
            } else if let Some(r) = record {
                records.insert(f.path.clone(), r);
            }
        }
        self.records = records;
        self.recheck(&again);
        again.len()
    }

    /// Writes the cache of this session's parts into the folder `cache_dir`
    /// (atomically: a temporary file renamed over the old one), no report stored.
    pub fn save_cache(&self, cache_dir: &Path) -> Result<(), CacheError> {
        check_folder(cache_dir, &self.root)?;
        let prepared = Prepared::new(cache_dir, &self.root, &self.request);
        prepared.save(&self.cache_parts(), None)
    }

    /// This session's parts as the cache keeps them.
    pub fn cache_parts(&self) -> Parts {
        let header = Header {
            format: FORMAT.into(),
            nidos: env!("CARGO_PKG_VERSION").into(),
            key: key(self.schema, &self.request),
            root: root_text(&self.root),
            dataset: value_hash(&self.dataset_value),
            subjects: {
                let mut s: Vec<(String, u64)> = self
                    .subject_values
                    .iter()
                    .map(|(s, v)| (s.clone(), value_hash(v)))
                    .collect();
                s.sort();
                s
            },
            files: self.records.len(),
        };
        let mut out = serde_json::to_vec(&header).unwrap_or_default();
        out.push(b'\n');
        let lines: Vec<Vec<u8>> = self
            .ds
            .files()
            .par_iter()
            .with_min_len(256)
            .filter_map(|f| {
                let r = self.records.get(&f.path)?;
                let hed = f.name.extension == ".json"
                    && self
                        .ds
                        .index_of(&f.path)
                        .is_some_and(|i| has_hed(&self.ds.json_value(i)));
                let entry = EntryRef {
                    path: &f.path,
                    id: self.identities.get(&f.path).copied().flatten(),
                    hed,
                    reads: r.reads,
                    used: &r.used,
                    seen: &r.seen,
                    issues: &r.issues,
                };
                let mut line = serde_json::to_vec(&entry).ok()?;
                line.push(b'\n');
                Some(line)
            })
            .collect();
        for line in lines {
            out.extend_from_slice(&line);
        }
        Parts(out)
    }
}

/// The dataset's path as the cache names it (canonical when it can be).
fn root_text(root: &Path) -> String {
    std::fs::canonicalize(root)
        .unwrap_or_else(|_| root.to_path_buf())
        .to_string_lossy()
        .into_owned()
}
