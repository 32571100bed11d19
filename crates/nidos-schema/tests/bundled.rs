//! Invariants of the bundled rule tree (`schema/`, part of the repository): at every
//! supported version it loads, and every object definition carries a description.

use std::path::PathBuf;

use nidos_schema::{load_path_with, LoadOptions};

fn bundled() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema"))
}

#[test]
fn every_object_definition_has_a_description() {
    let newest = load_path_with(&bundled(), &LoadOptions::default()).unwrap();
    let mut missing = Vec::new();
    for version in &newest.supported_versions {
        let schema = load_path_with(
            &bundled(),
            &LoadOptions {
                version: Some(version.clone()),
                ..LoadOptions::default()
            },
        )
        .unwrap();
        let objects = schema.raw["objects"].as_object().unwrap();
        for (section, entries) in objects {
            for (key, def) in entries.as_object().into_iter().flatten() {
                let text = def["description"].as_str().unwrap_or("");
                if text.trim().is_empty() {
                    missing.push(format!("{version}: objects.{section}.{key}"));
                }
            }
        }
        // The typed views keep them too.
        assert!(schema.entities.iter().all(|e| !e.description.is_empty()));
        assert!(schema.suffixes.values().all(|t| !t.description.is_empty()));
        assert!(schema.metadata.values().all(|d| d.description().is_some()));
    }
    assert!(
        missing.is_empty(),
        "definitions without a description: {missing:#?}"
    );
}
