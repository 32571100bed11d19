//! The result cache (`nidos validate --cache DIR`): a session's per-file parts kept
//! between runs.
//!
//! One file per dataset in the cache folder (`nidos-<hash of the dataset's path>.jsonl`),
//! JSON lines: a header (format, nidos version, a hash of the rules and the options,
//! the dataset's path, hashes of the `dataset` and `subject` objects), then one line per
//! file: its identity (size, modification time, inode), whether it has HED entries, and
//! its part ([`super::pass::FileResult`]). A later run walks the dataset, compares each
//! file's identity with the cached one, and takes the differences (files edited,
//! created, removed) as the changes an incremental session would be told of: the same
//! files are validated again ([`super::affected`]), the others' parts reused.
//!
//! The file is written to a temporary name beside it and renamed (readers never see a
//! partial file); the folder must lie outside the dataset. A file that cannot be read,
//! does not parse, is truncated or was made by another version, other rules or other
//! options is ignored (the run validates everything), with a warning.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use nidos_expr::Value;
use nidos_schema::{Schema, Source};
use serde::{Deserialize, Serialize};

use super::affected::{folder, Changes};
use super::pass::FileResult;
use super::{has_hed, Session};
use crate::apply::SeenEntry;
use crate::issue::Issue;
use crate::run::{Request, RunError};

/// The cache format this build reads and writes.
const FORMAT: &str = "nidos-result-cache-1";

/// What a file is on disk, as far as the cache tells files apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Identity {
    size: u64,
    mtime_ns: i128,
    inode: u64,
}

impl Identity {
    /// The identity of the file at `path` (what a link points to; the link itself when
    /// it is broken). `None` when it cannot be read.
    pub(crate) fn of(path: &Path) -> Option<Identity> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path)
            .or_else(|_| std::fs::symlink_metadata(path))
            .ok()?;
        Some(Identity {
            size: m.size(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            inode: m.ino(),
        })
    }
}

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

#[derive(Serialize, Deserialize)]
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
    let o = &request.options;
    stable_hash((
        rules,
        &schema.brand.name,
        &schema.version,
        &schema.schema_version,
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
        &schema.raised_fields,
    ))
}

/// The cache file of the dataset at `root` in the folder `dir`.
pub fn cache_file(dir: &Path, root: &Path) -> PathBuf {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    dir.join(format!(
        "nidos-{:016x}.jsonl",
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

/// Reads the cache file at `path`; `Err` says why it is not used (`Ok(None)`: there is
/// none yet).
fn read(path: &Path, expect_key: u64, root: &str) -> Result<Option<Loaded>, String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    let mut lines = std::io::BufReader::new(file).lines();
    let first = lines
        .next()
        .ok_or("it is empty")?
        .map_err(|e| format!("cannot read it: {e}"))?;
    let header: Header =
        serde_json::from_str(&first).map_err(|_| "it is not a nidos result cache".to_string())?;
    if header.format != FORMAT {
        return Err(format!("it is of another format ({:?})", header.format));
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
    let mut entries = HashMap::with_capacity(header.files);
    for line in lines {
        let line = line.map_err(|e| format!("cannot read it: {e}"))?;
        let entry: Entry =
            serde_json::from_str(&line).map_err(|e| format!("a line does not parse ({e})"))?;
        entries.insert(entry.path.clone(), entry);
    }
    if entries.len() != header.files {
        return Err(format!(
            "it is truncated ({} of {} files)",
            entries.len(),
            header.files
        ));
    }
    Ok(Some(Loaded { header, entries }))
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
    /// `cache_dir` (see the module documentation), then writes the cache anew.
    pub fn with_cache(
        schema: &'s Schema,
        dir: &Path,
        request: &Request,
        cache_dir: &Path,
    ) -> Result<(Session<'s>, CacheUse), RunError> {
        let mut session = Session::open(schema, dir, request, Vec::new())?;
        let path = cache_file(cache_dir, dir);
        let root = root_text(dir);
        let key = key(schema, request);
        let mut used = CacheUse::default();
        let loaded = match read(&path, key, &root) {
            Ok(l) => l,
            Err(why) => {
                used.ignored = Some(format!("ignoring the cache {}: {why}", path.display()));
                None
            }
        };
        let now: HashMap<String, Option<Identity>> = session
            .ds
            .files()
            .iter()
            .map(|f| {
                (
                    f.path.clone(),
                    Identity::of(&dir.join(f.path.trim_start_matches('/'))),
                )
            })
            .collect();
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
    /// (atomically: a temporary file renamed over the old one).
    pub fn save_cache(&self, cache_dir: &Path) -> Result<(), CacheError> {
        check_folder(cache_dir, &self.root)?;
        let path = cache_file(cache_dir, &self.root);
        let fail = |error| CacheError::Write {
            path: path.clone(),
            error,
        };
        std::fs::create_dir_all(cache_dir).map_err(fail)?;
        let mut tmp = tempfile::NamedTempFile::new_in(cache_dir).map_err(fail)?;
        {
            let mut out = std::io::BufWriter::new(tmp.as_file_mut());
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
            let line = |out: &mut dyn Write, v: &dyn erased::Line| -> std::io::Result<()> {
                v.write_line(out)
            };
            line(&mut out, &header).map_err(fail)?;
            for f in self.ds.files() {
                let Some(r) = self.records.get(&f.path) else {
                    continue;
                };
                let hed = f.name.extension == ".json"
                    && self
                        .ds
                        .index_of(&f.path)
                        .is_some_and(|i| has_hed(&self.ds.json_value(i)));
                let entry = Entry {
                    path: f.path.clone(),
                    id: self.identities.get(&f.path).copied().flatten(),
                    hed,
                    reads: r.reads,
                    used: r.used.clone(),
                    seen: r.seen.clone(),
                    issues: r.issues.clone(),
                };
                line(&mut out, &entry).map_err(fail)?;
            }
            out.flush().map_err(fail)?;
        }
        tmp.persist(&path).map_err(|e| fail(e.error))?;
        Ok(())
    }
}

/// The dataset's path as the cache names it (canonical when it can be).
fn root_text(root: &Path) -> String {
    std::fs::canonicalize(root)
        .unwrap_or_else(|_| root.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// Serialising one line of the cache, for the header and the entries alike.
mod erased {
    pub(super) trait Line {
        fn write_line(&self, out: &mut dyn std::io::Write) -> std::io::Result<()>;
    }

    impl<T: serde::Serialize> Line for T {
        fn write_line(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
            serde_json::to_writer(&mut *out, self)?;
            out.write_all(b"\n")
        }
    }
}
