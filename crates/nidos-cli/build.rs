//! Tells the tests whether `../shared` (the conformance material beside the repository)
//! is present: without it, the tests that need it are reported as ignored, not passed.
//! Likewise for a headless browser (`chromium`) on PATH, which the HTML report test drives.

#[path = "../nidos-dataset/shared_cfg.rs"]
mod shared_cfg;

fn main() {
    // A position-dependent executable: the loader then has no relocations to apply at
    // start (a PIE nidos has about 44,000, which touch every page of its relocated
    // read-only data, ~1 ms of a 15 ms run). The code itself stays position-independent.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bin=nidos=-no-pie");
    }
    shared_cfg::tell_whether_shared_is_present();
    println!("cargo::rustc-check-cfg=cfg(nidos_browser_absent)");
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=NIDOS_BROWSER");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::var_os("NIDOS_BROWSER").is_some()
        || std::env::split_paths(&path).any(|dir| {
            ["chromium", "chromium-browser"]
                .iter()
                .any(|b| dir.join(b).is_file())
        });
    if !found {
        println!("cargo::rustc-cfg=nidos_browser_absent");
    }
}
