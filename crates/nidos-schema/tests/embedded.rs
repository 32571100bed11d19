//! The rules embedded at build time are the YAML tree of `schema/`: loading either
//! gives the same schema, for every brand.

use std::path::Path;

use nidos_schema::{LoadOptions, Schema};

const BUNDLED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema");

#[test]
fn embedded_rules_equal_the_yaml_tree() {
    assert!(
        nidos_schema::bundled_override().is_none(),
        "unset NIDOS_SCHEMA_DIR to run this test"
    );
    let own = Schema::bundled().unwrap();
    assert!(own.source.is_none(), "loaded from the embedded copy");
    let versions: Vec<Option<String>> = std::iter::once(None)
        .chain(own.supported_versions.iter().cloned().map(Some))
        .collect();
    for brand in own.brands.list.iter().map(|b| b.name.clone()) {
        for version in versions.clone() {
            let opts = LoadOptions {
                brand: Some(brand.clone()),
                version: version.clone(),
                ..Default::default()
            };
            let embedded = nidos_schema::load_bundled(&opts).unwrap();
            let tree = nidos_schema::load_path_with(Path::new(BUNDLED), &opts).unwrap();
            assert_eq!(embedded.raw, tree.raw, "{brand} {version:?}");
            assert_eq!(embedded.version, tree.version);
            assert_eq!(embedded.supported_versions, tree.supported_versions);
            assert_eq!(embedded.deprecations, tree.deprecations);
            // The embedded tree skips the structural checks at load: the YAML tree's
            // load runs them, and must find nothing to say.
            let said: Vec<String> = tree.warnings.iter().map(ToString::to_string).collect();
            let kept: Vec<String> = embedded.warnings.iter().map(ToString::to_string).collect();
            assert_eq!(said, kept, "{brand} {version:?}");
            // Read from disk unedited, the tree raises no field above the embedded
            // rules (the validator then reports every level, as the reference does).
            assert!(
                tree.raised_fields.is_empty(),
                "{brand} {version:?}: {:?}",
                tree.raised_fields
            );
            assert!(
                nidos_schema::structure_findings(&tree.raw, true).is_empty()
                    && nidos_schema::duplicate_codes(&tree.raw).is_empty(),
                "{brand} {version:?}"
            );
        }
    }
}

#[test]
fn embedded_files_are_the_tree_files() {
    let files = nidos_schema::bundled_files().unwrap();
    assert!(files.iter().any(|(p, _)| p == "version.yaml"));
    for (rel, text) in &files {
        let on_disk = std::fs::read_to_string(Path::new(BUNDLED).join(rel)).unwrap();
        assert_eq!(&on_disk, text, "{rel}");
    }
}

/// A copy of the tree that makes a recommended field required records it, and only it,
/// as raised, for the brand it is read in.
#[test]
fn an_edited_tree_records_the_fields_it_raises() {
    let dir = tempfile::tempdir().unwrap();
    nidos_testkit::copy_dir(Path::new(BUNDLED), dir.path());
    let pet = dir.path().join("rules/sidecars/pet.yaml");
    let text = std::fs::read_to_string(&pet).unwrap();
    let edited = text.replacen(
        "fields: {TaskName: recommended, Instructions",
        "fields: {TaskName: required, Instructions",
        1,
    );
    assert_ne!(text, edited, "the edit applies");
    std::fs::write(&pet, edited).unwrap();
    for brand in ["Std", "BIDS"] {
        let opts = LoadOptions {
            brand: Some(brand.into()),
            ..Default::default()
        };
        let tree = nidos_schema::load_path_with(dir.path(), &opts).unwrap();
        let raised: Vec<(String, String)> = tree.raised_fields.into_iter().collect();
        assert_eq!(
            raised,
            [(
                "rules.sidecars.pet.PETTask".to_string(),
                "TaskName".to_string()
            )],
            "{brand}"
        );
    }
}
