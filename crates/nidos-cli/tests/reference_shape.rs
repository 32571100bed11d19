//! nidos's JSON reports of the conformance examples against the shape of the reference
//! validator's own full reports (`tests/data/reference-shape/shape.json`, written by
//! `make_shape.py` beside it from reports made with the reference; the reports are not
//! kept): the same top-level and summary keys with the same value types, a code message
//! for every code, an `issueMessage` wherever the reference always gives one (with its
//! opening words), and each example's summary counts. Needs `../shared`.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value as Json;

const BIN: &str = env!("CARGO_BIN_EXE_nidos");
const SHAPE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/reference-shape/shape.json"
);
const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/conformance");

/// Examples whose modality order in the reference follows its directory listing order
/// (names missing from its modality table tie with everything; docs/divergences.md §17):
/// their modalities are compared as sets.
const LISTING_ORDER: &[&str] = &["eeg_ds003645s_hed_demo"];

fn jtype(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn report_of(example: &str) -> Json {
    let shared = Path::new(SHARED);
    let dir = shared.join("examples").join(example);
    let mut cmd = Command::new(BIN);
    cmd.arg("validate")
        .arg(&dir)
        .arg("--json")
        .arg("--schema")
        .arg(shared.join("schemas/bids-1.11.1-schema-1.2.7.json"))
        .arg("--config")
        .arg(shared.join("examples/default-config.json"));
    if example != "synthetic" {
        cmd.arg("--ignore-nifti-headers");
    }
    let out = cmd.output().expect("nidos runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{example}: not JSON: {e}"))
}

fn strings(v: &Json) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn sorted(v: &Json) -> Vec<String> {
    let mut s = strings(v);
    s.sort();
    s
}

#[test]
#[cfg_attr(nidos_shared_absent, ignore = "needs ../shared (absent)")]
fn reports_have_the_reference_shape() {
    let shape: Json =
        serde_json::from_str(&std::fs::read_to_string(SHAPE).expect("shape")).expect("shape.json");
    let mut problems: Vec<String> = Vec::new();
    let examples = shape["examples"].as_object().expect("examples");
    for (example, want) in examples {
        let report = report_of(example);
        let top: BTreeSet<String> = report
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        for key in strings(&shape["top"]) {
            if !top.contains(&key) {
                problems.push(format!("{example}: no top-level {key}"));
            }
        }
        for key in strings(&shape["issues"]) {
            if report["issues"].get(&key).is_none() {
                problems.push(format!("{example}: no issues.{key}"));
            }
        }
        let summary = &report["summary"];
        for (key, types) in shape["summary"].as_object().expect("summary") {
            let got = summary.get(key).map(jtype).unwrap_or("absent");
            if !strings(types).iter().any(|t| t == got) {
                problems.push(format!("{example}: summary.{key} is {got}, not {types}"));
            }
        }
        let code_messages = &report["issues"]["codeMessages"];
        for issue in report["issues"]["issues"].as_array().into_iter().flatten() {
            let code = issue["code"].as_str().unwrap_or("");
            if code_messages.get(code).is_none() {
                problems.push(format!("{example}: no codeMessages.{code}"));
            }
            let Some(spec) = shape["codes"].get(code) else {
                continue;
            };
            for key in strings(&spec["always"]) {
                if issue.get(&key).is_none() {
                    problems.push(format!(
                        "{example}: {code} at {} has no {key}",
                        issue["location"]
                    ));
                }
            }
            if let (Some(prefix), Some(message)) = (
                spec["messagePrefix"].as_str(),
                issue["issueMessage"].as_str(),
            ) {
                if !message.starts_with(prefix) {
                    problems.push(format!(
                        "{example}: {code} message {message:?} does not start with {prefix:?}"
                    ));
                }
            }
        }
        for key in ["totalFiles", "size", "dataProcessed", "schemaVersion"] {
            if summary[key] != want[key] {
                problems.push(format!(
                    "{example}: summary.{key} {} (reference {})",
                    summary[key], want[key]
                ));
            }
        }
        for key in ["modalities", "secondaryModalities"] {
            let (got, reference) = if LISTING_ORDER.contains(&example.as_str()) {
                (sorted(&summary[key]), sorted(&want[key]))
            } else {
                (strings(&summary[key]), strings(&want[key]))
            };
            if got != reference {
                problems.push(format!(
                    "{example}: summary.{key} {} (reference {})",
                    summary[key], want[key]
                ));
            }
        }
        for key in ["tasks", "dataTypes", "subjects", "sessions"] {
            if sorted(&summary[key]) != strings(&want[key]) {
                problems.push(format!(
                    "{example}: summary.{key} {} (reference {})",
                    summary[key], want[key]
                ));
            }
        }
        let rows = summary["subjectMetadata"].as_array().map_or(0, Vec::len);
        if Some(rows as u64) != want["subjectMetadata"].as_u64() {
            problems.push(format!(
                "{example}: {rows} subjectMetadata rows (reference {})",
                want["subjectMetadata"]
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
