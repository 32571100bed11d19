//! Helpers shared by the integration tests of the `nidos` binary (each test file has
//! `mod support;`): where the binary, the bundled schema and `../shared` are, temporary
//! datasets, running the binary with input on stdin, snapshots, and case directories.
//! Each test file uses a part of it.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_nidos");
/// The bundled schema tree (what `NIDOS_SCHEMA_DIR` points at in the tests).
pub const SCHEMA_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema");
/// The conformance material in `../shared`.
pub const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/conformance");

/// The binary with the bundled schema.
pub fn nidos_with_schema() -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env("NIDOS_SCHEMA_DIR", SCHEMA_DIR);
    cmd
}

/// The upstream schema in `../shared`, or `None` (said on stdout) where it is absent.
pub fn upstream_schema() -> Option<PathBuf> {
    let p = Path::new(SHARED).join("schemas/bids-1.11.1-schema-1.2.7.json");
    if p.exists() {
        Some(p)
    } else {
        println!("skip: {} is absent", p.display());
        None
    }
}

/// Writes `text` at `rel` below `root`, making the folders on the way.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A temporary dataset of the given (relative path, text) files.
pub fn dataset(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        write(dir.path(), rel, text);
    }
    dir
}

/// Runs `cmd` with `stdin` written to its standard input; its output.
pub fn output_with_stdin(cmd: &mut Command, stdin: &str) -> Output {
    let mut child = cmd
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nidos runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("input written");
    child.wait_with_output().expect("nidos finishes")
}

/// The standard output, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// Asserts the run exited with `code`, showing its standard error otherwise.
pub fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Compares `actual` with the snapshot at `path`; `UPDATE_SNAPSHOTS=1` rewrites it.
pub fn snapshot(path: &Path, actual: &str) {
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|_| {
        panic!(
            "{} is missing; run with UPDATE_SNAPSHOTS=1 to create it",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{} differs (UPDATE_SNAPSHOTS=1 rewrites it)\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

/// Runs `check` on each case directory below `dir` (those holding `marker`; at least one)
/// and fails with every problem found.
pub fn check_every_case(dir: &Path, marker: &str, check: impl Fn(&Path) -> Vec<String>) {
    let dirs = nidos_testkit::sorted_entries(dir, |p| p.join(marker).is_file());
    assert!(!dirs.is_empty(), "no cases under {}", dir.display());
    let problems: Vec<String> = dirs.iter().flat_map(|d| check(d)).collect();
    assert!(
        problems.is_empty(),
        "{} problem(s) in {} cases:\n{}",
        problems.len(),
        dirs.len(),
        problems.join("\n")
    );
}

/// `nidos validate DS --format json EXTRA…` with the test schema.
pub fn validate_json_output(ds: &Path, extra: &[&str]) -> Output {
    nidos_with_schema()
        .arg("validate")
        .arg(ds)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap()
}
