//! Rule fixtures of the bundled Std tree: each directory of `tests/std-rules/` is a tiny
//! Std dataset with an `expected.json` listing issues (code, severity, location) that
//! `nidos validate DIR --format json` must report. When an entry names a `replacement`,
//! the issue's message (its own `issueMessage`, else the report's message for the code)
//! must contain it: deprecation warnings say what to write instead.
//!
//! Optional keys of `expected.json`:
//! - `"path": "derivatives/<pipeline>"` validates that subdirectory of the fixture instead
//!   of the fixture root (a derived dataset nested in a raw one);
//! - `"subCode"` on an expected entry must also match;
//! - `"absent": [{"code": ..., "location": ...}]` lists issues that must not be reported
//!   (a missing `location` means: nowhere);
//! - `"stderr": "text"` must appear in the command's standard error (warnings that are
//!   not issues of the report, such as the schema version fallback).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/std-rules")
}

fn validate(dir: &Path) -> (Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nidos"))
        .arg("validate")
        .arg(dir)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    match serde_json::from_slice(&out.stdout) {
        Ok(v) => (v, stderr),
        Err(e) => panic!(
            "{}: no JSON report ({e}); stderr:\n{}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Problems with one fixture (empty when it passes).
fn check_fixture(dir: &Path) -> Vec<String> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let root = match expected.get("path").and_then(Value::as_str) {
        Some(sub) => dir.join(sub),
        None => dir.to_path_buf(),
    };
    let (report, stderr) = validate(&root);
    let issues = report["issues"]["issues"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let messages = &report["issues"]["codeMessages"];
    let mut problems = Vec::new();
    for want in expected["expected"].as_array().unwrap() {
        let (code, severity, location, sub_code) = (
            str_of(want, "code"),
            str_of(want, "severity"),
            str_of(want, "location"),
            str_of(want, "subCode"),
        );
        let found: Vec<&Value> = issues
            .iter()
            .filter(|i| {
                str_of(i, "code") == code
                    && str_of(i, "location") == location
                    && (severity.is_empty() || str_of(i, "severity") == severity)
                    && (sub_code.is_empty() || str_of(i, "subCode") == sub_code)
            })
            .collect();
        if found.is_empty() {
            let got: Vec<String> = issues
                .iter()
                .filter(|i| str_of(i, "severity") != "warning" || str_of(i, "code") == code)
                .map(|i| {
                    format!(
                        "{} {} {}",
                        str_of(i, "code"),
                        str_of(i, "severity"),
                        str_of(i, "location")
                    )
                })
                .collect();
            problems.push(format!(
                "{name}: missing {code} {sub_code} {severity} at {location}; errors and same-code issues: {got:#?}"
            ));
            continue;
        }
        if let Some(replacement) = want.get("replacement").and_then(Value::as_str) {
            let named = found.iter().any(|i| {
                let own = str_of(i, "issueMessage");
                let shared = str_of(messages, code);
                own.contains(replacement) || shared.contains(replacement)
            });
            if !named {
                problems.push(format!(
                    "{name}: {code} does not name the replacement {replacement:?} (message: {:?} / {:?})",
                    str_of(found[0], "issueMessage"),
                    str_of(messages, code)
                ));
            }
        }
    }
    for banned in expected
        .get("absent")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (code, location) = (str_of(banned, "code"), str_of(banned, "location"));
        let hits: Vec<&str> = issues
            .iter()
            .filter(|i| {
                str_of(i, "code") == code
                    && (location.is_empty() || str_of(i, "location") == location)
            })
            .map(|i| str_of(i, "location"))
            .collect();
        if !hits.is_empty() {
            problems.push(format!(
                "{name}: {code} must not be reported, found at {hits:?}"
            ));
        }
    }
    if let Some(text) = expected.get("stderr").and_then(Value::as_str) {
        if !stderr.contains(text) {
            problems.push(format!(
                "{name}: standard error lacks {text:?}; it was:\n{stderr}"
            ));
        }
    }
    problems
}

#[test]
fn every_fixture_reports_its_expected_issues() {
    support::check_every_case(&fixtures_dir(), "expected.json", check_fixture);
}
