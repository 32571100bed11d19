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

const SUPPORTED: &[&str] = &["1.8.0", "1.9.0", "1.10.0", "1.10.1", "1.11.0", "1.11.1"];

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
        (
            "1.8.0",
            &["subject", "chunk"],
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
            &["nucleus", "volume", "atlas", "template"],
        ),
        (
            "1.10.0",
            &["nucleus", "volume"],
            &["atlas", "template", "cohort", "scale"],
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
        ("1.8.0", 12, &["motion", "mrs", "emg", "phenotype"]),
        ("1.9.0", 13, &["mrs", "emg"]),
        ("1.10.0", 14, &["emg", "phenotype"]),
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
