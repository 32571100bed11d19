//! `nidos ls`, `entities`, `path` and `init` end to end.
//!
//! - On every conformance example (upstream 1.11.1 schema), `ls` lists exactly the files
//!   the validator accepts (validated and not `NOT_INCLUDED`), derivative datasets only
//!   with `--derivatives`, each compared with the validator's report on that derivative.
//! - Every data file name the validator accepts round-trips through `build_path`.
//! - `nidos init` output validates with zero errors under the bundled schema.
//! - `tests/data/query/path_cases.yaml`: `nidos path` argument lists and the expected
//!   path or error text; `tests/data/query/ls_cases.yaml`: `nidos ls` runs over the
//!   fixture dataset `tests/data/query/ds/` with the expected output.
//!
//! Tests that need `../shared` skip with a message when it is absent.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use indexmap::IndexMap;
use nidos_dataset::query::{build_path, PathError};
use nidos_dataset::{Dataset, OpenOptions};
use serde_json::Value as Json;
use support::{assert_exit, stdout, upstream_schema, BIN, SHARED};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/query");

fn examples() -> Vec<PathBuf> {
    nidos_testkit::sub_directories(&Path::new(SHARED).join("examples"))
}

fn nidos(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// Files of a dataset the validator accepts: validated and not reported NOT_INCLUDED.
/// Also returns the files with file-name errors (skipped by the round trip).
fn validator_view(
    engine: &nidos_validate::Engine,
    schema: &nidos_schema::Schema,
    dir: &Path,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let opts = nidos_validate::Options {
        ignore_nifti_headers: true,
        ..Default::default()
    };
    let report = engine.validate(dir, &opts).unwrap();
    let mut not_included = BTreeSet::new();
    let mut name_errors = BTreeSet::new();
    for i in &report.issues {
        if i.code() == "NOT_INCLUDED" {
            not_included.insert(i.location.to_string());
        }
        if matches!(
            i.code().as_str(),
            "NOT_INCLUDED"
                | "ENTITY_NOT_IN_RULE"
                | "MISSING_REQUIRED_ENTITY"
                | "FILENAME_MISMATCH"
                | "INVALID_LOCATION"
                | "ALL_FILENAME_RULES_HAVE_ISSUES"
                | "DATATYPE_MISMATCH"
                | "EXTENSION_MISMATCH"
                | "INVALID_ENTITY_LABEL"
                | "ENTITY_WITH_NO_LABEL"
        ) {
            name_errors.insert(i.location.to_string());
        }
    }
    let ds = Dataset::open(
        dir,
        schema,
        &OpenOptions {
            ignore_nifti_headers: true,
            ..Default::default()
        },
    )
    .unwrap();
    let accepted = ds
        .files()
        .iter()
        .filter(|f| f.validated() && !not_included.contains(&f.path))
        .map(|f| f.path.trim_start_matches('/').to_string())
        .collect();
    (accepted, name_errors)
}

/// `nidos ls --format json` paths, grouped by dataset (`""` for the root).
fn ls_paths(dir: &Path, schema: &Path, derivatives: bool) -> BTreeMap<String, BTreeSet<String>> {
    let mut args = vec![
        "ls",
        dir.to_str().unwrap(),
        "--schema",
        schema.to_str().unwrap(),
        "--format",
        "json",
    ];
    if derivatives {
        args.push("--derivatives");
    }
    let out = nidos(&args);
    assert_exit(&out, 0);
    let v: Json = serde_json::from_str(&stdout(&out)).unwrap();
    let mut by_ds: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for m in v.as_array().unwrap() {
        let ds = m.get("dataset").and_then(Json::as_str).unwrap_or("");
        let path = m["path"].as_str().unwrap();
        let rel = if ds.is_empty() {
            path.to_string()
        } else {
            path.strip_prefix(&format!("{ds}/")).unwrap().to_string()
        };
        by_ds.entry(ds.to_string()).or_default().insert(rel);
    }
    by_ds
}

fn diff(label: &str, listed: &BTreeSet<String>, accepted: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for p in listed.difference(accepted) {
        out.push(format!("{label}: listed but not accepted: {p}"));
    }
    for p in accepted.difference(listed) {
        out.push(format!("{label}: accepted but not listed: {p}"));
    }
    out
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn ls_lists_exactly_what_the_validator_accepts() {
    let Some(schema_path) = upstream_schema() else {
        return;
    };
    let schema = nidos_schema::load_path(&schema_path).unwrap();
    let engine = nidos_validate::Engine::new(&schema);
    let mut problems = Vec::new();
    let (mut n_ds, mut n_files, mut n_deriv) = (0, 0, 0);
    for dir in examples() {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let (accepted, _) = validator_view(&engine, &schema, &dir);
        let plain = ls_paths(&dir, &schema_path, false);
        assert!(
            plain.keys().all(|k| k.is_empty()),
            "{name}: derivative files listed without --derivatives"
        );
        let listed = plain.get("").cloned().unwrap_or_default();
        problems.extend(diff(&name, &listed, &accepted));
        n_ds += 1;
        n_files += listed.len();
        let with = ls_paths(&dir, &schema_path, true);
        assert_eq!(with.get("").cloned().unwrap_or_default(), listed, "{name}");
        let ds = Dataset::open(&dir, &schema, &OpenOptions::default()).unwrap();
        for d in ds.derivative_datasets() {
            let (acc, _) = validator_view(&engine, &schema, &dir.join(&d));
            let got = with.get(&d).cloned().unwrap_or_default();
            n_deriv += got.len();
            problems.extend(diff(&format!("{name}/{d}"), &got, &acc));
        }
    }
    println!("{n_ds} examples, {n_files} files listed, {n_deriv} derivative files listed");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
#[test]
fn data_file_names_round_trip_through_build_path() {
    let Some(schema_path) = upstream_schema() else {
        return;
    };
    let schema = nidos_schema::load_path(&schema_path).unwrap();
    let engine = nidos_validate::Engine::new(&schema);
    let mut failures = Vec::new();
    let (mut checked, mut skipped) = (0, 0);
    for dir in examples() {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let (accepted, name_errors) = validator_view(&engine, &schema, &dir);
        let ds = Dataset::open(&dir, &schema, &OpenOptions::default()).unwrap();
        for f in ds.files() {
            let rel = f.path.trim_start_matches('/');
            if !accepted.contains(rel) || f.name.pairs.is_empty() || f.name.suffix.is_none() {
                continue;
            }
            if name_errors.contains(&f.path) {
                skipped += 1;
                continue;
            }
            let entities: IndexMap<String, String> = f.name.pairs.iter().cloned().collect();
            let suffix = f.name.suffix.as_deref().unwrap();
            match build_path(
                &schema,
                &entities,
                suffix,
                &f.name.extension,
                f.datatype.as_deref(),
            ) {
                Ok(p) if p == rel => checked += 1,
                // Files inherited from above their data files (sidecars at the subject
                // or session level) are not where build_path puts a data file.
                Ok(_) | Err(PathError::AmbiguousDatatype { .. })
                    if f.datatype.is_none() && f.name.get("sub").is_some() =>
                {
                    skipped += 1
                }
                Ok(p) => failures.push(format!("{name}: {rel} → {p}")),
                Err(e) => failures.push(format!("{name}: {rel}: {e}")),
            }
        }
    }
    println!("{checked} names round-tripped, {skipped} skipped (file-name errors or inherited)");
    assert!(checked > 1000);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn init_output_validates_without_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("new");
    let d = dir.to_str().unwrap();
    let out = nidos(&[
        "init",
        d,
        "--name",
        "Pilot",
        "--authors",
        "Ada L",
        "Alan T",
        "--license",
        "CC0-1.0",
    ]);
    assert_exit(&out, 0);
    let readme = std::fs::read_to_string(dir.join("README")).unwrap();
    assert!(readme.len() >= 150, "README is {} bytes", readme.len());
    let desc: Json = serde_json::from_str(
        &std::fs::read_to_string(dir.join("dataset_description.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(desc["Name"], "Pilot");
    assert_eq!(desc["Authors"], serde_json::json!(["Ada L", "Alan T"]));
    assert!(
        desc.get("BIDSVersion").and_then(Json::as_str).is_some(),
        "{desc}"
    );
    let tsv = std::fs::read_to_string(dir.join("participants.tsv")).unwrap();
    assert_eq!(tsv, "participant_id\n");
    let v = nidos(&["validate", d, "--format", "json"]);
    let report: Json = serde_json::from_str(&stdout(&v)).unwrap();
    let errors: Vec<&Json> = report["issues"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["severity"] == "error")
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(v.status.code(), Some(0));
    // A second init refuses the non-empty directory and changes nothing.
    let again = nidos(&["init", d, "--name", "Other"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"));
    let desc2 = std::fs::read_to_string(dir.join("dataset_description.json")).unwrap();
    assert!(desc2.contains("Pilot"));
    // --force rewrites.
    let forced = nidos(&["init", d, "--name", "Other", "--force"]);
    assert!(forced.status.success());
    let desc3 = std::fs::read_to_string(dir.join("dataset_description.json")).unwrap();
    assert!(desc3.contains("Other"));
}

#[derive(serde::Deserialize)]
struct Case {
    name: String,
    args: Vec<String>,
    /// Expected stdout (exact).
    #[serde(default)]
    stdout: Option<String>,
    /// Expected to fail with stderr containing this.
    #[serde(default)]
    error: Option<String>,
}

fn run_cases(file: &str, prefix: &[&str]) {
    let text = std::fs::read_to_string(Path::new(DATA).join(file)).unwrap();
    let cases: Vec<Case> = serde_saphyr::from_str(&text).unwrap();
    let mut failures = Vec::new();
    for c in &cases {
        let mut args: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
        args.extend(c.args.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = nidos(&args);
        let so = stdout(&out);
        let se = String::from_utf8_lossy(&out.stderr).to_string();
        match (&c.stdout, &c.error) {
            (Some(exp), None) => {
                if !out.status.success() || &so != exp {
                    failures.push(format!(
                        "{}: expected\n{exp}got (exit {:?})\n{so}{se}",
                        c.name,
                        out.status.code()
                    ));
                }
            }
            (None, Some(err)) => {
                if out.status.success() || !se.contains(err.as_str()) {
                    failures.push(format!(
                        "{}: expected an error containing {err:?}, got (exit {:?}) {so}{se}",
                        c.name,
                        out.status.code()
                    ));
                }
            }
            _ => failures.push(format!("{}: give exactly one of stdout, error", c.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn path_cases() {
    run_cases("path_cases.yaml", &["path"]);
}

#[test]
fn ls_cases() {
    // Arguments are relative to the crate directory (`tests/data/query/ds`).
    run_cases("ls_cases.yaml", &[]);
}
