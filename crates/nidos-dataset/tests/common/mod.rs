//! What the tests that build a small dataset in a temporary folder share.

use std::path::Path;

/// The bundled rule tree of this checkout.
pub const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema");

/// Writes `text` at `rel` under `root`, making the folders on the way.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The bundled rules, and a temporary dataset holding a description that declares
/// `StdVersion` 1.11.1 and `participants.tsv` with `participants` as its text.
pub fn rules_and_dataset(participants: &str) -> (nidos_schema::Schema, tempfile::TempDir) {
    let schema = nidos_schema::load_path(Path::new(SCHEMA)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "dataset_description.json",
        r#"{"Name": "x", "StdVersion": "1.11.1"}"#,
    );
    write(dir.path(), "participants.tsv", participants);
    (schema, dir)
}
