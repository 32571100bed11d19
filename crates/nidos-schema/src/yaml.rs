//! The YAML rule-tree loader and `$ref` resolution.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::dir_entries::visible_entries;
use crate::error::{ErrorKind, SchemaError, SchemaErrors};

/// Where the parts of a YAML tree came from, and its version file.
#[derive(Clone, Debug, Default)]
pub struct TreeInfo {
    pub root: PathBuf,
    /// Dotted key prefix (`rules.checks.asl`) → file that defines it.
    pub files: Vec<(String, PathBuf)>,
    /// `version` from `version.yaml`.
    pub version: String,
    /// `schema_version` from `version.yaml`.
    pub schema_version: Option<String>,
    /// `supported` from `version.yaml` (defaults to `[version]`), newest first.
    pub supported: Vec<String>,
}

impl TreeInfo {
    /// The file that defines a dotted key (longest matching prefix).
    pub fn file_for(&self, key: &str) -> Option<&Path> {
        let mut best: Option<(&str, &Path)> = None;
        for (prefix, file) in &self.files {
            let hit = key == prefix
                || (key.starts_with(prefix.as_str())
                    && matches!(key.as_bytes().get(prefix.len()), Some(b'.') | Some(b'[')));
            if hit && best.is_none_or(|(b, _)| prefix.len() > b.len()) {
                best = Some((prefix, file));
            }
        }
        best.map(|(_, f)| f)
    }

    /// Fills in the file of every error that has none.
    pub fn locate(&self, errs: SchemaErrors) -> SchemaErrors {
        SchemaErrors(
            errs.0
                .into_iter()
                .map(|e| {
                    let f = self.file_for(&e.key).map(Path::to_path_buf);
                    e.in_file(f)
                })
                .collect(),
        )
    }
}

/// Top-level directories of a tree; each becomes the key of the same name.
const TREE_DIRS: &[&str] = &["objects", "rules", "meta"];
/// The version file at the root of a tree.
pub const VERSION_FILE: &str = "version.yaml";

pub(crate) fn parse_yaml(text: &str, file: &Path) -> Result<Value, SchemaError> {
    let opts = serde_saphyr::options! { strict_booleans: true };
    serde_saphyr::from_str_with_options::<Value>(text, opts).map_err(|e| {
        SchemaError::new(ErrorKind::Yaml, "", format!("invalid YAML: {e}"))
            .in_file(Some(file.to_owned()))
    })
}

fn read(file: &Path) -> Result<String, SchemaError> {
    std::fs::read_to_string(file).map_err(|e| {
        SchemaError::new(ErrorKind::Io, "", format!("cannot read: {e}"))
            .in_file(Some(file.to_owned()))
    })
}

fn is_yaml(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
}

/// Reads a directory into a mapping: `x.yaml` → key `x`, a sub-directory `d/` → key `d`.
fn read_dir_tree(
    dir: &Path,
    prefix: &str,
    info: &mut TreeInfo,
    errors: &mut Vec<SchemaError>,
) -> Map<String, Value> {
    let mut out = Map::new();
    let entries = match visible_entries(dir) {
        Ok(entries) => entries,
        Err(e) => {
            errors.push(
                SchemaError::new(ErrorKind::Io, prefix, format!("cannot read directory: {e}"))
                    .in_file(Some(dir.to_owned())),
            );
            return out;
        }
    };
    for (name, p) in entries {
        let (key, value) = if p.is_dir() {
            let key = format!("{prefix}.{name}");
            info.files.push((key.clone(), p.clone()));
            (name, Value::Object(read_dir_tree(&p, &key, info, errors)))
        } else if is_yaml(&p) {
            let stem = p
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_owned();
            let key = format!("{prefix}.{stem}");
            info.files.push((key, p.clone()));
            let v = match read(&p).and_then(|t| parse_yaml(&t, &p)) {
                Ok(v) => v,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            (stem, v)
        } else if name.ends_with(".md") || name.ends_with(".txt") {
            continue;
        } else {
            errors.push(
                SchemaError::new(
                    ErrorKind::UnknownKey,
                    format!("{prefix}.{name}"),
                    "not a .yaml file or a directory",
                )
                .in_file(Some(p.clone())),
            );
            continue;
        };
        if out.contains_key(&key) {
            errors.push(
                SchemaError::new(
                    ErrorKind::Structure,
                    format!("{prefix}.{key}"),
                    "defined twice (a file and a directory, or .yaml and .yml)",
                )
                .in_file(Some(p.clone())),
            );
            continue;
        }
        out.insert(key, value);
    }
    out
}

fn read_version_file(root: &Path, info: &mut TreeInfo) -> Result<(), SchemaError> {
    let file = root.join(VERSION_FILE);
    let here = Some(file.clone());
    if !file.is_file() {
        return Err(SchemaError::new(
            ErrorKind::Version,
            "",
            format!("a schema tree needs a {VERSION_FILE} with `version:`"),
        )
        .in_file(Some(root.to_owned())));
    }
    let v = parse_yaml(&read(&file)?, &file)?;
    version_info(v, info, here)
}

/// Fills `info` from the parsed content of a version file (`here`: its path, if any).
pub(crate) fn version_info(
    v: Value,
    info: &mut TreeInfo,
    here: Option<PathBuf>,
) -> Result<(), SchemaError> {
    let Value::Object(m) = v else {
        return Err(SchemaError::new(ErrorKind::Structure, "", "expected a mapping").in_file(here));
    };
    for (k, x) in &m {
        match (k.as_str(), x) {
            ("version", Value::String(s)) => info.version = s.clone(),
            ("schema_version", Value::String(s)) => info.schema_version = Some(s.clone()),
            ("supported", Value::Array(items)) => {
                for it in items {
                    match it {
                        Value::String(s) => info.supported.push(s.clone()),
                        _ => {
                            return Err(SchemaError::new(
                                ErrorKind::Version,
                                "supported",
                                "versions must be strings",
                            )
                            .in_file(here))
                        }
                    }
                }
            }
            ("version" | "schema_version", _) => {
                return Err(SchemaError::new(
                    ErrorKind::Version,
                    k.clone(),
                    "must be a quoted string such as \"1.11.1\"",
                )
                .in_file(here))
            }
            ("supported", _) => {
                return Err(SchemaError::new(
                    ErrorKind::Version,
                    "supported",
                    "must be a list of version strings",
                )
                .in_file(here))
            }
            _ => {
                return Err(SchemaError::new(
                    ErrorKind::UnknownKey,
                    k.clone(),
                    "unknown key in version.yaml",
                )
                .in_file(here))
            }
        }
    }
    if info.version.is_empty() {
        return Err(SchemaError::new(ErrorKind::Version, "version", "missing").in_file(here));
    }
    if info.supported.is_empty() {
        info.supported.push(info.version.clone());
    }
    info.supported
        .sort_by(|a, b| crate::version::compare_versions(b, a));
    info.supported.dedup();
    Ok(())
}

/// Reads only the version file of a tree.
pub(crate) fn read_tree_info(root: &Path) -> Result<TreeInfo, SchemaError> {
    let mut info = TreeInfo {
        root: root.to_owned(),
        ..TreeInfo::default()
    };
    read_version_file(root, &mut info)?;
    Ok(info)
}

/// Reads a YAML tree and resolves its references: the result is the unnormalised raw
/// tree (`version`, `schema_version`, `objects`, `rules`, `meta`) plus where each part
/// came from.
pub fn load_tree_raw(root: &Path) -> Result<(Value, TreeInfo), SchemaErrors> {
    let mut info = TreeInfo {
        root: root.to_owned(),
        ..TreeInfo::default()
    };
    let mut errors = Vec::new();
    if let Err(e) = read_version_file(root, &mut info) {
        errors.push(e);
    }
    let mut top = Map::new();
    top.insert("version".into(), Value::String(info.version.clone()));
    if let Some(sv) = &info.schema_version {
        top.insert("schema_version".into(), Value::String(sv.clone()));
    }
    for d in TREE_DIRS {
        let p = root.join(d);
        if p.is_dir() {
            info.files.push(((*d).to_owned(), p.clone()));
            top.insert(
                (*d).to_owned(),
                Value::Object(read_dir_tree(&p, d, &mut info, &mut errors)),
            );
        } else if *d != "meta" {
            errors.push(
                SchemaError::new(ErrorKind::Structure, *d, format!("missing directory {d}/"))
                    .in_file(Some(root.to_owned())),
            );
        }
    }
    if let Ok(rd) = std::fs::read_dir(root) {
        let mut names: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        names.sort();
        for p in names {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let known = TREE_DIRS.contains(&name)
                || name == VERSION_FILE
                || name.starts_with('.')
                || name.ends_with(".md")
                || name.ends_with(".txt");
            if !known {
                errors.push(
                    SchemaError::new(
                        ErrorKind::UnknownKey,
                        name,
                        "unknown entry at the root of a schema tree",
                    )
                    .in_file(Some(p.clone())),
                );
            }
        }
    }
    if !errors.is_empty() {
        return Err(SchemaErrors(errors));
    }
    let raw = resolve_refs(Value::Object(top)).map_err(|e| info.locate(e))?;
    Ok((raw, info))
}

/// The unresolved top of a tree from its parts already read: the version file's
/// content and the `objects`/`rules`/`meta` mappings.
pub(crate) fn tree_top(info: &TreeInfo, parts: &Map<String, Value>) -> Map<String, Value> {
    let mut top = Map::new();
    top.insert("version".into(), Value::String(info.version.clone()));
    if let Some(sv) = &info.schema_version {
        top.insert("schema_version".into(), Value::String(sv.clone()));
    }
    for d in TREE_DIRS {
        if let Some(v) = parts.get(*d) {
            top.insert((*d).to_owned(), v.clone());
        }
    }
    top
}

/// Resolves every `$ref` of a tree (see the crate README for the rules) and flattens
/// `anyOf` lists of enums. All problems are reported together, located by dotted key.
pub fn resolve_refs(root: Value) -> Result<Value, SchemaErrors> {
    let mut r = Resolver {
        root: &root,
        cache: HashMap::new(),
        stack: Vec::new(),
        errors: Vec::new(),
    };
    let out = r.resolve_value(&root, &mut String::new());
    if r.errors.is_empty() {
        Ok(out)
    } else {
        let mut seen = std::collections::HashSet::new();
        r.errors
            .retain(|e| seen.insert((e.key.clone(), e.message.clone())));
        Err(SchemaErrors(r.errors))
    }
}

struct Resolver<'a> {
    root: &'a Value,
    cache: HashMap<String, Value>,
    stack: Vec<String>,
    errors: Vec<SchemaError>,
}

fn join(at: &str, k: &str) -> String {
    if at.is_empty() {
        k.to_owned()
    } else {
        format!("{at}.{k}")
    }
}

/// Appends `.k` (or `k` at the top) to the dotted key `at`, returning the length to cut
/// it back to.
pub(crate) fn push_key(at: &mut String, k: &str) -> usize {
    let len = at.len();
    if len > 0 {
        at.push('.');
    }
    at.push_str(k);
    len
}

impl<'a> Resolver<'a> {
    /// `at` is the dotted key of `v`: grown and cut back in place as the walk goes down.
    fn resolve_value(&mut self, v: &Value, at: &mut String) -> Value {
        match v {
            Value::Object(m) if m.contains_key("$ref") => self.resolve_ref_map(m, at),
            Value::Object(m) => {
                let mut out = Map::with_capacity(m.len());
                for (k, x) in m {
                    let len = push_key(at, k);
                    out.insert(k.clone(), self.resolve_value(x, at));
                    at.truncate(len);
                }
                flatten_any_of(&mut out);
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        let len = at.len();
                        let _ = std::fmt::Write::write_fmt(at, format_args!("[{i}]"));
                        let out = self.resolve_value(x, at);
                        at.truncate(len);
                        out
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn resolve_ref_map(&mut self, m: &Map<String, Value>, at: &mut String) -> Value {
        let ref_at = join(at, "$ref");
        let refs: Vec<String> = match m.get("$ref") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items))
                if !items.is_empty() && items.iter().all(Value::is_string) =>
            {
                items
                    .iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            }
            _ => {
                self.errors.push(SchemaError::new(
                    ErrorKind::Structure,
                    ref_at,
                    "`$ref` must be a dotted path or a list of them",
                ));
                return Value::Null;
            }
        };
        let single_bare = refs.len() == 1 && m.len() == 1;
        let mut targets = Vec::with_capacity(refs.len());
        for r in &refs {
            match self.lookup(r, &ref_at) {
                Some(t) => targets.push((r, t)),
                None => return Value::Null,
            }
        }
        if single_bare {
            return targets.pop().map(|(_, t)| t).unwrap_or(Value::Null);
        }
        let mut merged = Map::new();
        for (r, t) in targets {
            match t {
                Value::Object(tm) => {
                    for (k, v) in tm {
                        // With several references the first one wins.
                        if !merged.contains_key(&k) {
                            merged.insert(k, v);
                        }
                    }
                }
                other => {
                    self.errors.push(SchemaError::new(
                        ErrorKind::Structure,
                        ref_at.clone(),
                        format!(
                            "`{r}` is {} and cannot be merged with other keys",
                            crate::views::kind_of(&other)
                        ),
                    ));
                    return Value::Null;
                }
            }
        }
        for (k, v) in m {
            if k == "$ref" {
                continue;
            }
            if v.is_null() {
                merged.shift_remove(k);
            } else {
                let len = push_key(at, k);
                let rv = self.resolve_value(v, at);
                at.truncate(len);
                merged.insert(k.clone(), rv);
            }
        }
        flatten_any_of(&mut merged);
        Value::Object(merged)
    }

    /// The fully resolved value at a dotted path; `at` is where the reference is written.
    fn lookup(&mut self, path: &str, at: &str) -> Option<Value> {
        if let Some(v) = self.cache.get(path) {
            return Some(v.clone());
        }
        if let Some(pos) = self.stack.iter().position(|p| p == path) {
            let mut chain: Vec<&str> = self.stack[pos..].iter().map(String::as_str).collect();
            chain.push(path);
            self.errors.push(SchemaError::new(
                ErrorKind::Cycle,
                at,
                format!("reference cycle: {}", chain.join(" → ")),
            ));
            return None;
        }
        if path.is_empty() {
            self.errors.push(SchemaError::new(
                ErrorKind::DanglingRef,
                at,
                "empty reference",
            ));
            return None;
        }
        self.stack.push(path.to_owned());
        let before = self.errors.len();
        let mut result = self.walk(path, at);
        self.stack.pop();
        if self.errors.len() > before {
            // Already reported; don't let a half-resolved value cause follow-up errors.
            result = None;
        }
        if let Some(v) = &result {
            self.cache.insert(path.to_owned(), v.clone());
        }
        result
    }

    fn walk(&mut self, path: &str, at: &str) -> Option<Value> {
        let segs: Vec<&str> = path.split('.').collect();
        let mut node: &'a Value = self.root;
        for (i, seg) in segs.iter().enumerate() {
            let parent = segs[..i].join(".");
            let child = match node {
                Value::Object(m) => m.get(*seg),
                Value::Array(a) => seg.parse::<usize>().ok().and_then(|n| a.get(n)),
                _ => None,
            };
            let Some(child) = child else {
                let where_ = if parent.is_empty() {
                    "the schema".to_owned()
                } else {
                    format!("`{parent}`")
                };
                self.errors.push(SchemaError::new(
                    ErrorKind::DanglingRef,
                    at,
                    format!("reference `{path}` does not exist: no key `{seg}` in {where_}"),
                ));
                return None;
            };
            let is_last = i + 1 == segs.len();
            if !is_last && matches!(child, Value::Object(m) if m.contains_key("$ref")) {
                // Resolve the intermediate reference, then continue inside the result.
                let prefix = segs[..=i].join(".");
                let resolved = self.lookup(&prefix, at)?;
                let mut cur = &resolved;
                for (j, s) in segs[i + 1..].iter().enumerate() {
                    let next = match cur {
                        Value::Object(m) => m.get(*s),
                        Value::Array(a) => s.parse::<usize>().ok().and_then(|n| a.get(n)),
                        _ => None,
                    };
                    match next {
                        Some(n) => cur = n,
                        None => {
                            let p = segs[..=i + j].join(".");
                            self.errors.push(SchemaError::new(
                                ErrorKind::DanglingRef,
                                at,
                                format!("reference `{path}` does not exist: no key `{s}` in `{p}`"),
                            ));
                            return None;
                        }
                    }
                }
                return Some(cur.clone());
            }
            node = child;
        }
        Some(self.resolve_value(node, &mut path.to_owned()))
    }
}

/// `anyOf: [{type: string, enum: [a]}, {type: string, enum: [b]}]` → `type: string, enum: [a, b]`.
fn flatten_any_of(m: &mut Map<String, Value>) {
    let Some(Value::Array(items)) = m.get("anyOf") else {
        return;
    };
    if items.is_empty() {
        return;
    }
    let mut ty: Option<&Value> = None;
    let mut values: Vec<Value> = Vec::new();
    for it in items {
        let Value::Object(im) = it else { return };
        if !im.keys().all(|k| k == "type" || k == "enum") {
            return;
        }
        let Some(Value::Array(en)) = im.get("enum") else {
            return;
        };
        if let Some(t) = im.get("type") {
            match ty {
                None => ty = Some(t),
                Some(prev) if prev == t => {}
                Some(_) => return,
            }
        }
        for x in en {
            if !values.contains(x) {
                values.push(x.clone());
            }
        }
    }
    let ty = ty.cloned();
    m.shift_remove("anyOf");
    if let Some(t) = ty {
        if !m.contains_key("type") {
            m.insert("type".into(), t);
        }
    }
    m.insert("enum".into(), Value::Array(values));
}
