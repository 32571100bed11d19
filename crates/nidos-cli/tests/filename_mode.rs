//! `nidos validate --filename-mode`: each folder of `tests/data/filename-mode/` holds a
//! name list (`names.txt`, fed on stdin) and the file-name issues the reference
//! validator reports for a dataset of empty files with those names (`expected.json`,
//! `[code, subCode, severity, location]` sets; see the folder's README).

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use support::BIN;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/filename-mode");

fn nidos_stdin(args: &[&str], stdin: &str) -> std::process::Output {
    support::output_with_stdin(Command::new(BIN).args(args), stdin)
}

type Tuple = (String, String, String, String);

fn tuples(report: &serde_json::Value) -> BTreeSet<Tuple> {
    let s = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
    report["issues"]["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .map(|i| {
            (
                s(&i["code"]),
                s(&i["subCode"]),
                s(&i["severity"]),
                s(&i["location"]),
            )
        })
        .collect()
}

fn cases() -> Vec<std::path::PathBuf> {
    nidos_testkit::sorted_entries(Path::new(DATA), |p| p.join("names.txt").is_file())
}

#[test]
fn name_lists_give_the_reference_file_name_issues() {
    let mut failures = Vec::new();
    for dir in cases() {
        let names = std::fs::read_to_string(dir.join("names.txt")).expect("names");
        let out = nidos_stdin(&["validate", "--filename-mode", "--json"], &names);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{}: not JSON ({e})", dir.display()));
        let got = tuples(&report);
        let want: Vec<Vec<String>> = serde_json::from_str(
            &std::fs::read_to_string(dir.join("expected.json")).expect("expected"),
        )
        .expect("expected.json");
        let want: BTreeSet<Tuple> = want
            .into_iter()
            .map(|t| (t[0].clone(), t[1].clone(), t[2].clone(), t[3].clone()))
            .collect();
        let name = dir.file_name().map(|n| n.to_string_lossy().to_string());
        for t in got.difference(&want) {
            failures.push(format!("{name:?}: extra {t:?}"));
        }
        for t in want.difference(&got) {
            failures.push(format!("{name:?}: missing {t:?}"));
        }
        let errors = want.iter().any(|t| t.2 == "error");
        assert_eq!(
            out.status.code(),
            Some(if errors { 16 } else { 0 }),
            "{name:?}: exit code"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_format_reports_the_names() {
    let names = "/sub-01/anat/sub-01_T1w.nii.gz\n/random.txt\n";
    for format in ["text", "json", "json_pp", "sarif", "html"] {
        let out = nidos_stdin(&["validate", "--filenameMode", "--format", format], names);
        assert_eq!(out.status.code(), Some(16), "{format}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("NOT_INCLUDED"), "{format}: {text}");
        assert!(text.contains("random.txt"), "{format}: {text}");
        assert!(!text.contains("sub-01_T1w.nii.gz\""), "{format}: {text}");
    }
}

#[test]
fn valid_names_pass_and_a_dataset_argument_is_not_read() {
    let names = "sub-01/anat/sub-01_T1w.nii.gz\nsub-01/anat/sub-01_T1w.json\n\
                 dataset_description.json\nREADME.md\nparticipants.tsv\n";
    let out = nidos_stdin(
        &[
            "validate",
            "/nonexistent/dataset",
            "--filename-mode",
            "--json",
        ],
        names,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(tuples(&report).is_empty(), "{report}");
    assert_eq!(report["summary"]["totalFiles"], 5);
    assert_eq!(report["summary"]["subjects"], serde_json::json!(["01"]));
    assert!(Path::new(DATA).is_dir());
}
