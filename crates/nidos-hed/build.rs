//! Enables the HED suite test when the shared conformance material is present, and
//! precompiles the bundled schemas (`schemas/*.json.gz`) into the bytes of
//! [`compact`](src/compact.rs), so a run reads them without inflating or parsing JSON.

#[allow(dead_code)]
#[path = "src/data.rs"]
mod data;

#[allow(dead_code)]
#[path = "src/compact.rs"]
mod compact;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(hed_suite)");
    let dir = manifest_dir().join("../../../shared/conformance/hed/tests");
    println!("cargo::rerun-if-changed={}", dir.display());
    if dir.is_dir() {
        println!("cargo::rustc-cfg=hed_suite");
    }
    precompile_schemas();
}

/// The crate's folder as cargo gives it to this run (not as it was when the script was
/// compiled: a script built for one checkout may run for another that shares the target).
fn manifest_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
}

fn precompile_schemas() {
    let schemas = manifest_dir().join("schemas");
    println!("cargo::rerun-if-changed={}", schemas.display());
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let entries = std::fs::read_dir(&schemas).expect("schemas/ is readable");
    for entry in entries {
        let path = entry.expect("schemas/ is readable").path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".json.gz"))
        else {
            continue;
        };
        println!("cargo::rerun-if-changed={}", path.display());
        let bytes = std::fs::read(&path).expect("schema file is readable");
        let data = data::SchemaData::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        std::fs::write(out.join(format!("{name}.bin")), compact::encode(&data))
            .expect("OUT_DIR is writable");
    }
}
