//! The writer: canonical formatting, refusal to overwrite without `force`, and no
//! partial or temporary file left behind when a write fails at any step.

use std::io::Write;
use std::path::Path;

use nidos_dataset::write::{
    atomic_write_with, companion_path, write_json, write_sidecar, write_table_for, write_tsv,
    Table, WriteError,
};

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Asserts the file `p` holds `content` and is alone in its folder (no temporary file
/// was left beside it).
fn assert_alone_with(p: &Path, content: &str) {
    assert_eq!(std::fs::read_to_string(p).unwrap(), content);
    let name = p.file_name().unwrap().to_string_lossy();
    assert_eq!(names(p.parent().unwrap()), [name]);
}

#[test]
fn json_is_pretty_with_two_spaces_and_final_newline() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("sub-01_task-rest_bold.nii.gz");
    let v = serde_json::json!({"RepetitionTime": 2.0, "TaskName": "rest", "SliceTiming": [0, 1]});
    let p = write_sidecar(&data, &v, false).unwrap();
    assert_eq!(p, tmp.path().join("sub-01_task-rest_bold.json"));
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(
        text,
        "{\n  \"RepetitionTime\": 2.0,\n  \"TaskName\": \"rest\",\n  \"SliceTiming\": [\n    0,\n    1\n  ]\n}\n"
    );
}

#[test]
fn tsv_has_tabs_na_and_unix_newlines() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("sub-01_task-rest_bold.nii.gz");
    let mut t = Table::new(["onset", "duration", "trial_type"]);
    t.push([Some("0.5"), Some("1"), None]);
    t.push([Some("2"), Some(""), Some("go")]);
    let p = write_table_for(&data, "events", &t, false).unwrap();
    assert_eq!(p, tmp.path().join("sub-01_task-rest_events.tsv"));
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "onset\tduration\ttrial_type\n0.5\t1\tn/a\n2\tn/a\tgo\n"
    );
}

#[test]
fn records_become_columns_in_first_seen_order() {
    let recs: Vec<serde_json::Map<String, serde_json::Value>> = vec![
        serde_json::from_str(r#"{"participant_id": "sub-01", "age": 30}"#).unwrap(),
        serde_json::from_str(r#"{"participant_id": "sub-02", "sex": "F", "age": null}"#).unwrap(),
    ];
    let t = Table::from_records(&recs).unwrap();
    assert_eq!(
        t.to_tsv().unwrap(),
        "participant_id\tage\tsex\nsub-01\t30\tn/a\nsub-02\tn/a\tF\n"
    );
    let bad: Vec<serde_json::Map<String, serde_json::Value>> =
        vec![serde_json::from_str(r#"{"a": [1]}"#).unwrap()];
    assert!(Table::from_records(&bad).is_err());
}

#[test]
fn refuses_to_overwrite_without_force() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("dataset_description.json");
    write_json(&p, &serde_json::json!({"Name": "a"}), false).unwrap();
    let err = write_json(&p, &serde_json::json!({"Name": "b"}), false).unwrap_err();
    assert!(matches!(err, WriteError::Exists(_)), "{err}");
    assert!(std::fs::read_to_string(&p).unwrap().contains("\"a\""));
    write_json(&p, &serde_json::json!({"Name": "b"}), true).unwrap();
    assert!(std::fs::read_to_string(&p).unwrap().contains("\"b\""));
    assert_eq!(names(tmp.path()), ["dataset_description.json"]);
}

/// A value whose serialisation fails part-way.
struct Failing;
impl serde::Serialize for Failing {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("ok", &1)?;
        Err(S::Error::custom("injected failure"))
    }
}

#[test]
fn serialisation_failure_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("x_bold.json");
    let err = write_json(&p, &Failing, false).unwrap_err();
    assert!(err.to_string().contains("injected failure"), "{err}");
    assert!(names(tmp.path()).is_empty());
    // Over an existing file with force: the old content stays.
    std::fs::write(&p, "old").unwrap();
    write_json(&p, &Failing, true).unwrap_err();
    assert_alone_with(&p, "old");
}

#[test]
fn bad_table_cells_fail_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("participants.tsv");
    for t in [
        {
            let mut t = Table::new(["a", "b"]);
            t.push([Some("1\t2"), Some("x")]);
            t
        },
        {
            let mut t = Table::new(["a", "b"]);
            t.push([Some("1")]);
            t
        },
        Table::new(["a", "a"]),
        Table::new(Vec::<String>::new()),
    ] {
        let err = write_tsv(&p, &t, false).unwrap_err();
        assert!(matches!(err, WriteError::Content { .. }), "{err}");
        assert!(names(tmp.path()).is_empty());
    }
}

#[test]
fn io_failure_mid_write_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("sub-01_scans.tsv");
    std::fs::write(&p, "filename\n").unwrap();
    let err = atomic_write_with(&p, true, |f| {
        f.write_all(b"filename\tacq_time\nhalf")?;
        Err(std::io::Error::other("disk full (injected)"))
    })
    .unwrap_err();
    assert!(err.to_string().contains("injected"), "{err}");
    assert_alone_with(&p, "filename\n");
}

#[test]
fn missing_directory_is_an_error_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("no/such/dir/x.json");
    let err = write_json(&p, &serde_json::json!({}), false).unwrap_err();
    assert!(matches!(err, WriteError::Io { .. }), "{err}");
    assert!(names(tmp.path()).is_empty());
}

#[test]
fn companion_paths() {
    let c = |p: &str, s: Option<&str>, e: &str| {
        companion_path(Path::new(p), s, e).map(|p| p.to_string_lossy().into_owned())
    };
    assert_eq!(
        c("a/sub-01_task-x_run-1_bold.nii.gz", None, ".json").unwrap(),
        "a/sub-01_task-x_run-1_bold.json"
    );
    assert_eq!(
        c("sub-01_task-x_eeg.edf", Some("channels"), "tsv").unwrap(),
        "sub-01_task-x_channels.tsv"
    );
    assert_eq!(
        c("participants.tsv", None, ".json").unwrap(),
        "participants.json"
    );
    assert!(c("sub-01.nii", None, ".json").is_err());
}
