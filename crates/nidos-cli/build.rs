//! Tells the tests whether `../shared` (the conformance material beside the repository)
//! is present: without it, the tests that need it are reported as ignored, not passed.

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(nidos_shared_absent)");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let shared = Path::new(&manifest).join("../../../shared/conformance");
    println!("cargo::rerun-if-changed={}", shared.display());
    if !shared.is_dir() {
        println!("cargo::rustc-cfg=nidos_shared_absent");
    }
}
