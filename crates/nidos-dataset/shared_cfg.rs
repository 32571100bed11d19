//! Build-script code shared by the crates whose tests read `../shared` (the conformance
//! material beside the repository): this crate's `build.rs` and `nidos-cli`'s include it
//! as a module (`#[path = ...] mod shared_cfg;`).

use std::path::Path;

/// Sets the cfg `nidos_shared_absent` when `../shared/conformance` is not there, so that
/// the tests needing it are reported as ignored, not passed; reruns when it appears.
pub fn tell_whether_shared_is_present() {
    println!("cargo::rustc-check-cfg=cfg(nidos_shared_absent)");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let shared = Path::new(&manifest).join("../../../shared/conformance");
    println!("cargo::rerun-if-changed={}", shared.display());
    if !shared.is_dir() {
        println!("cargo::rustc-cfg=nidos_shared_absent");
    }
}
