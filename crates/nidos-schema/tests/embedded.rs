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
    for brand in own.brands.list.iter().map(|b| b.name.clone()) {
        for version in [None, Some("1.9.0".to_string())] {
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
