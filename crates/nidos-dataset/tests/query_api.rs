//! The query API on a small dataset built in a temporary directory, with the bundled
//! schema: filters (lists, globs, numeric run indices, long and short names), entity
//! values, merged metadata, rejected files, derivative datasets, and path errors.

use std::path::Path;

use indexmap::IndexMap;
use nidos_dataset::query::{build_path, entity_values, query, PathError, Query, QueryResult};
use nidos_dataset::{Dataset, OpenOptions};

fn put(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

fn fixture() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let r = tmp.path();
    put(
        r,
        "dataset_description.json",
        r#"{"Name": "q", "StdVersion": "1.10.0"}"#,
    );
    put(r, "README", "a test dataset");
    put(
        r,
        "task-rest_bold.json",
        r#"{"RepetitionTime": 2, "TaskName": "rest"}"#,
    );
    for sub in ["01", "02", "10"] {
        for run in ["1", "2"] {
            put(
                r,
                &format!("sub-{sub}/func/sub-{sub}_task-rest_run-{run}_bold.nii.gz"),
                "x",
            );
        }
        put(r, &format!("sub-{sub}/anat/sub-{sub}_T1w.nii.gz"), "x");
    }
    put(
        r,
        "sub-02/func/sub-02_task-rest_run-2_bold.json",
        r#"{"RepetitionTime": 3}"#,
    );
    put(r, "sub-01/anat/notes.txt", "not a dataset file");
    put(
        r,
        "derivatives/prep/dataset_description.json",
        r#"{"Name": "prep", "StdVersion": "1.10.0", "DatasetType": "derivative", "GeneratedBy": [{"Name": "x"}]}"#,
    );
    put(
        r,
        "derivatives/prep/sub-01/anat/sub-01_desc-brain_mask.nii.gz",
        "x",
    );
    tmp
}

fn schema() -> nidos_schema::Schema {
    nidos_schema::Schema::bundled().unwrap()
}

/// [`query`], each match given its own metadata.
fn query_with_metadata(
    root: &Path,
    schema: &nidos_schema::Schema,
    opts: &OpenOptions,
    q: &Query,
) -> Result<QueryResult, nidos_dataset::query::QueryError> {
    let mut r = query(root, schema, opts, q)?;
    r.attach_metadata();
    Ok(r)
}

fn paths(q: &Query, root: &Path) -> Vec<String> {
    let r = query_with_metadata(root, &schema(), &OpenOptions::default(), q).unwrap();
    r.matches.into_iter().map(|m| m.path).collect()
}

#[test]
fn filters() {
    let tmp = fixture();
    let root = tmp.path();
    let mut q = Query::default();
    q.entity("sub", &["01", "1*"])
        .entity("run", &["2"])
        .suffix(&["bold"]);
    assert_eq!(
        paths(&q, root),
        [
            "sub-01/func/sub-01_task-rest_run-2_bold.nii.gz",
            "sub-10/func/sub-10_task-rest_run-2_bold.nii.gz"
        ]
    );
    let mut q = Query::default();
    q.entity("subject", &["02"])
        .datatype(&["anat"])
        .extension(&["nii.gz"]);
    assert_eq!(paths(&q, root), ["sub-02/anat/sub-02_T1w.nii.gz"]);
    let mut q = Query::default();
    q.suffix(&["{T1w,bold}"]).extension(&[".json"]);
    assert_eq!(
        paths(&q, root),
        [
            "sub-02/func/sub-02_task-rest_run-2_bold.json",
            "task-rest_bold.json"
        ]
    );
    let mut q = Query::default();
    q.entity("nosuch", &["x"]);
    assert!(query_with_metadata(root, &schema(), &OpenOptions::default(), &q).is_err());
}

#[test]
fn metadata_rejected_and_derivatives() {
    let tmp = fixture();
    let root = tmp.path();
    let mut q = Query::default();
    q.entity("sub", &["02"])
        .suffix(&["bold"])
        .extension(&[".nii.gz"]);
    q.with_metadata = true;
    let r = query_with_metadata(root, &schema(), &OpenOptions::default(), &q).unwrap();
    let tr: Vec<_> = r
        .matches
        .iter()
        .map(|m| m.metadata.as_ref().unwrap()["RepetitionTime"].clone())
        .collect();
    assert_eq!(tr, [serde_json::json!(2), serde_json::json!(3)]);
    assert_eq!(
        r.matches[0].entities.keys().collect::<Vec<_>>(),
        ["subject", "task", "run"]
    );
    assert_eq!(r.rejected, 1, "notes.txt");
    assert_eq!(r.derivative_files, 2);

    let mut q = Query::default();
    q.suffix(&["mask"]);
    assert!(paths(&q, root).is_empty());
    q.derivatives = true;
    let r = query_with_metadata(root, &schema(), &OpenOptions::default(), &q).unwrap();
    assert_eq!(r.matches.len(), 1);
    assert_eq!(r.matches[0].dataset, "derivatives/prep");
    assert_eq!(
        r.matches[0].path,
        "derivatives/prep/sub-01/anat/sub-01_desc-brain_mask.nii.gz"
    );
}

#[test]
fn entity_values_sorted_numerically() {
    let tmp = fixture();
    let s = schema();
    let ds = Dataset::open(tmp.path(), &s, &OpenOptions::default()).unwrap();
    let v = entity_values(&s, &ds);
    assert_eq!(v["subject"], ["01", "02", "10"]);
    assert_eq!(v["run"], ["1", "2"]);
    assert_eq!(v["task"], ["rest"]);
    assert_eq!(v.keys().collect::<Vec<_>>(), ["subject", "task", "run"]);
}

#[test]
fn path_errors_name_the_rule() {
    let s = schema();
    let ents = |pairs: &[(&str, &str)]| -> IndexMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let e = build_path(&s, &ents(&[("sub", "01")]), "bold", ".nii.gz", None).unwrap_err();
    assert!(
        matches!(&e, PathError::MissingRequired { rule, .. } if rule.contains("func")),
        "{e}"
    );
    let e = build_path(
        &s,
        &ents(&[("sub", "01"), ("task", "x"), ("hemi", "L")]),
        "bold",
        ".nii.gz",
        None,
    )
    .unwrap_err();
    assert!(
        matches!(&e, PathError::EntityNotAllowed { entity, .. } if entity == "hemisphere"),
        "{e}"
    );
    let e = build_path(&s, &ents(&[("sub", "0-1")]), "T1w", ".nii.gz", None).unwrap_err();
    assert!(matches!(e, PathError::BadLabel { .. }), "{e}");
    let e = build_path(
        &s,
        &ents(&[("run", "x"), ("sub", "01")]),
        "T1w",
        ".nii.gz",
        None,
    )
    .unwrap_err();
    assert!(matches!(e, PathError::BadLabel { .. }), "{e}");
    let e = build_path(&s, &ents(&[("sub", "01")]), "nosuffix", ".nii.gz", None).unwrap_err();
    assert!(matches!(e, PathError::NoRule { .. }), "{e}");
    let p = build_path(
        &s,
        &ents(&[
            ("run", "1"),
            ("ses", "pre"),
            ("task", "rest"),
            ("subject", "01"),
        ]),
        "bold",
        "nii.gz",
        None,
    )
    .unwrap();
    assert_eq!(
        p,
        "sub-01/ses-pre/func/sub-01_ses-pre_task-rest_run-1_bold.nii.gz"
    );
}

/// Every match's metadata is the merged sidecar the file's context gives rules (one
/// merge serves both), on the fixture with an ambiguous level added and on a few
/// conformance examples when `../shared` is present.
#[test]
fn metadata_is_the_context_sidecar() {
    let tmp = fixture();
    // Two sidecars at one level, neither with all of the file's entities: ambiguous,
    // left out of the merge by both.
    put(
        tmp.path(),
        "sub-01/func/sub-01_task-rest_bold.json",
        r#"{"RepetitionTime": 5}"#,
    );
    put(
        tmp.path(),
        "sub-01/func/sub-01_run-1_bold.json",
        r#"{"RepetitionTime": 6}"#,
    );
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/examples");
    let mut roots = vec![tmp.path().to_path_buf()];
    for name in ["ds001", "eeg_matchingpennies", "ds000117", "asl001"] {
        let p = shared.join(name);
        if p.is_dir() {
            roots.push(p);
        } else {
            eprintln!("skipping {}: absent", p.display());
        }
    }
    let schema = schema();
    let q = Query {
        with_metadata: true,
        ..Query::default()
    };
    for root in roots {
        let r = query_with_metadata(&root, &schema, &OpenOptions::default(), &q).unwrap();
        let ds = Dataset::open(&root, &schema, &OpenOptions::default()).unwrap();
        assert!(!r.matches.is_empty(), "{}", root.display());
        for m in &r.matches {
            let ctx = ds.context(ds.find(&m.path).unwrap());
            let want = nidos_expr::Context::lookup(&ctx, "sidecar").to_json();
            let got = serde_json::Value::Object(m.metadata.clone().unwrap());
            assert_eq!(got, want, "{} in {}", m.path, root.display());
        }
    }
    // The ambiguous level is left out: the root sidecar's value stands.
    let r = query_with_metadata(tmp.path(), &schema, &OpenOptions::default(), &q).unwrap();
    let m = r
        .matches
        .iter()
        .find(|m| m.path == "sub-01/func/sub-01_task-rest_run-1_bold.nii.gz")
        .unwrap();
    assert_eq!(m.metadata.as_ref().unwrap()["RepetitionTime"], 2);
}
