//! `cargo xtask`: project chores.
//!
//! - `cargo xtask conformance [--std | --bundled] …`: compares nidos's reports with the
//!   reference validator's on `../shared/conformance` (see the `conformance` module).
//! - `cargo xtask bench [--realworld | --hed]`: performance against the reference, synthetic
//!   datasets or the real-world corpus (`docs/performance.md`).
//! - `cargo xtask bench-small`: start-up on small real datasets, beside the reference.
//! - `cargo xtask bench-formats [--subjects N]`: peak memory and time of each report
//!   format on one large synthetic dataset, beside JSON (see `bench_formats.rs`).
//! - `cargo xtask bench-lsp [--subjects N]`: `nidos lsp`'s answer time to an edit of a leaf
//!   and of a top-level sidecar, beside a whole validation (see `bench_lsp.rs`).
//! - `cargo xtask schema-coverage --against COMPILED.json [--out docs/schema-coverage.md]`:
//!   what the bundled tree lacks against a compiled upstream schema (see `coverage.rs`).
//! - `cargo xtask compare-builds [--base REV]`: this checkout's reports against another
//!   commit's, byte for byte, on every example and real-world dataset (refactoring check).
//! - `cargo xtask module-cycles`: import cycles between the modules of each crate under
//!   `crates/` and of `xtask/` (none allowed; see the module).
//! - `cargo xtask sort-diff`: `sorted()` against the reference's own JavaScript (see the module).

mod bench;
mod bench_formats;
mod bench_hed;
mod bench_incremental;
mod bench_lsp;
mod bench_realworld;
mod bench_small;
mod compare_builds;
mod conformance;
mod coverage;
mod hed_import;
mod module_cycles;
mod sortdiff;
mod tools;

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("conformance") => conformance::run(&args[1..]),
        // `bench --incremental` is its own bench (bench_incremental.rs).
        Some("bench") if args.iter().any(|a| a == "--incremental") => {
            bench_incremental::run(&args[1..])
        }
        Some("bench") => bench::run(&args[1..]),
        Some("bench-small") => bench_small::run(&args[1..]),
        Some("bench-formats") => bench_formats::run(&args[1..]),
        Some("bench-lsp") => bench_lsp::run(&args[1..]),
        Some("compare-builds") => compare_builds::run(&args[1..]),
        Some("sort-diff") => sortdiff::run(&args[1..]),
        Some("schema-coverage") => coverage::run(&args[1..]),
        Some("hed-import") => hed_import::run(&args[1..]),
        Some("module-cycles") => module_cycles::run(&args[1..]),
        _ => bail!(
            "usage: cargo xtask conformance [--std | --bundled] [--with-hed] [--min-f1 X] [--min-mutations X] [--only NAME] | bench [--realworld | --hed] | bench-small | bench-formats [--subjects N] [--runs K] | bench-lsp [--subjects N] [--edits K] | compare-builds [--base REV | --base-binary PATH] [--bench N] [--only NAME] | sort-diff | schema-coverage --against COMPILED.json | hed-import SCHEMA.xml [-o FILE] | module-cycles"
        ),
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn shared() -> PathBuf {
    root().join("../shared")
}

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The value of `name` read as a `T`, or `default` when the flag is absent.
fn flag_or<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> Result<T> {
    match flag(args, name) {
        Some(v) => v
            .parse()
            .map_err(|_| anyhow::anyhow!("{name} {v}: not a valid value")),
        None => Ok(default),
    }
}
