//! `nidos schema …` on the bundled tree, the fixture trees and (when present) the
//! upstream compiled schemas.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn nidos(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nidos"))
        .env("NIDOS_SCHEMA_DIR", repo().join("schema"))
        .arg("schema")
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[test]
fn versions_lists_the_pinned_versions_newest_first() {
    let out = nidos(&["versions"]);
    assert!(out.status.success());
    let text = stdout(&out);
    let versions: Vec<&str> = text
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    // All 21 releases of the standard (issue 37).
    assert_eq!(
        versions,
        [
            "1.11.1", "1.11.0", "1.10.1", "1.10.0", "1.9.0", "1.8.0", "1.7.0", "1.6.0", "1.5.0",
            "1.4.1", "1.4.0", "1.3.0", "1.2.2", "1.2.1", "1.2.0", "1.1.2", "1.1.1", "1.1.0",
            "1.0.2", "1.0.1", "1.0.0"
        ]
    );
}

#[test]
fn check_passes_on_the_bundled_tree() {
    let out = nidos(&["check", repo().join("schema").to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}{}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn check_fails_with_located_errors_on_bad_trees() {
    let bad = repo().join("tests/schema/bad");
    let mut seen = 0;
    for entry in std::fs::read_dir(&bad).unwrap() {
        let case = entry.unwrap().path();
        let input = ["tree", "schema.json"]
            .iter()
            .map(|n| case.join(n))
            .find(|p| p.exists());
        let Some(input) = input else { continue };
        let out = nidos(&["check", input.to_str().unwrap()]);
        let all = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
        assert!(
            !out.status.success(),
            "{}: check should fail\n{all}",
            case.display()
        );
        assert_ne!(out.status.code(), Some(101), "{}: panicked", case.display());
        seen += 1;
    }
    assert!(
        seen > 0,
        "no bad-schema fixtures found under {}",
        bad.display()
    );
}

#[test]
fn show_prints_a_part_of_the_resolved_schema() {
    let out = nidos(&["show", "objects.entities.subject", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["name"], "sub");
}

#[test]
fn export_gives_a_schema_that_loads_again() {
    let out = nidos(&["export", "--version", "1.10.0"]);
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("schema.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let again = nidos(&["check", file.to_str().unwrap()]);
    assert_ne!(again.status.code(), Some(101));
    let schema = nidos_schema_version(&file);
    assert_eq!(schema, "1.10.0");
}

fn nidos_schema_version(file: &Path) -> String {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    v["version"].as_str().unwrap_or_default().to_string()
}
