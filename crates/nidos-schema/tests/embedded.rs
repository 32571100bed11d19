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
