//! `nidos eval --dataset DIR --file PATH` and the REPL's `:file` read a real file's context.

use std::path::Path;
use std::process::{Command, Stdio};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn dataset() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "dataset_description.json",
        r#"{"Name": "x", "StdVersion": "1.11.1"}"#,
    );
    write(
        root,
        "task-rest_bold.json",
        r#"{"RepetitionTime": 2, "TaskName": "rest"}"#,
    );
    write(
        root,
        "sub-01/func/sub-01_task-rest_bold.json",
        r#"{"EchoTime": 0.03}"#,
    );
    write(root, "sub-01/func/sub-01_task-rest_bold.nii.gz", "");
    dir
}

fn nidos() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nidos"));
    cmd.env(
        "NIDOS_SCHEMA_DIR",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema"),
    );
    cmd
}

/// (expression, expected JSON output) evaluated against the bold file.
const CASES: &[(&str, &str)] = &[
    ("sidecar.RepetitionTime", "2"),
    ("sidecar.EchoTime", "0.03"),
    ("[entities.subject, entities.task]", r#"["01","rest"]"#),
    (
        "[suffix, extension, datatype]",
        r#"["bold",".nii.gz","func"]"#,
    ),
    ("path", r#""/sub-01/func/sub-01_task-rest_bold.nii.gz""#),
    ("exists('task-rest_bold.json', 'dataset')", "1"),
    ("sidecar.Missing", "null"),
];

#[test]
fn eval_against_a_dataset_file() {
    let ds = dataset();
    for (expr, want) in CASES {
        let out = nidos()
            .args(["eval", "--dataset"])
            .arg(ds.path())
            .args(["--file", "sub-01/func/sub-01_task-rest_bold.nii.gz", expr])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{expr}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), *want, "{expr}");
    }
}

#[test]
fn eval_unknown_file_is_a_usage_error() {
    let ds = dataset();
    let out = nidos()
        .args(["eval", "--dataset"])
        .arg(ds.path())
        .args(["--file", "sub-02/nothing.nii", "path"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn repl_file_switches_context() {
    let ds = dataset();
    let mut child = nidos()
        .arg("repl")
        .arg(ds.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let stdin = child.stdin.as_mut().unwrap();
        stdin
            .write_all(
                b":file sub-01/func/sub-01_task-rest_bold.nii.gz\nsidecar.RepetitionTime\n:quit\n",
            )
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("context: sub-01/func/sub-01_task-rest_bold.nii.gz"),
        "{text}"
    );
    assert!(text.lines().any(|l| l.trim() == "2"), "{text}");
}
