//! SARIF `fixes` come from the run that made the report: the dataset of
//! `tests/data/sarif-fixes/ds` (a description missing its version key and holding a bare
//! DOI, two fixes in one file; a sidecar with a deprecated key) is opened once per run,
//! each fix replaces only the bytes its issue changes, and the run's options (`--config`)
//! hold for the fixes.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn case_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-fixes")
}

/// The SARIF log of `nidos validate ds --format sarif ARGS` and its standard error (with
/// the phase timings on).
fn sarif(args: &[&str]) -> (Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nidos"))
        .arg("validate")
        .arg(case_dir().join("ds"))
        .args(["--format", "sarif"])
        .args(args)
        .env("NIDOS_TIMING", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let log = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}); stderr:\n{stderr}"));
    (log, stderr)
}

/// One replacement of a fix: (file, offset, length, text).
type Region = (String, u64, u64, String);

/// Each result's rule id with its fixes' replacements.
fn fixes(log: &Value) -> Vec<(String, Vec<Region>)> {
    let results = log["runs"][0]["results"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    results
        .iter()
        .map(|r| {
            let mut reps = Vec::new();
            for fix in r["fixes"].as_array().into_iter().flatten() {
                for change in fix["artifactChanges"].as_array().into_iter().flatten() {
                    let file = change["artifactLocation"]["uri"].as_str().unwrap_or("");
                    for rep in change["replacements"].as_array().into_iter().flatten() {
                        reps.push((
                            file.to_owned(),
                            rep["deletedRegion"]["byteOffset"].as_u64().unwrap(),
                            rep["deletedRegion"]["byteLength"].as_u64().unwrap(),
                            rep["insertedContent"]["text"].as_str().unwrap().to_owned(),
                        ));
                    }
                }
            }
            (r["ruleId"].as_str().unwrap_or("").to_owned(), reps)
        })
        .collect()
}

#[test]
fn one_validation_and_replacements_as_small_as_the_change() {
    let (log, stderr) = sarif(&[]);
    let opened = stderr.matches("open dataset").count();
    assert_eq!(
        opened, 1,
        "the dataset was opened {opened} times:\n{stderr}"
    );
    let fixes = fixes(&log);
    let of = |id: &str| {
        fixes
            .iter()
            .find(|(r, _)| r == id || r.starts_with(&format!("{id}/")))
            .map(|(_, reps)| reps.clone())
            .unwrap_or_else(|| panic!("no result {id} in {fixes:?}"))
    };
    let description =
        std::fs::read_to_string(case_dir().join("ds/dataset_description.json")).unwrap();
    // The DOI gets its scheme: four bytes inserted before it, nothing else.
    let doi = of("DATASET_DOI_NOT_URI");
    assert_eq!(doi.len(), 1, "{doi:?}");
    let (file, offset, length, text) = &doi[0];
    assert_eq!(
        (file.as_str(), *length, text.as_str()),
        ("dataset_description.json", 0, "doi:")
    );
    assert_eq!(
        &description[*offset as usize..*offset as usize + 7],
        "10.5281"
    );
    // The version key added to the same file is not part of the DOI's fix, nor the DOI
    // part of the version's.
    let version = of("JSON_KEY_REQUIRED");
    assert!(!version.is_empty());
    for (file, _, length, text) in &version {
        assert_eq!(file, "dataset_description.json");
        assert_eq!(*length, 0, "{version:?}");
        assert!(
            text.contains("Version") && !text.contains("doi:"),
            "{text:?}"
        );
    }
}

#[test]
fn config_ignoring_a_code_removes_its_fix() {
    let config = case_dir().join("ignore-doi.json");
    let (log, _) = sarif(&["--config", config.to_str().unwrap()]);
    let fixes = fixes(&log);
    // The ignored issue is still listed (as a note), without a fix.
    assert!(
        fixes
            .iter()
            .any(|(r, reps)| r == "DATASET_DOI_NOT_URI" && reps.is_empty()),
        "{fixes:?}"
    );
    assert!(
        fixes
            .iter()
            .flat_map(|(_, reps)| reps)
            .all(|(_, _, _, t)| !t.contains("doi:")),
        "a fix still repairs the ignored issue: {fixes:?}"
    );
    assert!(
        fixes
            .iter()
            .any(|(r, reps)| r.starts_with("JSON_KEY_REQUIRED") && !reps.is_empty()),
        "the other fixes stay: {fixes:?}"
    );
}
