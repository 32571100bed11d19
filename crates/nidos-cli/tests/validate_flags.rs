//! `nidos validate -r/--recursive` and `--dataset-types`.

mod support;

use std::path::Path;
use std::process::Command;

use support::{assert_exit, write};

const README: &str = "This small dataset exists only to exercise the command line of nidos. \
It holds one subject with one anatomical image and nothing else of interest to anyone.";

/// A valid raw dataset with one derivative dataset whose description lacks GeneratedBy.
fn dataset() -> tempfile::TempDir {
    support::dataset(&[
        (
            "dataset_description.json",
            r#"{"Name": "x", "StdVersion": "1.11.1", "Authors": ["A", "B"]}"#,
        ),
        ("README.md", README),
        ("participants.tsv", "participant_id\nsub-01\n"),
        ("sub-01/anat/sub-01_T1w.nii.gz", "x"),
        (
            "derivatives/pipe/dataset_description.json",
            r#"{"Name": "pipe", "StdVersion": "1.11.1", "DatasetType": "derivative"}"#,
        ),
    ])
}

fn validate(ds: &Path, extra: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = support::validate_json_output(ds, extra);
    let json = serde_json::from_slice(&out.stdout).unwrap_or_default();
    (out.status.code(), json)
}

fn codes(report: &serde_json::Value) -> Vec<String> {
    report["issues"]["issues"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["severity"] == "error")
        .map(|i| i["code"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn derivatives_are_validated_only_when_recursive() {
    let ds = dataset();
    let (_, plain) = validate(ds.path(), &[]);
    assert!(plain.get("derivativesSummary").is_none());
    let (code, rec) = validate(ds.path(), &["-r"]);
    let pipe = &rec["derivativesSummary"]["pipe"];
    assert!(pipe["issues"]["issues"].is_array(), "{rec}");
    // The derivative lacks GeneratedBy, which derived datasets must have.
    let pipe_errors = codes(pipe);
    assert!(!pipe_errors.is_empty(), "{pipe}");
    assert_eq!(code, Some(16), "errors in a derivative fail the run");
}

#[test]
fn dataset_types_reject_other_types() {
    let ds = dataset();
    let (_, ok) = validate(ds.path(), &["--dataset-types", "raw", "study"]);
    assert!(!codes(&ok).contains(&"UNSUPPORTED_DATASET_TYPE".to_string()));
    let (code, bad) = validate(ds.path(), &["--datasetTypes", "derivative"]);
    assert!(
        codes(&bad).contains(&"UNSUPPORTED_DATASET_TYPE".to_string()),
        "{bad}"
    );
    assert_eq!(code, Some(16));
}

#[test]
fn blacklisted_modalities_are_errors_at_their_datatype_directories() {
    let ds = dataset();
    let (code, report) = validate(ds.path(), &["--blacklistModalities", "MRI"]);
    let hits: Vec<&serde_json::Value> = report["issues"]["issues"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["code"] == "BLACKLISTED_MODALITY")
        .collect();
    assert_eq!(hits.len(), 1, "{report}");
    assert_eq!(hits[0]["location"], "/sub-01/anat");
    assert_eq!(code, Some(16));
    let (_, other) = validate(ds.path(), &["--blacklist-modalities", "eeg"]);
    assert!(!codes(&other).contains(&"BLACKLISTED_MODALITY".to_string()));
}

#[test]
fn a_dataset_of_either_brand_validates_with_its_own_names() {
    let ds = dataset();
    let (code, std_report) = validate(ds.path(), &["--ignore-nifti-headers"]);
    assert_eq!(code, Some(0), "{std_report}");
    write(
        ds.path(),
        "dataset_description.json",
        r#"{"Name": "x", "BIDSVersion": "1.11.1", "Authors": ["A", "B"]}"#,
    );
    let (code, report) = validate(ds.path(), &["--ignore-nifti-headers"]);
    assert_eq!(code, Some(0), "{report}");
    assert!(codes(&report).is_empty(), "{report}");
    assert_eq!(report["summary"]["versionKey"], "BIDSVersion", "{report}");
}

#[test]
fn generated_by_without_dataset_type_is_a_derivative() {
    let ds = dataset();
    write(
        ds.path(),
        "dataset_description.json",
        r#"{"Name": "x", "StdVersion": "1.11.1", "Authors": ["A", "B"], "GeneratedBy": [{"Name": "pipe"}]}"#,
    );
    let (_, as_raw) = validate(ds.path(), &["--dataset-types", "raw"]);
    assert!(
        codes(&as_raw).contains(&"UNSUPPORTED_DATASET_TYPE".to_string()),
        "{as_raw}"
    );
    let (_, as_derivative) = validate(ds.path(), &["--dataset-types", "derivative"]);
    assert!(!codes(&as_derivative).contains(&"UNSUPPORTED_DATASET_TYPE".to_string()));
}

/// The rules are embedded in the binary: run from an empty directory with no
/// NIDOS_SCHEMA_DIR, a dataset of either brand validates.
#[test]
fn the_binary_needs_no_schema_directory() {
    let ds = dataset();
    let cwd = tempfile::tempdir().unwrap();
    let run = |ds: &Path| {
        Command::new(support::BIN)
            .env_remove("NIDOS_SCHEMA_DIR")
            .current_dir(cwd.path())
            .arg("validate")
            .arg(ds)
            .args(["--format", "json", "--ignore-nifti-headers"])
            .output()
            .unwrap()
    };
    let out = run(ds.path());
    assert_exit(&out, 0);
    write(
        ds.path(),
        "dataset_description.json",
        r#"{"Name": "x", "BIDSVersion": "1.11.1", "Authors": ["A", "B"]}"#,
    );
    let out = run(ds.path());
    assert_exit(&out, 0);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["summary"]["versionKey"], "BIDSVersion", "{report}");
}

/// `nidos schema export DIR` writes the embedded YAML tree; a run reads the edited copy.
#[test]
fn exported_tree_is_read_back_and_edits_take_effect() {
    let ds = dataset();
    let out_dir = tempfile::tempdir().unwrap();
    let tree = out_dir.path().join("tree");
    let export = Command::new(support::BIN)
        .env_remove("NIDOS_SCHEMA_DIR")
        .args(["schema", "export"])
        .arg(&tree)
        .output()
        .unwrap();
    assert_exit(&export, 0);
    assert!(tree.join("version.yaml").is_file());
    let run = || {
        Command::new(support::BIN)
            .env("NIDOS_SCHEMA_DIR", &tree)
            .arg("validate")
            .arg(ds.path())
            .args(["--format", "json", "--ignore-nifti-headers"])
            .output()
            .unwrap()
    };
    assert_eq!(run().status.code(), Some(0));
    // An edit: the dataset description now requires a field the dataset lacks.
    let rules = tree.join("rules/dataset_metadata.yaml");
    let text = std::fs::read_to_string(&rules).unwrap();
    let edited = text.replacen("Funding: optional", "Funding: required", 1);
    assert_ne!(
        text, edited,
        "the exported tree defines Funding as optional"
    );
    std::fs::write(&rules, edited).unwrap();
    let out = run();
    assert_eq!(out.status.code(), Some(16));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        codes(&report).contains(&"JSON_KEY_REQUIRED".to_string()),
        "{report}"
    );
    // A second export does not overwrite.
    let again = Command::new(support::BIN)
        .args(["schema", "export"])
        .arg(&tree)
        .output()
        .unwrap();
    assert!(!again.status.success());
}

/// A `--schema` that does not exist is named once in one clear message (issue 15).
/// (`v1.9.0` is a release tag since issue 14: see `schema_download.rs`.)
#[test]
fn a_missing_schema_is_named_once() {
    let ds = dataset();
    let out = Command::new(support::BIN)
        .arg("validate")
        .arg(ds.path())
        .args(["--schema", "no-such-schema-1.9.0.json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("no-such-schema-1.9.0.json").count(), 1, "{err}");
}
