//! Data-driven validator tests: one case per YAML file under `tests/cases/`.
//!
//! ```yaml
//! # What the case shows (first comment lines are the description).
//! schema: upstream            # upstream (../shared 1.11.1 compiled schema) | bundled (repo schema/)
//! base: minimal-upstream      # optional: start from tests/bases/<name>.yaml's `files`
//! remove: [README]            # optional: base files to leave out
//! files:                      # path → content (null: an empty file)
//!   dataset_description.json: '{"Name": "x", "BIDSVersion": "1.11.1"}'
//!   sub-01/anat/sub-01_T1w.nii.gz: ~
//!   link.nii: {symlink: target}     # a symbolic link (target relative to its directory)
//!   some/dir: {dir: true}           # an empty directory
//!   raw.bin: {hex: "efbbbf"}        # raw bytes
//! config: {ignore: [{code: EMPTY_FILE}]}   # default when absent: EMPTY_FILE ignored
//! options: {ignore_nifti_headers: true, max_rows: 10, ignore_warnings: false}
//! expect:                     # each must be present
//!   - {code: NOT_INCLUDED, location: /extra.txt, severity: error, subCode: X, line: 3}
//!   - {code: CASE_COLLISION, location: /a.txt, affects: [/A.txt]}  # other files, exactly
//! absent: [EMPTY_FILE]        # codes that must not appear at all
//! absent_issues:              # tuples that must not appear (same fields as expect)
//!   - {code: NOT_INCLUDED, location: /README}
//! max_errors: 0               # optional: at most this many error-severity issues
//! ```
//!
//! `CASE=substring cargo test -p nidos-validate --test validate_cases` runs only matching
//! cases and prints their full reports.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use nidos_schema::Schema;
use nidos_validate::{Config, Engine, Issue, Options, Report, Severity};
use serde::Deserialize;
use serde_json::Value as Json;

const UPSTREAM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/schemas/bids-1.11.1-schema-1.2.7.json"
);
const BUNDLED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema");
const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cases");
const BASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bases");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    schema: String,
    #[serde(default)]
    base: Option<String>,
    #[serde(default)]
    remove: Vec<String>,
    #[serde(default)]
    files: BTreeMap<String, Json>,
    #[serde(default)]
    config: Option<Json>,
    #[serde(default)]
    options: CaseOptions,
    #[serde(default)]
    expect: Vec<Expected>,
    #[serde(default)]
    absent: Vec<String>,
    #[serde(default)]
    absent_issues: Vec<Expected>,
    #[serde(default)]
    max_errors: Option<usize>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CaseOptions {
    #[serde(default)]
    ignore_nifti_headers: bool,
    #[serde(default)]
    max_rows: Option<usize>,
    #[serde(default)]
    ignore_warnings: bool,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Expected {
    code: String,
    #[serde(default)]
    sub_code: Option<String>,
    #[serde(default)]
    severity: Option<String>,
    /// Absent: any location.
    #[serde(default)]
    location: Option<String>,
    #[serde(default)]
    line: Option<usize>,
    /// Absent: any; else exactly these other files, in order.
    #[serde(default)]
    affects: Option<Vec<String>>,
}

impl Expected {
    fn matches(&self, i: &Issue) -> bool {
        *i.code() == self.code
            && self.location.as_ref().is_none_or(|l| *l == i.location)
            && self.sub_code.as_ref().is_none_or(|s| *s == *i.sub_code())
            && self
                .severity
                .as_ref()
                .is_none_or(|s| s == i.severity.as_str())
            && self.line.is_none_or(|l| i.line_number() == Some(l))
            && self.affects.as_ref().is_none_or(|a| a == i.affects())
    }
}

#[derive(Deserialize)]
struct Base {
    files: BTreeMap<String, Json>,
}

fn write_tree(root: &Path, files: &BTreeMap<String, Json>) {
    for (rel, content) in files {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        match content {
            Json::Null => std::fs::write(&path, b"").unwrap(),
            Json::String(s) => std::fs::write(&path, s.as_bytes()).unwrap(),
            Json::Object(o) if o.contains_key("symlink") => {
                let target = o["symlink"].as_str().unwrap();
                #[cfg(unix)]
                std::os::unix::fs::symlink(target, &path).unwrap();
                #[cfg(not(unix))]
                let _ = target;
            }
            Json::Object(o) if o.contains_key("dir") => std::fs::create_dir_all(&path).unwrap(),
            Json::Object(o) if o.contains_key("hex") => {
                let h = o["hex"].as_str().unwrap();
                let bytes: Vec<u8> = (0..h.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                    .collect();
                std::fs::write(&path, bytes).unwrap();
            }
            other => panic!("{rel}: unsupported content {other}"),
        }
    }
}

fn describe(i: &Issue) -> String {
    let mut s = format!(
        "{} [{}] {} {}",
        i.code(),
        i.sub_code(),
        i.severity,
        i.location
    );
    if let Some(l) = i.line_number() {
        s.push_str(&format!(":{l}"));
    }
    s
}

fn dump(report: &Report) -> String {
    report
        .issues
        .iter()
        .map(|i| format!("      {}\n", describe(i)))
        .collect()
}

/// The schemas, each loaded once for all cases (cases run on several threads). `bundled`
/// serves the brand that the dataset at `root` selects.
fn schema(which: &str, root: &Path) -> Option<&'static Schema> {
    static UP: OnceLock<Option<Schema>> = OnceLock::new();
    static BUNDLED_BY_BRAND: Mutex<BTreeMap<String, &'static Schema>> = Mutex::new(BTreeMap::new());
    match which {
        "upstream" => UP
            .get_or_init(|| {
                Path::new(UPSTREAM)
                    .exists()
                    .then(|| nidos_schema::load_path(Path::new(UPSTREAM)).unwrap())
            })
            .as_ref(),
        "bundled" => {
            let mut map = BUNDLED_BY_BRAND.lock().unwrap();
            let tree: &'static Schema = map.entry(String::new()).or_insert_with(|| {
                Box::leak(Box::new(
                    nidos_schema::load_path(Path::new(BUNDLED)).unwrap(),
                ))
            });
            let description = nidos_dataset::read_description(root);
            let name = tree.brands.choose(description.as_ref()).brand.name;
            let opts = nidos_schema::LoadOptions {
                brand: Some(name.clone()),
                ..Default::default()
            };
            Some(*map.entry(name).or_insert_with(|| {
                Box::leak(Box::new(
                    nidos_schema::load_path_with(Path::new(BUNDLED), &opts).unwrap(),
                ))
            }))
        }
        other => panic!("unknown schema {other:?} (upstream | bundled)"),
    }
}

fn read_case(path: &Path) -> Case {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let text = std::fs::read_to_string(path).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name}: cannot parse case: {e}"))
}

/// Runs one case; returns the failures (empty: passed).
fn run_case(path: &Path, case: &Case, verbose: bool) -> Vec<String> {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let mut files = BTreeMap::new();
    if let Some(base) = &case.base {
        let p = Path::new(BASES).join(format!("{base}.yaml"));
        let b: Base = serde_saphyr::from_str(&std::fs::read_to_string(&p).unwrap())
            .unwrap_or_else(|e| panic!("{name}: base {base}: {e}"));
        files = b.files;
    }
    for r in &case.remove {
        assert!(files.remove(r).is_some(), "{name}: remove {r}: not in base");
    }
    files.extend(case.files.clone());

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ds");
    std::fs::create_dir_all(&root).unwrap();
    write_tree(&root, &files);
    let Some(schema) = schema(&case.schema, &root) else {
        return vec!["the upstream schema is absent".to_string()];
    };

    let config = match &case.config {
        Some(c) => Config::from_json(&c.to_string()).unwrap(),
        None => Config::from_json(r#"{"ignore": [{"code": "EMPTY_FILE"}]}"#).unwrap(),
    };
    let opts = Options {
        ignore_nifti_headers: case.options.ignore_nifti_headers,
        max_rows: case.options.max_rows,
        config,
        ignore_warnings: case.options.ignore_warnings,
        ..Options::default()
    };
    let report = Engine::new(schema)
        .validate(&root, &opts)
        .unwrap_or_else(|e| panic!("{name}: validate failed: {e}"));
    if verbose {
        println!("  {name}:\n{}", dump(&report));
    }

    let mut failures = Vec::new();
    for e in &case.expect {
        if !report.issues.iter().any(|i| e.matches(i)) {
            failures.push(format!("missing {e:?}"));
        }
    }
    for code in &case.absent {
        for i in report.issues.iter().filter(|i| i.code() == code) {
            failures.push(format!("unexpected {}", describe(i)));
        }
    }
    for e in &case.absent_issues {
        for i in report.issues.iter().filter(|i| e.matches(i)) {
            failures.push(format!("unexpected {}", describe(i)));
        }
    }
    if let Some(max) = case.max_errors {
        let n = report.count(Severity::Error);
        if n > max {
            failures.push(format!("{n} errors, at most {max} expected"));
        }
    }
    if !failures.is_empty() {
        failures.push(format!("report was:\n{}", dump(&report)));
    }
    failures
}

/// One trial per case file. A case on the upstream schema is reported as ignored (not as
/// passed) when `../shared` is absent. `CASE=substring` keeps the matching cases and
/// prints their full reports.
fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let filter = std::env::var("CASE").ok();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(CASES)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .filter(|p| {
            filter
                .as_ref()
                .is_none_or(|f| p.to_string_lossy().contains(f.as_str()))
        })
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no cases under {CASES}");
    let verbose = filter.is_some();
    let trials = paths
        .into_iter()
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            let case = read_case(&path);
            let absent = case.schema == "upstream" && !Path::new(UPSTREAM).exists();
            libtest_mimic::Trial::test(name, move || {
                let failures = run_case(&path, &case, verbose);
                if failures.is_empty() {
                    Ok(())
                } else {
                    Err(failures.join("\n").into())
                }
            })
            .with_ignored_flag(absent)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
