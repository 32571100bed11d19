//! Data-driven dataset tests: one case per YAML file under `tests/data/dataset/`.
//!
//! A case describes a small dataset tree inline and what to expect:
//!
//! ```yaml
//! tree:                       # path → content
//!   dataset_description.json: '{"Name": "x"}'
//!   sub-01/anat/sub-01_T1w.nii.gz: ""
//!   link.nii: {symlink: target}       # a symbolic link (target relative to its directory)
//!   gone.nii: {broken: true}          # a dangling link into git-annex
//!   secret.json: {unreadable: 12}     # reads fail
//!   bom.json: {hex: "efbbbf7b7d"}     # raw bytes
//!   table.tsv.gz: {gzip: "a\tb\n"}    # gzip-compressed text
//!   empty: {dir: true}                # an empty directory
//! fs: memory                  # or `os` (a real temporary directory; default memory)
//! options: {max_rows: 2, ignore_nifti_headers: true}
//! file: /sub-01/anat/sub-01_T1w.nii.gz   # the file whose context is checked
//! expect:
//!   files: [...]              # exact list of walked file paths
//!   flags: {path: {broken_symlink: true, ignored: false, opaque: false, outside: false, validated: true}}
//!   issues: [[CODE, /location], ...]           # exact set of walk issues
//!   context: {name: value}    # fragments: objects match by subset, the rest exactly
//!   absent: [name, ...]       # root names that must be null
//!   exists: [[rule, path, true|false|null], ...]
//!   load_issues: [[CODE, /location], ...]      # exact set, after loading every part
//!   sources: {key: /path}     # sidecar sources (subset)
//!   overrides: [[key, /shallow, /deep], ...]   # exact
//! ```

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nidos_dataset::{Dataset, DatasetIssue, MemFs, OpenOptions, SchemaInfo};
use nidos_expr::Context;
use serde_json::Value as Json;

const SCHEMA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/schemas/bids-1.11.1-schema-1.2.7.json"
);

fn schema_info() -> Option<Arc<SchemaInfo>> {
    if !Path::new(SCHEMA).exists() {
        return None;
    }
    let schema = nidos_schema::load_path(Path::new(SCHEMA)).unwrap();
    Some(Arc::new(SchemaInfo::from_schema(&schema)))
}

#[derive(Debug)]
enum Content {
    Text(Vec<u8>),
    Symlink(String),
    Broken,
    Unreadable(u64),
    Dir,
}

fn content_of(v: &Json) -> Content {
    match v {
        Json::String(s) => Content::Text(s.as_bytes().to_vec()),
        Json::Null => Content::Text(Vec::new()),
        Json::Object(o) => {
            if let Some(t) = o.get("symlink").and_then(Json::as_str) {
                Content::Symlink(t.to_string())
            } else if o.contains_key("broken") {
                Content::Broken
            } else if let Some(n) = o.get("unreadable") {
                Content::Unreadable(n.as_u64().unwrap_or(0))
            } else if let Some(h) = o.get("hex").and_then(Json::as_str) {
                Content::Text(
                    (0..h.len())
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                        .collect(),
                )
            } else if let Some(t) = o.get("gzip").and_then(Json::as_str) {
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(t.as_bytes()).unwrap();
                Content::Text(e.finish().unwrap())
            } else if o.contains_key("dir") {
                Content::Dir
            } else if let Some(j) = o.get("json") {
                Content::Text(serde_json::to_vec(j).unwrap())
            } else {
                panic!("unknown content {v}")
            }
        }
        other => Content::Text(other.to_string().into_bytes()),
    }
}

const ANNEX: &str = ".git/annex/objects/XX/YY/SHA256E-s1--0.nii/SHA256E-s1--0.nii";

fn build_mem(tree: &BTreeMap<String, Content>) -> (Arc<MemFs>, PathBuf) {
    let mut fs = MemFs::new();
    let root = PathBuf::from("/ds");
    fs.add_dir(&root);
    for (p, c) in tree {
        let path = root.join(p);
        match c {
            Content::Text(b) => fs.add_file(&path, b.clone()),
            Content::Symlink(t) => fs.add_symlink(&path, t),
            Content::Broken => {
                let depth = p.matches('/').count();
                fs.add_symlink(&path, format!("{}{ANNEX}", "../".repeat(depth)))
            }
            Content::Unreadable(n) => fs.add_unreadable(&path, *n),
            Content::Dir => fs.add_dir(&path),
        }
    }
    (Arc::new(fs), root)
}

fn build_os(tree: &BTreeMap<String, Content>, dir: &Path) -> PathBuf {
    let root = dir.join("ds");
    std::fs::create_dir_all(&root).unwrap();
    for (p, c) in tree {
        let path = root.join(p);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        match c {
            Content::Text(b) => std::fs::write(&path, b).unwrap(),
            Content::Symlink(t) => std::os::unix::fs::symlink(t, &path).unwrap(),
            Content::Broken => {
                let depth = p.matches('/').count();
                std::os::unix::fs::symlink(format!("{}{ANNEX}", "../".repeat(depth)), &path)
                    .unwrap()
            }
            Content::Unreadable(_) => panic!("unreadable files need fs: memory"),
            Content::Dir => std::fs::create_dir_all(&path).unwrap(),
        }
    }
    root
}

/// Objects match by subset (recursively); everything else exactly, numbers by value.
fn fragment_matches(expected: &Json, actual: &Json) -> bool {
    match (expected, actual) {
        (Json::Object(e), Json::Object(a)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|av| fragment_matches(v, av))),
        (Json::Array(e), Json::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(x, y)| fragment_matches(x, y))
        }
        (Json::Number(e), Json::Number(a)) => e.as_f64() == a.as_f64(),
        _ => expected == actual,
    }
}

/// The (code, location) of each issue, sorted.
fn code_locations(issues: &[DatasetIssue]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = issues
        .iter()
        .map(|i| vec![i.code.clone(), i.location.clone()])
        .collect();
    out.sort();
    out
}

/// The list under `key` (none when absent).
fn list<'a>(v: &'a Json, key: &str) -> &'a [Json] {
    v.get(key)
        .and_then(Json::as_array)
        .map_or(&[], Vec::as_slice)
}

fn pairs(v: Option<&Json>) -> Option<Vec<Vec<String>>> {
    v.map(|v| {
        let mut out: Vec<Vec<String>> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                p.as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect()
            })
            .collect();
        out.sort();
        out
    })
}

fn run_case(path: &Path, info: &Arc<SchemaInfo>) -> Result<(), String> {
    let text = std::fs::read_to_string(path).unwrap();
    let case: Json = serde_saphyr::from_str(&text).map_err(|e| format!("bad case YAML: {e}"))?;
    let tree: BTreeMap<String, Content> = case["tree"]
        .as_object()
        .ok_or("no tree")?
        .iter()
        .map(|(k, v)| (k.clone(), content_of(v)))
        .collect();
    let mut opts = OpenOptions::default();
    if let Some(o) = case.get("options") {
        opts.max_rows = o.get("max_rows").and_then(Json::as_u64).map(|n| n as usize);
        opts.ignore_nifti_headers = o
            .get("ignore_nifti_headers")
            .and_then(Json::as_bool)
            .unwrap_or(false);
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = if case.get("fs").and_then(Json::as_str) == Some("os") {
        build_os(&tree, tmp.path())
    } else {
        let (fs, root) = build_mem(&tree);
        opts.fs = fs;
        root
    };
    let ds = Dataset::open_with(&root, info.clone(), &opts).map_err(|e| e.to_string())?;
    let expect = &case["expect"];
    let mut errors = Vec::new();

    if let Some(files) = expect.get("files") {
        let got: Vec<&str> = ds.files().iter().map(|f| f.path.as_str()).collect();
        let want: Vec<&str> = files
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        if got != want {
            errors.push(format!("files:\n  want {want:?}\n  got  {got:?}"));
        }
    }
    if let Some(flags) = expect.get("flags").and_then(Json::as_object) {
        for (p, want) in flags {
            let Some(f) = ds.find(p) else {
                errors.push(format!("flags: no file {p}"));
                continue;
            };
            let got = serde_json::json!({
                "broken_symlink": f.broken_symlink, "ignored": f.ignored, "opaque": f.opaque,
                "outside": f.outside, "validated": f.validated(), "symlink": f.symlink,
                "is_dir": f.is_dir, "size": f.size,
            });
            if !fragment_matches(want, &got) {
                errors.push(format!("flags of {p}: want {want}, got {got}"));
            }
        }
    }
    if let Some(want) = pairs(expect.get("issues")) {
        let got = code_locations(&ds.issues());
        if got != want {
            errors.push(format!("issues:\n  want {want:?}\n  got  {got:?}"));
        }
    }
    if let Some(file) = case.get("file").and_then(Json::as_str) {
        let Some(entry) = ds.find(file) else {
            return Err(format!(
                "no file {file} in {:?}",
                ds.files().iter().map(|f| &f.path).collect::<Vec<_>>()
            ));
        };
        let ctx = ds.context(entry);
        if let Some(frags) = expect.get("context").and_then(Json::as_object) {
            for (name, want) in frags {
                let mut parts = name.split('.');
                let mut v = ctx.lookup(parts.next().unwrap()).into_owned();
                for p in parts {
                    v = v.get(p);
                }
                let got = v.to_json();
                if !fragment_matches(want, &got) {
                    errors.push(format!("context.{name}:\n  want {want}\n  got  {got}"));
                }
            }
        }
        for name in list(expect, "absent") {
            let n = name.as_str().unwrap();
            let v = ctx.lookup(n);
            if !v.is_null() {
                errors.push(format!("{n}: want null, got {v}"));
            }
        }
        for e in list(expect, "exists") {
            let rule = e[0].as_str().unwrap();
            let p = e[1].as_str().unwrap();
            let got = ctx.exists(rule, p);
            if got != e[2].as_bool() {
                errors.push(format!(
                    "exists({p:?}, {rule:?}): want {}, got {got:?}",
                    e[2]
                ));
            }
        }
        if let Some(want) = expect.get("sources").and_then(Json::as_object) {
            for (k, p) in want {
                let got = ctx.sidecar_sources().get(k);
                if got.map(String::as_str) != p.as_str() {
                    errors.push(format!("sidecar source of {k}: want {p}, got {got:?}"));
                }
            }
        }
        if let Some(want) = pairs(expect.get("overrides")) {
            let mut got: Vec<Vec<String>> = ctx
                .sidecar_overrides()
                .iter()
                .map(|o| vec![o.key.clone(), o.shallow.clone(), o.deep.clone()])
                .collect();
            got.sort();
            if got != want {
                errors.push(format!("overrides:\n  want {want:?}\n  got  {got:?}"));
            }
        }
        // Loading everything must never panic; the eager JSON is always an object.
        let eager = ctx.to_json_eager();
        if !eager.is_object() {
            errors.push("eager context is not an object".into());
        }
        if let Some(want) = pairs(expect.get("load_issues")) {
            ctx.load_own();
            let mut got = code_locations(&ctx.load_issues());
            got.dedup();
            if got != want {
                errors.push(format!(
                    "load_issues:\n  want {want:?}\n  got  {got:?}\n  full {:?}",
                    ctx.load_issues()
                ));
            }
        }
    }
    // Every file's context loads without panicking.
    for f in ds.files() {
        let ctx = ds.context(f);
        let _ = ctx.to_json_eager();
        ctx.load_own();
        let _ = ctx.load_issues();
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn dataset_cases() {
    let Some(info) = schema_info() else {
        eprintln!("SKIPPED: {SCHEMA} is absent (../shared not available)");
        return;
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/dataset");
    let cases = nidos_testkit::files_with_extension(&dir, "yaml");
    assert!(!cases.is_empty(), "no cases in {}", dir.display());
    let filter = std::env::var("CASE").ok();
    let mut failed = Vec::new();
    for c in &cases {
        let name = c.file_stem().unwrap().to_string_lossy().to_string();
        if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        match std::panic::catch_unwind(|| run_case(c, &info)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failed.push(format!("--- {name}\n{e}")),
            Err(_) => failed.push(format!("--- {name}\npanicked")),
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} cases failed:\n{}",
        failed.len(),
        cases.len(),
        failed.join("\n")
    );
}
