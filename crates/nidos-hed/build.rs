//! Enables the HED suite test when the shared conformance material is present.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(hed_suite)");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/conformance/hed/tests");
    println!("cargo::rerun-if-changed={}", dir.display());
    if dir.is_dir() {
        println!("cargo::rustc-cfg=hed_suite");
    }
}
