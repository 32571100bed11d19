//! The bundled Std rule tree (`schema/` at the repository root) loads without errors
//! or warnings at every supported version, and each version has the entities,
//! datatypes and file rules that version introduced.

use std::path::{Path, PathBuf};

use nidos_schema::{load_path_with, LoadOptions, Schema};

fn tree() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema")
}

fn load(version: &str) -> Schema {
    let opts = LoadOptions {
        version: Some(version.to_owned()),
        ..LoadOptions::default()
    };
    match load_path_with(&tree(), &opts) {
        Ok(s) => s,
        Err(e) => panic!("schema/ at {version} does not load:\n{e}"),
    }
}

/// All 21 releases of the standard (issue 37).
const SUPPORTED: &[&str] = &[
    "1.0.0", "1.0.1", "1.0.2", "1.1.0", "1.1.1", "1.1.2", "1.2.0", "1.2.1", "1.2.2", "1.3.0",
    "1.4.0", "1.4.1", "1.5.0", "1.6.0", "1.7.0", "1.8.0", "1.9.0", "1.10.0", "1.10.1", "1.11.0",
    "1.11.1",
];

#[test]
fn loads_at_every_supported_version_without_warnings() {
    for v in SUPPORTED {
        let s = load(v);
        assert_eq!(s.version, *v);
        assert_eq!(s.brand.version_key, "StdVersion");
        let warnings: Vec<String> = s.warnings.iter().map(|w| w.to_string()).collect();
        assert!(warnings.is_empty(), "{v}: {warnings:#?}");
        let mut sup = s.supported_versions.clone();
        sup.sort();
        let mut want: Vec<String> = SUPPORTED.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(sup, want);
        assert_eq!(s.versions.len(), 21, "{v}: known version names");
    }
}

#[test]
fn schema_check_is_clean() {
    let report = nidos_schema::check_path(&tree());
    assert!(report.is_ok(), "{report:#?}");
}

/// (version, entity long names that must be present, ones that must be absent).
#[test]
fn entities_follow_the_versions() {
    type Case<'a> = (&'a str, &'a [&'a str], &'a [&'a str]);
    let cases: &[Case] = &[
        // Dated by the text (docs/history.md): echo 1.0.2, space 1.2.0, PET's tracer 1.6.0,
        // microscopy's sample and chunk 1.7.0, atlas 1.8.0.
        (
            "1.0.0",
            &["subject", "task", "run"],
            &["echo", "space", "atlas"],
        ),
        ("1.0.2", &["echo"], &["space"]),
        ("1.2.0", &["space"], &["tracer", "sample"]),
        ("1.6.0", &["tracer"], &["sample", "chunk"]),
        ("1.7.0", &["sample", "chunk"], &["atlas"]),
        (
            "1.8.0",
            &["subject", "chunk", "atlas"],
            &[
                "tracksys",
                "nucleus",
                "volume",
                "template",
                "cohort",
                "scale",
                "segmentation",
            ],
        ),
        (
            "1.9.0",
            &["tracksys", "segmentation"],
            &["nucleus", "volume", "template"],
        ),
        (
            "1.10.0",
            &["nucleus", "volume"],
            &["template", "cohort", "scale"],
        ),
        ("1.10.1", &["nucleus"], &["template"]),
        ("1.11.0", &["atlas", "template", "cohort", "scale"], &[]),
        (
            "1.11.1",
            &["atlas", "template", "cohort", "scale", "tracksys"],
            &[],
        ),
    ];
    for (v, present, absent) in cases {
        let s = load(v);
        let names: Vec<&str> = s.entities.iter().map(|e| e.name.as_str()).collect();
        for p in *present {
            assert!(names.contains(p), "{v}: missing entity {p}");
        }
        for a in *absent {
            assert!(!names.contains(a), "{v}: entity {a} should not exist yet");
        }
    }
    assert_eq!(load("1.11.1").entities.len(), 35);
}

#[test]
fn datatypes_follow_the_versions() {
    let cases: &[(&str, usize, &[&str])] = &[
        // Dated by the text: phenotype 1.0.1, MEG 1.1.0, EEG and iEEG 1.2.0, perf 1.5.0,
        // PET 1.6.0, microscopy 1.7.0, NIRS 1.8.0.
        ("1.0.0", 5, &["phenotype", "meg", "eeg"]),
        ("1.0.1", 6, &["meg", "eeg"]),
        ("1.1.0", 7, &["eeg", "ieeg"]),
        ("1.2.0", 9, &["perf", "pet"]),
        ("1.5.0", 10, &["pet", "micr"]),
        ("1.7.0", 12, &["nirs"]),
        ("1.8.0", 13, &["motion", "mrs", "emg"]),
        ("1.9.0", 14, &["mrs", "emg"]),
        ("1.10.0", 15, &["emg"]),
        ("1.10.1", 15, &["emg"]),
        ("1.11.0", 16, &[]),
    ];
    for (v, n, absent) in cases {
        let s = load(v);
        assert_eq!(
            s.datatypes.len(),
            *n,
            "{v}: {:?}",
            s.datatypes.keys().collect::<Vec<_>>()
        );
        for a in *absent {
            assert!(!s.datatypes.contains_key(*a), "{v}: {a}");
        }
    }
}
