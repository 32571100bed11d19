//! `nidos eval --dataset DIR --file PATH` and the REPL's `:file` read a real file's context.

mod support;

use support::nidos_with_schema as nidos;

/// A raw dataset: a description, an inherited and a direct sidecar of one bold file.
fn dataset() -> tempfile::TempDir {
    support::dataset(&[
        (
            "dataset_description.json",
            r#"{"Name": "x", "StdVersion": "1.11.1"}"#,
        ),
        (
            "task-rest_bold.json",
            r#"{"RepetitionTime": 2, "TaskName": "rest"}"#,
        ),
        (
            "sub-01/func/sub-01_task-rest_bold.json",
            r#"{"EchoTime": 0.03}"#,
        ),
        ("sub-01/func/sub-01_task-rest_bold.nii.gz", ""),
    ])
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
    let out = support::output_with_stdin(
        nidos().arg("repl").arg(ds.path()),
        ":file sub-01/func/sub-01_task-rest_bold.nii.gz\nsidecar.RepetitionTime\n:quit\n",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("context: sub-01/func/sub-01_task-rest_bold.nii.gz"),
        "{text}"
    );
    assert!(text.lines().any(|l| l.trim() == "2"), "{text}");
}
